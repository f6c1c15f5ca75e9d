"""Colour augmentation fused into the output stage (issue 32, point 3): ColorJitter and
RandomGrayscale in GulpDataset, decode_jpeg_warped and decode_hevc_warped equal, within 2 levels,
torchvision's formulas (written here in numpy, independently of the kernels) applied to the same
decoded + warped pictures with the draws the kernels made (tf_gulp.transforms.color_draws); one
draw per clip (every frame alike); draws a function of (seed, epoch, element)."""

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
    kwargs = dict(shape=(24, 32), warp=T.RandomResizedCrop(), seed=5, dtype=dtype)
    if dtype == "float32":
        kwargs.update(bias=(10.0, 20.0, 30.0), norm=1 / 64.0)
    plain = list(tf_gulp.GulpDataset(gulp["path"], **dict(kwargs, dtype="uint8", bias=None,
                                                           norm=None)))
    colored = list(tf_gulp.GulpDataset(gulp["path"], color=BOTH, **kwargs))
    all_steps = set()
    for element, (p, c) in enumerate(zip(plain, colored)):
        steps = T.color_draws(BOTH, seed=5, epoch=0, element=element)
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
    ds = tf_gulp.GulpDataset(gulp["path"], shape=(16, 16), seed=1, color=JITTER)
    two = ds.repeat(2)
    frames = [e["frames"].numpy() for e in two]
    assert not np.array_equal(frames[0], frames[6])  # epoch 1 of element 0: another draw


def test_decode_jpeg_warped_per_picture():
    rng = np.random.default_rng(3)
    pictures = [smooth_image(rng, 50 + 7 * k, 70 - 5 * k) for k in range(5)]
    jpegs = tf.constant([simplejpeg.encode_jpeg(p, quality=95) for p in pictures])
    elements = tf.constant([10, 11, 12, 13, 14], tf.int64)
    kw = dict(seed=4, epoch=2, elements=elements)
    plain = decode_jpeg_warped(jpegs, (20, 28), T.RandomResizedCrop(), **kw).numpy()
    colored = decode_jpeg_warped(jpegs, (20, 28), T.RandomResizedCrop(), color=BOTH, **kw)
    for k in range(5):
        assert_colored(plain[k], colored[k].numpy(), T.color_draws(BOTH, 4, 2, 10 + k))
    gray = decode_jpeg_warped(jpegs, (20, 28), colorspace="gray", color=JITTER, **kw).numpy()
    gray_plain = decode_jpeg_warped(jpegs, (20, 28), colorspace="gray", **kw).numpy()
    for k in range(5):  # one channel: brightness and contrast only
        assert_colored(gray_plain[k], gray[k], T.color_draws(JITTER, 4, 2, 10 + k))


def test_decode_hevc_warped_cpu_kernel():
    samples = tf.constant([(HEVC_DIR / f"{name}.mp4").read_bytes() for name in NAMES[:3]])
    kw = dict(seed=9, elements=tf.constant([0, 1, 2], tf.int64), dtype="float32",
              bias=T.IMAGENET_MEAN, norm=1.0)
    with tf.device("/CPU:0"):
        plain = decode_hevc_warped(samples, (32, 40), T.RandomResizedCrop(), **kw).numpy()
        colored = decode_hevc_warped(samples, (32, 40), T.RandomResizedCrop(), color=JITTER,
                                     **kw).numpy()
    for k in range(3):
        levels = np.round(plain[k] + np.asarray(T.IMAGENET_MEAN)).astype(np.uint8)
        assert_colored(levels, colored[k], T.color_draws(JITTER, 9, 0, k), "float32",
                       np.asarray(T.IMAGENET_MEAN), 1.0)


def test_color_arguments_are_checked(gulp):
    with pytest.raises(ValueError, match="brightness=-0.1"):
        T.ColorJitter(brightness=-0.1)
    with pytest.raises(ValueError, match=r"hue range .* within \[-0.5, 0.5\]"):
        T.ColorJitter(hue=0.7)
    with pytest.raises(ValueError, match="p is a probability"):
        T.RandomGrayscale(p=2)
    with pytest.raises(TypeError, match=r"color=ColorJitter is the class; .*color=ColorJitter\(\)"):
        tf_gulp.GulpDataset(gulp["path"], shape=(8, 8), color=T.ColorJitter)
    with pytest.raises(TypeError, match="ColorJitter or RandomGrayscale"):
        tf_gulp.GulpDataset(gulp["path"], shape=(8, 8), color=T.RandomResizedCrop())
    with pytest.raises(ValueError, match="color= needs shape="):
        tf_gulp.GulpDataset(gulp["path"], color=JITTER)


def test_shard_and_skip_keep_each_elements_draw(gulp):
    kwargs = dict(shape=(16, 16), warp=T.RandomResizedCrop(), seed=3, color=BOTH)
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
    kw = dict(shape=(24, 24), batch_size=3, seed=2, warp_transform=T.RandomResizedCrop())
    plain = next(iter(DataLoader(path, **kw)))[0].numpy()
    colored = next(iter(DataLoader(path, color_transform=JITTER, **kw)))[0].numpy()
    for k in range(3):  # no shuffle: entry k is batch position k
        assert_colored(np.round(plain[k]).astype(np.uint8), colored[k],
                       T.color_draws(JITTER, 2, 0, k), "float32", 0.0, 1.0)
    with pytest.raises(ValueError, match="color_transform runs in decode_hevc_warped's CPU"):
        DataLoader(path, device="/CPU:0", color_transform=JITTER, **kw)


def test_png_pictures_go_through_the_same_colour_stage():
    """PNG (decoded whole, then warped: cc/codec/picture.cc) gets the colour stage too."""
    rng = np.random.default_rng(8)
    pngs = tf.constant([tf.io.encode_png(smooth_image(rng, 30, 44)).numpy() for _ in range(3)])
    kw = dict(seed=6, elements=tf.constant([0, 1, 2], tf.int64))
    plain = decode_jpeg_warped(pngs, (16, 20), T.RandomResizedCrop(), **kw).numpy()
    colored = decode_jpeg_warped(pngs, (16, 20), T.RandomResizedCrop(), color=JITTER, **kw)
    for k in range(3):
        assert_colored(plain[k], colored[k].numpy(), T.color_draws(JITTER, 6, 0, k))
