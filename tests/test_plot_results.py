"""bench/plot_results.py regenerates the docs' benchmark plots from the committed results JSON, each
labelled with the run's date, machine and command (or marked "to be regenerated" where the JSON is
not a benchmark's own complete output)."""

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
        meta = plot_results.provenance(report)  # raises for a result that cannot say
        if "To be regenerated" not in meta:
            assert "not recorded" not in meta.values(), (json_name, meta)
            assert not (report.get("provenance") or {}).get("transcribed"), json_name


def png_text(path: pathlib.Path) -> dict:
    from PIL import Image
    with Image.open(path) as image:
        return dict(image.text)


def test_each_committed_plot_is_labelled_with_date_machine_and_command():
    # The PNGs the docs show carry what the JSON says (so they were drawn from it, after its
    # last change): date, machine and command, or why the plot is to be regenerated.
    for name, (json_name, png_name, _plot) in plot_results.PLOTS.items():
        report = json.loads((RESULTS / json_name).read_text(encoding="utf-8"))
        text = png_text(REPO_ROOT / "docs" / "images" / png_name)
        for key in ("Date", "Machine", "Command"):
            assert text.get(key), (png_name, key)
        expected = plot_results.provenance(report)
        assert {k: text.get(k) for k in expected} == expected, \
            f"{png_name} is not drawn from {json_name}: run python bench/plot_results.py"
        if "To be regenerated" not in text:
            assert "not recorded" not in text.values(), (png_name, text)


def test_a_plot_without_date_machine_or_command_is_refused(tmp_path):
    report = json.loads((RESULTS / "fused_warp.json").read_text(encoding="utf-8"))
    for key in ("date", "machine", "command"):
        broken = {k: v for k, v in report.items() if k != key}
        (tmp_path / "fused_warp.json").write_text(json.dumps(broken))
        with pytest.raises(SystemExit, match=f"fused_warp.json: no {key} recorded"):
            plot_results.main(["--results", str(tmp_path), "--out", str(tmp_path),
                               "--only", "fused_warp"])
    # Saying why it lacks them draws it, marked.
    broken["to_be_regenerated"] = "an older run"
    (tmp_path / "fused_warp.json").write_text(json.dumps(broken))
    assert plot_results.main(["--results", str(tmp_path), "--out", str(tmp_path),
                              "--only", "fused_warp"]) == 0
    text = png_text(tmp_path / "fused_warp.png")
    assert text["To be regenerated"] == "an older run; no command recorded"
    assert text["Command"] == "not recorded"


def test_a_transcribed_result_is_to_be_regenerated():
    report = {"date": "2026-01-01", "command": "x", "machine": {"cpu": "c", "cores": 2},
              "provenance": {"transcribed": True, "source": "a table"}}
    assert plot_results.provenance(report)["To be regenerated"] == \
        "figures transcribed by hand from a table"
    del report["provenance"]
    assert plot_results.provenance(report) == {"Date": "2026-01-01", "Machine": "c, 2 cores",
                                               "Command": "x"}


def test_ffrecord_cold_panels_compare_random_readers_only():
    # TFRecordDataset reads its file in order: cold, it rides the kernel's read-ahead, so beside
    # readers of random records it would compare unlike things. Warm panels keep it.
    report = json.loads((RESULTS / "ffrecord.json").read_text(encoding="utf-8"))
    rows = plot_results.ffrecord_compared(report)
    cold = {r["reader"] for r in rows if r["cache"] == "cold"}
    warm = {r["reader"] for r in rows if r["cache"] == "warm"}
    assert not any(reader.startswith("TFRecordDataset") for reader in cold), cold
    assert any(reader.startswith("TFRecordDataset") for reader in warm), warm
    assert "FFRecordDataset" in cold and "reference" in cold


def test_docs_show_the_plots():
    docs = {"gulp_read.png": "benchmarks.md", "ffrecord.png": "benchmarks.md",
            "bzna.png": "benchmarks.md", "ingest.png": "benchmarks.md",
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
    # The table rounds to whole frames/s.
    assert row and int(row.group(1)) == round(report["results"]["GulpDataset"]["frames_per_s"])


def test_wrong_json_is_a_clear_error(tmp_path):
    (tmp_path / "bzna.json").write_text(json.dumps({"results": [], "date": "d", "machine": "m",
                                                    "command": "c"}))
    with pytest.raises(SystemExit, match=r"bzna\.json: not the JSON bench/bench_bzna\.py writes"):
        plot_results.main(["--results", str(tmp_path), "--out", str(tmp_path), "--only", "bzna"])
    assert plot_results.main(["--results", str(tmp_path / "none"), "--out", str(tmp_path)]) == 1
