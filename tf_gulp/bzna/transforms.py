"""Benzina's warp, bias and norm transforms: the compatibility surface of
``tf_gulp.bzna.DataLoader(warp_transform=, bias_transform=, norm_transform=)``.

New code writes ``augment=[...]`` (:mod:`tf_gulp.transforms`, torchvision's vocabulary). These
classes keep the reference loader's arguments and meaning, and :func:`loader_augment` compiles them
into the same :class:`tf_gulp.transforms.Augment` the list compiles to: one set of kernels, one
random stream (C++, keyed by ``(seed, epoch, element)``). They are descriptions, not callables:
Python draws nothing.

Where this differs from the reference (deliberately): the reference draws from one sequential
random stream (results depend on loading order); after one failed aspect-ratio search it turns
random cropping off for good (here a failed search gives a centre crop for that element only); it
mixes up (W, H) and (H, W) for non-square outputs (here every size is (H, W)).
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from tf_gulp import _args as A
from tf_gulp.transforms import Augment, compile_color

__all__ = ["CenterResizedCrop", "ConstantBiasTransform", "ConstantNormTransform",
           "ConstantWarpTransform", "IMAGENET_MEAN", "IMAGENET_NORM", "RandomResizedCrop",
           "SimilarityTransform", "loader_augment"]

# ImageNet's RGB mean * 255 and 1 / (std * 255): the reference loader's default bias and norm.
IMAGENET_MEAN = (123.675, 116.28, 103.53)
IMAGENET_NORM = (1.0 / 58.395, 1.0 / 57.12, 1.0 / 57.375)

Pair = Any


def _pair(value: Pair, name: str, owner: str, symmetric: bool = False) -> Tuple[float, float]:
    """A number v means (-v, v) when ``symmetric``, else (v, v); a pair is taken as is."""
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        return (-float(value), float(value)) if symmetric else (float(value), float(value))
    if isinstance(value, (str, bytes, bool)) or not hasattr(value, "__len__") or len(value) != 2:
        raise A.WrongTypeError(f"{owner}: {name} must be a number or a (low, high) pair, "
                               f"got {value!r}")
    lo, hi = (float(v) for v in value)
    if lo > hi:
        raise ValueError(f"{owner}: {name} must be (low, high) with low <= high, got {value!r}: "
                         f"write it as ({hi!r}, {lo!r})")
    return lo, hi


class SimilarityTransform:
    """Benzina's random crop / scale / aspect ratio / rotation / translation / flips.

    Args:
      scale: (s0, s1): the crop's area fraction, log-uniform; a number s means (s, s).
      ratio: None (the crop keeps the input's aspect ratio) or (r0, r1), log-uniform; 10 tries,
        else a centre crop clamped to the ratio range.
      degrees: rotation range (d0, d1), or d for (-d, d).
      translate: (ty, tx) fractions of the output size; U(-t, t) times it.
      flip_h, flip_v: probabilities of mirroring left-right / top-bottom.
      resize: scale the crop to the output (else pixels stay 1:1).
      keep_ratio: one scale factor for both axes (the smaller).
      random_crop: place the crop uniformly inside the input (else centred).
    """

    def __init__(self, scale: Pair = (1.0, 1.0), ratio: Optional[Pair] = None,
                 degrees: Pair = 0.0, translate: Pair = (0.0, 0.0), flip_h: float = 0.0,
                 flip_v: float = 0.0, resize: bool = False, keep_ratio: bool = False,
                 random_crop: bool = False) -> None:
        owner = type(self).__name__
        self.scale = _pair(scale, "scale", owner)
        if not 0.0 < self.scale[0] <= self.scale[1] <= 1.0:
            raise ValueError(f"{owner}: scale is the crop's area as a fraction of the input's, "
                             f"(low, high) within (0, 1]; got {self.scale!r}")
        self.ratio = None if ratio is None else _pair(ratio, "ratio", owner)
        if self.ratio is not None and self.ratio[0] <= 0:
            raise ValueError(f"{owner}: ratio is the crop's width / height, (low, high) with "
                             f"low > 0; got {self.ratio!r}")
        self.degrees = _pair(degrees, "degrees", owner, symmetric=True)
        self.translate = tuple(abs(t) for t in _pair(translate, "translate", owner))
        for name, p in (("flip_h", flip_h), ("flip_v", flip_v)):
            if not 0.0 <= float(p) <= 1.0:
                raise ValueError(f"{owner}: {name} is a probability, got {p!r}")
        self.flip_h, self.flip_v = float(flip_h), float(flip_v)
        self.resize, self.keep_ratio = bool(resize), bool(keep_ratio)
        self.random_crop = bool(random_crop)

    def _kernel_params(self) -> List[float]:
        """The kernels' encoding (cc/warp/similarity_transform.h, kSimilarity)."""
        ratio = self.ratio if self.ratio is not None else (0.0, 0.0)
        return [1.0, *self.scale, *ratio, *self.degrees, *self.translate, self.flip_h,
                self.flip_v, float(self.resize), float(self.keep_ratio),
                float(self.random_crop)]


class RandomResizedCrop(SimilarityTransform):
    """Benzina's training crop: area (0.08, 1) log-uniform, aspect ratio (3/4, 4/3), random place,
    resized to the loader's shape, flipped with probability ``flip_h``. (torchvision's, with an
    output size, is :class:`tf_gulp.transforms.RandomResizedCrop`.)"""

    def __init__(self, scale: Pair = (0.08, 1.0), ratio: Pair = (3.0 / 4.0, 4.0 / 3.0),
                 flip_h: float = 0.5) -> None:
        super().__init__(scale=scale, ratio=ratio, flip_h=flip_h, resize=True, random_crop=True)


class CenterResizedCrop(SimilarityTransform):
    """Benzina's evaluation crop: the central ``crop_fraction`` of each side (default 224/256),
    resized to the loader's shape keeping the aspect ratio."""

    def __init__(self, crop_fraction: float = 224.0 / 256.0) -> None:
        k = A.real(crop_fraction, "crop_fraction", what="CenterResizedCrop: ")
        if not 0.0 < k <= 1.0:
            raise ValueError(f"CenterResizedCrop: crop_fraction is the central fraction of each "
                             f"side, in (0, 1] (e.g. 224 / 256), got {crop_fraction!r}")
        super().__init__(scale=(k * k, k * k), resize=True, keep_ratio=True)


class ConstantWarpTransform:
    """Always the same matrix mapping output pixels to input pixels (default: the identity)."""

    def __init__(self, matrix=None) -> None:
        self.matrix = np.asarray(np.eye(3) if matrix is None else matrix, np.float64)
        if self.matrix.shape != (3, 3):
            raise ValueError(f"ConstantWarpTransform: matrix must be 3x3, got shape "
                             f"{self.matrix.shape}")

    def _kernel_params(self) -> List[float]:
        return [2.0, *(float(v) for v in self.matrix.reshape(-1))]


class _ConstantVector:
    """A number (every channel) or one value per channel."""

    def __init__(self, value) -> None:
        values = np.asarray(value, np.float64)
        if values.ndim > 1:
            raise ValueError(f"{type(self).__name__} takes a number or one value per channel, "
                             f"got shape {values.shape}")
        self.values = tuple(float(v) for v in values.reshape(-1))


class ConstantBiasTransform(_ConstantVector):
    """Subtracted from the 0-255 levels after the warp (default: ImageNet's RGB mean)."""

    def __init__(self, bias=IMAGENET_MEAN) -> None:
        super().__init__(bias)


class ConstantNormTransform(_ConstantVector):
    """Multiplies after the bias (default: 1 / ImageNet's RGB std, 0-255 scale)."""

    def __init__(self, norm=IMAGENET_NORM) -> None:
        super().__init__(norm)


def _checked(value: Any, name: str, kinds: tuple, what: str) -> Any:
    if isinstance(value, type):
        raise A.WrongTypeError(f"{what}{name}={value.__name__} is the class; pass an instance: "
                               f"{name}={value.__name__}()")
    if value is not None and not isinstance(value, kinds):
        names = " / ".join(k.__name__ for k in kinds)
        raise A.WrongTypeError(f"{what}{name} must be a tf_gulp.bzna.transforms {names} (the "
                               f"kernels draw every transform in C++), got {value!r}")
    return value


def loader_augment(shape: Sequence[int] = (224, 224), warp_transform=None, bias_transform=None,
                   norm_transform=None, color_transform=None, what: str = "") -> Augment:
    """The :class:`~tf_gulp.transforms.Augment` of a reference-style loader: ``shape`` (height,
    width), the warp (default: the whole picture resized), float32 ``(v - bias) * norm`` (default
    ImageNet's), and colour transforms (``tf_gulp.transforms.ColorJitter`` / ``RandomGrayscale``,
    or a list) after the warp. Pass it as ``augment=`` to ``WarpOnDevice`` or to any reader."""
    height, width = A.output_shape(shape, what)
    warp = _checked(warp_transform, "warp_transform",
                    (SimilarityTransform, ConstantWarpTransform), what)
    bias = _checked(bias_transform, "bias_transform", (ConstantBiasTransform,), what)
    norm = _checked(norm_transform, "norm_transform", (ConstantNormTransform,), what)
    bias = bias or ConstantBiasTransform()
    norm = norm or ConstantNormTransform()
    for vector, name in ((bias, "bias_transform"), (norm, "norm_transform")):
        if len(vector.values) not in (1, 3):
            raise ValueError(f"{what}{name} takes a number or 3 values (RGB), got "
                             f"{len(vector.values)}")
    colours = [] if color_transform is None else (
        list(color_transform) if isinstance(color_transform, (list, tuple)) else [color_transform])
    color = compile_color(colours, what)
    return Augment(height=height, width=width,
                   warp=tuple(warp._kernel_params()) if warp is not None else (),  # pylint: disable=protected-access
                   color=color, dtype="float32", bias=bias.values, norm=norm.values,
                   source=(warp, bias, norm, *colours))
