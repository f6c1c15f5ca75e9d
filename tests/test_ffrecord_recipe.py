"""The documented recipe (docs/ffrecord.md): an image dataset written as FFRecord files of
tf.train.Example records (encoded JPEG + label), read with FFRecordDataset + tf.io.parse_example,
decoded in parallel, fed to Keras model.fit."""

from __future__ import annotations

import numpy as np
import simplejpeg
import tensorflow as tf

import tf_gulp
from tf_gulp.ffrecord import FileReader, dump

COLORS = np.array([[220, 30, 30], [30, 200, 40], [40, 50, 210]], np.uint8)  # one per class


def make_image(i: int) -> np.ndarray:
    label = i % 3
    rng = np.random.default_rng(i)
    img = np.clip(COLORS[label] + rng.integers(-25, 25, (32, 32, 3)), 0, 255).astype(np.uint8)
    return img


# --- writing (plain Python: any source of images and labels) ---------------------------------------

def image_example(jpeg: bytes, label: int) -> bytes:
    return tf.train.Example(features=tf.train.Features(feature={
        "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[jpeg])),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
    })).SerializeToString()


class ImageRecords:
    """A lazy sequence of serialized examples, as dump() wants (len and [i])."""

    def __len__(self):
        return 96

    def __getitem__(self, i):
        return image_example(simplejpeg.encode_jpeg(make_image(i), quality=95), i % 3)


# --- reading: the recipe --------------------------------------------------------------------------

FEATURES = {
    "image": tf.io.FixedLenFeature([], tf.string),
    "label": tf.io.FixedLenFeature([], tf.int64),
}


def decode_image(jpeg, size=24):
    # As docs/ffrecord.md: the shorter side to `size`, then the centre square (aspect ratio kept).
    image = tf.io.decode_jpeg(jpeg, channels=3)
    hw = tf.cast(tf.shape(image)[:2], tf.float32)
    scaled = tf.cast(tf.math.ceil(hw * size / tf.reduce_min(hw)), tf.int32)
    image = tf.image.resize(image, scaled)
    return tf.image.resize_with_crop_or_pad(image, size, size) / 255.0


def decode_batch(batch):
    example = tf.io.parse_example(batch, FEATURES)  # one parse op for the whole batch
    images = tf.map_fn(decode_image, example["image"],
                       fn_output_signature=tf.TensorSpec([24, 24, 3], tf.float32))
    return images, example["label"]


def training_dataset(path, seed):
    # Batches are read with one submission each, then decoded batch-parallel; the cardinality stays
    # known, so Keras knows the epoch length.
    return (tf_gulp.FFRecordDataset(path, batch_size=16, shuffle=True, seed=seed,
                                    drop_remainder=True)
            .map(decode_batch, num_parallel_calls=tf.data.AUTOTUNE)
            .prefetch(tf.data.AUTOTUNE))


def test_image_recipe_into_model_fit(tmp_path):
    paths = dump(ImageRecords(), tmp_path / "train", nfiles=2, progress=False)
    assert FileReader(tmp_path / "train").n == 96 and len(paths) == 2

    # What comes out is what went in: the labels, and the pixels within JPEG error.
    seen = {}
    for batch in tf_gulp.FFRecordDataset(tmp_path / "train", batch_size=40):
        parsed = tf.io.parse_example(batch, FEATURES)
        for jpeg, label in zip(parsed["image"].numpy(), parsed["label"].numpy()):
            seen[len(seen)] = (tf.io.decode_jpeg(jpeg).numpy(), label)
    assert len(seen) == 96
    for i in (0, 1, 95):
        pixels, label = seen[i]
        assert label == i % 3
        assert np.abs(pixels.astype(int) - make_image(i).astype(int)).mean() < 8

    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([
        tf.keras.layers.Input((24, 24, 3)),
        tf.keras.layers.Conv2D(8, 3, activation="relu"),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(3),
    ])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    ds = training_dataset(str(tmp_path / "train"), seed=1)
    assert ds.cardinality().numpy() == 6
    history = model.fit(ds, epochs=6, verbose=0)
    losses = history.history["loss"]
    assert len(losses) == 6
    assert losses[-1] < losses[0]
    assert history.history["accuracy"][-1] > 0.6  # three colours: easy once the pipeline is right


def dark_square_extent(image: np.ndarray) -> tuple:
    """(rows, columns) of the dark pixels of a white picture holding one dark square."""
    dark = image.mean(axis=-1) < 0.5
    rows, cols = np.nonzero(dark.any(axis=1))[0], np.nonzero(dark.any(axis=0))[0]
    return rows[-1] - rows[0] + 1, cols[-1] - cols[0] + 1


def test_decode_image_keeps_the_aspect_ratio():
    # A 32x64 (wide) and a 64x32 (tall) picture, each with a 16x16 dark square in its centre: the
    # square stays a square (a plain resize to 24x24 made it 12x6 / 6x12).
    for h, w in ((32, 64), (64, 32)):
        img = np.full((h, w, 3), 255, np.uint8)
        img[h // 2 - 8:h // 2 + 8, w // 2 - 8:w // 2 + 8] = 0
        out = decode_image(tf.constant(simplejpeg.encode_jpeg(img, quality=95))).numpy()
        assert out.shape == (24, 24, 3)
        rows, cols = dark_square_extent(out)
        assert abs(rows - cols) <= 1 and 11 <= rows <= 13, (h, w, rows, cols)
