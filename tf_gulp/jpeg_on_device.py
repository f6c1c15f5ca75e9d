"""JPEG decoding and augmentation moved into the training step, onto a GPU's JPEG engines
(docs/gpu.md).

tf.data runs its map functions on the CPU. With ``FFRecordDataset(...).decode_jpeg_warped(augment,
device="/GPU:0")`` the dataset stops short of the decode: each batch is ``{"jpeg": string [B],
"key": string [B, 3], "name": string [B]}``, and :class:`JpegOnDevice` (the model's first layer) or
:func:`jpeg_on_device` decodes and augments it with ``tf_gulp.ops.decode_jpeg_warped`` on the
step's device, whose GPU kernel decodes with nvJPEG and warps on TensorFlow's stream: only the
compressed bytes cross to the GPU. The draws are the CPU path's, from each record's (seed, epoch,
index). On the CPU the output equals the CPU path's (tested); the GPU kernel has run only against
a fake nvJPEG (no GPU run so far).
"""

from __future__ import annotations

from typing import Mapping, Optional

import tensorflow as tf

from tf_gulp.bzna import on_device
from tf_gulp.bzna.on_device import KEY_INPUT
from tf_gulp.ops.image import jpeg_ops
from tf_gulp.ops.image.jpeg_ops import decode_jpeg_warped
from tf_gulp.transforms import Augment, compile_augment

__all__ = ["JpegOnDevice", "jpeg_on_device", "JPEG_INPUT_KEYS"]

# The batch of decode_jpeg_warped(..., device=...). "key": each record's (seed, epoch, index) as
# decimal strings [B, 3] (on_device.KEY_INPUT: strings because Keras casts untyped numeric inputs
# to float32 under tf.distribute, which would round 64-bit seeds).
JPEG_INPUT_KEYS = ("jpeg", KEY_INPUT, "name")

_LAYER = "tf_gulp.JpegOnDevice (jpeg_on_device)"
_XLA_FIX = ("leave the model's jit_compile at its default (\"auto\" runs this model without XLA) "
            "or set jit_compile=False; to compile the rest of the model with XLA, call "
            "tf_gulp.jpeg_on_device.jpeg_on_device in a tf.function without jit_compile and the "
            "XLA-compiled function on its output")


def _decode_per_epoch(inputs: Mapping[str, tf.Tensor], augment: Augment, decode: dict
                      ) -> tf.Tensor:
    """The batch decoded by ``decode_jpeg_warped`` (``on_device.per_epoch``), each picture keyed
    by its own (seed, epoch, index) as the CPU path keys it."""
    channels = 1 if decode.get("colorspace") == "gray" else 3

    def one(chosen, seed, epoch, elements):
        return decode_jpeg_warped(tf.gather(inputs["jpeg"], chosen), augment, seed=seed,
                                  epoch=epoch, elements=elements,
                                  names=tf.gather(inputs["name"], chosen), **decode)

    return on_device.per_epoch(inputs[KEY_INPUT], [augment.height, augment.width, channels],
                               tf.float32 if augment.dtype == "float32" else tf.uint8, one)


def jpeg_on_device(inputs: Mapping[str, tf.Tensor], augment, device: Optional[str] = None, *,
                   dct_scaling: bool = True, colorspace: str = "rgb",
                   dct_method: str = "fast") -> tf.Tensor:
    """Decodes and augments a batch of ``decode_jpeg_warped(..., device=...)`` to ``[B, height,
    width, C]``.

    Args:
      inputs: the batch: ``{"jpeg": string [B], "key": string [B, 3], "name": string [B]}``, or
        a batch of ``GulpDataset(..., device=...)``'s clips (``"jpeg"``, ``"name"``: ``[B, T]``)
        to ``[B, T, height, width, C]``.
      augment: the dataset's ``augment`` list.
      device: where to decode; None (default) is the device the caller runs on (each replica's
        GPU under ``tf.distribute``; in Keras' step the GPU when there is one).
      dct_scaling, colorspace, dct_method: as :func:`tf_gulp.ops.decode_jpeg_warped`'s (on a GPU
        nvJPEG ignores dct_method and dct_scaling: within 2 levels of the CPU path).
    """
    augment = compile_augment(augment, "jpeg_on_device: ")
    missing = [k for k in JPEG_INPUT_KEYS if k not in inputs]
    if missing:
        raise ValueError(f"jpeg_on_device: inputs lack {missing}; pass a batch of "
                         f"FFRecordDataset(...).decode_jpeg_warped(augment, device=...) (keys "
                         f"{list(JPEG_INPUT_KEYS)})")
    on_device._refuse_xla(_LAYER, "tf_gulp.ops.decode_jpeg_warped", _XLA_FIX)  # pylint: disable=protected-access
    on_device._say_once_if_no_gpu_ran(device, "jpeg_on_device")  # pylint: disable=protected-access
    decode = dict(dct_scaling=dct_scaling, colorspace=colorspace, dct_method=dct_method)
    if device is None:
        return _decode_batch(inputs, augment, decode)
    with tf.device(device):
        return _decode_batch(inputs, augment, decode)


def _decode_batch(inputs: Mapping[str, tf.Tensor], augment: Augment, decode: dict) -> tf.Tensor:
    """Pictures ``[B]`` to ``[B, H, W, C]``; clips ``[B, T]`` (GulpDataset's) to ``[B, T, H, W,
    C]``, every frame keyed by its clip's key: frames of one size draw the clip's one transform
    and colour, as the kernel draws them for the clip."""
    jpegs = tf.convert_to_tensor(inputs["jpeg"])
    if jpegs.shape.rank != 2:
        return _decode_per_epoch(inputs, augment, decode)
    clips = tf.shape(jpegs)
    frames = {"jpeg": tf.reshape(jpegs, [-1]),
              KEY_INPUT: tf.repeat(inputs[KEY_INPUT], clips[1], axis=0),
              "name": tf.reshape(inputs["name"], [-1])}
    out = _decode_per_epoch(frames, augment, decode)
    return tf.reshape(out, tf.concat([clips, tf.shape(out)[1:]], 0))


class JpegOnDevice(on_device.OnDeviceLayer):
    """A Keras layer that runs :func:`jpeg_on_device`: the first layer of a model fed by
    ``FFRecordDataset(...).decode_jpeg_warped(augment, device="/GPU:0")`` or
    ``GulpDataset(..., augment=augment, device="/GPU:0")`` (clips), so ``model.fit`` decodes and
    augments the JPEGs on the GPU.

    Args:
      augment: the dataset's ``augment`` list.
      device: None (default): the device the step runs on (each replica's GPU under
        ``tf.distribute``); or a device name to pin it.
      dct_scaling, colorspace, dct_method: the dataset's, as :func:`jpeg_on_device`'s.
    """

    _xla_fix = _XLA_FIX

    def __init__(self, augment, device: Optional[str] = None, *, dct_scaling: bool = True,
                 colorspace: str = "rgb", dct_method: str = "fast", **kwargs) -> None:
        super().__init__(augment, device, **kwargs)
        self.decode = dict(dct_scaling=bool(dct_scaling), colorspace=str(colorspace),
                           dct_method=str(dct_method))

    def call(self, inputs: Mapping[str, tf.Tensor]) -> tf.Tensor:
        return jpeg_on_device(inputs, self.augment, self.device_name, **self.decode)

    def compute_output_shape(self, input_shape):
        jpeg = tuple(input_shape["jpeg"]) if isinstance(input_shape, Mapping) else (None,)
        channels = 1 if self.decode["colorspace"] == "gray" else 3
        return jpeg + (self.augment.height, self.augment.width, channels)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(self.decode)
        return config


def check_jpeg_device(device: str, what: str) -> str:
    """A reader's ``device=`` (the decode left to this layer) as TensorFlow names it; ValueError
    for a device TensorFlow lacks (naming its devices) or a GPU where nvJPEG cannot run (naming
    what is missing and the fix)."""
    device = on_device.check_device(device, what)
    if device.startswith("/GPU"):
        reason = jpeg_ops.nvjpeg_unavailable_reason()
        if reason:
            raise ValueError(f"{what}device={device!r}: the GPU kernel cannot decode JPEG here: "
                             f"{reason}. Or leave device out to decode in tf.data on the CPU")
    return device
