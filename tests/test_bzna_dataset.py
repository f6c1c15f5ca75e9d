"""Benzina-style datasets end to end: tf-gulp bzna create / info, the per-image MP4s against
ffprobe and Debian's ffmpeg, BenzinaDataset / ClassificationDataset / ImageNet / DataLoader,
resumption, co64 past 4 GiB, bad files, and Keras training."""

from __future__ import annotations

import json
import os
import re
import struct
import warnings

import numpy as np
import pytest
import simplejpeg
import tensorflow as tf

import tf_gulp
import tf_gulp.ops
from epoch_testing import assert_all_differ, keras_epochs
from ffrecord_testing import ffrecord_bytes
from bzna_reference_testing import read_moov
from hevc_testing import ffmpeg_rgb, ffprobe, fit_small_model, have_ffmpeg, smooth_image
from tf_gulp.bzna import container as C
from tf_gulp.bzna import create as K
from tf_gulp import transforms as V
from tf_gulp.bzna import transforms as T
from tf_gulp.bzna.dataset import BenzinaDataset, ClassificationDataset, DataLoader, ImageNet
from tf_gulp.cli.main import main as cli
from tf_gulp.ops.bzna.bzna_ops import bzna_track_index

PRESET = "ultrafast"  # the tests check the format, not x265's quality; medium is the default


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("bzna")
    rng = np.random.default_rng(5)
    sources = {}
    sizes = {("train", "ant"): [(200, 300), (520, 130)], ("train", "bee"): [(64, 48), (700, 600)],
             ("val", "ant"): [(100, 100)], ("val", "bee"): [(333, 517)],
             ("test", "cow"): [(90, 160)]}
    for (split, cls), shapes in sizes.items():
        d = root / "img" / split / cls
        d.mkdir(parents=True)
        for k, (h, w) in enumerate(shapes):
            img = smooth_image(rng, h, w)
            (d / f"{k}.jpg").write_bytes(simplejpeg.encode_jpeg(img, quality=98))
            sources[f"{split}/{cls}/{k}.jpg"] = K.load_rgb(str(d / f"{k}.jpg"))
    out = root / "data.bzna"
    assert cli(["bzna", "create", str(root / "img"), str(out), "--preset", PRESET, "-j", "2",
                "--no-progress"]) == 0
    return {"root": root, "path": str(out), "sources": sources}


def test_layout_and_info(data, capsys):
    info = C.describe(data["path"])
    names = [t["name"] for t in info["tracks"]]
    assert names == ["bzna_input", "bzna_target", "bzna_fname", "bzna_thumb"]
    assert all(t["samples"] == 7 for t in info["tracks"])
    assert info["metadata"]["splits"] == {"train": [0, 4], "val": [4, 6], "test": [6, 7]}
    assert info["metadata"]["classes"] == ["ant", "bee", "cow"]
    with open(data["path"], "rb") as f:
        head = f.read(48)
    assert head[4:8] == b"ftyp" and head[8:12] == b"isom" and b"bzna" in head[16:24]
    assert struct.unpack(">I", head[24:28])[0] == 1 and head[28:32] == b"mdat"  # 64-bit mdat
    assert cli(["bzna", "info", data["path"]]) == 0
    text = capsys.readouterr().out
    assert "bzna_thumb" in text and "split val: entries [4, 6), 2 images" in text
    assert cli(["bzna", "info", data["path"], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["splits"]["test"] == [6, 7]
    assert not os.path.exists(data["path"] + ".parts")


def per_image_mp4s(path):
    offsets, sizes = (t.numpy() for t in bzna_track_index(path, "bzna_input"))
    with open(path, "rb") as f:
        blob = f.read()
    return [blob[o:o + s] for o, s in zip(offsets, sizes)]


def test_targets_and_filenames_inside_each_image(data):
    names = sorted(data["sources"], key=lambda n: ("train", "val", "test").index(n.split("/")[0]))
    for mp4, name in zip(per_image_mp4s(data["path"]), names):
        for kind, p, e in C.iter_boxes(mp4):
            if kind == b"mdat":
                payload = mp4[p:e]
        assert payload.endswith(name.encode() + b"\0")
        target = struct.unpack("<q", payload[-len(name) - 9:-len(name) - 1])[0]
        assert target == ["ant", "bee", "cow"].index(name.split("/")[1])


def test_decoded_images_match_the_sources(data):
    ds = BenzinaDataset(data["path"])
    names = sorted(data["sources"], key=lambda n: ("train", "val", "test").index(n.split("/")[0]))
    got = list(ds.as_numpy_iterator())
    assert [int(x["index"]) for x in got] == list(range(7))
    for x, name in zip(got, names):
        src = data["sources"][name]
        assert x["image"].shape == src.shape
        assert np.abs(x["image"].astype(np.int16) - src).mean() < 4.0  # x265 + yuv420 loss
        assert x["label"] == ["ant", "bee", "cow"].index(name.split("/")[1])


@pytest.mark.skipif(not have_ffmpeg(), reason="Debian's ffmpeg/ffprobe not installed")
def test_ffprobe_reads_our_per_image_mp4s(data, tmp_path):
    for k, mp4 in enumerate(per_image_mp4s(data["path"])):
        p = tmp_path / f"{k}.mp4"
        p.write_bytes(mp4)
        streams = ffprobe(p)["streams"]
        assert [s["codec_name"] for s in streams if s["codec_type"] == "video"] == ["hevc", "hevc"]
        s = streams[0]
        assert s["codec_tag_string"] == "hvc1" and s["pix_fmt"] == "yuvj420p"
        assert s["width"] % 512 == 0 and s["height"] % 512 == 0
        theirs = ffmpeg_rgb(p, s["width"], s["height"]).astype(np.int16)
        ours = tf_gulp.ops.decode_hevc(mp4, crop="full", chroma_upsampling="nearest").numpy()
        assert np.abs(ours.astype(np.int16) - theirs).max() <= 2


def test_splits_thumbnails_and_shuffle(data):
    val = [int(x["index"]) for x in BenzinaDataset(data["path"], "val").as_numpy_iterator()]
    assert val == [4, 5]
    thumbs = [x["image"].shape for x in
              BenzinaDataset(data["path"], track="bzna_thumb").as_numpy_iterator()]
    assert max(max(s[:2]) for s in thumbs) == 512
    assert thumbs[3] == (512, 439, 3)  # 700x600 scaled to a longer side of 512
    assert thumbs[0] == (200, 300, 3)  # fits already: the image itself

    def order(seed, epoch):
        ds = BenzinaDataset(data["path"], shuffle=True, seed=seed, epoch=epoch, decode=False)
        return [int(x["index"]) for x in ds.as_numpy_iterator()]

    assert order(1, 0) == order(1, 0)
    assert sorted(order(1, 0)) == list(range(7))
    assert len({tuple(order(1, e)) for e in range(4)}) > 1
    pairs = list(ClassificationDataset(data["path"], "test").as_numpy_iterator())
    assert len(pairs) == 1 and pairs[0][1] == 2
    assert len(list(ImageNet(data["root"], "train"))) == 4
    with pytest.raises(ValueError, match="split"):
        BenzinaDataset(data["path"], "holdout")


def test_data_loader(data):
    def run():
        dl = DataLoader(data["path"], (40, 56), 3, shuffle=True, seed=3, epochs=2,
                        warp_transform=T.RandomResizedCrop(),
                        bias_transform=T.ConstantBiasTransform(),
                        norm_transform=T.ConstantNormTransform())
        return list(dl.as_numpy_iterator())

    a, b = run(), run()
    assert [x.shape for x, _ in a] == [(3, 40, 56, 3)] * 4 + [(2, 40, 56, 3)]
    assert a[0][0].dtype == np.float32 and a[0][1].dtype == np.int64
    for (xa, ya), (xb, yb) in zip(a, b):
        np.testing.assert_array_equal(xa, xb)
        np.testing.assert_array_equal(ya, yb)
    # Normalized ImageNet-style values; batches are distinct arrays.
    assert -3 < a[0][0].mean() < 3 and not np.shares_memory(a[0][0], a[1][0])
    # Epoch 1 alone (a restart) is the second half of the two-epoch run.
    again = DataLoader(data["path"], (40, 56), 7, shuffle=True, seed=3, epochs=1, start_epoch=1,
                       warp_transform=T.RandomResizedCrop(),
                       bias_transform=T.ConstantBiasTransform(),
                       norm_transform=T.ConstantNormTransform())
    (x1, y1), = list(again.as_numpy_iterator())
    two = np.concatenate([x for x, _ in a])[7:]
    np.testing.assert_array_equal(x1, two)


@pytest.mark.parametrize("kwargs, batches", [
    (dict(epochs=2), 5),                             # 14 images in batches of 3: 4 full, 1 of 2
    (dict(epochs=2, drop_remainder=True), 4),
    (dict(split="train"), 2),                        # 4 images
    (dict(split="val", epochs=3, start_epoch=5), 2),  # 6 images
])
def test_data_loader_cardinality_is_known(data, kwargs, batches):
    """cardinality() is the number of batches a pass yields (it was UNKNOWN, -2, built with
    flat_map, and Keras warned that the input ran out of data after the first epoch)."""
    dl = DataLoader(data["path"], (8, 8), 3, **kwargs)
    assert int(dl.cardinality()) == batches
    assert len(list(dl.as_numpy_iterator())) == batches
    half = dl.shard(2, 1)  # tf.data's shard keeps the count known
    assert int(half.cardinality()) == batches // 2
    assert len(list(half.as_numpy_iterator())) == batches // 2


def test_data_loader_without_epochs_is_infinite(data, tmp_path):
    dl = DataLoader(data["path"], (8, 8), 3, epochs=None)
    assert int(dl.cardinality()) == tf.data.INFINITE_CARDINALITY
    assert len(list(dl.take(6).as_numpy_iterator())) == 6  # more than one epoch's 3 batches
    with pytest.raises(ValueError, match=r"the split \[0, 0\) is empty; with epochs=None the "
                                         r"loader would never yield a batch"):
        DataLoader(data["path"], (8, 8), 3, epochs=None, splits={"none": (0, 0)}, split="none")


def test_keras_fit_knows_the_epoch_length(data):
    """Without steps_per_epoch, Keras takes each epoch's length from cardinality(): two epochs
    of two batches, each pass reading the loader's next epoch."""
    dl = DataLoader(data["path"], (32, 32), 2, split="train", shuffle=True)
    model = tf.keras.Sequential([tf.keras.Input((32, 32, 3)), tf.keras.layers.Flatten(),
                                 tf.keras.layers.Dense(3)])
    model.compile("sgd", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    steps = []

    class Count(tf.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            steps.append(epoch)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = model.fit(dl, epochs=2, verbose=0, callbacks=[Count()])
    assert len(history.history["loss"]) == 2 and steps == [0, 1]
    assert not [w for w in caught if "ran out of data" in str(w.message)]


def test_keras_fit(data):
    dl = DataLoader(data["path"], (32, 32), 4, split="train", shuffle=True, epochs=None,
                    bias_transform=T.ConstantBiasTransform(), norm_transform=T.ConstantNormTransform())
    fit_small_model(tf.keras.Input((32, 32, 3)), dl, classes=3, epochs=2)


def test_resume_reuses_encoded_images(data, tmp_path, monkeypatch):
    src = data["root"] / "img"
    out = tmp_path / "r.bzna"
    calls = []
    crash = [True]
    real = K.image_mp4

    def counting(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3 and crash:
            crash.clear()
            raise RuntimeError("simulated crash")
        return real(*args, **kwargs)

    monkeypatch.setattr(K, "image_mp4", counting)
    with pytest.raises(RuntimeError, match="simulated crash"):
        K.create_dataset(str(src), str(out), preset=PRESET, workers=1, progress=False)
    assert not out.exists() and len(os.listdir(str(out) + ".parts")) == 3  # 2 images + manifest
    calls.clear()
    K.create_dataset(str(src), str(out), preset=PRESET, workers=1, progress=False)
    assert len(calls) == 5  # the two done before were kept
    a = [x["image"] for x in BenzinaDataset(str(out)).as_numpy_iterator()]
    b = [x["image"] for x in BenzinaDataset(data["path"]).as_numpy_iterator()]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    with pytest.raises(FileExistsError):
        K.create_dataset(str(src), str(out), preset=PRESET, workers=1, progress=False)


def test_list_file_input(tmp_path, data):
    lst = tmp_path / "list.txt"
    img_dir = data["root"] / "img"
    lst.write_text(f"{img_dir}/val/ant/0.jpg 7\n# comment\n{img_dir}/test/cow/0.jpg -1 test\n")
    out = tmp_path / "l.bzna"
    K.create_dataset(str(lst), str(out), preset=PRESET, workers=1, progress=False)
    got = list(BenzinaDataset(str(out)).as_numpy_iterator())
    assert [int(x["label"]) for x in got] == [7, -1]
    assert C.describe(str(out))["metadata"]["splits"] == {"train": [0, 1], "test": [1, 2]}


def test_co64_past_4_gib(tmp_path, data):
    """A sparse container whose sample lies past 4 GiB: co64 is written and read."""
    mp4 = per_image_mp4s(data["path"])[0]
    path = tmp_path / "big.bzna"
    hole = (1 << 32) + 4096
    head = C.ftyp()
    target = struct.pack("<q", 3)
    payload = hole + len(mp4) + len(target)
    offset = len(head) + 16 + hole
    tracks = [C.TrackSpec("bzna_input", [offset], [len(mp4)]),
              C.TrackSpec("bzna_target", [offset + len(mp4)], [8])]
    with open(path, "wb") as f:
        f.write(head + C.large_box_header(b"mdat", payload))
        f.seek(offset)
        f.write(mp4 + target + C.moov(tracks))
    assert b"co64" in read_moov(str(path))[0]
    (x,) = list(BenzinaDataset(str(path)).as_numpy_iterator())
    assert x["label"] == 3 and x["image"].shape == (200, 300, 3)


def test_bad_files(tmp_path, data):
    good = open(data["path"], "rb").read()
    # Missing track.
    p = tmp_path / "missing.bzna"
    p.write_bytes(good.replace(b"bzna_target\0", b"bzna_tXrget\0"))
    with pytest.raises(tf.errors.NotFoundError, match="bzna_target"):
        list(BenzinaDataset(str(p)))
    # A target track shorter than the input track (as Benzina's toolchain writes when the last
    # entries have no target): those entries get label -1. A longer one is an error.
    moov, at, _ = read_moov(data["path"])
    o, s = (t.numpy().tolist() for t in bzna_track_index(data["path"], "bzna_input"))
    to, ts = (t.numpy().tolist() for t in bzna_track_index(data["path"], "bzna_target"))
    p = tmp_path / "short.bzna"
    p.write_bytes(good[:at] + C.moov([C.TrackSpec("bzna_input", o, s),
                                      C.TrackSpec("bzna_target", to[:5], ts[:5])]))
    labels = [int(x["label"]) for x in BenzinaDataset(str(p), decode=False)]
    assert labels == [0, 0, 1, 1, 0, -1, -1]
    p = tmp_path / "long.bzna"
    p.write_bytes(good[:at] + C.moov([C.TrackSpec("bzna_input", o[:6], s[:6]),
                                      C.TrackSpec("bzna_target", to, ts)]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="long.bzna: the bzna_target track "
                       "has 7 samples, more than the 6 of the bzna_input track"):
        list(BenzinaDataset(str(p)))
    # An offset past the end of the file.
    p = tmp_path / "past.bzna"
    o, s = (t.numpy().tolist() for t in bzna_track_index(data["path"], "bzna_input"))
    to, ts = (t.numpy().tolist() for t in bzna_track_index(data["path"], "bzna_target"))
    p.write_bytes(good[:at] + C.moov([C.TrackSpec("bzna_input", o[:-1] + [len(good) * 2], s),
                                      C.TrackSpec("bzna_target", to, ts)]))
    with pytest.raises(tf.errors.DataLossError, match="past the end of the file"):
        list(BenzinaDataset(str(p)))
    # A damaged picture: the error names the file, the sample and its offset.
    p = tmp_path / "damaged.bzna"
    bad = bytearray(good)
    start = o[2]
    bad[start:start + s[2]] = b"\x00" * s[2]
    p.write_bytes(bytes(bad))
    with pytest.raises(tf.errors.DataLossError, match=r"damaged.bzna: sample 2 \(byte offset"):
        list(BenzinaDataset(str(p)))
    assert len(list(BenzinaDataset(str(p)).ignore_errors())) == 6
    # Not a file / truncated.
    with pytest.raises(tf.errors.NotFoundError):
        BenzinaDataset(str(tmp_path / "nope.bzna"))
    p = tmp_path / "cut.bzna"
    p.write_bytes(good[: len(good) // 2])
    with pytest.raises((ValueError, tf.errors.DataLossError)):
        list(BenzinaDataset(str(p)))
    # The file cut after the dataset was made (its index already read), in the middle of entry
    # 3's sample (the targets come after the samples): every entry is an error naming the file,
    # the entry and the byte offset of what it could not read.
    p = tmp_path / "shrunk.bzna"
    p.write_bytes(good)
    it = iter(BenzinaDataset(str(p), decode=False))
    with open(p, "r+b") as f:
        f.truncate(o[3] + 10)
    for k in range(7):
        with pytest.raises(tf.errors.DataLossError) as e:
            next(it)
        what = (f"target of entry {k}" if k < 3 else rf"sample {k} \(byte offset {o[k]}\)")
        assert re.search(rf"shrunk.bzna: {what}: .*shrunk.bzna: .*at offset \d+", str(e.value)), (
            k, str(e.value))
    with pytest.raises(StopIteration):
        next(it)


def test_iterator_checkpoint_resumes_exactly(data, tmp_path):
    """A checkpointed DataLoader iterator continues with the same batches as an uninterrupted one."""
    def loader():
        return DataLoader(data["path"], (24, 24), 2, shuffle=True, seed=9, epochs=2,
                          warp_transform=T.RandomResizedCrop())

    full = [x for x, _ in loader().as_numpy_iterator()]
    it = iter(loader())
    first = [next(it)[0].numpy() for _ in range(3)]
    ckpt = tf.train.Checkpoint(iterator=it)
    prefix = ckpt.save(str(tmp_path / "ckpt"))
    it2 = iter(loader())
    tf.train.Checkpoint(iterator=it2).restore(prefix)
    rest = [x.numpy() for x, _ in it2]
    for a, b in zip(first + rest, full):
        np.testing.assert_array_equal(a, b)
    assert len(first) + len(rest) == len(full)


# --- epochs, cardinality, skip and shard (issue 17) -----------------------------------------------

def indices(ds):
    return [int(x["index"]) for x in ds.as_numpy_iterator()]


def test_cardinality_skip_take_and_shard_select_before_reading(data):
    ds = BenzinaDataset(data["path"], decode=False)
    everything = indices(ds)
    assert int(ds.cardinality()) == len(everything) == 7
    last = ds.skip(ds.cardinality() - 1)
    assert int(last.cardinality()) == 1 and indices(last) == everything[-1:]

    @tf.function
    def symbolic_skip(k):  # a count known only when the graph runs: tf.data's own skip
        return ds.skip(k).reduce(tf.constant(-1, tf.int64), lambda _, x: x["index"])

    assert int(symbolic_skip(tf.constant(6, tf.int64))) == everything[-1]
    assert indices(ds.skip(2).take(3)) == everything[2:5]
    assert int(ds.skip(2).take(3).cardinality()) == 3
    shards = [ds.shard(3, i) for i in range(3)]
    assert [int(s.cardinality()) for s in shards] == [3, 2, 2]
    assert sorted(sum((indices(s) for s in shards), [])) == everything
    # skip/take/shard act on positions before the read: a map over the result sees only them.
    assert int(ClassificationDataset(data["path"]).cardinality()) == 7
    with pytest.raises(tf.errors.InvalidArgumentError, match="shard"):
        ds.shard(2, 2)


def test_skip_reads_nothing_it_drops(data, tmp_path):
    """Entry 0's sample is overwritten with garbage: reading it fails, skipping past it does not."""
    bad = tmp_path / "bad.bzna"
    raw = bytearray(open(data["path"], "rb").read())
    offsets, sizes = (t.numpy() for t in bzna_track_index(data["path"], "bzna_input"))
    raw[offsets[0]:offsets[0] + sizes[0]] = b"\x00" * int(sizes[0])
    bad.write_bytes(bytes(raw))
    ds = BenzinaDataset(str(bad))
    with pytest.raises(tf.errors.OpError):
        list(ds.take(1))
    assert [int(x["index"]) for x in ds.skip(1).as_numpy_iterator()] == list(range(1, 7))
    assert [int(x["index"]) for x in ds.shard(2, 1).as_numpy_iterator()] == [1, 3, 5]


def test_shuffle_is_a_new_order_every_pass_and_checkpoint_exact(data, tmp_path):
    def make():
        return BenzinaDataset(data["path"], shuffle=True, seed=4, decode=False)

    ds = make()
    passes = [indices(ds) for _ in range(4)]
    assert len({tuple(p) for p in passes}) > 1
    assert all(sorted(p) == list(range(7)) for p in passes)
    # Pass k is epoch k, as with epoch=k.
    assert passes[2] == indices(BenzinaDataset(data["path"], shuffle=True, seed=4, epoch=2,
                                               decode=False))
    assert [int(x["index"]) for x in make().repeat(4).as_numpy_iterator()] == sum(passes, [])
    # take() makes tf.data rewrite the graph: the next pass is still a new epoch.
    assert [indices(ds.take(7)) for _ in range(2)] != [indices(ds.take(7))] * 2

    full = [int(x["index"]) for x in make().repeat(3).as_numpy_iterator()]
    it = iter(make().repeat(3))
    for _ in range(9):
        next(it)
    prefix = tf.train.Checkpoint(iterator=it).save(str(tmp_path / "ckpt"))
    fresh = iter(make().repeat(3))
    tf.train.Checkpoint(iterator=fresh).restore(prefix)
    assert [int(x["index"]) for x in fresh] == full[9:]


def test_shuffle_is_ffrecord_datasets_order(data, tmp_path):
    """The shuffle is drawn in C++ by FFRecordDataset's keyed permutation of (seed, epoch)
    (bzna_epoch_order, cc/util/record_order.h): a split of n entries is visited in the order
    FFRecordDataset visits n records, offset by the split's start; skip/take/shard keep positions
    of that order, as FFRecordDataset's do."""
    def records(n: int):
        path = tmp_path / f"{n}.ffr"
        path.write_bytes(ffrecord_bytes([str(i).encode() for i in range(n)]))
        return str(path)

    for split, (start, stop) in {None: (0, 7), "train": (0, 4), "val": (4, 6)}.items():
        for seed in (4, -3):
            ffr = tf_gulp.FFRecordDataset(records(stop - start), shuffle=True, seed=seed)
            theirs = [int(r) for r in ffr.repeat(3).as_numpy_iterator()]
            n = stop - start
            for epoch in range(3):
                ours = indices(BenzinaDataset(data["path"], split, shuffle=True, seed=seed,
                                              epoch=epoch, decode=False))
                assert ours == [start + r for r in theirs[epoch * n:(epoch + 1) * n]]
    ffr = tf_gulp.FFRecordDataset(records(7), shuffle=True, seed=4)
    ds = BenzinaDataset(data["path"], shuffle=True, seed=4, decode=False)
    for selected in (lambda d: d.skip(2).shard(2, 1), lambda d: d.shard(3, 1).take(2)):
        assert indices(selected(ds)) == [int(r) for r in selected(ffr).as_numpy_iterator()]


def test_keras_epochs_reshuffle(data):
    ds = BenzinaDataset(data["path"], shuffle=True, seed=6, decode=False).map(
        lambda x: (tf.cast(x["index"], tf.float32)[None], x["label"]))
    epochs = keras_epochs(ds.batch(7), epochs=4)
    assert all(sorted(e) == list(range(7)) for e in epochs)
    assert_all_differ(epochs)


def test_data_loader_passes_cover_the_next_epochs(data):
    """Pass p over DataLoader(epochs=k, start_epoch=s) is epochs s + p*k ... s + (p+1)*k - 1."""
    def loader(**kwargs):
        return DataLoader(data["path"], (8, 8), 7, shuffle=True, seed=2,
                          warp_transform=T.RandomResizedCrop(), **kwargs)

    dl = loader(epochs=1)
    first, second = ([x for x, _ in dl.as_numpy_iterator()] for _ in range(2))
    assert not np.array_equal(first[0], second[0])
    expected = [x for x, _ in loader(epochs=1, start_epoch=1).as_numpy_iterator()]
    np.testing.assert_array_equal(second[0], expected[0])


@pytest.mark.parametrize("passes", [1, 2])
def test_distributed_epoch_reads_each_pass_once(data, service, passes):
    """tf.data service dynamic sharding: one split per entry (the source's, as for the other
    sources), every entry exactly once per pass; which worker read what:
    test_service_processes.py."""
    ds = BenzinaDataset(data["path"], shuffle=True, seed=3, decode=False).map(
        lambda x: x["index"]).repeat(passes)
    got = list(ds.apply(tf.data.experimental.service.distribute(
        processing_mode=tf.data.experimental.service.ShardingPolicy.DYNAMIC,
        service=service.target)).as_numpy_iterator())
    assert sorted(got) == sorted(list(range(7)) * passes)


def test_one_default_for_bias_and_norm(data):
    # DataLoader given no bias/norm normalizes as ConstantBiasTransform() and
    # ConstantNormTransform() do: one default (ImageNet's), documented in tf_gulp.transforms.
    def first(**kwargs):
        (x, _), = list(DataLoader(data["path"], (8, 8), 64, **kwargs).take(1).as_numpy_iterator())
        return x

    explicit = first(bias_transform=T.ConstantBiasTransform(T.IMAGENET_MEAN),
                     norm_transform=T.ConstantNormTransform(T.IMAGENET_NORM))
    np.testing.assert_allclose(first(), explicit, rtol=0, atol=1e-6)
    raw = first(bias_transform=T.ConstantBiasTransform(0.0),
                norm_transform=T.ConstantNormTransform(1.0))
    assert raw.max() > 10.0 > explicit.max()  # 0-255 floats are not the default


def test_data_loader_takes_augment_or_the_reference_arguments(data):
    """augment= and the reference loader's transform arguments are two ways to say one thing:
    both at once is refused, naming them; a Python callable as a transform is a TypeError (the
    kernels draw every transform in C++)."""
    augment = [V.RandomResizedCrop(8), V.ToDtype(tf.float32)]
    with pytest.raises(ValueError, match=r"DataLoader: give augment= or the reference loader's "
                                         r"warp_transform, not both"):
        DataLoader(data["path"], augment=augment, warp_transform=T.RandomResizedCrop())
    with pytest.raises(ValueError, match=r"augment= or the reference loader's shape, "
                                         r"warp_transform, not both"):
        DataLoader(data["path"], (8, 8), augment=augment, warp_transform=T.RandomResizedCrop())
    with pytest.raises(TypeError, match=r"DataLoader: warp_transform must be a "
                                        r"tf_gulp.bzna.transforms SimilarityTransform"):
        DataLoader(data["path"], (8, 8), warp_transform=lambda *a: tf.eye(3))
    with pytest.raises(TypeError, match=r"DataLoader: bias_transform must be"):
        DataLoader(data["path"], (8, 8), bias_transform=lambda key: tf.zeros([3]))
    with pytest.raises(TypeError, match=r"DataLoader: augment: .* is not a transform the kernels"):
        DataLoader(data["path"], augment=[V.RandomResizedCrop(8), lambda image: image])


@pytest.mark.parametrize("augment", [
    [V.RandomResizedCrop((24, 40)), V.RandomHorizontalFlip(), V.ToDtype(tf.float32)],
    [V.RandomResizedCrop(16, scale=(0.2, 1.0)), V.RandomVerticalFlip(0.3),
     V.ColorJitter(0.4, 0.4, 0.4, 0.1), V.RandomGrayscale(0.3)],  # uint8, with colour
], ids=["geometry", "colour"])
def test_data_loader_augment_equals_benzina_dataset_augment(data, augment):
    """DataLoader(augment=L) on the CPU gives, element for element, BenzinaDataset(augment=L)'s
    pictures for the same seed, pixel for pixel: both are decode_hevc_warped drawing from the
    same (seed, epoch, index); over two shuffled epochs, whose draws differ."""
    loader = DataLoader(data["path"], batch_size=3, shuffle=True, seed=17, epochs=2,
                        augment=augment)
    batches = list(loader.as_numpy_iterator())
    images = np.concatenate([x for x, _ in batches])
    labels = np.concatenate([y for _, y in batches])
    ds = BenzinaDataset(data["path"], shuffle=True, seed=17, augment=augment)
    elements = [x for _ in range(2) for x in ds.as_numpy_iterator()]  # epochs 0 and 1
    assert len(elements) == len(images) == 14
    for k, (x, image, label) in enumerate(zip(elements, images, labels)):
        assert x["image"].dtype == image.dtype and x["image"].shape == image.shape, k
        np.testing.assert_array_equal(x["image"], image, err_msg=f"element {k}")
        assert x["label"] == label, k
    # The two epochs draw differently: an entry's picture in epoch 0 is not its picture in 1.
    first = {int(x["index"]): x["image"] for x in elements[:7]}
    assert any(not np.array_equal(first[int(x["index"])], x["image"]) for x in elements[7:])
    # Another seed gives other pictures.
    other = list(BenzinaDataset(data["path"], shuffle=True, seed=18, augment=augment)
                 .as_numpy_iterator())
    by_index = {int(x["index"]): x["image"] for x in other}
    assert any(not np.array_equal(by_index[int(x["index"])], x["image"]) for x in elements[:7])


# --- BenzinaDataset on the positional source base (issue 33) --------------------------------------

def test_benzina_dataset_is_a_source_class(data):
    """BenzinaDataset is a tf.data.Dataset class, as GulpDataset and FFRecordDataset are; a shard
    is the same class; its graph is the source op (path + attrs), not an index and a map."""
    ds = BenzinaDataset(data["path"], decode=False)
    assert isinstance(ds, BenzinaDataset) and isinstance(ds, tf.data.Dataset)
    assert isinstance(ds.shard(2, 1), BenzinaDataset)
    assert isinstance(BenzinaDataset(data["path"]).shard(2, 1), BenzinaDataset)
    graph = tf.compat.v1.GraphDef()
    graph.ParseFromString(ds._as_serialized_graph().numpy())  # pylint: disable=protected-access
    assert [n.op for n in graph.node if n.op.startswith("TfGulp>")] == ["TfGulp>BznaDataset"]
    assert ds.class_names == ["ant", "bee", "cow"]


@pytest.mark.parametrize("decode", [True, False])
def test_checkpoint_restores_mid_epoch(data, tmp_path, decode):
    """An iterator saved after 3 of 7 entries of a shuffled epoch continues with the other 4
    (images equal), symbolic checkpoints included: the state is the source's (epoch, position)."""
    def make():
        return BenzinaDataset(data["path"], shuffle=True, seed=12, epoch=5, decode=decode)

    key = "image" if decode else "sample"
    full = list(make().as_numpy_iterator())
    for symbolic in (False, True):
        options = tf.data.Options()
        options.experimental_symbolic_checkpoint = symbolic
        it = iter(make().with_options(options))
        first = [next(it) for _ in range(3)]
        prefix = tf.train.Checkpoint(iterator=it).save(str(tmp_path / f"ckpt_{symbolic}"))
        fresh = iter(make().with_options(options))
        tf.train.Checkpoint(iterator=fresh).restore(prefix)
        got = first + list(fresh)
        assert [int(x["index"]) for x in got] == [int(x["index"]) for x in full]
        for x, y in zip(got, full):
            np.testing.assert_array_equal(x[key].numpy(), y[key])


def test_shard_and_skip_never_read_other_positions(data, tmp_path):
    """Damaged pictures at every position of an epoch that shard(3, 1) and skip(4) do not keep:
    the whole epoch fails, the share and the rest read (nothing outside them is decoded: the
    source selects positions before the read, as GulpDataset's and FFRecordDataset's do)."""
    good = open(data["path"], "rb").read()
    o, s = (t.numpy().tolist() for t in bzna_track_index(data["path"], "bzna_input"))
    kwargs = dict(shuffle=True, seed=8, epoch=2)
    order = indices(BenzinaDataset(data["path"], decode=False, **kwargs))
    kept = set(order[1::3]) | set(order[4:])
    bad = bytearray(good)
    for entry in set(range(7)) - kept:
        bad[o[entry]:o[entry] + s[entry]] = b"\x00" * s[entry]
    p = tmp_path / "holes.bzna"
    p.write_bytes(bytes(bad))
    with pytest.raises(tf.errors.DataLossError, match=r"holes.bzna: sample \d \(byte offset"):
        list(BenzinaDataset(str(p), **kwargs))
    share = [int(x["index"]) for x in BenzinaDataset(str(p), **kwargs).shard(3, 1)]
    assert share == order[1::3]
    rest = [int(x["index"]) for x in BenzinaDataset(str(p), **kwargs).skip(4)]
    assert rest == order[4:]
    # Chained after skip, decoded: still before the decoding.
    assert [int(x["index"]) for x in BenzinaDataset(str(p), **kwargs).skip(4).take(2)] == order[4:6]


def test_epoch_e_is_pass_e_plus_one(data):
    """A dataset made with epoch=e gives on its first pass exactly pass e + 1 of one made with
    epoch=0 (order and pixels), and its next pass is epoch e + 1."""
    ds = BenzinaDataset(data["path"], "train", shuffle=True, seed=21)
    passes = [list(ds.as_numpy_iterator()) for _ in range(4)]
    assert len({tuple(int(x["index"]) for x in p) for p in passes}) > 1
    later = BenzinaDataset(data["path"], "train", shuffle=True, seed=21, epoch=2)
    for e in (2, 3):
        got = list(later.as_numpy_iterator())
        assert [int(x["index"]) for x in got] == [int(x["index"]) for x in passes[e]]
        for x, y in zip(got, passes[e]):
            np.testing.assert_array_equal(x["image"], y["image"])
    # decode=False's "epoch" says which epoch a record belongs to.
    assert {int(x["epoch"]) for x in BenzinaDataset(data["path"], decode=False, epoch=7)} == {7}
