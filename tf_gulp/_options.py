"""A source's options, read from its op's attr table: the one place an option is declared.

Each attr of a source op's table (``ForEachAttr`` in ``tf_gulp/ops/<format>/<format>_ops.h``) that
carries a doc line is a user's option (tf_gulp/ops/framework/attr_table.h): the registration keeps
the line as the attr's description, and this module reads the registration back (the C API's op
list; ``op_def_registry`` drops descriptions) to make of it

- a keyword argument of the source's class: same name, the attr's default, a type hint
  (:func:`parameters`, for the class's ``__signature__``);
- its check, made before the op is built, raising ``TypeError`` / ``ValueError`` that names the
  argument and what it accepts (:meth:`Option.check`, by the rules of :mod:`tf_gulp._args`);
- a row of the reference page's option table (:func:`markdown_table`; tests/test_option_tables.py
  fails when a page's table is not the rendering, ``python tools/render_option_tables.py``
  rewrites them).

A doc line that starts with :data:`NONE_IS_OFF` is an option whose default means "off" (``clip_len``
0: no clips): its keyword's default is None, and the off value itself is refused.

A rule the C++ kernel checks (an attr the table cannot bound, options that exclude each other) is
checked there only; :func:`python_error` turns the kernel's ``InvalidArgumentError`` whose message
starts with an option's name into the ``ValueError`` a Python check would raise.
"""

from __future__ import annotations

import functools
import inspect
import re
import textwrap
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Optional, Sequence, Tuple

from tf_gulp import _args as A

__all__ = ["NONE_IS_OFF", "OPTION_BLOCK", "TABLE", "Option", "keyword_docs", "markdown_table",
           "op_options", "options_of", "parameters", "python_error", "render_option_block"]

#: The start of a doc line marking an option whose default means "off" (TF_GULP_NONE_IS_OFF).
NONE_IS_OFF = "[None is off] "

class _Table:
    """The default of an option a class takes by position (``FFRecordDataset(paths, 32)``): its
    ``__init__`` names it with this default, and the signature shows the table's."""

    def __repr__(self) -> str:
        return "<the attr table's default>"


#: See :class:`_Table`.
TABLE: Any = _Table()

_HINTS = {"int": "int", "float": "float", "bool": "bool", "string": "str",
          "list(int)": "Sequence[int]", "list(string)": "Sequence[str]",
          "list(float)": "Sequence[float]"}


def attr_python_value(value) -> Any:
    """An AttrValue (an attr's default, or a node's attr) as the Python value an op call takes for
    it."""
    kind = value.WhichOneof("value")
    if kind == "list":
        for field in ("s", "i", "f", "b"):
            items = list(getattr(value.list, field))
            if items:
                return [v.decode() for v in items] if field == "s" else items
        return []
    out = getattr(value, kind)
    return out.decode() if kind == "s" else out


@dataclass(frozen=True)
class Option:
    """One user option: an attr of a source op with a doc line."""

    name: str
    type: str  # the attr's type as the OpDef says it: "int", "float", "bool", "string", "list(int)"
    default: Any  # the attr's default
    minimum: Optional[int]
    allowed: Tuple[str, ...]  # a string attr's allowed values; () for any
    doc: str
    none_is_off: bool

    @property
    def python_default(self) -> Any:
        """The keyword's default: None for an option whose default means off."""
        return None if self.none_is_off else self.default

    @property
    def hint(self) -> str:
        """The keyword's type hint, as text."""
        hint = _HINTS.get(self.type, "Any")
        return f"Optional[{hint}]" if self.none_is_off else hint

    def _lowest(self) -> Optional[int]:
        if self.none_is_off and self.type == "int":
            return max(self.default + 1, self.minimum if self.minimum is not None else
                       self.default + 1)
        return self.minimum

    def _choices(self) -> Tuple[str, ...]:
        return tuple(v for v in self.allowed if not (self.none_is_off and v == self.default))

    def accepts(self) -> str:
        """What the option accepts, as the docs' table says it."""
        if self.type == "bool":
            text = "bool"
        elif self.type == "int":
            lowest = self._lowest()
            text = "int" if lowest is None else f"int >= {lowest}"
        elif self.type == "float":
            text = f"float > {self.default:g}" if self.none_is_off else "float"
        elif self.allowed:
            text = A.one_of(self._choices())
        else:
            text = _HINTS.get(self.type, self.type)
        return f"{text} or None" if self.none_is_off else text

    def check(self, value: Any, what: str = "") -> Any:
        """``value`` checked and converted to the attr's value (None: the attr's default, for an
        option whose default means off); TypeError / ValueError naming the option otherwise."""
        if value is None and self.none_is_off:
            return self.default
        name, none = self.name, self.none_is_off
        if self.type == "bool":
            return A.boolean(value, name, what=what)
        if self.type == "int":
            return A.integer(value, name, minimum=self._lowest(), what=what, none=none)
        if self.type == "float":
            out = A.real(value, name, what=what)
            if none and out <= self.default:
                raise ValueError(f"{what}{name} must be a number > {self.default:g} or None, "
                                 f"got {value!r}")
            return out
        if self.type == "string":
            if not self.allowed:
                return A.string(value, name, what=what, none=none)
            choices = self._choices()
            if not (isinstance(value, str) and value in choices):
                also = " or None" if none else ""
                raise ValueError(f"{what}{name} must be {A.one_of(choices)}{also}, "
                                 f"got {value!r}")
            return value
        if self.type == "list(int)":
            return A.integer_list(value, name, what=what)
        raise TypeError(f"tf_gulp: no Python check for attr type {self.type!r} ({name})")


def options_of(op_def) -> Tuple[Option, ...]:
    """The options of an OpDef: its attrs with a description, in table order."""
    out = []
    for attr in op_def.attr:
        if not attr.description:
            continue
        doc = attr.description
        none_is_off = doc.startswith(NONE_IS_OFF)
        if none_is_off:
            doc = doc[len(NONE_IS_OFF):]
        out.append(Option(
            name=attr.name, type=attr.type, default=attr_python_value(attr.default_value),
            minimum=attr.minimum if attr.has_minimum else None,
            allowed=tuple(v.decode() for v in attr.allowed_values.list.s),
            doc=" ".join(doc.split()), none_is_off=none_is_off))
    return tuple(out)


_OP_DEFS: Dict[str, Any] = {}


def _registered_op_def(op_name: str):
    """The OpDef of a registered op with its descriptions (``op_def_registry.get`` strips them;
    the C API's op list keeps them), read again when an op registered since is asked for."""
    if op_name not in _OP_DEFS:
        from tensorflow.core.framework import op_def_pb2
        from tensorflow.python.client import pywrap_tf_session as c_api
        buffer = c_api.TF_GetAllOpList()
        try:
            op_list = op_def_pb2.OpList.FromString(c_api.TF_GetBuffer(buffer))
        finally:
            c_api.TF_DeleteBuffer(buffer)
        _OP_DEFS.update((op.name, op) for op in op_list.op if op.name.startswith("TfGulp"))
    if op_name not in _OP_DEFS:
        raise KeyError(f"no op named {op_name!r} is registered")
    return _OP_DEFS[op_name]


@functools.lru_cache(maxsize=None)
def op_options(op_name: str) -> Tuple[Option, ...]:
    """The options of a registered op (loads the op library)."""
    from tf_gulp.ops.library import load_ops
    load_ops()
    return options_of(_registered_op_def(op_name))


def parameters(options: Iterable[Option]) -> list:
    """Keyword-only ``inspect.Parameter``s of the options (their hint as text, as ``from
    __future__ import annotations`` leaves a class's own)."""
    return [inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY,
                              default=o.python_default, annotation=o.hint) for o in options]


def _default_text(option: Option) -> str:
    value = option.python_default
    if isinstance(value, bool) or value is None:
        return str(value)
    return repr(value)


def markdown_table(options: Sequence[Option]) -> str:
    """The reference page's option table: one row per option, in table order."""
    rows = ["| option | accepts | default | what it does |", "|---|---|---|---|"]
    for o in options:
        rows.append(f"| `{o.name}` | {o.accepts()} | `{_default_text(o)}` | "
                    f"{o.doc.replace('|', '/')} |")
    return "\n".join(rows)


# What eager execution wraps a kernel's message in: "{{function_node ...}} " before it, and
# " [Op:NAME] name: " after it.
_FUNCTION_PREFIX = re.compile(r"^\{\{function_node [^}]*\}\}\s*")
_OP_SUFFIX = re.compile(r"\s*\[Op:[^\]]*\][^\n]*$", re.S)
_FIRST_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)")


def python_error(error: BaseException, names: Iterable[str], what: str) -> Optional[ValueError]:
    """The ``ValueError`` for a kernel's refusal of the options when it is made
    (``tf.errors.InvalidArgumentError``) whose message starts with one of ``names`` (the class's
    keywords); None for any other error (it is raised as it is)."""
    import tensorflow as tf
    if not isinstance(error, tf.errors.InvalidArgumentError):
        return None
    message = _OP_SUFFIX.sub("", _FUNCTION_PREFIX.sub("", error.message))
    first = _FIRST_NAME.match(message)
    if first is None or first.group(1) not in set(names):
        return None
    return ValueError(f"{what}{message}")


def render_option_block(text: str, render) -> str:
    """``text`` with every ``<!-- options OP -->`` ... ``<!-- /options -->`` block replaced by
    ``render(OP)``."""
    def replace(match):
        return f"{match.group(1)}\n{render(match.group(2))}\n{match.group(3)}"
    return OPTION_BLOCK.sub(replace, text)


#: A reference page's generated option table: ``<!-- options TfGulp>GulpDataset -->`` ... end.
OPTION_BLOCK = re.compile(r"(<!-- options (\S+) -->)\n.*?\n?(<!-- /options -->)", re.S)


def keyword_docs(options: Sequence[Option]) -> str:
    """The options as a docstring's ``Args`` lines."""
    return "\n".join(
        textwrap.fill(f"{o.name}: {o.doc} ({o.accepts()}; default {_default_text(o)}).", 98,
                      initial_indent="      ", subsequent_indent="        ")
        for o in options)
