"""The Python readers (GulpDirectory, GulpChunk) and GulpDataset decode a frame to the same pixels:
both read elements through the core's element reader (cc/gulp/element_reader.h) and decode with
its JPEG decoder. Before, the Python readers decoded with simplejpeg's accurate IDCT, and 4:2:0
noise came out up to 76 levels away from GulpDataset's pixels. A user's jpeg_decoder still
decodes when given."""

import numpy as np
import pytest
import simplejpeg

from tf_gulp.gulp import GulpChunk, GulpDirectory


@pytest.fixture(scope="module")
def noise_420(tmp_path_factory):
    """One chunk of two ids: 4:2:0 RGB noise (where decoders differ most) and a gray frame."""
    root = tmp_path_factory.mktemp("noise")
    rng = np.random.default_rng(7)
    chunk = GulpChunk(str(root / "data_0.gulp"), str(root / "meta_0.gmeta"),
                      jpeg_subsampling="420")
    with chunk.open("wb"):
        chunk.append("noise", {"label": 0},
                     [rng.integers(0, 256, (61, 83, 3), np.uint8) for _ in range(3)])
        chunk.append("gray", {"label": 1}, [rng.integers(0, 256, (40, 24), np.uint8)])
    return root


def dataset_frames(path, key):
    import tensorflow as tf  # noqa: F401 (the dataset's runtime)
    import tf_gulp
    for element in tf_gulp.GulpDataset(str(path), label_field=None):
        if element["id"].numpy().decode() == key:
            return element["frames"].numpy()
    raise KeyError(key)


def test_python_readers_decode_as_gulp_dataset(noise_420):
    want = dataset_frames(noise_420, "noise")
    gd_frames, _ = GulpDirectory(str(noise_420))["noise"]
    chunk = GulpChunk(str(noise_420 / "data_0.gulp"), str(noise_420 / "meta_0.gmeta"))
    chunk_frames, _ = chunk.read_frames("noise")
    assert np.stack(gd_frames).shape == want.shape == (3, 61, 83, 3)
    assert np.array_equal(np.stack(gd_frames), want)
    assert np.array_equal(np.stack(chunk_frames), want)
    # The decoders really differ on this data: the test would catch the old Python decode.
    jpegs, _ = GulpDirectory(str(noise_420)).read_jpegs("noise")
    accurate = np.stack([simplejpeg.decode_jpeg(j, fastdct=False) for j in jpegs])
    assert np.abs(accurate.astype(int) - want.astype(int)).max() > 0


def test_gray_jpeg_stays_two_dimensional(noise_420):
    frames, _ = GulpDirectory(str(noise_420))["gray"]
    assert frames[0].shape == (40, 24) and frames[0].dtype == np.uint8
    rgb = dataset_frames(noise_420, "gray")  # GulpDataset's rgb output repeats the gray plane
    assert np.array_equal(rgb[0, :, :, 0], frames[0])


def test_user_jpeg_decoder_still_decodes(noise_420):
    seen = []

    def decoder(data):
        seen.append(bytes(data))
        return np.full((2, 2, 3), len(seen), np.uint8)

    jpegs, _ = GulpDirectory(str(noise_420)).read_jpegs("noise", [2, 0])
    frames, meta = GulpDirectory(str(noise_420), jpeg_decoder=decoder)["noise", [2, 0]]
    assert seen == jpegs and meta == {"label": 0}
    assert [int(f[0, 0, 0]) for f in frames] == [1, 2]
    seen.clear()
    chunk = GulpChunk(str(noise_420 / "data_0.gulp"), str(noise_420 / "meta_0.gmeta"),
                      jpeg_decoder=decoder)
    frames, _ = chunk.read_frames("noise", slice(1, None))
    want, _ = GulpDirectory(str(noise_420)).read_jpegs("noise", slice(1, None))
    assert seen == want and len(frames) == 2
