"""One class numbering everywhere (issue 32, point 7): gulp ingest, ``tf-gulp bzna create`` and the
FFRecord recipe number class folders as Keras's ``image_dataset_from_directory`` does (sorted
names, hidden folders skipped, an empty folder keeping its index with a warning); every dataset
has ``class_names`` / ``num_classes``; every ingest ends with a summary of the files it ignored,
by extension."""

from __future__ import annotations

import json
import os
import warnings

import pytest
import tensorflow as tf

import tf_gulp
from tf_gulp.class_folders import (EmptyClassWarning, ignored_summary, scan_class_folders,
                                   write_label2idx)
from tf_gulp.ffrecord import dump

from ingest_testing import jpeg_bytes, run_cli

# Names whose sorted order differs from a case-folded or natural one ("A" < "B_empty" < "a" <
# "c10" < "c9"), an empty folder in the middle, a hidden folder, and files that are ignored.
CLASSES = {"a": 2, "A": 1, "B_empty": 0, "c10": 1, "c9": 2}


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("classes") / "train"
    seed = 0
    for name, count in CLASSES.items():
        (root / name).mkdir(parents=True)
        for k in range(count):
            (root / name / f"{k}.jpg").write_bytes(jpeg_bytes(seed, 24, 16))
            seed += 1
    (root / ".hidden").mkdir()
    (root / ".hidden" / "0.jpg").write_bytes(jpeg_bytes(99, 24, 16))
    (root / "a" / "notes.txt").write_text("not an image")
    (root / "c9" / "drawing.svg").write_text("<svg/>")  # an image format no tool here takes
    (root / "c9" / "README").write_text("x")
    (root / "index.csv").write_text("x")  # directly in the root: belongs to no class
    return root


@pytest.fixture(scope="module")
def keras_class_names(tree):
    ds = tf.keras.utils.image_dataset_from_directory(str(tree), image_size=(16, 24),
                                                     shuffle=False)
    return list(ds.class_names)


def expected_labels(class_names):
    """{file name relative to the root: the label Keras gives it} for the .jpg files."""
    return {f"{c}/{k}.jpg": class_names.index(c) for c in CLASSES for k in range(CLASSES[c])}


def test_keras_numbering_is_what_we_compare_with(keras_class_names):
    # Sanity of the reference itself: sorted, hidden skipped, the empty folder kept.
    assert keras_class_names == ["A", "B_empty", "a", "c10", "c9"]


def test_scan_numbers_as_keras_and_counts_ignored_files(tree, keras_class_names):
    with pytest.warns(EmptyClassWarning, match=r"'B_empty' \(index 1\)"):
        scan = scan_class_folders(str(tree), (".jpg",))
    assert scan.class_names == keras_class_names
    assert dict(scan.files) == expected_labels(keras_class_names)
    assert scan.empty == ["B_empty"]
    assert scan.ignored == {".csv": 1, ".svg": 1, ".txt": 1, "(no extension)": 1}
    assert ignored_summary(scan.ignored) == \
        "ignored 4 files: 1 (no extension), 1 .csv, 1 .svg, 1 .txt"
    assert ignored_summary({}) == "ignored no files"


def test_gulp_ingest(tree, keras_class_names, tmp_path):
    out = tmp_path / "gulp"
    with pytest.warns(EmptyClassWarning, match="B_empty"):
        code, stdout, err = run_cli("ingest", "image-folder", tree, out, "--no-progress")
    assert code == 0, err
    assert stdout.strip().splitlines()[-1] == \
        f"{tree}: ignored 4 files: 1 (no extension), 1 .csv, 1 .svg, 1 .txt"
    ds = tf_gulp.GulpDataset(str(out))
    assert ds.class_names == keras_class_names and ds.num_classes == 5
    labels = {e["id"].numpy().decode(): int(e["label"]) for e in ds}
    assert labels == expected_labels(keras_class_names)
    assert json.loads((out / "label2idx.json").read_text()) == \
        {c: i for i, c in enumerate(keras_class_names)}


def test_bzna_create(tree, keras_class_names, tmp_path):
    out = tmp_path / "images.bzna"
    with pytest.warns(EmptyClassWarning, match="B_empty"):
        code, stdout, err = run_cli("bzna", "create", tree, out, "--preset", "ultrafast",
                                    "-j", "1", "--no-progress")
    assert code == 0, err
    assert stdout.strip().splitlines()[-1] == \
        f"{tree}: ignored 4 files: 1 (no extension), 1 .csv, 1 .svg, 1 .txt"
    ds = tf_gulp.BenzinaDataset(str(out))
    assert ds.class_names == keras_class_names and ds.num_classes == 5
    assert ds.take(2).class_names == keras_class_names  # kept by skip / take / shard
    got = sorted(int(e["label"]) for e in ds)
    assert got == sorted(expected_labels(keras_class_names).values())


def test_ffrecord_recipe(tree, keras_class_names, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptyClassWarning)
        scan = scan_class_folders(str(tree), (".jpg", ".jpeg", ".png"))
    items = [(str(tree / rel), label) for rel, label in scan.files]
    out = tmp_path / "ffr"
    records = [json.dumps([os.path.relpath(p, tree), label]).encode() for p, label in items]
    dump(records, str(out), nfiles=2)
    write_label2idx(str(out), scan.class_names)
    ds = tf_gulp.FFRecordDataset(str(out))
    assert ds.class_names == keras_class_names and ds.num_classes == 5
    got = dict(json.loads(r.numpy()) for r in ds)
    assert got == expected_labels(keras_class_names)
    # A file given by name finds the table in its folder.
    first = sorted(p for p in os.listdir(out) if p.endswith(".ffr"))[0]
    assert tf_gulp.FFRecordDataset(str(out / first)).class_names == keras_class_names


def test_no_table_no_class_names(tmp_path):
    dump([b"x"], str(tmp_path / "f.ffr"), nfiles=1)
    assert tf_gulp.FFRecordDataset(str(tmp_path / "f.ffr")).class_names is None
    assert tf_gulp.FFRecordDataset(str(tmp_path / "f.ffr")).num_classes is None


def test_tables_that_disagree_are_refused(tmp_path):
    for name, order in (("x", ["a", "b"]), ("y", ["b", "a"])):
        (tmp_path / name).mkdir()
        dump([b"r"], str(tmp_path / name / "f.ffr"), nfiles=1)
        write_label2idx(str(tmp_path / name), order)
    with pytest.raises(ValueError, match="number the classes differently"):
        tf_gulp.FFRecordDataset([str(tmp_path / "x" / "f.ffr"), str(tmp_path / "y" / "f.ffr")])
