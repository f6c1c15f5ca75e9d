"""The docs stay short enough to read in an evening (issue 46): word budgets per group of pages.

The split, by who reads the page:

- **User pages**: README.md and every docs/*.md not named below (the guides, one reference page per
  format, formats.md, compat.md, gpu.md, ...). A new page is a user page unless it is added to a
  list here. Together at most 20,000 words.
- **docs/design.md** (architecture, the recipe for a format, decisions and reasons; no file
  inventory, no history): at most 3,000 words.
- **docs/benchmarks.md** (per benchmark: question, method, the figures block rendered from JSON,
  a short conclusion): at most 3,000 words, the generated figures blocks included.
- **Developer pages** (building, testing, fuzzing, the wheel): read by whoever changes tf_gulp,
  not by its users; together at most 1,750 words. docs/testing.md's mutants table grows by a row
  per planted bug, so its rows are not counted here.
- **All of it**: README.md and every docs/*.md, the mutants table included, at most 26,000 words.

A word is what `wc -w` counts: a run of characters between whitespace, code blocks and tables
included (a user reads those too)."""

from __future__ import annotations

import pathlib
import re

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = REPO_ROOT / "docs"

DESIGN = "design.md"
BENCHMARKS = "benchmarks.md"
DEVELOPER_PAGES = ("building.md", "testing.md", "fuzzing.md", "wheel.md")

USER_BUDGET = 20_000
DESIGN_BUDGET = 3_000
BENCHMARKS_BUDGET = 3_000
DEVELOPER_BUDGET = 1_750
TOTAL_BUDGET = 26_000

# docs/testing.md's mutants table: its header, its rule and every row under them.
MUTANT_TABLE = re.compile(r"^\| test \| expectation from \| mutants killed \|\n\|[-| ]+\|\n(?:\|.*\n)*", re.M)


def words(text: str) -> int:
    return len(text.split())


def user_pages(docs: pathlib.Path = DOCS, readme: pathlib.Path = REPO_ROOT / "README.md"):
    others = {DESIGN, BENCHMARKS, *DEVELOPER_PAGES}
    return [readme] + sorted(p for p in docs.glob("*.md") if p.name not in others)


def developer_words(docs: pathlib.Path = DOCS) -> int:
    total = 0
    for name in DEVELOPER_PAGES:
        text = (docs / name).read_text(encoding="utf-8")
        if name == "testing.md":
            text = MUTANT_TABLE.sub("", text)
        total += words(text)
    return total


def over_budget(pages, budget: int) -> str:
    counts = {p.name: words(p.read_text(encoding="utf-8")) for p in pages}
    total = sum(counts.values())
    if total <= budget:
        return ""
    largest = sorted(counts.items(), key=lambda kv: -kv[1])[:5]
    return f"{total} words, budget {budget}; largest: {largest}"


def test_user_pages_fit_an_evening():
    pages = user_pages()
    assert len(pages) >= 10  # the glob found the guides
    assert over_budget(pages, USER_BUDGET) == ""


def test_design_md_budget():
    assert over_budget([DOCS / DESIGN], DESIGN_BUDGET) == ""


def test_benchmarks_md_budget():
    assert over_budget([DOCS / BENCHMARKS], BENCHMARKS_BUDGET) == ""


def test_developer_pages_budget():
    assert MUTANT_TABLE.search((DOCS / "testing.md").read_text(encoding="utf-8")), (
        "docs/testing.md's mutants table not found: update MUTANT_TABLE")
    total = developer_words()
    assert total <= DEVELOPER_BUDGET, f"{total} words, budget {DEVELOPER_BUDGET}"


def test_all_docs_budget():
    pages = [REPO_ROOT / "README.md"] + sorted(DOCS.glob("*.md"))
    assert len(pages) >= 15  # the glob found every page, the developer pages too
    assert over_budget(pages, TOTAL_BUDGET) == ""


def test_every_page_is_in_one_group():
    # A developer page renamed away would silently become a user page: the lists name real files.
    for name in (DESIGN, BENCHMARKS, *DEVELOPER_PAGES):
        assert (DOCS / name).is_file(), name


def test_the_budget_check_sees_a_long_page(tmp_path):
    (tmp_path / "docs").mkdir()
    readme = tmp_path / "README.md"
    readme.write_text("one two three\n", encoding="utf-8")
    (tmp_path / "docs" / "guide.md").write_text("word " * 10, encoding="utf-8")
    (tmp_path / "docs" / DESIGN).write_text("word " * 100, encoding="utf-8")  # not a user page
    pages = user_pages(tmp_path / "docs", readme)
    assert [p.name for p in pages] == ["README.md", "guide.md"]
    assert over_budget(pages, 13) == ""
    assert over_budget(pages, 12).startswith("13 words, budget 12")
