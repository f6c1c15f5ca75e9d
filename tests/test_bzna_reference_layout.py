"""Containers in the layout of Benzina's own toolchain (tests/bzna_reference_testing.py: v1
mvhd/tkhd/mdhd, stsz before stsc, constant-size stsz, fiel/colr/pasp/clap/btrt in hvc1, bare file
names, no split table, no per-image target trak for entries without a target, and a target track
shorter than the input track) read through every entry point: the track index op, decode_hevc,
BenzinaDataset, ClassificationDataset, ImageNet, DataLoader and `tf-gulp bzna info`."""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import struct

import numpy as np
import pytest
import tensorflow as tf

import bzna_reference_testing as R
import tf_gulp.ops
from hevc_testing import ffmpeg_rgb, ffprobe, have_ffmpeg, smooth_image
from tf_gulp.bzna import container as C
from tf_gulp.bzna import transforms as T
from tf_gulp.bzna.dataset import BenzinaDataset, ClassificationDataset, DataLoader, ImageNet
from tf_gulp.bzna.on_device import warp_on_device
from tf_gulp.cli.main import main as cli
from tf_gulp.ops.bzna.bzna_ops import bzna_track_index
from tf_gulp.ops.bzna.hevc_ops import hevc_sample_size

# (height, width), target (None: the entry has none, like ImageNet's test split), bare file name.
SPECS = [((200, 300), 3, "n01440764_10026.JPEG"),
         ((600, 520), 1, "n01443537_2.JPEG"),     # longer side > 512: a real thumbnail
         ((64, 48), 0, "n01484850_17.JPEG"),
         ((300, 200), None, "ILSVRC2012_test_00000001.JPEG"),
         ((90, 160), None, "ILSVRC2012_test_00000002.JPEG")]
TARGETS = [t for _, t, _ in SPECS]
NAMES = [n for _, _, n in SPECS]
SPLITS = {"train": (0, 2), "val": (2, 3), "test": (3, 5)}
DOCS = pathlib.Path(__file__).parent.parent / "docs" / "benzina.md"  # a data file under Bazel


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    root = tmp_path_factory.mktemp("bzna_ref")
    rng = np.random.default_rng(11)
    images = [smooth_image(rng, h, w) for (h, w), _, _ in SPECS]
    mp4s = [R.per_image_mp4(img, t, name) for img, (_, t, name) in zip(images, SPECS)]
    path = root / "ilsvrc2012.bzna"
    R.write_container(str(path), mp4s, TARGETS, NAMES)
    return {"root": root, "path": str(path), "images": images, "mp4s": mp4s}


def children(data, start, end):
    return [(k.decode("latin1"), p, e) for k, p, e in C.iter_boxes(data, start, end)]


def find(data, start, end, path):
    """Every box at `path` (a list of types) under data[start:end]."""
    out = []
    for k, p, e in children(data, start, end):
        if k == path[0]:
            out += [(p, e)] if len(path) == 1 else find(data, p, e, path[1:])
    return out


def test_the_test_files_have_the_reference_shape(ref):
    """Pins the shape the other tests rely on, so a change to the helper cannot quietly make the
    files look like tf_gulp's own."""
    data = open(ref["path"], "rb").read()
    (mp, me), = find(data, 0, len(data), ["moov"])
    assert [k for k, _, _ in children(data, mp, me)] == ["mvhd"] + ["trak"] * 4  # no udta
    (vp, _), = find(data, mp, me, ["mvhd"])
    assert data[vp] == 1  # version 1
    for p, _ in find(data, mp, me, ["trak", "tkhd"]) + find(data, mp, me, ["trak", "mdia", "mdhd"]):
        assert data[p] == 1
    for p, e in find(data, mp, me, ["trak", "mdia", "minf", "stbl"]):
        kinds = [k for k, _, _ in children(data, p, e)]
        assert kinds.index("stsz") < kinds.index("stsc")
    (ep, ee), = find(data, mp, me, ["trak", "mdia", "minf", "stbl", "stsd"])[3:]
    thumb_children = [k for k, _, _ in children(data, ep + 8 + 8 + 78, ee)]
    assert thumb_children == ["hvcC", "fiel", "colr", "pasp"]
    for mp4, target in zip(ref["mp4s"], TARGETS):
        (p, e), = find(mp4, 0, len(mp4), ["moov"])
        names = [mp4[q + 24:r].split(b"\0")[0]
                 for q, r in find(mp4, p, e, ["trak", "mdia", "hdlr"])]
        assert names == ([b"bzna_input", b"bzna_fname"] + ([b"bzna_target"] if target is not None
                                                            else []) + [b"bzna_thumb"])
        (sp, se), = find(mp4, p, e, ["trak", "mdia", "minf", "stbl", "stsd"])[:1]
        assert [k for k, _, _ in children(mp4, sp + 8 + 8 + 78, se)] == [
            "hvcC", "fiel", "colr", "pasp", "clap", "btrt"]
        (zp, _), = find(mp4, p, e, ["trak", "mdia", "minf", "stbl", "stsz"])[:1]
        assert struct.unpack(">I", mp4[zp + 4:zp + 8])[0] > 0  # the constant-size form


@pytest.mark.skipif(not have_ffmpeg(), reason="Debian's ffmpeg/ffprobe not installed")
def test_ffmpeg_reads_the_per_image_mp4s(ref, tmp_path):
    """The helper's per-image MP4s are valid MP4s: FFmpeg parses them and decodes the same
    pixels as decode_hevc."""
    for k, mp4 in enumerate(ref["mp4s"]):
        p = tmp_path / f"{k}.mp4"
        p.write_bytes(mp4)
        s = ffprobe(p)["streams"][0]
        assert s["codec_name"] == "hevc" and s["codec_tag_string"] == "hvc1"
        # The input track (Benzina's image2mp4 marks it disabled, so ffmpeg's own choice would be
        # the thumbnail).
        theirs = ffmpeg_rgb(p, s["width"], s["height"], "0:v:0").astype(np.int16)
        ours = tf_gulp.ops.decode_hevc(mp4, crop="full", chroma_upsampling="nearest").numpy()
        assert np.abs(ours.astype(np.int16) - theirs).max() <= 2


def test_track_index_and_names(ref):
    data = open(ref["path"], "rb").read()
    counts = {name: len(bzna_track_index(ref["path"], name)[0])
              for name in ("bzna_input", "bzna_target", "bzna_fname", "bzna_thumb")}
    assert counts == {"bzna_input": 5, "bzna_target": 3, "bzna_fname": 5, "bzna_thumb": 5}
    o, s = (t.numpy() for t in bzna_track_index(ref["path"], "bzna_fname"))
    assert [data[a:a + b] for a, b in zip(o, s)] == [n.encode() + b"\0" for n in NAMES]
    o, s = (t.numpy() for t in bzna_track_index(ref["path"], "bzna_target"))
    assert [struct.unpack("<q", data[a:a + b])[0] for a, b in zip(o, s)] == [3, 1, 0]
    o, s = (t.numpy() for t in bzna_track_index(ref["path"], "bzna_input"))
    assert [data[a:a + b] for a, b in zip(o, s)] == ref["mp4s"]


def test_decode_hevc_reads_each_per_image_mp4(ref):
    for mp4, img in zip(ref["mp4s"], ref["images"]):
        clean = tf_gulp.ops.decode_hevc(mp4).numpy()  # clap among fiel/colr/pasp/btrt
        assert clean.shape == img.shape
        assert np.abs(clean.astype(np.int16) - img).mean() < 4.0
        full = tf_gulp.ops.decode_hevc(mp4, crop="full").numpy()
        assert full.shape[0] % 512 == 0 and full.shape[1] % 512 == 0
        thumb = tf_gulp.ops.decode_hevc(mp4, track="bzna_thumb").numpy()
        assert max(thumb.shape[:2]) == min(512, max(img.shape[:2]))
        # Read from the header without decoding (DataLoader's device-decode path): the same sizes.
        for crop, picture in (("clean", clean), ("full", full)):
            assert list(hevc_sample_size(mp4, crop=crop).numpy()) == list(picture.shape[:2])


def test_data_loader_decoding_in_the_step_equals_decoding_in_tf_data(ref):
    transforms = dict(warp_transform=T.RandomResizedCrop(),
                      bias_transform=T.ConstantBiasTransform(0.0),
                      norm_transform=T.ConstantNormTransform(1.0))
    kwargs = dict(split="test", splits=SPLITS, shuffle=True, seed=1, epochs=1, **transforms)
    plain = list(DataLoader(ref["path"], (32, 40), 2, **kwargs).as_numpy_iterator())
    staged = list(DataLoader(ref["path"], (32, 40), 2, device="/CPU:0", decode="device", **kwargs))
    assert len(plain) == len(staged) == 1
    for (x, y), (inputs, labels) in zip(plain, staged):
        # The same crops (matrices drawn in C++ on both paths), within 2 levels (bias 0, norm 1:
        # one level is 1.0): the CPU loader's fused kernel warps in fixed point.
        warped = warp_on_device(inputs, T.loader_augment((32, 40), **transforms)).numpy()
        np.testing.assert_allclose(warped, x, rtol=0, atol=2.0)
        assert np.mean(np.abs(warped - x)) < 0.25
        np.testing.assert_array_equal(labels.numpy(), y)


def test_benzina_dataset_labels_the_missing_tail_minus_one(ref):
    got = list(BenzinaDataset(ref["path"]).as_numpy_iterator())
    assert [int(x["index"]) for x in got] == [0, 1, 2, 3, 4]
    assert [int(x["label"]) for x in got] == [3, 1, 0, -1, -1]
    for x, img in zip(got, ref["images"]):
        assert x["image"].shape == img.shape
        assert np.abs(x["image"].astype(np.int16) - img).mean() < 4.0
    thumbs = [x["image"].shape for x in
              BenzinaDataset(ref["path"], track="bzna_thumb").as_numpy_iterator()]
    assert thumbs[1] == (512, 444, 3) and thumbs[0] == (200, 300, 3)
    raw = [x["sample"] for x in BenzinaDataset(ref["path"], decode=False).as_numpy_iterator()]
    assert raw == ref["mp4s"]
    shuffled = list(BenzinaDataset(ref["path"], shuffle=True, seed=4, decode=False)
                    .as_numpy_iterator())
    labels = {int(x["index"]): int(x["label"]) for x in shuffled}
    assert labels == dict(enumerate([3, 1, 0, -1, -1]))


def test_splits_are_given_by_the_user(ref):
    """The reference writes no split table: a small file has no default splits, and the ranges
    are passed as `splits` (the docs/benzina.md example)."""
    with pytest.raises(ValueError, match=r"ilsvrc2012.bzna: 5 entries and no split table.*splits="):
        BenzinaDataset(ref["path"], "train")
    test = list(BenzinaDataset(ref["path"], "test", splits=SPLITS).as_numpy_iterator())
    assert [(int(x["index"]), int(x["label"])) for x in test] == [(3, -1), (4, -1)]
    train = list(ClassificationDataset(ref["path"], "train", splits=SPLITS).as_numpy_iterator())
    assert [int(y) for _, y in train] == [3, 1]
    (image, label), = list(ImageNet(ref["root"], "val", splits=SPLITS).as_numpy_iterator())
    assert image.shape == (64, 48, 3) and label == 0
    shuffled = [int(x["index"]) for x in BenzinaDataset(ref["path"], "test", splits=SPLITS,
                                                        shuffle=True, decode=False)]
    assert sorted(shuffled) == [3, 4]
    with pytest.raises(ValueError, match="no split 'holdout'"):
        BenzinaDataset(ref["path"], "holdout", splits=SPLITS)
    with pytest.raises(ValueError, match=r"\[3, 6\) is not within the file's 5 entries"):
        BenzinaDataset(ref["path"], "test", splits={"test": (3, 6)})
    with pytest.raises(ValueError, match="a \\(start, stop\\) pair"):
        BenzinaDataset(ref["path"], "test", splits={"test": 3})


def test_the_documented_splits_example_runs(ref):
    """docs/benzina.md's example for giving the splits of an existing Benzina dataset, run on the
    test container (only its path changed)."""
    text = DOCS.read_text()
    block = re.search(r"```python\n(import tf_gulp\nfrom tf_gulp.bzna import DataLoader, describe\n"
                      r".*?)```", text, re.S).group(1)
    assert '"/data/mydata.bzna"' in block
    scope = {}
    exec(compile(block.replace('"/data/mydata.bzna"', repr(ref["path"])), str(DOCS), "exec"), scope)
    assert scope["splits"] == SPLITS
    assert [int(y) for _, y in ClassificationDataset(ref["path"], "train", splits=scope["splits"])
            .as_numpy_iterator()] == [3, 1]
    assert sorted(int(x["index"]) for x in scope["train"]) == [0, 1]
    (x, y), = list(scope["test"].as_numpy_iterator())
    assert x.shape == (2, 224, 224, 3) and y.tolist() == [-1, -1]


def test_data_loader(ref):
    dl = DataLoader(ref["path"], (32, 40), 2, split="test", splits=SPLITS, shuffle=True, seed=1,
                    epochs=2, warp_transform=T.RandomResizedCrop())
    batches = list(dl.as_numpy_iterator())
    assert [x.shape for x, _ in batches] == [(2, 32, 40, 3)] * 2
    assert all((y == -1).all() for _, y in batches)
    (x, y), = list(DataLoader(ref["path"], (16, 16), 8).as_numpy_iterator())
    assert x.shape == (5, 16, 16, 3) and y.tolist() == [3, 1, 0, -1, -1]


def test_info(ref, capsys):
    assert cli(["bzna", "info", ref["path"]]) == 0
    text = capsys.readouterr().out
    assert "bzna_target  meta mett: 3 samples" in text
    assert "targets: 3 of 5 entries; entries [3, 5) have none (label -1)" in text
    assert "split" not in text  # no split table, too few entries for the ImageNet ranges
    assert cli(["bzna", "info", ref["path"], "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["targets"] == {"count": 3, "missing": [3, 5]} and info["metadata"] is None
    assert {t["name"]: t["samples"] for t in info["tracks"]} == {
        "bzna_input": 5, "bzna_target": 3, "bzna_fname": 5, "bzna_thumb": 5}
    thumb = [t for t in info["tracks"] if t["name"] == "bzna_thumb"][0]
    assert (thumb["entry"], thumb["width"], thumb["height"]) == ("hvc1", 512, 512)
    # A per-image MP4: v0 video traks with the constant-size stsz form, v1 meta traks.
    one = ref["root"] / "one.mp4"
    one.write_bytes(ref["mp4s"][1])
    tracks = {t["name"]: t for t in C.describe(str(one))["tracks"]}
    assert sorted(tracks) == ["bzna_fname", "bzna_input", "bzna_target", "bzna_thumb"]
    assert (tracks["bzna_input"]["width"], tracks["bzna_input"]["height"]) == (520, 600)
    assert tracks["bzna_input"]["samples"] == 1 and tracks["bzna_input"]["bytes"] > 1000
    assert tracks["bzna_target"]["bytes"] == 8
    assert tracks["bzna_fname"]["bytes"] == len(NAMES[1]) + 1


def test_imagenet_sized_file_uses_the_reference_ranges(ref, tmp_path, capsys):
    """ImageNet's shape at scale: 150003 entries (the per-image MP4s repeated), targets for the
    first 50003 only, no split table: train = [0, 3), val = [3, 50003), test = the last 100000,
    whose labels are all -1 (the real file: 1,431,167 entries, 1,331,167 targets)."""
    n_targets, n = 50_003, 150_003
    order = [i % 3 for i in range(n_targets)] + [3 + i % 2 for i in range(n - n_targets)]
    path = tmp_path / "ilsvrc2012.bzna"
    R.write_container(str(path), ref["mp4s"], TARGETS, NAMES, input_repeat=order)
    assert len(bzna_track_index(str(path), "bzna_target")[0]) == n_targets
    train = list(ImageNet(tmp_path, "train").as_numpy_iterator())
    assert [int(y) for _, y in train] == [3, 1, 0]
    val = BenzinaDataset(str(path), "val", decode=False)
    assert [(int(x["index"]), int(x["label"])) for x in val.take(2)] == [(3, 3), (4, 1)]
    edge = BenzinaDataset(str(path), "edge", splits={"edge": (50_001, 50_005)}, decode=False)
    assert [(int(x["index"]), int(x["label"])) for x in edge] == [
        (50_001, 3), (50_002, 1), (50_003, -1), (50_004, -1)]
    test = BenzinaDataset(str(path), "test", shuffle=True, seed=2)
    got = list(test.take(3).as_numpy_iterator())
    assert all(x["index"] >= n_targets and x["label"] == -1 for x in got)
    for x in got:
        assert x["image"].shape == ref["images"][3 + (x["index"] - n_targets) % 2].shape
    (x, y), = list(DataLoader(str(path), (8, 8), 4, split="test").take(1).as_numpy_iterator())
    assert y.tolist() == [-1] * 4
    assert cli(["bzna", "info", str(path)]) == 0
    text = capsys.readouterr().out
    assert "split val: entries [3, 50003), 50000 images\n" in text
    assert "split test: entries [50003, 150003), 100000 images, 100000 without a target" in text


def test_a_longer_target_track_is_an_error(ref, tmp_path, capsys):
    """A target track may be shorter than the input track, never longer."""
    path = tmp_path / "long.bzna"
    shutil.copy(ref["path"], path)
    data = path.read_bytes()
    moov, at, _ = R.read_moov(str(path))
    # Rebuild the moov with a sixth target sample (pointing at the fifth's bytes).
    o, s = (t.numpy().tolist() for t in bzna_track_index(ref["path"], "bzna_target"))
    io, is_ = (t.numpy().tolist() for t in bzna_track_index(ref["path"], "bzna_input"))
    tracks = [C.TrackSpec("bzna_input", io, is_),
              C.TrackSpec("bzna_target", o + [o[-1]] * 3, s + [8] * 3)]
    path.write_bytes(data[:at] + C.moov(tracks))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"long.bzna: the bzna_target track has 6 samples, more than the "
                             r"5 of the bzna_input track"):
        list(BenzinaDataset(str(path)))
    assert cli(["bzna", "info", str(path)]) == 1
    err = capsys.readouterr().err
    assert "long.bzna: the bzna_target track has 6 samples, more than the 5 of the " in err


def test_a_container_without_any_target(ref, tmp_path, capsys):
    """An unlabelled dataset: the toolchain writes an empty target track; every label is -1."""
    path = tmp_path / "unlabelled.bzna"
    R.write_container(str(path), ref["mp4s"][3:], [None, None], NAMES[3:])
    assert len(bzna_track_index(str(path), "bzna_target")[0]) == 0
    got = list(BenzinaDataset(str(path)).as_numpy_iterator())
    assert [int(x["label"]) for x in got] == [-1, -1]
    assert [x["image"].shape for x in got] == [img.shape for img in ref["images"][3:]]
    assert cli(["bzna", "info", str(path)]) == 0
    assert "targets: 0 of 2 entries; entries [0, 2) have none (label -1)" in capsys.readouterr().out
