"""A numpy reference of the similarity warp (float64), for the op and transform tests."""

from __future__ import annotations

import numpy as np


def reference_warp(image: np.ndarray, matrix: np.ndarray, out_hw, bias=0.0, norm=1.0,
                   oob=0.0) -> np.ndarray:
    """Warps one HWC uint8 picture: output pixel (x, y) samples input (X/W, Y/W), bilinear."""
    h, w, c = image.shape
    oh, ow = out_hw
    bias = np.broadcast_to(np.asarray(bias, np.float64), (c,))
    norm = np.broadcast_to(np.asarray(norm, np.float64), (c,))
    oob = np.broadcast_to(np.asarray(oob, np.float64), (c,))
    m = np.asarray(matrix, np.float64).reshape(3, 3)
    ys, xs = np.mgrid[0:oh, 0:ow].astype(np.float64)
    X = m[0, 0] * xs + m[0, 1] * ys + m[0, 2]
    Y = m[1, 0] * xs + m[1, 1] * ys + m[1, 2]
    Wp = m[2, 0] * xs + m[2, 1] * ys + m[2, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        X = np.where(Wp > 0, X / Wp, np.nan)
        Y = np.where(Wp > 0, Y / Wp, np.nan)
    inside = (X >= -0.5) & (X <= w - 0.5) & (Y >= -0.5) & (Y <= h - 0.5)
    X = np.where(inside, X, 0.0)
    Y = np.where(inside, Y, 0.0)
    fx, fy = np.floor(X), np.floor(Y)
    ax, ay = (X - fx)[..., None], (Y - fy)[..., None]
    x0 = np.clip(fx.astype(np.int64), 0, w - 1)
    x1 = np.clip(fx.astype(np.int64) + 1, 0, w - 1)
    y0 = np.clip(fy.astype(np.int64), 0, h - 1)
    y1 = np.clip(fy.astype(np.int64) + 1, 0, h - 1)
    img = image.astype(np.float64)
    v = ((1 - ax) * (1 - ay) * img[y0, x0] + ax * (1 - ay) * img[y0, x1]
         + (1 - ax) * ay * img[y1, x0] + ax * ay * img[y1, x1])
    v = np.clip(np.floor(v + 0.5), 0, 255)
    out = (v - bias) * norm
    return np.where(inside[..., None], out, oob).astype(np.float32)


def assert_warp_close(got: np.ndarray, want: np.ndarray, norm=1.0) -> None:
    """Equal up to one intensity level where float32 and float64 round a .5 differently.

    The op interpolates in float32, the reference in float64; a sample within ~1e-4 of a rounding
    boundary, or a coordinate within ~1e-6 of the picture's edge, can land on the other side.
    Such pixels must be rare (< 0.5%).
    """
    assert got.shape == want.shape, (got.shape, want.shape)
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    step = np.max(np.abs(np.asarray(norm, np.float64))) * 1.0001
    off = diff > 1e-5 * max(1.0, float(np.max(np.abs(want))))
    assert off.mean() < 0.005, f"{off.sum()} of {off.size} values differ"
    if off.any():  # mostly one-level rounding differences; in/out decisions at the edge are rarer
        assert np.mean(diff[off] <= step + 1e-5) > 0.5


def affine_matrix(in_hw, out_hw, crop_hw=None, crop_center=(0.0, 0.0), degrees=0.0,
                  flip_h=False) -> np.ndarray:
    """A float32 [3, 3] matrix mapping output pixels to input pixels: the output's centre onto the
    crop's (``crop_center`` = (dy, dx) from the input's centre), the crop scaled to fill the output,
    turned by ``degrees``, mirrored left-right with ``flip_h``. Tests feed it to the kernels as a
    constant warp (tf_gulp.bzna.transforms.ConstantWarpTransform)."""
    (in_h, in_w), (out_h, out_w) = in_hw, out_hw
    crop_h, crop_w = crop_hw if crop_hw is not None else (in_h, in_w)
    theta = np.deg2rad(degrees)
    c, s = np.cos(theta), np.sin(theta)
    fh = -1.0 if flip_h else 1.0
    t_in = np.array([[fh, 0, (in_w - 1) / 2], [0, 1, (in_h - 1) / 2], [0, 0, 1]])
    t_crop = np.array([[1, 0, crop_center[1]], [0, 1, crop_center[0]], [0, 0, 1]])
    rot = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    scale = np.diag([crop_w / out_w, crop_h / out_h, 1.0])
    t_out = np.array([[1, 0, -(out_w - 1) / 2], [0, 1, -(out_h - 1) / 2], [0, 0, 1]])
    return (t_in @ t_crop @ rot @ scale @ t_out).astype(np.float32)


def constant_warp(matrix, out_hw, dtype: str = "uint8", bias=0.0, norm=1.0):
    """An augment (tf_gulp.transforms.Augment) warping every picture through ``matrix`` to
    ``out_hw``: uint8, or float32 ``(v - bias) * norm``. Built on Benzina's ConstantWarpTransform
    (the list in torchvision's vocabulary has no fixed matrix)."""
    import dataclasses

    from tf_gulp.bzna.transforms import (ConstantBiasTransform, ConstantNormTransform,
                                         ConstantWarpTransform, loader_augment)

    augment = loader_augment(out_hw, ConstantWarpTransform(matrix), ConstantBiasTransform(bias),
                             ConstantNormTransform(norm))
    if dtype == "uint8":
        augment = dataclasses.replace(augment, dtype="uint8", bias=(), norm=())
    return augment
