"""Gulp clips decoded in the step (docs/gpu.md, "JPEG on the GPU"): GulpDataset(..., augment=L,
device=...) yields the clips' JPEG bytes and keys, and tf_gulp.JpegOnDevice(L) decodes them, on
"/CPU:0" pixel for pixel as GulpDataset(..., augment=L) decodes them in tf.data; the keys option
says each clip's epoch and element; what the device path cannot do is refused naming the fix."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import tf_gulp
from gpu_testing import list_a_gpu_too
from gulp_testing import SyntheticAdapter
from tf_gulp import transforms as T
from tf_gulp.jpeg_on_device import JpegOnDevice
from tf_gulp.ops.image.jpeg_ops import nvjpeg_unavailable_reason

CROP_FLIP = [T.RandomResizedCrop(16), T.RandomHorizontalFlip(), T.ToDtype(tf.float32, scale=True),
             T.Normalize(T.IMAGENET_MEAN, T.IMAGENET_STD)]
COLOR = [T.RandomResizedCrop((12, 20)), T.ColorJitter(0.4, 0.4, 0.4, 0.1), T.RandomGrayscale(0.3)]
SEED = 11


class NoiseAdapter(SyntheticAdapter):
    """Frames of noise (a crop's position and a flip show in every pixel), one size per video
    and sizes differing between videos."""

    def iter_data(self, slice_element=None):
        for i in range(len(self))[slice_element or slice(None)]:
            rng = np.random.default_rng(i)
            h, w = self.height + 6 * (i % 3), self.width - 4 * (i % 2)
            frames = [rng.integers(0, 255, (h, w, 3), dtype=np.uint8)
                      for _ in range(self.frame_counts[i])]
            yield {"id": f"vid{i:04d}", "meta": self.meta(i), "frames": frames}


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> dict:
    """9 videos of 3..7 noise frames, 3 per chunk: their path and ids in storage order."""
    from tf_gulp.gulp.ingest import GulpIngestor
    path = str(tmp_path_factory.mktemp("gulp_jpeg") / "d")
    GulpIngestor(NoiseAdapter([3 + i % 5 for i in range(9)], 30, 40), path, 3, num_workers=1,
                 progress=False)()
    with open(f"{path}/label2idx.json", "w") as f:
        f.write('{"a": 0, "b": 1}')
    ids = [e["id"].numpy().decode() for e in tf_gulp.GulpDataset(path, decode=False)]
    return {"path": path, "ids": ids}


def _dataset(path: str, **kwargs) -> tf_gulp.GulpDataset:
    return tf_gulp.GulpDataset(path, num_frames=4, training=True, shuffle=True, seed=SEED, **kwargs)


@pytest.mark.parametrize("augment", [CROP_FLIP, COLOR], ids=["crop_flip_normalize", "colour_uint8"])
def test_the_layer_gives_the_gulp_datasets_clips(clips, augment):
    cpu = _dataset(clips["path"], augment=augment).batch(4)
    step = _dataset(clips["path"], augment=augment, device="/CPU:0").batch(4)
    layer = JpegOnDevice(augment, device="/CPU:0")
    for _ in range(2):  # two passes: epochs 0 and 1 (the key carries the epoch)
        count = 0
        for expected, batch in zip(cpu, step):
            assert set(batch) == {"jpeg", "key", "name", "id", "label", "meta"}
            assert batch["jpeg"].shape[1:] == [4] and batch["key"].shape[1:] == [3]
            np.testing.assert_array_equal(batch["id"].numpy(), expected["id"].numpy())
            np.testing.assert_array_equal(batch["label"].numpy(), expected["label"].numpy())
            out = layer(batch).numpy()
            assert out.shape == expected["frames"].shape
            np.testing.assert_array_equal(out, expected["frames"].numpy())
            count += len(out)
        assert count == 9


def test_keys_give_each_clips_epoch_and_element(clips):
    ds = tf_gulp.GulpDataset(clips["path"], shuffle=True, seed=SEED, keys=True, epoch=2)
    assert ds.element_spec["epoch"] == tf.TensorSpec([], tf.int64)
    assert ds.element_spec["index"] == tf.TensorSpec([], tf.int64)
    for epoch in (2, 3):
        seen = []
        for e in ds:
            assert int(e["epoch"]) == epoch
            # The element: the item's index in storage order, the kernel's key of its draws.
            assert int(e["index"]) == clips["ids"].index(e["id"].numpy().decode())
            seen.append(int(e["index"]))
        assert sorted(seen) == list(range(9)) and seen != sorted(seen)
    # Without the option the elements are as before.
    assert set(tf_gulp.GulpDataset(clips["path"]).element_spec) == {"frames", "id", "label",
                                                                    "meta"}


def test_the_device_batch_carries_seed_epoch_and_element(clips):
    keyed = _dataset(clips["path"], keys=True, decode=False, epoch=5)
    step = _dataset(clips["path"], augment=CROP_FLIP, device="/CPU:0", epoch=5)
    for e, clip in zip(keyed, step):
        key = tf.strings.to_number(clip["key"], tf.int64).numpy()
        np.testing.assert_array_equal(key, [SEED, 5, int(e["index"])])
        np.testing.assert_array_equal(clip["jpeg"].numpy(), e["frames"].numpy())
        names = [n.decode() for n in clip["name"].numpy()]
        assert names == [f"{clips['path']} id '{e['id'].numpy().decode()}' frame {k}"
                         for k in range(4)]


def test_the_device_path_shards_as_the_cpu_path(clips):
    cpu = _dataset(clips["path"], augment=COLOR).shard(2, 1)
    step = _dataset(clips["path"], augment=COLOR, device="/CPU:0").shard(2, 1)
    layer = JpegOnDevice(COLOR, device="/CPU:0")
    got = [(e["id"].numpy(), layer(tf.nest.map_structure(lambda t: t[None], e)).numpy()[0])
           for e in step]
    want = [(e["id"].numpy(), e["frames"].numpy()) for e in cpu]
    assert [g[0] for g in got] == [w[0] for w in want] and len(got) == 4
    for (_, a), (_, b) in zip(got, want):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("options, match", [
    (dict(clip_len=2, num_clips=2), r"device='/CPU:0' decodes one clip \[T\] per element; these "
                                    r"options give 2 views \[V, T\] \(clips x crops\): use "
                                    r"num_clips=1 without crops, or leave device out"),
    (dict(clip_len=2, crops="three", augment=[T.Resize((8, 8))]),
     r"device='/CPU:0' decodes one clip .* give 3 views .*leave device out"),
    (dict(colorspace="gray"), r"device='/CPU:0' decodes colour clips only: leave "
                              r"colorspace='gray' out, or leave device out"),
    (dict(augment=None), r"device='/CPU:0' decodes in tf_gulp.JpegOnDevice\(augment\): give "
                         r"augment= \(the layer's list\), or leave device out"),
    (dict(dct_method="accurate"), r"with device='/CPU:0' the decode runs in "
                                  r"tf_gulp.JpegOnDevice: give \{'dct_method': 'accurate'\} to it"),
], ids=["clips", "crops", "gray", "no_augment", "decode_option"])
def test_what_the_device_path_cannot_do_is_refused_naming_the_fix(clips, options, match):
    options = dict(dict(augment=CROP_FLIP), **options)
    with pytest.raises(ValueError, match="GulpDataset: " + match):
        tf_gulp.GulpDataset(clips["path"], device="/CPU:0", **options)


def test_a_gpu_tensorflow_lacks_is_refused_naming_the_devices(clips):
    if tf.config.list_logical_devices("GPU"):
        pytest.skip("TensorFlow sees a GPU here: the refusal of a GPU it lacks cannot be staged")
    with pytest.raises(ValueError, match=r"GulpDataset: device='/GPU:0': TensorFlow has no "
                                         r"GPU:0 .*its devices are \[.*CPU:0"):
        _dataset(clips["path"], augment=CROP_FLIP, device="/GPU:0")


def test_a_gpu_without_nvjpeg_is_refused_naming_the_fix(clips, monkeypatch):
    list_a_gpu_too(monkeypatch, "logical")
    if not nvjpeg_unavailable_reason():
        pytest.skip("nvJPEG is usable here (library, driver and kernels): the refusal of a "
                    "GPU without it cannot be staged")
    with pytest.raises(ValueError, match=r"GulpDataset: device='/GPU:0': the GPU kernel cannot "
                                         r"decode JPEG here: nvJPEG unavailable.*pip install "
                                         r"nvidia-nvjpeg-cu12.*leave device out"):
        _dataset(clips["path"], augment=CROP_FLIP, device="/GPU:0")
    # Where nvJPEG is usable the same call is accepted (the refusal is the reason's).
    import tf_gulp.ops.image.jpeg_ops as jpeg_ops
    monkeypatch.setattr(jpeg_ops, "nvjpeg_unavailable_reason", lambda: "")
    ds = _dataset(clips["path"], augment=CROP_FLIP, device="/GPU:0")
    assert ds.element_spec["jpeg"] == tf.TensorSpec([4], tf.string)


def test_the_layer_trains_on_clips_in_model_fit(clips):
    ds = _dataset(clips["path"], augment=CROP_FLIP, device="/CPU:0").batch(3, drop_remainder=True)
    ds = ds.map(lambda b: ({k: b[k] for k in ("jpeg", "key", "name")}, b["label"]))
    model = tf.keras.Sequential([JpegOnDevice(CROP_FLIP),
                                 tf.keras.layers.GlobalAveragePooling3D(),
                                 tf.keras.layers.Dense(2)])
    model.compile("sgd", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(ds, epochs=1, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
