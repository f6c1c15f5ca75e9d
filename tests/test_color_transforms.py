"""Colour augmentation fused into the output stage (issue 32, point 3): ColorJitter and
RandomGrayscale in GulpDataset, decode_jpeg_warped and decode_hevc_warped equal, within 2 levels,
torchvision's formulas (written here in numpy, independently of the kernels) applied to the same
decoded + warped pictures with the draws the kernels made (tf_gulp.transforms.color_draws); one
draw per clip (every frame alike); draws a function of (seed, epoch, element). The colour steps
follow the geometry in one augment list (issue 46)."""

from __future__ import annotations

import numpy as np
import pytest
import simplejpeg
import tensorflow as tf

import tf_gulp
from tf_gulp import transforms as T
from tf_gulp.ops import decode_jpeg_warped
from tf_gulp.ops.bzna.hevc_ops import decode_hevc_warped

from gulp_testing import make_gulp_dir
from hevc_testing import HEVC_DIR, NAMES, smooth_image

TOL = 2  # levels
JITTER = T.ColorJitter(brightness=0.4, contrast=0.4, saturation=0.6, hue=0.2)
BOTH = [JITTER, T.RandomGrayscale(p=0.3)]


def crop(size):
    """The geometry the colour steps follow: a random crop and flip (drawn independently of
    the colour steps, so a list with and one without colour crop alike)."""
    return [T.RandomResizedCrop(size), T.RandomHorizontalFlip()]


# torchvision's definitions (transforms.functional on float pictures in [0, 1]), in numpy.
def _gray(img):
    return 0.2989 * img[..., 0] + 0.587 * img[..., 1] + 0.114 * img[..., 2]


def _blend(a, b, ratio):
    return np.clip(ratio * a + (1.0 - ratio) * b, 0.0, 1.0)


def _rgb_to_hsv(img):
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    maxc, minc = img.max(-1), img.min(-1)
    eqc = maxc == minc
    cr = maxc - minc
    s = cr / np.where(eqc, 1.0, maxc)
    div = np.where(eqc, 1.0, cr)
    rc, gc, bc = (maxc - r) / div, (maxc - g) / div, (maxc - b) / div
    h = np.where(maxc == r, bc - gc, np.where(maxc == g, 2.0 + rc - bc, 4.0 + gc - rc))
    h = np.fmod(h / 6.0 + 1.0, 1.0)
    return h, s, maxc


def _hsv_to_rgb(h, s, v):
    i = np.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.astype(np.int64) % 6
    p = np.clip(v * (1.0 - s), 0, 1)
    q = np.clip(v * (1.0 - s * f), 0, 1)
    t = np.clip(v * (1.0 - s * (1.0 - f)), 0, 1)
    r = np.choose(i, [v, q, p, p, t, v])
    g = np.choose(i, [t, v, v, q, p, p])
    b = np.choose(i, [p, p, t, v, v, q])
    return np.stack([r, g, b], -1)


def torchvision_color(picture: np.ndarray, steps) -> np.ndarray:
    """One uint8 [H, W, C] picture through the drawn steps, as torchvision computes them."""
    img = picture.astype(np.float64) / 255.0
    rgb = img.shape[-1] == 3
    for name, f in steps:
        if name == "brightness":
            img = _blend(img, np.zeros_like(img), f)
        elif name == "contrast":
            mean = (_gray(img) if rgb else img[..., 0]).mean()
            img = _blend(img, mean, f)
        elif name == "saturation" and rgb:
            img = _blend(img, _gray(img)[..., None], f)
        elif name == "hue" and rgb:
            h, s, v = _rgb_to_hsv(img)
            img = _hsv_to_rgb(np.mod(h + f, 1.0), s, v)
        elif name == "grayscale" and rgb:
            img = np.repeat(_gray(img)[..., None], 3, -1)
    return img * 255.0


def assert_colored(plain: np.ndarray, colored: np.ndarray, steps, dtype="uint8", bias=0.0,
                   norm=1.0):
    want = torchvision_color(plain, steps)
    got = colored.astype(np.float64) if dtype == "uint8" else colored / norm + bias
    err = np.abs(got - want).max()
    assert err <= TOL, f"{err} levels apart with steps {steps}"


@pytest.fixture(scope="module")
def gulp(tmp_path_factory):
    return make_gulp_dir(tmp_path_factory.mktemp("color") / "g", 6, 3, 61, 83,
                         videos_per_chunk=2)


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_gulp_clips_match_torchvision_one_draw_per_clip(gulp, dtype):
    out = [] if dtype == "uint8" else [T.ToDtype(tf.float32),
                                       T.Normalize((10.0, 20.0, 30.0), (64.0, 64.0, 64.0))]
    plain = list(tf_gulp.GulpDataset(gulp["path"], seed=5, augment=crop((24, 32))))
    augment = crop((24, 32)) + BOTH + out
    colored = list(tf_gulp.GulpDataset(gulp["path"], seed=5, augment=augment))
    all_steps = set()
    for element, (p, c) in enumerate(zip(plain, colored)):
        steps = T.color_draws(augment, seed=5, epoch=0, element=element)
        assert steps == T.color_draws(BOTH, seed=5, epoch=0, element=element)
        all_steps.add(tuple(steps))
        frames_p, frames_c = p["frames"].numpy(), c["frames"].numpy()
        assert frames_c.shape == frames_p.shape == (3, 24, 32, 3)
        for fp, fc in zip(frames_p, frames_c):  # every frame with the clip's one draw
            assert_colored(fp, fc, steps, dtype, 10.0 * np.arange(1, 4), 1 / 64.0)
    assert len(all_steps) == 6  # each clip its own draw


def test_draws_are_a_function_of_seed_epoch_element():
    a = T.color_draws(JITTER, 1, 0, 3)
    assert a == T.color_draws(JITTER, 1, 0, 3)
    assert a != T.color_draws(JITTER, 2, 0, 3)
    assert a != T.color_draws(JITTER, 1, 1, 3)
    assert a != T.color_draws(JITTER, 1, 0, 4)
    assert sorted(name for name, _ in a) == ["brightness", "contrast", "hue", "saturation"]
    factors = dict(a)
    assert 0.6 <= factors["brightness"] <= 1.4 and -0.2 <= factors["hue"] <= 0.2
    # Options at 0 are left out; p=0 never applies.
    assert [n for n, _ in T.color_draws(T.ColorJitter(brightness=0.5), 0, 0, 0)] == ["brightness"]
    assert T.color_draws(T.ColorJitter(0.5, 0.5, p=0.0), 0, 0, 0) == []
    grays = sum(bool(T.color_draws(T.RandomGrayscale(0.5), 0, 0, e)) for e in range(400))
    assert 150 < grays < 250


def test_gulp_epochs_draw_again(gulp):
    ds = tf_gulp.GulpDataset(gulp["path"], seed=1, augment=[T.Resize((16, 16)), JITTER])
    two = ds.repeat(2)
    frames = [e["frames"].numpy() for e in two]
    assert not np.array_equal(frames[0], frames[6])  # epoch 1 of element 0: another draw


def test_decode_jpeg_warped_per_picture():
    rng = np.random.default_rng(3)
    pictures = [smooth_image(rng, 50 + 7 * k, 70 - 5 * k) for k in range(5)]
    jpegs = tf.constant([simplejpeg.encode_jpeg(p, quality=95) for p in pictures])
    elements = tf.constant([10, 11, 12, 13, 14], tf.int64)
    kw = dict(seed=4, epoch=2, elements=elements)
    plain = decode_jpeg_warped(jpegs, crop((20, 28)), **kw).numpy()
    colored = decode_jpeg_warped(jpegs, crop((20, 28)) + BOTH, **kw)
    for k in range(5):
        assert_colored(plain[k], colored[k].numpy(), T.color_draws(BOTH, 4, 2, 10 + k))
    gray = decode_jpeg_warped(jpegs, [T.Resize((20, 28)), JITTER], colorspace="gray",
                              **kw).numpy()
    gray_plain = decode_jpeg_warped(jpegs, [T.Resize((20, 28))], colorspace="gray", **kw).numpy()
    for k in range(5):  # one channel: brightness and contrast only
        assert_colored(gray_plain[k], gray[k], T.color_draws(JITTER, 4, 2, 10 + k))


def test_decode_hevc_warped_cpu_kernel():
    samples = tf.constant([(HEVC_DIR / f"{name}.mp4").read_bytes() for name in NAMES[:3]])
    from tf_gulp.bzna.transforms import IMAGENET_MEAN  # on the 0-255 scale

    kw = dict(seed=9, elements=tf.constant([0, 1, 2], tf.int64))
    out = [T.ToDtype(tf.float32), T.Normalize(IMAGENET_MEAN, (1.0, 1.0, 1.0))]
    with tf.device("/CPU:0"):
        plain = decode_hevc_warped(samples, crop((32, 40)) + out, **kw).numpy()
        colored = decode_hevc_warped(samples, crop((32, 40)) + [JITTER] + out, **kw).numpy()
    for k in range(3):
        levels = np.round(plain[k] + np.asarray(IMAGENET_MEAN)).astype(np.uint8)
        assert_colored(levels, colored[k], T.color_draws(JITTER, 9, 0, k), "float32",
                       np.asarray(IMAGENET_MEAN), 1.0)


def test_color_arguments_are_checked(gulp):
    with pytest.raises(ValueError, match="brightness=-0.1"):
        T.ColorJitter(brightness=-0.1)
    with pytest.raises(ValueError, match=r"hue range .* within \[-0.5, 0.5\]"):
        T.ColorJitter(hue=0.7)
    with pytest.raises(ValueError, match="p is a probability"):
        T.RandomGrayscale(p=2)
    with pytest.raises(TypeError, match=r"augment: ColorJitter is the class; pass an instance: "
                                        r"ColorJitter\(\.\.\.\)"):
        tf_gulp.GulpDataset(gulp["path"], augment=[T.Resize((8, 8)), T.ColorJitter])
    with pytest.raises(ValueError, match=r"augment: RandomResizedCrop\(.*\) comes after a colour "
                                         r"transform"):
        tf_gulp.GulpDataset(gulp["path"], augment=[JITTER, T.RandomResizedCrop(8)])
    with pytest.raises(ValueError, match="augment needs the output size"):
        tf_gulp.GulpDataset(gulp["path"], augment=[JITTER])


def test_shard_and_skip_keep_each_elements_draw(gulp):
    kwargs = dict(seed=3, augment=crop(16) + BOTH)
    whole = [e["frames"].numpy() for e in tf_gulp.GulpDataset(gulp["path"], **kwargs)]
    shard = [e["frames"].numpy()
             for e in tf_gulp.GulpDataset(gulp["path"], **kwargs).shard(2, 1)]
    skipped = [e["frames"].numpy() for e in tf_gulp.GulpDataset(gulp["path"], **kwargs).skip(4)]
    for got, want in zip(shard, whole[1::2]):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(skipped, whole[4:]):
        np.testing.assert_array_equal(got, want)
    assert len(shard) == 3 and len(skipped) == 2


def test_benzina_data_loader_cpu_path(tmp_path):
    from tf_gulp.bzna import DataLoader, create_dataset

    rng = np.random.default_rng(5)
    for k in range(3):
        (tmp_path / "img" / f"c{k}").mkdir(parents=True)
        (tmp_path / "img" / f"c{k}" / "0.jpg").write_bytes(
            simplejpeg.encode_jpeg(smooth_image(rng, 40 + 8 * k, 56), quality=95))
    path = str(tmp_path / "x.bzna")
    create_dataset(str(tmp_path / "img"), path, preset="ultrafast", workers=1, progress=False)
    from tf_gulp.bzna import transforms as bzna_transforms

    # Benzina's compatibility surface: levels 0-255 out (no ImageNet bias / norm).
    kw = dict(shape=(24, 24), batch_size=3, seed=2,
              warp_transform=bzna_transforms.RandomResizedCrop(),
              bias_transform=bzna_transforms.ConstantBiasTransform(0.0),
              norm_transform=bzna_transforms.ConstantNormTransform(1.0))
    plain = next(iter(DataLoader(path, **kw)))[0].numpy()
    colored = next(iter(DataLoader(path, color_transform=JITTER, **kw)))[0].numpy()
    for k in range(3):  # no shuffle: entry k is batch position k
        assert_colored(np.round(plain[k]).astype(np.uint8), colored[k],
                       T.color_draws(JITTER, 2, 0, k), "float32", 0.0, 1.0)
    with pytest.raises(ValueError, match=r"DataLoader: colour transforms run in "
                                         r"decode_hevc_warped .* has no colour stage"):
        DataLoader(path, device="/CPU:0", color_transform=JITTER, **kw)


def test_png_pictures_go_through_the_same_colour_stage():
    """PNG (decoded whole, then warped: cc/codec/picture.cc) gets the colour stage too."""
    rng = np.random.default_rng(8)
    pngs = tf.constant([tf.io.encode_png(smooth_image(rng, 30, 44)).numpy() for _ in range(3)])
    kw = dict(seed=6, elements=tf.constant([0, 1, 2], tf.int64))
    plain = decode_jpeg_warped(pngs, crop((16, 20)), **kw).numpy()
    colored = decode_jpeg_warped(pngs, crop((16, 20)) + [JITTER], **kw)
    for k in range(3):
        assert_colored(plain[k], colored[k].numpy(), T.color_draws(JITTER, 6, 0, k))
