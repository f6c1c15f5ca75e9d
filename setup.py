"""pip build of tf_gulp: compiles tf_gulp/ops/_tf_gulp_ops.so against the installed TensorFlow.

    pip install tensorflow-cpu==2.21.0          # first: the TensorFlow to build against
    pip install --no-build-isolation -e .       # development (the .so lands in tf_gulp/ops/)
    pip install --no-build-isolation .          # a regular install

(2.21.0: build_config.bzl's TENSORFLOW_VERSION; tests/test_build_settings.py keeps this in step.)

The op library is every tf_gulp/ops/**/*.cc plus every non-test cc/**/*.cc (the source globs, flags and
TensorFlow query of build_config.bzl, shared with the Bazel build and read through
tools/build_settings.py), compiled with g++ using those flags and TensorFlow's own
tf.sysconfig.get_compile_flags() / get_link_flags(). `_build_info.json` next to the library records the
TensorFlow version it was built against; tf_gulp/ops/library.py refuses to load it into another one.

The pybind11 module `tf_gulp._core` is every tf_gulp/pybind/*.cc plus the same core objects, without
TensorFlow: the reference-compatible Python readers and writers (tf_gulp.ffrecord) call the core through
it. It needs pybind11 (pip install pybind11) at build time only.

The GPU kernel of similarity_warp (docs/gpu.md) is in the library on every machine; its CUDA kernels
are compiled by nvcc (TF_GULP_NVCC, else nvcc on PATH, else $CUDA_HOME/bin/nvcc or
/usr/local/cuda/bin/nvcc) into a fatbin the library embeds. Without nvcc the build says so and embeds
none: the GPU kernel then falls back to the CPU warp. TF_GULP_NVCC=0 skips nvcc on purpose.

Environment knobs: CXX (compiler, default g++), TF_GULP_BUILD_JOBS (parallel compiles, default 2),
TF_GULP_NVCC (see above), TF_GULP_FFMPEG_PREFIX (an FFmpeg install prefix to compile and link
libavcodec/libavutil from instead of Debian's libavcodec-dev: the wheel build,
tools/wheel/build_wheel.sh, points it at the minimal HEVC-only FFmpeg it builds; docs/wheel.md).
Object files are cached under build/tf_gulp_objects/, so a rebuild only recompiles what changed.
"""

import concurrent.futures
import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
from typing import Dict, List, Sequence

from setuptools import Extension, find_namespace_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
LIBRARY_MODULE = "tf_gulp.ops._tf_gulp_ops"
CORE_MODULE = "tf_gulp._core"
BUILD_INFO_FILE = os.path.join("tf_gulp", "ops", "_build_info.json")


def _load_build_settings():
    """tools/build_settings.py, by path: setup.py runs as a script, tools/ is no package."""
    path = os.path.join(ROOT, "tools", "build_settings.py")
    spec = importlib.util.spec_from_file_location("_tf_gulp_build_settings", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_settings = _load_build_settings()
BUILD_CONFIG = build_settings.load_build_config(ROOT)
TENSORFLOW_HINT = f"pip install tensorflow-cpu=={BUILD_CONFIG['TENSORFLOW_VERSION']}"


def query_tensorflow() -> Dict[str, object]:
    """Version and build flags of the TensorFlow installed for this interpreter.

    TensorFlow is asked in a child process: importing it here would cost memory in the build, and it
    lets a build under pip's build isolation (an environment without TensorFlow) still find the
    TensorFlow of the environment pip installs into, by dropping the isolation's PYTHONPATH.
    """
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    attempts = [env]
    if "PYTHONPATH" in env or "PYTHONNOUSERSITE" in env:
        outer = {k: v for k, v in env.items() if k not in ("PYTHONPATH", "PYTHONNOUSERSITE")}
        attempts.append(outer)
    errors = []
    for attempt in attempts:
        proc = subprocess.run(
            [sys.executable, "-c", BUILD_CONFIG["TF_QUERY"]],
            env=attempt, capture_output=True, text=True,
        )
        lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
        if proc.returncode == 0 and lines:
            return json.loads(lines[-1])
        errors.append(proc.stderr.strip().splitlines()[-1:] or ["(no output)"])
    raise SystemExit(
        f"tf_gulp: cannot import TensorFlow with {sys.executable} ({errors[-1][0]}).\n"
        f"tf_gulp's op library is compiled against the installed TensorFlow; install it first:\n"
        f"    {TENSORFLOW_HINT}\n"
        f"then build with:  pip install --no-build-isolation -e .   (or: make build)"
    )


def _pybind_include_flags() -> List[str]:
    """-I flags for pybind11's headers and this interpreter's Python headers."""
    import sysconfig

    try:
        import pybind11
    except ImportError:
        raise SystemExit(
            "tf_gulp: building the tf_gulp._core module needs pybind11: pip install pybind11"
        ) from None
    return ["-I" + pybind11.get_include(), "-I" + sysconfig.get_paths()["include"]]


def _ffmpeg_flags() -> Dict[str, List[str]]:
    """Compile and link flags for an FFmpeg under $TF_GULP_FFMPEG_PREFIX; empty lists without it.

    The -I/-L flags come before the system directories, so <prefix>'s headers and libraries win over
    Debian's; the run path lets a build that is not repaired by auditwheel still find them.
    """
    prefix = os.environ.get("TF_GULP_FFMPEG_PREFIX", "")
    if not prefix:
        return {"compile": [], "link": []}
    prefix = os.path.abspath(prefix)
    header = os.path.join(prefix, "include", "libavcodec", "avcodec.h")
    if not os.path.isfile(header):
        raise SystemExit(f"tf_gulp: TF_GULP_FFMPEG_PREFIX={prefix} has no {header}")
    lib = os.path.join(prefix, "lib")
    return {"compile": ["-I" + os.path.join(prefix, "include")],
            "link": ["-L" + lib, "-Wl,-rpath," + lib]}


def _deps_up_to_date(obj: str, dep_file: str, command: Sequence[str], cmd_file: str) -> bool:
    """True when `obj` is newer than every file g++ -MMD listed and was built by the same command."""
    try:
        with open(cmd_file, encoding="utf-8") as f:
            if f.read() != " ".join(command):
                return False
        obj_mtime = os.path.getmtime(obj)
        with open(dep_file, encoding="utf-8") as f:
            text = f.read().replace("\\\n", " ")
    except OSError:
        return False
    _, _, deps = text.partition(":")
    for dep in shlex.split(deps.replace("\\ ", "\0")):
        dep = dep.replace("\0", " ")
        path = dep if os.path.isabs(dep) else os.path.join(ROOT, dep)
        try:
            if os.path.getmtime(path) > obj_mtime:
                return False
        except OSError:
            return False
    return True


def find_nvcc() -> str:
    """The nvcc to compile the GPU kernels with, or "" (none found, or TF_GULP_NVCC=0)."""
    chosen = os.environ.get("TF_GULP_NVCC")
    if chosen is not None:
        return "" if chosen in ("", "0") else chosen
    candidates = [shutil.which("nvcc")]
    if os.environ.get("CUDA_HOME"):
        candidates.append(os.path.join(os.environ["CUDA_HOME"], "bin", "nvcc"))
    candidates.append("/usr/local/cuda/bin/nvcc")
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return ""


def build_fatbin(config: Dict[str, object], obj_root: str, force: bool) -> str:
    """Compiles the GPU kernels into obj_root/cc/gpu/similarity_warp.fatbin with nvcc, or writes an
    empty file (no nvcc: the library then holds no GPU kernels, which it says at run time); returns
    the path. Rebuilt only when the .cu file, a header it includes or the command changed."""
    fatbin = os.path.join(obj_root, "cc", "gpu", "similarity_warp.fatbin")
    os.makedirs(os.path.dirname(fatbin), exist_ok=True)
    nvcc = find_nvcc()
    if not nvcc:
        print("tf_gulp: no nvcc (set TF_GULP_NVCC or CUDA_HOME to build the GPU kernels): the op "
              "library's GPU kernel of similarity_warp will fall back to the CPU warp", flush=True)
        with open(fatbin, "wb"):
            pass
        with open(fatbin + ".cmd", "w", encoding="utf-8") as f:
            f.write("none")
        return fatbin
    dep_file, cmd_file = fatbin + ".d", fatbin + ".cmd"
    src = config["GPU_KERNELS_SRC"]
    command = [nvcc] + list(config["GPU_NVCC_FLAGS"]) + ["-I" + ROOT, "-MD", "-MF", dep_file,
                                                          "-o", fatbin, src]
    if not force and _deps_up_to_date(fatbin, dep_file, command, cmd_file):
        return fatbin
    print(f"tf_gulp: compiling {src} with {nvcc} (the GPU kernels)", flush=True)
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"tf_gulp: nvcc failed (TF_GULP_NVCC=0 builds without GPU kernels):\n"
                         f"$ {shlex.join(command)}\n{proc.stdout}{proc.stderr}")
    with open(cmd_file, "w", encoding="utf-8") as f:
        f.write(" ".join(command))
    return fatbin


class BuildTfGulpOps(build_ext):
    """Builds the op library with g++ (no distutils compiler), in parallel, with cached objects."""

    def get_ext_filename(self, fullname: str) -> str:
        # A plain .so, not a CPython extension module name. distutils asks both with the full
        # dotted name and with the last component only (get_ext_fullpath).
        if fullname in (LIBRARY_MODULE, LIBRARY_MODULE.rpartition(".")[2]):
            return os.path.join(*fullname.split(".")) + ".so"
        return super().get_ext_filename(fullname)

    def build_extension(self, ext: Extension) -> None:
        if ext.name not in (LIBRARY_MODULE, CORE_MODULE):
            super().build_extension(ext)
            return
        config = BUILD_CONFIG
        if getattr(self, "_tf_info", None) is None:
            self._tf_info = query_tensorflow()
        tf_info = self._tf_info
        if tf_info["cxx11_abi"] != 1:
            raise SystemExit(
                f"tf_gulp: TensorFlow {tf_info['version']} uses _GLIBCXX_USE_CXX11_ABI="
                f"{tf_info['cxx11_abi']}; tf_gulp's core is built with the compiler default (1)."
            )
        cxx = shlex.split(os.environ.get("CXX", "g++"))
        jobs = max(1, int(os.environ.get("TF_GULP_BUILD_JOBS", "2")))
        sources = build_settings.library_sources(config, ROOT)
        if not sources["ops"]:
            raise SystemExit("tf_gulp: no tf_gulp/ops/**/*.cc sources to build")

        # Same split as the Bazel build: core gets CORE_COPTS, ops add TensorFlow's and OPS_COPTS.
        ffmpeg = _ffmpeg_flags()
        core_flags = config["CORE_COPTS"] + ["-I" + ROOT] + ffmpeg["compile"]
        ops_flags = config["CORE_COPTS"] + list(tf_info["compile_flags"]) + config["OPS_COPTS"]
        ops_flags += ["-I" + ROOT]
        jobs_list = [(src, core_flags) for src in sources["core"]]
        if ext.name != LIBRARY_MODULE:  # tf_gulp._core: the core objects + the bindings
            pybind_flags = core_flags + _pybind_include_flags() + ["-fvisibility=hidden"]
            jobs_list += [(src, pybind_flags) for src in sources["pybind"]]

        key = hashlib.sha256(
            json.dumps([cxx, core_flags, ops_flags, tf_info["version"]]).encode()
        ).hexdigest()[:12]
        obj_root = os.path.join(ROOT, "build", "tf_gulp_objects", key)
        if ext.name == LIBRARY_MODULE:
            jobs_list += [(src, ops_flags) for src in sources["ops"]]
            # The GPU kernel's host side and glue; the fatbin's digest in the command recompiles
            # embedded_fatbin.cc when the fatbin changes (.incbin is not in g++'s -MMD list).
            fatbin = build_fatbin(config, obj_root, self.force)
            with open(fatbin, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()[:16]
            gpu_flags = list(config["GPU_COPTS"]) + [
                f'-DTFG_FATBIN_PATH="{fatbin}"', f"-DTFG_FATBIN_DIGEST={digest}"]
            jobs_list += [(src, core_flags + gpu_flags) for src in sources["gpu"]]
            jobs_list += [(src, ops_flags + list(config["GPU_COPTS"]))
                          for src in sources["gpu_ops"]]

        def compile_one(item):
            src, flags = item
            obj = os.path.join(obj_root, src[: -len(".cc")] + ".o")
            dep_file = obj[: -len(".o")] + ".d"
            cmd_file = obj[: -len(".o")] + ".cmd"
            command = cxx + flags + ["-MMD", "-MF", dep_file, "-c", src, "-o", obj]
            if not self.force and _deps_up_to_date(obj, dep_file, command, cmd_file):
                return obj, None
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            print(f"tf_gulp: compiling {src}", flush=True)
            proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
            if proc.returncode != 0:
                return obj, f"$ {shlex.join(command)}\n{proc.stdout}{proc.stderr}"
            if proc.stderr.strip():
                print(proc.stderr, file=sys.stderr, flush=True)
            with open(cmd_file, "w", encoding="utf-8") as f:
                f.write(" ".join(command))
            return obj, None

        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(compile_one, jobs_list))
        failures = [error for _, error in results if error]
        if failures:
            for error in failures:
                print(error, file=sys.stderr)
            raise SystemExit(f"tf_gulp: {len(failures)} translation unit(s) failed to compile")

        output = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(output), exist_ok=True)
        link = cxx + ["-shared", "-o", output] + [obj for obj, _ in results]
        link += ffmpeg["link"] + config["CORE_LINKOPTS"]
        if ext.name == CORE_MODULE:
            print(f"tf_gulp: linking {output}", flush=True)
            subprocess.run(link, cwd=ROOT, check=True)
            return
        link += config["OPS_LINKOPTS"] + list(tf_info["link_flags"])
        print(f"tf_gulp: linking {output}", flush=True)
        subprocess.run(link, cwd=ROOT, check=True)

        build_info = {
            "tensorflow_version": tf_info["version"],
            "cxx11_abi": tf_info["cxx11_abi"],
            "builder": "setup.py",
        }
        with open(self._build_info_path(output), "w", encoding="utf-8") as f:
            json.dump(build_info, f, indent=2)
            f.write("\n")

    @staticmethod
    def _build_info_path(library_path: str) -> str:
        return os.path.join(os.path.dirname(library_path), os.path.basename(BUILD_INFO_FILE))

    # _build_info.json travels with the library: into the source tree for -e / --inplace builds, and
    # into the list of outputs pip packs into the wheel.
    def copy_extensions_to_source(self) -> None:
        super().copy_extensions_to_source()
        for regular, inplace in self._build_info_mapping():
            self.copy_file(regular, inplace, level=self.verbose)

    def _build_info_mapping(self):
        build_py = self.get_finalized_command("build_py")
        for ext in self.extensions:
            if ext.name == LIBRARY_MODULE:
                inplace, regular = self._get_inplace_equivalent(build_py, ext)
                yield self._build_info_path(regular), self._build_info_path(inplace)

    def get_outputs(self) -> List[str]:
        outputs = super().get_outputs()
        if not self.inplace:
            outputs += [
                self._build_info_path(self.get_ext_fullpath(ext.name))
                for ext in self.extensions
                if ext.name == LIBRARY_MODULE
            ]
        return outputs

    def get_output_mapping(self) -> Dict[str, str]:
        mapping = super().get_output_mapping()
        if self.inplace:
            mapping.update(dict(self._build_info_mapping()))
        return mapping


setup(
    packages=find_namespace_packages(include=["tf_gulp", "tf_gulp.*"], exclude=["*.__pycache__"]),
    package_data={"tf_gulp.ops": ["_build_info.json"]},
    include_package_data=False,
    # The sources are listed so setuptools knows the library exists; BuildTfGulpOps finds them itself.
    ext_modules=[Extension(LIBRARY_MODULE, sources=[]), Extension(CORE_MODULE, sources=[])],
    cmdclass={"build_ext": BuildTfGulpOps},
    zip_safe=False,
)
