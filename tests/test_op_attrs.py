"""Options are written once, in the op registrations: the allowed values of string options
(enum attrs), the minimums of int options and the defaults. Python reads them from the registered
op defs (tf_gulp/ops/op_attrs.py) and checks an option before making the op, with a ValueError that
names the option and what it accepts; the public constructors' defaults agree with the ops'."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
import tensorflow as tf
from tensorflow.python.framework import op_def_registry

import tf_gulp
from ffrecord_testing import FIXTURES
from gulp_testing import make_gulp_dir
from tf_gulp.gulp import dataset as gulp_dataset
from tf_gulp.gulp.index import DEFAULT_MAX_CLIP_BYTES
from tf_gulp.ops import op_attrs
from tf_gulp.ops.library import load_ops

GULP = "TfGulp>GulpDataset"
FFRECORD = "TfGulp>FFRecordDataset"
THREE = FIXTURES / "three.ffr"

# Every option of a fixed set of values, with the values it takes.
ENUMS = {
    (GULP, "frame_mode"): ("all", "slice", "indices", "segments", "clips"),
    (GULP, "crops"): ("none", "center", "three"),
    (GULP, "colorspace"): ("rgb", "gray"),
    (GULP, "dct_method"): ("fast", "accurate"),
    (FFRECORD, "io_engine"): ("auto", "io_uring", "pread"),
    ("TfGulp>DecodeHevc", "crop"): ("clean", "full"),
    ("TfGulp>DecodeHevc", "chroma_upsampling"): ("bilinear", "nearest"),
    ("TfGulp>SimilarityWarp", "layout"): ("NHWC", "NCHW"),
}


@pytest.fixture(scope="module")
def gulp_dir(tmp_path_factory):
    return make_gulp_dir(tmp_path_factory.mktemp("g") / "g", num_videos=2, frames_per_video=2,
                         height=8, width=8, videos_per_chunk=2)["path"]


@pytest.mark.parametrize("op, attr", sorted(ENUMS))
def test_string_options_are_enum_attrs(op, attr):
    load_ops()
    op_def = op_def_registry.get(op)
    (attr_def,) = [a for a in op_def.attr if a.name == attr]
    assert tuple(v.decode() for v in attr_def.allowed_values.list.s) == ENUMS[op, attr]
    assert op_attrs.allowed_values(op, attr) == ENUMS[op, attr]


def test_no_string_option_is_left_unchecked():
    """A string attr that is not an enum takes free text (paths, ids, names), never a choice."""
    load_ops()
    free_text = {(GULP, "label_field"), (GULP, "epoch_counter"), (FFRECORD, "epoch_counter"),
                 ("TfGulp>DecodeHevc", "track"), ("TfGulp>BznaDataset", "epoch_counter"),
                 ("TfGulp>EpochDataset", "epoch_counter")}
    for op in (GULP, FFRECORD, "TfGulp>DecodeHevc", "TfGulp>SimilarityWarp",
               "TfGulp>BznaDataset", "TfGulp>EpochDataset"):
        for a in op_def_registry.get(op).attr:
            if a.type == "string":
                assert bool(a.allowed_values.list.s) != ((op, a.name) in free_text), (op, a.name)


def test_io_engine_values_are_the_cores():
    """The op's io_engine values are the C++ core's names (what FileReader accepts too)."""
    from tf_gulp.ffrecord.reader import FileReader
    for engine in op_attrs.allowed_values(FFRECORD, "io_engine"):
        if engine == "io_uring":
            continue  # may be unavailable here
        with FileReader(str(THREE), io_engine=engine) as r:
            assert r.io_engine in ("io_uring", "pread")
    with pytest.raises(ValueError, match=r"io_engine must be 'auto', 'io_uring' or 'pread', "
                                         r"got 'aio'"):
        FileReader(str(THREE), io_engine="aio")


def test_minimums_are_attrs():
    assert op_attrs.minimum(GULP, "shuffle_chunk_window") == 0  # 0: the uniform shuffle
    assert op_attrs.minimum(GULP, "max_clip_bytes") == 1
    assert op_attrs.minimum(FFRECORD, "batch_size") == 0
    assert op_attrs.minimum(FFRECORD, "queue_depth") == 0
    assert op_attrs.minimum(GULP, "seed") is None


@pytest.mark.parametrize("kwargs, message", [
    (dict(colorspace="cmyk"), r"colorspace must be 'rgb' or 'gray', got 'cmyk'"),
    (dict(dct_method="slow"), r"dct_method must be 'fast' or 'accurate', got 'slow'"),
    (dict(shuffle_chunk_window=0), r"shuffle_chunk_window must be an integer >= 1 or None, "
                                   r"got 0"),
    (dict(max_clip_bytes=0), r"max_clip_bytes must be an integer >= 1, got 0"),
])
def test_gulp_bad_choice_is_a_clear_value_error(gulp_dir, kwargs, message):
    with pytest.raises(ValueError, match=message):
        tf_gulp.GulpDataset(gulp_dir, **kwargs)


def test_gulp_bad_choice_in_a_graph_is_the_same_error(gulp_dir):
    @tf.function
    def make(path):
        return tf_gulp.GulpDataset(path, colorspace="cmyk")

    with pytest.raises(ValueError, match=r"colorspace must be 'rgb' or 'gray', got 'cmyk'"):
        make.get_concrete_function(tf.constant(gulp_dir))


def test_ffrecord_bad_options():
    with pytest.raises(ValueError, match=r"io_engine must be 'auto', 'io_uring' or 'pread', "
                                         r"got 'aio'"):
        tf_gulp.FFRecordDataset(THREE, io_engine="aio")
    with pytest.raises(ValueError, match=r"queue_depth must be an integer >= 1 or None, got 0"):
        tf_gulp.FFRecordDataset(THREE, queue_depth=0)
    # The upper limit is the C++ core's kMaxQueueDepth, checked by the kernel.
    assert len(list(tf_gulp.FFRecordDataset(THREE, queue_depth=4096))) == 3
    with pytest.raises(ValueError, match=r"FFRecordDataset: queue_depth must be at most 4096, "
                                         r"got 4097"):
        tf_gulp.FFRecordDataset(THREE, queue_depth=4097)


def test_op_checks_what_python_does_not():
    """Called directly, the op itself rejects what its attrs do not allow."""
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError), match="io_engine"):
        load_ops().tf_gulp_ff_record_dataset(paths=str(THREE), io_engine="aio")
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError), match="batch_size"):
        load_ops().tf_gulp_ff_record_dataset(paths=str(THREE), batch_size=-1)


def test_other_ops_bad_choices():
    with pytest.raises(ValueError, match=r"decode_hevc: crop must be 'clean' or 'full', "
                                         r"got 'half'"):
        tf_gulp.ops.decode_hevc(b"", crop="half")
    with pytest.raises(ValueError, match=r"similarity_warp: layout must be 'NHWC' or 'NCHW', "
                                         r"got 'HWC'"):
        tf_gulp.ops.similarity_warp(tf.zeros((1, 4, 4, 3), tf.uint8), tf.eye(3)[None], (4, 4),
                                    layout="HWC")


def test_channels_cover_the_colorspaces():
    assert set(gulp_dataset._CHANNELS) == set(op_attrs.allowed_values(GULP, "colorspace"))


def _public_defaults(cls):
    return {name: p.default for name, p in inspect.signature(cls).parameters.items()
            if p.default is not inspect.Parameter.empty}


@pytest.mark.parametrize("cls, op, exceptions", [
    # None for GulpDataset's ids (the op's []), num_frames (frame_mode "segments" only) and seed
    # (a random one); warp, bias, norm and color None are the op's [] (transform objects or
    # numbers encoded as floats); shuffle_chunk_window None is the op's 0 (the uniform shuffle);
    # clip_len None is no clips (frame_mode "clips" only), crops None the op's 'none' and
    # target_fps None the op's 0.
    (tf_gulp.GulpDataset, GULP, {"ids", "num_frames", "seed", "warp", "bias", "norm", "color",
                                 "shuffle_chunk_window", "clip_len", "crops", "target_fps"}),
    # batch_size/queue_depth None is the op's 0; seed None is a random one.
    (tf_gulp.FFRecordDataset, FFRECORD, {"batch_size", "queue_depth", "seed"}),
])
def test_constructor_defaults_are_the_ops(cls, op, exceptions):
    """Where a constructor argument is an attr of the same name, its default is the attr's."""
    load_ops()
    attrs = {a.name for a in op_def_registry.get(op).attr}
    compared = 0
    for name, default in _public_defaults(cls).items():
        if name in attrs and name not in exceptions:
            assert default == op_attrs.attr_default(op, name), name
            compared += 1
    assert compared >= 5


def test_max_clip_bytes_default_is_the_cores():
    assert op_attrs.attr_default(GULP, "max_clip_bytes") == DEFAULT_MAX_CLIP_BYTES


def test_wrappers_name_the_ops():
    assert tf_gulp.GulpDataset._OP == GULP and tf_gulp.FFRecordDataset._OP == FFRECORD


# TensorFlow's own dataset-op attrs: DatasetGraphDefBuilder::AddDataset writes them itself, so a
# pass-through dataset op registers them by hand and no table holds them.
_TF_DATASET_ATTRS = ("output_types", "output_shapes")
_OPS_ROOT = Path(__file__).resolve().parents[1] / "tf_gulp" / "ops"


def test_every_attr_is_declared_in_an_attr_table():
    # An attr is written once, in a table (tf_gulp/ops/framework/attr_table.h) that registers it,
    # reads it in the kernel and writes it to the graph: no `.Attr("...")` by hand in a
    # registration and no `ctx->GetAttr` in a kernel (shape functions read attrs with
    # `c->GetAttr`, from the registration).
    by_hand = []
    for path in sorted(_OPS_ROOT.rglob("*.cc")) + sorted(_OPS_ROOT.rglob("*.h")):
        text = path.read_text()
        for match in re.finditer(r'\.Attr\("(\w+)', text):
            if match.group(1) not in _TF_DATASET_ATTRS:
                by_hand.append(f"{path.relative_to(_OPS_ROOT)}: .Attr({match.group(1)!r})")
        for match in re.finditer(r'ctx->GetAttr\("(\w+)"', text):
            by_hand.append(f"{path.relative_to(_OPS_ROOT)}: ctx->GetAttr({match.group(1)!r})")
    assert not by_hand, by_hand


# The fused output stage (FusedWarpAttrs, tf_gulp/ops/image/fused_warp_args.h): one table, so the
# three ops that decode fused with a warp register its attrs alike.
_FUSED_OPS = (GULP, "TfGulp>DecodeJpegWarped", "TfGulp>DecodeHevcWarped")
_FUSED_ATTRS = ("output_type", "warp", "output_height", "output_width", "bias", "norm")


def test_fused_warp_attrs_are_one_declaration():
    defs = {}
    for op in _FUSED_OPS:
        load_ops()
        attrs = {a.name: a for a in op_def_registry.get(op).attr}
        defs[op] = [attrs[name].SerializeToString(deterministic=True) for name in _FUSED_ATTRS]
    assert defs[_FUSED_OPS[1]] == defs[_FUSED_OPS[0]] == defs[_FUSED_OPS[2]]
