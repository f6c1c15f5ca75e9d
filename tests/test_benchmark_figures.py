"""Every performance figure in README.md and docs/ comes from a committed results JSON: each
`<!-- figures NAME -->` block is what bench/figures.py renders from bench/results/NAME.json (so
every figure equals its JSON value rounded as printed), each JSON names its run (date, machine,
command, every round), and no measured figure is written by hand outside the blocks."""

from __future__ import annotations

import json
import pathlib
import re
import sys

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "bench"))

import figures  # noqa: E402

PAGES = figures.pages()

# What a measured figure looks like in prose: a ratio ("1.9x", "3×"; not a size like 320x240, not
# a target written "≥ 1.8x"), a rate ("746 frames/s", "2.1k records/s", "101.5 MB/s") or a cost
# per item ("506 µs").
FIGURE = re.compile(
    r"(?<!≥ )(?<![≥=\w.])\d+(?:\.\d+)?\s?[x×](?![\w\d])(?!\s*\d)"
    r"|\d[\d,.]*k?\s*(?:frames|images|records|items|img)/s\b"
    r"|\d[\d,.]*\s*(?:MB/s|GB/s|µs)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def blocks(text: str):
    return list(figures.BLOCK.finditer(text))


def test_pages_quote_figures_from_results():
    names = {m.group(2) for page in PAGES for m in blocks(page.read_text(encoding="utf-8"))}
    assert {"gulp_read", "ffrecord", "ingest", "bzna", "fused_warp", "gpu_check"} <= names, names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_block_is_its_json_rendered(page):
    for m in blocks(page.read_text(encoding="utf-8")):
        assert m.group(3) == figures.render(m.group(2)), (
            f"{page.relative_to(REPO_ROOT)}: the figures {m.group(2)} block differs from "
            f"bench/results/{m.group(2)}.json; run python3 bench/figures.py --write")


def sentence_before(text: str, end: int) -> str:
    """The start of the sentence that reaches `end` (at most 200 characters of it)."""
    return re.split(r"[.!?]\s|\n\n", text[max(0, end - 200):end])[-1]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_no_figure_outside_the_blocks(page):
    text = figures.BLOCK.sub("", page.read_text(encoding="utf-8"))
    text = FENCE.sub("", text)
    # A target is not a measurement: figures in a sentence that names its target are left alone.
    found = [m.group(0) for m in FIGURE.finditer(text)
             if "target" not in sentence_before(text, m.start())]
    assert not found, (f"{page.relative_to(REPO_ROOT)}: figures written by hand (give them from a "
                       f"results JSON through bench/figures.py, or remove them): {found}")


def test_every_quoted_json_names_its_run():
    names = {m.group(2) for page in PAGES for m in blocks(page.read_text(encoding="utf-8"))}
    for name in names:
        report = json.loads((figures.RESULTS / f"{name}.json").read_text(encoding="utf-8"))
        for key in ("date", "command", "machine"):
            assert report.get(key), (name, key)
        # Every round, not only the medians.
        assert re.search(r'"(runs|all_rounds|all_seconds|seconds|items_per_second)": [\[{]', json.dumps(report)), name


def test_rendering_rounds_as_printed(tmp_path, monkeypatch):
    # A figure off by one in its last printed digit is a difference.
    report = json.loads((figures.RESULTS / "gulp_read.json").read_text(encoding="utf-8"))
    report["results"]["GulpDataset"]["x_gulpio2"] += 0.01
    (tmp_path / "gulp_read.json").write_text(json.dumps(report))
    before = figures.render("gulp_read")
    monkeypatch.setattr(figures, "RESULTS", tmp_path)
    after = figures.render("gulp_read")
    assert before != after
    fps = report["results"]["GulpDataset"]["frames_per_s"]
    assert f"| **GulpDataset** | {fps:.0f} |" in before  # frames/s printed whole


def test_gpu_check_renders_the_decoders_memory_when_measured(tmp_path, monkeypatch):
    # Runs before the device check measured it render as before; a run that did gets its rows.
    report = json.loads((figures.RESULTS / "gpu_check.json").read_text(encoding="utf-8"))
    report_before = json.loads(json.dumps(report))
    before = figures.render("gpu_check")
    one = {"coded_size": "512x512", "surfaces": 8, "measured_mib": 9.0, "estimate_mib": 6.0}
    report["device_check"]["phases"]["runtime"]["decoder_memory"] = {
        "one_session_512x512": one, "one_session_largest": dict(one, coded_size="1024x1024",
                                                                 measured_mib=31.5)}
    (tmp_path / "gpu_check.json").write_text(json.dumps(report))
    monkeypatch.setattr(figures, "RESULTS", tmp_path)
    after = figures.render("gpu_check")
    if "decoder_memory" not in json.dumps(report_before):
        assert "device memory of one decode session" not in before
    assert ("| device memory of one decode session, 512x512 (coded 512x512, 8 surfaces) | "
            "9.0 MiB measured, 6.0 MiB estimated (docs/gpu.md, GPU memory) |") in after
    assert "the data's largest picture (coded 1024x1024, 8 surfaces) | 31.5 MiB measured" in after
    assert after.index("decode session, 512x512") < after.index("device check exit status")


def test_targets_are_not_figures(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("Against the target of 10,000 images/s, and 2x with two engines.\n\n"
                    "Measured 3.33x.\n")
    monkeypatch.setitem(globals(), "REPO_ROOT", tmp_path)
    with pytest.raises(AssertionError, match=r"\['3.33x'\]"):
        test_no_figure_outside_the_blocks(page)


def test_the_figure_pattern():
    for hand_typed in ("1.9x gulpio2", "(3.33x)", "about 3x zlib's", "746 frames/s",
                       "2.1k records/s", "101.5 MB/s", "506 µs", "is 2.0×."):
        assert FIGURE.search(hand_typed), hand_typed
    for not_a_figure in ("320x240", "16384 x 8192", "target ≥ 1.8x", "a 3.7 MB clip",
                         "x265", "0x1f"):
        assert not FIGURE.search(not_a_figure), not_a_figure
