"""Warp, bias and norm transforms, one API for every format (Benzina's DataLoader semantics).

The same objects serve two paths:

- **fused into decoding** (``GulpDataset(..., warp=RandomResizedCrop(), shape=(112, 112))``, and
  :func:`tf_gulp.ops.decode_jpeg_warped` for JPEG bytes from FFRecord, TFRecord or files): the
  kernel draws each element's matrix itself, in C++ (``cc/warp/similarity_transform``), from
  ``(seed, epoch, element)``, and decodes only the pixels it samples. Only the transforms of this
  module can be fused (their parameters travel to the kernel; see ``_kernel_params``).
- **called in a map** (the Benzina DataLoader, :func:`tf_gulp.ops.similarity_warp`): a warp
  transform is called per element as ``transform(in_hw, out_hw, key)`` and returns the float32
  ``[3, 3]`` matrix that maps *output* pixels to *input* pixels; a bias or norm transform is called
  as ``transform(key)`` and returns a scalar or one float32 value per channel. Everything is
  TensorFlow ops, so the transforms run inside ``Dataset.map`` graphs.

Both draw the same quantities from the same distributions into the same matrix; the random
streams differ (SplitMix64 in the kernels, TensorFlow's stateless Philox here), so one seed gives
different (equally distributed) crops on the two paths.

Conventions (stated once, used everywhere):

- Sizes are ``(height, width)``, like TensorFlow's image ops, for input and output alike; the
  matrices act on ``(x, y, 1)`` column vectors (x = column, y = row).
- Randomness is a function of ``key``, a stateless seed (int64 ``[2]``) made by :func:`element_key`
  from ``(seed, epoch, element)``: the same element gets the same parameters whatever the thread
  timing, shuffling, parallelism or resumption; every random quantity has its own counter slot, so
  changing one option does not reshuffle the others.

Where this differs from the reference (deliberately):

- The reference draws from one sequential RNG stream; results there depend on loading order.
- The reference, after one failed aspect-ratio search, turns random cropping off for good; here a
  failed search falls back to a centre crop for that element only.
- The reference mixes up (W, H) and (H, W) for non-square outputs; here every size is (H, W).
- (The reference loader also reuses a batch's memory for the next batch; tensors here are fresh.)
"""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np
import tensorflow as tf

from tf_gulp import _args as A

__all__ = [
    "CenterResizedCrop",
    "ColorJitter",
    "ConstantBiasTransform",
    "ConstantNormTransform",
    "ConstantWarpTransform",
    "IMAGENET_MEAN",
    "IMAGENET_NORM",
    "RandomGrayscale",
    "RandomResizedCrop",
    "SimilarityTransform",
    "color_draws",
    "compute_affine_matrix",
    "element_key",
    "kernel_transform",
    "kernel_vector",
]

# ImageNet's RGB mean (0.485, 0.456, 0.406) * 255 and 1 / (std (0.229, 0.224, 0.225) * 255): the
# one default of bias and norm, ConstantBiasTransform()'s and ConstantNormTransform()'s, which
# tf_gulp.bzna.DataLoader uses when given none. The ops (similarity_warp, decode_*_warped) and
# GulpDataset(shape=...) apply no normalization unless given bias= / norm=.
IMAGENET_MEAN = (123.675, 116.28, 103.53)
IMAGENET_NORM = (1.0 / 58.395, 1.0 / 57.12, 1.0 / 57.375)

# Counter slots of the uniform draws: one per random quantity (see SimilarityTransform).
_MAX_RATIO_TRIES = 10
_SLOT_SCALE = 0
_SLOT_RATIO = 1  # .. _SLOT_RATIO + _MAX_RATIO_TRIES - 1
_SLOT_CX = _SLOT_RATIO + _MAX_RATIO_TRIES
_SLOT_CY = _SLOT_CX + 1
_SLOT_ANGLE = _SLOT_CY + 1
_SLOT_TX = _SLOT_ANGLE + 1
_SLOT_TY = _SLOT_TX + 1
_SLOT_FLIP_H = _SLOT_TY + 1
_SLOT_FLIP_V = _SLOT_FLIP_H + 1
_NUM_SLOTS = _SLOT_FLIP_V + 1

Pair = Union[float, Tuple[float, float], Sequence[float]]


def element_key(seed, epoch, element) -> tf.Tensor:
    """The stateless seed (int64 ``[2]``) of one element: a function of (seed, epoch, element)."""
    key = tf.stack([tf.cast(seed, tf.int64), tf.constant(0x62a7e3, tf.int64)])
    key = tf.random.experimental.stateless_fold_in(key, tf.cast(epoch, tf.int64))
    return tf.random.experimental.stateless_fold_in(key, tf.cast(element, tf.int64))


def _f64(x) -> tf.Tensor:
    return tf.cast(tf.convert_to_tensor(x), tf.float64)


def _hw(size, name: str) -> Tuple[tf.Tensor, tf.Tensor]:
    size = _f64(size)
    if size.shape.rank != 1 or (size.shape[0] is not None and size.shape[0] != 2):
        raise ValueError(f"{name} must be (height, width), got shape {size.shape}")
    return size[0], size[1]


def _pair(value: Pair, name: str, symmetric: bool = False, owner: str = "") -> Tuple[float, float]:
    """A scalar v means (-v, v) when `symmetric`, else (v, v); a pair is taken as is. `owner`
    (the transform's class name) begins the messages."""
    what = f"{owner}: " if owner else ""
    number = isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
    if not number and (isinstance(value, (str, bytes, bool)) or not hasattr(value, "__len__")):
        raise TypeError(f"{what}{name} must be a number or a (low, high) pair, got {value!r}")
    if number:
        return (-float(value), float(value)) if symmetric else (float(value), float(value))
    value = tuple(float(v) for v in value)
    if len(value) != 2:
        raise ValueError(f"{what}{name} must be a number or a (low, high) pair, got {value!r}")
    if value[0] > value[1]:
        raise ValueError(f"{what}{name} must be (low, high) with low <= high, got {value!r}: "
                         f"write it as ({value[1]!r}, {value[0]!r})")
    return value


def _check_transform_instance(value, name: str, what: str = "") -> None:
    """A transform class where an instance belongs (``warp=RandomResizedCrop``) is a TypeError
    naming the fix; Python would otherwise call the class as the transform, or complain about
    ``self``."""
    if isinstance(value, type):
        raise TypeError(f"{what}{name}={value.__name__} is the class; pass an instance: "
                        f"{name}={value.__name__}()")


def compute_affine_matrix(in_hw, out_hw, crop_hw=None, crop_center=(0.0, 0.0), degrees=0.0,
                          translate=(0.0, 0.0), flip_h=False, flip_v=False, resize=True,
                          keep_ratio=False) -> tf.Tensor:
    """The ``[3, 3]`` float32 matrix mapping output pixels to input pixels.

    ``H = T_in · T_crop · R · S · T_out`` with

    - ``T_out``: output pixel (x, y) → offset from the output's centre, minus ``translate``
      (``(tx, ty)`` in output pixels);
    - ``S = diag(crop_w / out_w, crop_h / out_h)`` when ``resize`` (the crop fills the output; with
      ``keep_ratio`` both factors are the smaller one, so the crop covers the output without
      distortion), else the identity (input pixels 1:1);
    - ``R``: rotation by ``degrees``;
    - ``T_crop``: the crop's centre, ``crop_center = (dy, dx)`` relative to the input's centre;
    - ``T_in``: back to input pixels, mirrored about the centre for ``flip_h`` / ``flip_v``.

    Args:
      in_hw, out_hw: (height, width) of the input and the output.
      crop_hw: (height, width) of the crop; default the whole input.
      crop_center: (dy, dx) of the crop centre from the input centre, in input pixels.
      degrees: rotation of the sampling grid; with y pointing down, a positive angle turns the
        picture's content counter-clockwise on screen.
      translate: (ty, tx) output translation in output pixels.
      flip_h, flip_v: mirror left-right / top-bottom (Python or TF booleans).
      resize, keep_ratio: see above.

    Example (the reference's check value): ``compute_affine_matrix((375, 500), (224, 224),
    crop_hw=(328.125, 437.5), keep_ratio=True)`` →
    ``[[1.464844, 0, 86.169922], [0, 1.464844, 23.669922], [0, 0, 1]]``.
    """
    in_h, in_w = _hw(in_hw, "in_hw")
    out_h, out_w = _hw(out_hw, "out_hw")
    if crop_hw is None:
        crop_h, crop_w = in_h, in_w
    else:
        crop_h, crop_w = _hw(crop_hw, "crop_hw")
    cy, cx = _hw(crop_center, "crop_center")
    ty, tx = _hw(translate, "translate")
    one = tf.constant(1.0, tf.float64)
    zero = tf.constant(0.0, tf.float64)
    fh = tf.where(tf.cast(flip_h, tf.bool), -one, one)
    fv = tf.where(tf.cast(flip_v, tf.bool), -one, one)
    if resize:
        sx, sy = crop_w / out_w, crop_h / out_h
        if keep_ratio:
            sx = sy = tf.minimum(sx, sy)
    else:
        sx = sy = one
    theta = _f64(degrees) * (math.pi / 180.0)
    cos, sin = tf.cos(theta), tf.sin(theta)

    def m(rows):
        return tf.stack([tf.stack([tf.cast(v, tf.float64) for v in row]) for row in rows])

    t_in = m([[fh, zero, (in_w - 1) / 2], [zero, fv, (in_h - 1) / 2], [zero, zero, one]])
    t_crop = m([[one, zero, cx], [zero, one, cy], [zero, zero, one]])
    rot = m([[cos, -sin, zero], [sin, cos, zero], [zero, zero, one]])
    scale = m([[sx, zero, zero], [zero, sy, zero], [zero, zero, one]])
    t_out = m([[one, zero, -tx - (out_w - 1) / 2], [zero, one, -ty - (out_h - 1) / 2],
               [zero, zero, one]])
    return tf.cast(t_in @ t_crop @ rot @ scale @ t_out, tf.float32)


class SimilarityTransform:
    """Random crop / scale / aspect ratio / rotation / translation / flips, as one matrix.

    Args:
      scale: (s0, s1): the crop's area as a fraction of the input's, drawn log-uniformly
        (``s = exp(U(ln s0, ln s1))``); a number s means (s, s).
      ratio: None (the crop keeps the input's aspect ratio) or (r0, r1): the crop's width/height,
        log-uniform; up to 10 tries for a crop that fits, else a centre crop of the whole input
        clamped to the ratio range (this element only).
      degrees: rotation range (d0, d1), or d for (-d, d).
      translate: (ty, tx) fractions of the output size; the translation is U(-t, t) times it.
      flip_h, flip_v: probabilities of mirroring left-right / top-bottom.
      resize: scale the crop to the output (else pixels stay 1:1).
      keep_ratio: one scale factor for both axes (the smaller).
      random_crop: place the crop uniformly inside the input (else centred).
    """

    def __init__(self, scale: Pair = (1.0, 1.0), ratio: Optional[Pair] = None,
                 degrees: Pair = 0.0, translate: Pair = (0.0, 0.0), flip_h: float = 0.0,
                 flip_v: float = 0.0, resize: bool = False, keep_ratio: bool = False,
                 random_crop: bool = False):
        owner = type(self).__name__
        self.scale = _pair(scale, "scale", owner=owner)
        if not 0.0 < self.scale[0] <= self.scale[1] <= 1.0:
            raise ValueError(f"{owner}: scale is the crop's area as a fraction of the input's, "
                             f"(low, high) within (0, 1]; got {self.scale!r} (e.g. scale=(0.08, "
                             f"1.0); the output size is the dataset's shape=)")
        self.ratio = None if ratio is None else _pair(ratio, "ratio", owner=owner)
        if self.ratio is not None and self.ratio[0] <= 0:
            raise ValueError(f"{owner}: ratio is the crop's width / height, (low, high) with "
                             f"low > 0; got {self.ratio!r} (e.g. ratio=(3 / 4, 4 / 3))")
        self.degrees = _pair(degrees, "degrees", symmetric=True)
        if isinstance(translate, (int, float)):
            translate = (float(translate), float(translate))
        self.translate = tuple(abs(float(t)) for t in translate)
        if len(self.translate) != 2:
            raise ValueError(f"translate must be a number or (ty, tx), got {translate!r}")
        for name, p in (("flip_h", flip_h), ("flip_v", flip_v)):
            if not 0.0 <= float(p) <= 1.0:
                raise ValueError(f"{name} is a probability, got {p!r}")
        self.flip_h = float(flip_h)
        self.flip_v = float(flip_v)
        self.resize = bool(resize)
        self.keep_ratio = bool(keep_ratio)
        self.random_crop = bool(random_crop)

    def crop_size(self, in_hw, u: tf.Tensor) -> Tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """(crop_h, crop_w, drawn) from the uniform draws `u` (float64 ``[_NUM_SLOTS]``); `drawn`
        is False when the aspect-ratio search failed and the crop is the centred fallback."""
        in_h, in_w = _hw(in_hw, "in_hw")
        lo, hi = math.log(self.scale[0]), math.log(self.scale[1])
        s = tf.exp(lo + (hi - lo) * u[_SLOT_SCALE])
        area = s * in_w * in_h
        if self.ratio is None:
            root = tf.sqrt(s)
            return root * in_h, root * in_w, tf.constant(True)
        rlo, rhi = math.log(self.ratio[0]), math.log(self.ratio[1])
        ar = tf.exp(rlo + (rhi - rlo) * u[_SLOT_RATIO:_SLOT_RATIO + _MAX_RATIO_TRIES])
        cw = tf.sqrt(area * ar)
        ch = tf.sqrt(area / ar)
        fits = (cw <= in_w) & (ch <= in_h)
        first = tf.argmax(tf.cast(fits, tf.int32))  # the first try that fits, if any
        # Fallback: the whole input, narrowed to the nearest allowed aspect ratio, centred.
        in_ratio = in_w / in_h
        fb_w = tf.where(in_ratio > self.ratio[1], in_h * self.ratio[1], in_w)
        fb_h = tf.where(in_ratio < self.ratio[0], in_w / self.ratio[0], in_h)
        found = tf.reduce_any(fits)
        return tf.where(found, ch[first], fb_h), tf.where(found, cw[first], fb_w), found

    def _kernel_params(self) -> List[float]:
        """The flat encoding the fused kernels read (cc/warp/similarity_transform.h)."""
        ratio = self.ratio if self.ratio is not None else (0.0, 0.0)
        return [1.0, *self.scale, *ratio, *self.degrees, *self.translate, self.flip_h,
                self.flip_v, float(self.resize), float(self.keep_ratio),
                float(self.random_crop)]

    def __call__(self, in_hw, out_hw, key) -> tf.Tensor:
        u = tf.random.stateless_uniform([_NUM_SLOTS], seed=key, dtype=tf.float64)
        in_h, in_w = _hw(in_hw, "in_hw")
        out_h, out_w = _hw(out_hw, "out_hw")
        crop_h, crop_w, drawn = self.crop_size(in_hw, u)
        if self.random_crop:  # the fallback crop stays centred
            place = tf.where(drawn, tf.constant(1.0, tf.float64), tf.constant(0.0, tf.float64))
            cx = place * (u[_SLOT_CX] - 0.5) * tf.abs(in_w - crop_w)
            cy = place * (u[_SLOT_CY] - 0.5) * tf.abs(in_h - crop_h)
        else:
            cx = cy = tf.constant(0.0, tf.float64)
        d0, d1 = self.degrees
        angle = d0 + (d1 - d0) * u[_SLOT_ANGLE]
        tx = (2 * u[_SLOT_TX] - 1) * self.translate[1] * out_w
        ty = (2 * u[_SLOT_TY] - 1) * self.translate[0] * out_h
        return compute_affine_matrix(
            tf.stack([in_h, in_w]), tf.stack([out_h, out_w]),
            crop_hw=tf.stack([crop_h, crop_w]), crop_center=tf.stack([cy, cx]), degrees=angle,
            translate=tf.stack([ty, tx]), flip_h=u[_SLOT_FLIP_H] < self.flip_h,
            flip_v=u[_SLOT_FLIP_V] < self.flip_v, resize=self.resize,
            keep_ratio=self.keep_ratio)


class RandomResizedCrop(SimilarityTransform):
    """The ImageNet training crop: area (0.08, 1), aspect ratio (3/4, 4/3), random place, resized
    to the output; optional horizontal flip probability (default 0.5).

    Unlike torchvision's ``RandomResizedCrop(size, scale, ratio)``, the output size is not an
    argument: it is the dataset's or op's ``shape=`` (one crop spec serves any output size), so
    ``RandomResizedCrop(112)`` is a TypeError rather than ``scale=(112, 112)``. The arguments are
    keyword-only for the same reason."""

    def __init__(self, *size, scale: Pair = (0.08, 1.0), ratio: Pair = (3.0 / 4.0, 4.0 / 3.0),
                 flip_h: float = 0.5, **kwargs):
        if size or "size" in kwargs:
            given = size[0] if size else kwargs["size"]
            raise TypeError(
                f"RandomResizedCrop({given!r}): the output size is not an argument of the "
                f"transform (torchvision's first argument); give it to the dataset or op as "
                f"shape=, e.g. GulpDataset(..., warp=RandomResizedCrop(), shape=(112, 112)) "
                f"(scale= is the crop's area fraction, e.g. scale=(0.08, 1.0))")
        if kwargs:
            raise TypeError(f"RandomResizedCrop: unexpected argument(s) {sorted(kwargs)}; it "
                            f"takes scale=, ratio= and flip_h=")
        super().__init__(scale=scale, ratio=ratio, flip_h=flip_h, resize=True, random_crop=True)


class CenterResizedCrop(SimilarityTransform):
    """The ImageNet evaluation crop: the central `crop_fraction` (per side, default 224/256) of the
    input, resized to the output keeping the aspect ratio. Deterministic."""

    def __init__(self, crop_fraction: float = 224.0 / 256.0):
        if isinstance(crop_fraction, (bool, str, bytes)) or not isinstance(
                crop_fraction, (int, float, np.number)):
            raise TypeError(f"CenterResizedCrop: crop_fraction is the central fraction of each "
                            f"side, a number in (0, 1], got {crop_fraction!r}; the output size "
                            f"is the dataset's shape=")
        k = float(crop_fraction)
        if not 0.0 < k <= 1.0:
            raise ValueError(f"CenterResizedCrop: crop_fraction is the central fraction of each "
                             f"side, in (0, 1] (e.g. 224 / 256), got {crop_fraction!r}; the "
                             f"output size is the dataset's shape=")
        super().__init__(scale=(k * k, k * k), resize=True, keep_ratio=True)


class ConstantWarpTransform:
    """Always the same matrix (default: the identity)."""

    def __init__(self, matrix=None):
        # Kept as numpy too: the fused kernels' attr is read where no tensor can be evaluated
        # (inside a Dataset.map graph).
        self._values = np.asarray(np.eye(3) if matrix is None else matrix, np.float32)
        self.matrix = tf.constant(self._values)
        if self.matrix.shape != (3, 3):
            raise ValueError(f"matrix must be 3x3, got shape {self.matrix.shape}")

    def __call__(self, in_hw=None, out_hw=None, key=None) -> tf.Tensor:
        return self.matrix

    def _kernel_params(self) -> List[float]:
        return [2.0, *(float(v) for v in self._values.reshape(-1))]


class _ConstantVector:
    """A scalar (the same for every channel) or one value per channel."""

    def __init__(self, value):
        self._values = np.asarray(value, np.float32)
        value = tf.constant(self._values)
        if value.shape.rank > 1:
            raise ValueError(f"{type(self).__name__} takes a number or one value per channel, "
                             f"got shape {value.shape}")
        # A scalar stays a scalar: similarity_warp broadcasts it to every channel.
        self.value = value

    def __call__(self, key=None) -> tf.Tensor:
        return self.value

    def _kernel_params(self) -> List[float]:
        return [float(v) for v in self._values.reshape(-1)]


class ConstantBiasTransform(_ConstantVector):
    """Subtracted from every channel after the warp (default: ImageNet's RGB mean, 0-255 scale)."""

    def __init__(self, bias=IMAGENET_MEAN):
        super().__init__(bias)


class ConstantNormTransform(_ConstantVector):
    """Multiplies every channel after the bias (default: 1 / ImageNet's RGB std, 0-255 scale)."""

    def __init__(self, norm=IMAGENET_NORM):
        super().__init__(norm)


def kernel_transform(warp) -> List[float]:
    """The fused kernels' encoding of `warp`: ``None`` (the whole input resized to the output), a
    :class:`SimilarityTransform` (``RandomResizedCrop``, ``CenterResizedCrop``, ...) or a
    :class:`ConstantWarpTransform`. Other callables run only in a map (``similarity_warp``)."""
    if warp is None:
        return []
    _check_transform_instance(warp, "warp")
    params = getattr(warp, "_kernel_params", None)
    if params is None:
        raise TypeError(f"warp must be None or a tf_gulp.transforms transform (SimilarityTransform, "
                        f"RandomResizedCrop, CenterResizedCrop, ConstantWarpTransform) to be fused "
                        f"into decoding; got {warp!r}")
    return params()


def kernel_warp_attrs(shape, warp, dtype: str, bias, norm, what: str = "", color=None) -> dict:
    """The attrs of the fused output stage (``output_type``, ``warp``, ``output_height``,
    ``output_width``, ``bias``, ``norm``, and ``color`` when given: one table for the three ops
    that have it, ``tf_gulp/ops/image/fused_warp_args.h``), its output options checked by
    :func:`tf_gulp._args.warp_output` (messages prefixed by ``what``)."""
    height, width = A.warp_output(shape, dtype, bias, norm, what)
    attrs = dict(output_type=tf.float32 if dtype == "float32" else tf.uint8,
                 warp=kernel_transform(warp), output_height=height, output_width=width,
                 bias=kernel_vector(bias, "bias"), norm=kernel_vector(norm, "norm"))
    color_params = kernel_color(color, what)
    if color_params:  # left out when empty: the attr's default, and graphs stay as they were
        attrs["color"] = color_params
    return attrs


def kernel_vector(value, name: str) -> List[float]:
    """Bias or norm for the fused kernels: None, a number, one value per channel, or a
    ConstantBiasTransform / ConstantNormTransform."""
    if value is None:
        return []
    _check_transform_instance(value, name)
    if isinstance(value, _ConstantVector):
        return value._kernel_params()
    if callable(value):
        raise TypeError(f"{name} must be a number, one number per channel or a Constant"
                        f"{name.capitalize()}Transform to be fused into decoding; got {value!r}")
    if isinstance(value, (tf.Tensor, tf.Variable)):
        raise TypeError(f"{name} must be Python numbers (it becomes an attr of the op), got a "
                        f"tensor")
    return [float(v) for v in np.asarray(value, np.float32).reshape(-1)]


# Colour transforms: fused only (the kernels draw and apply them after the warp, before bias and
# norm; cc/warp/color_transform.h holds the pixel math and the draws).

_COLOR_JITTER = 1.0
_RANDOM_GRAYSCALE = 2.0


def _probability(p, owner: str) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.number)):
        raise TypeError(f"{owner}: p is a probability, a number in [0, 1], got {p!r}")
    if not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"{owner}: p is a probability, in [0, 1], got {p!r}")
    return float(p)


def _factor_range(value, name: str, center: float, bound: Tuple[float, float]) -> Tuple[float,
                                                                                      float]:
    """torchvision's ColorJitter ranges: a number x means [center - x, center + x] (clipped to
    the lower bound), a pair is taken as is; both within `bound`."""
    owner = "ColorJitter"
    if isinstance(value, bool) or value is None:
        raise TypeError(f"{owner}: {name} must be a number or a (low, high) pair, got {value!r}")
    if isinstance(value, (int, float, np.number)):
        if value < 0:
            raise ValueError(f"{owner}: {name}={value!r}: a single value is the jitter's half "
                             f"width and must be >= 0 (e.g. {name}=0.4)")
        lo, hi = center - float(value), center + float(value)
        if center == 1.0:
            lo = max(lo, 0.0)
    else:
        lo, hi = _pair(value, name, owner=owner)
    if not bound[0] <= lo <= hi <= bound[1]:
        raise ValueError(f"{owner}: {name} range ({lo}, {hi}) must lie within "
                         f"[{bound[0]}, {bound[1]}]")
    return lo, hi


class ColorJitter:
    """torchvision's ``ColorJitter``, fused into the output stage of the decode + warp kernels.

    With probability ``p`` (default 1) an element gets the four adjustments below in a random
    order, each with a factor drawn uniformly from its range; a clip's frames all get the same
    order and factors (one draw per element). Definitions (torchvision's ``adjust_*`` on float
    pictures, here on levels 0-255, clamped to [0, 255] after each step; ``gray = 0.2989 R +
    0.587 G + 0.114 B``):

    - brightness ``f``: ``v * f``;
    - contrast ``f``: ``v * f + (1 - f) * mean(gray)`` (the mean over the picture: each frame's own);
    - saturation ``f``: ``v * f + (1 - f) * gray``;
    - hue ``f``: the hue (HSV, in turns) shifted by ``f``, modulo 1.

    Args:
      brightness, contrast, saturation: x >= 0 for the range ``[max(0, 1 - x), 1 + x]``, or a
        ``(low, high)`` pair of factors >= 0; 0 leaves the adjustment out.
      hue: x in [0, 0.5] for ``[-x, x]``, or a pair within [-0.5, 0.5]; 0 leaves it out.
      p: the probability of applying the jitter to an element.

    One-channel pictures (``colorspace="gray"``) get brightness and contrast only, as torchvision
    does. The draws are a function of (seed, epoch, element), like the warp's:
    :func:`color_draws` returns them.
    """

    def __init__(self, brightness: Pair = 0.0, contrast: Pair = 0.0, saturation: Pair = 0.0,
                 hue: Pair = 0.0, p: float = 1.0):
        self.brightness = _factor_range(brightness, "brightness", 1.0, (0.0, math.inf))
        self.contrast = _factor_range(contrast, "contrast", 1.0, (0.0, math.inf))
        self.saturation = _factor_range(saturation, "saturation", 1.0, (0.0, math.inf))
        self.hue = _factor_range(hue, "hue", 0.0, (-0.5, 0.5))
        self.p = _probability(p, "ColorJitter")

    def _color_params(self) -> List[float]:
        """The flat encoding the kernels read (cc/warp/color_transform.h)."""
        return [_COLOR_JITTER, self.p, *self.brightness, *self.contrast, *self.saturation,
                *self.hue]

    def __repr__(self) -> str:
        return (f"ColorJitter(brightness={self.brightness}, contrast={self.contrast}, "
                f"saturation={self.saturation}, hue={self.hue}, p={self.p})")


class RandomGrayscale:
    """torchvision's ``RandomGrayscale``, fused: with probability ``p`` (default 0.1) every
    channel of the element's pictures becomes ``0.2989 R + 0.587 G + 0.114 B`` (the whole clip
    or none of it)."""

    def __init__(self, p: float = 0.1):
        self.p = _probability(p, "RandomGrayscale")

    def _color_params(self) -> List[float]:
        return [_RANDOM_GRAYSCALE, self.p]

    def __repr__(self) -> str:
        return f"RandomGrayscale(p={self.p})"


_MAX_COLOR_TRANSFORMS = 8  # cc/warp/color_transform.h's kMaxColorTransforms


def kernel_color(color, what: str = "") -> List[float]:
    """The fused kernels' encoding of ``color``: None, a :class:`ColorJitter` or
    :class:`RandomGrayscale`, or a list of them (applied in order)."""
    if color is None:
        return []
    items = list(color) if isinstance(color, (list, tuple)) else [color]
    if len(items) > _MAX_COLOR_TRANSFORMS:
        raise ValueError(f"{what}color takes at most {_MAX_COLOR_TRANSFORMS} transforms, "
                         f"got {len(items)}")
    params: List[float] = []
    for item in items:
        _check_transform_instance(item, "color", what)
        encode = getattr(item, "_color_params", None)
        if encode is None:
            raise TypeError(f"{what}color must be None, a tf_gulp.transforms.ColorJitter or "
                            f"RandomGrayscale, or a list of them; got {item!r}")
        params.extend(encode())
    return params


def color_draws(color, seed: int, epoch: int, element: int) -> List[Tuple[str, float]]:
    """The colour steps the fused kernels apply to ``element`` of ``epoch`` for ``seed``, in
    order: ``[(name, factor)]`` with name ``"brightness"``, ``"contrast"``, ``"saturation"``,
    ``"hue"`` or ``"grayscale"`` (factor 1). Steps left out (p not drawn, an option at 0) are
    absent. The same function of (seed, epoch, element) as the kernels'."""
    from tf_gulp import _core  # pylint: disable=import-outside-toplevel

    return [(name, float(f)) for name, f in
            _core.color_draws(kernel_color(color), int(seed), int(epoch), int(element))]
