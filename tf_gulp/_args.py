"""Checks of public arguments, made when a function or constructor is called.

Every public constructor and function of tf_gulp checks its arguments here, before anything is
read or any op is built, so that a mistake is answered at once with a message that names the
argument, the value given and what is allowed (``GulpDataset: num_frames must be an integer >= 1
or None, got 8.5 (float)``) instead of being truncated silently (``int(8.5)`` is 8), accepted
because it is truthy (``shuffle='yes'``), or refused later by an unrelated line.

The rules:

- integers are Python ``int`` or numpy integers; ``bool`` is not an integer here (``True`` as a
  batch size is a mistake), nor is a float with an integral value (``32.0``);
- booleans are ``bool`` or ``numpy.bool_`` (``'yes'``, ``1`` and ``None`` are refused);
- a value of the wrong type raises :class:`WrongTypeError` (a ``TypeError`` that is also a
  ``ValueError``, so code that caught the ``ValueError`` some of these raised before still does);
  a value of the right type outside its range or its choices raises ``ValueError``.

The command line uses the same rules through :func:`cli_int` (argparse ``type=``), so that a flag's
error names the flag (``argument --jpeg-quality: must be an integer in [1, 100], got 101``).

This module imports neither TensorFlow nor numpy (numpy's scalar types are recognized by the
abstract number types they register with): the writers, readers and commands that work without
TensorFlow use it too, and ``tf-gulp`` starts without numpy. Allowed values and minimums of the ops' attrs are read from the
op registrations (:mod:`tf_gulp.ops.op_attrs`), not repeated here.
"""

from __future__ import annotations

import argparse
import numbers
import os
from typing import Any, Callable, Collection, Optional, Tuple

__all__ = ["WrongTypeError", "boolean", "choice", "cli_int", "integer", "integer_list",
           "one_of", "optional_callable", "optional_integer", "path", "real", "seed", "string"]

#: The range of an int64 attr (the ops' ``seed``): what a seed may be.
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


class WrongTypeError(TypeError, ValueError):
    """An argument of the wrong type. Also a ``ValueError``: several of these checks raised
    ``ValueError`` before they were made strict, and callers may catch that."""


def _got(value: Any) -> str:
    return f"got {value!r} ({type(value).__name__})"


def _range_text(minimum: Optional[int], maximum: Optional[int]) -> str:
    if minimum is not None and maximum is not None:
        return f" in [{minimum}, {maximum}]"
    if minimum is not None:
        return f" >= {minimum}"
    if maximum is not None:
        return f" <= {maximum}"
    return ""


def _is_numpy_bool(value: Any) -> bool:
    return type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")


def is_integer(value: Any) -> bool:
    """An ``int`` or a numpy integer (both ``numbers.Integral``), not a ``bool``."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) \
        and not _is_numpy_bool(value)


def integer(value: Any, name: str, *, minimum: Optional[int] = None,
            maximum: Optional[int] = None, what: str = "", none: bool = False) -> int:
    """``value`` as a Python int, or an error naming ``name`` (prefixed by ``what``, e.g.
    ``"GulpDataset: "``), the value and the allowed range."""
    allowed = f"an integer{_range_text(minimum, maximum)}{' or None' if none else ''}"
    if not is_integer(value):
        raise WrongTypeError(f"{what}{name} must be {allowed}, {_got(value)}")
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ValueError(f"{what}{name} must be {allowed}, got {value}")
    return value


def optional_integer(value: Any, name: str, *, minimum: Optional[int] = None,
                     maximum: Optional[int] = None, what: str = "") -> Optional[int]:
    """:func:`integer`, or None when ``value`` is None."""
    if value is None:
        return None
    return integer(value, name, minimum=minimum, maximum=maximum, what=what, none=True)


def seed(value: Any, name: str = "seed", *, what: str = "", none: bool = True) -> Optional[int]:
    """A seed: an integer the ops' int64 ``seed`` attr holds (negative seeds are seeds too), or
    None (a random one is drawn) when ``none``."""
    if value is None and none:
        return None
    return integer(value, name, minimum=INT64_MIN, maximum=INT64_MAX, what=what, none=none)


def boolean(value: Any, name: str, *, what: str = "") -> bool:
    """``value`` as a bool: ``True``/``False`` (or numpy's), nothing merely truthy."""
    if not isinstance(value, bool) and not _is_numpy_bool(value):
        raise WrongTypeError(f"{what}{name} must be True or False, {_got(value)}")
    return bool(value)


def real(value: Any, name: str, *, minimum: Optional[float] = None,
         maximum: Optional[float] = None, what: str = "") -> float:
    """A real number (int, float or numpy scalar; not a bool) within the bounds, as a float."""
    allowed = f"a number{_range_text(minimum, maximum)}"
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or _is_numpy_bool(value):
        raise WrongTypeError(f"{what}{name} must be {allowed}, {_got(value)}")
    out = float(value)
    if out != out or (minimum is not None and out < minimum) or \
            (maximum is not None and out > maximum):
        raise ValueError(f"{what}{name} must be {allowed}, got {value!r}")
    return out


def string(value: Any, name: str, *, what: str = "", none: bool = False) -> Optional[str]:
    """A ``str`` (or None when ``none``)."""
    if value is None and none:
        return None
    if not isinstance(value, str):
        allowed = "a string or None" if none else "a string"
        raise WrongTypeError(f"{what}{name} must be {allowed}, {_got(value)}")
    return value


def one_of(values: Collection[Any]) -> str:
    """``'a', 'b' or 'c'``: the allowed values as a message lists them."""
    quoted = [repr(v) for v in values]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def choice(value: Any, name: str, allowed: Collection[Any], *, what: str = "") -> Any:
    """``value`` when it is one of ``allowed`` (compared with ``==``, of the same type as the
    allowed values: ``2.0`` is not the choice ``2``)."""
    for option in allowed:
        if type(value) is type(option) and value == option:  # pylint: disable=unidiomatic-typecheck
            return value
        if is_integer(option) and is_integer(value) and value == option:
            return int(value)
    raise ValueError(f"{what}{name} must be {one_of(allowed)}, got {value!r}")


def integer_list(value: Any, name: str, *, what: str = "") -> list:
    """A sequence of integers (a list, tuple, range or 1-D integer array) as a list of ints; a
    string or a single number is refused."""
    if type(value).__module__ == "numpy" and hasattr(value, "dtype"):  # an array
        if value.ndim != 1 or value.dtype.kind not in "iu":
            raise WrongTypeError(f"{what}{name} must be a list of integers, got an array of "
                                 f"{value.dtype} with shape {value.shape}")
        return [int(v) for v in value]
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, range)):
        raise WrongTypeError(f"{what}{name} must be a list of integers, {_got(value)}")
    out = []
    for i, v in enumerate(value):
        if not is_integer(v):
            raise WrongTypeError(f"{what}{name}[{i}] must be an integer, {_got(v)}")
        out.append(int(v))
    return out


def optional_callable(value: Any, name: str, *, what: str = "", example: str = "") -> Any:
    """``value`` when it is callable or None; ``example`` says what one looks like."""
    if value is not None and not callable(value):
        like = f" (a function, e.g. {example})" if example else " (a function)"
        raise WrongTypeError(f"{what}{name} must be a callable{like} or None, {_got(value)}")
    return value


def path(value: Any, name: str, *, what: str = "") -> str:
    """A path: ``str``, ``bytes`` or ``os.PathLike``, as a str."""
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise WrongTypeError(f"{what}{name} must be a path (str or os.PathLike), {_got(value)}")
    return os.fsdecode(value)


def cli_int(minimum: Optional[int] = None,
            maximum: Optional[int] = None) -> Callable[[str], int]:
    """An argparse ``type=`` for an integer flag within ``[minimum, maximum]``. argparse puts the
    flag's name in front of the message: ``argument --jpeg-quality: must be an integer in [1,
    100], got 101``."""
    allowed = f"an integer{_range_text(minimum, maximum)}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {text!r}") from None
        if (minimum is not None and value < minimum) or \
                (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {value}")
        return value

    parse.__name__ = "integer"  # what argparse says when it cannot tell more
    return parse


def output_shape(shape: Any, what: str = "") -> Tuple[int, int]:
    """``shape`` checked: (height, width), two positive integers (an output picture's size)."""
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__len__") or len(shape) != 2:
        raise WrongTypeError(f"{what}shape must be (height, width), a pair of positive "
                             f"integers (e.g. (96, 96)), got {shape!r} ({type(shape).__name__})")
    return (integer(shape[0], "shape[0] (height)", minimum=1, what=what),
            integer(shape[1], "shape[1] (width)", minimum=1, what=what))
