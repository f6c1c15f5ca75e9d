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
from formats_testing import FORMATS, REPO
from gulp_testing import make_gulp_dir
from tf_gulp import _source_dataset
from tf_gulp.ops import library

NAMESPACE = "TfGulp>"
INTERNAL = NAMESPACE + "InternalTesting"
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


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


def test_every_op_has_a_python_wrapper_and_a_page():
    """An op registered in C++ is called by a Python wrapper of tf_gulp (the generated
    ``tf_gulp_<snake>`` function, in tf_gulp/ops/**/*.py) or is the ``_OP`` of a source class
    (``OptionSourceDataset._make_op`` calls it), and is named in the docs (by its name or the
    wrapper's): a registration alone, unreachable or undocumented, fails here."""
    ops = library.load_ops()
    package = pathlib.Path(tf_gulp.__file__).parent
    python = "\n".join(p.read_text(encoding="utf-8") for p in (package / "ops").rglob("*.py"))
    classes = {m.group(1)[len(NAMESPACE):].lower() for p in package.rglob("*.py")
               for m in re.finditer(r'_OP = "(TfGulp>\w+)"', p.read_text(encoding="utf-8"))}
    assert {"gulpdataset", "ffrecorddataset"} <= classes
    docs = "\n".join(p.read_text(encoding="utf-8") for p in DOCS)
    wrappers = {n[:-len("_eager_fallback")] for n in dir(ops) if n.endswith("_eager_fallback")}
    assert {"tf_gulp_gulp_dataset", "tf_gulp_ff_record_dataset"} <= wrappers
    assert sorted(w for w in wrappers if not re.search(rf"\b{w}\b", python)
                  and w[len("tf_gulp_"):].replace("_", "") not in classes) == [], (
        "registered ops no Python wrapper calls")
    undocumented = []
    for name in registered_op_names():
        short = name[len(NAMESPACE):]
        snake = [w[len("tf_gulp_"):] for w in wrappers
                 if w.replace("_", "") == ("tf_gulp_" + short).replace("_", "").lower()]
        if not any(re.search(rf"\b{n}\b", docs) for n in [short] + snake):
            undocumented.append(name)
    assert undocumented == [], "registered ops no page of docs/ names"


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


VARIANT = 21  # tensorflow.DataType DT_VARIANT: a dataset handle


def dataset_ops() -> dict:
    """{op: (takes a dataset, has the epoch counter attr)} for every op that makes a dataset."""
    out = {}
    for name in registered_op_names():
        op_def = op_def_registry.get(name)
        if any(a.type == VARIANT for a in op_def.output_arg):
            out[name] = (any(a.type == VARIANT for a in op_def.input_arg),
                         any(a.name == "epoch_counter" for a in op_def.attr))
    return out


def test_sources_are_found_from_their_registrations():
    """The auto-shard warning finds tf_gulp's sources by the epoch counter attr they register
    (op_attrs.source_ops), so a new source registered with the shared source attrs joins by
    itself. Every op is classified from its registration: a dataset op that takes no dataset
    is a source and must register the epoch counter; every format's source op of the registry
    (tests/formats_testing.py) is one."""
    from tf_gulp.ops import op_attrs
    datasets = dataset_ops()
    sources = {op for op, (over_dataset, _) in datasets.items() if not over_dataset}
    assert {op for op, (_, counter) in datasets.items() if counter} == sources, (
        "a dataset op that takes no dataset registers no epoch counter: register the shared "
        "source attrs (tf_gulp/ops/framework/source_attrs.h)")
    assert set(op_attrs.source_ops()) == sources
    assert {f.source_op for f in FORMATS.values() if f.source_op} <= sources
    assert set(op_attrs.registered_ops()) == set(registered_op_names())


def test_every_dataset_op_has_an_op_test():
    """Each op that makes a dataset (a format's source, the epoch datasets) has its C++ op test,
    tests/ops/<kernel>_op_test.cc (tests/ops/dataset_op_harness.h): found from the
    registrations, so a new source without one fails."""
    tests = {p.name[:-len("_op_test.cc")].replace("_", ""): p
             for p in (REPO / "tests" / "ops").glob("*_op_test.cc")}
    missing = [op for op in dataset_ops() if op[len(NAMESPACE):].lower() not in tests]
    assert missing == [], "dataset ops without a tests/ops/*_op_test.cc"
    for f in FORMATS.values():
        assert (f.source_op is None) == bool(f.lacks("source_op")), f.name


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
