"""The gulp writer: GulpChunk's byte layout, frame kinds, 'wb'/'ab' semantics, crash safety, and
the ingestor (serial and with a process pool)."""

import io
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import simplejpeg

from tf_gulp.gulp import (AbstractDatasetAdapter, ChunkWriter, GulpChunk, GulpDataError,
                          GulpDirectory, GulpIngestor)
from tf_gulp.gulp.chunk import encode_frame
from tf_gulp.gulp.ingest import chunk_slices

from gulp_testing import SyntheticAdapter, make_gulp_dir, synthetic_frame

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent


def rng_frames(seed, n, shape):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, shape, dtype=np.uint8) for _ in range(n)]


def jpeg(arr):
    """Independent reference encoding: q90, 4:4:4 (gulpio2's settings)."""
    arr = np.ascontiguousarray(arr)
    if arr.ndim == 2:
        return simplejpeg.encode_jpeg(arr[:, :, None], quality=90, colorspace="GRAY",
                                      colorsubsampling="Gray")
    return simplejpeg.encode_jpeg(arr, quality=90, colorspace="RGB", colorsubsampling="444")


def layout(videos):
    """Expected (.gulp bytes, .gmeta text) for [(id, meta, [jpeg bytes])], from the spec."""
    data = bytearray()
    meta = {}
    for id_, m, jpegs in videos:
        entry = meta.setdefault(str(id_), {"frame_info": [], "meta_data": []})
        for j in jpegs:
            pad = (4 - len(j) % 4) % 4
            entry["frame_info"].append([len(data), pad, len(j) + pad])
            data += j + b"\0" * pad
        entry["meta_data"].append(m)
    return bytes(data), json.dumps(meta)


def chunk_at(tmp_path, n=0):
    return GulpChunk(tmp_path / f"data_{n}.gulp", tmp_path / f"meta_{n}.gmeta")


def read_bytes(path):
    return pathlib.Path(path).read_bytes()


# --------------------------------------------------------------------------------------------------
# Byte layout


def test_layout_is_byte_exact(tmp_path):
    rgb = rng_frames(0, 3, (16, 24, 3))
    gray = rng_frames(1, 2, (10, 12))
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        chunk.append("clip", {"label": "x", "n": 3}, rgb)
        chunk.append(42, {"label": "y"}, gray)
    data, meta = layout([("clip", {"label": "x", "n": 3}, [jpeg(f) for f in rgb]),
                         ("42", {"label": "y"}, [jpeg(f) for f in gray])])
    assert read_bytes(chunk.data_file_path) == data
    assert pathlib.Path(chunk.meta_file_path).read_text() == meta
    # Spot-check the spec directly too.
    index = json.loads(meta)
    assert list(index) == ["clip", "42"]
    for entry in index.values():
        for offset, pad, total in entry["frame_info"]:
            assert offset % 4 == 0 and total % 4 == 0 and 0 <= pad <= 3
            assert data[offset + total - pad:offset + total] == b"\0" * pad
            assert data[offset:offset + 2] == b"\xff\xd8"
    last = index["42"]["frame_info"][-1]
    assert len(data) == last[0] + last[2]


def test_padding_covers_every_remainder(tmp_path):
    # Hand-made "JPEGs" of lengths 4k .. 4k+3 (stored as is) exercise pads 0, 3, 2, 1.
    blobs = [b"\xff\xd8" + b"a" * k for k in (2, 3, 4, 5)]
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        chunk.append("v", {}, blobs)
    info = chunk.meta_dict["v"]["frame_info"]
    assert info == [[0, 0, 4], [4, 3, 8], [12, 2, 8], [20, 1, 8]]
    assert read_bytes(chunk.data_file_path) == layout([("v", {}, blobs)])[0]


def test_json_uses_python_defaults(tmp_path):
    chunk = chunk_at(tmp_path)
    meta = {"name": "caf\u00e9 \u2603", "x": float("nan"), "nested": {"l": [1, 2.5, None, True]}}
    with chunk.open("wb"):
        chunk.append("v", meta, rng_frames(2, 1, (8, 8, 3)))
    text = pathlib.Path(chunk.meta_file_path).read_text(encoding="ascii")
    assert '"caf\\u00e9 \\u2603"' in text and "NaN" in text
    assert '"frame_info": [[0, ' in text and '], "meta_data": [{' in text


def test_ids_stored_as_str_and_same_id_twice(tmp_path):
    a, b = rng_frames(3, 2, (8, 8, 3)), rng_frames(4, 3, (8, 8, 3))
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        chunk.append(7, {"part": 1}, a)
        chunk.append("other", {}, rng_frames(5, 1, (8, 8, 3)))
        chunk.append("7", {"part": 2}, b)
    index = json.loads(pathlib.Path(chunk.meta_file_path).read_text())
    assert list(index) == ["7", "other"]
    assert index["7"]["meta_data"] == [{"part": 1}, {"part": 2}]
    assert len(index["7"]["frame_info"]) == 5
    frames, meta = GulpDirectory(tmp_path)[7]
    assert meta == {"part": 1} and len(frames) == 5
    assert 7 in chunk and "7" in chunk and len(chunk) == 2


# --------------------------------------------------------------------------------------------------
# Frame kinds


def test_frame_kinds(tmp_path):
    rgb = rng_frames(6, 1, (12, 20, 3))[0]
    gray = rng_frames(7, 1, (12, 20))[0]
    rgba = rng_frames(8, 1, (12, 20, 4))[0]
    big = rng_frames(9, 1, (24, 40, 3))[0]
    noncontig = big[::2, ::2]                  # strided view
    fortran = np.asfortranarray(rgb)
    transposed = rng_frames(10, 1, (20, 12, 3))[0].transpose(1, 0, 2)
    pre_encoded = simplejpeg.encode_jpeg(rgb, quality=50, colorsubsampling="420")
    frames = [rgb, gray, gray[:, :, None], rgba, noncontig, fortran, transposed, pre_encoded,
              bytearray(pre_encoded)]
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        chunk.append("kinds", {}, frames)
    expected = [jpeg(rgb), jpeg(gray), jpeg(gray), jpeg(rgba[:, :, :3]), jpeg(noncontig),
                jpeg(rgb), jpeg(transposed), pre_encoded, pre_encoded]
    assert read_bytes(chunk.data_file_path) == layout([("kinds", {}, expected)])[0]
    decoded, _ = GulpDirectory(tmp_path)["kinds"]
    assert [f.shape for f in decoded] == [(12, 20, 3), (12, 20), (12, 20), (12, 20, 3),
                                          (12, 20, 3), (12, 20, 3), (12, 20, 3), (12, 20, 3),
                                          (12, 20, 3)]
    assert all(f.dtype == np.uint8 for f in decoded)


def test_frames_as_4d_array(tmp_path):
    video = np.stack(rng_frames(11, 4, (8, 16, 3)))
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        chunk.append("v", {}, video)
    assert len(chunk.meta_dict["v"]["frame_info"]) == 4


def test_pil_images(tmp_path):
    Image = pytest.importorskip("PIL.Image", reason="Pillow not installed")
    rgb = rng_frames(12, 1, (10, 14, 3))[0]
    palette = Image.fromarray(rgb).convert("P")
    gray = Image.fromarray(rgb).convert("L")
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        chunk.append("v", {}, [Image.fromarray(rgb), palette, gray])
    frames, _ = GulpDirectory(tmp_path)["v"]
    # A palette image is stored as its colours (gulpio2 stores the palette indices).
    assert frames[1].shape == (10, 14, 3)
    assert np.abs(frames[1].astype(int) - np.asarray(palette.convert("RGB"), int)).mean() < 8
    assert frames[2].shape == (10, 14)
    assert read_bytes(chunk.data_file_path)[:len(jpeg(rgb))] == jpeg(rgb)


@pytest.mark.parametrize("bad, error", [
    (np.zeros((8, 8, 3), np.float32), TypeError),
    (np.zeros((8, 8, 2), np.uint8), ValueError),
    (np.zeros((2, 8, 8, 3), np.uint8), ValueError),
    (np.zeros((0, 8, 3), np.uint8), ValueError),
    (b"not a jpeg", ValueError),
])
def test_bad_frames_leave_chunk_unchanged(tmp_path, bad, error):
    good = rng_frames(13, 2, (8, 8, 3))
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        chunk.append("ok", {}, good)
        with pytest.raises(error):
            chunk.append("bad", {}, [good[0], bad])
    assert list(chunk.meta_dict) == ["ok"]
    assert read_bytes(chunk.data_file_path) == layout([("ok", {}, [jpeg(f) for f in good])])[0]


@pytest.mark.parametrize("fmt,name", [("TIFF", "TIFF"), ("WEBP", "WebP"), ("PNG", "PNG")])
def test_picture_bytes_of_another_format_are_refused_by_name(fmt, name):
    Image = pytest.importorskip("PIL.Image", reason="Pillow not installed")
    out = io.BytesIO()
    Image.new("RGB", (8, 8)).save(out, fmt)
    with pytest.raises(ValueError, match=rf"frame given as bytes is a {name} picture, not a JPEG: "
                                         "pass it decoded"):
        encode_frame(out.getvalue())


def test_non_json_meta_rejected_at_append(tmp_path):
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        with pytest.raises(TypeError, match="JSON"):
            chunk.append("v", {"x": object()}, rng_frames(14, 1, (8, 8, 3)))
        chunk.append("w", {}, rng_frames(14, 1, (8, 8, 3)))
    assert list(chunk.meta_dict) == ["w"]


def test_jpeg_settings_configurable(tmp_path):
    frame = rng_frames(15, 1, (16, 16, 3))[0]
    chunk = GulpChunk(tmp_path / "data_0.gulp", tmp_path / "meta_0.gmeta", jpeg_quality=60,
                      jpeg_subsampling="420")
    with chunk.open("wb"):
        chunk.append("v", {}, [frame])
    expected = simplejpeg.encode_jpeg(frame, quality=60, colorsubsampling="420")
    assert read_bytes(chunk.data_file_path).rstrip(b"\0") == expected.rstrip(b"\0")
    assert simplejpeg.decode_jpeg_header(expected)[3] == "420"
    with pytest.raises(ValueError):
        GulpChunk("d", "m", jpeg_quality=0)
    with pytest.raises(ValueError):
        GulpChunk("d", "m", jpeg_subsampling="999")
    assert encode_frame(frame) == jpeg(frame)


def test_append_requires_write_mode(tmp_path):
    chunk = chunk_at(tmp_path)
    with pytest.raises(RuntimeError):
        chunk.append("v", {}, [])
    with pytest.raises(ValueError):
        with chunk.open("r"):
            pass


# --------------------------------------------------------------------------------------------------
# 'wb' replaces, 'ab' appends


def test_wb_replaces_existing_chunk(tmp_path):
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        chunk.append("a", {"v": 1}, rng_frames(16, 3, (8, 8, 3)))
        chunk.append("b", {"v": 2}, rng_frames(17, 2, (8, 8, 3)))
    new = rng_frames(18, 1, (8, 8, 3))
    with GulpChunk(chunk.data_file_path, chunk.meta_file_path).open("wb") as again:
        again.append("c", {"v": 3}, new)
    data, meta = layout([("c", {"v": 3}, [jpeg(f) for f in new])])
    # No stale entries (gulpio2 keeps "a" and "b" pointing into the new file).
    assert pathlib.Path(chunk.meta_file_path).read_text() == meta
    assert read_bytes(chunk.data_file_path) == data
    assert sorted(os.listdir(tmp_path)) == ["data_0.gulp", "meta_0.gmeta"]


def test_ab_appends(tmp_path):
    first = rng_frames(19, 2, (8, 8, 3))
    second = rng_frames(20, 3, (8, 8, 3))
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        chunk.append("a", {"v": 1}, first)
    old_data = read_bytes(chunk.data_file_path)
    with chunk.open("ab"):
        chunk.append("b", {"v": 2}, second[:1])
        chunk.append("a", {"v": 3}, second[1:])
    data, meta = layout([("a", {"v": 1}, [jpeg(f) for f in first]),
                         ("b", {"v": 2}, [jpeg(second[0])]),
                         ("a", {"v": 3}, [jpeg(f) for f in second[1:]])])
    assert read_bytes(chunk.data_file_path) == data
    assert data.startswith(old_data)
    assert pathlib.Path(chunk.meta_file_path).read_text() == meta
    frames, m = GulpDirectory(tmp_path)["a"]
    assert len(frames) == 4 and m == {"v": 1}


def test_ab_after_trailing_bytes(tmp_path):
    # An interrupted append leaves unindexed bytes at the end; readers and later appends cope.
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        chunk.append("a", {}, rng_frames(21, 1, (8, 8, 3)))
    with open(chunk.data_file_path, "ab") as f:
        f.write(b"\x01\x02\x03")
    size = os.path.getsize(chunk.data_file_path)
    assert GulpDirectory(tmp_path)["a"][0][0].shape == (8, 8, 3)
    with chunk.open("ab"):
        chunk.append("b", {}, rng_frames(22, 1, (8, 8, 3)))
    assert chunk.meta_dict["b"]["frame_info"][0][0] == size
    gd = GulpDirectory(tmp_path)
    assert gd["b"][0][0].shape == (8, 8, 3) and gd["a"][0][0].shape == (8, 8, 3)


def test_ab_on_new_chunk_creates_it(tmp_path):
    chunk = chunk_at(tmp_path)
    with chunk.open("ab"):
        chunk.append("a", {}, rng_frames(23, 2, (8, 8, 3)))
    assert len(GulpDirectory(tmp_path)["a"][0]) == 2


def test_ab_refuses_inconsistent_chunk(tmp_path):
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        chunk.append("a", {}, rng_frames(24, 2, (8, 8, 3)))
    os.truncate(chunk.data_file_path, 10)
    with pytest.raises(GulpDataError, match="data_0.gulp"):
        with chunk.open("ab"):
            pass


# --------------------------------------------------------------------------------------------------
# Crash safety


def listing(path):
    return sorted(os.listdir(path))


def test_nothing_final_until_complete(tmp_path):
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        chunk.append("a", {}, rng_frames(25, 2, (8, 8, 3)))
        chunk.flush()
        assert listing(tmp_path) == ["data_0.gulp.tmp", "meta_0.gmeta.tmp"]
        assert GulpDirectory(tmp_path, require_chunks=False).num_chunks == 0
    assert listing(tmp_path) == ["data_0.gulp", "meta_0.gmeta"]


def test_exception_mid_chunk_leaves_nothing(tmp_path):
    chunk = chunk_at(tmp_path)
    with pytest.raises(RuntimeError, match="boom"):
        with chunk.open("wb"):
            chunk.append("a", {}, rng_frames(26, 2, (8, 8, 3)))
            chunk.flush()
            raise RuntimeError("boom")
    assert listing(tmp_path) == []
    assert GulpDirectory(tmp_path, require_chunks=False).num_chunks == 0


def test_exception_while_replacing_keeps_old_chunk(tmp_path):
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        chunk.append("a", {}, rng_frames(27, 2, (8, 8, 3)))
    before = {name: read_bytes(tmp_path / name) for name in listing(tmp_path)}
    for flag in ("wb", "ab"):
        with pytest.raises(KeyboardInterrupt):
            with chunk.open(flag):
                chunk.append("b", {}, rng_frames(28, 3, (8, 8, 3)))
                chunk.flush()
                raise KeyboardInterrupt
        assert {name: read_bytes(tmp_path / name) for name in listing(tmp_path)} == before
    assert list(chunk.meta_dict) == ["a"]


def test_failure_between_renames_leaves_no_valid_looking_chunk(tmp_path, monkeypatch):
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        chunk.append("a", {}, rng_frames(29, 1, (8, 8, 3)))
    real_replace = os.replace

    def failing_replace(src, dst):
        if str(dst).endswith(".gmeta"):
            raise OSError("simulated crash before the .gmeta rename")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="simulated"):
        with chunk.open("wb"):
            chunk.append("b", {}, rng_frames(30, 1, (8, 8, 3)))
    monkeypatch.undo()
    # The old chunk's .gmeta went first, so no index points into the new data: the chunk is
    # absent, never old index + new data. A .gulp without its .gmeta that no unfinished ingest is
    # writing is refused by every reader (as GulpDataset refuses it), not read as less data.
    assert "meta_0.gmeta" not in listing(tmp_path)
    with pytest.raises(FileNotFoundError, match="data_0.gulp: chunk has no index file"):
        GulpDirectory(tmp_path)


def test_fsyncs(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync

    def recording_fsync(fd):
        # tf_gulp targets Linux only (io_uring, preadv2), where /proc names each open fd.
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    chunk = chunk_at(tmp_path)
    with chunk.open("wb"):
        chunk.append("a", {}, rng_frames(31, 1, (8, 8, 3)))
    names = [os.path.basename(p) for p in synced]
    assert "data_0.gulp.tmp" in names and "meta_0.gmeta.tmp" in names
    assert names.count(tmp_path.name) >= 2   # the directory, after each rename


def test_write_atomically_fsyncs_the_file_then_its_directory(tmp_path, monkeypatch):
    # The one durable write (tf_gulp/_durable.py) that the ingest record, label2idx.json and the
    # Benzina parts go through: the file, then (after the rename) its directory.
    from tf_gulp._durable import write_atomically

    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")),
                                                 real_fsync(fd))[1])
    write_atomically(str(tmp_path / "x.json"), b"{}")
    assert [os.path.basename(p) for p in synced] == ["x.json.tmp", tmp_path.name]
    assert (tmp_path / "x.json").read_bytes() == b"{}"


def test_killed_writer_leaves_only_tmp_files(tmp_path):
    script = textwrap.dedent(f"""
        import os, sys, numpy as np
        sys.path.insert(0, {str(REPO_ROOT)!r})
        from tf_gulp.gulp import GulpChunk
        c = GulpChunk({str(tmp_path / 'data_0.gulp')!r}, {str(tmp_path / 'meta_0.gmeta')!r})
        with c.open('wb'):
            c.append('a', {{}}, [np.zeros((8, 8, 3), np.uint8)] * 3)
            c.flush()
            os._exit(3)   # no cleanup, like kill -9
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 3, proc.stderr
    assert listing(tmp_path) == ["data_0.gulp.tmp", "meta_0.gmeta.tmp"]
    assert GulpDirectory(tmp_path, require_chunks=False).num_chunks == 0


# --------------------------------------------------------------------------------------------------
# Adapters, ChunkWriter, GulpIngestor


def test_adapter_is_abstract():
    with pytest.raises(TypeError):
        AbstractDatasetAdapter()

    class OnlyLen(AbstractDatasetAdapter):
        def __len__(self):
            return 0

    with pytest.raises(TypeError):
        OnlyLen()


def test_chunk_slices():
    assert chunk_slices(3, 7) == [slice(0, 3), slice(3, 6), slice(6, 7)]
    assert chunk_slices(3, 6) == [slice(0, 3), slice(3, 6)]
    assert chunk_slices(5, 0) == []
    with pytest.raises(ValueError):
        chunk_slices(0, 3)


def test_chunk_writer(tmp_path):
    adapter = SyntheticAdapter([2, 3, 1, 4], 8, 12)
    chunk = chunk_at(tmp_path, 5)
    assert ChunkWriter(adapter).write_chunk(chunk, slice(1, 3)) == 2
    gd = GulpDirectory(tmp_path)
    assert list(gd.chunk_lookup.items()) == [("vid0001", 5), ("vid0002", 5)]
    frames, meta = gd["vid0002"]
    assert meta == adapter.meta(2) and len(frames) == 1
    assert np.abs(frames[0].astype(int) - synthetic_frame(2, 0, 8, 12)).max() <= 8


def dir_bytes(path):
    return {name: read_bytes(pathlib.Path(path) / name) for name in listing(path)}


@pytest.mark.parametrize("num_workers", [1, 2])
def test_ingestor(tmp_path, num_workers):
    counts = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]
    adapter = SyntheticAdapter(counts, 16, 20, labels=("x", "y", "z"))
    out = tmp_path / "out"
    GulpIngestor(adapter, out, videos_per_chunk=3, num_workers=num_workers, progress=False)()
    assert listing(out) == [f"data_{n}.gulp" for n in range(4)] + \
        [f"meta_{n}.gmeta" for n in range(4)]
    gd = GulpDirectory(out)
    assert list(gd.chunk_lookup) == [f"vid{i:04d}" for i in range(11)]
    assert [gd.chunk_lookup[f"vid{i:04d}"] for i in range(11)] == [i // 3 for i in range(11)]
    for i, n in enumerate(counts):
        frames, meta = gd[f"vid{i:04d}"]
        assert len(frames) == n and meta == adapter.meta(i)
    # Serial and parallel ingests write identical bytes.
    reference = tmp_path / "reference"
    reference.mkdir()
    for i, input_slice in enumerate(chunk_slices(3, len(counts))):
        ChunkWriter(adapter).write_chunk(
            GulpChunk(reference / f"data_{i}.gulp", reference / f"meta_{i}.gmeta"), input_slice)
    assert dir_bytes(out) == dir_bytes(reference)


def test_ingestor_refuses_existing_dataset(tmp_path):
    # if_exists="error": what tf-gulp ingest passes unless --append (the Python default appends,
    # as gulpio2: tests/test_gulpio2_compat.py).
    adapter = SyntheticAdapter([1, 2, 3], 8, 8)
    GulpIngestor(adapter, tmp_path, 2, 1, progress=False)()
    before = dir_bytes(tmp_path)
    with pytest.raises(FileExistsError, match="if_exists='append'"):
        GulpIngestor(adapter, tmp_path, 2, 1, progress=False, if_exists="error")()
    assert dir_bytes(tmp_path) == before
    # Leftovers of an interrupted ingest count too.
    other = tmp_path / "other"
    other.mkdir()
    (other / "data_0.gulp.tmp").write_bytes(b"")
    with pytest.raises(FileExistsError):
        GulpIngestor(adapter, other, 2, 1, progress=False, if_exists="error")()
    with pytest.raises(ValueError):
        GulpIngestor(adapter, other, 2, 1, if_exists="whatever")


def test_ingestor_append_numbers_after_existing(tmp_path):
    GulpIngestor(SyntheticAdapter([1, 2, 3], 8, 8), tmp_path, 2, 1, progress=False)()

    class Renamed(SyntheticAdapter):
        def iter_data(self, slice_element=None):
            for item in super().iter_data(slice_element):
                yield dict(item, id="new_" + item["id"])

    GulpIngestor(Renamed([4, 5], 8, 8), tmp_path, 1, 1, if_exists="append", progress=False)()
    gd = GulpDirectory(tmp_path)
    assert [c.data_file_path for c in gd.chunks()] == [
        str(tmp_path / f"data_{n}.gulp") for n in range(4)]
    assert gd.chunk_lookup["new_vid0001"] == 3 and len(gd["new_vid0001"][0]) == 5


class FailingAdapter(SyntheticAdapter):
    def iter_data(self, slice_element=None):
        for item in super().iter_data(slice_element):
            if item["id"] == "vid0004":
                raise RuntimeError("adapter failed on vid0004")
            yield item


@pytest.mark.parametrize("num_workers", [1, 2])
def test_ingestor_failure_leaves_only_complete_chunks(tmp_path, num_workers):
    with pytest.raises(RuntimeError, match="vid0004"):
        GulpIngestor(FailingAdapter([1] * 6, 8, 8), tmp_path, 2, num_workers, progress=False)()
    names = listing(tmp_path)
    assert not [n for n in names if n.endswith(".tmp")]
    assert "meta_2.gmeta" not in names and "data_2.gulp" not in names
    gd = GulpDirectory(tmp_path)
    assert set(gd.chunk_lookup) <= {"vid0000", "vid0001", "vid0002", "vid0003"}
    for id_ in gd.chunk_lookup:
        assert len(gd[id_][0]) == 1


def test_make_gulp_dir(tmp_path):
    info = make_gulp_dir(tmp_path / "g", 5, [1, 2, 3, 4, 5], 8, 12, 2, labels=("p", "q", "p"))
    assert info["ids"] == [f"vid{i:04d}" for i in range(5)] and info["num_chunks"] == 3
    assert info["label2idx"] == {"p": 0, "q": 1}
    assert json.loads((tmp_path / "g" / "label2idx.json").read_text()) == {"p": 0, "q": 1}
    gd = GulpDirectory(info["path"])
    for id_, video in info["videos"].items():
        frames, meta = gd[id_]
        assert len(frames) == video["num_frames"] and meta == video["meta"]
        assert gd.chunk_lookup[id_] == video["chunk"]
