"""Rule macros the BUILD files share (BUILD files themselves allow no def)."""

load("//:build_config.bzl", "CORE_COPTS", "TEST_LINKOPTS")

def copy_file(name, src, out):
    """`out` as a copy of `src`: for a file a rule takes only under another name."""
    native.genrule(name = name, srcs = [src], outs = [out], cmd = "cp $< $@")

def gpu_host_test(name, srcs, deps):
    """A cc/gpu unit test: host-only C++ against the fake CUDA driver, NVDEC or nvJPEG.

    Linked with -ldl: the code under test opens the NVIDIA libraries with dlopen (the fakes stand
    in behind the same tables).
    """
    native.cc_test(
        name = name,
        size = "small",
        srcs = srcs,
        copts = CORE_COPTS,
        linkopts = TEST_LINKOPTS + ["-ldl"],
        deps = deps,
    )
