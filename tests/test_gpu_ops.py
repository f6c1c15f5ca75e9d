"""The GPU side of the ops and of DataLoader, checked on a machine without a GPU (docs/gpu.md).

What a host can check: the GPU kernels of similarity_warp and decode_hevc are in TensorFlow's kernel
registry with the right inputs in host memory, the op library holds the nvcc-built kernels when nvcc was there
at build time, `DataLoader(..., device="/GPU:0")` refuses a machine where TensorFlow has no GPU, and
the two-stage path (tf.data up to the warp, then WarpOnDevice in the model) gives the CPU
DataLoader's batches and trains with model.fit. The GPU kernels themselves run on a GPU only in the
device check (tools/gpu_device_check.sh, no TensorFlow).
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.framework import kernels

import tf_gulp.ops
from hevc_testing import fit_small_model, make_train_bzna
from tf_gulp import transforms as V
from tf_gulp.bzna import transforms as T
from tf_gulp.bzna.dataset import DataLoader
from tf_gulp.bzna.on_device import WarpOnDevice, check_device, warp_on_device
from tf_gulp.ops.image.warp_ops import similarity_transform_matrices
from tf_gulp.ops.library import load_ops

HOST_MEMORY = {"matrices", "output_shape", "bias", "norm", "oob_color"}
# What _loader's reference arguments compile to: the list WarpOnDevice is given.
AUGMENT = T.loader_augment((24, 32), T.RandomResizedCrop())
# A 2 x 2 float output of levels, for hand-made inputs.
LEVELS_2X2 = [V.Resize((2, 2)), V.ToDtype(tf.float32)]


def registrations(op: str) -> dict:
    load_ops()
    return {k.device_type: set(k.host_memory_arg)
            for k in kernels.get_registered_kernels_for_op(op).kernel}


def test_similarity_warp_has_cpu_and_gpu_kernels():
    found = registrations("TfGulp>SimilarityWarp")
    assert set(found) == {"CPU", "GPU"}
    # Only the pictures (and the output) live in GPU memory; the rest is read on the host.
    assert found["GPU"] == HOST_MEMORY


def test_decode_hevc_has_cpu_and_gpu_kernels():
    found = registrations("TfGulp>DecodeHevc")
    assert set(found) == {"CPU", "GPU"}
    # The compressed sample, its name and the batch's largest coded size are read on the host; the
    # picture is decoded (NVDEC) and converted on the GPU straight into the output in GPU memory.
    assert found["GPU"] == {"contents", "what", "max_size"}
    assert found["CPU"] == set()


def test_decode_hevc_warped_has_cpu_and_gpu_kernels():
    found = registrations("TfGulp>DecodeHevcWarped")
    assert set(found) == {"CPU", "GPU"}
    # Samples, names and the random keys' parts are read on the host (MP4 parsing, the matrices);
    # only the output batch lives in GPU memory (NVDEC + the fused warp kernel write it there).
    assert found["GPU"] == {"contents", "what", "seed", "epoch", "elements"}
    assert found["CPU"] == set()


def _library_path() -> str:
    return os.path.join(os.path.dirname(tf_gulp.ops.__file__), "_tf_gulp_ops.so")


def _symbol_addresses(path: str) -> dict:
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].startswith("tfg_similarity_warp_fatbin"):
            found[parts[2]] = int(parts[0], 16)
    return found


def test_the_library_embeds_the_gpu_kernels_when_nvcc_was_there():
    if shutil.which("nm") is None:
        pytest.skip("no nm (binutils) to read the library's symbols")
    symbols = _symbol_addresses(_library_path())
    assert set(symbols) == {"tfg_similarity_warp_fatbin", "tfg_similarity_warp_fatbin_end"}
    size = symbols["tfg_similarity_warp_fatbin_end"] - symbols["tfg_similarity_warp_fatbin"]
    chosen = os.environ.get("TF_GULP_NVCC")  # as setup.py and //cc:gpu_fatbin look for nvcc
    found = shutil.which("nvcc") or os.access("/usr/local/cuda/bin/nvcc", os.X_OK)
    if chosen in ("", "0") or (chosen is None and not found):
        pytest.skip(f"no nvcc for the build (TF_GULP_NVCC={chosen!r}): the library holds no GPU "
                    f"kernels (fatbin of {size} bytes), which the GPU kernel reports at run time")
    # A fatbin starts with its magic 0xBA55ED50 (little endian); nvcc's holds several cubins.
    assert size > 10_000
    with open(_library_path(), "rb") as f:
        data = f.read()
    assert b"\x50\xed\x55\xba" in data
    # The three ops' kernels: the warp, decode_hevc's NV12 -> RGB conversion of NVDEC's pictures,
    # decode_hevc_warped's fused NV12 warp and its colour steps.
    for kernel in (b"tfg_similarity_warp_u8", b"tfg_ycbcr_to_rgb_u8", b"tfg_decode_warp_ycbcr",
                   b"tfg_color_levels"):
        assert kernel in data, kernel


def test_the_library_links_no_cuda_library():
    if shutil.which("readelf") is None:
        pytest.skip("no readelf (binutils) to read the library's dependencies")
    out = subprocess.run(["readelf", "-d", _library_path()], capture_output=True, text=True,
                         check=True).stdout
    needed = [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]
    assert needed and "libtensorflow_framework.so.2" in needed
    # libcuda.so.1 and libnvcuvid.so.1 are opened at run time (cc/gpu/gpu_runtime.cc): the library
    # loads on machines without a GPU, a driver or CUDA.
    assert not [n for n in needed if "cuda" in n or "nvcuvid" in n or n.startswith("libnv")]


@pytest.mark.skipif(bool(tf.config.list_physical_devices("GPU")),
                    reason="TensorFlow sees a GPU here: 'no GPU' cannot be staged")
def test_gpu_device_without_a_gpu_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match=r"DataLoader: device='/GPU:0': TensorFlow has no GPU:0 .*"
                                         r"tensorflow-cpu, no NVIDIA driver"):
        DataLoader(str(tmp_path / "never-read.bzna"), (8, 8), 2, device="/GPU:0")
    with pytest.raises(ValueError, match="give a device type"):
        check_device("/job:localhost")
    assert check_device("/cpu:0") == "/CPU:0"


def test_warp_on_device_names_missing_inputs():
    with pytest.raises(ValueError, match=r"inputs lack \['size', 'matrix'"):
        warp_on_device({"image": tf.zeros([1, 2, 2, 3], tf.uint8), "bias": 0, "norm": 1},
                       LEVELS_2X2)


def test_warp_on_device_says_once_that_no_gpu_kernel_ran(caplog, monkeypatch):
    """tf.device("/GPU:0") on a machine without a GPU runs the ops on the CPU (soft placement):
    the layer that asked for the GPU says so, once."""
    if tf.config.list_logical_devices("GPU"):
        pytest.skip("TensorFlow sees a GPU here: the GPU kernels run, nothing falls back to "
                    "the CPU to report")
    import tf_gulp.bzna.on_device as on_device
    monkeypatch.setattr(on_device, "_said_no_gpu", False)
    inputs = {"image": tf.fill([1, 4, 4, 3], tf.constant(200, tf.uint8)),
              "size": tf.constant([[4, 4]], tf.int32), "matrix": tf.eye(3, batch_shape=[1]),
              "bias": tf.zeros([1, 3]), "norm": tf.ones([1, 3])}
    with caplog.at_level("WARNING", logger="tf_gulp"):
        for _ in range(2):
            out = WarpOnDevice(LEVELS_2X2, device="/GPU:0")(inputs)
            np.testing.assert_allclose(out.numpy(), 200.0)  # soft placement: it ran, on the CPU
    said = [r.getMessage() for r in caplog.records if "no GPU kernel ran" in r.getMessage()]
    assert len(said) == 1, said
    assert "asked for /GPU:0" in said[0] and "soft placement" in said[0]
    caplog.clear()
    with caplog.at_level("WARNING", logger="tf_gulp"):
        monkeypatch.setattr(on_device, "_said_no_gpu", False)
        WarpOnDevice(LEVELS_2X2, device="/CPU:0")(inputs)
        WarpOnDevice(LEVELS_2X2)(inputs)
    assert not [r for r in caplog.records if "no GPU kernel ran" in r.getMessage()]


@pytest.fixture(scope="module")
def bzna(tmp_path_factory) -> str:
    return make_train_bzna(tmp_path_factory.mktemp("bzna_device"),
                           [(40, 60), (75, 33), (64, 64), (21, 90), (50, 50)])


def _loader(path: str, **kwargs) -> tf.data.Dataset:
    return DataLoader(path, (24, 32), 2, shuffle=True, seed=7, epochs=1,
                      warp_transform=T.RandomResizedCrop(),
                      bias_transform=T.ConstantBiasTransform(),
                      norm_transform=T.ConstantNormTransform(), **kwargs)


@pytest.mark.parametrize("decode", ["host", "device"])
def test_two_stage_path_gives_the_cpu_loaders_batches(bzna, decode):
    """The device path warps the same crops as the CPU loader (both draw them in C++ from
    (seed, epoch, element): similarity_transform_matrices and decode_hevc_warped), within 2 levels
    before normalization (the CPU loader's fused kernel warps in fixed point), whether the pictures
    are decoded in tf.data (decode="host": similarity_warp in the step) or in the step
    (decode="device": decode_hevc_warped, on a GPU NVDEC and the fused kernel; here the device is
    the CPU)."""
    plain = list(_loader(bzna).as_numpy_iterator())
    staged = list(_loader(bzna, device="/CPU:0", decode=decode))
    assert len(staged) == len(plain) == 3
    for (x, y), (inputs, labels) in zip(plain, staged):
        assert inputs["size"].dtype == tf.int32
        sizes = inputs["size"].numpy()
        if decode == "host":
            assert inputs["image"].dtype == tf.uint8
            # Padded to the batch's largest picture; each picture's own size is kept.
            assert tuple(inputs["image"].shape[1:3]) == tuple(sizes.max(axis=0))
        else:
            # "key": (seed, epoch, element) as strings, for the fused decode_hevc_warped.
            assert set(inputs) == {"sample", "what", "size", "matrix", "bias", "norm", "key"}
            assert inputs["sample"].dtype == tf.string
            assert all(b": sample " in w for w in inputs["what"].numpy())
            # The sizes come from the MP4 headers, without decoding, and are the decoded ones.
            for sample, size in zip(inputs["sample"].numpy(), sizes):
                assert tuple(tf_gulp.ops.decode_hevc(sample).shape[:2]) == tuple(size)
        warped = warp_on_device(inputs, AUGMENT, "/CPU:0").numpy()
        level = max(T.IMAGENET_NORM)  # one level of the uint8 picture, normalized
        np.testing.assert_allclose(warped, x, rtol=0, atol=2 * level)
        assert np.mean(np.abs(warped - x)) < 0.25 * level  # the same crops, not merely close
        np.testing.assert_array_equal(labels.numpy(), y)
    # The padding is never sampled: a batch whose pictures differ in size still matches.
    assert any(len({tuple(s) for s in i["size"].numpy()}) > 1 for i, _ in staged)


def test_fused_device_path_gives_the_cpu_loaders_batches(bzna):
    """With the loader's list, WarpOnDevice decodes and warps a batch of compressed
    samples with one op, decode_hevc_warped (on a GPU: NVDEC + the fused NV12 warp kernel; here
    its CPU kernel): the CPU loader's batches within 2 levels before normalization."""
    plain = list(_loader(bzna).as_numpy_iterator())
    staged = list(_loader(bzna, device="/CPU:0", decode="device"))
    for (x, _), (inputs, _) in zip(plain, staged):
        fused = warp_on_device(inputs, AUGMENT, "/CPU:0").numpy()
        level = max(T.IMAGENET_NORM)
        np.testing.assert_allclose(fused, x, rtol=0, atol=2 * level)
        assert np.mean(np.abs(fused - x)) < 0.25 * level


def test_fused_device_path_spans_epochs_and_refuses_another_transform(bzna):
    # Batches that straddle two epochs: each epoch's pictures get that epoch's crops.
    raw = dict(bias_transform=T.ConstantBiasTransform(0.0),
               norm_transform=T.ConstantNormTransform(1.0))  # one level is 1.0
    plain = list(DataLoader(bzna, (24, 32), 3, shuffle=True, seed=5, epochs=2,
                            warp_transform=T.RandomResizedCrop(), **raw).as_numpy_iterator())
    staged = list(DataLoader(bzna, (24, 32), 3, shuffle=True, seed=5, epochs=2,
                             warp_transform=T.RandomResizedCrop(), device="/CPU:0",
                             decode="device", **raw))
    epochs = [set(tf.strings.to_number(i["key"], tf.int64).numpy()[:, 1]) for i, _ in staged]
    assert any(len(e) == 2 for e in epochs)
    for (x, _), (inputs, _) in zip(plain, staged):
        fused = warp_on_device(inputs, T.loader_augment((24, 32), T.RandomResizedCrop(), **raw),
                               "/CPU:0").numpy()
        np.testing.assert_allclose(fused, x, rtol=0, atol=2)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"the layer's augment is not the DataLoader's"):
        warp_on_device(staged[0][0], T.loader_augment((24, 32), T.CenterResizedCrop(), **raw),
                       "/CPU:0")


def test_fused_device_path_runs_decode_hevc_warped_on_the_device_in_the_step_graph():
    spec = {"sample": tf.TensorSpec([None], tf.string), "what": tf.TensorSpec([None], tf.string),
            "size": tf.TensorSpec([None, 2], tf.int32),
            "matrix": tf.TensorSpec([None, 3, 3], tf.float32),
            "bias": tf.TensorSpec([None, 3], tf.float32),
            "norm": tf.TensorSpec([None, 3], tf.float32),
            "key": tf.TensorSpec([None, 3], tf.string)}
    graph = tf.function(lambda x: warp_on_device(x, AUGMENT, "/GPU:0")
                        ).get_concrete_function(spec).graph
    loops = [op for op in graph.get_operations() if op.type in ("While", "StatelessWhile")]
    assert loops and all(op.device.endswith("GPU:0") for op in loops)
    body = graph._functions[loops[0].get_attr("body").name]  # pylint: disable=protected-access
    types = {node.op for node in body.definition.node_def}
    assert "TfGulp>DecodeHevcWarped" in types
    assert not {"TfGulp>DecodeHevc", "TfGulp>SimilarityWarp"} & types  # one op, not two


def test_decoding_on_the_device_is_opt_in(bzna):
    # The NVDEC path has not yet run under TensorFlow on a GPU: by default the pictures are decoded
    # in tf.data, even where NVDEC is usable; decode="device" or "auto" asks for it.
    inputs, _ = next(iter(_loader(bzna, device="/CPU:0")))
    assert "image" in inputs and "sample" not in inputs
    assert inspect.signature(DataLoader).parameters["decode"].default == "host"


def test_device_decode_checks_the_batch_against_its_draws(bzna):
    """The fused op draws each picture's crop itself: the batch's matrices (drawn in tf.data for
    the sizes its MP4 headers declare) must be what it draws, else the step fails naming the
    list; a batch of samples without its random keys is refused (the two-stage decode_hevc +
    similarity_warp of samples is gone: samples always go through decode_hevc_warped)."""
    inputs, _ = next(iter(_loader(bzna, device="/CPU:0", decode="device")))
    inputs = dict(inputs)
    inputs["size"] = inputs["size"] + 1  # a header that lies: the matrix was made for another size
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"its crops differ from the batch's"):
        warp_on_device(inputs, AUGMENT, "/CPU:0")
    del inputs["key"]
    with pytest.raises(ValueError, match=r"a batch of compressed samples needs its random keys"):
        warp_on_device(inputs, AUGMENT, "/CPU:0")


def test_decode_auto_decodes_in_tf_data_where_nvdec_is_unavailable(bzna):
    reason = tf_gulp.ops.bzna.hevc_ops.nvdec_unavailable_reason()
    if not reason:
        pytest.skip("NVDEC is usable here: 'auto' decodes on the GPU")
    # The reason names what is missing (the kernels, the driver, libnvcuvid.so.1) and the remedy.
    assert any(k in reason for k in ("nvcc", "libcuda.so.1", "driver", "libnvcuvid.so.1")), reason
    # A CPU device never decodes in the step under "auto"; nor does a GPU without NVDEC.
    inputs, _ = next(iter(_loader(bzna, device="/CPU:0", decode="auto")))
    assert "image" in inputs and "sample" not in inputs
    inputs, _ = next(iter(_loader(bzna, device="/CPU:0", decode="host")))
    assert "image" in inputs


def test_decode_argument_is_checked(tmp_path):
    path = str(tmp_path / "never-read.bzna")
    with pytest.raises(ValueError, match=r"DataLoader: decode='gpu': expected 'auto', 'device'"):
        DataLoader(path, (8, 8), 2, device="/CPU:0", decode="gpu")
    with pytest.raises(ValueError, match=r"DataLoader: decode='device' needs a device"):
        DataLoader(path, (8, 8), 2, decode="device")


@pytest.mark.parametrize("decode", ["host", "device"])
def test_warp_on_device_layer_trains_with_model_fit(bzna, decode):
    ds = _loader(bzna, device="/CPU:0", decode=decode).repeat()
    model = fit_small_model(WarpOnDevice(AUGMENT), ds, classes=2, epochs=1)
    again = WarpOnDevice.from_config(model.layers[0].get_config())
    assert again.shape_hw == (24, 32) and again.augment == AUGMENT


@pytest.mark.parametrize("augment", [
    AUGMENT,
    [V.RandomResizedCrop((24, 32), scale=(0.3, 0.9)), V.RandomHorizontalFlip(0.25),
     V.ColorJitter(0.4, 0.3, 0.2, 0.1), V.RandomGrayscale(0.2), V.ToDtype(tf.float32, scale=True),
     V.Normalize(V.IMAGENET_MEAN, V.IMAGENET_STD)],
    [V.Resize(40), V.CenterCrop(24)],  # uint8 output, no bias or norm
], ids=["loader", "torchvision", "uint8"])
def test_warp_on_device_config_round_trip_keeps_the_compiled_list(augment):
    """get_config / from_config (Keras' model saving) rebuild the layer with the same compiled
    list: geometry, colour, dtype, bias and norm, not only the output size; through JSON too."""
    layer = WarpOnDevice(augment, device="/CPU:0")
    config = json.loads(json.dumps(layer.get_config()))
    again = WarpOnDevice.from_config(config)
    assert again.augment == layer.augment == V.compile_augment(augment)
    assert again.device_name == "/CPU:0" and again.shape_hw == layer.shape_hw
    # The same compiled list draws the same matrices.
    sizes = tf.constant([[40, 60], [75, 33]])
    np.testing.assert_array_equal(
        similarity_transform_matrices(sizes, again.augment, seed=3),
        similarity_transform_matrices(sizes, augment, seed=3))


MIRRORED = r"""
import json, sys
import numpy as np
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
from tf_gulp.bzna.dataset import DataLoader
from tf_gulp.bzna.on_device import WarpOnDevice
from tf_gulp.bzna.transforms import loader_augment

strategy = tf.distribute.MirroredStrategy(["/CPU:0", "/CPU:1"])
ds = DataLoader(sys.argv[1], (24, 32), 4, epochs=None, device="/CPU:0")
with strategy.scope():
    model = tf.keras.Sequential([WarpOnDevice(loader_augment((24, 32))),
                                 tf.keras.layers.GlobalAveragePooling2D(),
                                 tf.keras.layers.Dense(2)])
    model.compile("sgd", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
history = model.fit(ds, steps_per_epoch=2, epochs=1, verbose=0, shuffle=False)
print(json.dumps({"loss": history.history["loss"], "replicas": strategy.num_replicas_in_sync}))
"""


def test_warp_on_device_under_mirrored_strategy(bzna, tmp_path):
    # Two logical CPUs stand in for two GPUs: each replica warps its share of the batch in its own
    # step. (Keras casts the untyped model inputs to float32 there; the layer casts them back.)
    # Logical devices must be set before TensorFlow starts: a child process.
    script = tmp_path / "mirrored.py"
    script.write_text(MIRRORED)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.run([sys.executable, str(script), bzna], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["replicas"] == 2 and np.all(np.isfinite(report["loss"]))
