"""The build settings of build_config.bzl and tools/apt-packages.txt, for Python and make.

build_config.bzl is the one place the builds' shared settings are defined (Bazel load()s it); this
module reads it for setup.py (which imports it by path) and for the Makefile (which runs it):

    python3 tools/build_settings.py get TENSORFLOW_VERSION  # one setting (a list: space-separated)
    python3 tools/build_settings.py sources        # every file the op library and _core use
    python3 tools/build_settings.py apt-packages   # tools/apt-packages.txt without comments

It needs only the standard library (it runs before the virtual environment exists).
"""

import glob
import os
import sys
from typing import Dict, Iterable, List, Union

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG_FILE = "build_config.bzl"
APT_PACKAGES_FILE = os.path.join("tools", "apt-packages.txt")

Setting = Union[str, List[str], Dict[str, List[str]]]


def load_build_config(root: str = ROOT) -> Dict[str, Setting]:
    """The upper-case settings of build_config.bzl (plain assignments, so valid Python): strings,
    lists of strings and dicts of lists of strings (CC_MODULE_DEPS)."""
    namespace: Dict[str, object] = {}
    path = os.path.join(root, CONFIG_FILE)
    with open(path, encoding="utf-8") as f:
        exec(compile(f.read(), path, "exec"), namespace)  # noqa: S102 - our own config file
    return {k: v for k, v in namespace.items() if k.isupper() and isinstance(v, (str, list, dict))}


def expand_globs(patterns: Iterable[str], exclude: Iterable[str] = (),
                 root: str = ROOT) -> List[str]:
    """Repo-relative files matching `patterns` but none of `exclude`, sorted, as Bazel's glob()."""

    def matches(pattern_list: Iterable[str]) -> set:
        found = set()
        for pattern in pattern_list:
            for path in glob.glob(os.path.join(root, pattern), recursive=True):
                if os.path.isfile(path):
                    found.add(os.path.relpath(path, root))
        return found

    return sorted(matches(patterns) - matches(exclude))


def library_sources(config: Dict[str, Setting], root: str = ROOT) -> Dict[str, List[str]]:
    """Repo-relative .cc files: {"core": [...], "ops": [...], "gpu": [...], "gpu_ops": [...],
    "pybind": [...]}, sorted ("gpu"/"gpu_ops": the GPU kernel's host side and TensorFlow glue,
    compiled with GPU_COPTS on top)."""
    return {
        "core": expand_globs(config["CORE_SRCS"], config["CORE_EXCLUDE"], root),
        "ops": expand_globs(config["OPS_SRCS"], config["OPS_EXCLUDE"], root=root),
        "gpu": expand_globs(config["GPU_SRCS"], root=root),
        "gpu_ops": expand_globs(config["GPU_OPS_SRCS"], root=root),
        "pybind": expand_globs(config["PYBIND_SRCS"], root=root),
    }


def library_inputs(config: Dict[str, Setting], root: str = ROOT) -> List[str]:
    """Every source and header of the op library and _core (for make's rebuild check)."""
    core = expand_globs(
        list(config["CORE_SRCS"]) + list(config["CORE_HDRS"]), config["CORE_EXCLUDE"], root
    )
    adapters = expand_globs(
        list(config["OPS_SRCS"]) + list(config["OPS_HDRS"])
        + list(config["GPU_SRCS"]) + list(config["GPU_HDRS"]) + [config["GPU_KERNELS_SRC"]]
        + list(config["PYBIND_SRCS"]) + list(config["PYBIND_HDRS"]),
        root=root,
    )
    return sorted(set(core) | set(adapters))


def apt_packages(root: str = ROOT) -> List[str]:
    """The Debian packages of tools/apt-packages.txt (whitespace-separated; `#` to end of line)."""
    packages = []
    with open(os.path.join(root, APT_PACKAGES_FILE), encoding="utf-8") as f:
        for line in f:
            packages.extend(line.partition("#")[0].split())
    return packages


def main(argv: List[str]) -> int:
    usage = "usage: build_settings.py get NAME | sources | apt-packages"
    if not argv:
        print(usage, file=sys.stderr)
        return 2
    if argv[0] == "get" and len(argv) == 2:
        config = load_build_config()
        if argv[1] not in config:
            print(f"build_settings.py: {CONFIG_FILE} defines no {argv[1]}", file=sys.stderr)
            return 1
        value = config[argv[1]]
        if isinstance(value, dict):  # one "key: values" line per entry
            print("\n".join(f"{k}: {' '.join(v)}" for k, v in value.items()))
        else:
            print(value if isinstance(value, str) else " ".join(value))
    elif argv == ["sources"]:
        print(" ".join(library_inputs(load_build_config())))
    elif argv == ["apt-packages"]:
        print(" ".join(apt_packages()))
    else:
        print(usage, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
