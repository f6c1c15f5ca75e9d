"""The docs' references hold: every link between pages (and to a heading of a page) leads somewhere,
every `docs/<page>.md` named in the code exists, and what docs/design.md says about error codes is
what tf_gulp/ops/framework/core_status.h does."""

from __future__ import annotations

import os
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "cc" / "gpu" / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
# Where code names a page: comments, docstrings, messages, build files.
CODE_DIRS = ("cc", "tf_gulp", "tests", "bench", "tools", "examples")
CODE_FILES = ("BUILD", "setup.py", "Makefile", "build_config.bzl")
CODE_SUFFIXES = {".h", ".cc", ".cu", ".py", ".sh", ".bzl", ".txt", ".md", ""}

LINK = re.compile(r"\]\(([^)\s]+)\)")
DOC_NAMED = re.compile(r"\bdocs/([\w.-]+\.md)(#[\w-]+)?")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: pathlib.Path) -> set:
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)  # a '# comment' in code is no heading
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.*)$", text, re.M)}


def broken_links(page: pathlib.Path) -> list:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no {dest.relative_to(ROOT) if ROOT in dest.parents else dest}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_between_pages_lead_somewhere(page):
    assert page.exists(), page
    assert broken_links(page) == [], page.relative_to(ROOT)


def code_files():
    for name in CODE_FILES:
        if (ROOT / name).exists():
            yield ROOT / name
    for top in CODE_DIRS:
        for folder, dirs, files in os.walk(ROOT / top):
            dirs[:] = [d for d in dirs if d not in ("data", "__pycache__", "third_party")]
            for f in files:
                path = pathlib.Path(folder) / f
                if path.suffix in CODE_SUFFIXES:
                    yield path


def test_pages_named_in_the_code_exist():
    named = 0
    missing = []
    for path in code_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for m in DOC_NAMED.finditer(text):
            named += 1
            page = ROOT / "docs" / m.group(1)
            where = f"{path.relative_to(ROOT)}: docs/{m.group(1)}{m.group(2) or ''}"
            if not page.exists():
                missing.append(where)
            elif m.group(2) and m.group(2)[1:] not in anchors(page):
                missing.append(where + " (no such heading)")
    assert named > 10  # the walk found the code
    assert missing == []


def test_the_check_finds_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other\n\n## A heading\n", encoding="utf-8")
    page.write_text("[ok](other.md#a-heading) [gone](formats.md) [no anchor](other.md#b)\n"
                    "```bash\n# not a heading\n```\n", encoding="utf-8")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert [b.split(":")[0] for b in broken_links(page)] == ["formats.md", "other.md#b"]
    finally:
        ROOT = saved


def core_status_mapping() -> dict:
    """tfg::StatusCode name -> tf.errors name: status.h's code list, kept by
    core_status.h except where it converts a code to another."""
    codes = (ROOT / "cc" / "util" / "status.h").read_text(encoding="utf-8")
    glue = (ROOT / "tf_gulp" / "ops" / "framework" / "core_status.h").read_text(encoding="utf-8")
    mapping = {code: code for code in re.findall(r"^  X\(k(\w+), \d+, \w+\)", codes, re.M)}
    for code, error in re.findall(r"code\(\) == tfg::StatusCode::k(\w+)\) return absl::(\w+)Error\(",
                                  glue):
        mapping[code] = error
    return mapping


def test_design_md_states_the_error_code_mapping_of_core_status_h():
    mapping = core_status_mapping()
    assert len(mapping) == 7 and mapping["OutOfRange"] == "InvalidArgument"  # the one not kept
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `k(\w+)` \| `(\w+)Error` \|", design, re.M))
    assert rows == mapping, "docs/design.md's table of tfg::StatusCode -> tf.errors"
