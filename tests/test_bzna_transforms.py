"""tf_gulp.bzna.transforms (the transforms Benzina defined), drawn by the C++ kernels: the
reference's check value, the matrix formula against numpy, (H, W) conventions with non-square
shapes, stateless reproducibility, and the random crop's ranges.

The transforms are descriptions compiled by ``loader_augment``; every matrix here is the one the
fused kernels draw, read back with ``similarity_transform_matrices`` (Python draws nothing)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import tensorflow as tf

import tf_gulp.ops
from tf_gulp.bzna import transforms as T
from tf_gulp.ops.image.warp_ops import similarity_transform_matrices


def matrices(in_hw, out_hw, warp=None, seed=0, epoch=0, elements=(0,)) -> np.ndarray:
    """The C++ draws of `warp` for input size `in_hw`, one [3, 3] per element, as float64."""
    augment = T.loader_augment(out_hw, warp)
    sizes = [list(in_hw)] * len(elements)
    return similarity_transform_matrices(sizes, augment, seed=seed, epoch=epoch,
                                         elements=list(elements)).numpy().astype(np.float64)


def test_check_value_of_the_reference():
    """CenterResizedCrop(224/256), a 500x375 (W x H) input, 224x224 output, to 6 decimals."""
    m = matrices((375, 500), (224, 224), T.CenterResizedCrop(224 / 256))[0]
    want = [[1.464844, 0, 86.169922], [0, 1.464844, 23.669922], [0, 0, 1]]
    np.testing.assert_array_equal(np.round(m, 6), want)
    # Deterministic: every key gives the same matrix.
    m2 = matrices((375, 500), (224, 224), T.CenterResizedCrop(224 / 256), seed=5, epoch=7,
                  elements=(9,))[0]
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


# Deterministic similarity transforms (one scale, one ratio, one angle, flips of probability 0 or
# 1, no translation, centred): the kernel's matrix is the formula's for the crop they define.
@pytest.mark.parametrize("case", [
    dict(in_hw=(300, 500), out_hw=(100, 240), scale=0.4, ratio=1.3, degrees=17, flip_h=True,
         flip_v=False, resize=True, keep_ratio=False),
    dict(in_hw=(480, 270), out_hw=(224, 128), scale=0.7, ratio=0.625, degrees=-90, flip_h=False,
         flip_v=True, resize=True, keep_ratio=True),
    dict(in_hw=(64, 32), out_hw=(16, 48), scale=1.0, ratio=None, degrees=0, flip_h=True,
         flip_v=True, resize=False, keep_ratio=False),
])
def test_kernel_matrix_matches_the_formula(case):
    (hi, wi), s, r = case["in_hw"], case["scale"], case["ratio"]
    if r is None:  # the crop keeps the input's ratio
        crop_hw = (math.sqrt(s) * hi, math.sqrt(s) * wi)
    else:
        crop_hw = (math.sqrt(s * hi * wi / r), math.sqrt(s * hi * wi * r))
    warp = T.SimilarityTransform(scale=(s, s), ratio=None if r is None else (r, r),
                                 degrees=(case["degrees"],) * 2, flip_h=float(case["flip_h"]),
                                 flip_v=float(case["flip_v"]), resize=case["resize"],
                                 keep_ratio=case["keep_ratio"])
    got = matrices(case["in_hw"], case["out_hw"], warp, seed=3, elements=(0, 1, 2))
    want = numpy_matrix(case["in_hw"], case["out_hw"], crop_hw, (0, 0), case["degrees"], (0, 0),
                        case["flip_h"], case["flip_v"], case["resize"], case["keep_ratio"])
    for m in got:
        np.testing.assert_allclose(m, want, rtol=1e-6, atol=1e-4)


def test_random_centre_and_translation_stay_in_their_ranges():
    """A random crop's centre offset is within half the room around the crop, and a translation
    within `translate` times the output: the kernel's matrix is the formula's for some such
    offset (solved from its last column), and the offsets vary with the element."""
    in_hw, out_hw = (300, 500), (100, 240)
    crop_hw = (math.sqrt(0.4 * 300 * 500 / 1.3), math.sqrt(0.4 * 300 * 500 * 1.3))
    crop = T.SimilarityTransform(scale=(0.4, 0.4), ratio=(1.3, 1.3), resize=True,
                                 random_crop=True)
    shift = T.SimilarityTransform(translate=(0.1, 0.2), resize=True)
    centres, moves = set(), set()
    for m in matrices(in_hw, out_hw, crop, elements=range(30)):
        base = numpy_matrix(in_hw, out_hw, crop_hw, (0, 0), 0, (0, 0), False, False, True, False)
        np.testing.assert_allclose(m[:, :2], base[:, :2], rtol=1e-6, atol=1e-4)
        cx, cy = m[0, 2] - base[0, 2], m[1, 2] - base[1, 2]
        assert abs(cx) <= (500 - crop_hw[1]) / 2 + 1e-3
        assert abs(cy) <= (300 - crop_hw[0]) / 2 + 1e-3
        centres.add((round(cx, 3), round(cy, 3)))
    for m in matrices(in_hw, out_hw, shift, elements=range(30)):
        base = numpy_matrix(in_hw, out_hw, in_hw, (0, 0), 0, (0, 0), False, False, True, False)
        # t_out's translation (ty, tx) in output pixels, scaled by the resize into input pixels.
        tx, ty = -(m[0, 2] - base[0, 2]) / m[0, 0], -(m[1, 2] - base[1, 2]) / m[1, 1]
        assert abs(tx) <= 0.2 * 240 + 1e-3 and abs(ty) <= 0.1 * 100 + 1e-3
        moves.add((round(tx, 3), round(ty, 3)))
    assert len(centres) == 30 and len(moves) == 30


def test_non_square_shapes_are_height_then_width():
    """A full resize maps the output's pixel-area corners onto the input's, for (H, W) both ways."""
    for in_hw, out_hw in [((30, 80), (12, 50)), ((80, 30), (50, 12)), ((30, 80), (50, 12))]:
        m = matrices(in_hw, out_hw)[0]  # no warp_transform: the whole picture resized
        (hi, wi), (ho, wo) = in_hw, out_hw
        for x, y, X, Y in [(-0.5, -0.5, -0.5, -0.5), (wo - 0.5, ho - 0.5, wi - 0.5, hi - 0.5)]:
            np.testing.assert_allclose(m @ [x, y, 1], [X, Y, 1], atol=1e-4)
    # And through the warp: left half red, right half blue stays so in a wide output of a tall
    # input.
    image = np.zeros((80, 30, 3), np.uint8)
    image[:, :15, 0] = 255
    image[:, 15:, 2] = 255
    m = matrices((80, 30), (10, 40))[0].astype(np.float32)
    out = tf_gulp.ops.similarity_warp(image, m, (10, 40)).numpy()
    assert out.shape == (10, 40, 3)
    assert np.all(out[:, :19, 0] == 255) and np.all(out[:, 21:, 2] == 255)


def test_stateless_keys():
    t = T.SimilarityTransform(scale=(0.2, 1), ratio=(0.5, 2), degrees=30, translate=(0.1, 0.2),
                              flip_h=0.5, flip_v=0.5, resize=True, random_crop=True)
    a = matrices((300, 400), (224, 224), t, seed=1, epoch=2, elements=(3,))[0]
    b = matrices((300, 400), (224, 224), t, seed=1, epoch=2, elements=(3,))[0]
    np.testing.assert_array_equal(a, b)
    others = [matrices((300, 400), (224, 224), t, seed=s, epoch=e, elements=(i,))[0]
              for s, e, i in [(1, 2, 4), (1, 3, 3), (2, 2, 3)]]
    for o in others:
        assert not np.allclose(a, o)


def test_reproducible_under_parallel_map_and_shuffle():
    """The matrix of element i depends on i only, not on the order or thread that computes it."""
    augment = T.loader_augment((64, 64), T.RandomResizedCrop())
    direct = matrices((200, 300), (64, 64), T.RandomResizedCrop(), seed=7, elements=range(40))
    ds = tf.data.Dataset.range(40).shuffle(40, seed=3).map(
        lambda i: (i, similarity_transform_matrices(tf.constant([200, 300]), augment, seed=7,
                                                    elements=i)),
        num_parallel_calls=4, deterministic=False)
    seen = 0
    for i, m in ds.as_numpy_iterator():
        np.testing.assert_array_equal(m, direct[int(i)].astype(np.float32))
        seen += 1
    assert seen == 40


def test_random_resized_crop_ranges():
    in_hw = (375, 500)
    flips = 0
    for m in matrices(in_hw, (224, 224), T.RandomResizedCrop(), elements=range(300)):
        # No rotation: the diagonal is the crop's size over the output's (negative: flipped).
        cw, ch = abs(m[0, 0]) * 224, m[1, 1] * 224
        assert ch <= 375 + 1e-3 and cw <= 500 + 1e-3
        area = ch * cw / (375 * 500)
        assert 0.08 - 1e-5 <= area <= 1 + 1e-5 or abs(cw / ch - 500 / 375) < 1e-5  # or fallback
        assert 3 / 4 - 1e-5 <= cw / ch <= 4 / 3 + 1e-5
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
    m = matrices((100, 100), (10, 10), t)[0]
    # Fallback: crop 100 wide x 100/3 high, centred (input ratio 1 < 3 → height = width / 3).
    np.testing.assert_allclose(m[0, 0], 10.0, rtol=1e-6)
    np.testing.assert_allclose(m[1, 1], 100 / 3 / 10, rtol=1e-6)
    np.testing.assert_allclose(m @ [4.5, 4.5, 1], [49.5, 49.5, 1], atol=1e-4)
    ok = T.SimilarityTransform(scale=(0.25, 0.25), ratio=(1, 1), resize=True)
    m = matrices((100, 100), (10, 10), ok)[0]
    np.testing.assert_allclose([m[0, 0], m[1, 1]], [5.0, 5.0], rtol=1e-6)  # a 50 x 50 crop
    # Ratios in (0.5, 4) with an area of 90-100 %: only ratios near 1 fit, so some elements fall
    # back (the whole 100 x 100 input, centred) and others draw; an element after a fallback
    # draws again.
    some = T.SimilarityTransform(scale=(0.9, 1.0), ratio=(0.5, 4.0), resize=True,
                                 random_crop=True)
    fell = [bool(np.allclose([m[0, 0], m[1, 1], m[0, 2], m[1, 2]], [10, 10, 4.5, 4.5]))
            for m in matrices((100, 100), (10, 10), some, elements=range(40))]
    assert any(fell) and not all(fell)
    assert any(a and not b for a, b in zip(fell, fell[1:]))


def test_constant_transforms_and_arguments():
    np.testing.assert_array_equal(matrices((7, 9), (3, 4), T.ConstantWarpTransform())[0],
                                  np.eye(3))
    m = np.array([[2, 0, 5], [0, 3, 6], [0, 0, 1]], np.float64)
    np.testing.assert_array_equal(matrices((7, 9), (3, 4), T.ConstantWarpTransform(m))[0], m)
    np.testing.assert_allclose(T.ConstantBiasTransform().values, T.IMAGENET_MEAN, rtol=1e-6)
    np.testing.assert_allclose(T.ConstantNormTransform([2.0]).values, [2.0])
    augment = T.loader_augment((4, 4))  # the defaults: ImageNet's bias and norm, float32
    assert augment.bias == T.IMAGENET_MEAN and augment.norm == T.IMAGENET_NORM
    assert augment.dtype == "float32" and augment.shape == (4, 4)
    with pytest.raises(ValueError):
        T.ConstantWarpTransform(np.eye(2))
    with pytest.raises(ValueError):
        T.SimilarityTransform(flip_h=1.5)
    with pytest.raises(ValueError):
        T.SimilarityTransform(scale=(1.0, 0.5))
    with pytest.raises(ValueError, match="bias_transform takes a number or 3 values"):
        T.loader_augment((4, 4), bias_transform=T.ConstantBiasTransform([1.0, 2.0]))
    # Descriptions, not callables: a Python function is refused, naming the argument.
    with pytest.raises(TypeError, match="warp_transform must be a tf_gulp.bzna.transforms"):
        T.loader_augment((4, 4), warp_transform=lambda *a: tf.eye(3))
    with pytest.raises(TypeError, match=r"warp_transform=RandomResizedCrop is the class"):
        T.loader_augment((4, 4), warp_transform=T.RandomResizedCrop)


def test_runs_in_a_graph_with_dynamic_sizes():
    augment = T.loader_augment((224, 224), T.RandomResizedCrop())

    @tf.function(input_signature=[tf.TensorSpec([2], tf.int32), tf.TensorSpec([], tf.int64)])
    def f(in_hw, i):
        return similarity_transform_matrices(in_hw, augment, seed=0, epoch=0, elements=i)

    np.testing.assert_allclose(
        f(tf.constant([375, 500]), tf.constant(5, tf.int64)),
        matrices((375, 500), (224, 224), T.RandomResizedCrop(), elements=(5,))[0], rtol=1e-6)
