"""bench/plot_results.py regenerates the docs' benchmark plots from the committed results JSON."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import re

import pytest

pytest.importorskip("matplotlib", reason="matplotlib (requirements-dev.txt) draws the plots")

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "bench" / "results"

_spec = importlib.util.spec_from_file_location("tf_gulp_plot_results",
                                               REPO_ROOT / "bench" / "plot_results.py")
plot_results = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plot_results)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_plots_every_committed_result(tmp_path):
    assert plot_results.main(["--results", str(RESULTS), "--out", str(tmp_path)]) == 0
    for name, (json_name, png_name, _plot) in plot_results.PLOTS.items():
        assert (RESULTS / json_name).exists(), f"{json_name} is not committed"
        png = tmp_path / png_name
        assert png.read_bytes()[:8] == PNG_MAGIC, name
        assert png.stat().st_size > 10_000, name  # a drawn chart, not an empty canvas


def test_committed_results_say_where_they_come_from():
    for json_name, _png, _plot in plot_results.PLOTS.values():
        report = json.loads((RESULTS / json_name).read_text(encoding="utf-8"))
        provenance = report.get("provenance")
        if provenance is None:  # a benchmark's own output carries its date and command
            assert report.get("date"), json_name
            continue
        assert provenance.get("source") and provenance.get("command"), json_name


def test_docs_show_the_plots():
    docs = {"gulp_read.png": "benchmarks.md", "ffrecord.png": "ffrecord.md",
            "bzna.png": "benzina.md", "ingest.png": "ingest.md",
            "fused_warp.png": "benchmarks.md"}
    for png, doc in docs.items():
        text = (REPO_ROOT / "docs" / doc).read_text(encoding="utf-8")
        assert re.search(r"!\[[^\]]*\]\(images/" + re.escape(png) + r"\)", text), (doc, png)
        assert (REPO_ROOT / "docs" / "images" / png).exists(), png


def test_figures_match_the_gulp_table():
    # The plot's data is the table's: GulpDataset's frames/s in docs/benchmarks.md.
    report = json.loads((RESULTS / "gulp_read.json").read_text(encoding="utf-8"))
    text = (REPO_ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    row = re.search(r"^\| \*\*GulpDataset\*\* \| (\d+) \|", text, re.M)
    assert row and float(row.group(1)) == report["results"]["GulpDataset"]["frames_per_s"]


def test_wrong_json_is_a_clear_error(tmp_path):
    (tmp_path / "bzna.json").write_text(json.dumps({"results": []}))
    with pytest.raises(SystemExit, match=r"bzna\.json: not the JSON bench/bench_bzna\.py writes"):
        plot_results.main(["--results", str(tmp_path), "--out", str(tmp_path), "--only", "bzna"])
    assert plot_results.main(["--results", str(tmp_path / "none"), "--out", str(tmp_path)]) == 1
