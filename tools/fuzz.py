#!/usr/bin/env python3
"""Builds and runs the libFuzzer targets of cc/fuzz (coverage-guided fuzzing of the C++ parsers).

    python3 tools/fuzz.py build                       # build/fuzz/bin/<target>
    python3 tools/fuzz.py run --seconds 600           # every target for 10 minutes, one at a time
    python3 tools/fuzz.py run --runs 1000000 mp4      # one target for a million executions
    python3 tools/fuzz.py replay                      # seeds + regression inputs, once each

Targets are compiled with clang++ and -fsanitize=fuzzer,address,undefined (every UBSan finding
aborts), linking the core sources they need from cc/ compiled the same way. Debian 12: `clang` and
`libclang-rt-14-dev` (libFuzzer and the sanitizer runtimes). Bazel builds with g++ and has no
libFuzzer, so this script builds the targets itself; `make fuzz` and tests/test_fuzz.py call it.

Corpora: each run starts from seeds derived from tests/data (written under build/fuzz/seeds),
the regression inputs in tests/data/fuzz/<target>/ (inputs that once crashed a target: keep every
crash the fuzzer finds there, once fixed), and the working corpus build/fuzz/corpus/<target>, which
grows across runs. A crash leaves its input in build/fuzz/crashes/<target>/ and fails the run.
Standard library only: it runs before any virtual environment exists.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

REPO = Path(__file__).resolve().parent.parent
FUZZ_DIR = REPO / "cc" / "fuzz"
TEST_DATA = REPO / "tests" / "data"
REGRESSION_DIR = TEST_DATA / "fuzz"

# One target per cc/fuzz/<name>_fuzz.cc, found rather than listed: a new parser's target joins by
# existing (write_seeds must then give it seeds: tests/test_fuzz.py runs every target on them).
TARGETS = tuple(sorted(p.name[:-len("_fuzz.cc")] for p in FUZZ_DIR.glob("*_fuzz.cc")))

CXX = os.environ.get("FUZZ_CXX", "clang++")
SANITIZE = "address,undefined"
# -O1 and frame pointers: the usual libFuzzer trade of speed for readable stack traces. NDEBUG is
# left out so any assert() in the core is checked too.
CXXFLAGS = ["-std=c++17", "-O1", "-g", "-fno-omit-frame-pointer", f"-fsanitize={SANITIZE}",
            "-fno-sanitize-recover=all", "-I", str(REPO)]
LIBS = ["-lturbojpeg", "-ljpeg", "-lpng16", "-luring", "-ldeflate", "-lavcodec", "-lavutil", "-pthread"]


def clang_missing() -> Optional[str]:
    """Why the targets cannot be built here, or None when clang++ can link a libFuzzer target."""
    if shutil.which(CXX) is None:
        return f"{CXX} not found (Debian: apt-get install clang libclang-rt-14-dev)"
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "probe.cc"
        src.write_text('#include <cstddef>\n#include <cstdint>\nextern "C" int '
                       "LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n")
        proc = subprocess.run([CXX, f"-fsanitize=fuzzer,{SANITIZE}", str(src), "-o",
                               str(Path(tmp) / "probe")], capture_output=True, text=True)
        if proc.returncode != 0:
            return (f"{CXX} cannot link a libFuzzer target with {SANITIZE} (Debian: apt-get "
                    f"install libclang-rt-14-dev): {proc.stderr.strip()[-500:]}")
    return None


# ---------------------------------------------------------------------------------------------
# Building

def core_sources() -> List[Path]:
    """The core's non-test sources, as both builds take them (build_config.bzl's CORE_SRCS)."""
    spec = importlib.util.spec_from_file_location(
        "_tf_gulp_build_settings", REPO / "tools" / "build_settings.py")
    settings = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(settings)
    config = settings.load_build_config(str(REPO))
    return [REPO / src for src in settings.library_sources(config, str(REPO))["core"]]


def _newest_header() -> float:
    return max(p.stat().st_mtime for p in (REPO / "cc").rglob("*.h"))


def _run(cmd: Sequence[str]) -> None:
    proc = subprocess.run(list(cmd), capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"fuzz: command failed ({proc.returncode}): {' '.join(cmd)}\n"
                         f"{proc.stderr[-4000:]}")


def build(out: Path, targets: Sequence[str] = TARGETS, jobs: int = 1) -> Dict[str, Path]:
    """Compiles the core (instrumented) and links each target; reuses objects newer than sources."""
    obj_dir, bin_dir = out / "obj", out / "bin"
    obj_dir.mkdir(parents=True, exist_ok=True)
    bin_dir.mkdir(parents=True, exist_ok=True)
    headers = _newest_header()
    todo = []
    objects = []
    for src in core_sources():
        obj = obj_dir / (str(src.relative_to(REPO)).replace("/", "__") + ".o")
        objects.append(obj)
        if not obj.exists() or obj.stat().st_mtime < max(src.stat().st_mtime, headers):
            todo.append([CXX, *CXXFLAGS, "-fsanitize=fuzzer-no-link", "-c", str(src),
                         "-o", str(obj)])
    # A few compilers at a time (each is one process).
    running: List[subprocess.Popen] = []
    for cmd in todo + [None] * jobs:
        while running and (cmd is None or len(running) >= jobs):
            p = running.pop(0)
            _, err = p.communicate()
            if p.returncode != 0:
                raise SystemExit(f"fuzz: compiling failed: {' '.join(p.args)}\n{err[-4000:]}")
        if cmd is not None:
            running.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.PIPE, text=True))
    archive = out / "libcore_fuzz.a"
    if todo or not archive.exists():
        archive.unlink(missing_ok=True)
        _run(["ar", "rcs", str(archive), *map(str, objects)])
    binaries = {}
    for t in targets:
        src = FUZZ_DIR / f"{t}_fuzz.cc"
        binary = bin_dir / t
        newest = max(src.stat().st_mtime, headers, archive.stat().st_mtime)
        if not binary.exists() or binary.stat().st_mtime < newest:
            _run([CXX, *CXXFLAGS, "-fsanitize=fuzzer", str(src), str(archive), *LIBS,
                  "-o", str(binary)])
        binaries[t] = binary
    return binaries


# ---------------------------------------------------------------------------------------------
# Seed corpora from tests/data

def _boxes(data: bytes, start: int, end: int):
    pos = start
    while pos + 8 <= end:
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        header = 8
        if size == 1:
            size, header = struct.unpack(">Q", data[pos + 8:pos + 16])[0], 16
        elif size == 0:
            size = end - pos
        if size < header or pos + size > end:
            return
        yield kind, pos, pos + header, pos + size
        pos += size


def _find_box(data: bytes, path: Sequence[bytes], start: int = 0, end: Optional[int] = None):
    """(box start, payload start, end) of the first box along `path` (stsd and hvc1 skipped
    into by their fixed fields)."""
    end = len(data) if end is None else end
    skip = {b"stsd": 8, b"hvc1": 78}
    for kind, begin, payload, box_end in _boxes(data, start, end):
        if kind == path[0]:
            if len(path) == 1:
                return begin, payload, box_end
            return _find_box(data, path[1:], payload + skip.get(kind, 0), box_end)
    raise ValueError(f"no {b'/'.join(path).decode()} box")


def _hevc_parts(mp4: bytes):
    """(NAL length size, parameter sets, first sample, stsz and stco positions) of a fixture."""
    stbl = [b"moov", b"trak", b"mdia", b"minf", b"stbl"]
    _, hvcc, hvcc_end = _find_box(mp4, stbl + [b"stsd", b"hvc1", b"hvcC"])
    length_size = (mp4[hvcc + 21] & 3) + 1
    sets, pos = [], hvcc + 23
    for _ in range(mp4[hvcc + 22]):
        count = struct.unpack(">H", mp4[pos + 1:pos + 3])[0]
        pos += 3
        for _ in range(count):
            n = struct.unpack(">H", mp4[pos:pos + 2])[0]
            sets.append(mp4[pos + 2:pos + 2 + n])
            pos += 2 + n
    _, stsz, _ = _find_box(mp4, stbl + [b"stsz"])
    _, stco, _ = _find_box(mp4, stbl + [b"stco"])
    size = struct.unpack(">I", mp4[stsz + 4:stsz + 8])[0] or \
        struct.unpack(">I", mp4[stsz + 12:stsz + 16])[0]
    offset = struct.unpack(">I", mp4[stco + 8:stco + 12])[0]
    return length_size, sets, mp4[offset:offset + size], stsz, stco


def _shrink_sample(sample: bytes, length_size: int, keep: int = 48) -> bytes:
    """The sample with every NAL unit cut to `keep` bytes (lengths kept consistent)."""
    out, pos = b"", 0
    while pos + length_size <= len(sample):
        n = int.from_bytes(sample[pos:pos + length_size], "big")
        nal = sample[pos + length_size:pos + length_size + n][:keep]
        out += len(nal).to_bytes(length_size, "big") + nal
        pos += length_size + n
    return out


def write_seeds(out: Path, targets: Sequence[str] = TARGETS) -> Dict[str, Path]:
    """Seed corpora for `targets`, derived from the fixtures in tests/data (only their folders
    are rewritten, so runs of other targets can share `out`)."""
    scratch = Path(tempfile.mkdtemp(dir=out.parent if out.parent.exists() else None))
    for t in TARGETS:
        (scratch / t).mkdir()
    dirs = {t: scratch / t for t in TARGETS}
    gulp = TEST_DATA / "gulpio2"
    for meta in sorted(gulp.glob("meta_*.gmeta")):
        shutil.copy(meta, dirs["gulp_index"] / meta.name)
        data = (gulp / meta.name.replace("meta_", "data_").replace(".gmeta", ".gulp")).read_bytes()
        for vid, entry in json.loads(meta.read_text()).items():
            for k, (offset, pad, total) in enumerate(entry["frame_info"][:2]):
                jpeg = data[offset:offset + total - pad]
                # Options byte: RGB full size, gray at 1/2, RGB at 1/8 with the accurate DCT.
                for options in (0x00, 0x03, 0x0e):
                    (dirs["jpeg"] / f"{vid}_{k}_{options:02x}.bin").write_bytes(
                        bytes([options]) + jpeg)
    for ffr in sorted((TEST_DATA / "ffrecord").rglob("*.ffr")):
        shutil.copy(ffr, dirs["ffrecord"] / f"{ffr.parent.name}_{ffr.name}")
    for mp4_path in sorted((TEST_DATA / "hevc").glob("*.mp4")):
        mp4 = mp4_path.read_bytes()
        length_size, sets, sample, stsz, stco = _hevc_parts(mp4)
        small = _shrink_sample(sample, length_size)
        header = bytes([{1: 0, 2: 1, 4: 2}[length_size], len(sets)]) + b"".join(
            struct.pack(">H", len(s)) + s for s in sets)
        (dirs["hevc_annexb"] / f"{mp4_path.stem}.bin").write_bytes(header + small)
        # The fixture with its picture shrunk: ftyp, mdat with the small sample, then the
        # fixture's own moov (FFmpeg's layout) with the sample's size and offset patched.
        ftyp_end = _find_box(mp4, [b"ftyp"])[2]
        moov_begin, _, moov_end = _find_box(mp4, [b"moov"])
        moov = bytearray(mp4[moov_begin:moov_end])
        head = mp4[:ftyp_end] + struct.pack(">I", 8 + len(small)) + b"mdat" + small
        constant = struct.unpack(">I", mp4[stsz + 4:stsz + 8])[0] != 0
        struct.pack_into(">I", moov, stsz - moov_begin + (4 if constant else 12), len(small))
        struct.pack_into(">I", moov, stco - moov_begin + 8, len(head) - len(small))
        (dirs["mp4"] / mp4_path.name).write_bytes(head + bytes(moov))
    result = {}
    for t in targets:
        final = out / t
        shutil.rmtree(final, ignore_errors=True)
        final.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(dirs[t]), str(final))
        result[t] = final
    shutil.rmtree(scratch, ignore_errors=True)
    return result


# ---------------------------------------------------------------------------------------------
# Running

@dataclass
class Result:
    target: str
    executions: int = 0
    seconds: float = 0.0
    crashed: bool = False
    returncode: int = 0
    crash_files: List[str] = field(default_factory=list)
    corpus_size: int = 0
    log_tail: str = ""


def _parse_stats(log: str) -> int:
    m = re.search(r"stat::number_of_executed_units:\s*(\d+)", log)
    if m:
        return int(m.group(1))
    m = re.findall(r"Done (\d+) runs", log)
    return int(m[-1]) if m else 0


def fuzz_one(binary: Path, target: str, out: Path, seeds: Path, seconds: Optional[int],
             runs: Optional[int], extra: Sequence[str] = ()) -> Result:
    """One libFuzzer run of `target` (one process, -jobs=1); its corpus persists in `out`."""
    corpus = out / "corpus" / target
    crashes = out / "crashes" / target
    corpus.mkdir(parents=True, exist_ok=True)
    crashes.mkdir(parents=True, exist_ok=True)
    regressions = REGRESSION_DIR / target
    dirs = [str(corpus), str(seeds)] + ([str(regressions)] if regressions.is_dir() else [])
    cmd = [str(binary), f"-artifact_prefix={crashes}/", "-print_final_stats=1", "-timeout=25",
           "-rss_limit_mb=2560", "-max_len=65536"]
    if seconds is not None:
        cmd.append(f"-max_total_time={seconds}")
    if runs is not None:
        cmd.append(f"-runs={runs}")
    cmd += list(extra) + dirs
    before = set(os.listdir(crashes))
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:  # the targets' scratch files
        env = dict(os.environ, TMPDIR=tmp)
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.monotonic() - start
    # libFuzzer's closing "recommended dictionary" is long and says nothing about the run.
    log = "\n".join(line for line in (proc.stdout + proc.stderr).splitlines()
                    if "# Uses:" not in line)
    new = sorted(set(os.listdir(crashes)) - before)
    return Result(target=target, executions=_parse_stats(log), seconds=round(elapsed, 1),
                  crashed=proc.returncode != 0 or bool(new), returncode=proc.returncode,
                  crash_files=[str(crashes / f) for f in new], corpus_size=len(os.listdir(corpus)),
                  log_tail=log[-6000:])


def replay(binary: Path, target: str, seeds: Path) -> Result:
    """Every seed and regression input through `target` once (libFuzzer's file mode)."""
    files = sorted(seeds.iterdir())
    regressions = REGRESSION_DIR / target
    if regressions.is_dir():
        files += sorted(p for p in regressions.iterdir() if p.is_file())
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([str(binary), *map(str, files)], capture_output=True, text=True,
                              env=dict(os.environ, TMPDIR=tmp))
    log = proc.stdout + proc.stderr
    return Result(target=target, executions=len(files), seconds=round(time.monotonic() - start, 1),
                  crashed=proc.returncode != 0, returncode=proc.returncode, log_tail=log[-6000:])


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("build", "seeds", "run", "replay"))
    parser.add_argument("targets", nargs="*", default=list(TARGETS), help=f"of {TARGETS}")
    parser.add_argument("--out", type=Path, default=REPO / "build" / "fuzz")
    parser.add_argument("--seconds", type=int, default=None, help="per target (-max_total_time)")
    parser.add_argument("--runs", type=int, default=None, help="per target (-runs)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="compilers at once while building (fuzzing is one process)")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.epilog = "Arguments after -- go to each target (e.g. -- -max_len=4096 -dict=x)."
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    unknown = [t for t in args.targets if t not in TARGETS]
    if unknown:
        parser.error(f"unknown targets {unknown}; targets: {TARGETS}")
    why = clang_missing()
    if why:
        print(f"fuzz: {why}", file=sys.stderr)
        return 2
    binaries = build(args.out, args.targets, args.jobs)
    if args.command == "build":
        for t, b in binaries.items():
            print(f"{t}: {b}")
        return 0
    seeds = write_seeds(args.out / "seeds", args.targets)
    if args.command == "seeds":
        return 0
    if args.command == "run" and args.seconds is None and args.runs is None:
        args.seconds = 60
    results = []
    for t in args.targets:
        if args.command == "run":
            r = fuzz_one(binaries[t], t, args.out, seeds[t], args.seconds, args.runs, extra)
        else:
            r = replay(binaries[t], t, seeds[t])
        results.append(r)
        status = f"CRASH (exit {r.returncode}) {' '.join(r.crash_files)}" if r.crashed else "ok"
        corpus = f", corpus {r.corpus_size}" if args.command == "run" else ""
        print(f"{t}: {r.executions} executions in {r.seconds} s{corpus}: {status}", flush=True)
        if r.crashed:
            print(r.log_tail, file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in results], indent=2) + "\n")
    return 1 if any(r.crashed for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
