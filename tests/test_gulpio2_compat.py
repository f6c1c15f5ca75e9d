"""gulpio2's API as its users call it (docs/compat.md): what gulpio2's own test suite showed missing
or different, pinned here. Helpers (utils, sanity_utils) and the gulp2_* commands are in
test_gulpio2_helpers.py and test_gulp2_commands.py."""

from __future__ import annotations

import collections
import json
import pickle

import numpy as np
import pytest

from gulp_testing import SyntheticAdapter, video_id
from tf_gulp.gulp import GulpChunk, GulpDirectory, GulpIngestor, IngestError
from tf_gulp.gulp import fileio, utils
from tf_gulp.gulp.chunk import encode_frame
from tf_gulp.gulp.chunk_writer import ChunkWriter


def chunk_at(tmp_path, n=0, *args, **kwargs):
    return GulpChunk(tmp_path / f"data_{n}.gulp", tmp_path / f"meta_{n}.gmeta", *args, **kwargs)


# --------------------------------------------------------------------------------------------------
# fileio's functions and serializers


def test_fileio_exports_gulpio2s_names():
    for name in ("GulpChunk", "ChunkWriter", "GulpIngestor", "GulpDirectory",
                 "calculate_chunk_slices", "json_serializer", "pickle_serializer",
                 "extract_input_for_getitem", "ImgInfo", "AbstractSerializer"):
        assert hasattr(fileio, name), name
    assert fileio.GulpChunk is GulpChunk and fileio.GulpIngestor is GulpIngestor
    assert fileio.ImgInfo(1, 2, 3)._asdict() == {"loc": 1, "pad": 2, "length": 3}


def test_gulpio2_module_names_exist():
    # `import gulpio2` -> `import tf_gulp.gulp`: the package's version and gulpio2's modules.
    import tf_gulp
    import tf_gulp.gulp as gulp
    from tf_gulp.gulp.adapters import AbstractDatasetAdapter, Custom20BNJsonVideoAdapter
    assert gulp.__version__ == tf_gulp.__version__
    assert issubclass(Custom20BNJsonVideoAdapter, AbstractDatasetAdapter)
    from tf_gulp.gulp import sanity_utils  # noqa: F401
    with pytest.raises(AttributeError):
        gulp.adapters.NoSuchAdapter


@pytest.mark.parametrize("serializer", [fileio.json_serializer, fileio.pickle_serializer])
def test_serializers_round_trip(tmp_path, serializer):
    path = str(tmp_path / "thing")
    serializer.dump({"b": [1, 2], "a": "x"}, path)
    loaded = serializer.load(path)
    assert loaded == {"b": [1, 2], "a": "x"} and list(loaded) == ["b", "a"]
    if serializer is fileio.json_serializer:
        assert isinstance(loaded, collections.OrderedDict)
        assert json.loads((tmp_path / "thing").read_text()) == loaded
    else:
        assert pickle.loads((tmp_path / "thing").read_bytes()) == loaded


def test_extract_input_for_getitem():
    assert fileio.extract_input_for_getitem(1) == ("1", None)
    assert fileio.extract_input_for_getitem("a") == ("a", None)
    assert fileio.extract_input_for_getitem((1, slice(1, 2))) == ("1", slice(1, 2))
    for bad in ((1, 2, 3), 0.1, None):
        with pytest.raises(TypeError):
            fileio.extract_input_for_getitem(bad)


def test_calculate_chunk_slices_and_its_errors():
    assert fileio.calculate_chunk_slices(1, 2) == [slice(0, 1), slice(1, 2)]
    assert fileio.calculate_chunk_slices(2, 3) == [slice(0, 2), slice(2, 3)]
    assert fileio.calculate_chunk_slices(100, 2) == [slice(0, 2)]
    # gulpio2 asserts; ours is an AssertionError and a ValueError, raised under python -O too.
    for args in ((0, 1), (1, 0), (-1, 5)):
        with pytest.raises(AssertionError):
            fileio.calculate_chunk_slices(*args)
        with pytest.raises(ValueError):
            fileio.calculate_chunk_slices(*args)


# --------------------------------------------------------------------------------------------------
# GulpChunk


def test_chunk_takes_gulpio2s_positional_signature(tmp_path):
    chunk = chunk_at(tmp_path, 0, fileio.json_serializer, utils.jpeg_bytes_to_img)
    assert chunk.serializer is fileio.json_serializer
    assert chunk.jpeg_decoder is utils.jpeg_bytes_to_img
    assert chunk.meta_dict == collections.OrderedDict() and chunk.fp is None
    assert chunk.jpeg_quality == 90
    # Our settings are keyword-only: a JPEG quality given where gulpio2 has the serializer is
    # refused with a message saying so, never taken for a serializer.
    with pytest.raises(TypeError, match="keyword-only"):
        chunk_at(tmp_path, 0, 75)
    with pytest.raises(TypeError, match="jpeg_decoder"):
        chunk_at(tmp_path, 0, fileio.json_serializer, "not a function")
    assert chunk_at(tmp_path, 0, jpeg_quality=75).jpeg_quality == 75


def test_chunk_fp_is_the_open_file(tmp_path):
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        assert chunk.fp is not None and chunk.fp.writable()
        chunk.append("v", {}, [np.zeros((8, 8, 3), np.uint8)])
    assert chunk.fp is None
    with chunk.open("rb"):
        assert chunk.fp.pread(2, 0) == b"\xff\xd8"  # a positional reader: no shared position
    assert chunk.fp is None


def test_chunk_with_pickle_serializer_reads_back_with_it(tmp_path):
    chunk = chunk_at(tmp_path, 0, fileio.pickle_serializer)
    frame = np.full((8, 8, 3), 77, np.uint8)
    with chunk.open("wb"):
        chunk.append(5, {"m": 1}, [frame, frame])
    stored = pickle.loads((tmp_path / "meta_0.gmeta").read_bytes())
    assert list(stored) == ["5"] and len(stored["5"]["frame_info"]) == 2
    again = chunk_at(tmp_path, 0, fileio.pickle_serializer)
    frames, meta = again[5]
    assert meta == {"m": 1} and len(frames) == 2
    assert np.abs(frames[0].astype(int) - 77).max() <= 2
    with again.open("ab"):  # appending keeps the serializer's format
        again.append(6, {"m": 2}, [frame])
    assert list(pickle.loads((tmp_path / "meta_0.gmeta").read_bytes())) == ["5", "6"]


def test_chunk_open_with_unknown_flag_raises_not_implemented(tmp_path):
    chunk = chunk_at(tmp_path)
    with pytest.raises(NotImplementedError, match="'r'"):
        with chunk.open("r"):
            pass
    with pytest.raises(ValueError):  # what tf_gulp raised before; still true
        with chunk.open("NO_SUCH_FLAG"):
            pass


def test_chunk_meta_dict_may_be_assigned(tmp_path):
    chunk = chunk_at(tmp_path)
    chunk.meta_dict = {"0": {"meta_data": [{}], "frame_info": []}}
    assert 0 in chunk and 1 not in chunk


def test_iter_all_shuffles_with_numpy_and_filters(tmp_path):
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        for i in range(6):
            chunk.append(i, {"i": i}, [np.full((8, 8), 10 * i, np.uint8)])
    in_order = [meta["i"] for _frames, meta in chunk]
    assert in_order == list(range(6))
    np.random.seed(123)
    shuffled = [meta["i"] for _f, meta in chunk.iter_all(shuffle=True)]
    np.random.seed(123)
    expected = [str(i) for i in range(6)]
    np.random.shuffle(expected)
    assert shuffled == [int(i) for i in expected] and shuffled != in_order
    assert [m["i"] for _f, m in chunk.iter_all(accepted_ids=["1", 4, "9"])] == [1, 4]
    # As in gulpio2: iterate a chunk already open for reading; it stays open, and a chunk
    # iterated without open() is closed again afterwards.
    with chunk.open("rb"):
        assert [m["i"] for _f, m in chunk] == list(range(6))
        assert chunk.fp is not None
    assert chunk.fp is None


def test_iterations_of_one_chunk_do_not_share_state(tmp_path):
    # iter_all reads through read_frames (gulpio2) without opening the chunk, so threads and
    # interleaved iterations of one chunk object each read correctly.
    import concurrent.futures
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        for i in range(8):
            chunk.append(i, {"i": i}, [np.full((8, 8), 30 * i, np.uint8)] * 2)

    def values(iteration):
        return [(meta["i"], int(frames[1].mean())) for frames, meta in iteration]

    expected = [(i, 30 * i) for i in range(8)]
    first, second = chunk.iter_all(), chunk.iter_all()
    assert next(first)[1]["i"] == 0 and next(second)[1]["i"] == 0
    assert values(first) == expected[1:]  # ends while `second` is suspended
    assert values(second) == expected[1:]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(lambda _: values(chunk.iter_all()), range(16)))
    assert runs == [expected] * 16
    assert chunk.fp is None and chunk._iter_readers == {}
    with chunk.open("ab"):  # nothing left open
        chunk.append(8, {"i": 8}, [np.zeros((8, 8), np.uint8)])


def test_jpeg_write_quality_setting_is_the_default(tmp_path, monkeypatch):
    # gulpio2's tests raise gulpio2.utils._JPEG_WRITE_QUALITY to 100 for exact round trips.
    monkeypatch.setattr(utils, "_JPEG_WRITE_QUALITY", 100)
    assert chunk_at(tmp_path).jpeg_quality == 100
    assert GulpIngestor(SyntheticAdapter([1], 8, 8), tmp_path, 1, 1).jpeg_quality == 100
    frame = np.ones((4, 1, 3), np.uint8)
    assert utils.img_to_jpeg_bytes(frame) == encode_frame(frame, quality=100)
    assert utils.img_to_jpeg_bytes(frame) != encode_frame(frame, quality=90)
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        chunk.append(0, {}, [frame])
    np.testing.assert_array_equal(chunk[0][0][0], frame)


# --------------------------------------------------------------------------------------------------
# ChunkWriter and GulpIngestor


class Recorder:
    """Stands for a chunk: records what the writer appends."""

    def __init__(self):
        self.appended = []
        self.meta_dict = collections.defaultdict(lambda: {"frame_info": []})

    def open(self, flag):
        import contextlib
        return contextlib.nullcontext(self)

    def __contains__(self, id_):
        return False

    def append(self, id_, meta, frames):
        self.appended.append((id_, meta, frames))


class ListAdapter:
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def iter_data(self, slice_element=None):
        yield from self.items[slice_element or slice(None)]


def test_chunk_writer_passes_items_to_append_as_given():
    item = {"id": 0, "meta": {"meta": "ANY"}, "frames": ["F1", "F2"]}
    out = Recorder()
    assert ChunkWriter(ListAdapter([item])).write_chunk(out, slice(0, 1)) == 1
    assert out.appended == [(0, {"meta": "ANY"}, ["F1", "F2"])]


def test_items_without_frames_are_left_out_with_gulpio2s_message(tmp_path, capsys):
    # Video 1 of 4 has no frames: gulpio2 prints its message and writes the others.
    adapter = SyntheticAdapter([2, 0, 3, 1], 8, 8)
    summary = GulpIngestor(adapter, tmp_path / "out", 2, 1, progress=False)()
    out = capsys.readouterr().out
    assert f"Failed to write video with id: {video_id(1)}; no frames" in out
    gd = GulpDirectory(tmp_path / "out")
    assert gd.chunk_lookup == {video_id(0): 0, video_id(2): 1, video_id(3): 1}
    assert [(s.index, s.id, s.reason) for s in summary.skipped] == [(1, video_id(1), "no frames")]
    # In worker processes too.
    GulpIngestor(adapter, tmp_path / "pool", 1, 2, progress=False)()
    assert sorted(GulpDirectory(tmp_path / "pool").chunk_lookup) == [
        video_id(0), video_id(2), video_id(3)]
    # skip_empty=False (tf-gulp ingest): an item without frames is a failed item.
    with pytest.raises(IngestError, match="no frames"):
        GulpIngestor(adapter, tmp_path / "strict", 2, 1, progress=False, skip_empty=False)()


class Renamed(SyntheticAdapter):
    def __init__(self, counts, prefix):
        super().__init__(counts, 8, 8)
        self.prefix = prefix

    def iter_data(self, slice_element=None):
        for item in super().iter_data(slice_element):
            yield dict(item, id=self.prefix + item["id"])


def test_ingestor_appends_to_an_existing_directory_by_default(tmp_path):
    # gulpio2 extends a gulp directory with data_2.gulp, ...; its own tests rely on it.
    GulpIngestor(Renamed([1, 1, 1], "a"), tmp_path, 2, 1, progress=False)()
    GulpIngestor(Renamed([2, 2], "b"), tmp_path, 1, 1, progress=False)()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["data_0.gulp", "data_1.gulp", "data_2.gulp", "data_3.gulp",
                     "meta_0.gmeta", "meta_1.gmeta", "meta_2.gmeta", "meta_3.gmeta"]
    gd = GulpDirectory(tmp_path)
    assert gd.chunk_lookup["b" + video_id(1)] == 3 and len(gd.merged_meta_dict) == 5
    # if_exists="error" (what tf-gulp ingest passes unless --append) still refuses.
    with pytest.raises(FileExistsError):
        GulpIngestor(Renamed([1], "c"), tmp_path, 1, 1, progress=False, if_exists="error")()


ADAPTER_FILE = '''
import numpy as np
from tf_gulp.gulp.adapters import AbstractDatasetAdapter


class WithEmpty(AbstractDatasetAdapter):
    def __init__(self, input_path):
        self.items = [{"id": "full", "meta": {}, "frames": [np.zeros((8, 8, 3), np.uint8)]},
                      {"id": "empty", "meta": {}, "frames": []}]

    def __len__(self):
        return len(self.items)

    def iter_data(self, slice_element=None):
        yield from self.items[slice_element or slice(None)]
'''


def test_tf_gulp_ingest_keeps_its_safe_defaults(tmp_path):
    # The command is stricter than the gulpio2-compatible Python API: an item without frames is
    # an error unless --skip-bad, and an output holding a dataset is refused unless --append.
    from ingest_testing import run_cli
    (tmp_path / "with_empty.py").write_text(ADAPTER_FILE)
    adapter = f"{tmp_path / 'with_empty.py'}:WithEmpty"
    out = tmp_path / "out"
    common = ["--num-workers", "1", "--no-progress"]
    code, _stdout, err = run_cli("ingest", "--adapter", adapter, tmp_path, out, *common)
    assert code == 1 and "no frames" in err and "'empty'" in err
    code, _stdout, err = run_cli("ingest", "--adapter", adapter, tmp_path, out, "--skip-bad",
                                 *common)
    assert code == 0, err
    assert list(GulpDirectory(out).chunk_lookup) == ["full"]
    other_input = tmp_path / "other"
    other_input.mkdir()
    code, _stdout, err = run_cli("ingest", "--adapter", adapter, other_input, out, "--skip-bad",
                                 *common)
    assert code == 2 and "already holds" in err and "--append" in err
    assert list(GulpDirectory(out).chunk_lookup) == ["full"]
