"""Memory and time bounded by what a gulp directory's files really hold (issue 15).

Each damaged directory is built here, small on disk, in the shape a user met it; the readers and
``tf-gulp check`` / ``info`` then run on it in a child process whose address space is limited to
what a normal run needs plus 1 GiB (:mod:`rlimit_testing`), under a generous hang guard. Before the
fix each case asked for 4 GB or more, or ran for minutes; a regression now fails the test instead
of the machine.
"""

import json
import pathlib
import struct

import numpy as np
import pytest
import simplejpeg

from gulp_testing import make_gulp_dir
from rlimit_testing import CLI, measured_limit, run_limited
from tf_gulp.gulp import GulpDataError, GulpDirectory
from tf_gulp._runtime_libs import import_core

# The limits live in the core's JPEG decoder (cc/codec/jpeg_decoder.h), read by every reader.
_core = import_core()
MAX_FRAME_PIXELS = _core.JPEG_MAX_FRAME_PIXELS
MAX_PIXELS_PER_BYTE = _core.JPEG_MAX_PIXELS_PER_BYTE
frame_header_problem = _core.jpeg_header_problem
is_arithmetic_coded = _core.jpeg_is_arithmetic_coded

# Reads every id of a directory with GulpDirectory, decoded and as JPEG bytes, printing one line
# per read: "ok ID" or "error MESSAGE".
READ_ALL = """\
from tf_gulp.gulp import GulpDataError, GulpDirectory
gd = GulpDirectory(sys.argv[1])
for key in gd.merged_meta_dict:
    for read in (gd.__getitem__, gd.read_jpegs):
        try:
            read(key)
            print("ok", key)
        except GulpDataError as e:
            print("error", e)
"""

# Creates a GulpDataset on a directory and reads every element, decoded and not, printing one line
# per element or error: "ok ID" or "ERRORTYPE: MESSAGE".
DATASET = """\
import tensorflow as tf
import tf_gulp
for decode in (True, False):
    try:
        it = iter(tf_gulp.GulpDataset(sys.argv[1], decode=decode))
        for _ in range(100):
            try:
                print("ok", next(it)["id"].numpy().decode())
            except StopIteration:
                break
            except tf.errors.OpError as e:
                print(f"{type(e).__name__}: {e.message}")
    except tf.errors.OpError as e:
        print(f"{type(e).__name__}: {e.message}")
"""

# A child still running after this is killed and its test fails: hang guards, generous so that a
# loaded machine never reaches them (a normal run takes a few seconds). The tests assert what the
# child did (exit status, messages, memory), not how long it took.
PY_TIMEOUT = 180
TF_TIMEOUT = 300


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    return make_gulp_dir(tmp_path_factory.mktemp("good") / "g", 4, 3, 48, 64, 2)["path"]


@pytest.fixture(scope="module")
def limits(good):
    """Measured address-space limits per workload, computed on first use."""
    cache = {}

    def limit(name):
        if name not in cache:
            code, args, timeout = {
                "check": (CLI, ["check", "--decode", "--num-workers", "1", good], PY_TIMEOUT),
                "info": (CLI, ["info", "--all-frames", good], PY_TIMEOUT),
                "read": (READ_ALL, [good], PY_TIMEOUT),
                "dataset": (DATASET, [good], TF_TIMEOUT),
            }[name]
            cache[name] = measured_limit(code, *args, timeout=timeout)
        return cache[name]

    return limit


def run(limits, workload, *args):
    code, timeout = {"check": (CLI, PY_TIMEOUT), "info": (CLI, PY_TIMEOUT),
                     "read": (READ_ALL, PY_TIMEOUT), "dataset": (DATASET, TF_TIMEOUT)}[workload]
    if workload in ("check", "info"):
        args = (workload,) + args
    result = run_limited(code, *args, limit=limits(workload), timeout=timeout)
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert "MemoryError" not in result.stdout + result.stderr
    return result


def sof_offset(jpeg: bytes) -> int:
    """Offset of the frame header's marker (FF C0 / FF C2) in a JPEG."""
    p = 2
    while jpeg[p + 1] not in (0xC0, 0xC2):
        p += 2 + struct.unpack(">H", jpeg[p + 2:p + 4])[0]
    return p


def with_size(jpeg: bytes, width: int, height: int, marker: int = 0) -> bytes:
    """``jpeg`` with its header saying ``width`` x ``height`` (and SOF``marker`` if given)."""
    p = sof_offset(jpeg)
    out = bytearray(jpeg)
    if marker:
        out[p + 1] = marker
    out[p + 5:p + 9] = struct.pack(">HH", height, width)
    return bytes(out)


def frame_info(path, chunk):
    return json.loads((pathlib.Path(path) / f"meta_{chunk}.gmeta").read_text())


def write_record(path, **run):
    run = {"signature": {}, "num_items": 4, "videos_per_chunk": 2, "started": 0,
           "finished": None, "skipped": [], **run}
    record = {"format": "tf_gulp ingest record", "version": 1, "runs": [run]}
    (pathlib.Path(path) / ".tf_gulp_ingest.json").write_text(json.dumps(record))


# -- case 1: an ingest record with a huge chunk count ----------------------------------------------


def test_check_with_huge_chunk_count_in_the_ingest_record(tmp_path, limits):
    g = make_gulp_dir(tmp_path / "g", 4, 3, 48, 64, 2)["path"]
    # A finished ingest that claims 10^15 chunks: 2 are there, the rest are "missing".
    write_record(g, first_chunk=0, num_chunks=10**15, complete=True)
    result = run(limits, "check", g)
    assert result.returncode == 1, result
    errors = [line for line in result.stdout.splitlines() if line.startswith("error: ")]
    assert len(errors) == 21, result.stdout  # 20 listed, then one line for the rest
    assert errors[0].startswith("error: meta_2.gmeta: missing")
    assert f"and {10**15 - 2 - 20} more of its {10**15} chunks (from 0) are missing" \
        in errors[-1]

    # The same count in an unfinished ingest: chunk 5's .gulp is one it is writing.
    write_record(g, first_chunk=0, num_chunks=10**15, complete=False)
    (pathlib.Path(g) / "data_5.gulp").write_bytes(b"partial")
    result = run(limits, "check", g)
    assert result.returncode == 0, result
    assert f"unfinished ingest: 2 of {10**15} chunks written" in result.stdout
    assert "data_5.gulp: data file without its index" in result.stdout

    # Nonsense counts are one warning line.
    write_record(g, first_chunk=0, num_chunks=-3, complete=True)
    result = run(limits, "check", g)
    assert "run 0: malformed entry" in result.stdout, result.stdout


# -- case 2: a symlinked chunk and a JPEG header claiming a huge frame -----------------------------


def test_symlinked_chunk_and_huge_jpeg_header(tmp_path, limits):
    g = pathlib.Path(make_gulp_dir(tmp_path / "g", 4, 3, 48, 64, 2)["path"])
    data_1 = (g / "data_1.gulp").read_bytes()
    (g / "data_1.gulp").unlink()
    (g / "data_1.gulp").symlink_to("data_0.gulp")
    data = bytearray((g / "data_0.gulp").read_bytes())
    meta = frame_info(g, 0)
    # vid0000 frame 0 claims 46000x46000: 5.9 GiB as RGB, the allocation the issue saw.
    offset, pad, length = meta["vid0000"]["frame_info"][0]
    jpeg = with_size(bytes(data[offset:offset + length - pad]), 46000, 46000)
    data[offset:offset + length - pad] = jpeg
    # vid0001 frame 1: an 8-byte integer set to 2^53 over its frame header.
    offset, _pad, _length = meta["vid0001"]["frame_info"][1]
    p = offset + sof_offset(bytes(data[offset:]))
    data[p + 3:p + 11] = struct.pack(">Q", 2**53)
    (g / "data_0.gulp").write_bytes(data)

    # The symlinked chunk is shorter than its index says: every reader refuses the directory
    # (the core's rules), info in one line naming the file and the frame.
    result = run(limits, "info", "--all-frames", g)
    assert result.returncode == 1, result
    error = result.stderr.split("\nVMPEAK_KB")[0].strip()
    assert "\n" not in error and "data_1.gulp: id 'vid0003' frame 2: bytes [" in error \
        and "run past the end of the file" in error, error

    (g / "data_1.gulp").unlink()
    (g / "data_1.gulp").write_bytes(data_1)
    result = run(limits, "read", g)
    assert result.returncode == 0, result
    lines = result.stdout.splitlines()
    assert any("id 'vid0000' frame 0 at byte offset 0: JPEG header claims 46000x46000" in line
               and "over the limit of 134217728 pixels" in line for line in lines), lines
    assert any(line.startswith("error") and "id 'vid0001' frame 1" in line for line in lines)

    result = run(limits, "check", "--decode", g)
    assert result.returncode == 1, result
    assert "error: data_0.gulp: id 'vid0000' frame 0 at offset 0: JPEG header claims " \
        "46000x46000" in result.stdout


def test_gulp_dataset_refuses_a_huge_jpeg_header_before_allocating(tmp_path, limits):
    g = pathlib.Path(make_gulp_dir(tmp_path / "g", 2, 3, 48, 64, 2)["path"])
    data = bytearray((g / "data_0.gulp").read_bytes())
    # Every frame of vid0001 claims 46000x46000: one clip of 19 GB.
    infos = frame_info(g, 0)["vid0001"]["frame_info"]
    for offset, pad, length in infos:
        data[offset:offset + length - pad] = with_size(bytes(data[offset:offset + length - pad]),
                                                      46000, 46000)
    (g / "data_0.gulp").write_bytes(data)
    result = run(limits, "dataset", g)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0] == "ok vid0000"
    assert lines[1].startswith("InvalidArgumentError: ") and f"data_0.gulp: id 'vid0001' frame 0 " \
        f"at byte offset {infos[0][0]}: JPEG header claims 46000x46000" in lines[1], lines
    assert lines[2:] == ["ok vid0000", "ok vid0001"]  # undecoded, the bytes are what they are


# -- case 3: one id with 20,000 frames pointing at the same bytes ----------------------------------


@pytest.fixture
def same_bytes(tmp_path):
    """One id, 20,000 frames, every one the same 640x480 JPEG (about 6 GB of frames, 400 KB on
    disk), next to a good chunk."""
    g = pathlib.Path(make_gulp_dir(tmp_path / "g", 2, 3, 48, 64, 2)["path"])
    rng = np.random.default_rng(0)
    jpeg = simplejpeg.encode_jpeg(rng.integers(0, 256, (480, 640, 3), np.uint8), quality=95,
                                  colorsubsampling="444")
    pad = -len(jpeg) % 4
    (g / "data_1.gulp").write_bytes(jpeg + b"\0" * pad)
    entry = {"frame_info": [[0, pad, len(jpeg) + pad]] * 20000, "meta_data": [{"label": "a"}]}
    (g / "meta_1.gmeta").write_text(json.dumps({"clip": entry}))
    return g, len(jpeg)


def test_python_readers_on_20000_frames_sharing_bytes(same_bytes, limits):
    # Frames never share bytes: the index is refused when it is read, before any frame is, by
    # every reader alike (the core's rules).
    # (GulpDirectory refuses it the same way: tests/test_gulp_malformed.py.)
    g, _jpeg_length = same_bytes
    result = run(limits, "info", "--all-frames", g)
    assert result.returncode == 1, result
    assert "data_1.gulp: id 'clip' frame 1 at byte offset 0: shares bytes with id 'clip' " \
        "frame 0" in result.stderr, result.stderr[-2000:]

    result = run(limits, "check", "--decode", g)
    assert result.returncode == 1, result
    assert "more frames that share bytes with another frame" in result.stdout
    assert len(result.stdout.splitlines()) < 40


def test_gulp_dataset_on_20000_frames_sharing_bytes(same_bytes, limits):
    g, _ = same_bytes
    result = run(limits, "dataset", g)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and all(
        line.startswith("DataLossError: ") and "data_1.gulp: id 'clip' frame 1 at byte offset 0: "
        "shares bytes with id 'clip' frame 0" in line
        for line in lines), lines


# -- case 4: frame_info [null], a resumable ingest record and temporary files ----------------------


def test_check_and_info_on_null_frame_entry_with_an_unfinished_ingest(tmp_path, limits):
    g = pathlib.Path(make_gulp_dir(tmp_path / "g", 4, 3, 48, 64, 2)["path"])
    meta = frame_info(g, 0)
    meta["vid0000"]["frame_info"] = [None]
    (g / "meta_0.gmeta").write_text(json.dumps(meta))
    write_record(g, first_chunk=0, num_chunks=10**15, complete=False)
    (g / "data_2.gulp.tmp").write_bytes(b"partial")
    (g / "meta_2.gmeta.tmp").write_text("{")
    (g / "data_2.gulp").write_bytes(b"partial")

    result = run(limits, "check", g)
    assert result.returncode == 1, result
    assert "error: meta_0.gmeta: id 'vid0000' frame 0: frame_info entry is not [offset, pad, " \
        "length] with non-negative integers: null" in result.stdout

    result = run(limits, "info", g)
    assert result.returncode == 1, result
    error = result.stderr.split("\nVMPEAK_KB")[0].strip()
    assert "\n" not in error and "id 'vid0000' frame 0: frame_info entry is not [offset, pad, " \
        "length] with non-negative integers: null" in error, error


# -- the limits themselves (in process: nothing here allocates more than a small clip) -------------


def test_jpeg_header_limits():
    rng = np.random.default_rng(1)
    small = simplejpeg.encode_jpeg(rng.integers(0, 256, (16, 16, 3), np.uint8), quality=90)
    assert frame_header_problem(small, 16, 16) is None
    assert not is_arithmetic_coded(small)
    side = 8000  # 64 M pixels: under MAX_FRAME_PIXELS, over what the bytes can encode
    assert MAX_PIXELS_PER_BYTE * len(small) < side * side <= MAX_FRAME_PIXELS
    problem = frame_header_problem(with_size(small, side, side), side, side)
    assert f"more than its {len(small)} bytes can encode" in problem
    arithmetic = with_size(small, side, side, marker=0xC9)
    assert is_arithmetic_coded(arithmetic) and frame_header_problem(arithmetic, side, side) is None
    assert "over the limit" in frame_header_problem(arithmetic, 65500, 65500)
    from tf_gulp.gulp.chunk import decode_jpeg
    assert decode_jpeg(small).shape == (16, 16, 3)
    with pytest.raises(ValueError, match="over the limit of 134217728 pixels"):
        decode_jpeg(with_size(small, 65500, 65500))


def test_gulp_directory_max_clip_bytes(good):
    gd = GulpDirectory(good)
    frames, _ = gd["vid0000"]
    decoded = sum(f.nbytes for f in frames)
    assert GulpDirectory(good, max_clip_bytes=decoded)["vid0000"][0][0].shape == (48, 64, 3)
    with pytest.raises(GulpDataError, match=r"id 'vid0000': 3 frames decode to 27,648 bytes, "
                       r"over the limit of 27,647 bytes per clip \(max_clip_bytes\); nothing "
                       r"was decoded"):
        GulpDirectory(good, max_clip_bytes=decoded - 1)["vid0000"]
    jpegs, _ = gd.read_jpegs("vid0000")
    with pytest.raises(GulpDataError, match=r"bytes of JPEG data \(max_clip_bytes\)"):
        GulpDirectory(good, max_clip_bytes=sum(map(len, jpegs)) - 1).read_jpegs("vid0000")
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="max_clip_bytes"):
            GulpDirectory(good, max_clip_bytes=bad)


def test_gulp_dataset_max_clip_bytes(good):
    import tensorflow as tf
    import tf_gulp
    decoded = 3 * 48 * 64 * 3
    element = next(iter(tf_gulp.GulpDataset(good, max_clip_bytes=decoded)))
    assert element["frames"].shape == (3, 48, 64, 3)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"data_0.gulp: id 'vid0000': 3 frames of 64x48x3 \(9216 bytes each\) "
                             r"decode to more than the limit of 27647 bytes per clip "
                             r"\(max_clip_bytes\); nothing was decoded"):
        next(iter(tf_gulp.GulpDataset(good, max_clip_bytes=decoded - 1)))
    # A smaller selection fits.
    element = next(iter(tf_gulp.GulpDataset(good, num_frames=1, max_clip_bytes=decoded // 3)))
    assert element["frames"].shape == (1, 48, 64, 3)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"id 'vid0000': the 3 selected frames hold more than 100 bytes of "
                             r"JPEG data \(max_clip_bytes\)"):
        next(iter(tf_gulp.GulpDataset(good, decode=False, max_clip_bytes=100)))
    with pytest.raises(ValueError, match="max_clip_bytes"):
        tf_gulp.GulpDataset(good, max_clip_bytes=0)


# -- progress bars ---------------------------------------------------------------------------------


class _Bar:
    """Stands in for tqdm: records what a progress bar was told."""

    made = []

    def __init__(self, **kwargs):
        self.kwargs, self.done = kwargs, 0
        self.total = kwargs.get("total")
        _Bar.made.append(self)

    @property
    def n(self):
        return self.done

    def update(self, n):
        self.done += n

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_check_and_info_progress_bars(good, monkeypatch):
    from tf_gulp.gulp import check, info
    monkeypatch.setattr(check, "tqdm", _Bar)
    monkeypatch.setattr(info, "tqdm", _Bar)
    g = pathlib.Path(good)
    _Bar.made.clear()
    check.check_directory(good, decode=True, progress=True)
    check.check_directory(good, progress=False)
    info.directory_info(good, all_frames=True, progress=True)
    decode_bar, quiet_bar, info_bar = _Bar.made
    # check: bytes read (indexes, and data files when decoding), shown only after a second.
    total = sum(p.stat().st_size for p in g.glob("*_[0-9]*.g*"))
    assert decode_bar.total == decode_bar.done == total
    assert decode_bar.kwargs["disable"] is False and decode_bar.kwargs["delay"] == 1.0
    assert quiet_bar.kwargs["disable"] is True
    assert quiet_bar.done == sum(p.stat().st_size for p in g.glob("meta_*.gmeta"))
    # info: items.
    assert info_bar.kwargs["total"] == info_bar.done == 4 and info_bar.kwargs["disable"] is False
