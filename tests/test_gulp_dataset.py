"""GulpDataset as a tf.data source: contents, options, composition, checkpoints, serialization."""

from __future__ import annotations

import hashlib
import json
import pathlib

import numpy as np
import pytest
import tensorflow as tf

import tf_gulp

from epoch_testing import resumed
from gulp_testing import frame_value, make_gulp_dir, video_value

FIXTURE = pathlib.Path(__file__).parent / "data" / "gulpio2"
EXPECTED = json.loads((FIXTURE / "EXPECTED.json").read_text())["ids"]


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """12 RGB videos with 3..9 frames of 24x32, 4 per chunk (3 chunks)."""
    counts = [3 + (i % 7) for i in range(12)]
    return make_gulp_dir(tmp_path_factory.mktemp("gulp") / "d", num_videos=12,
                         frames_per_video=counts, height=24, width=32, videos_per_chunk=4)


def ids_of(ds) -> list:
    return [e["id"].numpy().decode() for e in ds]


def green_frames(frames: np.ndarray) -> list:
    """Which synthetic frame each decoded frame is (green level -> frame index)."""
    levels = {frame_value(j): j for j in range(40)}
    out = []
    for f in frames:
        g = float(f[..., 1].mean())
        out.append(levels[min(levels, key=lambda v: abs(v - g))])
    return out


# --- the gulpio2 fixture: what the reference wrote reads back exactly -----------------------------

def test_reads_gulpio2_fixture_ids_shapes_meta_labels():
    label2idx = json.loads((FIXTURE / "label2idx.json").read_text())
    seen = {}
    for e in tf_gulp.GulpDataset(FIXTURE):
        seen[e["id"].numpy().decode()] = e
    assert set(seen) == set(EXPECTED)
    for id_, exp in EXPECTED.items():
        e = seen[id_]
        assert e["frames"].shape[0] == exp["num_frames"]
        assert list(e["frames"].shape[1:3]) == exp["shapes"][0][:2]
        assert json.loads(e["meta"].numpy()) == exp["meta"]
        assert e["label"].numpy() == label2idx[exp["meta"]["label"]]


def test_fixture_jpeg_bytes_match_sha256_exactly():
    for e in tf_gulp.GulpDataset(FIXTURE, decode=False):
        id_ = e["id"].numpy().decode()
        digests = [hashlib.sha256(b).hexdigest() for b in e["frames"].numpy()]
        assert digests == EXPECTED[id_]["jpeg_sha256"]


def test_fixture_pixels_match_accurate_decode():
    # expected_frames.npz was decoded with libjpeg-turbo's accurate IDCT; with the same IDCT we
    # allow 1 level (library builds may round differently); the fast IDCT differs a little more.
    expected = np.load(FIXTURE / "expected_frames.npz")
    for dct, max_tol, mean_tol in (("accurate", 1, 0.01), ("fast", 12, 2.0)):
        for e in tf_gulp.GulpDataset(FIXTURE, dct_method=dct, colorspace="rgb"):
            id_ = e["id"].numpy().decode()
            for j, frame in enumerate(e["frames"].numpy()):
                want = expected[f"{id_}/{j}"]
                if want.ndim == 2:  # gray JPEG: decoded to RGB by replication
                    want = np.repeat(want[..., None], 3, axis=-1)
                diff = np.abs(frame.astype(int) - want.astype(int))
                assert diff.max() <= max_tol, (dct, id_, j)
                assert diff.mean() <= mean_tol, (dct, id_, j)


def test_gray_colorspace_gives_one_channel():
    expected = np.load(FIXTURE / "expected_frames.npz")
    for e in tf_gulp.GulpDataset(FIXTURE, ids=["gray-clip"], colorspace="gray",
                                 dct_method="accurate"):
        frames = e["frames"].numpy()
        assert frames.shape == (5, 48, 64, 1)
        assert np.abs(frames[0, ..., 0].astype(int) - expected["gray-clip/0"]).max() <= 1


# --- options ---------------------------------------------------------------------------------------

def test_element_spec_and_cardinality(synthetic):
    ds = tf_gulp.GulpDataset(synthetic["path"])
    assert ds.cardinality().numpy() == 12
    assert ds.element_spec["frames"].shape.as_list() == [None, None, None, 3]
    assert ds.element_spec["frames"].dtype == tf.uint8
    assert tf_gulp.GulpDataset(synthetic["path"], num_frames=4).element_spec[
        "frames"].shape.as_list() == [4, None, None, 3]
    assert tf_gulp.GulpDataset(synthetic["path"], decode=False, frames=[0, 1]).element_spec[
        "frames"].shape.as_list() == [2]


def test_storage_order_contents_and_labels(synthetic):
    elements = list(tf_gulp.GulpDataset(synthetic["path"]))
    assert [e["id"].numpy().decode() for e in elements] == synthetic["ids"]
    for e in elements:
        video = synthetic["videos"][e["id"].numpy().decode()]
        frames = e["frames"].numpy()
        assert frames.shape == (video["num_frames"], 24, 32, 3)
        assert abs(frames[..., 0].mean() - video_value(video["index"])) < 2
        assert green_frames(frames) == list(range(video["num_frames"]))
        assert e["label"].numpy() == video["label_idx"]
        assert json.loads(e["meta"].numpy()) == video["meta"]


def test_frames_held_by_the_consumer_are_never_overwritten(tmp_path):
    """Clip buffers are recycled once the consumer drops them (tf_gulp/ops/framework/pooled_tensor.h): a
    tensor the consumer still holds must keep its contents while later elements (of the same size,
    so candidates for its buffer) are decoded, and after its iterator is gone."""
    data = make_gulp_dir(tmp_path / "d", num_videos=24, frames_per_video=4, height=24, width=32,
                         videos_per_chunk=8)
    ds = tf_gulp.GulpDataset(data["path"])
    iterator = iter(ds)
    first = next(iterator)
    held = first["frames"]  # an EagerTensor sharing the kernel's buffer
    snapshot = held.numpy().copy()
    for _ in range(2):  # the rest of this epoch, then a whole new one: many buffers recycled
        for element in iterator:
            video = data["videos"][element["id"].numpy().decode()]
            assert abs(element["frames"].numpy()[..., 0].mean()
                       - video_value(video["index"])) < 2
        iterator = iter(ds)
    del iterator, element
    np.testing.assert_array_equal(held.numpy(), snapshot)
    first_video = data["videos"][first["id"].numpy().decode()]
    assert abs(snapshot[..., 0].mean() - video_value(first_video["index"])) < 2
    assert green_frames(snapshot) == [0, 1, 2, 3]


def test_iterators_of_one_dataset_running_at_once_share_buffers_safely(tmp_path):
    """The clip buffer pool belongs to the Python dataset (gulp_dataset_op.cc, FrameBuffers), so
    that a new epoch's iterator reuses mapped memory: two of its iterators reading at once, each
    holding every element it took, must never be handed one another's buffers."""
    data = make_gulp_dir(tmp_path / "d", num_videos=16, frames_per_video=4, height=24, width=32,
                         videos_per_chunk=8)
    ds = tf_gulp.GulpDataset(data["path"])
    a, b = iter(ds), iter(ds)
    held = [next(it) for _ in range(16) for it in (a, b)]  # interleaved: both read ahead at once
    del a, b
    for element in held:
        video = data["videos"][element["id"].numpy().decode()]
        frames = element["frames"].numpy()
        assert abs(frames[..., 0].mean() - video_value(video["index"])) < 2
        assert green_frames(frames) == [0, 1, 2, 3]


@pytest.mark.parametrize("frames, expected", [
    (slice(1, None, 2), lambda t: list(range(1, t, 2))),
    (slice(None, None, -1), lambda t: list(range(t - 1, -1, -1))),
    ([0, -1], lambda t: [0, t - 1]),
])
def test_frame_selection(synthetic, frames, expected):
    for e in tf_gulp.GulpDataset(synthetic["path"], frames=frames):
        t = synthetic["videos"][e["id"].numpy().decode()]["num_frames"]
        assert green_frames(e["frames"].numpy()) == expected(t)


def test_num_frames_eval_takes_segment_centres_and_loops_short_clips(synthetic):
    for e in tf_gulp.GulpDataset(synthetic["path"], num_frames=4):
        t = synthetic["videos"][e["id"].numpy().decode()]["num_frames"]
        got = green_frames(e["frames"].numpy())
        if t >= 4:
            assert got == [int(t / 4 * (i + 0.5)) for i in range(4)]
        else:
            assert got == [i % t for i in range(4)]


def test_num_frames_training_is_random_within_segments_and_seeded(synthetic):
    def draws(seed):
        ds = tf_gulp.GulpDataset(synthetic["path"], num_frames=3, training=True, seed=seed)
        return [green_frames(e["frames"].numpy()) for e in ds]

    a, b, c = draws(1), draws(1), draws(2)
    assert a == b
    assert a != c
    for e, got in zip(tf_gulp.GulpDataset(synthetic["path"]), a):
        t = e["frames"].shape[0]
        for i, f in enumerate(got):
            assert int(t / 3 * i) <= f < t / 3 * (i + 1)


def test_decode_false_yields_jpeg_bytes(synthetic):
    for e in tf_gulp.GulpDataset(synthetic["path"], decode=False, frames=[0]):
        data = e["frames"].numpy()[0]
        assert data[:2] == b"\xff\xd8"
        decoded = tf.io.decode_jpeg(data).numpy()
        assert decoded.shape == (24, 32, 3)


def test_scale_decodes_smaller(synthetic):
    e = next(iter(tf_gulp.GulpDataset(synthetic["path"], scale=2)))
    assert e["frames"].shape[1:] == (12, 16, 3)


def test_ids_filter_and_label_options(synthetic):
    ds = tf_gulp.GulpDataset(synthetic["path"], ids=["vid0005", "vid0001"])
    assert ids_of(ds) == ["vid0001", "vid0005"]  # storage order
    assert ds.cardinality().numpy() == 2
    mapped = tf_gulp.GulpDataset(synthetic["path"], label2idx={"a": 10, "b": 20})
    assert {int(e["label"]) for e in mapped} == {10, 20}
    unlabelled = tf_gulp.GulpDataset(synthetic["path"], label_field=None)
    assert {int(e["label"]) for e in unlabelled} == {-1}


def test_shuffle_is_a_seeded_permutation_with_a_new_order_each_epoch(synthetic):
    ds = tf_gulp.GulpDataset(synthetic["path"], shuffle=True, seed=7, shuffle_chunk_window=2)
    epoch0, epoch1 = ids_of(ds), ids_of(ds)
    assert sorted(epoch0) == sorted(synthetic["ids"])
    assert epoch0 != synthetic["ids"]
    assert epoch0 != epoch1
    again = tf_gulp.GulpDataset(synthetic["path"], shuffle=True, seed=7, shuffle_chunk_window=2)
    assert ids_of(again) == epoch0 and ids_of(again) == epoch1
    repeated = ids_of(tf_gulp.GulpDataset(synthetic["path"], shuffle=True, seed=7,
                                          shuffle_chunk_window=2).repeat(2))
    assert repeated == epoch0 + epoch1


# --- composition ----------------------------------------------------------------------------------

def test_inside_tf_function(synthetic):
    @tf.function
    def total_frames():
        ds = tf_gulp.GulpDataset(synthetic["path"])
        return ds.reduce(tf.constant(0, tf.int64),
                         lambda acc, e: acc + tf.shape(e["frames"], out_type=tf.int64)[0])

    assert total_frames().numpy() == sum(v["num_frames"] for v in synthetic["videos"].values())


def test_map_batch_padded_batch_prefetch_shard_interleave(synthetic):
    path = synthetic["path"]
    ds = (tf_gulp.GulpDataset(path, num_frames=2)
          .map(lambda e: (tf.cast(e["frames"], tf.float32) / 255.0, e["label"]),
               num_parallel_calls=tf.data.AUTOTUNE)
          .batch(5).prefetch(tf.data.AUTOTUNE))
    shapes = [x.shape for x, _ in ds]
    assert shapes[0] == (5, 2, 24, 32, 3) and len(shapes) == 3

    padded = tf_gulp.GulpDataset(path).map(lambda e: e["frames"]).padded_batch(4)
    first = next(iter(padded))
    assert first.shape == (4, 6, 24, 32, 3)  # longest of the first four clips: 6 frames

    shards = [ids_of(tf_gulp.GulpDataset(path, decode=False).shard(3, i)) for i in range(3)]
    assert sorted(sum(shards, [])) == sorted(synthetic["ids"])

    # The tf.data way to read several directories in parallel.
    dirs = tf.data.Dataset.from_tensor_slices([path, path])
    both = dirs.interleave(lambda d: tf_gulp.GulpDataset(d, decode=False),
                           cycle_length=2, num_parallel_calls=2)
    assert sorted(ids_of(both)) == sorted(synthetic["ids"] * 2)


def test_skip_reads_the_same_elements(synthetic):
    ds = tf_gulp.GulpDataset(synthetic["path"], shuffle=True, seed=3)
    assert ids_of(ds.skip(5)) == ids_of(tf_gulp.GulpDataset(synthetic["path"], shuffle=True,
                                                             seed=3))[5:]


# --- checkpoints and serialization ----------------------------------------------------------------

@pytest.mark.parametrize("repeat", [1, 3])
def test_checkpoint_restore_resumes_at_the_exact_next_element(synthetic, tmp_path, repeat):
    def make():
        return tf_gulp.GulpDataset(synthetic["path"], shuffle=True, seed=11, num_frames=3,
                                   training=True).repeat(repeat)

    reference = [(e["id"].numpy(), e["frames"].numpy()) for e in make()]
    stop = 7 if repeat == 1 else 17  # mid-epoch, and inside a later epoch
    rest = [(e["id"].numpy(), e["frames"].numpy()) for e in resumed(make, stop, tmp_path)]
    assert len(rest) == len(reference) - stop
    for (id_a, fr_a), (id_b, fr_b) in zip(rest, reference[stop:]):
        assert id_a == id_b
        np.testing.assert_array_equal(fr_a, fr_b)


def test_save_and_load(synthetic, tmp_path):
    ds = tf_gulp.GulpDataset(synthetic["path"], frames=[0])
    ds.save(str(tmp_path / "saved"))
    loaded = tf.data.Dataset.load(str(tmp_path / "saved"))
    assert ids_of(loaded) == synthetic["ids"]


def test_serialized_graph_is_small_and_holds_no_index(synthetic):
    graph = tf_gulp.GulpDataset(synthetic["path"])._as_serialized_graph().numpy()
    assert len(graph) < 4096
    assert b"vid0003" not in graph  # the index is parsed by the kernel, not embedded
    assert synthetic["path"].encode() in graph


def test_the_index_is_parsed_once_per_dataset(tmp_path):
    # The constructor, every iterator and every pipeline built on one dataset object share the
    # index parsed when it was made (tf.data re-creates the dataset op for each of them): with
    # the .gmeta files gone, the dataset still reads, while a new dataset cannot.
    g = make_gulp_dir(tmp_path / "g", 4, 2, 16, 16, 2)["path"]
    ds = tf_gulp.GulpDataset(g, decode=False)
    for meta in pathlib.Path(g).glob("meta_*.gmeta"):
        meta.unlink()
    assert len(list(ds)) == 4
    assert len(list(ds.map(lambda e: e["id"]).batch(2))) == 2
    with pytest.raises(tf.errors.NotFoundError):
        tf_gulp.GulpDataset(g, decode=False)
