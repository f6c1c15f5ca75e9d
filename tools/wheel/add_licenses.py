"""Writes the licences of the libraries auditwheel bundled into a repaired tf_gulp wheel.

    python tools/wheel/add_licenses.py REPAIRED.whl FFMPEG_PREFIX OUT_DIR

Each library in tf_gulp.libs/ is traced back to where it came from: the minimal FFmpeg under
FFMPEG_PREFIX (tools/wheel/build_ffmpeg.sh), or the Debian package that owns the system copy
(`dpkg -S`). Its licence texts go to tf_gulp/LICENSES/ in the wheel, with a README.md saying which
library is which, its version, its source and its licence. A library without a known licence stops
the build, so a new dependency cannot slip into the wheel unnoticed. Run with the build/wheel-tools
interpreter (it needs the `wheel` package for unpack/pack, which also rewrites RECORD).
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List, Tuple

# Licence summary (SPDX) of each library the wheel may bundle, by soname stem.
KNOWN = {
    "libavcodec": "LGPL-2.1-or-later",
    "libavutil": "LGPL-2.1-or-later",
    "libturbojpeg": "IJG AND BSD-3-Clause AND Zlib",
    # libjpeg-turbo's libjpeg API (Debian's libjpeg62-turbo): the fused decode + warp crops and
    # skips scanlines through it (cc/codec/jpeg_warp), which the TurboJPEG API cannot.
    "libjpeg": "IJG AND BSD-3-Clause AND Zlib",
    # libpng decodes the PNG pictures among a dataset's JPEGs (cc/codec/png_decoder); it needs zlib.
    "libpng16": "Libpng",
    "libz": "Zlib",
    "liburing": "MIT (or LGPL-2.1, liburing's dual licence)",
    "libdeflate": "MIT",
}
FFMPEG_SOURCE = (
    "Debian 12's ffmpeg source package, upstream tarball ffmpeg_{version}.orig.tar.xz "
    "(deb.debian.org/debian/pool/main/f/ffmpeg/), SHA-256 {sha256}; configured with: {flags}"
)


def _stem(name: str) -> str:
    """libavcodec-1a2b3c4d.so.59.37.100 (auditwheel's renamed copy) -> libavcodec."""
    return re.sub(r"(-[0-9a-f]{8})?\.so(\.\d+)*$", "", name)


def _script_setting(name: str) -> str:
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "build_ffmpeg.sh")
    with open(script, encoding="utf-8") as f:
        match = re.search(rf"^{name}=(\S+)$", f.read(), re.M)
    return match.group(1) if match else "?"


def _debian_origin(stem: str) -> Tuple[str, str, str]:
    """(package, version, copyright file) of the Debian package holding the system `stem`.so.*."""
    for path in sorted(glob.glob(f"/usr/lib/x86_64-linux-gnu/{stem}.so.*")):
        proc = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        if proc.returncode == 0:
            package = proc.stdout.split(":")[0]
            version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                                     capture_output=True, text=True, check=True).stdout
            return package, version, f"/usr/share/doc/{package}/copyright"
    raise SystemExit(f"add_licenses: no Debian package owns /usr/lib/x86_64-linux-gnu/{stem}.so.*")


def main(argv: List[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    wheel_path, prefix, out_dir = argv
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "wheel", "unpack", "-d", tmp, wheel_path], check=True)
        (unpacked,) = glob.glob(os.path.join(tmp, "*"))
        libs = sorted(os.listdir(os.path.join(unpacked, "tf_gulp.libs")))
        licenses = os.path.join(unpacked, "tf_gulp", "LICENSES")
        os.makedirs(licenses, exist_ok=True)
        rows: List[Dict[str, str]] = []
        for lib in libs:
            stem = _stem(lib)
            if stem not in KNOWN:
                raise SystemExit(f"add_licenses: {lib} was bundled but has no known licence; "
                                 f"add it to KNOWN in {__file__} after checking its terms")
            if glob.glob(os.path.join(prefix, "lib", stem + ".so*")):
                version = _script_setting("FFMPEG_VERSION")
                flags = open(os.path.join(prefix, "configure-flags.txt"), encoding="utf-8").read()
                source = FFMPEG_SOURCE.format(version=version, flags=flags.strip(),
                                              sha256=_script_setting("FFMPEG_SHA256"))
                origin = f"FFmpeg {version}, built by tools/wheel/build_ffmpeg.sh"
                for text in ("COPYING.LGPLv2.1", "LICENSE.md"):
                    shutil.copy(os.path.join(prefix, text),
                                os.path.join(licenses, f"FFmpeg-{text}"))
                files = "FFmpeg-COPYING.LGPLv2.1, FFmpeg-LICENSE.md"
            else:
                package, version, copyright_file = _debian_origin(stem)
                origin = f"Debian 12 package {package} {version}"
                source = f"Debian source package of {package} {version} (apt-get source {package})"
                files = f"{package}.copyright"
                shutil.copy(copyright_file, os.path.join(licenses, files))
            rows.append({"lib": lib, "origin": origin, "licence": KNOWN[stem], "files": files,
                         "source": source})
        with open(os.path.join(licenses, "README.md"), "w", encoding="utf-8") as f:
            f.write("# Libraries bundled in this wheel (tf_gulp.libs/)\n\n"
                    "auditwheel copied these shared libraries into the wheel; each keeps its own "
                    "licence, whose text is in this folder. The LGPL libraries (FFmpeg) are linked "
                    "dynamically and can be replaced by another build of the same version.\n\n")
            for row in rows:
                f.write(f"## {row['lib']}\n- from: {row['origin']}\n- licence: {row['licence']}\n"
                        f"- licence text: {row['files']}\n- source: {row['source']}\n\n")
        os.makedirs(out_dir, exist_ok=True)
        subprocess.run([sys.executable, "-m", "wheel", "pack", "-d", out_dir, unpacked], check=True)
    for row in rows:
        print(f"bundled {row['lib']}: {row['origin']} ({row['licence']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
