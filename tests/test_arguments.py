"""Arguments are refused when a public function is called, by name: the message names the
argument, the value and what is allowed (tf_gulp/_args.py), instead of a silent truncation
(``num_frames=8.5`` read 8 frames), a truthy string taken for True (``shuffle='yes'``), or an
unrelated error later (``seed=2**70``: ``OverflowError: int too big to convert``)."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
import tensorflow as tf

import tf_gulp
from formats_testing import keys_of
from gulp_testing import make_gulp_dir
from tf_gulp import _args as A
from tf_gulp import transforms as T
from tf_gulp.bzna.dataset import BenzinaDataset, DataLoader
from tf_gulp.ffrecord import FileReader, FileWriter, dump
from tf_gulp.gulp import GulpChunk, GulpIngestor
from tf_gulp.gulp.video import FrameOptions
from tf_gulp.ops import decode_hevc, similarity_warp

def _case_id(*parts) -> str:
    return re.sub(r"\W+", "_", "".join(map(str, parts))).strip("_")


HERE = os.path.dirname(os.path.abspath(__file__))
THREE = os.path.join(HERE, "data", "ffrecord", "three.ffr")
INT64 = r"\[-9223372036854775808, 9223372036854775807\]"
INT64_MAX_RANGE = r"\[0, 9223372036854775807\]"


@pytest.fixture(scope="module")
def gulp_dir(tmp_path_factory):
    return make_gulp_dir(tmp_path_factory.mktemp("args") / "g", 4, 5, 16, 16, 2)["path"]


# (keyword arguments, exception, message): each exception of the wrong-type kind is also a
# ValueError (A.WrongTypeError).
GULP_CASES = [
    (dict(num_frames=8.5), TypeError,
     r"GulpDataset: num_frames must be an integer >= 1 or None, got 8\.5 \(float\)"),
    (dict(num_frames="8"), TypeError, r"num_frames must be an integer >= 1 or None, got '8' \(str\)"),
    (dict(num_frames=True), TypeError, r"num_frames must be .*, got True \(bool\)"),
    (dict(num_frames=0), ValueError, r"num_frames must be an integer >= 1 or None, got 0"),
    (dict(frames=[0, 1.5]), TypeError, r"frames\[1\] must be an integer, got 1\.5 \(float\)"),
    (dict(frames="01"), TypeError, r"frames must be a list of integers, got '01' \(str\)"),
    (dict(frames=slice(0, 2.5)), TypeError, r"frames\.stop must be an integer or None, got 2\.5"),
    (dict(frames=slice(0, 4, 0)), ValueError, r"frames\.step must not be 0"),
    (dict(training=1), TypeError, r"training must be True or False, got 1 \(int\)"),
    (dict(decode="no"), TypeError, r"decode must be True or False, got 'no' \(str\)"),
    (dict(seed=-(2 ** 63) - 1), ValueError, r"seed must be an integer in"),
    (dict(ids="vid0000"), TypeError, r"ids must be a list of ids \(str or int\) or None, "
                                     r"got 'vid0000' \(str\)"),
    (dict(ids=["vid0000", 1.5]), TypeError, r"ids\[1\] must be a str or an int, got 1\.5"),
    (dict(label2idx=["a"]), TypeError, r"label2idx must be a mapping \{label: index\} or None"),
    (dict(label2idx={"a": "0"}), TypeError, r"label2idx\['a'\] must be an integer .*got '0'"),
    (dict(label_field=3), TypeError, r"label_field must be a string or None, got 3 \(int\)"),
    (dict(scale=2.0), TypeError, r"scale must be an integer, got 2\.0 \(float\)"),
    (dict(shuffle_chunk_window=2.5), TypeError,
     r"shuffle_chunk_window must be an integer >= 1 or None, got 2\.5"),
    (dict(max_clip_bytes=True), TypeError, r"max_clip_bytes must be an integer >= 1, got True"),
    (dict(colorspace=3), ValueError, r"colorspace must be 'rgb' or 'gray', got 3"),
]


@pytest.mark.parametrize("kwargs, error, message", GULP_CASES,
                         ids=[_case_id(c[0]) for c in GULP_CASES])
def test_gulp_dataset_refuses_by_name(gulp_dir, kwargs, error, message):
    with pytest.raises(error, match=message) as e:
        tf_gulp.GulpDataset(gulp_dir, **kwargs)
    assert isinstance(e.value, ValueError)  # also what the earlier checks raised


def test_gulp_dataset_directory_must_be_a_path():
    with pytest.raises(TypeError, match=r"GulpDataset: directory must be a path \(str or "
                                        r"os.PathLike\), got 3 \(int\)"):
        tf_gulp.GulpDataset(3)


def test_gulp_dataset_accepts_numpy_integers_and_negative_seeds(gulp_dir):
    ds = tf_gulp.GulpDataset(gulp_dir, num_frames=np.int64(2), seed=-1, shuffle=np.bool_(True),
                             frames=None, scale=np.int32(2), label2idx={"a": np.int64(0),
                                                                         "b": 1})
    element = next(iter(ds))
    assert element["frames"].shape == (2, 8, 8, 3)
    ids = lambda seed: [e["id"].numpy() for e in  # noqa: E731
                        tf_gulp.GulpDataset(gulp_dir, decode=False, shuffle=True, seed=seed)]
    assert sorted(ids(-1)) == sorted(ids(2 ** 63 - 1))
    assert tf_gulp.GulpDataset(gulp_dir, frames=np.array([0, -1]), decode=False) \
        .element_spec["frames"].shape == (2,)


def _unlabeled_dir(path):
    chunk_dir = os.fspath(path)
    os.makedirs(chunk_dir)
    chunk = GulpChunk(os.path.join(chunk_dir, "data_0.gulp"), os.path.join(chunk_dir, "meta_0.gmeta"))
    with chunk.open("wb"):
        for i in range(3):
            chunk.append(f"v{i}", {"id": f"v{i}", "caption": "x", "empty": None},
                         [np.full((8, 8, 3), 10 * i, np.uint8)])
    return chunk_dir


def test_label_field_that_no_item_has_is_an_error_naming_the_fields(gulp_dir, tmp_path):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r'g: label_field "class": none of the 4 items has it \(fields their '
                             r'meta_data\[0\] has: "id", "idx", "label", "num_frames"\); pass one '
                             r'of those, or label_field=None to read without labels'):
        tf_gulp.GulpDataset(gulp_dir, label_field="class")
    labels = [int(e["label"]) for e in tf_gulp.GulpDataset(gulp_dir, label_field="idx",
                                                          decode=False)]
    assert labels == [0, 1, 0, 1]
    # The default field may be absent: an unlabeled split reads as -1.
    unlabeled = _unlabeled_dir(tmp_path / "u")
    assert [int(e["label"]) for e in tf_gulp.GulpDataset(unlabeled, decode=False)] == [-1] * 3
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r'label_field "label_": none of the 3 items has it \(fields their '
                             r'meta_data\[0\] has: "caption", "id"\)'):
        tf_gulp.GulpDataset(unlabeled, label_field="label_")


def test_label_field_check_survives_serialization(gulp_dir):
    """The rule is an attr of the op: a dataset graph rebuilt from its serialization (tf.data
    service, save) keeps it."""
    ds = tf_gulp.GulpDataset(gulp_dir, label_field="idx", decode=False)
    graph = tf.compat.v1.GraphDef()
    graph.ParseFromString(ds._as_serialized_graph().numpy())
    node, = [n for n in graph.node if n.op == "TfGulp>GulpDataset"]
    assert node.attr["label_field_required"].b
    node, = [n for n in tf.compat.v1.GraphDef.FromString(
        tf_gulp.GulpDataset(gulp_dir)._as_serialized_graph().numpy()).node
        if n.op == "TfGulp>GulpDataset"]
    assert not node.attr["label_field_required"].b


FFRECORD_CASES = [
    (dict(batch_size=32.0), TypeError,
     r"FFRecordDataset: batch_size must be an integer >= 1 or None, got 32\.0 \(float\)"),
    (dict(batch_size=True), TypeError, r"batch_size must be an integer >= 1 or None, got True"),
    (dict(batch_size=0), ValueError, r"batch_size must be an integer >= 1 or None, got 0"),
    (dict(check_data="no"), TypeError, r"check_data must be True or False"),
    (dict(batch_size=2, drop_remainder=1), TypeError, r"drop_remainder must be True or False, got 1"),
    (dict(queue_depth=2.5), TypeError, r"queue_depth must be an integer >= 1 or None, got 2\.5"),
    (dict(queue_depth="4"), TypeError, r"queue_depth must be an integer >= 1 or None, got '4'"),
    (dict(direct_io="no"), TypeError, r"direct_io must be True or False"),
]


@pytest.mark.parametrize("kwargs, error, message", FFRECORD_CASES,
                         ids=[_case_id(c[0]) for c in FFRECORD_CASES])
def test_ffrecord_dataset_refuses_by_name(kwargs, error, message):
    with pytest.raises(error, match=message):
        tf_gulp.FFRecordDataset(THREE, **kwargs)


def test_ffrecord_dataset_accepts_numpy_integers_and_negative_seeds():
    ds = tf_gulp.FFRecordDataset(THREE, batch_size=np.int64(2), shuffle=True, seed=-3,
                                 queue_depth=np.uint8(4))
    assert sorted(len(b) for b in ds.as_numpy_iterator()) == [1, 2]


# Checked before the file is opened: no file is needed.
BENZINA_CASES = [
    (DataLoader, (96,), {}, TypeError,
     r"DataLoader: shape must be \(height, width\), a pair of positive integers \(e\.g\. "
     r"\(96, 96\)\), got 96 \(int\)"),
    (DataLoader, ((96, 0),), {}, ValueError, r"shape\[1\] \(width\) must be an integer >= 1, got 0"),
    (DataLoader, ((96, 96.5),), {}, TypeError, r"shape\[1\] \(width\) must be an integer >= 1"),
    (DataLoader, ((96, 96), 32.0), {}, TypeError, r"batch_size must be an integer >= 1, got 32\.0"),
    (DataLoader, (), dict(shuffle="yes"), TypeError, r"DataLoader: shuffle must be True or False"),
    (DataLoader, (), dict(seed=2 ** 70), ValueError, rf"DataLoader: seed must be an integer in {INT64} or None, got"),
    (DataLoader, (), dict(epochs=0), ValueError, r"epochs must be an integer >= 1 or None, got 0"),
    (DataLoader, (), dict(start_epoch=-1), ValueError, r"start_epoch must be an integer >= 0, got -1"),
    (DataLoader, (), dict(track="thumb"), ValueError,
     r"track must be 'bzna_input' or 'bzna_thumb', got 'thumb'"),
    (DataLoader, (), dict(warp_transform="random"), TypeError,
     r"DataLoader: warp_transform must be a tf_gulp\.bzna\.transforms SimilarityTransform / "
     r"ConstantWarpTransform \(the kernels draw every transform in C\+\+\), got 'random'"),
    (DataLoader, (), dict(drop_remainder="no"), TypeError, r"drop_remainder must be True or False"),
    (DataLoader, (), dict(split=0), TypeError, r"split must be a string or None, got 0"),
    (BenzinaDataset, (), dict(crop="half"), ValueError, r"crop must be 'clean' or 'full', got 'half'"),
    (BenzinaDataset, (), dict(decode="no"), TypeError, r"decode must be True or False"),
    (BenzinaDataset, (), dict(splits=[(0, 1)]), TypeError, r"splits must be a mapping"),
]


@pytest.mark.parametrize("function, args, kwargs, error, message", BENZINA_CASES,
                         ids=[c[0].__name__ + "_" + _case_id(c[1], c[2]) for c in BENZINA_CASES])
def test_benzina_refuses_by_name(tmp_path, function, args, kwargs, error, message):
    with pytest.raises(error, match=message):
        function(str(tmp_path / "missing.bzna"), *args, **kwargs)


# The options every source has (tests/formats_testing.py's registry), refused alike; {D} is the
# source's name.
FORMAT_SIZE = 4  # elements of each format's tiny dataset (the each_format fixture)
SOURCE_CASES = [
    (dict(shuffle="yes"), TypeError, r"{D}: shuffle must be True or False, got 'yes' \(str\)"),
    (dict(shuffle=True, seed=2 ** 70), ValueError,
     rf"{{D}}: seed must be an integer in {INT64} or None, got {2 ** 70}"),
    (dict(seed=1.5), TypeError, r"{D}: seed must be an integer .* got 1\.5 \(float\)"),
    (dict(seed="1"), TypeError, r"{D}: seed must be an integer .* got '1' \(str\)"),
    (dict(epoch=-1), ValueError, rf"{{D}}: epoch must be an integer in {INT64_MAX_RANGE}, got -1"),
    (dict(epoch=2 ** 63), ValueError, rf"{{D}}: epoch must be an integer in {INT64_MAX_RANGE}"),
    (dict(epoch=1.5), TypeError, r"{D}: epoch must be an integer in .*, got 1\.5 \(float\)"),
    (dict(epoch=True), TypeError, r"{D}: epoch must be an integer in .*, got True \(bool\)"),
]


@pytest.mark.parametrize("kwargs, error, message", SOURCE_CASES,
                         ids=[_case_id(c[0]) for c in SOURCE_CASES])
def test_every_source_refuses_its_common_options_by_name(each_format, kwargs, error, message):
    """each_format: every format of the registry (tests/conftest.py)."""
    fmt, written = each_format
    with pytest.raises(error, match=message.replace("{D}", fmt.dataset)):
        fmt.open(written.path, **kwargs)


def test_every_source_defaults_to_a_random_seed(each_format):
    # One seed default across formats, as tf.data's: None, drawn at random where something is
    # random (a given seed repeats a run and is needed to shard a shuffled source).
    import inspect

    fmt, written = each_format
    source = getattr(tf_gulp, fmt.dataset)
    assert inspect.signature(source).parameters["seed"].default is None, fmt.name
    assert inspect.signature(DataLoader).parameters["seed"].default is None
    # Datasets made without a seed shuffle differently (four of four elements: all in one order
    # by chance once in 24**3).
    orders = {tuple(keys_of(fmt, fmt.open(written.path, shuffle=True))) for _ in range(4)}
    assert len(orders) > 1, orders


@pytest.mark.parametrize("make, error, message", [
    (lambda p: FileReader(p, check_data="no"), TypeError, r"FileReader: check_data must be True or False"),
    (lambda p: FileReader(p, queue_depth=2.5), TypeError, r"FileReader: queue_depth must be an integer >= 1, got 2\.5"),
    (lambda p: FileReader(p, direct_io=1), TypeError, r"FileReader: direct_io must be True or False"),
    (lambda p: FileReader(3), TypeError, r"FileReader: fname must be a path .* got 3 \(int\)"),
    (lambda p: FileWriter(p + ".new", 2.5), TypeError, r"FileWriter: n must be an integer >= 0, got 2\.5"),
    (lambda p: FileWriter(p + ".new", -1), ValueError, r"FileWriter: n must be an integer >= 0, got -1"),
    (lambda p: dump([b"a"], p + ".d", 1.5), TypeError, r"dump: nfiles must be an integer >= 1, got 1\.5"),
    (lambda p: dump([b"a"], p + ".d", 0), ValueError, r"dump: nfiles must be an integer >= 1, got 0"),
    (lambda p: dump([b"a"], p + ".d", 1, workers=0), ValueError, r"dump: workers must be an integer >= 1 or None, got 0"),
    (lambda p: dump([b"a"], p + ".d", 1, progress="no"), TypeError, r"dump: progress must be True or False"),
], ids=["reader_check_data", "reader_queue_depth", "reader_direct_io", "reader_fname",
        "writer_n_float", "writer_n_negative", "dump_nfiles_float", "dump_nfiles_zero",
        "dump_workers", "dump_progress"])
def test_ffrecord_readers_and_writers_refuse_by_name(tmp_path, make, error, message):
    with pytest.raises(error, match=message):
        make(THREE if "reader" in message.lower() else str(tmp_path / "x.ffr"))
    assert not os.path.exists(tmp_path / "x.ffr.d")  # nothing was written


@pytest.mark.parametrize("make, error, message", [
    (lambda d: GulpChunk(d + "/data_0.gulp", d + "/meta_0.gmeta", jpeg_quality=101), ValueError,
     r"GulpChunk: jpeg_quality must be an integer in \[1, 100\], got 101"),
    (lambda d: GulpChunk(d + "/data_0.gulp", d + "/meta_0.gmeta", jpeg_quality=90.5), TypeError,
     r"GulpChunk: jpeg_quality must be an integer in \[1, 100\], got 90\.5 \(float\)"),
    (lambda d: GulpIngestor([], d, 1.5, 1), TypeError,
     r"GulpIngestor: videos_per_chunk must be an integer >= 1, got 1\.5"),
    (lambda d: GulpIngestor([], d, 10, -1), ValueError,
     r"GulpIngestor: num_workers must be an integer >= 0, got -1"),
    (lambda d: GulpIngestor([], d, 10, 1, jpeg_quality=0), ValueError,
     r"GulpIngestor: jpeg_quality must be an integer in \[1, 100\] or None, got 0"),
    (lambda d: GulpIngestor([], d, 10, 1, skip_bad="yes"), TypeError,
     r"GulpIngestor: skip_bad must be True or False"),
    (lambda d: FrameOptions(jpeg_quality=101), ValueError,
     r"FrameOptions: jpeg_quality must be an integer in \[1, 100\], got 101"),
    (lambda d: FrameOptions(max_frames=2.5), TypeError,
     r"FrameOptions: max_frames must be an integer >= 1 or None, got 2\.5"),
], ids=["chunk_quality_range", "chunk_quality_float", "ingestor_per_chunk", "ingestor_workers",
        "ingestor_quality", "ingestor_skip_bad", "frame_options_quality", "frame_options_frames"])
def test_gulp_writers_refuse_by_name(tmp_path, make, error, message):
    with pytest.raises(error, match=message):
        make(str(tmp_path))


def test_ops_refuse_by_name():
    image = tf.zeros([4, 4, 3], tf.uint8)
    with pytest.raises(ValueError, match=r"similarity_warp: output_shape\[0\] must be an "
                                         r"integer >= 1, got 0"):
        similarity_warp(image, tf.eye(3), (0, 4))
    with pytest.raises(TypeError, match=r"similarity_warp: output_shape must be \(height, "
                                        r"width\), a pair of positive integers, got 96"):
        similarity_warp(image, tf.eye(3), 96)
    with pytest.raises(TypeError, match=r"similarity_warp: output_shape\[0\] must be an integer "
                                        r">= 1, got 2\.5"):
        similarity_warp(image, tf.eye(3), (2.5, 4))
    with pytest.raises(TypeError, match=r"decode_hevc: threads must be an integer >= 0, "
                                        r"got 1\.5 \(float\)"):
        decode_hevc(b"", threads=1.5)
    with pytest.raises(TypeError, match=r"decode_hevc: track must be a string, got 3"):
        decode_hevc(b"", track=3)


@pytest.mark.parametrize("name", ["decode_jpeg_warped", "decode_hevc_warped"])
def test_fused_decoders_check_their_outputs_by_name(name):
    """The output options of the fused decoders are checked by the rules every reader's augment
    list uses (tf_gulp/transforms.py): a height of 2.5 was truncated to 2 and ("8", "8") read
    as (8, 8); an output size where the list belongs is refused naming the list."""
    decode = getattr(tf_gulp.ops, name)
    with pytest.raises(TypeError, match=r"Resize: size\[0\] must be an integer >= 1, got 2\.5"):
        decode(b"", [T.Resize((2.5, 4))])
    with pytest.raises(TypeError, match=r"Resize: size\[1\] must be an integer >= 1, got '8'"):
        decode(b"", [T.Resize((8, "8"))])
    with pytest.raises(ValueError, match=r"Resize: size\[0\] must be an integer >= 1, got 0"):
        decode(b"", [T.Resize((0, 8))])
    for size in (96, (96, 96)):
        message = (rf"{name}: augment: {re.escape(repr(size))} is an output size, not a "
                   r"transform list: write \[Resize\(\(96, 96\)\)\]")
        with pytest.raises(TypeError, match=message):
            decode(b"", size)
    with pytest.raises(ValueError, match=r"ToDtype: dtype='float16': the kernels write float32 "
                                         r"or uint8"):
        decode(b"", [T.Resize((8, 8)), T.ToDtype("float16")])
    with pytest.raises(ValueError, match=rf"{name}: augment: Normalize\(.*\) needs "
                                         r"ToDtype\(tf\.float32, scale=True\) before it"):
        decode(b"", [T.Resize((8, 8)), T.Normalize([0.5], [2.0])])


def test_cli_int_names_the_flag():
    parse = A.cli_int(1, 100)
    assert parse("7") == 7
    with pytest.raises(Exception, match=r"must be an integer in \[1, 100\], got 101"):
        parse("101")
    with pytest.raises(Exception, match=r"must be an integer in \[1, 100\], got 'x'"):
        parse("x")


def test_gulp_directory_refuses_by_name(gulp_dir):
    from tf_gulp.gulp import GulpDirectory
    with pytest.raises(TypeError, match=r"GulpDirectory: jpeg_decoder must be a callable \(a "
                                        r"function, e\.g\. simplejpeg\.decode_jpeg\) or None, "
                                        r"got 'turbo' \(str\)"):
        GulpDirectory(gulp_dir, "turbo")
    with pytest.raises(TypeError, match=r"GulpDirectory: require_chunks must be True or False"):
        GulpDirectory(gulp_dir, require_chunks="yes")
    with pytest.raises(TypeError, match=r"GulpDirectory: output_dir must be a path"):
        GulpDirectory(None)


def test_service_ports_refuse_by_name(capsys):
    from tf_gulp import service
    with pytest.raises(ValueError, match=r"start_worker: port must be an integer in \[0, 65535\], "
                                         r"got 70000"):
        service.start_worker("localhost:1", 70000)
    with pytest.raises(SystemExit):
        service.main(["dispatcher", "--port", "-1"])
    assert "argument --port: must be an integer in [0, 65535], got -1" in capsys.readouterr().err
