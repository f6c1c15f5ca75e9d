"""The augmentation list every picture reader takes: ``augment=[...]`` in torchvision.transforms.v2's
vocabulary.

``GulpDataset``, ``FFRecordDataset.decode_jpeg_warped``, ``tf_gulp.ops.decode_jpeg_warped`` (TFRecord
or any JPEG bytes), ``BenzinaDataset``, ``tf_gulp.ops.decode_hevc_warped`` and the GPU layers take
the same list, with torchvision's names, argument order and meaning::

    augment = [RandomResizedCrop(112), RandomHorizontalFlip(), ColorJitter(0.4, 0.4, 0.4),
               ToDtype(tf.float32, scale=True), Normalize(IMAGENET_MEAN, IMAGENET_STD)]

The list is compiled once (:func:`compile_augment`) into the attrs of the kernels, which fuse it
into decoding: the crop, resize and flips become one matrix per element that the decoder samples
through (decoding only the pixels it needs), the colour steps run on the warped picture and the
dtype and normalisation on the way out. Every random draw (crop, flip, colour order and factors) is
made in C++ from ``(seed, epoch, element)`` (cc/warp/similarity_transform.h,
cc/warp/color_transform.h) on every path, CPU or GPU, fused or not: Python draws nothing, so moving
a step to the GPU does not change the training data.

What a list can say (anything else is refused, naming the transform and why):

1. the geometry, which fixes the output size: ``RandomResizedCrop(size)``, ``Resize((h, w))``,
   ``Resize(s)`` or ``Resize(...)`` followed by ``CenterCrop(size)``, or ``CenterCrop(size)``
   alone; ``RandomHorizontalFlip`` / ``RandomVerticalFlip`` anywhere;
2. colour: ``ColorJitter``, ``RandomGrayscale``, in order, after the crop and resize (they are
   applied to the warped picture; a contrast mean over the uncropped picture would differ);
3. ``ToDtype(tf.float32, scale=...)`` and then ``Normalize(mean, std)``, last.

Differences from torchvision, all deliberate: resizing is bilinear and antialiased only by the
JPEG decoder's DCT scaling (1/2, 1/4, 1/8), not by torchvision's antialias filter; a clip's frames
share one draw (as mmaction2's pipelines do); ``ColorJitter`` takes an extra ``p`` (default 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from tf_gulp import _args as A

__all__ = [
    "Augment",
    "CenterCrop",
    "ColorJitter",
    "IMAGENET_MEAN",
    "IMAGENET_STD",
    "Normalize",
    "RandomGrayscale",
    "RandomHorizontalFlip",
    "RandomResizedCrop",
    "RandomVerticalFlip",
    "Resize",
    "ToDtype",
    "color_draws",
    "compile_augment",
    "compile_color",
]

# torchvision's ImageNet statistics, on its [0, 1] scale: Normalize(IMAGENET_MEAN, IMAGENET_STD)
# after ToDtype(tf.float32, scale=True).
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

Size = Union[int, Sequence[int]]
Pair = Union[float, Tuple[float, float], Sequence[float]]


def _size(size: Any, owner: str, *, single: str = "") -> Tuple[int, int]:
    """torchvision's size argument: an int s is (s, s) (or, with ``single``, kept as (s, 0)), a
    sequence of one int likewise, a pair is (height, width)."""
    if A.is_integer(size):
        s = A.integer(size, "size", minimum=1, what=f"{owner}: ")
        return (s, 0) if single else (s, s)
    if isinstance(size, (str, bytes)) or not hasattr(size, "__len__") or len(size) not in (1, 2):
        raise A.WrongTypeError(f"{owner}: size must be an int or (height, width), got {size!r}")
    values = [A.integer(v, f"size[{i}]", minimum=1, what=f"{owner}: ") for i, v in enumerate(size)]
    if len(values) == 1:
        return (values[0], 0) if single else (values[0], values[0])
    return values[0], values[1]


def _probability(p: Any, owner: str) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.number)):
        raise A.WrongTypeError(f"{owner}: p is a probability, a number in [0, 1], got {p!r}")
    if not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"{owner}: p is a probability, in [0, 1], got {p!r}")
    return float(p)


def _pair(value: Any, name: str, owner: str) -> Tuple[float, float]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise A.WrongTypeError(f"{owner}: {name} must be a (low, high) pair, got {value!r}")
    lo, hi = (float(v) for v in value)
    if lo > hi:
        raise ValueError(f"{owner}: {name} must be (low, high) with low <= high, got {value!r}")
    return lo, hi


def _bilinear(interpolation: Any, antialias: Optional[bool], owner: str) -> Optional[bool]:
    """torchvision's default interpolation is the only one the kernels have; ``antialias`` is
    kept as given (the DCT scaling is the kernels' antialiasing, docs/augment.md)."""
    name = getattr(interpolation, "value", interpolation)
    if str(name).lower() != "bilinear":
        raise ValueError(f"{owner}: interpolation={interpolation!r}: the fused kernels resize "
                         f"bilinearly only; leave interpolation at its default")
    return antialias


class _Transform:
    """A transform of the list, shown (in refusals) as its name and the arguments it keeps."""

    _shown: Tuple[str, ...] = ()

    def __repr__(self) -> str:
        args = ", ".join(f"{name}={getattr(self, name)}" for name in self._shown)
        return f"{type(self).__name__}({args})"


class RandomResizedCrop(_Transform):
    """torchvision's ``RandomResizedCrop(size, scale, ratio)``: a crop of a random area fraction
    (uniform in ``scale``) and aspect ratio (log-uniform in ``ratio``), 10 tries, else the centred
    crop clamped to ``ratio``; resized to ``size`` (an int s for (s, s), or (height, width)).
    Crops are whole pixels, drawn as torchvision draws them."""

    _shown = ("size", "scale", "ratio")

    def __init__(self, size: Size, scale: Pair = (0.08, 1.0),
                 ratio: Pair = (3.0 / 4.0, 4.0 / 3.0), interpolation: Any = "bilinear",
                 antialias: Optional[bool] = True) -> None:
        owner = "RandomResizedCrop"
        self.size = _size(size, owner)
        self.scale = _pair(scale, "scale", owner)
        self.ratio = _pair(ratio, "ratio", owner)
        if self.scale[0] < 0 or self.ratio[0] <= 0:
            raise ValueError(f"{owner}: scale must be >= 0 and ratio > 0, got scale="
                             f"{self.scale}, ratio={self.ratio}")
        self.antialias = _bilinear(interpolation, antialias, owner)


class Resize(_Transform):
    """torchvision's ``Resize(size)``: an int s resizes the shorter side to s (the longer one in
    proportion, truncated), (height, width) resizes to that. Alone it must fix the output's size:
    ``Resize((h, w))``, or ``Resize(s)`` followed by ``CenterCrop``."""

    def __init__(self, size: Size, interpolation: Any = "bilinear", max_size: Optional[int] = None,
                 antialias: Optional[bool] = True) -> None:
        owner = "Resize"
        self.size = _size(size, owner, single="shorter side")
        if max_size is not None:
            raise ValueError(f"{owner}: max_size is not supported: the output of a fused decode "
                             f"has one size for every picture; use Resize((h, w)) or CenterCrop")
        self.antialias = _bilinear(interpolation, antialias, owner)

    def __repr__(self) -> str:
        return f"Resize(size={self.size[0] if not self.size[1] else self.size})"


class CenterCrop(_Transform):
    """torchvision's ``CenterCrop(size)``: the centre ``size`` (int or (height, width)), padded
    with zeros where the picture is smaller; after ``Resize``, of the resized picture."""

    _shown = ("size",)

    def __init__(self, size: Size) -> None:
        self.size = _size(size, "CenterCrop")


class RandomHorizontalFlip(_Transform):
    """torchvision's ``RandomHorizontalFlip(p=0.5)``: mirrors the output left-right."""

    _shown = ("p",)

    def __init__(self, p: float = 0.5) -> None:
        self.p = _probability(p, "RandomHorizontalFlip")


class RandomVerticalFlip(_Transform):
    """torchvision's ``RandomVerticalFlip(p=0.5)``: mirrors the output top-bottom."""

    _shown = ("p",)

    def __init__(self, p: float = 0.5) -> None:
        self.p = _probability(p, "RandomVerticalFlip")


# The kernels' colour encoding (cc/warp/color_transform.h).
_COLOR_JITTER = 1.0
_RANDOM_GRAYSCALE = 2.0
_MAX_COLOR_TRANSFORMS = 8  # cc/warp/color_transform.h's kMaxColorTransforms


def _factor_range(value: Any, name: str, center: float,
                  bound: Tuple[float, float]) -> Tuple[float, float]:
    """torchvision's ColorJitter ranges: None or 0 leaves it out, a number x means
    [center - x, center + x] (clipped to 0 for the factors), a pair is taken as is."""
    owner = "ColorJitter"
    if value is None:
        return center, center
    if isinstance(value, bool):
        raise A.WrongTypeError(f"{owner}: {name} must be a number or a (low, high) pair, "
                               f"got {value!r}")
    if isinstance(value, (int, float, np.number)):
        if value < 0:
            raise ValueError(f"{owner}: {name}={value!r}: a single value is the jitter's half "
                             f"width and must be >= 0 (e.g. {name}=0.4)")
        lo, hi = center - float(value), center + float(value)
        if center == 1.0:
            lo = max(lo, 0.0)
    else:
        lo, hi = _pair(value, name, owner)
    if not bound[0] <= lo <= hi <= bound[1]:
        raise ValueError(f"{owner}: {name} range ({lo}, {hi}) must lie within "
                         f"[{bound[0]}, {bound[1]}]")
    return lo, hi


class ColorJitter(_Transform):
    """torchvision's ``ColorJitter(brightness, contrast, saturation, hue)``: the four adjustments
    in a random order, each factor uniform in its range (a number x is ``[max(0, 1 - x), 1 + x]``,
    hue ``[-x, x]`` with x <= 0.5; None or 0 leaves it out). Definitions are torchvision's
    ``adjust_*`` on levels 0-255, clamped after each step; contrast blends with each frame's mean
    gray. ``p`` (not torchvision's): the probability of applying it, default 1."""

    _shown = ("brightness", "contrast", "saturation", "hue", "p")

    def __init__(self, brightness: Optional[Pair] = None, contrast: Optional[Pair] = None,
                 saturation: Optional[Pair] = None, hue: Optional[Pair] = None, *,
                 p: float = 1.0) -> None:
        self.brightness = _factor_range(brightness, "brightness", 1.0, (0.0, math.inf))
        self.contrast = _factor_range(contrast, "contrast", 1.0, (0.0, math.inf))
        self.saturation = _factor_range(saturation, "saturation", 1.0, (0.0, math.inf))
        self.hue = _factor_range(hue, "hue", 0.0, (-0.5, 0.5))
        self.p = _probability(p, "ColorJitter")

    def _color_params(self) -> List[float]:
        return [_COLOR_JITTER, self.p, *self.brightness, *self.contrast, *self.saturation,
                *self.hue]


class RandomGrayscale(_Transform):
    """torchvision's ``RandomGrayscale(p=0.1)``: with probability p every channel becomes
    ``0.2989 R + 0.587 G + 0.114 B`` (a clip's frames all or none)."""

    _shown = ("p",)

    def __init__(self, p: float = 0.1) -> None:
        self.p = _probability(p, "RandomGrayscale")

    def _color_params(self) -> List[float]:
        return [_RANDOM_GRAYSCALE, self.p]


def _float_dtype(dtype: Any) -> Optional[bool]:
    """True for float32, False for uint8 (TensorFlow, numpy, torch or a string), None otherwise."""
    name = getattr(dtype, "name", None) or str(dtype)
    name = name.replace("torch.", "").replace("tf.", "")
    return {"float32": True, "float": True, "uint8": False}.get(name)


class ToDtype(_Transform):
    """torchvision's ``ToDtype(dtype, scale=False)``: ``tf.float32`` (or ``"float32"``,
    ``torch.float32``) gives float output, levels 0-255, or 0-1 with ``scale=True``;
    ``tf.uint8`` keeps levels."""

    def __init__(self, dtype: Any, scale: bool = False) -> None:
        self.float = _float_dtype(dtype)
        if self.float is None:
            raise ValueError(f"ToDtype: dtype={dtype!r}: the kernels write float32 or uint8")
        self.scale = A.boolean(scale, "scale", what="ToDtype: ")

    def __repr__(self) -> str:
        return f"ToDtype({'float32' if self.float else 'uint8'}, scale={self.scale})"


class Normalize(_Transform):
    """torchvision's ``Normalize(mean, std)``: ``(v - mean) / std`` per channel, on the scale
    ``ToDtype`` left (0-1 with ``scale=True``, else 0-255); needs a float ``ToDtype`` before it."""

    _shown = ("mean", "std")

    def __init__(self, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> None:
        del inplace  # tensors here are never modified in place
        self.mean = [float(v) for v in np.asarray(mean, np.float64).reshape(-1)]
        self.std = [float(v) for v in np.asarray(std, np.float64).reshape(-1)]
        if len(self.mean) != len(self.std) or not self.mean:
            raise ValueError(f"Normalize: mean and std need one value per channel each, got "
                             f"{len(self.mean)} and {len(self.std)}")
        if any(s == 0 for s in self.std):
            raise ValueError(f"Normalize: std must not be 0, got {self.std}")


_GEOMETRY = (RandomResizedCrop, Resize, CenterCrop)
_FLIPS = (RandomHorizontalFlip, RandomVerticalFlip)
_COLOR = (ColorJitter, RandomGrayscale)
_NAMES = ", ".join(c.__name__ for c in (*_GEOMETRY, *_FLIPS, *_COLOR, ToDtype, Normalize))
# What compile_augment's geometry states are called in its messages.
_GEOMETRY_NAMES = {"rrc": "RandomResizedCrop", "resize": "Resize", "crop": "CenterCrop",
                   "resize+crop": "Resize and CenterCrop"}

# The kernels' geometry encoding (cc/warp/similarity_transform.h, kCropResize).
_CROP_RESIZE = 3.0
_MODE_RANDOM_RESIZED_CROP, _MODE_RESIZE_CENTER_CROP, _MODE_CENTER_CROP = 0.0, 1.0, 2.0


@dataclass(frozen=True)
class Augment:
    """A compiled augment list: what the fused kernels take (:func:`compile_augment`).

    ``warp`` and ``color`` are the kernels' flat encodings; ``bias`` / ``norm`` make the output
    ``(level - bias) * norm`` for float32 (levels 0-255)."""

    height: int
    width: int
    warp: Tuple[float, ...]
    color: Tuple[float, ...] = ()
    dtype: str = "uint8"
    bias: Tuple[float, ...] = ()
    norm: Tuple[float, ...] = ()
    source: Tuple[Any, ...] = field(default=(), compare=False)

    @property
    def shape(self) -> Tuple[int, int]:
        return self.height, self.width

    def attrs(self) -> dict:
        """The fused kernels' attrs (tf_gulp/ops/image/fused_warp_args.h)."""
        import tensorflow as tf  # pylint: disable=import-outside-toplevel

        attrs = dict(output_type=tf.float32 if self.dtype == "float32" else tf.uint8,
                     warp=list(self.warp), output_height=self.height, output_width=self.width,
                     bias=list(self.bias), norm=list(self.norm))
        if self.color:  # left out when empty: the attr's default, and graphs stay as they were
            attrs["color"] = list(self.color)
        return attrs


def compile_color(items: Sequence[Any], what: str = "") -> Tuple[float, ...]:
    """The kernels' encoding of colour transforms (:class:`ColorJitter`, :class:`RandomGrayscale`),
    applied in order; anything else is refused, naming it."""
    if len(items) > _MAX_COLOR_TRANSFORMS:
        raise ValueError(f"{what}at most {_MAX_COLOR_TRANSFORMS} colour transforms, got "
                         f"{len(items)}")
    params: List[float] = []
    for item in items:
        if not isinstance(item, _COLOR):
            raise A.WrongTypeError(f"{what}{item!r} is not a colour transform (ColorJitter, "
                                   f"RandomGrayscale)")
        params.extend(item._color_params())  # pylint: disable=protected-access
    return tuple(params)


def _refuse(what: str, item: Any, why: str) -> ValueError:
    return ValueError(f"{what}augment: {item!r} {why}")


def compile_augment(augment: Any, what: str = "") -> Augment:
    """``augment`` (a list of this module's transforms, one transform, or an :class:`Augment`)
    checked and compiled for the kernels; messages begin with ``what`` and name the transform."""
    if isinstance(augment, Augment):
        return augment
    items = list(augment) if isinstance(augment, (list, tuple)) else [augment]
    if items and all(A.is_integer(item) for item in items):
        # The old shape=(height, width) argument where the list now goes.
        size = augment if isinstance(augment, (list, tuple)) else (augment, augment)
        raise A.WrongTypeError(f"{what}augment: {augment!r} is an output size, not a transform "
                               f"list: write [Resize(({size[0]}, {size[-1]}))] (or "
                               f"[RandomResizedCrop(...)], [CenterCrop(...)])")
    geometry: Optional[str] = None  # "rrc", "resize", "resize+crop", "crop"
    size: Tuple[int, int] = (0, 0)
    resize: Tuple[int, int] = (0, 0)
    scale, ratio = (0.08, 1.0), (3.0 / 4.0, 4.0 / 3.0)
    flips = {RandomHorizontalFlip: 0.0, RandomVerticalFlip: 0.0}
    flipped: set = set()
    colours: List[Any] = []
    level_scale: Optional[float] = None  # None: uint8 output; else float32 times this
    normalize: Optional[Normalize] = None
    for item in items:
        if isinstance(item, type):
            raise A.WrongTypeError(f"{what}augment: {item.__name__} is the class; pass an "
                                   f"instance: {item.__name__}(...)")
        if normalize is not None:
            raise _refuse(what, item, "comes after Normalize: Normalize ends the list (the "
                          "kernels normalise on the way out)")
        if isinstance(item, _GEOMETRY):
            if colours:
                raise _refuse(what, item, "comes after a colour transform: crops and resizes go "
                              "first (colour runs on the warped picture, whose contrast mean "
                              "a crop would change)")
            if isinstance(item, RandomResizedCrop) and geometry is None:
                geometry, size = "rrc", item.size
                scale, ratio = item.scale, item.ratio
            elif isinstance(item, Resize) and geometry is None:
                geometry, resize = "resize", item.size
                size = item.size
            elif isinstance(item, CenterCrop) and geometry in (None, "resize"):
                geometry = "crop" if geometry is None else "resize+crop"
                size = item.size
            else:
                raise _refuse(what, item, f"follows {_GEOMETRY_NAMES[geometry]}: a list holds "
                              f"one RandomResizedCrop, or Resize and/or CenterCrop (Resize "
                              f"first), which the decoder fuses into one sampling grid")
        elif isinstance(item, _FLIPS):
            if type(item) in flipped:
                raise _refuse(what, item, "is given twice")
            flipped.add(type(item))
            flips[type(item)] = item.p
        elif isinstance(item, _COLOR):
            colours.append(item)
        elif isinstance(item, ToDtype):
            if level_scale is not None:
                raise _refuse(what, item, "follows another ToDtype(float32): give one")
            if item.float:
                level_scale = 1.0 / 255.0 if item.scale else 1.0
        elif isinstance(item, Normalize):
            if level_scale is None:
                raise _refuse(what, item, "needs ToDtype(tf.float32, scale=True) before it "
                              "(torchvision normalises float pictures)")
            normalize = item
        else:
            module = type(item).__module__ or ""
            hint = (f"; tf_gulp.transforms.{type(item).__name__} takes the same arguments"
                    if module.startswith("torchvision") else "")
            raise A.WrongTypeError(f"{what}augment: {item!r} is not a transform the kernels can "
                                   f"fuse; augment takes {_NAMES}{hint}")
    if geometry is None or (geometry == "resize" and not resize[1]):
        raise ValueError(f"{what}augment needs the output size: start it with "
                         f"RandomResizedCrop(size), Resize((height, width)), Resize(s) then "
                         f"CenterCrop(size), or CenterCrop(size) (every output of a batch has "
                         f"one size); got {items!r}")
    if geometry == "rrc":
        mode, resize = _MODE_RANDOM_RESIZED_CROP, (0, 0)
    elif geometry == "crop":
        mode = _MODE_CENTER_CROP
    else:
        mode = _MODE_RESIZE_CENTER_CROP
    warp = (_CROP_RESIZE, mode, float(resize[0]), float(resize[1]), *scale, *ratio,
            flips[RandomHorizontalFlip], flips[RandomVerticalFlip])
    return Augment(height=size[0], width=size[1], warp=warp, color=compile_color(colours, what),
                   **_output(level_scale, normalize), source=tuple(items))


def _output(level_scale: Optional[float], normalize: Optional[Normalize]) -> dict:
    """dtype, bias and norm of the output stage: ``(level - bias) * norm`` for float32."""
    if level_scale is None:
        return dict(dtype="uint8", bias=(), norm=())
    if normalize is None:
        return dict(dtype="float32", bias=(), norm=(level_scale,))
    # (v * s - mean) / std == (v - mean / s) * (s / std)
    return dict(dtype="float32", bias=tuple(m / level_scale for m in normalize.mean),
                norm=tuple(level_scale / s for s in normalize.std))


def color_draws(augment: Any, seed: int, epoch: int, element: int) -> List[Tuple[str, float]]:
    """The colour steps the kernels apply to ``element`` of ``epoch`` for ``seed``, in order:
    ``[(name, factor)]``, name ``"brightness"``, ``"contrast"``, ``"saturation"``, ``"hue"`` or
    ``"grayscale"``. Steps left out (p not drawn, a factor of 1) are absent."""
    from tf_gulp import _core  # pylint: disable=import-outside-toplevel

    items = augment if isinstance(augment, (list, tuple)) else [augment]
    if not isinstance(augment, Augment) and all(isinstance(i, _COLOR) for i in items):
        params = list(compile_color(items))  # colour steps alone: no output size needed
    else:
        params = list(compile_augment(augment).color)
    return [(name, float(f)) for name, f in
            _core.color_draws(params, int(seed), int(epoch), int(element))]
