"""Which shared library is missing or broken when tf_gulp's compiled modules fail to load.

``tf_gulp._core`` and the op library link liburing, libturbojpeg, libdeflate and FFmpeg's libavcodec
/ libavutil (tools/apt-packages.txt lists their ``-dev`` packages; docs/building.md says why). When
one of them is absent at run time, or a file of that name is broken, the dynamic loader's message
names it (``liburing.so.2: cannot open shared object file: No such file or directory``,
``/x/liburing.so.2: file too short``); rebuilding tf_gulp would not help, installing the library
does. :func:`explain_load_error` turns that message into one that names the library and the Debian
package that provides it.
"""

from __future__ import annotations

import os
import re
from typing import Optional

#: Runtime library (soname without version) -> the Debian 12 package that installs it. Their
#: ``-dev`` packages in tools/apt-packages.txt depend on these.
RUNTIME_PACKAGES = {
    "liburing": "liburing2",
    "libturbojpeg": "libturbojpeg0",
    "libjpeg": "libjpeg62-turbo",
    "libdeflate": "libdeflate0",
    "libavcodec": "libavcodec59",
    "libavutil": "libavutil57",
}

# A library file named in a dlopen error: "liburing.so.2: cannot open ...", "/x/liburing.so.2: file
# too short", "libavcodec.so.59: undefined symbol ..." (possibly inside a longer message).
_EXPLAINED = "rebuilding tf_gulp does not help"
_LIBRARY_IN_ERROR = re.compile(r"((?:/[^\s:]*/)?(lib[\w+-]+?)\.so(?:\.\d+)*)\s*:\s*([^;\n]+)")


def explain_load_error(message: str, module: str) -> Optional[str]:
    """A message naming the library that kept `module` (e.g. ``"tf_gulp._core"``) from loading and
    the package to install, or None when `message` names no shared library other than tf_gulp's
    own (or is one of these messages already)."""
    if _EXPLAINED in message:
        return None
    for match in _LIBRARY_IN_ERROR.finditer(message):
        path, stem, reason = match.group(1), match.group(2), match.group(3).strip()
        if stem.startswith("lib_") or "tf_gulp" in stem:
            continue
        name = os.path.basename(path)
        package = RUNTIME_PACKAGES.get(stem)
        found = f" (found at {path})" if path != name else ""
        where = (f"install the Debian package {package} (apt-get install {package})"
                 if package else "install the package that provides it")
        return (f"{module} cannot load the shared library {name}{found}: {reason}; it is not "
                f"installed or is broken ({_EXPLAINED}): {where}; "
                "tools/apt-packages.txt and docs/building.md list what tf_gulp needs")
    return None


def import_core():
    """``tf_gulp._core``, or an ImportError naming the missing library and its package (see
    :func:`explain_load_error`); other failures say how to build it."""
    try:
        from tf_gulp import _core
    except ImportError as e:
        explained = explain_load_error(str(e), "tf_gulp's C++ module tf_gulp._core")
        raise ImportError(explained or (
            f"tf_gulp's C++ module tf_gulp._core cannot be imported ({e}); build it from the "
            "source checkout with: pip install --no-build-isolation -e .  (or make build); see "
            "docs/building.md")) from e
    return _core
