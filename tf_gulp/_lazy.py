"""Lazy exports, written once for every package that has them: a name is imported from its module
the first time it is asked for, so that importing a package (``tf_gulp``, ``tf_gulp.gulp``,
``tf_gulp.ffrecord``, ...) stays cheap and does not import TensorFlow."""

from __future__ import annotations

import importlib
from typing import Any, Callable, Dict, Iterable, List, Tuple


def lazy_exports(package: str, names: Dict[str, str], public: Iterable[str] = (),
                 ) -> Tuple[Callable[[str], Any], Callable[[], List[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``: ``names`` maps each lazy name to
    its module (a name that is a module itself maps to that module with a trailing ``:``, e.g.
    ``{"transforms": "tf_gulp.transforms:"}``); ``public`` (its ``__all__``) joins ``dir()``."""
    public = list(public)

    def __getattr__(name: str) -> Any:  # pylint: disable=invalid-name
        target = names.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if target.endswith(":"):
            value = importlib.import_module(target[:-1])
        else:
            value = getattr(importlib.import_module(target), name)
        package_module = importlib.import_module(package)
        setattr(package_module, name, value)  # later lookups do not come here
        return value

    def __dir__() -> List[str]:  # pylint: disable=invalid-name
        return sorted(set(importlib.import_module(package).__dict__) | set(public) | set(names))

    return __getattr__, __dir__
