"""Transforms refuse the arguments they would misread (issue 32, point 6): torchvision's positional
output size, a scale outside (0, 1], a ratio <= 0, a (low, high) pair given backwards, and a
transform class where an instance belongs, each with one message naming the fix."""

from __future__ import annotations

import pytest

import tf_gulp
from tf_gulp import transforms as T
from tf_gulp.bzna import DataLoader
from tf_gulp.ops import decode_jpeg_warped


@pytest.mark.parametrize("call", [lambda: T.RandomResizedCrop(112),
                                  lambda: T.RandomResizedCrop((112, 112)),
                                  lambda: T.RandomResizedCrop(size=112)])
def test_output_size_is_the_datasets_shape(call):
    with pytest.raises(TypeError, match=r"output size .* shape=") as info:
        call()
    assert "RandomResizedCrop(" in str(info.value)


def test_keywords_still_work():
    t = T.RandomResizedCrop(scale=(0.25, 1.0), ratio=(0.5, 2.0), flip_h=0.0)
    assert t.scale == (0.25, 1.0) and t.ratio == (0.5, 2.0) and t.flip_h == 0.0
    with pytest.raises(TypeError, match="takes scale=, ratio= and flip_h="):
        T.RandomResizedCrop(scales=(0.5, 1.0))


@pytest.mark.parametrize("scale", [(0.5, 2.0), (0.0, 1.0), (-0.1, 0.5), 1.5])
def test_scale_outside_0_1(scale):
    with pytest.raises(ValueError, match=r"within \(0, 1\].*scale=\(0.08, 1.0\)"):
        T.RandomResizedCrop(scale=scale)
    with pytest.raises(ValueError, match=r"within \(0, 1\]"):
        T.SimilarityTransform(scale=scale)


@pytest.mark.parametrize("ratio", [(0.0, 1.0), (-1.0, 2.0)])
def test_ratio_not_positive(ratio):
    with pytest.raises(ValueError, match=r"low > 0.*ratio=\(3 / 4, 4 / 3\)"):
        T.RandomResizedCrop(ratio=ratio)


@pytest.mark.parametrize("kwargs,name", [({"scale": (1.0, 0.5)}, "scale"),
                                         ({"ratio": (2.0, 0.5)}, "ratio"),
                                         ({"degrees": (10.0, -10.0)}, "degrees")])
def test_low_above_high_says_how_to_write_it(kwargs, name):
    with pytest.raises(ValueError, match=rf"{name} must be \(low, high\).*write it as"):
        T.SimilarityTransform(**kwargs)


def test_center_crop_fraction():
    with pytest.raises(ValueError, match=r"\(0, 1\].*shape="):
        T.CenterResizedCrop(1.5)
    with pytest.raises(TypeError, match="shape="):
        T.CenterResizedCrop((112, 112))


def test_a_class_instead_of_an_instance(tmp_path):
    with pytest.raises(TypeError, match=r"warp=RandomResizedCrop is the class; pass an instance: "
                                        r"warp=RandomResizedCrop\(\)"):
        decode_jpeg_warped([b""], (8, 8), T.RandomResizedCrop)
    with pytest.raises(TypeError, match=r"bias=ConstantBiasTransform\(\)"):
        decode_jpeg_warped([b""], (8, 8), dtype="float32", bias=T.ConstantBiasTransform)
    with pytest.raises(TypeError, match=r"warp=CenterResizedCrop\(\)"):
        tf_gulp.GulpDataset(str(tmp_path), warp=T.CenterResizedCrop, shape=(8, 8))
    with pytest.raises(TypeError, match=r"warp_transform=RandomResizedCrop\(\)"):
        DataLoader(str(tmp_path / "x.bzna"), warp_transform=T.RandomResizedCrop)
