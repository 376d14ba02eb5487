"""The report's section "What heads do, next to what their forms are" (``docs/report.md``).

Shown when the survey directory holds ``behaviour.parquet``: the simplex of head
profiles coloured by a behaviour score (a menu chooses the score), the association
tables of :mod:`qkforms.behaviour.associations` (computed and written to
``DIR/stats/`` when missing or older than ``behaviour.parquet``), and, for RoPE models,
the rank correlation of every score with the statistics of the relative forms ``L(d)``
against ``d``.

Examples
--------
>>> from qkforms.report.behaviour_view import score_simplex
>>> from qkforms.behaviour.synthetic import joined_example
>>> fig = score_simplex(joined_example().heads)
>>> [t["name"] for t in fig["data"] if t.get("meta") == "heads"][:2]
['previous_token', 'induction']
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import numpy as np

from qkforms._fs import ensure_dir
from qkforms.behaviour.associations import ALPHA, TABLE_NAMES, behaviour_tables
from qkforms.behaviour.files import BEHAVIOUR_FILE
from qkforms.behaviour.join import GEOMETRY
from qkforms.behaviour.schema import SCORE_COLUMNS
from qkforms.behaviour.scores import CLASS_THRESHOLD
from qkforms.report.figures import _visibility_menu, tetrahedron_frame
from qkforms.report.geometry import to_xyz
from qkforms.report.html import table_html
from qkforms.stats.table import Table, read_parquet

__all__ = ["behaviour_section", "load_tables", "rope_figure", "score_simplex"]


def _f(col: Any) -> np.ndarray:
    return np.asarray([np.nan if v is None else float(v) for v in col], dtype=np.float64)


def _fmt(v: float) -> str:
    return "–" if not np.isfinite(v) else f"{v:.3g}"


def score_simplex(heads: Table) -> dict[str, Any]:
    """The tetrahedron of the joined heads' profiles, coloured by each behaviour score.

    One trace per score (menu: which one is shown); the colour scale of each runs over
    its own range. Hover: the head, its profile and every score.
    """
    frame = tetrahedron_frame()
    prof = np.stack([_f(heads[k]) for k in ("a", "b", "c", "d")], axis=1)
    xyz = to_xyz(prof) if len(heads) else np.zeros((0, 3))
    scores = {s: _f(heads[s]) for s in SCORE_COLUMNS}
    hover = []
    for i in range(len(heads)):
        text = (f"<b>{html.escape(str(heads['model'][i]))}</b> L{int(heads['layer'][i])} "
                f"H{int(heads['head'][i])}<br>(a, b, c, d) = ("
                + ", ".join(_fmt(prof[i, k]) for k in range(4)) + ")")
        text += "".join(f"<br>{s} = {_fmt(v[i])}" for s, v in scores.items())
        hover.append(text)
    data: list[dict[str, Any]] = list(frame)
    for k, (s, v) in enumerate(scores.items()):
        data.append({
            "type": "scatter3d", "mode": "markers", "name": s, "meta": "heads",
            "visible": k == 0, "x": xyz[:, 0].tolist(), "y": xyz[:, 1].tolist(),
            "z": xyz[:, 2].tolist(), "text": hover, "hoverinfo": "text",
            "marker": {"size": 3, "color": [None if not np.isfinite(x) else float(x)
                                            for x in v],
                       "colorscale": "Viridis", "opacity": 0.9,
                       "colorbar": {"title": {"text": s}, "x": 1.02, "len": 0.6}},
        })
    fixed = [True] * len(frame)
    groups = [(f"colour: {s}", [*fixed, *(j == k for j in range(len(scores)))])
              for k, s in enumerate(scores)]
    layout = {
        "title": {"text": "Head profiles in Δ₃, coloured by a behaviour score"},
        "height": 640, "margin": {"l": 0, "r": 0, "t": 60, "b": 0},
        "scene": {"xaxis": {"visible": False}, "yaxis": {"visible": False},
                  "zaxis": {"visible": False}, "aspectmode": "data",
                  "camera": {"eye": {"x": 1.6, "y": -1.4, "z": 0.9}}},
        "legend": {"x": 0.0, "y": 0.0, "bgcolor": "rgba(255,255,255,0.6)"},
        "updatemenus": [_visibility_menu(groups)],
    }
    return {"data": data, "layout": layout}


def rope_figure(rope: Table, model: str) -> dict[str, Any]:
    """Spearman's rho of every score with a statistic of ``L(d)`` against ``d`` (one model;
    menu: the statistic). Filled markers: significant after correction.

    Examples
    --------
    >>> from qkforms.behaviour.associations import tables_from_joined
    >>> from qkforms.behaviour.synthetic import joined_example
    >>> t = tables_from_joined(joined_example(), n_boot=0, n_perm=99)
    >>> fig = rope_figure(t["behaviour_rope"], "rope-toy")
    >>> fig["layout"]["xaxis"]["title"]["text"]
    'displacement d (query − key position)'
    """
    rows = rope.where("model", model) if len(rope) else rope
    data: list[dict[str, Any]] = []
    for g in GEOMETRY:
        for s in SCORE_COLUMNS:
            sub = rows.where("statistic", g).where("score", s) if len(rows) else rows
            if not len(sub):
                continue
            d = _f(sub["displacement"])
            order = np.argsort(d)
            rho = _f(sub["spearman"])[order]
            sig = [bool(x) for x in np.asarray(sub["significant"])[order]]
            data.append({
                "type": "scatter", "mode": "lines+markers", "name": s, "legendgroup": s,
                "visible": g == "theta_dist", "x": d[order].tolist(),
                "y": [None if not np.isfinite(x) else float(x) for x in rho],
                "marker": {"symbol": ["circle" if k else "circle-open" for k in sig],
                           "size": 8},
                "hovertemplate": f"{s} vs {g} of L(d)<br>d = %{{x}}<br>ρ = %{{y:.3f}}"
                                 "<extra></extra>",
                "meta": g,
            })
    groups = [(f"statistic: {g}", [t["meta"] == g for t in data]) for g in GEOMETRY]
    layout = {
        "title": {"text": f"{model}: rank correlation of each score with the statistics of "
                          "L(d)"},
        "height": 460, "margin": {"t": 70},
        "xaxis": {"title": {"text": "displacement d (query − key position)"},
                  "type": "log"},
        "yaxis": {"title": {"text": "Spearman ρ"}, "range": [-1.05, 1.05]},
        "updatemenus": [{**_visibility_menu(groups, y=1.18),
                         "active": GEOMETRY.index("theta_dist")}],
    }
    return {"data": data, "layout": layout}


def load_tables(directory: str | Path, heads: Table | None = None, *, seed: int = 0,
                n_boot: int = 1000, recompute: bool = False) -> dict[str, Table]:
    """The behaviour tables of a survey directory: read from ``DIR/stats/``, or computed
    (and written there) when missing, older than ``behaviour.parquet`` or ``recompute``;
    {} without ``behaviour.parquet``.

    Examples
    --------
    >>> import tempfile
    >>> load_tables(tempfile.mkdtemp())
    {}
    """
    d = Path(directory)
    source = d / BEHAVIOUR_FILE
    if not source.exists():
        return {}
    stats = d / "stats"
    paths = {name: stats / f"{name}.parquet" for name in TABLE_NAMES}
    fresh = all(p.is_file() and p.stat().st_mtime >= source.stat().st_mtime
                for name, p in paths.items() if name != "behaviour_rope")
    if fresh and not recompute:
        return {name: read_parquet(p) if p.is_file() else Table() for name, p in paths.items()}
    tables = behaviour_tables([d], heads=heads, seed=seed, n_boot=n_boot)

    ensure_dir(stats, root=d)
    for name, table in tables.items():
        if len(table.columns):
            table.to_csv(stats / f"{name}.csv")
            table.to_parquet(stats / f"{name}.parquet")
    return tables


def behaviour_section(data: Any, figs: list[dict[str, Any]], *, seed: int = 0,
                      n_boot: int = 1000, recompute: bool = False
                      ) -> tuple[str, str, str] | None:
    """The report section (None when the directory has no ``behaviour.parquet``).

    Appends its figures to ``figs`` (``data`` is the report's
    :class:`~qkforms.report.data.ReportData`).
    """
    tables = load_tables(data.directory, data.all_heads, seed=seed, n_boot=n_boot,
                         recompute=recompute or data.computed_stats)
    if not tables:
        return None
    heads = tables["behaviour_heads"]
    fig = score_simplex(heads)
    fig["id"] = "fig-behaviour-simplex"
    figs.append(fig)

    def link(name: str) -> str:
        return f'(<a href="stats/{name}.csv">all columns</a>)'

    parts = [
        "<p><b>These are associations, not causes.</b> Each head's behaviour is measured on "
        "probes of random tokens from the model's own vocabulary (<code>qkforms "
        "behaviour</code>, definitions in <code>docs/behaviour.md</code>) and set next to "
        "the geometry of its form; a correlation over the heads of a model says that heads "
        "which do one thing tend to have forms of one kind, not that the form makes the "
        "behaviour, and the tests treat heads as independent, which heads of a layer are "
        "not.</p>",
        '<div id="fig-behaviour-simplex" class="fig" data-point-count="-1" '
        f'data-expected-count="{len(heads)}"></div>',
        f"<h3>Which heads were joined</h3>{table_html(tables['behaviour_join'], ('model', 'survey_heads', 'behaviour_heads', 'joined', 'note'))}",  # noqa: E501
    ]
    summary = tables["behaviour_summary"]
    parts.append(
        "<h3>Behaviour scores</h3><p>Medians over heads (95 % bootstrap intervals in the "
        f"CSV) and the heads of each class (at least {CLASS_THRESHOLD:g} of the attention "
        f"on the score's target) {link('behaviour_summary')}.</p>"
        + table_html(summary, ("model", "heads", "previous_token_median", "induction_median",
                               "duplicate_token_median", "sink_median",
                               "mean_distance_median", "entropy_norm_median",
                               "bilinear_share_median", "bilinear_share_row_median",
                               "n_previous_token", "n_induction", "n_duplicate_token",
                               "n_sink", "n_none")))
    strongest = tables["behaviour_strongest"]
    if len(strongest):
        parts.append(
            "<h3>Strongest associations</h3><p>Spearman rank correlations with permutation "
            "p-values, corrected for the multiple comparisons of each table "
            f"(Benjamini–Hochberg q; significant: q &lt; {ALPHA:g}); "
            "<code>L(d)</code>: the relative form of a RoPE head at the displacement the "
            f"score concerns {link('behaviour_correlations')}, "
            '<a href="stats/behaviour_rope.csv">across d</a>.</p>'
            + table_html(strongest, ("model", "score", "statistic", "form", "heads",
                                     "spearman", "spearman_ci_low", "spearman_ci_high",
                                     "p_value", "q_bh", "significant")))
    parts.append(
        "<h3>Geometry per behaviour class</h3><p>Medians (95 % bootstrap intervals over "
        "heads) of the form's statistics and the shares of the spectral types; "
        "<code>L(1)</code>, <code>L(T-1)</code>, <code>L(T)</code>: the same for the "
        "relative forms of RoPE heads at the displacement of the class "
        f"{link('behaviour_classes')}.</p>"
        + table_html(tables["behaviour_classes"], (
            "model", "class", "form", "heads", "theta_dist_median", "theta_dist_median_ci_low",
            "theta_dist_median_ci_high", "pairing_median", "sym_energy_median", "c_median",
            "d_median", "share_I+", "share_II", "share_I-")))
    rope = tables.get("behaviour_rope", Table())
    if len(rope):
        parts.append("<h3>RoPE heads: across the displacement d</h3><p>For each score, its "
                     "rank correlation with a statistic of the relative forms L(d) (menu) "
                     "against d; filled markers are significant after correction.</p>")
        for k, model in enumerate(dict.fromkeys(str(m) for m in rope["model"])):
            rf = rope_figure(rope, model)
            rf["id"] = f"fig-behaviour-rope-{k}"
            figs.append(rf)
            parts.append(f'<div id="{rf["id"]}" class="fig"></div>')
    return ("behaviour", "What heads do, next to what their forms are", "".join(parts))
