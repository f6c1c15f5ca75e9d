"""Every documented augmentation recipe changes its augmentation each epoch, shuffled or not
(issue 32 §5): the random choices are functions of (seed, epoch, element) and every recipe's
epoch reaches its kernel without the user wiring it. One test per recipe: GulpDataset's fused
warp (docs/video.md, docs/images.md), its TSN segments and dense clips (docs/video.md),
FFRecordDataset.decode_jpeg_warped (docs/ffrecord.md), the Benzina DataLoader and BenzinaDataset +
decode_hevc_warped (docs/benzina.md)."""

from __future__ import annotations

import numpy as np
import pytest
import simplejpeg

import tf_gulp
from gulp_testing import make_gulp_dir
from tf_gulp.transforms import RandomHorizontalFlip, RandomResizedCrop

CROP = [RandomResizedCrop(16), RandomHorizontalFlip()]


@pytest.fixture(scope="module")
def gulp_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("aug") / "gulp"
    make_gulp_dir(path, 6, 12, 24, 32, videos_per_chunk=3)
    return str(path)


def two_epochs(ds) -> list:
    """Two passes over ds (two iterators: two epochs), each a list of numpy arrays."""
    out = []
    for _ in range(2):
        out.append([np.asarray(x) for x in ds.as_numpy_iterator()])
    return out


def assert_each_element_changes(epochs, what: str):
    first, second = epochs
    assert len(first) == len(second) > 0
    same = sum(np.array_equal(a, b) for a, b in zip(first, second))
    assert same == 0, f"{what}: {same} of {len(first)} elements got the same augmentation twice"


def test_gulp_fused_crop_changes_each_epoch_unshuffled(gulp_dir):
    ds = tf_gulp.GulpDataset(gulp_dir, num_frames=1, seed=0, augment=CROP).map(
        lambda e: e["frames"])
    assert_each_element_changes(two_epochs(ds), "RandomResizedCrop")


def test_gulp_tsn_offsets_change_each_epoch_unshuffled(gulp_dir):
    ds = tf_gulp.GulpDataset(gulp_dir, num_frames=3, training=True, seed=0, decode=False)
    epochs = two_epochs(ds.map(lambda e: e["frames"]))
    # 3 segments of 4 frames: 64 choices per clip; a clip drawing the same three is 1 in 64.
    assert sum(not np.array_equal(a, b) for a, b in zip(*epochs)) >= 4


def test_gulp_dense_clip_offsets_change_each_epoch_unshuffled(gulp_dir):
    ds = tf_gulp.GulpDataset(gulp_dir, clip_len=2, frame_interval=2, training=True, seed=0,
                             decode=False)
    epochs = two_epochs(ds.map(lambda e: e["frames"]))
    # 9 possible starts per clip.
    assert sum(not np.array_equal(a, b) for a, b in zip(*epochs)) >= 4


@pytest.fixture(scope="module")
def jpeg_records(tmp_path_factory):
    from tf_gulp.ffrecord import dump
    rng = np.random.default_rng(0)
    jpegs = [simplejpeg.encode_jpeg(rng.integers(0, 255, (40, 48, 3), dtype=np.uint8),
                                    quality=90) for _ in range(24)]
    path = tmp_path_factory.mktemp("ffr") / "images"
    dump(jpegs, path, nfiles=2, progress=False)
    return str(path)


@pytest.mark.parametrize("batch_size", [None, 8])
def test_ffrecord_jpeg_recipe_crops_change_each_epoch_unshuffled(jpeg_records, batch_size):
    ds = tf_gulp.FFRecordDataset(jpeg_records, batch_size=batch_size)
    ds = ds.decode_jpeg_warped(CROP)
    epochs = two_epochs(ds)
    if batch_size:
        epochs = [[img for batch in e for img in batch] for e in epochs]
    assert_each_element_changes(epochs, "decode_jpeg_warped")
    # Each picture's crop is keyed by its record, not its place in a batch: the same crops
    # batched or not, shuffled or not.
    alone = two_epochs(tf_gulp.FFRecordDataset(jpeg_records).decode_jpeg_warped(CROP))
    assert all(np.array_equal(a, b) for a, b in zip(alone[1], epochs[1]))
    def shuffled(**kw):
        return tf_gulp.FFRecordDataset(jpeg_records, batch_size=batch_size, shuffle=True, seed=0,
                                       **kw)

    # (Two dataset objects: each is at its epoch 0.)
    for e, images in zip(shuffled(keys=True),
                         shuffled().decode_jpeg_warped(CROP)):
        index = np.atleast_1d(e["index"].numpy())
        images = images.numpy().reshape((-1, 16, 16, 3))
        for i, img in zip(index, images):
            np.testing.assert_array_equal(img, alone[0][i])  # epoch 0 of both


def test_ffrecord_keys_are_the_epoch_and_the_records(jpeg_records):
    ds = tf_gulp.FFRecordDataset(jpeg_records, batch_size=5, shuffle=True, seed=1, keys=True,
                                 epoch=2)
    plain = tf_gulp.FFRecordDataset(jpeg_records, batch_size=5, shuffle=True, seed=1, epoch=2)
    records = [r for b in tf_gulp.FFRecordDataset(jpeg_records).as_numpy_iterator() for r in [b]]
    for e, batch in zip(ds, plain):
        assert int(e["epoch"]) == 2
        assert list(e["record"].numpy()) == list(batch.numpy())
        assert [records[i] for i in e["index"].numpy()] == list(batch.numpy())
    assert ds.element_spec["index"].shape.as_list() == [None]


def make_bzna(tmp_path, images_per_class, seed):
    """tmp_path/d.bzna from random 64x48 JPEGs in src/train/<class>/, as many per class as given."""
    from tf_gulp.bzna import create_dataset

    rng = np.random.default_rng(seed)
    for cls, count in images_per_class.items():
        folder = tmp_path / "src" / "train" / cls
        folder.mkdir(parents=True)
        for i in range(count):
            (folder / f"{i}.jpg").write_bytes(simplejpeg.encode_jpeg(
                rng.integers(0, 255, (48, 64, 3), dtype=np.uint8), quality=90))
    create_dataset(str(tmp_path / "src"), str(tmp_path / "d.bzna"), preset="ultrafast",
                   workers=1, progress=False)


def test_benzina_loader_crops_change_each_epoch_unshuffled(tmp_path):
    from tf_gulp.bzna import DataLoader
    from tf_gulp.bzna import transforms as bzna_transforms

    make_bzna(tmp_path, {"ant": 2, "bee": 2}, seed=0)
    loader = DataLoader(str(tmp_path / "d.bzna"), (16, 16), batch_size=4, split="train",
                        epochs=2, warp_transform=bzna_transforms.RandomResizedCrop())
    batches = [x.numpy() for x, _ in loader]
    assert len(batches) == 2
    assert_each_element_changes([list(batches[0]), list(batches[1])], "Benzina DataLoader")


def test_benzina_dataset_hevc_recipe_crops_change_each_epoch_unshuffled(tmp_path):
    # docs/benzina.md: BenzinaDataset(decode=False) + decode_hevc_warped keyed by the element's
    # epoch and index.
    from tf_gulp.bzna import BenzinaDataset
    from tf_gulp.ops import decode_hevc_warped

    make_bzna(tmp_path, {"ant": 3}, seed=1)
    ds = BenzinaDataset(str(tmp_path / "d.bzna"), decode=False).map(lambda x: decode_hevc_warped(
        x["sample"], CROP, seed=1, epoch=x["epoch"],
        elements=x["index"]))
    assert_each_element_changes(two_epochs(ds), "BenzinaDataset + decode_hevc_warped")
