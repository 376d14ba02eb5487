"""Interactive figures of the report as plain plotly.js specifications (dicts).

Each builder returns ``{"data": [...], "layout": {...}}`` ready for
``Plotly.newPlot``; no plotly Python objects are needed (the report only inlines the
plotly.js bundle). Traces that hold one point per surveyed head carry
``meta == "heads"``; the page counts their points after plotting.

Examples
--------
>>> from qkforms.report.figures import tetrahedron_frame
>>> traces = tetrahedron_frame()
>>> [t["name"] for t in traces]
['edges of Δ₃', 'empty edge c–d (open)', 'Θ (rank-one profiles)', 'vertices']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms.report.geometry import (
    EDGES,
    EMPTY_EDGE,
    VERTEX_LABELS,
    VERTICES,
    limit_curve,
    theta_polyline,
    to_xyz,
)
from qkforms.stats.table import Table

__all__ = [
    "TYPE_COLOURS",
    "face_figure",
    "heatmap_figures",
    "histogram_figures",
    "rope_figure",
    "spectra_figure",
    "tetrahedron_figure",
    "tetrahedron_frame",
]

TYPE_COLOURS = {"I+": "#d62728", "II": "#2ca02c", "I-": "#1f77b4"}
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39")


def _f(col: Any) -> NDArray[np.float64]:
    return np.asarray([np.nan if v is None else float(v) for v in col], dtype=np.float64)


def _fmt(v: float, digits: int = 4) -> str:
    return "–" if v is None or not np.isfinite(v) else f"{v:.{digits}g}"


def _hover(heads: Table) -> list[str]:
    out = []
    g = {k: _f(heads[k]) for k in ("a", "b", "c", "d", "sym_energy", "pairing", "rho",
                                    "theta_dist", "participation_ratio")}
    types = heads.get("type_radius")
    for i in range(len(heads)):
        t = "" if types is None else f"<br>type (r = 0.02): {types[i]}"
        out.append(
            f"<b>{heads['model'][i]}</b> L{int(heads['layer'][i])} H{int(heads['head'][i])}"
            f"<br>(a, b, c, d) = ({_fmt(g['a'][i], 3)}, {_fmt(g['b'][i], 3)}, "
            f"{_fmt(g['c'][i], 3)}, {_fmt(g['d'][i], 3)})"
            f"<br>𝒮 = {_fmt(g['sym_energy'][i])}, 𝒫 = {_fmt(g['pairing'][i])}, "
            f"ρ = {_fmt(g['rho'][i])}"
            f"<br>dist to Θ = {_fmt(g['theta_dist'][i])}, PR = "
            f"{_fmt(g['participation_ratio'][i])}{t}"
        )
    return out


def _layer_colour(heads: Table) -> tuple[NDArray[np.float64], str]:
    layers = _f(heads["layer"])
    models = np.asarray([str(m) for m in heads["model"]])
    names = list(dict.fromkeys(models.tolist()))
    if len(names) == 1:
        return layers, "layer"
    depth = np.zeros_like(layers)
    for m in names:
        mask = models == m
        top = np.nanmax(layers[mask])
        depth[mask] = layers[mask] / top if top > 0 else 0.0
    return depth, "relative depth"


def _line(points: NDArray[np.float64]) -> dict[str, list[Any]]:
    return {"x": points[:, 0].tolist(), "y": points[:, 1].tolist(), "z": points[:, 2].tolist()}


def tetrahedron_frame() -> list[dict[str, Any]]:
    """Edges of Δ₃ (c–d dashed), Θ and the vertex labels as scatter3d traces.

    Examples
    --------
    >>> tetrahedron_frame()[1]["line"]["dash"]
    'dash'
    """
    pts: list[list[float | None]] = []
    for i, j in EDGES:
        pts += [VERTICES[i].tolist(), VERTICES[j].tolist(), [None, None, None]]
    arr = np.asarray(pts, dtype=object)
    edges = {"type": "scatter3d", "mode": "lines", "name": "edges of Δ₃",
             "x": arr[:, 0].tolist(), "y": arr[:, 1].tolist(), "z": arr[:, 2].tolist(),
             "line": {"color": "#444", "width": 3}, "hoverinfo": "skip"}
    i, j = EMPTY_EDGE
    empty = {"type": "scatter3d", "mode": "lines", "name": "empty edge c–d (open)",
             **_line(VERTICES[[i, j]]),
             "line": {"color": "#888", "width": 4, "dash": "dash"},
             "hovertext": "open edge c–d: no form has b = 0 with c, d > 0 (Theorem 4)",
             "hoverinfo": "text"}
    th = to_xyz(theta_polyline(41))
    theta = {"type": "scatter3d", "mode": "lines", "name": "Θ (rank-one profiles)",
             **_line(th), "line": {"color": "#e31a1c", "width": 7},
             "hovertext": "Θ = {a = b, cd = 0}: profiles of rank-one forms (Proposition 4)",
             "hoverinfo": "text"}
    labels = {"type": "scatter3d", "mode": "text", "name": "vertices",
              **_line(VERTICES * 1.12), "text": list(VERTEX_LABELS),
              "textfont": {"size": 13}, "hoverinfo": "skip", "showlegend": False}
    return [edges, empty, theta, labels]


def _visibility_menu(groups: Sequence[tuple[str, Sequence[bool]]], x: float = 0.0,
                     y: float = 1.12) -> dict[str, Any]:
    return {
        "type": "dropdown", "direction": "down", "x": x, "y": y, "xanchor": "left",
        "yanchor": "top", "showactive": True,
        "buttons": [{"label": label, "method": "restyle", "args": [{"visible": list(vis)}]}
                    for label, vis in groups],
    }


def _type_traces(heads: Table, xyz: NDArray[np.float64],
                 hover: list[str]) -> list[dict[str, Any]]:
    """The heads of each spectral type (radius rule), one hidden trace per type."""
    types = np.asarray([str(t) for t in heads.get("type_radius", ["II"] * len(heads))])
    type_traces = []
    for t, col in TYPE_COLOURS.items():
        mask = types == t
        type_traces.append({
            "type": "scatter3d", "mode": "markers", "name": f"Type {t} (r = 0.02)",
            "meta": "heads", "visible": False, **_line(xyz[mask]),
            "text": [h for h, k in zip(hover, mask, strict=True) if k], "hoverinfo": "text",
            "marker": {"size": 3, "color": col, "opacity": 0.85},
        })
    return type_traces


def _model_traces(heads: Table, xyz: NDArray[np.float64],
                  hover: list[str]) -> list[dict[str, Any]]:
    """The heads of each model, one hidden trace per model."""
    models = np.asarray([str(m) for m in heads["model"]])
    model_traces = []
    for k, m in enumerate(dict.fromkeys(models.tolist())):
        mask = models == m
        model_traces.append({
            "type": "scatter3d", "mode": "markers", "name": m, "meta": "heads",
            "visible": False, **_line(xyz[mask]),
            "text": [h for h, keep in zip(hover, mask, strict=True) if keep],
            "hoverinfo": "text",
            "marker": {"size": 3, "color": _PALETTE[k % len(_PALETTE)], "opacity": 0.85},
        })
    return model_traces


def tetrahedron_figure(heads: Table, baseline: Table | None = None) -> dict[str, Any]:
    """The 3-simplex of head profiles: colour by layer, spectral type or model.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import Head
    >>> from qkforms.stats import observations
    >>> from qkforms.stats.synthetic_rows import survey_rows
    >>> rng = np.random.default_rng(0)
    >>> h, s = survey_rows("toy", [Head(*rng.standard_normal((2, 2, 12))) for _ in range(4)],
    ...                    heads_per_layer=2)
    >>> t = observations(h, s, n_boot=0, fits=False)
    >>> fig = tetrahedron_figure(t["head_stats"], t["baseline_heads"])
    >>> sum(len(tr["x"]) for tr in fig["data"] if tr.get("meta") == "heads" and
    ...     tr.get("visible", True) is True)
    4
    """
    frame = tetrahedron_frame()
    prof = np.stack([_f(heads[k]) for k in ("a", "b", "c", "d")], axis=1)
    xyz = to_xyz(prof)
    hover = _hover(heads)
    colour, colour_title = _layer_colour(heads)
    data: list[dict[str, Any]] = list(frame)
    base_n = len(data)
    data.append({
        "type": "scatter3d", "mode": "markers", "name": "heads (by layer)", "meta": "heads",
        **_line(xyz), "text": hover, "hoverinfo": "text",
        "marker": {"size": 3, "color": colour.tolist(), "colorscale": "Viridis",
                   "colorbar": {"title": {"text": colour_title}, "x": 1.02, "len": 0.6},
                   "opacity": 0.85},
    })
    type_traces = _type_traces(heads, xyz, hover)
    data += type_traces
    model_traces = _model_traces(heads, xyz, hover)
    data += model_traces
    if baseline is not None and len(baseline):
        bprof = np.stack([_f(baseline[k]) for k in ("a", "b", "c", "d")], axis=1)
        data.append({
            "type": "scatter3d", "mode": "markers", "name": "Gaussian baseline",
            "meta": "baseline", "visible": "legendonly", **_line(to_xyz(bprof)),
            "hoverinfo": "skip", "marker": {"size": 2, "color": "#000", "opacity": 0.4},
        })
    n_total = len(data)
    fixed = [True] * base_n

    def vis(kind: str) -> list[Any]:
        v: list[Any] = list(fixed)
        v.append(kind == "layer")
        v += [kind == "type"] * len(type_traces)
        v += [kind == "model"] * len(model_traces)
        if len(v) < n_total:
            v.append("legendonly")
        return v

    layout = {
        "title": {"text": "Profiles of the heads in the 3-simplex Δ₃"},
        "height": 640, "margin": {"l": 0, "r": 0, "t": 60, "b": 0},
        "scene": {"xaxis": {"visible": False}, "yaxis": {"visible": False},
                  "zaxis": {"visible": False}, "aspectmode": "data",
                  "camera": {"eye": {"x": 1.6, "y": -1.4, "z": 0.9}}},
        "legend": {"x": 0.0, "y": 0.0, "bgcolor": "rgba(255,255,255,0.6)"},
        "updatemenus": [_visibility_menu([("colour: layer", vis("layer")),
                                          ("colour: spectral type", vis("type")),
                                          ("colour: model", vis("model"))])],
    }
    return {"data": data, "layout": layout}


def face_figure(heads: Table, baseline: Table | None = None) -> dict[str, Any]:
    """The face Δ = {a = 0}: symmetric profiles, the Theorem 5 limit, the empty edge.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import Head
    >>> from qkforms.stats import observations
    >>> from qkforms.stats.synthetic_rows import survey_rows
    >>> rng = np.random.default_rng(0)
    >>> h, s = survey_rows("toy", [Head(*rng.standard_normal((2, 2, 12))) for _ in range(4)],
    ...                    heads_per_layer=2)
    >>> t = observations(h, s, n_boot=0, fits=False)
    >>> [tr["type"] for tr in face_figure(t["head_stats"])["data"]][:2]
    ['scatterternary', 'scatterternary']
    """
    bs, cs, ds = (_f(heads[k]) for k in ("b_S", "c_S", "d_S"))
    colour, colour_title = _layer_colour(heads)
    curve = limit_curve(301)
    data: list[dict[str, Any]] = [
        {"type": "scatterternary", "mode": "lines", "name": "Theorem 5 limit (ρ from 0 to ∞)",
         "a": curve[:, 0].tolist(), "b": curve[:, 1].tolist(), "c": curve[:, 2].tolist(),
         "line": {"color": "#e31a1c", "width": 4}, "hoverinfo": "skip"},
        {"type": "scatterternary", "mode": "lines", "name": "empty edge c–d (open)",
         "a": [0, 0], "b": [1, 0], "c": [0, 1],
         "line": {"color": "#888", "width": 3, "dash": "dash"}, "hoverinfo": "skip"},
        {"type": "scatterternary", "mode": "markers", "name": "heads (symmetric profile)",
         "meta": "heads", "a": bs.tolist(), "b": cs.tolist(), "c": ds.tolist(),
         "text": _hover(heads), "hoverinfo": "text",
         "marker": {"size": 4, "color": colour.tolist(), "colorscale": "Viridis",
                    "colorbar": {"title": {"text": colour_title}}, "opacity": 0.8}},
    ]
    if baseline is not None and len(baseline):
        data.append({"type": "scatterternary", "mode": "markers", "name": "Gaussian baseline",
                     "visible": "legendonly", "a": _f(baseline["b_S"]).tolist(),
                     "b": _f(baseline["c_S"]).tolist(), "c": _f(baseline["d_S"]).tolist(),
                     "hoverinfo": "skip", "marker": {"size": 3, "color": "#000",
                                                     "opacity": 0.4}})
    layout = {
        "title": {"text": "Face Δ = {a = 0}: symmetric profiles (b_S, c_S, d_S)"},
        "height": 560,
        "ternary": {"sum": 1, "aaxis": {"title": {"text": "b"}},
                    "baxis": {"title": {"text": "c"}}, "caxis": {"title": {"text": "d"}}},
        "legend": {"x": 0.0, "y": 1.0},
    }
    return {"data": data, "layout": layout}


def _grid(rows: Table, stat: str, model: str, n_heads: int | None = None) -> list[list[Any]]:
    models = np.asarray([str(m) for m in rows["model"]])
    mask = models == model
    layers = _f(rows["layer"])[mask].astype(int)
    heads = _f(rows["head"])[mask].astype(int)
    vals = _f(rows[stat])[mask]
    if not layers.size:
        return []
    width = int(max(heads.max() + 1, n_heads or 0))
    z = np.full((layers.max() + 1, width), np.nan)
    z[layers, heads] = vals
    return [[None if not np.isfinite(v) else float(v) for v in row] for row in z]


def heatmap_figures(heads: Table, baseline: Table) -> list[dict[str, Any]]:
    """Layer × head heat maps of three statistics, trained next to the Gaussian baseline.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import Head
    >>> from qkforms.stats import observations
    >>> from qkforms.stats.synthetic_rows import survey_rows
    >>> rng = np.random.default_rng(0)
    >>> h, s = survey_rows("toy", [Head(*rng.standard_normal((2, 2, 12))) for _ in range(4)],
    ...                    heads_per_layer=2)
    >>> t = observations(h, s, n_boot=0, fits=False)
    >>> figs = heatmap_figures(t["head_stats"], t["baseline_heads"])
    >>> [f["id"] for f in figs]
    ['heatmap-sym_energy', 'heatmap-pairing', 'heatmap-theta_dist']
    >>> len(figs[0]["data"][0]["z"]), len(figs[0]["data"][0]["z"][0])  # layers x heads
    (2, 2)
    """
    figs = []
    models = list(dict.fromkeys(str(m) for m in heads["model"]))
    stats = (("sym_energy", "symmetric energy 𝒮 = 1 − a"), ("pairing", "pairing score 𝒫"),
             ("theta_dist", "distance to Θ"))
    for stat, title in stats:
        allv = np.concatenate([_f(heads[stat]), _f(baseline[stat]) if len(baseline) else []])
        allv = allv[np.isfinite(allv)]
        zmin = float(np.quantile(allv, 0.01)) if allv.size else 0.0
        zmax = float(np.quantile(allv, 0.99)) if allv.size else 1.0
        data = []
        for k, m in enumerate(models):
            show = k == 0
            data.append({"type": "heatmap", "z": _grid(heads, stat, m), "coloraxis": "coloraxis",
                         "name": f"{m} (trained)", "visible": show, "xaxis": "x",
                         "yaxis": "y",
                         "hovertemplate": "layer %{y}, head %{x}: %{z:.4g}<extra>trained</extra>"})
            bz = _grid(baseline, stat, m) if len(baseline) else []
            data.append({"type": "heatmap", "z": bz, "coloraxis": "coloraxis",
                         "name": f"{m} (baseline)", "visible": show, "xaxis": "x2",
                         "yaxis": "y2",
                         "hovertemplate": "layer %{y}, head %{x}: %{z:.4g}<extra>baseline</extra>"})
        buttons = []
        for k, m in enumerate(models):
            vis = [j // 2 == k for j in range(len(data))]
            buttons.append({"label": m, "method": "restyle", "args": [{"visible": vis}]})
        layout = {
            "title": {"text": f"{title}: trained heads (left) and Gaussian baseline (right)"},
            "height": 460,
            "xaxis": {"domain": [0.0, 0.45], "title": {"text": "head"}},
            "yaxis": {"title": {"text": "layer"}, "autorange": "reversed"},
            "xaxis2": {"domain": [0.55, 1.0], "title": {"text": "head"}, "anchor": "y2"},
            "yaxis2": {"anchor": "x2", "autorange": "reversed"},
            "coloraxis": {"colorscale": "Viridis", "cmin": zmin, "cmax": zmax,
                          "colorbar": {"title": {"text": stat}}},
            "updatemenus": [{"type": "dropdown", "x": 0.0, "y": 1.18, "xanchor": "left",
                             "buttons": buttons}] if len(models) > 1 else [],
        }
        figs.append({"id": f"heatmap-{stat}", "data": data, "layout": layout})
    return figs


#: the statistics of the histogram section: (column, title)
HISTOGRAM_STATS = (("sym_energy", "symmetric energy 𝒮"), ("pairing", "pairing score 𝒫"),
                   ("theta_dist", "distance to Θ"), ("b_minus_a", "b − a"))


def histogram_figures(heads: Table, baseline: Table) -> list[dict[str, Any]]:
    """Histograms of head statistics, trained vs Gaussian baseline (all models pooled).

    Trained heads and the baseline get separate panels on one x axis, each with its own
    density scale (the baseline concentrates in a narrow spike that would flatten the
    trained heads' histogram on a shared scale); a dashed line marks the baseline's
    median in both.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import Head
    >>> from qkforms.stats import observations
    >>> from qkforms.stats.synthetic_rows import survey_rows
    >>> rng = np.random.default_rng(0)
    >>> h, s = survey_rows("toy", [Head(*rng.standard_normal((2, 2, 12))) for _ in range(4)],
    ...                    heads_per_layer=2)
    >>> t = observations(h, s, n_boot=0, fits=False)
    >>> len(histogram_figures(t["head_stats"], t["baseline_heads"]))
    4
    """
    figs = []
    for stat, title in HISTOGRAM_STATS:
        trained = _clean(_f(heads[stat]))
        data: list[dict[str, Any]] = [{
            "type": "histogram", "x": trained, "name": "trained heads", "nbinsx": 60,
            "histnorm": "probability density", "marker": {"color": "#1f77b4"},
            "xaxis": "x", "yaxis": "y"}]
        layout: dict[str, Any] = {
            "title": {"text": title}, "height": 420, "bargap": 0.02,
            "xaxis": {"title": {"text": stat}, "anchor": "y2"},
            "yaxis": {"title": {"text": "trained: density"}, "domain": [0.45, 1.0]},
            "legend": {"orientation": "h", "y": 1.12}}
        if len(baseline) and stat in baseline:
            base = _clean(_f(baseline[stat]))
            # the baseline is a narrow spike: its own panel and scale, so that the trained
            # heads' distribution stays readable; a dashed line marks its median above
            data.append({"type": "histogram", "x": base, "name": "Gaussian baseline",
                         "nbinsx": 60, "histnorm": "probability density",
                         "marker": {"color": "#ff7f0e"}, "xaxis": "x", "yaxis": "y2"})
            layout["yaxis2"] = {"title": {"text": "baseline: density"},
                                "domain": [0.0, 0.32], "anchor": "x"}
            if base:
                median = float(np.median(base))
                layout["shapes"] = [{"type": "line", "xref": "x", "yref": "paper",
                                     "x0": median, "x1": median, "y0": 0.0, "y1": 1.0,
                                     "line": {"dash": "dash", "color": "#ff7f0e",
                                              "width": 1.5}}]
        else:
            layout["yaxis"]["domain"] = [0.0, 1.0]
            layout["xaxis"]["anchor"] = "y"
        figs.append({"id": f"hist-{stat}", "data": data, "layout": layout})
    return figs


def _clean(x: NDArray[np.float64]) -> list[float]:
    return [float(v) for v in x if np.isfinite(v)]


def _representative_heads(heads: Table, per_model: int = 2) -> list[int]:
    """Per model: the head of median pairing and the head of lowest pairing."""
    models = np.asarray([str(m) for m in heads["model"]])
    pairing = _f(heads["pairing"])
    chosen: list[int] = []
    for m in dict.fromkeys(models.tolist()):
        idx = np.flatnonzero(models == m)
        order = idx[np.argsort(pairing[idx], kind="stable")]
        picks = [order[len(order) // 2], order[0]][:per_model]
        for p in picks:
            if int(p) not in chosen:
                chosen.append(int(p))
    return chosen


#: axis titles of the four spectral samples
_SAMPLE_TITLES = {"abs_eig_L": "|λ(L)|", "lambda_pos": "λ₊(S)", "lambda_neg": "|λ₋(S)|",
                  "sigma_T": "σ(T)"}


def _spectra_layout(buttons: list[dict[str, Any]], samples: Sequence[str]) -> dict[str, Any]:
    """The 2 x 2 grid of sample axes and the menu choosing the head."""
    dom = ((0.0, 0.45), (0.55, 1.0))
    layout: dict[str, Any] = {
        "title": {"text": "Spectra of representative heads with fitted families"},
        "height": 620, "barmode": "overlay",
        "updatemenus": [{"type": "dropdown", "x": 0.0, "y": 1.12, "xanchor": "left",
                         "buttons": buttons}] if buttons else [],
        "annotations": [],
    }
    for s_idx, name in enumerate(samples):
        axis = "" if s_idx == 0 else str(s_idx + 1)
        col, row = s_idx % 2, s_idx // 2
        layout[f"xaxis{axis}"] = {"domain": list(dom[col]), "anchor": f"y{axis}",
                                  "title": {"text": _SAMPLE_TITLES[name]}}
        layout[f"yaxis{axis}"] = {"domain": [0.0, 0.42] if row else [0.58, 1.0],
                                  "anchor": f"x{axis}"}
    return layout


def spectra_figure(heads: Table, spectra: Table, *, per_model: int = 2) -> dict[str, Any]:
    """Histograms of a head's four spectral samples with the fitted gengamma and lognormal.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import Head
    >>> from qkforms.stats import observations
    >>> from qkforms.stats.synthetic_rows import survey_rows
    >>> rng = np.random.default_rng(0)
    >>> h, s = survey_rows("toy", [Head(*rng.standard_normal((2, 2, 12))) for _ in range(4)],
    ...                    heads_per_layer=2)
    >>> t = observations(h, s, n_boot=0, fits=False)
    >>> fig = spectra_figure(t["head_stats"], t["head_stats"].select(
    ...     ["model", "layer", "head"]).with_column("eig_S", s["eig_S"]).with_column(
    ...     "sv_T", s["sv_T"]).with_column("abs_eig_L", s["abs_eig_L"]))
    >>> fig["id"]
    'fig-spectra'
    """
    from scipy import stats as st

    # qkforms.stats.spectral loads scipy: only when this runs
    # lazy: keeps scipy out of this module's import
    from qkforms.stats.spectral import SAMPLES, head_samples

    key = {(str(m), int(la), int(h)): i for i, (m, la, h) in
           enumerate(zip(spectra["model"], spectra["layer"], spectra["head"], strict=True))}
    choices = _representative_heads(heads, per_model)
    titles = _SAMPLE_TITLES
    data: list[dict[str, Any]] = []
    labels: list[str] = []
    groups: list[int] = []
    for c, i in enumerate(choices):
        m, la, h = str(heads["model"][i]), int(heads["layer"][i]), int(heads["head"][i])
        j = key.get((m, la, h))
        if j is None:
            continue
        samples = head_samples(spectra["eig_S"][j], spectra["sv_T"][j], spectra["abs_eig_L"][j])
        labels.append(f"{m} L{la} H{h} (𝒫 = {_fmt(float(heads['pairing'][i]), 3)})")
        for s_idx, name in enumerate(SAMPLES):
            axis = "" if s_idx == 0 else str(s_idx + 1)
            x = samples[name]
            show = c == 0
            data.append({"type": "histogram", "x": x.tolist(), "histnorm": "probability density",
                         "name": f"{titles[name]} sample", "xaxis": f"x{axis}",
                         "yaxis": f"y{axis}", "visible": show, "showlegend": s_idx == 0,
                         "marker": {"color": "#9ecae1"}, "nbinsx": 30})
            groups.append(c)
            if x.size == 0:
                continue
            grid = np.linspace(max(x.min() * 0.5, 1e-12), x.max() * 1.1, 200)
            gg_a = heads.get(f"{name}_gg_a")
            if gg_a is not None and gg_a[i] is not None and np.isfinite(float(gg_a[i])):
                pdf = st.gengamma.pdf(grid, float(gg_a[i]), float(heads[f"{name}_gg_c"][i]),
                                      scale=float(heads[f"{name}_gg_scale"][i]))
                data.append({"type": "scatter", "mode": "lines", "x": grid.tolist(),
                             "y": _clean_keep(pdf), "name": "generalized gamma",
                             "xaxis": f"x{axis}", "yaxis": f"y{axis}", "visible": show,
                             "showlegend": s_idx == 0, "line": {"color": "#d62728"}})
                groups.append(c)
                pdf = st.lognorm.pdf(grid, float(heads[f"{name}_ln_sigma"][i]),
                                     scale=float(heads[f"{name}_ln_scale"][i]))
                data.append({"type": "scatter", "mode": "lines", "x": grid.tolist(),
                             "y": _clean_keep(pdf), "name": "lognormal",
                             "xaxis": f"x{axis}", "yaxis": f"y{axis}", "visible": show,
                             "showlegend": s_idx == 0,
                             "line": {"color": "#2ca02c", "dash": "dash"}})
                groups.append(c)
    buttons = [{"label": lab, "method": "restyle",
                "args": [{"visible": [g == c for g in groups]}]} for c, lab in enumerate(labels)]
    return {"id": "fig-spectra", "data": data, "layout": _spectra_layout(buttons, SAMPLES)}


def _clean_keep(x: NDArray[np.float64]) -> list[float | None]:
    return [float(v) if np.isfinite(v) else None for v in x]


def rope_figure(model: str, profiles: NDArray[np.float64], labels: Sequence[str],
                d_values: Sequence[int]) -> dict[str, Any]:
    """Tetrahedron with a slider over the displacement d for the profiles of L(d).

    ``profiles`` has shape ``(len(d_values), heads, 4)``.

    Examples
    --------
    >>> import numpy as np
    >>> prof = np.tile([0.5, 0.5, 0.0, 0.0], (3, 2, 1))  # 3 displacements, 2 heads
    >>> fig = rope_figure("m", prof, ["h0", "h1"], [0, 1, 2])
    >>> len(fig["layout"]["sliders"][0]["steps"])
    3
    """
    frame = tetrahedron_frame()
    xyz0 = to_xyz(profiles[0])
    data = list(frame) + [{
        "type": "scatter3d", "mode": "markers", "name": f"{model}: π(L(d))",
        "meta": "rope", **_line(xyz0), "text": list(labels), "hoverinfo": "text",
        "marker": {"size": 4, "color": list(range(len(labels))), "colorscale": "Turbo"},
    }]
    idx = len(data) - 1
    steps = []
    for k, d in enumerate(d_values):
        xyz = to_xyz(profiles[k])
        steps.append({"label": str(d), "method": "restyle",
                      "args": [{"x": [xyz[:, 0].tolist()], "y": [xyz[:, 1].tolist()],
                                "z": [xyz[:, 2].tolist()]}, [idx]]})
    layout = {
        "title": {"text": f"{model}: profile of the relative form L(d) (RoPE)"},
        "height": 600, "margin": {"l": 0, "r": 0, "t": 60, "b": 0},
        "scene": {"xaxis": {"visible": False}, "yaxis": {"visible": False},
                  "zaxis": {"visible": False}, "aspectmode": "data"},
        "sliders": [{"active": 0, "currentvalue": {"prefix": "d = "}, "steps": steps}],
    }
    return {"id": f"rope-{model}", "data": data, "layout": layout}
