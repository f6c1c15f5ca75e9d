"""Transforms refuse the arguments they would misread (issue 32, point 6; issue 46 item 2).

tf_gulp.transforms speaks torchvision's vocabulary, so ``RandomResizedCrop(112)`` is the output
size; the augment list compiler refuses a list the kernels cannot fuse, naming the transform and
why. Benzina's compatibility classes (tf_gulp.bzna.transforms) keep their checks: a scale outside
(0, 1] (so an output size given where scale goes is refused), a ratio <= 0, a (low, high) pair given
backwards; and everywhere a transform class where an instance belongs is refused with the fix."""

from __future__ import annotations

import pytest
import tensorflow as tf

import tf_gulp
from tf_gulp import transforms as T
from tf_gulp.bzna import DataLoader
from tf_gulp.bzna import transforms as B
from tf_gulp.ops import decode_jpeg_warped


@pytest.mark.parametrize("size, want", [(112, (112, 112)), ((112, 96), (112, 96)),
                                        ([64], (64, 64))])
def test_output_size_is_torchvisions_first_argument(size, want):
    assert T.RandomResizedCrop(size).size == want
    assert T.RandomResizedCrop(size=size).size == want
    assert T.compile_augment([T.RandomResizedCrop(size)]).shape == want
    assert T.CenterCrop(size).size == want


def test_keywords_are_torchvisions():
    t = T.RandomResizedCrop(112, scale=(0.25, 1.0), ratio=(0.5, 2.0))
    assert t.scale == (0.25, 1.0) and t.ratio == (0.5, 2.0)
    with pytest.raises(TypeError, match="flip_h"):  # Benzina's keyword: a flip is a transform
        T.RandomResizedCrop(112, flip_h=0.5)
    with pytest.raises(TypeError, match="size"):
        T.RandomResizedCrop()
    with pytest.raises(ValueError, match=r"RandomResizedCrop: interpolation='nearest': the fused "
                                         r"kernels resize bilinearly only"):
        T.RandomResizedCrop(112, interpolation="nearest")
    with pytest.raises(TypeError, match=r"p is keyword-only|positional"):
        T.ColorJitter(0.4, 0.4, 0.4, 0.1, 0.5)  # pylint: disable=too-many-function-args


@pytest.mark.parametrize("scale", [(0.5, 2.0), (0.0, 1.0), (-0.1, 0.5), 1.5, 112])
def test_benzina_scale_outside_0_1(scale):
    with pytest.raises(ValueError, match=r"RandomResizedCrop: scale is the crop's area as a "
                                         r"fraction of the input's, \(low, high\) within \(0, 1\]"):
        B.RandomResizedCrop(scale=scale)
    with pytest.raises(ValueError, match=r"SimilarityTransform: .* within \(0, 1\]"):
        B.SimilarityTransform(scale=scale)


def test_benzina_output_size_where_scale_goes():
    # The reference's RandomResizedCrop takes no size (the loader's shape is the output size):
    # RandomResizedCrop(112) puts 112 in scale, refused rather than read as a size.
    with pytest.raises(ValueError, match=r"scale .* within \(0, 1\]; got \(112\.0, 112\.0\)"):
        B.RandomResizedCrop(112)


@pytest.mark.parametrize("ratio", [(0.0, 1.0), (-1.0, 2.0)])
def test_ratio_not_positive(ratio):
    with pytest.raises(ValueError, match=r"ratio is the crop's width / height, \(low, high\) "
                                         r"with low > 0"):
        B.RandomResizedCrop(ratio=ratio)
    with pytest.raises(ValueError, match=r"RandomResizedCrop: scale must be >= 0 and ratio > 0"):
        T.RandomResizedCrop(112, ratio=ratio)


def test_negative_scale_in_torchvisions_crop():
    with pytest.raises(ValueError, match=r"RandomResizedCrop: scale must be >= 0 and ratio > 0"):
        T.RandomResizedCrop(112, scale=(-0.1, 1.0))


@pytest.mark.parametrize("kwargs,name", [({"scale": (1.0, 0.5)}, "scale"),
                                         ({"ratio": (2.0, 0.5)}, "ratio"),
                                         ({"degrees": (10.0, -10.0)}, "degrees")])
def test_low_above_high_says_how_to_write_it(kwargs, name):
    with pytest.raises(ValueError, match=rf"{name} must be \(low, high\).*write it as"):
        B.SimilarityTransform(**kwargs)
    if name != "degrees":
        with pytest.raises(ValueError, match=rf"RandomResizedCrop: {name} must be \(low, high\) "
                                             r"with low <= high"):
            T.RandomResizedCrop(112, **kwargs)


def test_center_crop_fraction():
    with pytest.raises(ValueError, match=r"crop_fraction is the central fraction of each side, "
                                         r"in \(0, 1\]"):
        B.CenterResizedCrop(1.5)
    with pytest.raises(TypeError, match=r"CenterResizedCrop: crop_fraction must be a number, got "
                                        r"\(112, 112\)"):
        B.CenterResizedCrop((112, 112))


def test_a_class_instead_of_an_instance(tmp_path):
    with pytest.raises(TypeError, match=r"decode_jpeg_warped: augment: RandomResizedCrop is the "
                                        r"class; pass an instance: RandomResizedCrop\(\.\.\.\)"):
        decode_jpeg_warped([b""], [T.RandomResizedCrop])
    with pytest.raises(TypeError, match=r"GulpDataset: augment: CenterCrop is the class; pass an "
                                        r"instance: CenterCrop\(\.\.\.\)"):
        tf_gulp.GulpDataset(str(tmp_path), augment=[T.Resize(8), T.CenterCrop])
    with pytest.raises(TypeError, match=r"warp_transform=RandomResizedCrop is the class; pass an "
                                        r"instance: warp_transform=RandomResizedCrop\(\)"):
        DataLoader(str(tmp_path / "x.bzna"), warp_transform=B.RandomResizedCrop)
    with pytest.raises(TypeError, match=r"bias_transform=ConstantBiasTransform\(\)"):
        B.loader_augment((8, 8), bias_transform=B.ConstantBiasTransform)


# The list compiler's refusals: each names the transform and says why.
FLOAT = T.ToDtype(tf.float32, scale=True)
NORMALIZE = T.Normalize(T.IMAGENET_MEAN, T.IMAGENET_STD)
REFUSALS = {
    "no output size": (
        [T.RandomHorizontalFlip(), T.ColorJitter(0.4)], ValueError,
        r"augment needs the output size: start it with RandomResizedCrop\(size\), "
        r"Resize\(\(height, width\)\), Resize\(s\) then CenterCrop\(size\), or CenterCrop\(size\) "
        r"\(every output of a batch has one size\); got \[RandomHorizontalFlip"),
    "empty": ([], ValueError, r"augment needs the output size: .*got \[\]"),
    "Resize(int) alone": (
        [T.Resize(112)], ValueError,
        r"augment needs the output size: .*Resize\(s\) then CenterCrop\(size\).*"
        r"got \[Resize\(size=112\)\]"),
    "geometry after colour": (
        [T.ColorJitter(0.4), T.RandomResizedCrop(112)], ValueError,
        r"augment: RandomResizedCrop\(size=\(112, 112\).*\) comes after a colour transform: crops "
        r"and resizes go first"),
    "Resize after colour": (
        [T.CenterCrop(112), T.RandomGrayscale(), T.Resize((64, 64))], ValueError,
        r"augment: Resize\(size=\(64, 64\)\) comes after a colour transform"),
    "Normalize without ToDtype": (
        [T.Resize((8, 8)), NORMALIZE], ValueError,
        r"augment: Normalize\(mean=\[0\.485, 0\.456, 0\.406\], .*\) needs "
        r"ToDtype\(tf\.float32, scale=True\) before it"),
    "Normalize after ToDtype(uint8)": (
        [T.Resize((8, 8)), T.ToDtype(tf.uint8), NORMALIZE], ValueError,
        r"augment: Normalize\(.*\) needs ToDtype\(tf\.float32, scale=True\) before it"),
    "a flip after Normalize": (
        [T.Resize((8, 8)), FLOAT, NORMALIZE, T.RandomHorizontalFlip()], ValueError,
        r"augment: RandomHorizontalFlip\(p=0\.5\) comes after Normalize: Normalize ends the list"),
    "ToDtype after Normalize": (
        [T.Resize((8, 8)), FLOAT, NORMALIZE, T.ToDtype(tf.float32)], ValueError,
        r"augment: ToDtype\(float32, scale=False\) comes after Normalize"),
    "Normalize twice": (
        [T.Resize((8, 8)), FLOAT, NORMALIZE, NORMALIZE], ValueError,
        r"augment: Normalize\(.*\) comes after Normalize"),
    "two RandomResizedCrops": (
        [T.RandomResizedCrop(8), T.RandomResizedCrop(8)], ValueError,
        r"augment: RandomResizedCrop\(size=\(8, 8\).*\) follows RandomResizedCrop: a list holds "
        r"one RandomResizedCrop, or Resize and/or CenterCrop \(Resize first\)"),
    "Resize after CenterCrop": (
        [T.CenterCrop(8), T.Resize((8, 8))], ValueError,
        r"augment: Resize\(size=\(8, 8\)\) follows CenterCrop: a list holds one "
        r"RandomResizedCrop, or Resize and/or CenterCrop \(Resize first\)"),
    "horizontal flip twice": (
        [T.Resize((8, 8)), T.RandomHorizontalFlip(), T.RandomHorizontalFlip(0.2)], ValueError,
        r"augment: RandomHorizontalFlip\(p=0\.2\) is given twice"),
    "vertical flip twice": (
        [T.RandomVerticalFlip(), T.Resize((8, 8)), T.RandomVerticalFlip()], ValueError,
        r"augment: RandomVerticalFlip\(p=0\.5\) is given twice"),
    "a class": (
        [T.Resize((8, 8)), T.RandomHorizontalFlip], TypeError,
        r"augment: RandomHorizontalFlip is the class; pass an instance: "
        r"RandomHorizontalFlip\(\.\.\.\)"),
    "a lambda": (
        [T.Resize((8, 8)), lambda picture: picture], TypeError,
        r"augment: <function .*<lambda>.*> is not a transform the kernels can fuse; augment "
        r"takes RandomResizedCrop, Resize, CenterCrop, RandomHorizontalFlip, RandomVerticalFlip, "
        r"ColorJitter, RandomGrayscale, ToDtype, Normalize$"),
    "Benzina's transform in the list": (
        [B.RandomResizedCrop()], TypeError,
        r"augment: <tf_gulp\.bzna\.transforms\.RandomResizedCrop object .*> is not a transform "
        r"the kernels can fuse"),
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_the_list_compiler_refuses_naming_the_transform_and_why(name, tmp_path):
    augment, error, message = REFUSALS[name]
    with pytest.raises(error, match=message):
        T.compile_augment(augment)
    # Every reader refuses it alike, its name first.
    with pytest.raises(error, match="decode_jpeg_warped: " + message):
        decode_jpeg_warped([b""], augment)
    with pytest.raises(error, match="GulpDataset: " + message):
        tf_gulp.GulpDataset(str(tmp_path), augment=augment)


def test_what_the_list_compiler_accepts():
    """The shapes the refusals leave: one geometry (flips anywhere), colour after it, ToDtype
    then Normalize last."""
    a = T.compile_augment([T.RandomHorizontalFlip(), T.Resize(64), T.CenterCrop((48, 56)),
                           T.RandomVerticalFlip(0.25), T.ColorJitter(0.4), T.RandomGrayscale(),
                           FLOAT, NORMALIZE])
    assert a.shape == (48, 56) and a.dtype == "float32" and len(a.bias) == len(a.norm) == 3
    assert T.compile_augment([T.CenterCrop(8)]).shape == (8, 8)
    assert T.compile_augment([T.Resize((8, 6)), T.ToDtype(tf.uint8)]).dtype == "uint8"
