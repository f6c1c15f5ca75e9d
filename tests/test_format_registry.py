"""The registry of formats (tests/formats_testing.py) is complete and true, and the recipe for a
new format (docs/design.md, "Adding a format") counts what it takes.

Every way the package shows a format is found here rather than listed: the datasets
``tf_gulp.__all__`` exports, the API packages with a ``dataset.py``, the op folders, the source
ops registered in them, the format modules of ``cc/``. Each must belong to a registry entry, so a
fourth format fails here until it has one, and with it every cross-format test (FIFO inputs, remote
paths, arguments, epochs, multi-worker, op tests) runs on it."""

from __future__ import annotations

import importlib.util
import re

import pytest

import tf_gulp
from formats_testing import (CHECKPOINT_ACROSS_PASSES, CODE_PLACES, DOC_PLACES, FORMATS,
                             OPTIONAL_PLACES, REPO, SHARED_CC_MODULES, SHARED_OPS_FOLDERS,
                             SOURCE_OP, Format)

_spec = importlib.util.spec_from_file_location(
    "_tf_gulp_build_settings_registry", REPO / "tools" / "build_settings.py")
_settings = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_settings)
CONFIG = _settings.load_build_config(str(REPO))


def registry(attribute: str) -> set:
    return {getattr(f, attribute) for f in FORMATS.values()}


def test_every_exported_dataset_is_a_registered_format():
    exported = {name for name in tf_gulp.__all__ if name.endswith("Dataset")}
    assert exported == registry("dataset"), (
        "tf_gulp exports a dataset no entry of tests/formats_testing.py's FORMATS describes, or "
        "an entry names one it does not export")
    for f in FORMATS.values():  # the lazy table resolves each (to its API package's dataset.py)
        assert getattr(tf_gulp, f.dataset).__module__ == f"tf_gulp.{f.package}.dataset", f.name


def test_every_api_package_with_a_dataset_is_a_registered_format():
    packages = {p.parent.name for p in (REPO / "tf_gulp").glob("*/dataset.py")}
    assert packages == registry("package")


def test_every_op_folder_is_a_format_or_shared():
    folders = {p.name for p in (REPO / "tf_gulp" / "ops").iterdir()
               if p.is_dir() and not p.name.startswith("_")}
    assert folders - set(SHARED_OPS_FOLDERS) == registry("package")


def test_every_core_module_is_a_format_or_shared():
    modules = set(CONFIG["CORE_MODULES"])
    assert modules - set(SHARED_CC_MODULES) == registry("cc_module"), (
        "a cc/ module that is no format's: add its format to FORMATS, or to SHARED_CC_MODULES "
        "if every format uses it")


def folder_of_op(op: str) -> str:
    """The tf_gulp/ops folder whose sources name the op (its <family>_ops.h or registration)."""
    folders = {p.parent.name for p in (REPO / "tf_gulp" / "ops").glob("*/*.[hc]*")
               if f'"{op}"' in p.read_text(encoding="utf-8")}
    assert len(folders) == 1, (op, folders)
    return folders.pop()


def test_every_source_op_of_a_format_folder_is_a_registered_format():
    """The sources found from their registrations (the epoch counter attr every source registers,
    op_attrs.source_ops): those of a format's folder are the registry's, each in its folder."""
    from tf_gulp.ops import op_attrs

    by_folder = {op: folder_of_op(op) for op in op_attrs.source_ops()}
    formats = {op for op, folder in by_folder.items() if folder not in SHARED_OPS_FOLDERS}
    assert formats == registry("source_op") - {None}
    for f in FORMATS.values():
        if f.source_op is not None:
            assert by_folder[f.source_op] == f.package, f.name
        else:
            assert f.lacks("source_op"), f"{f.name}: no source op and no reason why"


def place_exists(place: str) -> bool:
    """A registry place: a folder ("/"), a file, or "file: text" (the text in the file)."""
    path, _, text = place.partition(": ")
    target = REPO / path
    if text:
        return target.is_file() and text in target.read_text(encoding="utf-8")
    return target.is_dir() if path.endswith("/") else target.is_file()


@pytest.mark.parametrize("fmt", FORMATS.values(), ids=list(FORMATS))
def test_each_format_has_every_place_of_the_recipe(fmt: Format):
    places = fmt.places()
    assert set(places) == set(CODE_PLACES + OPTIONAL_PLACES + DOC_PLACES)
    missing = {step: place for step, place in places.items()
               if place is not None and not place_exists(place)}
    assert missing == {}, f"{fmt.name}: places of the recipe that do not hold: {missing}"
    for step, place in places.items():
        if place is None:
            assert fmt.not_yet, f"{fmt.name}: {step} absent without a reason in not_yet"
    # What it lacks: capabilities the tests know, each with its reason.
    assert set(fmt.not_yet) <= {SOURCE_OP, CHECKPOINT_ACROSS_PASSES}, fmt.not_yet
    assert all(len(reason) > 40 for reason in fmt.not_yet.values()), fmt.not_yet


def test_design_md_counts_the_recipe():
    """docs/design.md's count of the places a new format touches is the registry's."""
    text = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    recipe = text[text.index("## Adding a format"):]
    recipe = recipe[:recipe.index("\n### ", 1)]
    found = re.search(r"\*\*(\d+)\s+places\s+of\s+code\*\*.*?(\d+)\s+with\s+`_core`\s+bindings.*?"
                      r"\*\*plus\s+(\d+)\s+docs\*\*", recipe, re.S)
    assert found, "docs/design.md's recipe no longer states its count"
    assert [int(g) for g in found.groups()] == [
        len(CODE_PLACES), len(CODE_PLACES) + len(OPTIONAL_PLACES), len(DOC_PLACES)]


CROSS_FORMAT_TESTS = ("test_fifo_inputs.py", "test_remote_paths.py", "test_arguments.py",
                      "test_epochs.py", "test_start_epoch.py", "test_sharding.py",
                      "test_multi_worker.py", "test_op_names.py")


@pytest.mark.parametrize("name", CROSS_FORMAT_TESTS)
def test_cross_format_tests_are_driven_by_the_registry(name):
    """The cross-format tests take their formats from the registry, never from a list of names
    (which a new format would silently be missing from)."""
    text = (REPO / "tests" / name).read_text(encoding="utf-8")
    # The each_format fixture (tests/conftest.py), format_params() or the registry itself.
    assert re.search(r"\beach_format\b|\bformat_params\(\)|\bFORMATS\b", text), name
    hand_list = re.search(r"\[\s*\"(gulp|ffrecord|benzina)\"\s*,\s*\"(gulp|ffrecord|benzina)\"",
                          text)
    assert hand_list is None, f"{name}: formats listed by hand: {hand_list.group(0)}"
