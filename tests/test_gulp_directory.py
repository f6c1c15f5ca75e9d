"""GulpDirectory: gulpio2's reading API, numeric chunk order, errors, and sharing across threads."""

import concurrent.futures
import json
import os
import pickle
import random

import numpy as np
import pytest
import simplejpeg

from tf_gulp.gulp import GulpChunk, GulpDataError, GulpDirectory

from gulp_testing import (frame_value, make_gulp_dir, synthetic_frame, video_id, video_value)

COUNTS = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7]   # 14 videos


@pytest.fixture(scope="module")
def gulp_dir(tmp_path_factory):
    # 14 videos, 1 per chunk: chunks 0..13, so string order (0, 1, 10, ...) differs from numeric.
    path = tmp_path_factory.mktemp("gulp") / "g"
    return make_gulp_dir(path, len(COUNTS), COUNTS, 16, 24, videos_per_chunk=1,
                         labels=("a", "b", "c"))


def test_getitem_whole_video(gulp_dir):
    gd = GulpDirectory(gulp_dir["path"])
    for i, n in enumerate(COUNTS):
        frames, meta = gd[video_id(i)]
        assert meta == gulp_dir["videos"][video_id(i)]["meta"]
        assert len(frames) == n
        for j, frame in enumerate(frames):
            assert frame.shape == (16, 24, 3) and frame.dtype == np.uint8
            assert abs(frame[..., 0].mean() - video_value(i)) < 2
            assert abs(frame[..., 1].mean() - frame_value(j)) < 2
            assert np.abs(frame.astype(int) - synthetic_frame(i, j, 16, 24)).max() <= 8


def frame_ids(frames):
    """Which synthetic frame index each decoded frame is (by its green level)."""
    levels = [frame_value(j) for j in range(20)]
    return [int(np.argmin([abs(f[..., 1].mean() - v) for v in levels])) for f in frames]


def test_getitem_selections(gulp_dir):
    gd = GulpDirectory(gulp_dir["path"])
    vid = video_id(5)   # 9 frames
    assert frame_ids(gd[vid, 1:8:3][0]) == [1, 4, 7]
    assert frame_ids(gd[vid, ::-2][0]) == [8, 6, 4, 2, 0]
    assert frame_ids(gd[vid, [8, 0, 0, -1]][0]) == [8, 0, 0, 8]
    assert frame_ids(gd[vid, np.array([2, 3])][0]) == [2, 3]
    assert frame_ids(gd[vid, (5,)][0]) == [5]
    assert frame_ids(gd[vid, range(3)][0]) == [0, 1, 2]
    assert frame_ids(gd[vid, 4][0]) == [4]
    assert gd[vid, 20:30][0] == []
    assert gd[vid, []][0] == []
    frames, meta = gd[vid, [1]]
    assert meta == gulp_dir["videos"][vid]["meta"]
    with pytest.raises(IndexError):
        gd[vid, [9]]
    with pytest.raises(TypeError):
        gd[vid, "1"]
    with pytest.raises(TypeError):
        gd[vid, [1.0]]


def test_int_ids(tmp_path):
    chunk = GulpChunk(tmp_path / "data_0.gulp", tmp_path / "meta_0.gmeta")
    with chunk.open("wb"):
        chunk.append(42, {"id": 42}, [np.zeros((8, 8, 3), np.uint8)])
        chunk.append("007", {"id": "007"}, [np.zeros((8, 8), np.uint8)])
    gd = GulpDirectory(tmp_path)
    assert gd[42][1] == {"id": 42} and gd["42"][1] == {"id": 42}
    assert gd[np.int64(42)][1] == {"id": 42}
    assert gd["007"][0][0].shape == (8, 8)
    with pytest.raises(KeyError):
        gd[7]   # "7" is not "007"
    assert 42 in gd and "007" in gd and 7 not in gd


def test_index_attributes(gulp_dir):
    gd = GulpDirectory(gulp_dir["path"])
    ids = [video_id(i) for i in range(len(COUNTS))]
    assert gd.num_chunks == len(COUNTS)
    assert list(gd.chunk_lookup) == ids
    assert gd.chunk_lookup == {video_id(i): i for i in range(len(COUNTS))}
    assert list(gd.merged_meta_dict) == ids
    assert len(gd.all_meta_dicts) == len(COUNTS)
    for i, meta in enumerate(gd.all_meta_dicts):
        assert list(meta) == [video_id(i)]
        assert gd.merged_meta_dict[video_id(i)] is meta[video_id(i)]
        entry = meta[video_id(i)]
        assert entry["meta_data"] == [gulp_dir["videos"][video_id(i)]["meta"]]
        assert len(entry["frame_info"]) == COUNTS[i]
    assert list(gd.chunk_objs_lookup) == list(range(len(COUNTS)))


def test_chunks_in_numeric_order(gulp_dir):
    gd = GulpDirectory(gulp_dir["path"])
    names = [os.path.basename(c.data_file_path) for c in gd.chunks()]
    assert names == [f"data_{n}.gulp" for n in range(len(COUNTS))]
    assert [c.data_file_path for c in gd] == [c.data_file_path for c in gd.chunks()]
    for i, chunk in enumerate(gd.chunks()):
        assert isinstance(chunk, GulpChunk) and len(chunk) == 1 and video_id(i) in chunk
        with chunk.open("rb"):
            (frames, meta), = list(chunk.iter_all())
            assert len(frames) == COUNTS[i]
            frames2, meta2 = chunk.read_frames(video_id(i), slice(1, None))
            assert len(frames2) == COUNTS[i] - 1 and meta2 == meta
        # Reading also works without open() (gulpio2 needs it).
        assert chunk[video_id(i), [0]][0][0].shape == (16, 24, 3)


def test_chunk_iter_all_options(tmp_path):
    chunk = GulpChunk(tmp_path / "data_0.gulp", tmp_path / "meta_0.gmeta")
    with chunk.open("wb"):
        for id_ in ["a", "b", 3]:
            chunk.append(id_, {"id": str(id_)}, [np.zeros((8, 8, 3), np.uint8)])
    assert [m["id"] for _f, m in chunk.iter_all()] == ["a", "b", "3"]
    assert [m["id"] for _f, m in chunk.iter_all(accepted_ids=[3, "a"])] == ["a", "3"]
    assert [m["id"] for _f, m in chunk.iter_all(accepted_ids=["missing"])] == []
    random.seed(0)
    orders = {tuple(m["id"] for _f, m in chunk.iter_all(shuffle=True)) for _ in range(30)}
    assert len(orders) > 1 and all(sorted(o) == ["3", "a", "b"] for o in orders)


def test_new_chunks(gulp_dir, tmp_path):
    gd = GulpDirectory(gulp_dir["path"])
    new = gd.new_chunks(2)
    assert not isinstance(new, list)   # a generator, as in gulpio2
    assert [os.path.basename(c.data_file_path) for c in new] == ["data_14.gulp", "data_15.gulp"]
    empty = GulpDirectory(tmp_path, require_chunks=False)
    assert empty.num_chunks == 0 and empty.chunk_lookup == {}
    chunks = list(empty.new_chunks(2))
    assert [os.path.basename(c.meta_file_path) for c in chunks] == ["meta_0.gmeta", "meta_1.gmeta"]
    # Numbers of unfinished writes are not reused.
    (tmp_path / "data_4.gulp.tmp").write_bytes(b"")
    assert os.path.basename(next(empty.new_chunks(1)).data_file_path) == "data_5.gulp"


def test_read_jpegs_and_custom_decoder(gulp_dir):
    gd = GulpDirectory(gulp_dir["path"])
    jpegs, meta = gd.read_jpegs(video_id(2), [0, 3])
    assert len(jpegs) == 2 and all(j[:2] == b"\xff\xd8" and j[-2:] == b"\xff\xd9" for j in jpegs)
    assert meta == gulp_dir["videos"][video_id(2)]["meta"]
    calls = []

    def decoder(data):
        calls.append(type(data))
        return simplejpeg.decode_jpeg(data, colorspace="BGR")

    bgr = GulpDirectory(gulp_dir["path"], jpeg_decoder=decoder)[video_id(2), [0]][0][0]
    assert calls == [bytes]
    assert abs(bgr[..., 2].mean() - video_value(2)) < 2


def test_zero_padded_and_sparse_chunk_numbers(tmp_path):
    for name in ("2", "010", "9"):
        chunk = GulpChunk(tmp_path / f"data_{name}.gulp", tmp_path / f"meta_{name}.gmeta")
        with chunk.open("wb"):
            chunk.append(f"id{name}", {}, [np.zeros((8, 8, 3), np.uint8)])
    gd = GulpDirectory(tmp_path)
    assert gd.chunk_lookup == {"id2": 2, "id9": 9, "id010": 10}
    assert list(gd.chunk_objs_lookup) == [2, 9, 10]
    assert len(gd["id010"][0]) == 1
    assert os.path.basename(next(gd.new_chunks(1)).data_file_path) == "data_11.gulp"


# --------------------------------------------------------------------------------------------------
# Errors


def test_missing_directory():
    with pytest.raises(FileNotFoundError, match="/no/such/gulp/dir"):
        GulpDirectory("/no/such/gulp/dir")


def test_unknown_id(gulp_dir):
    gd = GulpDirectory(gulp_dir["path"])
    with pytest.raises(KeyError):
        gd["nope"]
    with pytest.raises(KeyError):
        gd.read_jpegs(12345)


def write_one(tmp_path, n=0, id_="v", frames=3):
    chunk = GulpChunk(tmp_path / f"data_{n}.gulp", tmp_path / f"meta_{n}.gmeta")
    with chunk.open("wb"):
        chunk.append(id_, {}, [np.full((8, 8, 3), k * 40, np.uint8) for k in range(frames)])
    return chunk


def test_offset_past_end_of_file(tmp_path):
    chunk = write_one(tmp_path)
    info = chunk.meta_dict["v"]["frame_info"]
    gd = GulpDirectory(tmp_path)
    os.truncate(chunk.data_file_path, info[2][0] + 5)   # cut the last frame short since
    assert len(gd["v", [0, 1]][0]) == 2
    for selection in (None, [2], slice(1, 3)):
        with pytest.raises(GulpDataError) as e:
            gd["v", selection]
        message = str(e.value)
        assert "data_0.gulp" in message and "'v'" in message and f"offset {info[2][0]}" in message

    # An index pointing beyond the end of the file is refused when it is read, as GulpDataset
    # refuses it (the core's rules, tests/test_gulp_malformed.py).
    index = json.loads((tmp_path / "meta_0.gmeta").read_text())
    index["v"]["frame_info"][0] = [10**9, 0, 100]
    (tmp_path / "meta_0.gmeta").write_text(json.dumps(index))
    with pytest.raises(GulpDataError, match=r"data_0.gulp: id 'v' frame 0: bytes \[1000000000"):
        GulpDirectory(tmp_path)


@pytest.mark.parametrize("entry", [[0, 1], [-4, 0, 8], [0, 9, 8], ["0", 0, 8], None])
def test_bad_frame_info_entries(tmp_path, entry):
    write_one(tmp_path)
    index = json.loads((tmp_path / "meta_0.gmeta").read_text())
    index["v"]["frame_info"][1] = entry
    (tmp_path / "meta_0.gmeta").write_text(json.dumps(index))
    with pytest.raises(GulpDataError, match="meta_0.gmeta: id 'v' frame 1"):
        GulpDirectory(tmp_path)


def test_undecodable_jpeg(tmp_path):
    chunk = write_one(tmp_path)
    offset = chunk.meta_dict["v"]["frame_info"][1][0]
    with open(chunk.data_file_path, "r+b") as f:
        f.seek(offset)
        f.write(b"\xff\xd8\x00\x00garbage")
    with pytest.raises(GulpDataError, match=f"frame 1 at byte offset {offset}"):
        GulpDirectory(tmp_path)["v"]


def test_bad_meta_files(tmp_path):
    write_one(tmp_path)
    (tmp_path / "meta_0.gmeta").write_text('{"v": {"frame_info": [[0, 1,')   # truncated
    with pytest.raises(GulpDataError, match="meta_0.gmeta"):
        GulpDirectory(tmp_path)
    (tmp_path / "meta_0.gmeta").write_text("[1, 2]")
    with pytest.raises(GulpDataError, match="meta_0.gmeta"):
        GulpDirectory(tmp_path)


def test_meta_without_data(tmp_path):
    chunk = write_one(tmp_path)
    os.unlink(chunk.data_file_path)
    with pytest.raises(FileNotFoundError, match="data_0.gulp"):
        GulpDirectory(tmp_path)


def test_data_without_meta(tmp_path):
    write_one(tmp_path, 0, "a")
    (tmp_path / "data_1.gulp").write_bytes(b"\xff\xd8 half-written chunk")
    # No unfinished ingest is writing it: a damaged directory, refused as GulpDataset refuses it.
    with pytest.raises(FileNotFoundError, match="data_1.gulp: chunk has no index file"):
        GulpDirectory(tmp_path)
    # A chunk an unfinished ingest is writing is skipped.
    (tmp_path / ".tf_gulp_ingest.json").write_text(json.dumps(
        {"format": "tf_gulp ingest record", "version": 1,
         "runs": [{"first_chunk": 0, "num_chunks": 2, "complete": False}]}))
    gd = GulpDirectory(tmp_path)
    assert gd.num_chunks == 1 and list(gd.chunk_lookup) == ["a"]


def test_same_id_in_two_chunks(tmp_path):
    write_one(tmp_path, 0, "dup")
    write_one(tmp_path, 1, "dup")
    with pytest.raises(GulpDataError, match="meta_1.gmeta: id 'dup': also in .*meta_0.gmeta"):
        GulpDirectory(tmp_path)


def test_close(gulp_dir):
    with GulpDirectory(gulp_dir["path"]) as gd:
        gd[video_id(0)]
    with pytest.raises(ValueError, match="closed"):
        gd[video_id(0)]


def test_pickle(gulp_dir):
    gd = GulpDirectory(gulp_dir["path"])
    gd[video_id(1)]
    clone = pickle.loads(pickle.dumps(gd))
    a, b = gd[video_id(3)], clone[video_id(3)]
    assert a[1] == b[1] and all(np.array_equal(x, y) for x, y in zip(a[0], b[0]))


# --------------------------------------------------------------------------------------------------
# Threads


def test_threads_share_one_directory(tmp_path):
    info = make_gulp_dir(tmp_path / "g", 24, [1 + (i * 5) % 11 for i in range(24)], 24, 32,
                         videos_per_chunk=5)
    rng = random.Random(1234)
    requests = []
    for _ in range(400):
        vid = rng.choice(info["ids"])
        n = info["videos"][vid]["num_frames"]
        kind = rng.randrange(3)
        if kind == 0:
            requests.append(vid)
        elif kind == 1:
            requests.append((vid, slice(rng.randrange(n), n, rng.randrange(1, 3))))
        else:
            requests.append((vid, [rng.randrange(n) for _ in range(rng.randrange(1, 5))]))

    serial_gd = GulpDirectory(info["path"])
    serial = [serial_gd[r] for r in requests]

    shared = GulpDirectory(info["path"])   # no fd opened yet: threads race to open them

    def work(worker):
        order = list(range(len(requests)))
        random.Random(worker).shuffle(order)
        return {k: shared[requests[k]] for k in order}

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(8)))
    for result in results:
        for k, (frames, meta) in result.items():
            want_frames, want_meta = serial[k]
            assert meta == want_meta and len(frames) == len(want_frames)
            assert all(np.array_equal(a, b) for a, b in zip(frames, want_frames))
    assert len(shared._files) == 5   # one descriptor per data file, however many threads
