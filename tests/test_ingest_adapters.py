"""The built-in adapters: what they list, ids, labels, meta, slicing, pickling, bad and missing
inputs."""

import json
import pickle

import numpy as np
import pytest
import simplejpeg

pytest.importorskip("av")

from tf_gulp.gulp.adapters import (AbstractDatasetAdapter, FrameOptions, ImageFolderAdapter,  # noqa
                                   ImageListAdapter, InputError, KineticsAdapter,
                                   TwentyBNAdapter, VideoFolderAdapter, kinetics_clip_name,
                                   label_indices, video_extensions)

from ingest_testing import (jpeg_bytes, make_image_folder, make_video_folder, red_level,  # noqa
                            write_png, write_video)


def collect(adapter, slice_element=None):
    return list(adapter.iter_data(slice_element))


def test_label_indices():
    assert label_indices(["b", "a", "b", None]) == {"a": 0, "b": 1}
    assert label_indices(["c", "a"], {"z": 0, "a": 5}) == {"z": 0, "a": 5, "c": 6}


def test_video_extensions():
    exts = video_extensions()
    for e in (".mp4", ".webm", ".mkv", ".avi", ".mov", ".flv", ".mpg", ".ts", ".wmv", ".ogv",
              ".3gp", ".m4v"):
        assert e in exts, e
    for e in (".txt", ".srt", ".mp3", ".wav", ".jpg", ".png", ".json", ".csv"):
        assert e not in exts, e


def test_image_folder(tmp_path):
    ids = make_image_folder(tmp_path / "imgs", {"dog": 2, "cat": 3})
    write_png(tmp_path / "imgs" / "cat" / "sub" / "deep.png", np.zeros((6, 6, 3), np.uint8))
    (tmp_path / "imgs" / "README.txt").write_text("not in a class folder")
    (tmp_path / "imgs" / "cat" / "notes.txt").write_text("not an image")
    (tmp_path / "imgs" / "cat" / ".hidden.jpg").write_bytes(jpeg_bytes(0))
    a = ImageFolderAdapter(str(tmp_path / "imgs"))
    assert a.item_ids() == ["cat/i00.jpg", "cat/i01.jpg", "cat/i02.jpg", "cat/sub/deep.png",
                            "dog/i00.jpg", "dog/i01.jpg"]
    assert a.label2idx == {"cat": 0, "dog": 1}
    items = collect(a)
    assert items[0]["id"] == "cat/i00.jpg"
    assert items[0]["meta"] == {"id": "cat/i00.jpg", "label": "cat", "idx": 0}
    assert items[0]["frames"] == [(tmp_path / "imgs" / "cat" / "i00.jpg").read_bytes()]
    assert items[3]["meta"]["label"] == "cat"
    assert simplejpeg.decode_jpeg_header(items[3]["frames"][0])[:2] == (6, 6)
    # Slice-aware, picklable.
    assert [i["id"] for i in collect(a, slice(4, 6))] == ["dog/i00.jpg", "dog/i01.jpg"]
    b = pickle.loads(pickle.dumps(a))
    assert [i["frames"] for i in collect(b, slice(1, 3))] == [i["frames"] for i in items[1:3]]
    assert len(a) == 6 and a.item_source(0).endswith("cat/i00.jpg")
    assert isinstance(a, AbstractDatasetAdapter)
    # Extensions; an existing mapping is extended, not renumbered.
    assert ImageFolderAdapter(str(tmp_path / "imgs"), extensions=["png"]).item_ids() == \
        ["cat/sub/deep.png"]
    assert ImageFolderAdapter(str(tmp_path / "imgs"), label2idx={"dog": 0, "eel": 1}
                              ).label2idx == {"dog": 0, "eel": 1, "cat": 2}
    assert len(ids) == 5


def test_folder_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        ImageFolderAdapter(str(tmp_path / "nope"))
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "a.jpg").write_bytes(jpeg_bytes(1))
    with pytest.raises(ValueError, match="no image files in class folders"):
        ImageFolderAdapter(str(tmp_path / "flat"))


def test_video_folder(tmp_path):
    root = tmp_path / "v"
    make_video_folder(root, {"run": 2, "jump": 1}, num_frames=6)
    write_video(root / "jump" / "x.mp4", num_frames=4, video=9)
    write_video(root / "jump" / "y.mkv", num_frames=3, video=8)
    (root / "jump" / "sound.mp3").write_bytes(b"ID3")
    a = VideoFolderAdapter(str(root), options=FrameOptions(fps=50))
    assert a.item_ids() == ["jump/v00.avi", "jump/x.mp4", "jump/y.mkv", "run/v00.avi",
                            "run/v01.avi"]
    items = collect(a, slice(1, 3))
    assert items[0]["meta"] == {"id": "jump/x.mp4", "label": "jump", "idx": 0,
                                "num_frames": 8, "fps": 50.0, "height": 48, "width": 64}
    assert len(items[0]["frames"]) == 8 and len(items[1]["frames"]) == 6
    red = simplejpeg.decode_jpeg(items[0]["frames"][2])[..., 0].mean()
    assert abs(red - red_level(9, 1)) < 6
    assert a.describe()["options"]["fps"] == "50"


def test_bad_video_raises_input_error_naming_it(tmp_path):
    root = tmp_path / "v"
    make_video_folder(root, {"a": 2}, num_frames=3)
    (root / "a" / "v00.avi").write_bytes(b"RIFF" + b"\0" * 50)
    a = VideoFolderAdapter(str(root))
    with pytest.raises(InputError, match="v00.avi: cannot open") as e:
        collect(a)
    assert e.value.path.endswith("a/v00.avi")
    assert len(collect(a, slice(1, 2))[0]["frames"]) == 3


def test_image_list_text_and_csv(tmp_path):
    make_image_folder(tmp_path / "data", {"x": 3})
    (tmp_path / "lists").mkdir()
    lst = tmp_path / "lists" / "train.txt"
    lst.write_text("# comment\n\n../data/x/i00.jpg 3\n../data/x/i01.jpg   1\n"
                   f"{tmp_path}/data/x/i02.jpg 0\n")
    a = ImageListAdapter(str(lst))
    assert a.item_ids() == ["../data/x/i00.jpg", "../data/x/i01.jpg",
                            f"{tmp_path}/data/x/i02.jpg"]
    assert a.label2idx == {}    # integer labels are their own index
    meta = [i["meta"] for i in collect(a)]
    assert [m["label"] for m in meta] == [3, 1, 0] and [m["idx"] for m in meta] == [3, 1, 0]

    csv_file = tmp_path / "list.csv"
    csv_file.write_text("image,class\nx/i01.jpg,zebra\nx/i00.jpg,ant\nx/i02.jpg,\n")
    b = ImageListAdapter(str(csv_file), root=str(tmp_path / "data"))
    assert b.label2idx == {"ant": 0, "zebra": 1}
    meta = [i["meta"] for i in collect(b)]
    assert meta[0] == {"id": "x/i01.jpg", "label": "zebra", "idx": 1}
    assert meta[2] == {"id": "x/i02.jpg"}
    plain = tmp_path / "plain.csv"
    plain.write_text("data/x/i00.jpg,a\n")
    assert ImageListAdapter(str(plain)).item_ids() == ["data/x/i00.jpg"]

    dup = tmp_path / "dup.txt"
    dup.write_text("data/x/i00.jpg a\ndata/x/i00.jpg b\n")
    with pytest.raises(ValueError, match="appears twice"):
        ImageListAdapter(str(dup))
    missing = tmp_path / "missing.txt"
    missing.write_text("data/x/nope.jpg a\n")
    with pytest.raises(InputError, match="nope.jpg: file not found"):
        collect(ImageListAdapter(str(missing)))


def test_20bn_json_with_videos(tmp_path):
    videos = tmp_path / "videos"
    for i, id_ in enumerate(["101", "7", "55"]):
        write_video(videos / f"{id_}.webm", num_frames=5, codec="libvpx", video=i) \
            if _has_codec("libvpx") else write_video(videos / f"{id_}.mkv", num_frames=5, video=i)
    entries = [
        {"id": "101", "label": "putting a pen on a table",
         "template": "Putting [something] on [something]", "placeholders": ["a pen", "a table"]},
        {"id": "7", "label": "pushing a cup", "template": "Pushing [something]",
         "placeholders": ["a cup"]},
        {"id": "55", "label": "pushing a box", "template": "Pushing [something]",
         "placeholders": ["a box"]},
        {"id": "999", "label": "lost", "template": "Pushing [something]", "placeholders": []},
    ]
    labels = tmp_path / "train.json"
    labels.write_text(json.dumps(entries))
    classes = tmp_path / "labels.json"
    classes.write_text(json.dumps({"Pushing something": "4", "Putting something on something":
                                   "0", "Other": "1"}))
    a = TwentyBNAdapter(str(labels), str(videos), class_file=str(classes))
    assert a.item_ids() == ["101", "7", "55", "999"]
    assert a.label2idx == {"Pushing something": 4, "Putting something on something": 0,
                           "Other": 1}
    assert a.missing() and a.missing()[0][0] == "999"
    item = collect(a, slice(0, 1))[0]
    assert item["meta"]["label"] == "Putting something on something"
    assert item["meta"]["idx"] == 0
    assert item["meta"]["caption"] == "putting a pen on a table"
    assert item["meta"]["placeholders"] == ["a pen", "a table"]
    assert item["meta"]["num_frames"] == 5
    with pytest.raises(InputError, match="999.*file not found"):
        collect(a, slice(3, 4))
    # Without the class file: sorted classes.
    assert TwentyBNAdapter(str(labels), str(videos)).label2idx == {
        "Pushing something": 0, "Putting something on something": 1}


def _has_codec(name):
    import av
    return name in av.codecs_available


def test_20bn_csv_with_frame_folders(tmp_path):
    data = tmp_path / "20bn-jester-v1"
    for id_, n in (("34870", 3), ("5", 2)):
        (data / id_).mkdir(parents=True)
        for k in range(n):
            (data / id_ / f"{k + 1:05d}.jpg").write_bytes(jpeg_bytes(k, 24, 16))
    csv_file = tmp_path / "jester-v1-validation.csv"
    csv_file.write_text("34870;Drumming Fingers\n5;Thumb Up\n")
    classes = tmp_path / "jester-v1-labels.csv"
    classes.write_text("Doing other things\nDrumming Fingers\nThumb Up\n")
    a = TwentyBNAdapter(str(csv_file), str(data), class_file=str(classes))
    items = collect(a)
    assert [i["id"] for i in items] == ["34870", "5"]
    assert items[0]["frames"] == [jpeg_bytes(k, 24, 16) for k in range(3)]  # stored as they are
    assert items[0]["meta"] == {"id": "34870", "label": "Drumming Fingers", "idx": 1,
                                "num_frames": 3, "height": 16, "width": 24}
    test_csv = tmp_path / "test.csv"
    test_csv.write_text("5\n")
    t = TwentyBNAdapter(str(test_csv), str(data))
    assert collect(t)[0]["meta"] == {"id": "5", "num_frames": 2, "height": 16, "width": 24}
    bad_classes = tmp_path / "few.csv"
    bad_classes.write_text("Thumb Up\n")
    with pytest.raises(ValueError, match="not in"):
        TwentyBNAdapter(str(csv_file), str(data), class_file=str(bad_classes))


def test_kinetics(tmp_path):
    data = tmp_path / "train"
    # A trimmed clip in a label folder, and a full video to cut a range from.
    write_video(data / "abseiling" / f"{kinetics_clip_name('aaa', 4, 14)}.mp4", num_frames=8,
                video=1)
    write_video(data / "full" / "bbb.mkv", num_frames=25, rate=10, video=2)  # 2.5 s
    csv_file = tmp_path / "train.csv"
    csv_file.write_text("label,youtube_id,time_start,time_end,split\n"
                        "abseiling,aaa,4,14,train\n"
                        "\"air drumming, fast\",bbb,1,2,train\n"
                        "abseiling,ccc,0,10,train\n")
    a = KineticsAdapter(str(csv_file), str(data))
    assert a.item_ids() == ["aaa_000004_000014", "bbb_000001_000002", "ccc_000000_000010"]
    assert a.label2idx == {"abseiling": 0, "air drumming, fast": 1}
    assert [m[0] for m in a.missing()] == ["ccc_000000_000010"]
    first, second = collect(a, slice(0, 2))
    assert first["meta"]["num_frames"] == 8
    assert first["meta"]["youtube_id"] == "aaa" and first["meta"]["split"] == "train"
    assert first["meta"]["time_start"] == 4.0
    assert len(second["frames"]) == 10        # [1 s, 2 s) of a 10 fps video
    red = simplejpeg.decode_jpeg(second["frames"][0])[..., 0].mean()
    assert abs(red - red_level(2, 10)) < 6
    bad = tmp_path / "bad.csv"
    bad.write_text("youtube_id,label\nx,y\n")
    with pytest.raises(ValueError, match="time_start"):
        KineticsAdapter(str(bad), str(data))
    backwards = tmp_path / "backwards.csv"
    backwards.write_text("youtube_id,time_start,time_end\nx,5,3\n")
    with pytest.raises(ValueError, match="not after"):
        KineticsAdapter(str(backwards), str(data))
