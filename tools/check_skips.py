"""Fails a test run in which a test skipped for a reason not on the allowlist (docs/testing.md).

Bazel reports a test target PASSED when its tests skipped (pytest's skips, GoogleTest's GTEST_SKIP):
this reads the reports every test target left under bazel-testlogs/ (its JUnit XML, test.xml, and
its log, test.log), lists every skipped test with its reason, and exits 1 when one of them is not
allowed. The allowlist is short: a skip is allowed only where the machine cannot run the test
(no GPU toolchain, io_uring blocked by the container, ...), and each entry says why a user would
accept it. It is printed at the end of every run.

    python3 tools/check_skips.py [bazel-testlogs]

Standard library only: .ci/run runs it with any python3.
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Tuple


@dataclass(frozen=True)
class Allowed:
    """One allowlist entry: skips whose reason matches `pattern` (a regular expression, searched
    case-insensitively), accepted because `why`."""

    name: str
    pattern: str
    why: str


ALLOWLIST: Tuple[Allowed, ...] = (
    Allowed("needs a GPU",
            r"nvcc|CUDA toolkit|NVIDIA driver|libnvcuvid|TensorFlow sees a GPU|NVDEC is usable|nvJPEG is usable"
            r"|holds no GPU kernels",
            "the GPU code is built by the CUDA toolkit and proven on an NVIDIA GPU; CI machines "
            "have neither (the GPU machine's own run covers these; a GPU machine in turn cannot "
            "stage the 'no GPU' cases)"),
    Allowed("io_uring blocked by the container",
            r"io_uring",
            "the container's seccomp policy refuses io_uring_setup; the pread engine that "
            "replaces it is tested in the same run"),
    Allowed("reference ffrecord not installable",
            r"HFAiLab's ffrecord is not installed",
            "HFAiLab's ffrecord is on neither PyPI nor Debian (it is built from its source beside "
            "the project, docs/ffrecord.md); the files it wrote (tests/data/ffrecord) are read in "
            "every run"),
    Allowed("CPU without AVX2",
            r"this CPU has no AVX2",
            "the AVX2 colour path cannot run on such a CPU, so there is nothing to compare with "
            "the portable path, which every other colour test runs"),
)


@dataclass(frozen=True)
class Skip:
    target: str  # the Bazel test target's folder under bazel-testlogs
    test: str
    reason: str


def allowed_by(reason: str, allowlist: Sequence[Allowed] = ALLOWLIST) -> Optional[Allowed]:
    """The allowlist entry that accepts a skip for `reason`, or None."""
    for entry in allowlist:
        if re.search(entry.pattern, reason, re.IGNORECASE):
            return entry
    return None


def skips_in_xml(text: str, target: str) -> List[Skip]:
    """The skipped test cases of one JUnit XML report (pytest's --junitxml, GoogleTest's
    XML_OUTPUT_FILE): <testcase> elements with a <skipped> child, or GoogleTest's
    result="skipped"."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise ValueError(f"{target}: test.xml is not XML: {e}") from None
    found = []
    for case in root.iter("testcase"):
        skipped = case.find("skipped")
        if skipped is None and case.get("result") != "skipped":
            continue
        name = ".".join(p for p in (case.get("classname"), case.get("name")) if p)
        reason = ""
        if skipped is not None:
            reason = (skipped.get("message") or skipped.text or "").strip()
        found.append(Skip(target, name, reason))
    return found


_GTEST_SKIPPED = re.compile(r"^\[  SKIPPED \] (\S+) \(\d+ ms\)$")
_GTEST_REASON = re.compile(r"^(\S+:\d+): Skipped$")


def skips_in_gtest_log(text: str, target: str) -> List[Skip]:
    """GoogleTest's skips from its console output (for reports without XML): each
    "[  SKIPPED ] Suite.Test (N ms)" with the message printed after "file:line: Skipped"."""
    found, reason_lines, in_reason = [], [], False
    for line in text.splitlines():
        m = _GTEST_SKIPPED.match(line)
        if m:
            found.append(Skip(target, m.group(1), " ".join(reason_lines).strip()))
            reason_lines, in_reason = [], False
        elif _GTEST_REASON.match(line):
            reason_lines, in_reason = [], True
        elif line.startswith("[ RUN      ]"):
            reason_lines, in_reason = [], False
        elif in_reason:
            reason_lines.append(line.strip())
    return found


_PYTEST_SKIPPED = re.compile(r"^SKIPPED \[\d+\] ([^:]+:\d+): (.*)$")


def skips_in_pytest_log(text: str, target: str) -> List[Skip]:
    """pytest's skips from its short summary (-rs, which tests/pytest_main.py asks for):
    "SKIPPED [N] file:line: reason"."""
    return [Skip(target, m.group(1), m.group(2).strip())
            for m in map(_PYTEST_SKIPPED.match, text.splitlines()) if m]


def find_skips(testlogs: Path) -> Tuple[List[Skip], int]:
    """Every skipped test under `testlogs` and how many test targets reported. From each target's
    test.xml; from its test.log where the XML names none (a report Bazel wrote itself from the
    exit code), so that neither kind of skip goes unseen."""
    skips: List[Skip] = []
    targets = 0
    for log in sorted(testlogs.rglob("test.log")):
        folder = log.parent
        target = str(folder.relative_to(testlogs))
        targets += 1
        xml = folder / "test.xml"
        found = skips_in_xml(xml.read_text(errors="replace"), target) if xml.exists() else []
        if not found:
            text = log.read_text(errors="replace")
            found = skips_in_gtest_log(text, target) + skips_in_pytest_log(text, target)
        skips += found
    return skips, targets


def report(skips: Iterable[Skip], targets: int,
           allowlist: Sequence[Allowed] = ALLOWLIST) -> Tuple[str, bool]:
    """The text to print and whether the run passes (no skip outside the allowlist, and at least
    one test target reported)."""
    lines, refused = [], 0
    for s in skips:
        entry = allowed_by(s.reason, allowlist)
        verdict = f"allowed ({entry.name})" if entry else "NOT ALLOWED"
        refused += entry is None
        lines.append(f"  {verdict}: {s.target}: {s.test}: {s.reason or '(no reason given)'}")
    head = [f"Skipped tests in {targets} test targets' reports: {len(lines)}"]
    tail = ["Skip allowlist (tools/check_skips.py, docs/testing.md):"]
    tail += [f"  - {e.name}: reason matching /{e.pattern}/ - {e.why}" for e in allowlist]
    ok = refused == 0 and targets > 0
    if targets == 0:
        tail.append("FAILED: no test reports found (did the tests run?)")
    elif refused:
        tail.append(f"FAILED: {refused} test(s) skipped for a reason not on the allowlist; make "
                    f"them run, or add an entry a user would accept")
    return "\n".join(head + lines + tail), ok


def main(argv: Sequence[str]) -> int:
    testlogs = Path(argv[0] if argv else "bazel-testlogs")
    if not testlogs.is_dir():
        print(f"check_skips: {testlogs} is not a folder of test reports", file=sys.stderr)
        return 1
    text, ok = report(*find_skips(testlogs))
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
