"""tf_gulp.ops.similarity_warp: the CPU kernel against a numpy reference; batches, clips, layouts,
threads, graphs and bad arguments."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import tf_gulp.ops
from warp_testing import assert_warp_close, reference_warp

RNG = np.random.default_rng(1234)


def random_matrix(rng, in_hw, out_hw, projective=False):
    """A random rotation/scale/flip/translation mapping output pixels into (mostly) the input."""
    h, w = in_hw
    oh, ow = out_hw
    angle = rng.uniform(-0.6, 0.6)
    s = rng.uniform(0.3, 2.0)
    fh = rng.choice([-1.0, 1.0])
    c, sn = np.cos(angle) * s, np.sin(angle) * s
    t_in = np.array([[fh, 0, (w - 1) / 2 + rng.uniform(-3, 3)], [0, 1, (h - 1) / 2], [0, 0, 1]])
    r = np.array([[c, -sn, 0], [sn, c, 0], [0, 0, 1]])
    t_out = np.array([[1, 0, -(ow - 1) / 2], [0, 1, -(oh - 1) / 2], [0, 0, 1]])
    m = t_in @ r @ t_out
    if projective:
        m = m @ np.array([[1, 0, 0], [0, 1, 0], [rng.uniform(-2e-3, 2e-3), rng.uniform(-2e-3, 2e-3), 1]])
    return m.astype(np.float32)


def test_batch_matches_reference():
    images = RNG.integers(0, 256, (4, 37, 53, 3), dtype=np.uint8)
    mats = np.stack([random_matrix(RNG, (37, 53), (24, 31)) for _ in range(4)])
    bias, norm, oob = [123.7, 116.3, 103.5], [1 / 58.4, 1 / 57.1, 1 / 57.4], [0.5, -1.0, 2.0]
    got = tf_gulp.ops.similarity_warp(images, mats, (24, 31), bias, norm, oob).numpy()
    assert got.dtype == np.float32 and got.shape == (4, 24, 31, 3)
    for b in range(4):
        want = reference_warp(images[b], mats[b], (24, 31), bias, norm, oob)
        assert_warp_close(got[b], want, norm)
    # The random matrices put some pixels outside: the oob colour is there, unnormalized.
    assert np.any(np.all(got == np.float32(oob), axis=-1))


def test_projective_matrices():
    images = RNG.integers(0, 256, (2, 40, 40, 3), dtype=np.uint8)
    mats = np.stack([random_matrix(RNG, (40, 40), (40, 40), projective=True) for _ in range(2)])
    got = tf_gulp.ops.similarity_warp(images, mats, (40, 40)).numpy()
    for b in range(2):
        assert_warp_close(got[b], reference_warp(images[b], mats[b], (40, 40)))


def test_identity_and_scalar_arguments():
    images = RNG.integers(0, 256, (2, 5, 6, 3), dtype=np.uint8)
    eye = np.tile(np.eye(3, dtype=np.float32), (2, 1, 1))
    got = tf_gulp.ops.similarity_warp(images, eye, [5, 6], bias=10.0, norm=0.5).numpy()
    np.testing.assert_array_equal(got, (images.astype(np.float32) - 10) * 0.5)


def test_single_picture_and_other_channel_counts():
    for c in (1, 4):
        image = RNG.integers(0, 256, (9, 7, c), dtype=np.uint8)
        m = random_matrix(RNG, (9, 7), (5, 5))
        got = tf_gulp.ops.similarity_warp(image, m, (5, 5)).numpy()
        assert got.shape == (5, 5, c)
        assert_warp_close(got, reference_warp(image, m, (5, 5)))


def test_clips_use_one_matrix_for_every_frame():
    clips = RNG.integers(0, 256, (3, 4, 20, 30, 3), dtype=np.uint8)
    mats = np.stack([random_matrix(RNG, (20, 30), (16, 16)) for _ in range(3)])
    got = tf_gulp.ops.similarity_warp(clips, mats, (16, 16), 1.0, 2.0, 3.0).numpy()
    assert got.shape == (3, 4, 16, 16, 3)
    for b in range(3):
        for t in range(4):
            assert_warp_close(got[b, t], reference_warp(clips[b, t], mats[b], (16, 16), 1.0, 2.0, 3.0), 2.0)


def test_nchw_is_the_transpose_of_nhwc():
    images = RNG.integers(0, 256, (2, 21, 17, 3), dtype=np.uint8)
    mats = np.stack([random_matrix(RNG, (21, 17), (11, 13)) for _ in range(2)])
    nhwc = tf_gulp.ops.similarity_warp(images, mats, (11, 13), [1, 2, 3], 0.5, [9, 8, 7]).numpy()
    nchw = tf_gulp.ops.similarity_warp(np.transpose(images, (0, 3, 1, 2)), mats, (11, 13),
                                       [1, 2, 3], 0.5, [9, 8, 7], layout="NCHW").numpy()
    np.testing.assert_array_equal(np.transpose(nchw, (0, 2, 3, 1)), nhwc)
    clips = images.reshape(1, 2, 21, 17, 3)
    nchw5 = tf_gulp.ops.similarity_warp(np.transpose(clips, (0, 1, 4, 2, 3)), mats[:1], (11, 13),
                                        layout="NCHW").numpy()
    nhwc5 = tf_gulp.ops.similarity_warp(clips, mats[:1], (11, 13)).numpy()
    np.testing.assert_array_equal(np.transpose(nchw5, (0, 1, 3, 4, 2)), nhwc5)


def test_large_batch_is_sharded_and_deterministic():
    """Enough work for TF to split rows over threads (shards span pictures): same as one by one."""
    images = RNG.integers(0, 256, (8, 300, 400, 3), dtype=np.uint8)
    mats = np.stack([random_matrix(RNG, (300, 400), (224, 224)) for _ in range(8)])
    whole = tf_gulp.ops.similarity_warp(images, mats, (224, 224)).numpy()
    for b in range(8):
        one = tf_gulp.ops.similarity_warp(images[b], mats[b], (224, 224)).numpy()
        np.testing.assert_array_equal(whole[b], one)
    assert_warp_close(whole[3], reference_warp(images[3], mats[3], (224, 224)))


def test_graph_mode_shapes_and_dataset_map():
    @tf.function(input_signature=[tf.TensorSpec([None, None, None, 3], tf.uint8),
                                  tf.TensorSpec([None, 3, 3], tf.float32)])
    def warp(x, m):
        out = tf_gulp.ops.similarity_warp(x, m, (8, 9))
        assert out.shape.as_list() == [None, 8, 9, 3], out.shape
        return out

    images = RNG.integers(0, 256, (2, 10, 10, 3), dtype=np.uint8)
    eye = np.tile(np.eye(3, dtype=np.float32), (2, 1, 1))
    assert warp(images, eye).shape == (2, 8, 9, 3)

    ds = tf.data.Dataset.from_tensor_slices(images).map(
        lambda x: tf_gulp.ops.similarity_warp(x, tf.eye(3), (10, 10)))
    assert ds.element_spec.shape.as_list() == [10, 10, 3]
    np.testing.assert_array_equal(np.stack(list(ds.as_numpy_iterator())), images.astype(np.float32))


def test_empty_batch():
    out = tf_gulp.ops.similarity_warp(np.zeros((0, 4, 4, 3), np.uint8), np.zeros((0, 3, 3), np.float32),
                                      (2, 2))
    assert out.shape == (0, 2, 2, 3)


@pytest.mark.parametrize("kwargs, match", [
    (dict(output_shape=(0, 4)), "output_shape"),
    (dict(bias=[1.0, 2.0]), "bias"),
    (dict(matrices=np.full((2, 3, 3), np.nan, np.float32)), "non-finite"),
    (dict(matrices=np.zeros((3, 3, 3), np.float32)), "matrices|Dimensions"),
])
def test_bad_arguments(kwargs, match):
    args = dict(images=np.zeros((2, 4, 4, 3), np.uint8),
                matrices=np.tile(np.eye(3, dtype=np.float32), (2, 1, 1)), output_shape=(4, 4))
    args.update(kwargs)
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError), match=match):
        tf_gulp.ops.similarity_warp(**args)


def test_bad_python_arguments():
    with pytest.raises(TypeError, match="uint8"):
        tf_gulp.ops.similarity_warp(np.zeros((1, 4, 4, 3), np.float32), np.eye(3)[None], (4, 4))
    with pytest.raises(ValueError, match="layout"):
        tf_gulp.ops.similarity_warp(np.zeros((1, 4, 4, 3), np.uint8), np.eye(3)[None], (4, 4),
                                    layout="HWC")
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError), match="rank"):
        tf_gulp.ops.similarity_warp(np.zeros((1, 1, 1, 4, 4, 3), np.uint8), np.eye(3)[None], (4, 4))
