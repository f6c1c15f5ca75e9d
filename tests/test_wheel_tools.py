"""The wheel build's own checks (tools/wheel/, docs/wheel.md), on small made-up inputs: the audit
gate that keeps the platform tag truthful and the wheel self-contained, and the licence step that
writes each bundled library's licence into the wheel and refuses a library it does not know.
(The wheel itself is proven by `make test-wheel` in a bare Debian root; see docs/wheel.md.)"""

import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(ROOT, "tools", "wheel")
sys.path.insert(0, TOOLS)

import add_licenses  # noqa: E402  (tools/wheel is no package)

WHEEL_NAME = "tf_gulp-0.1.0-cp311-cp311-manylinux_2_35_x86_64.whl"


def audit(report, name=WHEEL_NAME):
    return subprocess.run([sys.executable, os.path.join(TOOLS, "check_audit.py"), name],
                          input=json.dumps(report), capture_output=True, text=True)


def report(external=("libtensorflow_framework.so.2",), sym_tag="manylinux_2_35_x86_64"):
    return {"overall_tag": "linux_x86_64", "sym_tag": sym_tag,
            "external_libs": {lib: None for lib in external}}


def test_audit_accepts_a_wheel_needing_only_tensorflow():
    proc = audit(report())
    assert proc.returncode == 0, proc.stderr
    assert "manylinux_2_35_x86_64" in proc.stdout


def test_audit_rejects_a_library_the_wheel_does_not_carry():
    proc = audit(report(external=("libtensorflow_framework.so.2", "libavcodec.so.59")))
    assert proc.returncode == 1
    assert "libavcodec.so.59" in proc.stderr


def test_audit_rejects_a_tag_the_symbols_do_not_allow():
    proc = audit(report(sym_tag="manylinux_2_36_x86_64"))
    assert proc.returncode == 1
    assert "manylinux_2_36_x86_64" in proc.stderr


@pytest.mark.parametrize("name, stem", [
    ("libavcodec-4ae653e8.so.59.37.100", "libavcodec"),
    ("libdeflate-7a207818.so.0", "libdeflate"),
    ("liburing.so.2.3", "liburing"),
])
def test_stem_of_auditwheel_names(name, stem):
    assert add_licenses._stem(name) == stem


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_repaired_wheel(path, libs):
    """A wheel with the layout auditwheel leaves: the package, tf_gulp.libs/, dist-info."""
    dist_info = "tf_gulp-0.1.0.dist-info"
    files = {"tf_gulp/__init__.py": b""}
    files.update({"tf_gulp.libs/" + lib: b"\x7fELF" for lib in libs})
    files[f"{dist_info}/METADATA"] = b"Metadata-Version: 2.1\nName: tf-gulp\nVersion: 0.1.0\n"
    files[f"{dist_info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
                                   b"Tag: cp311-cp311-manylinux_2_35_x86_64\n")
    record = [f"{name},sha256={_digest(data)},{len(data)}" for name, data in files.items()]
    files[f"{dist_info}/RECORD"] = ("\n".join(record + [f"{dist_info}/RECORD,,"]) + "\n").encode()
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)


def make_ffmpeg_prefix(prefix):
    os.makedirs(os.path.join(prefix, "lib"))
    for name in ("lib/libavcodec.so.59", "COPYING.LGPLv2.1", "LICENSE.md"):
        with open(os.path.join(prefix, name), "w") as f:
            f.write(f"{name} text\n")
    with open(os.path.join(prefix, "configure-flags.txt"), "w") as f:
        f.write("--disable-everything --enable-decoder=hevc\n")


def test_licences_go_into_the_wheel(tmp_path):
    wheel = tmp_path / "in" / WHEEL_NAME
    wheel.parent.mkdir()
    make_repaired_wheel(str(wheel), ["libavcodec-4ae653e8.so.59.37.100"])
    make_ffmpeg_prefix(str(tmp_path / "prefix"))
    assert add_licenses.main([str(wheel), str(tmp_path / "prefix"), str(tmp_path / "out")]) == 0
    with zipfile.ZipFile(tmp_path / "out" / WHEEL_NAME) as z:
        names = set(z.namelist())
        readme = z.read("tf_gulp/LICENSES/README.md").decode()
        record = z.read("tf_gulp-0.1.0.dist-info/RECORD").decode()
    assert {"tf_gulp/LICENSES/FFmpeg-COPYING.LGPLv2.1", "tf_gulp/LICENSES/FFmpeg-LICENSE.md"} <= names
    assert "libavcodec-4ae653e8.so.59.37.100" in readme and "LGPL-2.1-or-later" in readme
    assert "--enable-decoder=hevc" in readme  # how the bundled FFmpeg was configured
    assert "tf_gulp/LICENSES/README.md," in record  # RECORD lists (and hashes) the new files


def test_an_unknown_bundled_library_stops_the_build(tmp_path):
    wheel = tmp_path / WHEEL_NAME
    make_repaired_wheel(str(wheel), ["libx265-0123abcd.so.199"])
    make_ffmpeg_prefix(str(tmp_path / "prefix"))
    with pytest.raises(SystemExit, match="libx265-0123abcd.so.199 was bundled but has no known"):
        add_licenses.main([str(wheel), str(tmp_path / "prefix"), str(tmp_path / "out")])
