"""A source's graph node holds every attr of its op's table with the value the op was made with,
and the inputs it was given. tf.data rebuilds a dataset from that node (tf.data service, ``save``
checkpoints, SavedModels, and its own graph rewrites before iterating), so an attr missing there
is read back as its default: the shuffle seed, the shard, the epoch silently change. The node is
written once for every source by the positional source base
(tf_gulp/ops/framework/positional_source_dataset.h)."""

from __future__ import annotations

import pathlib
from typing import Any, Dict

import numpy as np
import pytest
import tensorflow as tf
from google.protobuf import text_format
from tensorflow.python.data.ops import dataset_ops
from tensorflow.python.framework import op_def_registry

from formats_testing import FORMATS, format_params
from tf_gulp._options import attr_python_value
from tf_gulp.ops.library import load_ops

# Graphs of each source saved by the op library before the positional source base wrote the node
# (each format's own AsGraphDefInternal): the path input is "PATH", the counter's name "COUNTER".
SAVED = pathlib.Path(__file__).parent / "data" / "source_graphs"
# The options they were made with: these, shuffle=True, seed=11, epoch=3, then shard(2, 1).
SAVED_OPTIONS = {"gulp": dict(decode=False, num_frames=1, training=True),
                 "ffrecord": dict(batch_size=2), "benzina": dict(decode=False)}


def _made_with(monkeypatch, op: str) -> Dict[str, Any]:
    """The attrs the next call of the op's function is given (filled in when it is called)."""
    ops = load_ops()
    name = "TfGulp_" + op.split(">", 1)[1]
    make = getattr(ops, name)
    given: Dict[str, Any] = {}

    def recording(**kwargs):
        given.update(kwargs)
        return make(**kwargs)

    monkeypatch.setattr(ops, name, recording)
    return given


@pytest.mark.parametrize("fmt", format_params())
def test_the_graph_node_holds_every_attr_and_input(fmt, tmp_path, monkeypatch):
    written = fmt.write(tmp_path, 6)
    # Non-default source attrs (shuffle, seed, first_epoch, the shard) and the format's options
    # that make an element's content depend on the seed: a lost attr changes what is read.
    options = dict(fmt.random_options(), shuffle=True, seed=11, epoch=3)
    given = _made_with(monkeypatch, fmt.source_op)
    ds = fmt.open(written.path, **options).shard(2, 1)
    assert given["num_shards"] == 2 and given["shard_index"] == 1 and given["seed"] == 11

    graph = tf.compat.v1.GraphDef.FromString(
        ds._as_serialized_graph().numpy())  # pylint: disable=protected-access
    node, = [n for n in graph.node if n.op == fmt.source_op]
    op_def = op_def_registry.get(fmt.source_op)
    assert sorted(node.attr) == sorted(a.name for a in op_def.attr)
    for attr in op_def.attr:
        expected = given[attr.name] if attr.name in given else attr_python_value(attr.default_value)
        assert attr_python_value(node.attr[attr.name]) == pytest.approx(expected), attr.name

    # Its inputs: Const nodes holding the tensors the op was given.
    nodes = {n.name: n for n in graph.node}
    for arg, name in zip(op_def.input_arg, node.input):
        held = np.asarray(tf.make_ndarray(nodes[name.split(":")[0]].attr["value"].tensor))
        assert held.tolist() == np.asarray(given[arg.name]).tolist() != [], arg.name


def _values(ds) -> list:
    """Every element of ``ds``, each as the printable values of its tensors."""
    return [[repr(np.asarray(t).tolist()) for t in tf.nest.flatten(e)]
            for e in ds.as_numpy_iterator()]


@pytest.mark.parametrize("name", sorted(SAVED_OPTIONS))
def test_a_graph_saved_before_loads_and_reads_the_same(name, tmp_path):
    """Graphs keep a source's op and attrs by name (tf.data service, ``save()`` checkpoints,
    SavedModels): one saved by an earlier version loads, and reads what the same options read now.
    An attr renamed or removed since then fails here."""
    fmt = FORMATS[name]
    written = fmt.write(tmp_path, 6)
    graph = text_format.Parse((SAVED / f"{name}.pbtxt").read_text(), tf.compat.v1.GraphDef())
    for node in graph.node:
        if node.op == "Const":
            node.attr["value"].tensor.string_val[:] = [written.path.encode()]
        if node.op == fmt.source_op:
            # A counter of its own: the saved name was another process's.
            node.attr["epoch_counter"].s = b""
    now = fmt.open(written.path, **SAVED_OPTIONS[name], shuffle=True, seed=11, epoch=3).shard(2, 1)
    variant = tf.raw_ops.DatasetFromGraph(graph_def=graph.SerializeToString())
    # pylint: disable-next=protected-access
    saved = dataset_ops._VariantDataset(variant, now.element_spec)
    assert _values(saved) == _values(now) != []
