"""A source's options are declared once, in its op's attr table (tf_gulp/_options.py): the class's
signature, its checks and the reference page's option table are made from it."""

from __future__ import annotations

import inspect
import pathlib
import shutil
import subprocess

import pytest
import tensorflow as tf

import tf_gulp
from tf_gulp import _options
from tf_gulp.ops.library import load_ops

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = [tf_gulp.GulpDataset, tf_gulp.FFRecordDataset, tf_gulp.BenzinaDataset]
PAGES = sorted((REPO_ROOT / "docs").glob("*.md"))


def test_pages_option_tables_are_the_tables():
    """Each ``<!-- options OP -->`` block is OP's table rendered (tools/render_option_tables.py
    rewrites them)."""
    found = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in _options.OPTION_BLOCK.finditer(text):
            found.add(match.group(2))
        rendered = _options.render_option_block(
            text, lambda op: _options.markdown_table(_options.op_options(op)))
        assert rendered == text, f"{page.name}: run python tools/render_option_tables.py"
    assert {cls._OP for cls in SOURCES} <= found


@pytest.mark.parametrize("cls", SOURCES, ids=lambda c: c.__name__)
def test_signature_and_doc_list_every_option(cls):
    params = inspect.signature(cls).parameters
    assert cls.table_options()
    for option in cls.table_options():
        assert params[option.name].default == option.python_default, option.name
        assert params[option.name].annotation == option.hint, option.name
        assert f"      {option.name}: " in cls.__doc__, option.name
    assert "seed" in params and "_shard" not in params and "options" not in params


def test_unknown_keyword_is_a_type_error(tmp_path):
    with pytest.raises(TypeError, match="unexpected keyword argument 'num_clip'"):
        tf_gulp.GulpDataset(str(tmp_path), num_clip=2)


def test_none_is_off_options():
    clip_len = {o.name: o for o in tf_gulp.GulpDataset.table_options()}["clip_len"]
    assert clip_len.none_is_off and clip_len.python_default is None
    assert clip_len.check(None) == 0  # the attr's off value
    with pytest.raises(ValueError, match=r"X: clip_len must be an integer >= 1 or None, got 0"):
        clip_len.check(0, "X: ")
    crops = {o.name: o for o in tf_gulp.GulpDataset.table_options()}["crops"]
    with pytest.raises(ValueError, match=r"crops must be 'center' or 'three' or None, got 'none'"):
        crops.check("none")


def test_kernel_refusal_naming_an_option_is_a_value_error(tmp_path):
    """The kernel's InvalidArgumentError naming a keyword is mapped to ValueError (once, in
    OptionSourceDataset._make_op); other kernel errors are raised as they are."""
    error = tf.errors.InvalidArgumentError(
        None, None, "{{function_node __wrapped__TfGulp>GulpDataset_device_/job:localhost/"
                    "replica:0/task:0/device:CPU:0}} scale must be 1, 2, 4 or 8, got 3 "
                    "[Op:TfGulp>GulpDataset] name: ")
    mapped = _options.python_error(error, ["scale"], "GulpDataset: ")
    assert isinstance(mapped, ValueError)
    assert str(mapped) == "GulpDataset: scale must be 1, 2, 4 or 8, got 3"
    assert _options.python_error(error, ["shape"], "") is None
    assert _options.python_error(ValueError("scale x"), ["scale"], "") is None


@pytest.fixture(scope="module")
def extra_op_library(tmp_path_factory):
    """tests/ops/extra_option_op.cc built against the installed TensorFlow and loaded."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ to build the test op library")
    load_ops()
    out = tmp_path_factory.mktemp("extra") / "extra_option_op.so"
    command = [cxx, "-std=c++17", "-O0", "-fPIC", "-shared", "-w",
               *tf.sysconfig.get_compile_flags(), f"-I{REPO_ROOT}",
               str(REPO_ROOT / "tests" / "ops" / "extra_option_op.cc"), "-o", str(out),
               *tf.sysconfig.get_link_flags()]
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return tf.load_op_library(str(out))


def test_an_option_added_to_one_table_reaches_signature_check_and_docs(extra_op_library,
                                                                         tmp_path):
    class ExtraGulpDataset(tf_gulp.GulpDataset):
        """GulpDataset with the test op's table."""
        _OP = "TfGulpTest>ExtraGulpDataset"

    params = inspect.signature(ExtraGulpDataset).parameters
    assert params["extra_option"].default == 3
    assert params["extra_option"].annotation == "int"
    assert "num_clips" in params  # the table it extends
    with pytest.raises(ValueError, match=r"GulpDataset: extra_option must be an integer >= 2, "
                                         r"got 1"):
        ExtraGulpDataset(str(tmp_path), extra_option=1)
    with pytest.raises(TypeError, match=r"extra_option must be an integer >= 2, got 2\.5"):
        ExtraGulpDataset(str(tmp_path), extra_option=2.5)
    table = _options.markdown_table(ExtraGulpDataset.table_options())
    assert "| `extra_option` | int >= 2 | `3` | an option only this table declares |" in table
    assert "extra_option: an option only this table declares" in ExtraGulpDataset.__doc__
    assert "extra_option" not in inspect.signature(tf_gulp.GulpDataset).parameters
