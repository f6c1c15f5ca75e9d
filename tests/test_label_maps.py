"""Splits that number classes alike: ``--class-file`` for every adapter, and a warning when two
directories read in one process number a class differently."""

from __future__ import annotations

import json
import warnings

import pytest

from ingest_testing import make_image_folder, make_video_folder, run_cli


def label2idx(folder):
    return json.loads((folder / "label2idx.json").read_text())


def ingest(adapter, source, output, *extra):
    code, out, err = run_cli("ingest", adapter, source, output, "--no-progress",
                             "--num-workers", "1", *extra)
    assert code == 0, err
    return out


def make_splits(tmp_path, adapter):
    """A training folder with classes bikes, bunny, carphone; a validation folder without bikes."""
    if adapter == "video-folder":
        pytest.importorskip("av")
        make = lambda root, classes: make_video_folder(root, classes, num_frames=2)  # noqa: E731
    else:
        make = make_image_folder
    make(tmp_path / "train", {"bikes": 1, "bunny": 1, "carphone": 1})
    make(tmp_path / "val", {"bunny": 1, "carphone": 2})
    return tmp_path / "train", tmp_path / "val"


@pytest.mark.parametrize("adapter", ["image-folder", "video-folder"])
@pytest.mark.parametrize("form", ["directory", "label2idx.json"])
def test_validation_split_numbered_like_training(tmp_path, adapter, form):
    from tf_gulp.gulp import GulpDirectory
    train, val = make_splits(tmp_path, adapter)
    ingest(adapter, train, tmp_path / "train_g")
    assert label2idx(tmp_path / "train_g") == {"bikes": 0, "bunny": 1, "carphone": 2}
    # Numbered on its own, the validation split disagrees with training (what --class-file fixes).
    ingest(adapter, val, tmp_path / "alone_g")
    assert label2idx(tmp_path / "alone_g") == {"bunny": 0, "carphone": 1}

    classes = tmp_path / "train_g" if form == "directory" else tmp_path / "train_g/label2idx.json"
    ingest(adapter, val, tmp_path / "val_g", "--class-file", classes)
    assert label2idx(tmp_path / "val_g") == {"bikes": 0, "bunny": 1, "carphone": 2}
    metas = {m["id"]: m for chunk in GulpDirectory(str(tmp_path / "val_g")).chunks()
             for m in (chunk.meta_dict[i]["meta_data"][0] for i in chunk.meta_dict)}
    assert {m["label"]: m["idx"] for m in metas.values()} == {"bunny": 1, "carphone": 2}


def test_a_class_missing_from_the_class_file_is_refused(tmp_path):
    make_image_folder(tmp_path / "train", {"ant": 1, "bee": 1})
    make_image_folder(tmp_path / "val", {"ant": 1, "cow": 1})
    ingest("image-folder", tmp_path / "train", tmp_path / "train_g")
    code, _out, err = run_cli("ingest", "image-folder", tmp_path / "val", tmp_path / "val_g",
                              "--no-progress", "--class-file", tmp_path / "train_g")
    assert code == 2, err
    assert "1 class is not in" in err and str(tmp_path / "train_g") in err and "'cow'" in err
    assert not (tmp_path / "val_g").exists()


def test_class_file_for_image_list_and_kinetics_adapters(tmp_path):
    from tf_gulp.gulp import ImageListAdapter, KineticsAdapter
    make_image_folder(tmp_path / "img", {"a": 1, "b": 1})
    (tmp_path / "list.txt").write_text("img/a/i00.jpg 7\nimg/b/i00.jpg 3\n")
    (tmp_path / "classes.txt").write_text("3\n7\n")
    # With a class list, labels are class names even when they look like integers.
    adapter = ImageListAdapter(str(tmp_path / "list.txt"), class_file=str(tmp_path / "classes.txt"))
    assert adapter.label2idx == {"3": 0, "7": 1}
    assert adapter.describe()["class_file"] == str(tmp_path / "classes.txt")
    (tmp_path / "k.csv").write_text("label,youtube_id,time_start,time_end\nrun,abc,0,1\n")
    (tmp_path / "k.json").write_text(json.dumps(["jump", "run"]))
    k = KineticsAdapter(str(tmp_path / "k.csv"), str(tmp_path), class_file=str(tmp_path / "k.json"))
    assert k.label2idx == {"jump": 0, "run": 1}


def test_read_class_list_forms_and_errors(tmp_path):
    from tf_gulp.gulp import read_class_list
    (tmp_path / "a.json").write_text('{"x [something]": "1", "y": 0}')
    assert read_class_list(tmp_path / "a.json") == {"x something": 1, "y": 0}
    (tmp_path / "b.csv").write_text("p\n\nq\n")
    assert read_class_list(tmp_path / "b.csv") == {"p": 0, "q": 1}
    (tmp_path / "dup.json").write_text('{"x": 1, "y": 1}')
    with pytest.raises(ValueError, match="'x' and 'y' both have index 1"):
        read_class_list(tmp_path / "dup.json")
    (tmp_path / "neg.json").write_text('{"x": -1}')
    with pytest.raises(ValueError, match="not an integer >= 0"):
        read_class_list(tmp_path / "neg.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="without label2idx.json"):
        read_class_list(tmp_path / "empty")


def test_existing_label2idx_and_class_file_must_agree_on_append(tmp_path):
    make_image_folder(tmp_path / "one", {"ant": 1, "bee": 1})
    make_image_folder(tmp_path / "two", {"bee": 1, "cow": 1})
    (tmp_path / "classes.txt").write_text("bee\nant\ncow\n")
    ingest("image-folder", tmp_path / "one", tmp_path / "g")
    code, _out, err = run_cli("ingest", "image-folder", tmp_path / "two", tmp_path / "g",
                              "--no-progress", "--append", "--class-file",
                              tmp_path / "classes.txt")
    assert code == 2, err
    assert "differently from the existing label2idx.json" in err, err


def _warnings_of(make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make()
    from tf_gulp.gulp import LabelMapWarning
    return [str(w.message) for w in caught if issubclass(w.category, LabelMapWarning)]


def test_gulp_datasets_of_directories_that_disagree_warn_naming_both(tmp_path):
    import tf_gulp
    from tf_gulp.gulp import read_label2idx
    train, val = make_splits(tmp_path, "image-folder")
    ingest("image-folder", train, tmp_path / "train_g")
    ingest("image-folder", val, tmp_path / "alone_g")
    ingest("image-folder", val, tmp_path / "val_g", "--class-file", tmp_path / "train_g")
    train_g, alone_g, val_g = (str(tmp_path / n) for n in ("train_g", "alone_g", "val_g"))

    assert _warnings_of(lambda: tf_gulp.GulpDataset(train_g)) == []
    assert _warnings_of(lambda: tf_gulp.GulpDataset(val_g)) == []  # numbered like training
    found = _warnings_of(lambda: tf_gulp.GulpDataset(alone_g))
    assert len(found) == 1, found
    assert train_g in found[0] and alone_g in found[0], found[0]
    assert "'bunny': 1 in" in found[0] and "number 2 classes differently" in found[0], found[0]
    assert "(and 1 other directory read earlier)" in found[0], found[0]
    # Read with the training directory's map: no warning, and the labels are training's.
    ds = tf_gulp.GulpDataset(alone_g, label2idx=read_label2idx(train_g), decode=False)
    assert sorted(int(e["label"]) for e in ds) == [1, 2, 2]


def test_label2idx_is_read_by_one_function_through_the_core(tmp_path, monkeypatch):
    # GulpDataset's reading of label2idx.json (cc/gulp LoadLabelMap) is the only one: the Python
    # readers, the class-list reader and the ingest command's check all go through
    # tf_gulp.gulp.index.load_label_map.
    from tf_gulp.cli import ingest as cli_ingest
    from tf_gulp.gulp import index, label_maps

    (tmp_path / "label2idx.json").write_text('{"a": 0}')
    asked = []

    class Core:
        @staticmethod
        def gulp_load_label_map(path):
            asked.append(path)
            return {"judged by the core": 7}

    monkeypatch.setattr(index, "_core", lambda: Core)
    expected = {"judged by the core": 7}
    assert label_maps.read_label2idx(tmp_path) == expected
    assert label_maps.read_class_list(tmp_path) == expected
    assert cli_ingest._existing_label2idx(str(tmp_path)) == expected  # pylint: disable=protected-access
    assert len(asked) == 3 and all(p.endswith("label2idx.json") for p in asked)
