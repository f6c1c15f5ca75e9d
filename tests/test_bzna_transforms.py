"""tf_gulp.transforms (the transforms Benzina defined): the reference's check value, the matrix formula against numpy, (H, W)
conventions with non-square shapes, stateless reproducibility, and the random crop's ranges."""

from __future__ import annotations

import math

import numpy as np
import pytest
import tensorflow as tf

import tf_gulp.ops
from tf_gulp import transforms as T


def test_check_value_of_the_reference():
    """CenterResizedCrop(224/256), a 500x375 (W x H) input, 224x224 output, to 6 decimals."""
    m = T.CenterResizedCrop(224 / 256)((375, 500), (224, 224), T.element_key(0, 0, 0)).numpy()
    want = [[1.464844, 0, 86.169922], [0, 1.464844, 23.669922], [0, 0, 1]]
    np.testing.assert_array_equal(np.round(m.astype(np.float64), 6), want)
    # Deterministic: every key gives the same matrix.
    m2 = T.CenterResizedCrop(224 / 256)((375, 500), (224, 224), T.element_key(5, 7, 9)).numpy()
    np.testing.assert_array_equal(m, m2)


def numpy_matrix(in_hw, out_hw, crop_hw, center, degrees, translate, flip_h, flip_v, resize,
                 keep_ratio):
    hi, wi = in_hw
    ho, wo = out_hw
    ch, cw = crop_hw
    fh, fv = (-1 if flip_h else 1), (-1 if flip_v else 1)
    t_in = np.array([[fh, 0, (wi - 1) / 2], [0, fv, (hi - 1) / 2], [0, 0, 1]])
    t_crop = np.array([[1, 0, center[1]], [0, 1, center[0]], [0, 0, 1]])
    a = math.radians(degrees)
    r = np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])
    sx, sy = (cw / wo, ch / ho) if resize else (1, 1)
    if resize and keep_ratio:
        sx = sy = min(sx, sy)
    s = np.diag([sx, sy, 1])
    t_out = np.array([[1, 0, -translate[1] - (wo - 1) / 2], [0, 1, -translate[0] - (ho - 1) / 2],
                      [0, 0, 1]])
    return t_in @ t_crop @ r @ s @ t_out


@pytest.mark.parametrize("case", [
    dict(in_hw=(300, 500), out_hw=(100, 240), crop_hw=(200, 260), center=(10, -30), degrees=17,
         translate=(3, -4), flip_h=True, flip_v=False, resize=True, keep_ratio=False),
    dict(in_hw=(480, 270), out_hw=(224, 128), crop_hw=(400, 250), center=(0, 5), degrees=-90,
         translate=(0, 0), flip_h=False, flip_v=True, resize=True, keep_ratio=True),
    dict(in_hw=(64, 32), out_hw=(16, 48), crop_hw=(64, 32), center=(0, 0), degrees=0,
         translate=(1, 1), flip_h=True, flip_v=True, resize=False, keep_ratio=False),
])
def test_compute_affine_matrix_matches_the_formula(case):
    got = T.compute_affine_matrix(case["in_hw"], case["out_hw"], crop_hw=case["crop_hw"],
                                  crop_center=case["center"], degrees=case["degrees"],
                                  translate=case["translate"], flip_h=case["flip_h"],
                                  flip_v=case["flip_v"], resize=case["resize"],
                                  keep_ratio=case["keep_ratio"]).numpy()
    np.testing.assert_allclose(got, numpy_matrix(**case), rtol=1e-6, atol=1e-4)


def test_non_square_shapes_are_height_then_width():
    """A full resize maps the output's pixel-area corners onto the input's, for (H, W) both ways."""
    for in_hw, out_hw in [((30, 80), (12, 50)), ((80, 30), (50, 12)), ((30, 80), (50, 12))]:
        m = T.compute_affine_matrix(in_hw, out_hw).numpy().astype(np.float64)
        (hi, wi), (ho, wo) = in_hw, out_hw
        for x, y, X, Y in [(-0.5, -0.5, -0.5, -0.5), (wo - 0.5, ho - 0.5, wi - 0.5, hi - 0.5)]:
            np.testing.assert_allclose(m @ [x, y, 1], [X, Y, 1], atol=1e-4)
    # And through the warp: left half red, right half blue stays so in a wide output of a tall input.
    image = np.zeros((80, 30, 3), np.uint8)
    image[:, :15, 0] = 255
    image[:, 15:, 2] = 255
    m = T.compute_affine_matrix((80, 30), (10, 40))
    out = tf_gulp.ops.similarity_warp(image, m, (10, 40)).numpy()
    assert out.shape == (10, 40, 3)
    assert np.all(out[:, :19, 0] == 255) and np.all(out[:, 21:, 2] == 255)


def test_stateless_keys():
    t = T.SimilarityTransform(scale=(0.2, 1), ratio=(0.5, 2), degrees=30, translate=(0.1, 0.2),
                              flip_h=0.5, flip_v=0.5, resize=True, random_crop=True)
    a = t((300, 400), (224, 224), T.element_key(1, 2, 3)).numpy()
    b = t((300, 400), (224, 224), T.element_key(1, 2, 3)).numpy()
    np.testing.assert_array_equal(a, b)
    others = [t((300, 400), (224, 224), T.element_key(*k)).numpy()
              for k in [(1, 2, 4), (1, 3, 3), (2, 2, 3)]]
    for o in others:
        assert not np.allclose(a, o)


def test_reproducible_under_parallel_map_and_shuffle():
    """The matrix of element i depends on i only, not on the order or thread that computes it."""
    t = T.RandomResizedCrop()
    direct = {i: t((200, 300), (64, 64), T.element_key(7, 0, i)).numpy() for i in range(40)}
    ds = tf.data.Dataset.range(40).shuffle(40, seed=3).map(
        lambda i: (i, t((200, 300), (64, 64), T.element_key(7, 0, i))),
        num_parallel_calls=4, deterministic=False)
    seen = 0
    for i, m in ds.as_numpy_iterator():
        np.testing.assert_array_equal(m, direct[int(i)])
        seen += 1
    assert seen == 40


def test_random_resized_crop_ranges():
    t = T.RandomResizedCrop()
    in_hw = (375, 500)
    flips = 0
    for i in range(300):
        u = tf.random.stateless_uniform([T._NUM_SLOTS], seed=T.element_key(0, 0, i), dtype=tf.float64)
        ch, cw = (float(v) for v in t.crop_size(in_hw, u)[:2])
        assert ch <= 375 + 1e-9 and cw <= 500 + 1e-9
        area = ch * cw / (375 * 500)
        assert 0.08 - 1e-9 <= area <= 1 + 1e-9 or abs(cw / ch - 500 / 375) < 1e-9  # or fallback
        m = t(in_hw, (224, 224), T.element_key(0, 0, i)).numpy().astype(np.float64)
        flips += m[0, 0] < 0
        # Every output pixel centre maps inside the input (no rotation, crop inside).
        for x, y in [(-0.5, -0.5), (223.5, -0.5), (-0.5, 223.5), (223.5, 223.5)]:
            X, Y, _ = m @ [x, y, 1]
            assert -0.5 - 1e-3 <= X <= 499.5 + 1e-3 and -0.5 - 1e-3 <= Y <= 374.5 + 1e-3
    assert 100 < flips < 200


def test_failed_ratio_search_falls_back_per_element_only():
    """No try fits for a very wide ratio: a centred crop of the input narrowed to the ratio range.

    The reference disables random crops for good after one failure; here the next element draws
    again (its own key)."""
    t = T.SimilarityTransform(scale=(1.0, 1.0), ratio=(3.0, 4.0), resize=True, random_crop=True)
    m = t((100, 100), (10, 10), T.element_key(0, 0, 0)).numpy()
    # Fallback: crop 100 wide x 100/3 high, centred (input ratio 1 < 3 → height = width / 3).
    np.testing.assert_allclose(m[0, 0], 10.0, rtol=1e-6)
    np.testing.assert_allclose(m[1, 1], 100 / 3 / 10, rtol=1e-6)
    np.testing.assert_allclose(m @ [4.5, 4.5, 1], [49.5, 49.5, 1], atol=1e-4)
    assert not bool(t.crop_size((100, 100), tf.constant([0.5] * T._NUM_SLOTS, tf.float64))[2])
    u = tf.constant([0.5] * T._NUM_SLOTS, tf.float64)
    ok = T.SimilarityTransform(scale=(0.25, 0.25), ratio=(1, 1), resize=True)
    ch, cw, drawn = (float(v) for v in ok.crop_size((100, 100), u))
    assert drawn
    assert abs(ch - 50) < 1e-9 and abs(cw - 50) < 1e-9


def test_constant_transforms_and_arguments():
    np.testing.assert_array_equal(T.ConstantWarpTransform()((1, 1), (1, 1), None), np.eye(3))
    np.testing.assert_allclose(T.ConstantBiasTransform()(), T.IMAGENET_MEAN, rtol=1e-6)
    np.testing.assert_allclose(T.ConstantNormTransform([2.0])(), [2.0])
    with pytest.raises(ValueError):
        T.ConstantWarpTransform(np.eye(2))
    with pytest.raises(ValueError):
        T.SimilarityTransform(flip_h=1.5)
    with pytest.raises(ValueError):
        T.SimilarityTransform(scale=(1.0, 0.5))


def test_runs_in_a_graph_with_dynamic_sizes():
    t = T.RandomResizedCrop()

    @tf.function(input_signature=[tf.TensorSpec([2], tf.int32), tf.TensorSpec([], tf.int64)])
    def f(in_hw, i):
        return t(in_hw, (224, 224), T.element_key(0, 0, i))

    np.testing.assert_allclose(f(tf.constant([375, 500]), tf.constant(5, tf.int64)),
                               t((375, 500), (224, 224), T.element_key(0, 0, 5)), rtol=1e-6)

