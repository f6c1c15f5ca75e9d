"""The warp of :func:`tf_gulp.bzna.DataLoader` moved into the training step, onto a GPU
(docs/gpu.md).

tf.data runs its map functions on the CPU, so a GPU cannot warp inside the dataset. With
``DataLoader(..., device="/GPU:0")`` the dataset decodes on the CPU as before but stops short of
the warp: each batch is ``{"image": uint8 [B, H, W, 3] (pictures padded to the batch's largest),
"size": int32 [B, 2] (each picture's height and width), "matrix": float32 [B, 3, 3], "bias":
float32 [B, 3], "norm": float32 [B, 3]}`` with the labels. :class:`WarpOnDevice` (a Keras layer, the
first of the model) or :func:`warp_on_device` (for a custom step) then warps each picture with
``tf_gulp.ops.similarity_warp`` on the step's device, whose GPU kernel runs on TensorFlow's own
stream: the float batch is made in GPU memory, and only the uint8 pictures cross to the GPU.
On the CPU the results equal the CPU DataLoader's (same matrices, same kernel; tested). The GPU
kernel's own source, run on the host, is within 1 level of the CPU warp before normalization; it
has not yet run on a GPU.

Decoding stays on the CPU (libavcodec): NVDEC decoding inside the op is not done yet.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence, Tuple

import tensorflow as tf

from tf_gulp.ops.warp_ops import similarity_warp

INPUT_KEYS = ("image", "size", "matrix", "bias", "norm")


def check_device(device: str, what: str = "") -> str:
    """`device` as TensorFlow names it, after checking that TensorFlow has that device.

    Raises ValueError naming the device and the devices TensorFlow has: a "/GPU:0" on a machine
    where TensorFlow sees no GPU (tensorflow-cpu, no NVIDIA driver, CUDA_VISIBLE_DEVICES="") must
    not quietly run on the CPU. `what` starts the message (e.g. "DataLoader: ").
    """
    try:
        spec = tf.DeviceSpec.from_string(device)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{what}device={device!r} is not a TensorFlow device name such as "
                         f"'/GPU:0' or '/CPU:0' ({e})") from None
    kind = (spec.device_type or "").upper()
    if kind not in ("CPU", "GPU"):
        raise ValueError(f"{what}device={device!r}: give a device type, e.g. '/GPU:0' or '/CPU:0'")
    index = spec.device_index or 0
    found = tf.config.list_logical_devices(kind)
    if index >= len(found):
        have = [d.name for d in tf.config.list_logical_devices()]
        hint = ""
        if kind == "GPU":
            hint = (" (tensorflow-cpu, no NVIDIA driver, or CUDA_VISIBLE_DEVICES hides it: install "
                    "the tensorflow[and-cuda] wheel on a machine with an NVIDIA GPU and driver, or "
                    "leave device out to decode and warp on the CPU in tf.data)")
        raise ValueError(f"{what}device={device!r}: TensorFlow has no {kind}:{index}{hint}; its devices "
                         f"are {have}")
    return f"/{kind}:{index}"


def warp_on_device(inputs: Mapping[str, tf.Tensor], shape: Sequence[int],
                   device: Optional[str] = None) -> tf.Tensor:
    """Warps a batch of ``DataLoader(..., device=...)`` to float32 ``[B, height, width, 3]``.

    Args:
      inputs: the batch's first element: ``{"image", "size", "matrix", "bias", "norm"}``.
      shape: (height, width) of the output: the DataLoader's `shape`.
      device: where to warp; None (default) is the device the caller runs on (under
        ``tf.distribute`` each replica's own GPU; in Keras' step the GPU when there is one).

    Each picture is cut to its own size (so the warp sees its true borders, as on the CPU path)
    and warped with its matrix, bias and norm by ``tf_gulp.ops.similarity_warp``.
    """
    missing = [k for k in INPUT_KEYS if k not in inputs]
    if missing:
        raise ValueError(f"warp_on_device: inputs lack {missing}; pass the first element of a "
                         f"DataLoader(..., device=...) batch (keys {list(INPUT_KEYS)})")
    height, width = int(shape[0]), int(shape[1])

    def warp_all() -> tf.Tensor:
        def one(args: Tuple[tf.Tensor, ...]) -> tf.Tensor:
            image, size, matrix, bias, norm = args
            picture = image[:size[0], :size[1], :]
            return similarity_warp(picture, matrix, (height, width), bias, norm)

        return tf.map_fn(
            one,
            tuple(inputs[k] for k in INPUT_KEYS),
            fn_output_signature=tf.TensorSpec([height, width, 3], tf.float32),
        )

    if device is None:
        return warp_all()
    with tf.device(device):
        return warp_all()


class WarpOnDevice(tf.keras.layers.Layer):
    """A Keras layer that runs :func:`warp_on_device`: the first layer of a model fed by
    ``DataLoader(..., device="/GPU:0")``, so ``model.fit`` warps on the GPU.

    Args:
      shape: (height, width) of the output: the DataLoader's `shape`.
      device: None (default): the device the step runs on (each replica's GPU under
        ``tf.distribute``); or a device name to pin it.
    """

    def __init__(self, shape: Sequence[int], device: Optional[str] = None, **kwargs) -> None:
        kwargs.setdefault("trainable", False)  # nothing to train; from_config passes it back
        super().__init__(**kwargs)
        self.shape_hw = (int(shape[0]), int(shape[1]))
        self.device_name = device

    def call(self, inputs: Mapping[str, tf.Tensor]) -> tf.Tensor:
        # Keras may cast a model's inputs to its default float32 (it does under tf.distribute when
        # the model has no typed Input): exact for pictures (0-255) and sizes, so cast back.
        inputs = dict(inputs)
        for key, dtype in (("image", tf.uint8), ("size", tf.int32)):
            if key in inputs and inputs[key].dtype != dtype:
                inputs[key] = tf.cast(inputs[key], dtype)
        return warp_on_device(inputs, self.shape_hw, self.device_name)

    def compute_output_shape(self, input_shape):
        batch = input_shape["image"][0] if isinstance(input_shape, Mapping) else None
        return (batch, self.shape_hw[0], self.shape_hw[1], 3)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(shape=self.shape_hw, device=self.device_name)
        return config
