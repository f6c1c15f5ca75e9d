"""Datasets on TensorFlow's file systems: the same data read from a ``ram://`` path (TensorFlow's
built-in in-memory file system, standing in for gs:// / s3:// / hdfs://) and from a local path
gives the same elements, and errors on remote paths name the file like local ones do."""

from __future__ import annotations

import os
import re
import uuid

import numpy as np
import pytest
import tensorflow as tf

import tf_gulp
import tf_gulp.ops
from ffrecord_testing import ffrecord_bytes, sample_records
from formats_testing import format_params, keys_of
from gulp_testing import make_gulp_dir
from ingest_testing import run_cli
from tf_gulp._files import absolute, check_regular_file, is_remote, read_regular


def copy_tree_to(local: str, remote: str) -> None:
    """Copies the files of a local folder (recursively) under the remote path ``remote``."""
    for root, _, files in os.walk(local):
        rel = os.path.relpath(root, local)
        target = remote if rel == "." else f"{remote}/{rel}"
        tf.io.gfile.makedirs(target)
        for name in files:
            tf.io.gfile.copy(os.path.join(root, name), f"{target}/{name}", overwrite=True)


def fresh_ram_path(name: str) -> str:
    """A ram:// path nobody used yet (ram:// is process-wide; prefixes must not collide)."""
    return f"ram://tf_gulp_test_{uuid.uuid4().hex}/{name}"


def elements(ds, keys):
    return [{k: (v.numpy() if hasattr(v, "numpy") else v) for k, v in e.items() if k in keys}
            for e in ds]


def test_path_helpers():
    assert is_remote("gs://bucket/x") and is_remote("ram://a") and is_remote("s3://b/c")
    assert not is_remote("/data/x") and not is_remote("file:///data/x") and not is_remote("a:b")
    assert absolute("gs://bucket/x") == "gs://bucket/x"
    assert absolute("rel/x") == os.path.join(os.getcwd(), "rel/x")
    path = fresh_ram_path("f.bin")
    tf.io.gfile.makedirs(path.rsplit("/", 1)[0])
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(b"hello")
    assert read_regular(path) == b"hello"
    with pytest.raises(FileNotFoundError, match="no such file"):
        check_regular_file(path + ".missing")


@pytest.fixture(scope="module", params=format_params())
def each_format(request, tmp_path_factory):
    """Each format of the registry (tests/formats_testing.py): (format, local dataset, its path
    on ram://)."""
    fmt = request.param
    local = fmt.write(tmp_path_factory.mktemp(fmt.name), 8)
    remote_root = fresh_ram_path(fmt.name)
    copy_tree_to(local.root, remote_root)
    return fmt, local, remote_root + local.path[len(local.root):]


def test_every_dataset_reads_remote_paths_as_local_ones(each_format):
    fmt, local, remote = each_format
    a = list(fmt.open(local.path, shuffle=True, seed=7))
    b = list(fmt.open(remote, shuffle=True, seed=7))
    assert len(a) == len(b) == len(local.keys)
    for x, y in zip(tf.nest.flatten(a), tf.nest.flatten(b)):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert sorted(keys_of(fmt, fmt.open(remote))) == sorted(local.keys)
    with pytest.raises(tf.errors.NotFoundError, match=re.escape(remote + "_missing")):
        next(iter(fmt.open(remote + "_missing")))


def test_every_dataset_on_tf_data_service_workers(each_format, service):
    """The graph carries the ram:// path as it is; each worker (in this process, so it sees the
    same ram:// files) reads its splits through TensorFlow's file system: every element once."""
    fmt, local, remote = each_format
    dynamic = tf.data.experimental.service.ShardingPolicy.DYNAMIC
    ds = fmt.open(remote).map(fmt.key).apply(
        tf.data.experimental.service.distribute(dynamic, service.target))
    assert sorted(k.decode() for k in ds.as_numpy_iterator()) == sorted(local.keys)


@pytest.fixture(scope="module")
def gulp_dirs(tmp_path_factory):
    local = str(tmp_path_factory.mktemp("gulp"))
    info = make_gulp_dir(local, num_videos=12, frames_per_video=[3, 5, 4, 2] * 3, height=24,
                         width=32, videos_per_chunk=5)
    remote = fresh_ram_path("gulp")
    copy_tree_to(local, remote)
    return local, remote, info


@pytest.mark.parametrize("decode", [True, False])
def test_gulp_dataset_remote_equals_local(gulp_dirs, decode):
    local, remote, info = gulp_dirs
    kwargs = dict(decode=decode, shuffle=True, seed=7, frames=slice(0, None, 2))
    a = elements(tf_gulp.GulpDataset(local, **kwargs), {"frames", "id", "label", "meta"})
    b = elements(tf_gulp.GulpDataset(remote, **kwargs), {"frames", "id", "label", "meta"})
    assert len(a) == len(b) == 12
    for x, y in zip(a, b):
        assert x["id"] == y["id"] and x["label"] == y["label"] and x["meta"] == y["meta"]
        np.testing.assert_array_equal(x["frames"], y["frames"])
    assert sorted(e["id"].decode() for e in b) == sorted(info["ids"])


def test_gulp_dataset_remote_errors(gulp_dirs):
    _, remote, _ = gulp_dirs
    # A damaged index on the remote store: the error names the remote file.
    broken = fresh_ram_path("gulp")
    tf.io.gfile.makedirs(broken)
    for name in tf.io.gfile.listdir(remote):
        tf.io.gfile.copy(f"{remote}/{name}", f"{broken}/{name}")
    with tf.io.gfile.GFile(f"{broken}/meta_1.gmeta", "wb") as f:
        f.write(b"{not json")
    with pytest.raises(tf.errors.DataLossError, match=r"ram://.*meta_1\.gmeta"):
        list(tf_gulp.GulpDataset(broken))
    # A truncated data file: the read past its end names the file and the byte offset.
    truncated = fresh_ram_path("gulp")
    tf.io.gfile.makedirs(truncated)
    for name in tf.io.gfile.listdir(remote):
        data = read_regular(f"{remote}/{name}")
        with tf.io.gfile.GFile(f"{truncated}/{name}", "wb") as f:
            f.write(data[: len(data) // 2] if name == "data_0.gulp" else data)
    with pytest.raises((tf.errors.DataLossError, tf.errors.InvalidArgumentError),
                       match=r"ram://.*data_0\.gulp"):
        list(tf_gulp.GulpDataset(truncated))


@pytest.fixture(scope="module")
def ffrecord_files(tmp_path_factory):
    local = tmp_path_factory.mktemp("ffr")
    records = [sample_records(7, seed=1), sample_records(5, seed=2)]
    for i, recs in enumerate(records):
        (local / f"part{i}.ffr").write_bytes(ffrecord_bytes(recs))
    remote = fresh_ram_path("ffr")
    copy_tree_to(str(local), remote)
    return str(local), remote, records[0] + records[1]


@pytest.mark.parametrize("batch_size", [None, 4])
def test_ffrecord_dataset_remote_equals_local(ffrecord_files, batch_size):
    local, remote, records = ffrecord_files
    a = list(tf_gulp.FFRecordDataset(local, batch_size=batch_size, shuffle=True, seed=3))
    b = list(tf_gulp.FFRecordDataset(remote, batch_size=batch_size, shuffle=True, seed=3))
    flat = lambda xs: [r for x in xs for r in (x.numpy().tolist() if batch_size else
                                               [x.numpy()])]
    assert flat(a) == flat(b)
    assert sorted(flat(b)) == sorted(records)
    # Files listed one by one read the same as their folder.
    files = [f"{remote}/part0.ffr", f"{remote}/part1.ffr"]
    assert [x.numpy() for x in tf_gulp.FFRecordDataset(files)] == records


def test_ffrecord_remote_errors(ffrecord_files):
    _, remote, _ = ffrecord_files
    with pytest.raises(tf.errors.InvalidArgumentError, match="direct_io.*local files only"):
        next(iter(tf_gulp.FFRecordDataset(remote, direct_io=True)))
    # A flipped byte in a record: the checksum error names the remote file and the record.
    data = bytearray(read_regular(f"{remote}/part0.ffr"))
    data[-3] ^= 0xFF
    bad = fresh_ram_path("bad.ffr")
    tf.io.gfile.makedirs(bad.rsplit("/", 1)[0])
    with tf.io.gfile.GFile(bad, "wb") as f:
        f.write(bytes(data))
    with pytest.raises(tf.errors.DataLossError, match=r"ram://.*bad\.ffr: record 6 .*checksum"):
        list(tf_gulp.FFRecordDataset(bad))


def test_python_ffrecord_reader_refuses_remote_paths_clearly(ffrecord_files):
    _, remote, _ = ffrecord_files
    from tf_gulp.ffrecord import FileReader

    with pytest.raises(Exception, match="TensorFlow's file systems.*FFRecordDataset"):
        FileReader(f"{remote}/part0.ffr")


@pytest.fixture(scope="module")
def bzna_files(tmp_path_factory):
    import simplejpeg

    from tf_gulp.bzna import create as K

    root = tmp_path_factory.mktemp("bzna")
    rng = np.random.default_rng(3)
    for split, cls, k, (h, w) in [("train", "ant", 0, (40, 56)), ("train", "bee", 0, (64, 48)),
                                  ("val", "ant", 0, (32, 32))]:
        d = root / "img" / split / cls
        d.mkdir(parents=True, exist_ok=True)
        img = rng.integers(0, 255, (h, w, 3), dtype=np.uint8)
        (d / f"{k}.jpg").write_bytes(simplejpeg.encode_jpeg(img, quality=95))
    (root / "out").mkdir()
    local = str(root / "out" / "data.bzna")
    K.create_dataset(str(root / "img"), local, preset="ultrafast", workers=1, progress=False)
    remote_dir = fresh_ram_path("bzna")
    copy_tree_to(str(root / "out"), remote_dir)
    return local, f"{remote_dir}/data.bzna", remote_dir


def test_benzina_remote_equals_local(bzna_files):
    from tf_gulp.bzna.dataset import BenzinaDataset, DataLoader, ImageNet

    local, remote, remote_dir = bzna_files
    for kwargs in (dict(decode=False), dict(decode=True, shuffle=True, seed=2)):
        a = list(BenzinaDataset(local, **kwargs))
        b = list(BenzinaDataset(remote, **kwargs))
        assert len(a) == len(b) == 3
        for x, y in zip(a, b):
            assert x.keys() == y.keys()
            for k in x:
                np.testing.assert_array_equal(x[k].numpy(), y[k].numpy())
    train = [y.numpy() for _, y in ImageNet(remote_dir, "train", splits={"train": (0, 2)})]
    assert sorted(train) == sorted(int(x["label"]) for x in BenzinaDataset(local).take(2))
    (images, labels), = list(DataLoader(remote, (16, 16), batch_size=3))
    assert images.shape == (3, 16, 16, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="is a directory"):
        BenzinaDataset(remote_dir)


def test_python_gulp_readers_remote_equals_local(gulp_dirs):
    """GulpDirectory and GulpChunk read a ram:// directory through tf.io.gfile: same index,
    same frames as the local copy; writing there is refused with a clear message."""
    from tf_gulp.gulp import GulpChunk, GulpDirectory

    local, remote, info = gulp_dirs
    with GulpDirectory(local) as here, GulpDirectory(remote) as there:
        assert there.merged_meta_dict == here.merged_meta_dict
        assert there.num_chunks == here.num_chunks
        for key in info["ids"][:3]:
            ours, meta = there[key, [0, -1]]
            theirs, their_meta = here[key, [0, -1]]
            assert meta == their_meta
            assert all(np.array_equal(a, b) for a, b in zip(ours, theirs))
            assert there.read_jpegs(key) == here.read_jpegs(key)
    chunk = GulpChunk(remote + "/data_0.gulp", remote + "/meta_0.gmeta")
    assert chunk.meta_dict == GulpChunk(os.path.join(local, "data_0.gulp"),
                                        os.path.join(local, "meta_0.gmeta")).meta_dict
    with chunk.open("rb"):
        assert len(chunk.read_jpegs(next(iter(chunk.meta_dict)))[0]) > 0
    with pytest.raises(ValueError, match="written to local directories only"):
        with chunk.open("ab"):
            pass


@pytest.mark.parametrize("command", [["check"], ["check", "--decode"], ["info", "--json"]])
def test_cli_check_and_info_read_remote_directories(gulp_dirs, command):
    """tf-gulp check/info on a ram:// directory say what they say of the local copy."""
    local, remote, _ = gulp_dirs
    here = run_cli(*command, local)
    there = run_cli(*command, remote)
    assert here[0] == there[0] == 0, (here, there)
    assert there[1].replace(remote, "DIR") == here[1].replace(local, "DIR")


def test_cli_check_reports_remote_damage(tmp_path):
    g = make_gulp_dir(tmp_path / "g", num_videos=4, frames_per_video=3, height=8, width=8,
                      videos_per_chunk=2)["path"]
    os.unlink(os.path.join(g, "meta_1.gmeta"))
    remote = fresh_ram_path("damaged")
    copy_tree_to(g, remote)
    code, out = run_cli("check", remote)[:2]
    assert code == 1 and "error: data_1.gulp: chunk has no index file meta_1.gmeta" in out, out


def test_ingest_refuses_a_remote_output(tmp_path):
    code, _out, err = run_cli("ingest", "image-folder", str(tmp_path), "ram://out")
    assert code == 2 and "writes to local directories only" in err, err


def test_python_readers_fetch_chunk_indexes_in_parallel(tmp_path):
    """A remote store answers each request in a round trip: tf_gulp._core fetches the chunk
    indexes of a directory together. A file system whose every request takes 20 ms records how
    many it had in flight at once."""
    import stat as stat_module
    import threading
    import time

    from tf_gulp import _core, _remote_core
    from tf_gulp.gulp.index import load_directory_index

    g = make_gulp_dir(tmp_path / "g", num_videos=16, frames_per_video=1, height=8, width=8,
                      videos_per_chunk=1)["path"]

    class SlowFileSystem:
        def __init__(self):
            self.lock = threading.Lock()
            self.in_flight = self.most_in_flight = 0

        def _request(self, path):
            with self.lock:
                self.in_flight += 1
                self.most_in_flight = max(self.most_in_flight, self.in_flight)
            time.sleep(0.02)
            with self.lock:
                self.in_flight -= 1
            return path[len("slow://"):]

        def stat(self, path):
            st = os.stat(self._request(path))
            return stat_module.S_ISDIR(st.st_mode), st.st_size, st.st_mtime_ns

        def listdir(self, path):
            return os.listdir(self._request(path))

        def read(self, path, offset, size):
            with open(self._request(path), "rb") as f:
                f.seek(offset)
                return f.read(size)

    slow = SlowFileSystem()
    _remote_core.use_remote_paths_in_core("ram://")  # so nothing replaces it while this test runs
    _core.set_remote_file_system(slow)
    try:
        chunks = load_directory_index("slow://" + g)
    finally:
        _core.set_remote_file_system(_remote_core._GFileSystem())
    assert [len(c["ids"]) for c in chunks] == [1] * 16
    assert slow.most_in_flight >= 4, slow.most_in_flight
