"""What the registered ops say about their attrs: allowed strings, minimums and defaults.

Each op's registration (its attr table in ``<family>_ops.h``, registered by ``<family>_ops.cc``, or
the ``REGISTER_OP`` of its ``*_op.cc``) is the one place an option's allowed values, minimum and
default are written: ``colorspace: {'rgb', 'gray'} = 'rgb'``,
``max_clip_bytes: int >= 1 = 1073741824``. TensorFlow checks attrs against it too, but its message
differs between eager and graph mode and, in eager mode, carries the whole op signature; so the
Python wrappers check an option here first, against the same registration, and raise a
``ValueError`` that names the option and what it accepts.
"""

from __future__ import annotations

from typing import Any, Tuple

from tensorflow.core.framework import attr_value_pb2, op_def_pb2
from tensorflow.python.framework import op_def_registry

from tf_gulp._args import one_of
from tf_gulp.ops.library import load_ops

__all__ = ["allowed_values", "attr_default", "check_attr", "minimum", "registered_ops",
           "source_ops"]

# The attr every source op registers: its epoch counter (the sources' shared attrs,
# tf_gulp/ops/framework/source_attrs.h, and EpochDataset's, where a pipeline of plain tf.data ops
# starts its passes).
SOURCE_ATTR = "epoch_counter"


def _attr(op_name: str, attr_name: str) -> op_def_pb2.OpDef.AttrDef:
    load_ops()  # registers the ops
    op_def = op_def_registry.get(op_name)
    if op_def is None:
        raise KeyError(f"no op named {op_name!r} is registered")
    for attr in op_def.attr:
        if attr.name == attr_name:
            return attr
    raise KeyError(f"op {op_name!r} has no attr {attr_name!r}")


def registered_ops() -> Tuple[str, ...]:
    """The names of every op the library registers (``TfGulp>...``), sorted. The loaded module
    holds, for each op, a raw-op alias named after it with ``>`` as ``_``."""
    ops = load_ops()
    return tuple(sorted("TfGulp>" + n[len("TfGulp_"):] for n in dir(ops) if n.startswith("TfGulp_")))


def source_ops() -> Tuple[str, ...]:
    """The ops that start a dataset of tf_gulp's: those registered with an epoch counter attr
    (each source counts its passes), read from the registrations, so a new source joins by
    registering its attrs (``SourceAttrs``) and no list needs to be told."""
    return tuple(n for n in registered_ops()
                 if any(a.name == SOURCE_ATTR for a in op_def_registry.get(n).attr))


def allowed_values(op_name: str, attr_name: str) -> Tuple[str, ...]:
    """The strings a string attr allows, in registration order; () when it allows any."""
    return tuple(v.decode() for v in _attr(op_name, attr_name).allowed_values.list.s)


def minimum(op_name: str, attr_name: str) -> Any:
    """An int attr's minimum; None when it has none."""
    attr = _attr(op_name, attr_name)
    return attr.minimum if attr.has_minimum else None


def attr_default(op_name: str, attr_name: str) -> Any:
    """An attr's default, as a Python value (str, int, bool, float or a list of them)."""
    value = _attr(op_name, attr_name).default_value
    kind = value.WhichOneof("value")
    if kind is None:
        raise KeyError(f"attr {attr_name!r} of op {op_name!r} has no default")
    if kind == "list":
        lst: attr_value_pb2.AttrValue.ListValue = value.list
        for field in ("s", "i", "f", "b"):
            if getattr(lst, field):
                items = list(getattr(lst, field))
                return [v.decode() for v in items] if field == "s" else items
        return []
    out = getattr(value, kind)
    return out.decode() if kind == "s" else out


def check_attr(op_name: str, attr_name: str, value: Any, *, what: str = "") -> Any:
    """Returns `value` when the op's registration accepts it for `attr_name`; otherwise raises
    ValueError naming the option (prefixed by `what`, e.g. ``"similarity_warp: "``) and the
    allowed values or the minimum."""
    attr = _attr(op_name, attr_name)
    allowed = [v.decode() for v in attr.allowed_values.list.s]
    if allowed and value not in allowed:
        raise ValueError(f"{what}{attr_name} must be {one_of(allowed)}, got {value!r}")
    if attr.has_minimum and attr.type == "int" and value < attr.minimum:
        raise ValueError(f"{what}{attr_name} must be at least {attr.minimum}, got {value!r}")
    return value
