"""Every op of tf_gulp's library is named in the ``TfGulp>`` namespace (as tensorflow-io uses
``IO>``): dataset graphs (tf.data service, ``Dataset.save`` checkpoints, SavedModels) record op
names, so a name chosen once must never collide with TensorFlow's or another plugin's, and never
change. Ops shipped for tests and benchmarks only are named ``TfGulp>InternalTesting...``: no
graph a user keeps should record them, and their names are free to change."""

from __future__ import annotations

import pathlib
import re

import tensorflow as tf
from tensorflow.python.framework import op_def_registry

import tf_gulp
from gulp_testing import make_gulp_dir
from tf_gulp import _source_dataset
from tf_gulp.ops import library

NAMESPACE = "TfGulp>"
INTERNAL = NAMESPACE + "InternalTesting"


def registered_op_names() -> list[str]:
    """The ops the library registers. tf.load_op_library's module holds, for each op, a snake_case
    wrapper with an ``_eager_fallback`` twin and a raw-op alias named after the op (``>`` as
    ``_``), so a non-namespaced op would show up as a wrapper without the ``TfGulp_`` alias."""
    ops = library.load_ops()
    wrappers = [n[:-len("_eager_fallback")] for n in dir(ops) if n.endswith("_eager_fallback")]
    aliases = [n for n in dir(ops) if n.startswith("TfGulp_")]
    assert len(aliases) == len(wrappers), (wrappers, aliases)
    return [NAMESPACE + n[len("TfGulp_"):] for n in aliases]


def test_every_registered_op_is_namespaced():
    ops = library.load_ops()
    wrappers = [n for n in dir(ops) if n.endswith("_eager_fallback")]
    assert len(wrappers) >= 10, wrappers
    assert [n for n in wrappers if not n.startswith("tf_gulp_")] == []
    for name in registered_op_names():
        assert op_def_registry.get(name) is not None, name


def test_wrappers_are_the_namespaced_snake_case_names():
    ops = library.load_ops()
    for name in ("tf_gulp_gulp_dataset", "tf_gulp_ff_record_dataset", "tf_gulp_epoch_dataset",
                 "tf_gulp_benzina_dataset", "tf_gulp_similarity_warp", "tf_gulp_decode_hevc"):
        assert callable(getattr(ops, name)), name


def test_dataset_graphs_record_the_namespaced_names(tmp_path):
    make_gulp_dir(tmp_path / "g", 4, 2, 8, 8, videos_per_chunk=2)
    ds = tf_gulp.GulpDataset(str(tmp_path / "g")).apply(tf_gulp.keep_epoch_counts())
    graph = tf.compat.v1.GraphDef()
    graph.ParseFromString(ds._as_serialized_graph().numpy())  # pylint: disable=protected-access
    ops = {node.op for node in graph.node}
    assert {"TfGulp>GulpDataset", "TfGulp>EpochCountsDataset"} <= ops
    # The auto-shard check looks for the sources by these names.
    assert set(_source_dataset.source_ops()) <= set(registered_op_names())
    assert "TfGulp>GulpDataset" in _source_dataset.source_ops()


# Ops that start no dataset of tf_gulp's: element ops and datasets over another dataset.
NOT_SOURCES = {
    INTERNAL + "BznaIndexCacheStats", INTERNAL + "BznaTrackIndex",
    "TfGulp>DecodeHevc", "TfGulp>DecodeHevcWarped", "TfGulp>DecodeJpegWarped",
    "TfGulp>EpochCountsDataset", "TfGulp>HevcSampleSize", "TfGulp>KnownCardinalityDataset",
    "TfGulp>NvdecStatus", "TfGulp>SimilarityTransformMatrices",
    "TfGulp>SimilarityWarp",
}


def test_sources_are_found_from_their_registrations():
    """The auto-shard warning finds tf_gulp's sources by the epoch counter attr they register
    (op_attrs.source_ops), so a new source registered with the shared source attrs joins by
    itself; an op that is neither such a source nor listed above fails here, so a source that
    registers no epoch counter cannot be forgotten."""
    from tf_gulp.ops import op_attrs
    assert set(op_attrs.source_ops()) == {
        "TfGulp>GulpDataset", "TfGulp>FFRecordDataset", "TfGulp>BenzinaDataset",
        "TfGulp>EpochDataset"}
    unclassified = set(op_attrs.registered_ops()) - set(_source_dataset.source_ops()) - NOT_SOURCES
    assert unclassified == set(), (
        f"{sorted(unclassified)}: a new op; if it starts a dataset, register the shared source "
        f"attrs (tf_gulp/ops/framework/source_attrs.h), else add it to NOT_SOURCES")
    assert set(op_attrs.registered_ops()) == set(registered_op_names())


def test_ops_for_tests_only_are_named_internal():
    names = set(registered_op_names())
    assert {n for n in names if n.startswith(INTERNAL)} == {
        INTERNAL + "BznaTrackIndex", INTERNAL + "BznaIndexCacheStats"}
    # Their earlier names looked like promises.
    assert not {NAMESPACE + "BznaTrackIndex", NAMESPACE + "BznaIndexCacheStats"} & names


def test_no_shipped_code_path_uses_the_internal_ops():
    """Only their wrapper module calls them, and nothing in the package imports those wrappers."""
    package = pathlib.Path(tf_gulp.__file__).parent
    wrapper_module = package / "ops" / "bzna" / "bzna_ops.py"
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path != wrapper_module:
            assert "internal_testing" not in text and "InternalTesting" not in text, path
            assert not re.search(r"\b(bzna_track_index|bzna_index_cache_stats)\b", text), path
