"""The report page: self-contained, and its figures hold the right numbers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from report_inputs import built_report

from qkforms import profile
from qkforms.stats import read_parquet

# drawing vertices recomputed here: a regular tetrahedron A, B, C, D
V = np.array([[1.0, 1.0, 1.0], [1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]])

@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    return built_report(tmp_path_factory)


def _figures(path) -> dict[str, dict]:
    text = path.read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="qk-figures">(.*?)</script>', text, re.S)
    assert m, "figure JSON block missing"
    specs = json.loads(m.group(1).replace("<\\/", "</"))
    return {s["id"]: s for s in specs}


def _ok_heads(d):
    heads = read_parquet(d / "heads.parquet")
    return heads


def test_page_is_self_contained(report_dir) -> None:
    import plotly

    _, path, _ = report_dir
    text = path.read_text(encoding="utf-8")
    bundle = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text(
        encoding="utf-8")
    assert bundle in text  # the bundle shipped with plotly is inlined verbatim
    page = text.replace(bundle, "")
    assert "<script src" not in page and "<link" not in page
    assert not re.search(r"(src|href)=.https?://", page)  # nothing fetched from the network


def test_tetrahedron_points_theta_and_empty_edge(report_dir) -> None:
    d, path, facts = report_dir
    fig = _figures(path)["fig-tetrahedron"]
    heads = _ok_heads(d)
    visible = [t for t in fig["data"] if t.get("meta") == "heads" and t.get("visible", True)
               is True]
    assert sum(len(t["x"]) for t in visible) == facts["heads"] == len(heads)
    # every colouring shows every head exactly once
    for button in fig["layout"]["updatemenus"][0]["buttons"]:
        vis = button["args"][0]["visible"]
        shown = [t for t, v in zip(fig["data"], vis, strict=True)
                 if v is True and t.get("meta") == "heads"]
        assert sum(len(t["x"]) for t in shown) == len(heads)
    pts = np.stack([np.asarray(heads[k], float) for k in "abcd"], axis=1) @ V
    got = np.stack([visible[0][k] for k in "xyz"], axis=1)
    assert np.allclose(np.sort(got, axis=0), np.sort(pts, axis=0))
    theta = next(t for t in fig["data"] if t["name"].startswith("Θ"))
    th = np.stack([theta[k] for k in "xyz"], axis=1)
    M = (V[0] + V[1]) / 2
    assert np.allclose(th[0], V[2]) and np.allclose(th[-1], V[3])
    assert np.min(np.linalg.norm(th - M, axis=1)) < 1e-12  # passes through M
    # points of the polyline are rank-one profiles: a = b, cd = 0 (barycentric solve)
    bary = np.linalg.solve(np.vstack([V.T, np.ones(4)]), np.vstack([th.T, np.ones(len(th))])).T
    assert np.allclose(bary[:, 0], bary[:, 1]) and np.allclose(bary[:, 2] * bary[:, 3], 0)
    empty = next(t for t in fig["data"] if t["name"].startswith("empty edge"))
    assert empty["line"]["dash"] == "dash"
    ends = np.stack([empty[k] for k in "xyz"], axis=1)
    assert np.allclose(ends, V[[2, 3]])


def test_face_view_and_theorem5_curve(report_dir) -> None:
    from qkforms import accumulation_limit

    d, path, _ = report_dir
    fig = _figures(path)["fig-face"]
    heads = _ok_heads(d)
    pts = next(t for t in fig["data"] if t.get("meta") == "heads")
    assert np.allclose(pts["a"], np.asarray(heads["b_S"], float))
    assert np.allclose(pts["c"], np.asarray(heads["d_S"], float))
    curve = next(t for t in fig["data"] if t["name"].startswith("Theorem 5"))
    c = np.stack([curve["a"], curve["b"], curve["c"]], axis=1)
    assert np.allclose(c.sum(axis=1), 1.0) and np.allclose(c[:, 1] * c[:, 2], 0.0)
    assert np.allclose(c[0], [0, 1, 0]) and np.allclose(c[-1], [0, 0, 1])
    for rho in (0.25, 0.5, 0.9, 2.0):  # the worked examples of docs/theory.md §8 are on the curve
        lim = np.asarray(accumulation_limit(rho))[1:]
        assert np.min(np.linalg.norm(c - lim, axis=1)) < 0.01
    dashed = next(t for t in fig["data"] if t["name"].startswith("empty edge"))
    assert dashed["line"]["dash"] == "dash" and dashed["a"] == [0, 0]


def test_heatmaps_hold_layer_by_head_values(report_dir) -> None:
    d, path, _ = report_dir
    figs = _figures(path)
    heads = _ok_heads(d)
    fig = figs["heatmap-sym_energy"]
    trained = next(t for t in fig["data"] if t["name"] == "plain-toy (trained)")
    z = np.asarray(trained["z"], float)
    for m, la, h, v in zip(heads["model"], heads["layer"], heads["head"], heads["sym_energy"],
                           strict=True):
        if m == "plain-toy":
            assert z[la, h] == pytest.approx(v)
    base = read_parquet(d / "stats" / "baseline_heads.parquet")
    bt = next(t for t in fig["data"] if t["name"] == "plain-toy (baseline)")
    assert np.isfinite(np.asarray(bt["z"], float)).sum() == int(
        np.sum(np.asarray(base["model"]) == "plain-toy"))


def test_spectra_figure_draws_the_fitted_laws(report_dir) -> None:
    from scipy import stats

    d, path, _ = report_dir
    fig = _figures(path)["fig-spectra"]
    hs = read_parquet(d / "stats" / "head_stats.parquet")
    first = fig["layout"]["updatemenus"][0]["buttons"][0]["label"]
    m = re.match(r"(\S+) L(\d+) H(\d+)", first)
    model, layer, head = m.group(1), int(m.group(2)), int(m.group(3))
    i = next(k for k in range(len(hs)) if hs["model"][k] == model and hs["layer"][k] == layer
             and hs["head"][k] == head)
    gg = next(t for t in fig["data"] if t["name"] == "generalized gamma" and t["visible"])
    x = np.asarray(gg["x"])
    ref = stats.gengamma.pdf(x, hs["abs_eig_L_gg_a"][i], hs["abs_eig_L_gg_c"][i],
                             scale=hs["abs_eig_L_gg_scale"][i])
    assert np.allclose(np.asarray(gg["y"], float), ref)


def test_rope_slider_tracks_the_profile_of_L_d(report_dir) -> None:
    from qkforms.survey.rope import relative_form

    d, path, facts = report_dir
    fig = _figures(path)["fig-rope-0"]
    steps = fig["layout"]["sliders"][0]["steps"]
    assert [s["label"] for s in steps] == [str(k) for k in range(17)]
    trace = next(t for t in fig["data"] if t.get("meta") == "rope")
    assert len(trace["x"]) == 4
    red = facts["red"]
    for step in (0, 7):
        xyz = np.stack([steps[step]["args"][0][k][0] for k in "xyz"], axis=1)
        for j, label in enumerate(trace["text"]):
            layer, head = map(int, re.search(r"L(\d+) H(\d+)", label).groups())
            g = 3 * layer + head
            L = relative_form(red.Q_red[g], red.K_red[g], step, {"rope_base": 10000.0})
            assert np.allclose(xyz[j], np.asarray(profile(L)) @ V)
    # d = 0 is the survey's form: its profile is the head's profile
    heads = _ok_heads(d)
    k = next(i for i in range(len(heads)) if heads["model"][i] == "rope-toy")
    p0 = np.asarray([heads[c][k] for c in "abcd"]) @ V
    xyz0 = np.stack([steps[0]["args"][0][c][0] for c in "xyz"], axis=1)
    assert np.min(np.linalg.norm(xyz0 - p0, axis=1)) < 1e-9


def test_tables_and_pngs(report_dir) -> None:
    d, path, _ = report_dir
    text = path.read_text(encoding="utf-8")
    assert "Observation 1" in text and 'href="stats/observation1_balance.csv"' in text
    for name in ("simplex.png", "face.png", "heatmaps.png", "histograms.png"):
        data = (d / "figures" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_cli_report(tmp_path) -> None:
    pytest.importorskip("plotly")
    from report_inputs import write_survey

    from qkforms.cli import main

    write_survey(tmp_path)
    assert main(["report", str(tmp_path), "--no-png", "--bootstrap", "0", "--no-fits",
                 "--d-max", "2", "--rope-heads", "2"]) == 0
    assert (tmp_path / "report.html").is_file() and not (tmp_path / "figures").exists()
    assert (tmp_path / "stats" / "observations.md").is_file()


def test_every_figure_has_its_own_container(report_dir) -> None:
    _, path, _ = report_dir
    text = path.read_text(encoding="utf-8")
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids)), "duplicate element ids"
    for fid in _figures(path):
        assert re.search(rf'<div id="{re.escape(fid)}" class="fig"', text), fid
