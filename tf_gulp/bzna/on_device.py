"""The warp of :func:`tf_gulp.bzna.DataLoader` moved into the training step, onto a GPU
(docs/gpu.md).

tf.data runs its map functions on the CPU, so a GPU cannot warp inside the dataset. With
``DataLoader(..., device="/GPU:0", decode="host")`` (or "auto" where NVDEC is not usable) the
dataset decodes on the CPU as before but stops short of the warp: each batch is ``{"image": uint8 [B, H, W, 3] (pictures padded to the batch's largest),
"size": int32 [B, 2] (each picture's height and width), "matrix": float32 [B, 3, 3], "bias":
float32 [B, 3], "norm": float32 [B, 3]}`` with the labels. :class:`WarpOnDevice` (a Keras layer, the
first of the model) or :func:`warp_on_device` (for a custom step) then warps each picture with
``tf_gulp.ops.similarity_warp`` on the step's device, whose GPU kernel runs on TensorFlow's own
stream: the float batch is made in GPU memory, and only the uint8 pictures cross to the GPU.
The matrices are the CPU path's (one random stream); on the CPU the results are within 1 level of
the fused CPU DataLoader's (tests/test_bzna_random_stream.py). The GPU kernel's own source, run on
the host, is within 1 level of the CPU warp before normalization, and so was the kernel on an H100
(the device check, without TensorFlow); this layer has not yet run under TensorFlow on a GPU.

With ``decode="device"`` (or "auto" on a GPU where NVDEC can be used) the pictures are decoded in
the step as well: the batch carries the compressed samples and their keys (``{"sample": string
[B], "what": string [B], "key": string [B, 3], "size", "matrix", "bias", "norm"}``) and
``tf_gulp.ops.decode_hevc_warped`` decodes and augments them on the step's device (the GPU kernel:
NVDEC and one fused kernel per picture on TensorFlow's stream), exactly as the CPU loader does.
Only compressed bytes cross to the GPU. Not yet run under TensorFlow on a GPU.
"""

from __future__ import annotations

import logging
import os
from typing import Callable, Mapping, Optional, Sequence, Tuple

import tensorflow as tf
from tensorflow.python.framework import ops as tf_ops
from tensorflow.python.ops import control_flow_util

from tf_gulp.ops.bzna.hevc_ops import decode_hevc_warped
from tf_gulp.ops.image.warp_ops import similarity_transform_matrices, similarity_warp
from tf_gulp.transforms import Augment, compile_augment

INPUT_KEYS = ("image", "size", "matrix", "bias", "norm")
# The batch of DataLoader(..., device=..., decode="device"): compressed samples instead of pictures.
SAMPLE_INPUT_KEYS = ("sample", "what", "size", "matrix", "bias", "norm")
# With them: each element's random key, (seed, epoch, element) as decimal strings [B, 3] (strings:
# Keras casts untyped numeric inputs to float32 under tf.distribute, which would round 64-bit
# seeds), for the fused decode_hevc_warped.
KEY_INPUT = "key"


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


def _physical_gpu_of(index: int):
    """The physical GPU behind logical GPU `index` (each physical GPU gives as many logical
    ones as its logical device configuration lists, one without), or None."""
    first = 0
    for gpu in tf.config.list_physical_devices("GPU"):
        count = len(tf.config.get_logical_device_configuration(gpu) or [None])
        if index < first + count:
            return gpu
        first += count
    return None


def gpu_memory_unsettled(device: str) -> Optional[str]:
    """Why NVDEC may find no GPU memory on `device` ("/GPU:i", as :func:`check_device` names
    it), or None when TensorFlow was told to leave some: memory growth on
    (``tf.config.experimental.set_memory_growth`` or ``TF_FORCE_GPU_ALLOW_GROWTH=true``) or a
    memory limit (``tf.config.set_logical_device_configuration``). Without either, TensorFlow
    takes nearly all of the GPU's memory when it starts, and NVDEC's decode surfaces, which the
    driver allocates outside TensorFlow, may not fit (docs/gpu.md, "GPU memory")."""
    spec = tf.DeviceSpec.from_string(device)
    if (spec.device_type or "").upper() != "GPU":
        return None
    if os.environ.get("TF_FORCE_GPU_ALLOW_GROWTH", "").lower() == "true":
        return None
    gpu = _physical_gpu_of(spec.device_index or 0)
    if gpu is None:
        return None
    if tf.config.experimental.get_memory_growth(gpu):
        return None
    configs = tf.config.get_logical_device_configuration(gpu) or []
    if any(getattr(c, "memory_limit", None) for c in configs):
        return None
    return (f"{device} ({gpu.name}) has neither memory growth nor a memory limit: TensorFlow takes "
            "nearly all of its memory when it starts, and NVDEC's decode surfaces, which the "
            "driver allocates outside TensorFlow, may then not fit (the decode step would fail "
            "with ResourceExhaustedError). At program start, before TensorFlow first uses the "
            "GPU, call tf.config.experimental.set_memory_growth(gpu, True) for each GPU, or "
            "give it a memory limit that leaves room for the decoders "
            "(tf.config.set_logical_device_configuration(gpu, "
            "[tf.config.LogicalDeviceConfiguration(memory_limit=...)]); docs/gpu.md, "
            "\"GPU memory\", gives the amount)")


def per_epoch(keys: tf.Tensor, shape: Sequence, dtype: tf.DType,
              decode: Callable[[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor], tf.Tensor]
              ) -> tf.Tensor:
    """A batch keyed by ``keys`` (string ``[B, 3]``: seed, epoch, element, as decimal strings)
    decoded by one ``decode(chosen, seed, epoch, elements)`` call per epoch the batch spans
    (usually one): ``chosen`` are the batch positions of that epoch, whose results are scattered
    back into ``[B, *shape]`` of ``dtype``. The decode ops take one seed and epoch per call."""
    key = tf.strings.to_number(keys, tf.int64)
    seeds, epochs, elements = key[:, 0], key[:, 1], key[:, 2]
    unique_epochs, group = tf.unique(epochs)

    def one_epoch(k, out):
        chosen = tf.where(tf.equal(group, k))[:, 0]
        decoded = decode(chosen, seeds[chosen[0]], unique_epochs[k], tf.gather(elements, chosen))
        return k + 1, tf.tensor_scatter_nd_update(out, chosen[:, None], decoded)

    _, out = tf.while_loop(lambda k, _: k < tf.size(unique_epochs), one_epoch,
                           [tf.constant(0), tf.zeros([tf.shape(keys)[0], *shape], dtype)])
    return out


def _fused_decode_warp(inputs: Mapping[str, tf.Tensor], augment: Augment) -> tf.Tensor:
    """The batch decoded and augmented by ``decode_hevc_warped`` (:func:`per_epoch`): the GPU
    kernel decodes with NVDEC and warps with one fused kernel per picture, as the CPU kernel
    does."""

    def decode(chosen, seed, epoch, elements):
        # The layer's list must be the loader's: the matrices the kernel will draw are compared
        # with the ones tf.data drew for the batch (cheap, on the host).
        drawn = similarity_transform_matrices(tf.gather(inputs["size"], chosen), augment,
                                              seed=seed, epoch=epoch, elements=elements)
        same = tf.debugging.assert_near(
            drawn, tf.gather(tf.cast(inputs["matrix"], tf.float32), chosen), rtol=1e-5,
            atol=1e-3, message="warp_on_device: the layer's augment is not the DataLoader's "
            "(its crops differ from the batch's); give WarpOnDevice the loader's list")
        with tf.control_dependencies([same]):
            return decode_hevc_warped(tf.gather(inputs["sample"], chosen), augment, seed=seed,
                                      epoch=epoch, elements=elements,
                                      what=tf.gather(inputs["what"], chosen))

    return per_epoch(inputs[KEY_INPUT], [augment.height, augment.width, 3],
                     tf.float32 if augment.dtype == "float32" else tf.uint8, decode)


_log = logging.getLogger("tf_gulp")
_said_no_gpu = False


def _say_once_if_no_gpu_ran(device: Optional[str], who: str = "warp_on_device") -> None:
    """Asked for a GPU where TensorFlow has none, the ops run on the CPU by soft placement without
    a word from TensorFlow: say once that no GPU kernel ran (docs/gpu.md). `who`: the function
    asked (warp_on_device, jpeg_on_device)."""
    global _said_no_gpu
    if _said_no_gpu or device is None or tf.DeviceSpec.from_string(device).device_type != "GPU":
        return
    if not tf.config.list_logical_devices("GPU"):
        _said_no_gpu = True
        _log.warning("tf_gulp: %s was asked for %s, but TensorFlow has no GPU here: "
                     "the decode and warp run on the CPU (soft placement); no GPU kernel ran",
                     who, device)


# What a user who asked XLA to compile WarpOnDevice can do instead (docs/gpu.md, "XLA").
_XLA_FIX = ("leave the model's jit_compile at its default (\"auto\" runs this model without XLA) "
            "or set jit_compile=False; to compile the rest of the model with XLA, call "
            "tf_gulp.bzna.warp_on_device in a tf.function without jit_compile and the XLA-compiled "
            "function on its output")


def _refuse_xla(layer: str = "tf_gulp.bzna.WarpOnDevice (warp_on_device)",
                ops: str = "tf_gulp.ops.decode_hevc_warped, similarity_warp",
                fix: str = _XLA_FIX) -> None:
    """Raises when `layer` is being traced for XLA (``tf.function(jit_compile=True)``: a custom
    step, or tf-keras' ``compile(jit_compile=True)``): XLA cannot compile tf_gulp's custom ops
    (`ops`) and would fail later with a message naming only the op."""
    if tf.executing_eagerly():
        return
    if control_flow_util.GraphOrParentsInXlaContext(tf_ops.get_default_graph()):
        raise ValueError(f"{layer} cannot run under XLA (jit_compile=True): its ops ({ops}) are "
                         f"custom ops XLA cannot compile. Fix: {fix}")


def _say_no_xla(layer: str, fix: str) -> None:
    """What a layer's ``supports_jit`` logs (once per layer class) when Keras asks it."""
    _log.warning("tf_gulp: the model holds %s, whose custom ops XLA cannot compile: Keras runs "
                 "its step without XLA (jit_compile=False). Fix, if you asked for XLA: %s",
                 layer, fix)


def warp_on_device(inputs: Mapping[str, tf.Tensor], augment,
                   device: Optional[str] = None) -> tf.Tensor:
    """Augments a batch of ``DataLoader(..., device=...)`` to ``[B, height, width, 3]``.

    Args:
      inputs: the batch's first element: ``{"image", "size", "matrix", "bias", "norm"}``, or
        ``{"sample", "what", "key", "size", "matrix", "bias", "norm"}`` (compressed samples).
      augment: the DataLoader's ``augment`` list (or its ``loader_augment``): the output size,
        dtype and, for compressed samples, the kernels' attrs.
      device: where to decode and warp; None (default) is the device the caller runs on (under
        ``tf.distribute`` each replica's own GPU; in Keras' step the GPU when there is one).

    Compressed samples are decoded and augmented by one op, ``tf_gulp.ops.decode_hevc_warped``
    (its GPU kernel: NVDEC and one fused kernel per picture), drawing what the CPU path draws
    (checked against the batch's matrices: another list is an error). Host-decoded pictures are
    cut to their own size and warped with their matrix, bias and norm by
    ``tf_gulp.ops.similarity_warp``.
    """
    augment = compile_augment(augment, "warp_on_device: ")
    keys = SAMPLE_INPUT_KEYS if "sample" in inputs else INPUT_KEYS
    missing = [k for k in keys if k not in inputs]
    if missing:
        raise ValueError(f"warp_on_device: inputs lack {missing}; pass the first element of a "
                         f"DataLoader(..., device=...) batch (keys {list(INPUT_KEYS)}, or "
                         f"{list(SAMPLE_INPUT_KEYS)} when it decodes on the device)")
    _refuse_xla()
    height, width = augment.height, augment.width
    _say_once_if_no_gpu_ran(device)
    if keys is SAMPLE_INPUT_KEYS:
        if KEY_INPUT not in inputs:
            raise ValueError(f"warp_on_device: a batch of compressed samples needs its random "
                             f"keys ({KEY_INPUT!r}): pass a DataLoader(..., device=..., "
                             f"decode='device') batch")
        if device is None:
            return _fused_decode_warp(inputs, augment)
        with tf.device(device):
            return _fused_decode_warp(inputs, augment)
    if augment.color:
        raise ValueError("warp_on_device: colour transforms need decode='device' (the fused "
                         "decode_hevc_warped); similarity_warp has no colour stage")

    def warp_all() -> tf.Tensor:
        def one(args: Tuple[tf.Tensor, ...]) -> tf.Tensor:
            image, size, matrix, bias, norm = args
            # Each picture cut to its own size, so the warp sees its true borders.
            return similarity_warp(image[:size[0], :size[1], :], matrix, (height, width), bias,
                                   norm)

        out = tf.map_fn(
            one,
            tuple(inputs[k] for k in INPUT_KEYS),
            fn_output_signature=tf.TensorSpec([height, width, 3], tf.float32),
        )
        # similarity_warp rounds levels before bias and norm: a uint8 list's levels are exact.
        return out if augment.dtype == "float32" else tf.cast(out, tf.uint8)

    if device is None:
        return warp_all()
    with tf.device(device):
        return warp_all()


class OnDeviceLayer(tf.keras.layers.Layer):
    """What the layers that decode or warp in the step (:class:`WarpOnDevice`,
    :class:`tf_gulp.JpegOnDevice`) share: the compiled ``augment`` list and the device they keep
    and give back in ``get_config``, and their answer to Keras that XLA cannot compile them.

    A subclass sets ``_xla_fix``, what a user who asked for XLA can do instead."""

    _xla_fix = _XLA_FIX
    _said_no_xla = False  # per class: each layer class says it once

    def __init__(self, augment, device: Optional[str] = None, **kwargs) -> None:
        kwargs.setdefault("trainable", False)  # nothing to train; from_config passes it back
        super().__init__(**kwargs)
        if isinstance(augment, Mapping):  # from get_config
            augment = Augment(**{k: tuple(v) if isinstance(v, list) else v
                                 for k, v in augment.items()})
        self.augment = compile_augment(augment, f"{type(self).__name__}: ")
        self.device_name = device

    @property
    def supports_jit(self) -> bool:
        """False: XLA cannot compile tf_gulp's custom ops. Keras 3 reads it in ``compile()``: its
        default ``jit_compile="auto"`` then runs the model without XLA (where a GPU would
        otherwise turn XLA on), and an explicit ``jit_compile=True`` is turned off with Keras' own
        warning; this layer says once, in the ``tf_gulp`` log, which layer did it and why."""
        cls = type(self)
        if not cls._said_no_xla:
            cls._said_no_xla = True
            _say_no_xla(cls.__name__, cls._xla_fix)
        return False

    @supports_jit.setter
    def supports_jit(self, value: bool) -> None:
        """Keras' ``Layer.__init__`` sets True for every layer; this one never supports XLA."""
        del value

    def get_config(self) -> dict:
        config = super().get_config()
        a = self.augment
        # The compiled list: what the kernels take, enough to rebuild the layer (from_config).
        config.update(augment=dict(height=a.height, width=a.width, warp=list(a.warp),
                                   color=list(a.color), dtype=a.dtype, bias=list(a.bias),
                                   norm=list(a.norm)), device=self.device_name)
        return config


class WarpOnDevice(OnDeviceLayer):
    """A Keras layer that runs :func:`warp_on_device`: the first layer of a model fed by
    ``DataLoader(..., device="/GPU:0")``, so ``model.fit`` warps (and, when the batches carry
    compressed samples, decodes) on the GPU.

    Args:
      augment: the DataLoader's ``augment`` list (a :mod:`tf_gulp.transforms` list, or
        ``tf_gulp.bzna.transforms.loader_augment(...)`` of the reference loader's arguments).
      device: None (default): the device the step runs on (each replica's GPU under
        ``tf.distribute``); or a device name to pin it.
    """

    def __init__(self, augment, device: Optional[str] = None, **kwargs) -> None:
        super().__init__(augment, device, **kwargs)
        self.shape_hw = self.augment.shape

    def call(self, inputs: Mapping[str, tf.Tensor]) -> tf.Tensor:
        # Keras may cast a model's inputs to its default float32 (it does under tf.distribute when
        # the model has no typed Input): exact for pictures (0-255) and sizes, so cast back.
        inputs = dict(inputs)
        for key, dtype in (("image", tf.uint8), ("size", tf.int32)):
            if key in inputs and inputs[key].dtype != dtype:
                inputs[key] = tf.cast(inputs[key], dtype)
        return warp_on_device(inputs, self.augment, self.device_name)

    def compute_output_shape(self, input_shape):
        batch = None
        if isinstance(input_shape, Mapping):
            batch = input_shape["image" if "image" in input_shape else "sample"][0]
        return (batch, self.shape_hw[0], self.shape_hw[1], 3)
