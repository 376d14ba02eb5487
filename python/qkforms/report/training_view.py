"""Figures of a training run: heads travelling on the simplex, medians against step.

* :func:`trajectory_figure`: the tetrahedron Δ₃ (the report's frame, with Θ) with the
  profiles of every head at one step and a slider over the steps (each slider step
  restyles the points), the per-layer median profile as a path through the steps, and
  (in the legend) every head's own path. When most heads (the central 90 % of all
  steps' points) fill a small part of Δ₃ the view starts zoomed in on them; buttons
  switch between that and the whole simplex.
* :func:`medians_figure`: per-layer and pooled medians of an observation quantity
  against step with their 95 % bootstrap intervals (``series_steps``), a menu choosing
  the quantity; hovering a point shows the step, tokens seen and the settling step of
  that curve (``series_settling``).

Both are plain plotly.js specifications like :mod:`qkforms.report.figures`; the
per-head trace carries ``meta == "series"`` and the page counts its points.

Examples
--------
>>> from qkforms.report.training_view import QUANTITIES
>>> QUANTITIES[0]
('sym_energy', 'symmetric energy 𝒮 = 1 − a')
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms.report.figures import tetrahedron_frame
from qkforms.report.geometry import to_xyz
from qkforms.stats.table import Table

__all__ = ["QUANTITIES", "medians_figure", "run_models", "trajectory_figure"]

#: (series_steps column stem, label) offered by the medians figure, in menu order
QUANTITIES: tuple[tuple[str, str], ...] = (
    ("sym_energy", "symmetric energy 𝒮 = 1 − a"),
    ("pairing", "pairing score 𝒫"),
    ("rho", "lobe ratio ρ"),
    ("theta_dist", "distance to Θ"),
    ("thm5_dist", "distance to the Theorem 5 limit"),
    ("dist_M", "distance to M = (½, ½, 0, 0)"),
    ("a", "profile a"),
    ("b", "profile b"),
    ("c", "profile c"),
    ("d", "profile d"),
    ("participation_ratio", "participation ratio of L"),
    ("balanced_share", "share of balanced heads"),
    ("share_I+", "share of Type I+"),
    ("share_II", "share of Type II"),
    ("share_I-", "share of Type I−"),
)
_LAYER_COLOURS = ("#440154", "#3b528b", "#21918c", "#5ec962", "#fde725", "#b5de2b",
                  "#31688e", "#482878", "#26828e", "#1f9e89", "#6ece58", "#35b779")


def _f(col: Any) -> NDArray[np.float64]:
    return np.asarray([np.nan if v is None else float(v) for v in col], dtype=np.float64)


def _null(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def run_models(heads: Table) -> list[str]:
    """The models of ``heads`` that are training runs (rows with a step), in order.

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> run_models(Table({"model": ["a", "r", "r"], "step": [None, 0, 5]}))
    ['r']
    """
    if "step" not in heads:
        return []
    steps = _f(heads["step"])
    models = [str(m) for m in heads["model"]]
    return list(dict.fromkeys(m for m, s in zip(models, steps, strict=True) if np.isfinite(s)))


def _line(p: NDArray[np.float64]) -> dict[str, list[Any]]:
    return {"x": p[:, 0].tolist(), "y": p[:, 1].tolist(), "z": p[:, 2].tolist()}


def _path_traces(xyz: NDArray[np.float64], layers: NDArray[np.int64],
                 head_ids: NDArray[np.int64], steps_col: NDArray[np.int64]) -> list[dict]:
    """Every head's path through the steps, one trace (the legend toggles it)."""
    path: list[list[float | None]] = []
    for la in sorted(set(layers.tolist())):
        for h in sorted(set(head_ids[layers == la].tolist())):
            sel = np.flatnonzero((layers == la) & (head_ids == h))
            sel = sel[np.argsort(steps_col[sel], kind="stable")]
            path += xyz[sel].tolist() + [[None, None, None]]
    if not path:
        return []
    arr = np.asarray(path, dtype=object)
    return [{"type": "scatter3d", "mode": "lines", "name": "paths of the heads",
             "visible": "legendonly", "x": arr[:, 0].tolist(), "y": arr[:, 1].tolist(),
             "z": arr[:, 2].tolist(), "hoverinfo": "skip",
             "line": {"color": "rgba(80,80,80,0.35)", "width": 2}}]


def _median_traces(prof: NDArray[np.float64], layers: NDArray[np.int64],
                   steps_col: NDArray[np.int64]) -> list[dict]:
    """The median profile of each layer, step by step (a trace per layer)."""
    steps = sorted(set(steps_col.tolist()))
    out = []
    for k, la in enumerate(sorted(set(layers.tolist()))):
        med = np.array([np.median(prof[(layers == la) & (steps_col == s)], axis=0)
                        for s in steps])
        out.append({"type": "scatter3d", "mode": "lines+markers",
                    "name": f"layer {la}: median profile", **_line(to_xyz(med)),
                    "text": [f"layer {la} median at step {s}" for s in steps],
                    "hoverinfo": "text",
                    "line": {"color": _LAYER_COLOURS[k % len(_LAYER_COLOURS)], "width": 5},
                    "marker": {"size": 3, "color": _LAYER_COLOURS[k % len(_LAYER_COLOURS)]}})
    return out


def _trajectory_layout(model: str, xyz: NDArray[np.float64],
                       slider_steps: list[dict[str, Any]]) -> dict[str, Any]:
    """The layout: a scene zoomed in on the heads when they fill a small part of the
    simplex, the slider over the steps and the whole-simplex / zoom buttons."""
    scene: dict[str, Any] = {"xaxis": {"visible": False}, "yaxis": {"visible": False},
                             "zaxis": {"visible": False}, "aspectmode": "data",
                             "camera": {"eye": {"x": 1.6, "y": -1.4, "z": 0.9}}}
    zoom = _zoom(xyz)
    if zoom and zoom["scene.xaxis.range"][1] - zoom["scene.xaxis.range"][0] < 1.0:
        # most heads fill a small part of Δ₃: start zoomed in on them
        for a in "xyz":
            scene[f"{a}axis"]["range"] = zoom[f"scene.{a}axis.range"]
        scene["aspectmode"] = "cube"
    whole: dict[str, Any] = {f"scene.{a}axis.range": None for a in "xyz"}
    whole.update({f"scene.{a}axis.autorange": True for a in "xyz"})
    whole["scene.aspectmode"] = "data"
    layout = {
        "title": {"text": f"{model}: head profiles in Δ₃ during training"},
        "height": 660, "margin": {"l": 0, "r": 0, "t": 60, "b": 0},
        "scene": scene,
        "legend": {"x": 0.0, "y": 1.0, "bgcolor": "rgba(255,255,255,0.6)"},
        "sliders": [{"active": 0, "currentvalue": {"prefix": "step "}, "pad": {"t": 10},
                     "steps": slider_steps}],
        "updatemenus": [{"type": "buttons", "direction": "right", "x": 1.0, "y": 1.08,
                         "xanchor": "right", "showactive": True, "buttons": [
                             {"label": "whole simplex", "method": "relayout", "args": [whole]},
                             {"label": "zoom to the heads", "method": "relayout",
                              "args": [zoom]}]}],
    }
    return layout


def trajectory_figure(heads: Table, model: str) -> dict[str, Any]:
    """Head profiles of one run on the simplex, with a slider over the steps.

    ``heads`` are ``heads.parquet`` rows (all steps; failed heads are skipped).

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> rows = Table({"model": ["r"] * 4, "step": [0, 0, 10, 10], "layer": [0, 1, 0, 1],
    ...               "head": [0, 0, 0, 0], "status": ["ok"] * 4,
    ...               "a": [0.5, 0.5, 0.3, 0.4], "b": [0.5, 0.5, 0.3, 0.4],
    ...               "c": [0.0, 0.0, 0.4, 0.2], "d": [0.0] * 4, "tokens_seen": [0, 0, 9, 9]})
    >>> fig = trajectory_figure(rows, "r")
    >>> [s["label"] for s in fig["layout"]["sliders"][0]["steps"]]
    ['0', '10']
    >>> sum(len(t["x"]) for t in fig["data"] if t.get("meta") == "series")
    2
    """
    models = np.asarray([str(m) for m in heads["model"]])
    status = np.asarray([str(s) for s in heads["status"]])
    rows = heads.take((models == model) & (status == "ok"))
    steps_col = _f(rows["step"]).astype(np.int64)
    layers = _f(rows["layer"]).astype(np.int64)
    head_ids = _f(rows["head"]).astype(np.int64)
    prof = np.stack([_f(rows[k]) for k in ("a", "b", "c", "d")], axis=1)
    xyz = to_xyz(prof)
    steps = sorted(set(steps_col.tolist()))
    layer_list = sorted(set(layers.tolist()))
    tokens = _f(rows["tokens_seen"]) if "tokens_seen" in rows else np.full(len(rows), np.nan)
    data: list[dict[str, Any]] = list(tetrahedron_frame())

    def frame(step: int) -> tuple[NDArray[np.float64], list[str], list[float]]:
        sel = np.flatnonzero(steps_col == step)
        order = sel[np.lexsort((head_ids[sel], layers[sel]))]
        text = [f"<b>{model}</b> step {step} L{layers[i]} H{head_ids[i]}<br>(a, b, c, d) = "
                f"({prof[i, 0]:.3f}, {prof[i, 1]:.3f}, {prof[i, 2]:.3f}, {prof[i, 3]:.3f})"
                for i in order]
        return xyz[order], text, layers[order].astype(float).tolist()

    data += _path_traces(xyz, layers, head_ids, steps_col)
    data += _median_traces(prof, layers, steps_col)
    first, text0, colour0 = frame(steps[0])
    data.append({"type": "scatter3d", "mode": "markers", "name": "heads at the chosen step",
                 "meta": "series", **_line(first), "text": text0, "hoverinfo": "text",
                 "marker": {"size": 4, "color": colour0, "colorscale": "Viridis",
                            "cmin": min(layer_list), "cmax": max(max(layer_list), 1),
                            "colorbar": {"title": {"text": "layer"}, "len": 0.6}}})
    idx = len(data) - 1
    slider_steps = []
    for s in steps:
        pts, text, colour = frame(s)
        t = tokens[steps_col == s]
        seen = f", {int(t[0])} tokens" if t.size and np.isfinite(t[0]) else ""
        slider_steps.append({
            "label": str(s), "method": "restyle",
            "args": [{"x": [pts[:, 0].tolist()], "y": [pts[:, 1].tolist()],
                      "z": [pts[:, 2].tolist()], "text": [text],
                      "marker.color": [colour]}, [idx]],
            "name": f"step {s}{seen}"})
    return {"data": data, "layout": _trajectory_layout(model, xyz, slider_steps)}


def _zoom(xyz: NDArray[np.float64]) -> dict[str, Any]:
    """Scene ranges around the central 90 % of the points of all steps (padded; Δ₃ spans
    [-1, 1]³ in these coordinates)."""
    finite = xyz[np.all(np.isfinite(xyz), axis=1)]
    if not finite.size:
        return {}
    lo, hi = np.quantile(finite, 0.05, axis=0), np.quantile(finite, 0.95, axis=0)
    half = max(0.1, 0.6 * float(np.max(hi - lo)))
    mid = (lo + hi) / 2
    out: dict[str, Any] = {f"scene.{a}axis.range": [float(mid[i] - half), float(mid[i] + half)]
                           for i, a in enumerate("xyz")}
    out["scene.aspectmode"] = "cube"
    return out


def medians_figure(steps_table: Table, settling: Table | None, model: str) -> dict[str, Any]:
    """Medians (and shares) against step, per layer and pooled, with intervals.

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> t = Table({"model": ["r"] * 4, "step": [0, 0, 5, 5], "layer": [0, None, 0, None],
    ...            "tokens_seen": [0, 0, 50, 50], "sym_energy_median": [0.5, 0.5, 0.6, 0.6],
    ...            "sym_energy_median_ci_low": [0.4] * 4,
    ...            "sym_energy_median_ci_high": [0.7] * 4})
    >>> fig = medians_figure(t, None, "r")
    >>> [tr["name"] for tr in fig["data"]], fig["data"][1]["y"]
    (['layer 0', 'all layers'], [0.5, 0.6])
    """
    mine = steps_table.take(np.asarray([str(m) == model for m in steps_table["model"]]))
    layer_vals = [None if _null(v) else int(v) for v in mine["layer"]]
    layers = sorted({v for v in layer_vals if v is not None})
    scopes: list[int | None] = [*layers, None]
    settle: dict[tuple[Any, str], Any] = {}
    if settling is not None and len(settling):
        for r in settling.rows():
            if str(r["model"]) == model:
                la = None if _null(r["layer"]) else int(r["layer"])
                settle[(la, str(r["quantity"]))] = r["settle_step"]
    data: list[dict[str, Any]] = []
    groups: list[int] = []
    available: list[tuple[str, str]] = []
    for q, label in QUANTITIES:
        col = f"{q}_median" if f"{q}_median" in mine else q
        if col not in mine:
            continue
        qi = len(available)
        available.append((q, label))
        for k, la in enumerate(scopes):
            sel = [i for i, v in enumerate(layer_vals) if v == la]
            x = [int(mine["step"][i]) for i in sel]
            y = [float(mine[col][i]) for i in sel]
            lo = mine.get(f"{col}_ci_low")
            hi = mine.get(f"{col}_ci_high")
            err = None
            if lo is not None and hi is not None:
                err = {"type": "data", "symmetric": False, "thickness": 1, "width": 2,
                       "array": [float(hi[i]) - float(mine[col][i]) for i in sel],
                       "arrayminus": [float(mine[col][i]) - float(lo[i]) for i in sel]}
            s = settle.get((la, q))
            name = "all layers" if la is None else f"layer {la}"
            tok = mine.get("tokens_seen")
            text = [f"{name}, step {xi}" + (f", {int(tok[i])} tokens" if tok is not None
                                             and not _null(tok[i]) else "")
                    + ("" if s is None or _null(s) else f"<br>settles at step {int(s)}")
                    for xi, i in zip(x, sel, strict=True)]
            colour = "#000" if la is None else _LAYER_COLOURS[k % len(_LAYER_COLOURS)]
            trace: dict[str, Any] = {
                "type": "scatter", "mode": "lines+markers", "name": name, "x": x, "y": y,
                "text": text, "hovertemplate": "%{text}<br>" + label + ": %{y:.4g}<extra></extra>",
                "visible": qi == 0, "line": {"color": colour, "width": 3 if la is None else 1.5},
                "marker": {"size": 5 if la is None else 4, "color": colour}}
            if err is not None:
                trace["error_y"] = {**err, "color": colour}
            data.append(trace)
            groups.append(qi)
    buttons = [{"label": label, "method": "update",
                "args": [{"visible": [g == qi for g in groups]},
                         {"yaxis": {"title": {"text": label}}}]}
               for qi, (_, label) in enumerate(available)]
    layout = {
        "title": {"text": f"{model}: medians against training step (95 % bootstrap intervals)"},
        "height": 460,
        "xaxis": {"title": {"text": "step"}},
        "yaxis": {"title": {"text": available[0][1] if available else ""}},
        "updatemenus": [{"type": "dropdown", "x": 0.0, "y": 1.2, "xanchor": "left",
                         "buttons": buttons}] if buttons else [],
    }
    return {"data": data, "layout": layout}
