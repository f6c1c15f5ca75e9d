"""The fused decode + warp (issue 24): GulpDataset(augment=[...]) and decode_jpeg_warped against
decoding every pixel and then warping (tf_gulp.ops.similarity_warp); one draw per clip; randomness
a function of (seed, epoch, element) through checkpoints, skip and shard; tf_gulp.transforms as
the one augmentation list (issue 46)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import tensorflow as tf

import tf_gulp
from tf_gulp import transforms as T
from tf_gulp.ops import decode_jpeg_warped, similarity_warp

from gulp_testing import make_gulp_dir
from warp_testing import affine_matrix, constant_warp


@pytest.fixture(scope="module")
def gulp(tmp_path_factory):
    # 6 clips of 4 frames, 61x83 (not multiples of the iMCU size), 3 chunks.
    return make_gulp_dir(tmp_path_factory.mktemp("fused") / "g", 6, 4, 61, 83, videos_per_chunk=2)


def clips(ds):
    return [e["frames"].numpy() for e in ds]


# A crop at the top right, flipped, rotated a little: output (x, y) -> input pixels.
MATRIX = affine_matrix((61, 83), (24, 32), crop_hw=(30, 41), crop_center=(-8, 12), degrees=7,
                       flip_h=True)


def test_transforms_is_one_module_and_python_draws_nothing():
    assert tf_gulp.transforms is T
    assert "transforms" in tf_gulp.__all__
    # Benzina's classes live in its compatibility module only, as descriptions the kernels draw.
    bzna_transforms = importlib.import_module("tf_gulp.bzna.transforms")
    for name in ("SimilarityTransform", "CenterResizedCrop", "ConstantWarpTransform",
                 "ConstantBiasTransform", "ConstantNormTransform", "IMAGENET_NORM"):
        assert hasattr(bzna_transforms, name) and not hasattr(T, name), name
    assert not callable(bzna_transforms.RandomResizedCrop())
    # The Python-side draws (the second random stream, issue 46 item 3) are gone.
    for name in ("element_key", "compute_affine_matrix", "kernel_transform", "kernel_vector",
                 "kernel_color", "kernel_warp_attrs"):
        assert not hasattr(T, name), name


def test_scalar_norm_and_bias_broadcast_to_every_channel(gulp):
    # ConstantNormTransform(1/255.0) used to become a [1] vector that similarity_warp refused at
    # run time (one value per channel); a scalar now means every channel, in the fused kernel too.
    from tf_gulp.bzna.transforms import ConstantNormTransform

    image = tf.constant(np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3))
    out = similarity_warp(image, np.eye(3, dtype=np.float32), (4, 5), 2.0, 1 / 255.0).numpy()
    np.testing.assert_allclose(out, (image.numpy() - 2.0) / 255.0, rtol=1e-6)
    fused = constant_warp(np.eye(3), (61, 83), "float32", bias=2.0, norm=1 / 255.0)
    assert fused.bias == (2.0,) and fused.norm == (1 / 255.0,)
    for got, e in zip(clips(tf_gulp.GulpDataset(gulp["path"], augment=fused, dct_scaling=False)),
                      tf_gulp.GulpDataset(gulp["path"])):
        np.testing.assert_allclose(got, (e["frames"].numpy() - 2.0) / 255.0, rtol=1e-6)
    with pytest.raises(ValueError, match="one value per channel"):
        ConstantNormTransform([[1.0, 2.0]])


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_fused_equals_decode_everything_then_warp(gulp, dtype):
    bias, norm = (None, None) if dtype == "uint8" else ((10.0, 20.0, 30.0), 1 / 255.0)
    augment = constant_warp(MATRIX, (24, 32), dtype, bias=bias or 0.0, norm=norm or 1.0)
    fused = tf_gulp.GulpDataset(gulp["path"], augment=augment, dct_scaling=False)
    assert fused.element_spec["frames"].shape.as_list() == [None, 24, 32, 3]
    full = tf_gulp.GulpDataset(gulp["path"])
    got, want = clips(fused), []
    for e in full:
        out = similarity_warp(e["frames"][tf.newaxis], MATRIX[np.newaxis], (24, 32),
                              bias=0.0 if bias is None else bias,
                              norm=1.0 if norm is None else norm)[0].numpy()
        want.append(out)
    assert len(got) == len(want) == 6
    tolerance = 2.0 if dtype == "uint8" else 2.0 / 255.0 + 1e-6
    for g, w in zip(got, want):
        assert g.dtype == np.dtype(dtype)
        assert np.abs(g.astype(np.float64) - w).max() <= tolerance


def test_resize_to_a_pair_resizes_the_whole_frame(gulp):
    got = clips(tf_gulp.GulpDataset(gulp["path"], augment=[T.Resize((30, 40))],
                                    dct_scaling=False))
    for g, e in zip(got, tf_gulp.GulpDataset(gulp["path"])):
        want = similarity_warp(e["frames"][tf.newaxis],
                               affine_matrix((61, 83), (30, 40))[np.newaxis],
                               (30, 40))[0].numpy()
        assert np.abs(g.astype(np.float64) - want).max() <= 2


def test_dct_scaling_stays_close_to_the_full_size_decode(tmp_path):
    # Frames large enough for 1/2 and 1/4 (whole 320x240 frames to 112 and 56 pixels).
    g = make_gulp_dir(tmp_path / "big", 2, 2, 240, 320, videos_per_chunk=2)
    for side in (112, 56):
        scaled = clips(tf_gulp.GulpDataset(g["path"], augment=[T.Resize((side, side))]))
        exact = clips(tf_gulp.GulpDataset(g["path"], augment=[T.Resize((side, side))],
                                          dct_scaling=False))
        for a, b in zip(scaled, exact):
            mse = np.mean((a.astype(np.float64) - b) ** 2)
            psnr = 99.0 if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)
            assert psnr > 35.0, (side, psnr)


def random_clips(gulp, **kwargs):
    return tf_gulp.GulpDataset(gulp["path"], num_frames=3, training=True, augment=[
        T.RandomResizedCrop(20, scale=(0.1, 0.5)), T.RandomHorizontalFlip()], **kwargs)


def test_one_transform_per_clip_and_a_new_one_per_element_and_epoch(gulp):
    ds = random_clips(gulp, seed=3, shuffle=False)
    first, second = clips(ds), clips(ds)  # two passes: epochs 0 and 1
    for clip in first:
        # Blue is the same horizontal ramp in every frame (red/green are flat per frame and
        # vary): frames warped alike have the same blue channel.
        blue = clip[..., 2].astype(np.float64)
        assert np.abs(blue - blue[0]).mean() < 2.0
    # Different elements and different epochs draw different crops.
    blues = [c[0, ..., 2].astype(np.float64) for c in first + second]
    differ = sum(np.abs(a - b).mean() > 3 for i, a in enumerate(blues) for b in blues[i + 1:])
    assert differ > 0.8 * len(blues) * (len(blues) - 1) / 2
    # The same seed gives the same crops; another seed others.
    again = random_clips(gulp, seed=3, shuffle=False)
    for a, b in zip(clips(again), first):
        np.testing.assert_array_equal(a, b)
    other = clips(random_clips(gulp, seed=4, shuffle=False))
    assert any(np.abs(a.astype(int) - b).mean() > 3 for a, b in zip(other, first))


def test_checkpoint_skip_and_shard_keep_the_crops(gulp, tmp_path):
    make = lambda: random_clips(gulp, seed=5, shuffle=True)  # noqa: E731
    want = clips(make())
    # Skip and shard give the same elements as the full pass.
    np.testing.assert_array_equal(np.stack(clips(make().skip(2))), np.stack(want[2:]))
    np.testing.assert_array_equal(np.stack(clips(make().shard(2, 1))), np.stack(want[1::2]))
    # A checkpoint after 2 elements resumes with the same crops.
    ds = make()
    it = iter(ds)
    got = [next(it)["frames"].numpy() for _ in range(2)]
    ckpt = tf.train.Checkpoint(iterator=it)
    path = ckpt.save(str(tmp_path / "ckpt"))
    it2 = iter(ds)
    tf.train.Checkpoint(iterator=it2).restore(path)
    got += [e["frames"].numpy() for e in it2]
    np.testing.assert_array_equal(np.stack(got), np.stack(want))


def test_fused_options_are_checked_by_name(gulp):
    with pytest.raises(ValueError, match=r"GulpDataset: augment= \(fused into decoding\) needs "
                                         r"decode=True"):
        tf_gulp.GulpDataset(gulp["path"], augment=[T.Resize((8, 8))], decode=False)
    with pytest.raises(ValueError, match=r"Resize: size\[0\] must be an integer >= 1, got 0"):
        tf_gulp.GulpDataset(gulp["path"], augment=[T.Resize((0, 10))])
    with pytest.raises(TypeError, match=r"Resize: size must be an int or \(height, width\)"):
        tf_gulp.GulpDataset(gulp["path"], augment=[T.Resize("112")])
    with pytest.raises(ValueError, match="GulpDataset: augment needs the output size"):
        tf_gulp.GulpDataset(gulp["path"], augment=[T.Resize(112)])
    with pytest.raises(ValueError, match="ToDtype: dtype='float16': the kernels write float32 "
                                         "or uint8"):
        tf_gulp.GulpDataset(gulp["path"], augment=[T.Resize((8, 8)), T.ToDtype("float16")])
    with pytest.raises(ValueError, match=r"GulpDataset: augment: Normalize\(.*\) needs "
                                         r"ToDtype\(tf.float32"):
        tf_gulp.GulpDataset(gulp["path"], augment=[T.Resize((8, 8)), T.Normalize([0.5], [2.0])])
    with pytest.raises(TypeError, match="GulpDataset: augment: <function .* is not a transform "
                                        "the kernels can fuse"):
        tf_gulp.GulpDataset(gulp["path"], augment=[T.Resize((8, 8)), lambda x: x])
    with pytest.raises(ValueError, match="GulpDataset: scale cannot be combined"):
        tf_gulp.GulpDataset(gulp["path"], augment=[T.Resize((8, 8))], scale=2)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"bias must be one value or one per channel \(3\), got 2"):
        tf_gulp.GulpDataset(gulp["path"], augment=[T.Resize((8, 8)), T.ToDtype(tf.float32),
                                                   T.Normalize([0.0, 0.0], [1.0, 2.0])])


def jpeg(seed: int, height: int = 45, width: int = 70) -> bytes:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 255, (height // 5 + 1, width // 5 + 1, 3)).astype(np.uint8)
    picture = tf.image.resize(base, (height, width), method="bilinear")
    return tf.io.encode_jpeg(tf.cast(picture, tf.uint8), quality=90).numpy()


def test_decode_jpeg_warped_equals_decode_then_warp():
    jpegs = [jpeg(i) for i in range(4)]
    matrix = affine_matrix((45, 70), (16, 24), crop_hw=(30, 40), crop_center=(3, -9), flip_h=True)
    got = decode_jpeg_warped(jpegs, constant_warp(matrix, (16, 24), "float32", norm=0.5),
                             dct_scaling=False).numpy()
    assert got.shape == (4, 16, 24, 3) and got.dtype == np.float32
    for g, data in zip(got, jpegs):
        want = similarity_warp(tf.io.decode_jpeg(data, dct_method="INTEGER_FAST"), matrix,
                               (16, 24), norm=0.5).numpy()
        assert np.abs(g - want).max() <= 1.0 + 1e-6  # 2 levels at norm 0.5
    one = decode_jpeg_warped(jpegs[0], constant_warp(matrix, (16, 24)), dct_scaling=False)
    assert one.shape == (16, 24, 3) and one.dtype == tf.uint8


def test_decode_jpeg_warped_keys_each_picture_by_its_element():
    jpegs = [jpeg(7)] * 4
    crop = [T.RandomResizedCrop(12), T.RandomHorizontalFlip()]
    a = decode_jpeg_warped(jpegs, crop, seed=1, elements=[10, 11, 12, 13]).numpy()
    b = decode_jpeg_warped(jpegs[:2], crop, seed=1, elements=[12, 13]).numpy()
    np.testing.assert_array_equal(a[2:], b)  # same element, same crop, whatever the batch
    assert np.abs(a[0].astype(int) - a[1]).mean() > 1  # same picture, other element
    c = decode_jpeg_warped(jpegs[:1], crop, seed=1, epoch=1, elements=[10]).numpy()
    assert np.abs(a[0].astype(int) - c[0]).mean() > 1  # another epoch


def test_decode_jpeg_warped_names_the_damaged_picture():
    data = jpeg(1)
    with pytest.raises((tf.errors.DataLossError, tf.errors.InvalidArgumentError),
                       match="picture 1 \\(element 1\\)"):
        decode_jpeg_warped([data, data[: len(data) // 2]], [T.Resize((8, 8))], dct_scaling=False)


def test_transforms_can_be_fused_from_inside_a_map_graph():
    # Dataset.map traces its function: the attrs must not need an eager tensor.
    jpegs = tf.data.Dataset.from_tensors(tf.constant([jpeg(2)]))
    augment = [T.Resize((8, 8)), T.ToDtype(tf.float32, scale=True),
               T.Normalize(T.IMAGENET_MEAN, T.IMAGENET_STD)]
    ds = jpegs.map(lambda batch: decode_jpeg_warped(batch, augment))
    got = next(iter(ds))
    assert got.shape == (1, 8, 8, 3) and got.dtype == tf.float32


def test_tf_data_service_workers_draw_the_same_crops(service, gulp):
    # Each split is one clip read alone on a worker (its frames decoded in parallel there); the
    # crops are functions of (seed, epoch, element), so they equal a local pass's.
    make = lambda: random_clips(gulp, seed=9, shuffle=True).map(  # noqa: E731
        lambda e: (e["id"], e["frames"]))
    local = {i.decode(): f for i, f in make().as_numpy_iterator()}
    distributed = make().apply(tf.data.experimental.service.distribute(
        processing_mode=tf.data.experimental.service.ShardingPolicy.DYNAMIC,
        service=service.target, job_name="fused_crops"))
    got = {i.decode(): f for i, f in distributed.as_numpy_iterator()}
    assert sorted(got) == sorted(local) and len(got) == 6
    for key, frames in got.items():
        np.testing.assert_array_equal(frames, local[key])


def test_gray_clips_are_fused_too(gulp):
    fused = clips(tf_gulp.GulpDataset(gulp["path"], colorspace="gray",
                                      augment=constant_warp(MATRIX, (24, 32)), dct_scaling=False))
    for got, e in zip(fused, tf_gulp.GulpDataset(gulp["path"], colorspace="gray")):
        assert got.shape == (4, 24, 32, 1)
        want = similarity_warp(e["frames"][tf.newaxis], MATRIX[np.newaxis], (24, 32))[0].numpy()
        assert np.abs(got.astype(np.float64) - want).max() <= 2


def test_similarity_transform_matrices_are_the_kernels_draws():
    """The matrices a warp elsewhere uses (DataLoader on a device) are the fused kernels' own:
    a constant matrix passes through, random draws are a function of (seed, epoch, element)."""
    from tf_gulp.ops import similarity_transform_matrices

    sizes = tf.constant([[240, 320], [240, 320], [100, 50]], tf.int32)
    constant = similarity_transform_matrices(sizes, constant_warp(MATRIX, (24, 32)))
    np.testing.assert_allclose(constant.numpy(), np.broadcast_to(np.float32(MATRIX), (3, 3, 3)))
    draw = lambda **kw: similarity_transform_matrices(  # noqa: E731
        sizes, [T.RandomResizedCrop(112), T.RandomHorizontalFlip()], **kw).numpy()
    a = draw(seed=1, epoch=0, elements=[0, 1, 2])
    np.testing.assert_array_equal(a, draw(seed=1, epoch=0, elements=[0, 1, 2]))
    assert not np.allclose(a[0], a[1])  # another element, another crop
    assert not np.allclose(a, draw(seed=1, epoch=1, elements=[0, 1, 2]))
    assert not np.allclose(a, draw(seed=2, epoch=0, elements=[0, 1, 2]))
    with pytest.raises(ValueError, match="similarity_transform_matrices: augment needs the "
                                         "output size"):
        similarity_transform_matrices(sizes, [T.RandomHorizontalFlip()])


def test_the_fused_decode_samples_through_similarity_transform_matrices():
    """One random stream: decoding every pixel and warping with the matrices
    similarity_transform_matrices gives is the fused decode's picture (crop and flip alike)."""
    from tf_gulp.ops import similarity_transform_matrices

    jpegs = [jpeg(i) for i in range(6)]
    augment = [T.RandomResizedCrop((16, 24), scale=(0.2, 0.6)), T.RandomHorizontalFlip(),
               T.RandomVerticalFlip()]
    elements = [3, 4, 5, 6, 7, 8]
    got = decode_jpeg_warped(jpegs, augment, seed=7, epoch=2, elements=elements,
                             dct_scaling=False).numpy()
    matrices = similarity_transform_matrices([[45, 70]] * 6, augment, seed=7, epoch=2,
                                             elements=elements).numpy()
    assert len({m.tobytes() for m in matrices}) == 6  # six draws
    assert {bool(m[0, 0] < 0) for m in matrices} == {False, True}  # flipped and not
    for g, data, m in zip(got, jpegs, matrices):
        want = similarity_warp(tf.io.decode_jpeg(data, dct_method="INTEGER_FAST"), m,
                               (16, 24)).numpy()
        assert np.abs(g.astype(np.float64) - want).max() <= 2


def _raw_fused_ops():
    """The raw ops whose seed and epoch inputs are int64 scalars, each called with `seed`."""
    from tf_gulp.ops.library import load_ops  # pylint: disable=import-outside-toplevel

    ops = load_ops()
    one, zero = tf.constant([0], tf.int64), tf.constant(0, tf.int64)
    return {
        "decode_jpeg_warped": lambda seed, epoch=zero: ops.tf_gulp_decode_jpeg_warped(
            contents=tf.constant([b"x"]), what=tf.constant([""]), seed=seed, epoch=epoch,
            elements=one, output_height=2, output_width=2),
        "decode_hevc_warped": lambda seed, epoch=zero: ops.tf_gulp_decode_hevc_warped(
            contents=tf.constant([b"x"]), what=tf.constant([""]), seed=seed, epoch=epoch,
            elements=one, output_height=2, output_width=2),
        "similarity_transform_matrices": lambda seed, epoch=zero: (
            ops.tf_gulp_similarity_transform_matrices(
                input_sizes=tf.constant([[4, 4]], tf.int32), seed=seed, epoch=epoch,
                elements=one, output_height=2, output_width=2)),
    }


@pytest.mark.parametrize("op", ["decode_jpeg_warped", "decode_hevc_warped",
                                "similarity_transform_matrices"])
def test_a_seed_or_epoch_that_is_not_a_scalar_is_an_error_not_an_abort(op):
    # Tensor::scalar() aborts the process on a tensor of two values: the kernels check first.
    call = _raw_fused_ops()[op]
    pair = tf.constant([1, 2], tf.int64)
    with pytest.raises(tf.errors.InvalidArgumentError, match=rf"\b{op}: seed must be a scalar\b"):
        call(pair)
    with pytest.raises(tf.errors.InvalidArgumentError, match=rf"\b{op}: epoch must be a scalar\b"):
        call(tf.constant(0, tf.int64), pair)


@pytest.mark.parametrize("op", ["decode_jpeg_warped", "decode_hevc_warped"])
def test_scalar_contents_in_a_graph_are_refused_when_it_is_built(op):
    # The shape function read the batch size from a scalar's first dimension: out of bounds,
    # a segfault while tracing.
    from tf_gulp.ops.library import load_ops  # pylint: disable=import-outside-toplevel

    raw = getattr(load_ops(), "tf_gulp_" + op)
    inputs = {"contents": tf.TensorSpec([], tf.string)}
    extra = {"what": tf.constant("")}  # both name their pictures
    scalar = tf.constant(0, tf.int64)

    def graph(contents):
        return raw(contents=contents, seed=scalar, epoch=scalar, elements=tf.constant([0], tf.int64),
                   output_height=2, output_width=2, **extra)

    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 0"):
        tf.function(graph).get_concrete_function(**inputs)
