"""The report of a training run: trajectories on the simplex and medians against step.

The run is synthetic (:func:`qkforms.survey.synthetic_checkpoints.write_series`: Gaussian heads
pulled towards symmetric forms); the browser part runs when ``/usr/bin/chromium`` exists.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("plotly")
pytest.importorskip("pyarrow")

from qkforms.cli import main  # noqa: E402
from qkforms.report.geometry import to_xyz  # noqa: E402
from qkforms.report.training_view import medians_figure, trajectory_figure  # noqa: E402
from qkforms.stats.table import read_parquet  # noqa: E402
from qkforms.survey.synthetic_checkpoints import write_series  # noqa: E402

STEPS = [0, 5, 20, 60]
HEADS_PER_STEP = 3 * 4
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    base = tmp_path_factory.mktemp("series-report")
    run = write_series(base / "run", STEPS, n_layers=3, N=40, n=4, n_q=4, n_kv=2)
    out = base / "out"
    assert main(["survey", str(run), "--out", str(out), "--no-progress", "--no-stats"]) == 0
    assert main(["stats", str(out), "--bootstrap", "100", "--no-fits"]) == 0
    assert main(["report", str(out), "--no-png"]) == 0
    return out, (out / "report.html").read_text(encoding="utf-8")


def _specs(page: str) -> list[dict]:
    block = re.search(r'<script type="application/json" id="qk-figures">(.*?)</script>',
                      page, re.S)
    assert block is not None
    return json.loads(block.group(1).replace("<\\/", "</"))


def test_training_section_with_slider_and_medians(report: tuple[Path, str]) -> None:
    out, page = report
    assert '<section id="training">' in page
    assert "training run of 4 checkpoints (steps 0–60)" in page
    specs = {s["id"]: s for s in _specs(page)}
    traj = specs["fig-trajectory-0"]
    slider = traj["layout"]["sliders"][0]["steps"]
    assert [s["label"] for s in slider] == [str(s) for s in STEPS]
    heads = read_parquet(out / "heads.parquet")
    step = np.asarray(heads["step"])
    # each slider step moves the per-head points to that checkpoint's profiles
    for s, entry in zip(STEPS, slider, strict=True):
        sel = step == s
        want = to_xyz(np.stack([np.asarray(heads[k])[sel] for k in "abcd"], axis=1))
        got = np.stack([entry["args"][0][k][0] for k in "xyz"], axis=1)
        assert got.shape == (HEADS_PER_STEP, 3)
        np.testing.assert_allclose(got, want, atol=1e-12)  # rows are ordered layer, head
    (points,) = [t for t in traj["data"] if t.get("meta") == "series"]
    assert len(points["x"]) == HEADS_PER_STEP
    medians = [t for t in traj["data"] if "median profile" in t["name"]]
    assert len(medians) == 3 and all(len(t["x"]) == len(STEPS) for t in medians)
    med = specs["fig-medians-0"]
    visible = [t for t in med["data"] if t["visible"] is True]
    assert [t["name"] for t in visible] == ["layer 0", "layer 1", "layer 2", "all layers"]
    steps_t = read_parquet(out / "stats" / "series_steps.parquet")
    pooled = [r for r in steps_t.rows() if r["layer"] is None or r["layer"] != r["layer"]]
    assert visible[-1]["x"] == STEPS
    assert visible[-1]["y"] == pytest.approx([r["sym_energy_median"] for r in pooled])
    assert "When each quantity settles" in page and "Step 0: the random initialization" in page


def test_figure_builders_on_small_tables() -> None:
    from qkforms.stats.table import Table

    rows = Table({"model": ["r"] * 2 + ["x"], "step": [0, 3, None], "layer": [0, 0, 0],
                  "head": [0, 0, 0], "status": ["ok", "ok", "ok"], "a": [0.5, 0.2, 0.1],
                  "b": [0.5, 0.2, 0.1], "c": [0.0, 0.6, 0.8], "d": [0.0, 0.0, 0.0]})
    fig = trajectory_figure(rows, "r")
    path = next(t for t in fig["data"] if t["name"] == "paths of the heads")
    assert len(path["x"]) == 3  # two steps of one head and a break
    t = Table({"model": ["r"], "step": [0], "layer": [None], "pairing_median": [0.9]})
    assert [tr["y"] for tr in medians_figure(t, None, "r")["data"]] == [[0.9]]


@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (CI installs it)")
def test_series_report_renders_in_chromium(report: tuple[Path, str], tmp_path: Path) -> None:
    out, _ = report
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run",
             "--enable-unsafe-swiftshader", "--virtual-time-budget=20000"]
    url = (out / "report.html").resolve().as_uri()
    dom = subprocess.run([str(CHROMIUM), *flags, f"--user-data-dir={tmp_path / 'p1'}",
                          "--enable-logging=stderr", "--v=0", "--dump-dom", url],
                         capture_output=True, text=True, timeout=180, check=False)
    assert dom.returncode == 0, dom.stderr[-2000:]
    body = re.search(r"<body[^>]*>", dom.stdout)
    assert body is not None and 'data-rendered="1"' in body.group(0), body
    tag = re.search(r'<div[^>]*id="fig-trajectory-0"[^>]*>', dom.stdout)
    assert tag is not None
    assert f'data-point-count="{HEADS_PER_STEP}"' in tag.group(0)
    assert f'data-slider-steps="{len(STEPS)}"' in tag.group(0)
    assert not [line for line in dom.stderr.splitlines() if "Uncaught" in line]
    shot = tmp_path / "series.png"
    snap = subprocess.run([str(CHROMIUM), *flags, f"--user-data-dir={tmp_path / 'p2'}",
                           "--window-size=1280,1600", f"--screenshot={shot}", url],
                          capture_output=True, text=True, timeout=180, check=False)
    assert snap.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"series report screenshot: {shot}")
