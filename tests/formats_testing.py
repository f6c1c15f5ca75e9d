"""The one registry of tf_gulp's storage formats for the tests (docs/design.md, "Adding a format").

Each format is one `Format` entry: where it lives in each layer (the places the recipe names), how
to write a tiny dataset of it, how to open it as a ``tf.data`` source and what names an element.
The cross-format tests (FIFO inputs, remote paths, argument checks, epochs, multi-worker training,
the op tests) are parametrized over `FORMATS`, and ``tests/test_format_registry.py`` fails when
the package has a format (a dataset exported by ``tf_gulp``, an API package with a ``dataset.py``,
a source op, a format module of ``cc/``) that no entry describes: a new format is covered by every
cross-format test or the suite fails.

What a format cannot do yet is a capability named in its entry's ``not_yet`` with the reason (the
recipe's places it has no file for yet, in `Format.places`), never a format left out silently.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional

import numpy as np

# The source checkout (resolve(): under Bazel, through the runfiles' symlinks), whose files the
# registry's places name; BUILD declares them as the registry tests' data.
REPO = Path(__file__).resolve().parent.parent

# Capabilities a format may lack today (keys of Format.not_yet).
SOURCE_OP = "source_op"  # a C++ PositionalSourceDataset op (TfGulp>FooDataset), its kernel, op test
# An iterator checkpoint (not symbolic) taken in one pass of repeat() restores the passes after it
# exactly: their epochs, hence their orders (tests/test_epochs.py).
CHECKPOINT_ACROSS_PASSES = "checkpoint_across_passes"

# The places of code the recipe for a new format touches (docs/design.md, "Adding a format"), in
# its order; `Format.places()` gives each for one format. tests/test_format_registry.py checks
# that every format has each one and that design.md states this count.
CODE_PLACES = (
    "core",            # cc/<module>/: the file rules and the element reader, with their cc_tests
    "module_deps",     # the module's line in build_config.bzl's CC_MODULE_DEPS
    "fuzz_target",     # cc/fuzz/<target>_fuzz.cc
    "fuzz_seeds",      # its seeds in tools/fuzz.py's write_seeds
    "op_registration",  # tf_gulp/ops/<pkg>/<pkg>_ops.{h,cc}: the op's name and attr table
    "op_kernel",       # tf_gulp/ops/<pkg>/<pkg>_dataset_op.cc
    "api",             # tf_gulp/<pkg>/dataset.py
    "exports",         # tf_gulp/__init__.py: the lazy table and __all__
    "tests",           # tests/test_<pkg>_dataset.py
    "op_test",         # tests/ops/<pkg>_dataset_op_test.cc
    "registry",        # the format's entry in FORMATS, below
)
# Optional: a reader without TensorFlow (tf_gulp/pybind/<pkg>_bindings.cc and its declaration and
# call in core_module.cc).
OPTIONAL_PLACES = ("bindings", "bindings_call")
DOC_PLACES = ("guide", "formats_md", "readme")


@dataclass(frozen=True)
class Written:
    """A tiny dataset on disk: ``path`` opens it, ``keys`` name its elements in file order (what
    `Format.key` gives for each), ``root`` is the folder holding everything it is made of."""

    path: str
    keys: List[str]
    root: str


@dataclass(frozen=True)
class Format:
    name: str  # the registry's key, used in test ids
    title: str  # as docs/formats.md's heading and the README's format list name it
    dataset: str  # the source exported as tf_gulp.<dataset>
    package: str  # tf_gulp/<package>/ (API) and tf_gulp/ops/<package>/ (ops)
    cc_module: str  # cc/<cc_module>/
    fuzz_target: str  # cc/fuzz/<fuzz_target>_fuzz.cc
    guide: str  # docs/<guide>
    source_op: Optional[str]  # the registered source op, None while not_yet[SOURCE_OP]
    write: Callable[[Path, int], Written]  # a tiny dataset of n elements under a new folder
    key: Callable[[Any], Any]  # an element -> a scalar string tensor naming it (printable)
    fifo_files: Callable[[Written], List[str]]  # files a reader opens that a FIFO may replace
    # Options under which an element's content, not only its position, depends on the epoch
    # (frame offsets, crops), for the tests of per-epoch randomness.
    random_options: Callable[[], Dict[str, Any]] = dict
    not_yet: Mapping[str, str] = field(default_factory=dict)  # capability -> why not yet

    def open(self, path: str, **options):
        """The format's ``tf.data`` source over ``path`` (options: shuffle, seed, epoch, ...)."""
        import tf_gulp

        return getattr(tf_gulp, self.dataset)(path, **options)

    def lacks(self, capability: str) -> Optional[str]:
        """Why this format lacks `capability` today, or None when it has it."""
        return self.not_yet.get(capability)

    def places(self) -> Dict[str, Optional[str]]:
        """Each place of the recipe for this format: a path (a file, a folder ending in "/", or
        "file: text" when the place is a line in a file), None where ``not_yet`` says why."""
        pkg, ops = self.package, f"tf_gulp/ops/{self.package}"
        lacks_op = self.lacks(SOURCE_OP)
        return {
            "core": f"cc/{self.cc_module}/",
            "module_deps": f'build_config.bzl: "{self.cc_module}": [',
            "fuzz_target": f"cc/fuzz/{self.fuzz_target}_fuzz.cc",
            "fuzz_seeds": f'tools/fuzz.py: dirs["{self.fuzz_target}"]',
            "op_registration": f"{ops}/{pkg}_ops.cc",
            "op_kernel": None if lacks_op else f"{ops}/{pkg}_dataset_op.cc",
            "api": f"tf_gulp/{pkg}/dataset.py",
            "exports": f'tf_gulp/__init__.py: "{self.dataset}"',
            "tests": f"tests/test_{pkg}_dataset.py",
            "op_test": None if lacks_op else f"tests/ops/{pkg}_dataset_op_test.cc",
            "registry": f'tests/formats_testing.py: name="{self.name}"',
            "bindings": f"tf_gulp/pybind/{pkg}_bindings.cc",
            "bindings_call": f"tf_gulp/pybind/core_module.cc: // {pkg}_bindings.cc",
            "guide": f"docs/{self.guide}",
            "formats_md": f"docs/formats.md: ## {self.title}",
            "readme": f"README.md: **{self.title}**",
        }


# ---------------------------------------------------------------------------------------------
# gulp

def _write_gulp(root: Path, n: int) -> Written:
    from gulp_testing import make_gulp_dir

    info = make_gulp_dir(root / "gulp", num_videos=n, frames_per_video=2, height=8, width=8,
                         videos_per_chunk=max(1, n // 3))
    return Written(info["path"], list(info["ids"]), str(root))


def _gulp_random_options() -> Dict[str, Any]:
    from tf_gulp.transforms import RandomHorizontalFlip, RandomResizedCrop

    return dict(num_frames=1, training=True,
                augment=[RandomResizedCrop(8), RandomHorizontalFlip()])


def _gulp_fifo_files(w: Written) -> List[str]:
    return [os.path.join(w.path, "meta_1.gmeta"), os.path.join(w.path, "data_0.gulp")]


# ---------------------------------------------------------------------------------------------
# FFRecord

def _write_ffrecord(root: Path, n: int) -> Written:
    from ffrecord_testing import ffrecord_bytes, sample_records

    records = sample_records(n)
    folder = root / "ffr"
    folder.mkdir(parents=True)
    half = n // 2
    (folder / "part0.ffr").write_bytes(ffrecord_bytes(records[:half]))
    (folder / "part1.ffr").write_bytes(ffrecord_bytes(records[half:]))
    return Written(str(folder), [_base64(r) for r in records], str(root))


def _base64(record: bytes) -> str:
    """A record as `_ffrecord_key` names it (tf.io.encode_base64: web-safe, no padding)."""
    return base64.urlsafe_b64encode(record).rstrip(b"=").decode()


def _ffrecord_key(record):
    import tensorflow as tf

    return tf.io.encode_base64(record)


# ---------------------------------------------------------------------------------------------
# Benzina: BenzinaDataset (decoded by a map after its source, TfGulp>BznaDataset).

def _write_benzina(root: Path, n: int) -> Written:
    import simplejpeg

    from tf_gulp.bzna import create

    rng = np.random.default_rng(7)
    for k in range(n):
        folder = root / "img" / f"c{k % 2}"
        folder.mkdir(parents=True, exist_ok=True)
        image = rng.integers(0, 255, (24 + 8 * (k % 3), 32, 3), dtype=np.uint8)
        (folder / f"{k:04d}.jpg").write_bytes(simplejpeg.encode_jpeg(image, quality=90))
    (root / "out").mkdir()
    out = str(root / "out" / "data.bzna")
    create.create_dataset(str(root / "img"), out, preset="ultrafast", workers=1, progress=False)
    return Written(out, [str(i) for i in range(n)], str(root / "out"))


def _benzina_key(element):
    import tensorflow as tf

    return tf.strings.as_string(element["index"])


FORMATS: Dict[str, Format] = {f.name: f for f in (
    Format(name="gulp", title="gulp", dataset="GulpDataset", package="gulp", cc_module="gulp",
           fuzz_target="gulp_index", guide="gulp_dataset.md", source_op="TfGulp>GulpDataset",
           write=_write_gulp, key=lambda e: e["id"], fifo_files=_gulp_fifo_files,
           random_options=_gulp_random_options),
    Format(name="ffrecord", title="FFRecord", dataset="FFRecordDataset", package="ffrecord",
           cc_module="ffrecord", fuzz_target="ffrecord", guide="ffrecord.md",
           source_op="TfGulp>FFRecordDataset", write=_write_ffrecord, key=_ffrecord_key,
           fifo_files=lambda w: [os.path.join(w.path, "part1.ffr")]),
    Format(name="benzina", title="Benzina", dataset="BenzinaDataset", package="bzna",
           cc_module="mp4", fuzz_target="mp4", guide="benzina.md", source_op="TfGulp>BznaDataset",
           write=_write_benzina, key=_benzina_key, fifo_files=lambda w: [w.path]),
)}

# The cc/ modules that are no format's (shared by all; docs/design.md's layering).
SHARED_CC_MODULES = ("util", "io", "warp", "codec")
# The op folders that are no format's: shared image ops, the epoch datasets, the framework.
SHARED_OPS_FOLDERS = ("image", "epoch", "framework")


def format_params() -> list:
    """`FORMATS` as pytest params, the names as ids. Every cross-format test runs on every
    format. A test that needs one of ``not_yet``'s capabilities does not skip the formats that
    lack it (CI fails on a skip whose reason is not on tools/check_skips.py's allowlist, and a
    skip would hide the day it starts to work): it asserts that they still fail it, so the
    entry's flag is removed when the format gains the capability."""
    import pytest

    return [pytest.param(f, id=f.name) for f in FORMATS.values()]


def keys_of(fmt: Format, ds) -> List[str]:
    """The keys of ds's elements, in order."""
    return [k.decode() for k in ds.map(fmt.key).as_numpy_iterator()]


def contents(ds) -> List[tuple]:
    """ds's elements in order, each as the bytes of its tensors: what a pass yields, whole."""
    return [tuple(np.asarray(t).tobytes() for t in _flat(e)) for e in ds.as_numpy_iterator()]


def _flat(element) -> list:
    if isinstance(element, dict):
        return [v for k in sorted(element) for v in _flat(element[k])]
    if isinstance(element, (tuple, list)):
        return [v for x in element for v in _flat(x)]
    return [element]
