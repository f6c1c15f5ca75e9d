"""The C++ core's layering (build_config.bzl's CC_MODULE_DEPS) holds in the sources.

Bazel builds one library per core module with exactly the dependencies of that table (cc/BUILD), so
a header outside a module's dependencies is missing from its compile sandbox and the build fails.
That check is transitive (gulp -> codec -> mp4 lets gulp see mp4's headers) and only covers what
Bazel compiles. This test reads every file under cc/ and checks each ``#include "cc/<module>/..."``
against the module's *direct* dependencies (Bazel 4's layering_check, which would, needs clang), and
that Bazel's per-module libraries and pip's CORE_SRCS globs compile the same files.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
from typing import Dict, Iterable, List

# The runfiles tree under Bazel (cc/ is declared data: //cc:sources), the checkout under pytest.
REPO_ROOT = pathlib.Path(os.path.abspath(__file__)).parent.parent

_spec = importlib.util.spec_from_file_location(
    "_tf_gulp_build_settings_layering", REPO_ROOT / "tools" / "build_settings.py")
settings = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(settings)

CONFIG = settings.load_build_config(str(REPO_ROOT))
DEPS: Dict[str, List[str]] = CONFIG["CC_MODULE_DEPS"]
CORE_MODULES: List[str] = CONFIG["CORE_MODULES"]

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"cc/([^/"]+)/', re.M)
SOURCE_SUFFIXES = (".h", ".cc", ".cu", ".inc")


def source_files(cc_root: pathlib.Path) -> Iterable[pathlib.Path]:
    for path in sorted(cc_root.rglob("*")):
        if path.is_file() and path.suffix in SOURCE_SUFFIXES:
            yield path


def layering_violations(cc_root: pathlib.Path, deps: Dict[str, List[str]]) -> List[str]:
    """Every `#include "cc/<x>/..."` of a file in cc/<m>/ where x is neither m nor a direct
    dependency of m (nor, in a *_test.cc, cc/testing), and every file in a folder the table does not
    know, as "file:line: why"."""
    problems = []
    for path in source_files(cc_root):
        rel = path.relative_to(cc_root)
        if len(rel.parts) < 2:
            continue  # cc/BUILD and the like
        module = rel.parts[0]
        if module not in deps:
            problems.append(f"cc/{rel}: folder cc/{module}/ is no module of CC_MODULE_DEPS")
            continue
        # A module's unit tests (cc_test: the module and //cc:testing) may use the test helpers.
        allowed = {module, *deps[module]} | ({"testing"} if path.name.endswith("_test.cc") else set())
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in INCLUDE.finditer(text):
            target = match.group(1)
            if target not in allowed:
                line = text.count("\n", 0, match.start()) + 1
                problems.append(
                    f"cc/{rel}:{line}: includes cc/{target}/, but {module} may include only "
                    f"{sorted(deps[module]) or 'itself'} (build_config.bzl CC_MODULE_DEPS)")
    return problems


def test_every_include_follows_the_layering():
    problems = layering_violations(REPO_ROOT / "cc", DEPS)
    assert not problems, "\n".join(problems)


def test_the_checker_finds_a_wrong_include_and_an_unknown_folder(tmp_path):
    # mp4 must not see gulp; a new folder must join the table (else Bazel would not build it).
    (tmp_path / "mp4").mkdir()
    (tmp_path / "mp4" / "box.cc").write_text(
        '#include "cc/mp4/box.h"\n#include "cc/util/status.h"\n\n#include "cc/gulp/chunk_index.h"\n')
    # Test helpers: for the module's tests only.
    (tmp_path / "mp4" / "box_test.cc").write_text('#include "cc/testing/temp_dir.h"\n')
    (tmp_path / "mp4" / "box.h").write_text('#include "cc/testing/temp_dir.h"\n')
    (tmp_path / "avro").mkdir()
    (tmp_path / "avro" / "reader.h").write_text("")
    problems = layering_violations(tmp_path, {"mp4": ["io", "util"], "util": []})
    assert problems == [
        "cc/avro/reader.h: folder cc/avro/ is no module of CC_MODULE_DEPS",
        "cc/mp4/box.cc:4: includes cc/gulp/, but mp4 may include only ['io', 'util'] "
        "(build_config.bzl CC_MODULE_DEPS)",
        "cc/mp4/box.h:1: includes cc/testing/, but mp4 may include only ['io', 'util'] "
        "(build_config.bzl CC_MODULE_DEPS)",
    ]


def test_the_table_is_a_layering():
    # Dependencies name known modules, core modules depend only on core modules listed before them
    # (so the table has no cycle), and the non-core folders are leaves nothing depends on.
    assert len(set(CORE_MODULES)) == len(CORE_MODULES) and set(CORE_MODULES) <= set(DEPS)
    for module, deps in DEPS.items():
        assert set(deps) <= set(DEPS) - {module}, module
    for i, module in enumerate(CORE_MODULES):
        assert set(DEPS[module]) <= set(CORE_MODULES[:i]), (module, DEPS[module])
    for module in set(DEPS) - set(CORE_MODULES):
        assert not [m for m, deps in DEPS.items() if module in deps], module
    # The layering the issue asked to enforce: the formats stay apart.
    assert "gulp" not in DEPS["mp4"] and "gulp" not in DEPS["ffrecord"]
    assert "mp4" not in DEPS["ffrecord"] and "ffrecord" not in DEPS["gulp"]


def test_bazel_modules_compile_what_pip_compiles():
    # cc/BUILD: one library per core module, cc/<module>/**/*.cc minus *_test.cc; setup.py:
    # CORE_SRCS minus CORE_EXCLUDE. A file in neither a module nor an excluded folder would be
    # built by one build only.
    bazel = sorted(
        src for module in CORE_MODULES
        for src in settings.expand_globs([f"cc/{module}/**/*.cc"], [f"cc/{module}/**/*_test.cc"],
                                         root=str(REPO_ROOT)))
    pip = settings.library_sources(CONFIG, str(REPO_ROOT))["core"]
    assert bazel == pip
    assert "cc/gulp/chunk_index.cc" in bazel
