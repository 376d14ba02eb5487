"""Building ``DIR/report.html`` (and ``DIR/figures/*.png``) from a survey directory.

Examples
--------
>>> from qkforms.report.build import SECTION_IDS
>>> SECTION_IDS[:3]
('simplex', 'face', 'heatmaps')
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from qkforms import _progress
from qkforms._fs import atomic_write
from qkforms.report import figures as F
from qkforms.report.bands_view import bands_section
from qkforms.report.behaviour_view import behaviour_section
from qkforms.report.data import ReportData, load
from qkforms.report.html import render_page, table_html
from qkforms.report.rope_view import rope_profiles
from qkforms.report.static import FIGURES, write_pngs
from qkforms.report.training_view import medians_figure, run_models, trajectory_figure
from qkforms.stats.output import MARKDOWN_SECTIONS, _pooled
from qkforms.survey.balance import balance_counts

__all__ = ["SECTION_IDS", "build_report"]

SECTION_IDS = ("simplex", "face", "heatmaps", "histograms", "spectra", "rope", "bands",
               "tables", "training", "behaviour")


def _intro(data: ReportData) -> str:
    heads = data.heads
    models = list(dict.fromkeys(str(m) for m in heads["model"]))
    m = data.manifest
    made = f" Survey created {html.escape(str(m.get('created')))}" if m.get("created") else ""
    version = f" with qkforms {html.escape(str(m.get('version')))}" if m.get("version") else ""
    stats_note = ("statistics computed now by <code>qkforms report</code> and written to "
                  "<code>stats/</code>" if data.computed_stats else
                  "statistics read from <code>stats/</code>")
    runs = m.get("runs") or []
    run_note = "".join(
        f" {html.escape(str(r['model']))} is a training run of {len(r['steps'])} checkpoints "
        f"(steps {r['steps'][0]}–{r['steps'][-1]}); the sections after \"Training dynamics\" "
        "show its last checkpoint." for r in runs if r.get("steps"))
    return (
        f"<p>{len(heads)} heads of {len(models)} model(s): "
        f"{html.escape(', '.join(models))}.{made}{version}; {stats_note}.{run_note} "
        "Every interactive figure can be rotated/zoomed; hover a point for the head's "
        "model, layer, head and statistics. Definitions: <code>docs/statistics.md</code>; "
        "static PNG versions in <code>figures/</code>.</p>"
        + _not_ok_notes(data)
        + _score_notes(m)
    )


def _not_ok_notes(data: ReportData) -> str:
    """Every head that is not ``ok`` (why), every contradiction of Theorem 3, and the
    Observation 1 counts of heads outside the theorem's hypothesis."""

    t = data.all_heads
    cols = {c: t[c].tolist() for c in t.columns}
    status = [str(v) for v in cols["status"]]
    items = [f"<li>{html.escape(str(mo))}, layer {la}, head {he}: {html.escape(st)} — "
             f"{html.escape(str(er))}</li>"
             for mo, la, he, st, er in zip(cols["model"], cols["layer"], cols["head"], status,
                                           cols.get("error", [None] * len(status)),
                                           strict=True) if st != "ok"]
    out = ""
    if {"signature_by", "prediction", "prediction_met", "surjective"} <= set(cols):
        c = balance_counts(cols)
        out += (f"<p id=\"theorem3-heads\">Theorem 3 head by head: {c['surjective']} "
                f"surjective heads, {c['thm3_met']} of them with the predicted signature "
                f"(n, n, N − 2n); {c['thm3_live']} heads with dead dimensions whose live part "
                f"is onto ({c['thm3_live_met']} with (n′, n′, N − 2n′)); {c['no_prediction']} "
                f"outside the theorem; {c['undecided']} signatures undecided in floating "
                f"point; {c['contradictions']} contradictions.</p>")
        for mo, la, he, met, by in zip(cols["model"], cols["layer"], cols["head"],
                                       cols["prediction_met"], cols["signature_by"],
                                       strict=True):
            if met is False and by is not None:
                items.append(f"<li>{html.escape(str(mo))}, layer {la}, head {he}: its "
                             f"signature (decided by {html.escape(str(by))}) contradicts "
                             "Theorem 3 — " + ("a numerical failure" if by == "float"
                                               else "a bug") + "</li>")
    if items:
        out += ('<div id="not-ok-heads"><p>Heads that are not ok, or that contradict '
                "Theorem 3:</p><ul>" + "".join(items) + "</ul></div>")
    return out


def _last_checkpoints(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest with, of each training run, only its last checkpoint's entry."""
    runs = manifest.get("runs") or []
    if not runs:
        return manifest
    last = {run["key"]: run["steps"][-1] for run in runs if run.get("steps")}
    keep = [e for e in manifest.get("models", [])
            if e.get("run") is None or e.get("step") == last.get(e.get("run"))]
    return {**manifest, "models": keep}


def _training_section(data: ReportData, figs: list[dict[str, Any]]) -> tuple[str, str, str] | None:
    """The "training dynamics" section of a survey of training runs (None otherwise)."""

    models = run_models(data.all_heads)
    steps_t = data.tables.get("series_steps")
    if not models or steps_t is None or not len(steps_t):
        return None
    settling = data.tables.get("series_settling")
    init = data.tables.get("series_init")
    parts = ["<p>Each training run: the profiles of its heads in Δ₃ with a slider over "
             "the checkpoints (the coloured paths are the per-layer median profiles; every "
             "head's own path can be switched on in the legend), and the per-layer medians "
             "of the observation quantities against step with 95 % bootstrap intervals "
             "over heads (menu: quantity). The other sections of this page describe the "
             "last checkpoint. Definitions: <code>docs/statistics.md</code> "
             "(\"Training runs\").</p>"]
    status = [str(s) for s in data.all_heads["status"]]
    for k, model in enumerate(models):
        tfig = trajectory_figure(data.all_heads, model)
        tfig["id"] = f"fig-trajectory-{k}"
        steps = [float(s) for s, m, st in zip(data.all_heads["step"], data.all_heads["model"],
                                              status, strict=True)
                 if str(m) == model and st == "ok"]
        per_step = len(steps) // max(1, len(set(steps)))
        mfig = medians_figure(steps_t, settling, model)
        mfig["id"] = f"fig-medians-{k}"
        figs += [tfig, mfig]
        parts.append(f"<h3>{html.escape(model)}</h3>"
                     f'<div id="{tfig["id"]}" class="fig" data-point-count="-1" '
                     f'data-expected-count="{per_step}"></div>'
                     f'<div id="{mfig["id"]}" class="fig"></div>')
    def by_layer(t: Any) -> Any:  # the layer as text: "all" for pooled rows
        return t.with_column("layer", ["all" if v is None or v != v else str(int(v))
                                       for v in t["layer"]])

    if settling is not None and len(settling):
        parts.append("<h3>When each quantity settles (all layers pooled)</h3><p>Plateau "
                     "rule: the first step from which every later median stays within the "
                     "last step's bootstrap interval widened by 5 % of the quantity's range "
                     'over the run (<a href="stats/series_settling.csv">per layer</a>).</p>'
                     + table_html(_pooled(settling), (
                         "model", "quantity", "first_value", "last_value", "settle_step",
                         "settle_fraction", "settled")))
    if init is not None and len(init):
        parts.append("<h3>Step 0: the random initialization against the theory</h3><p>"
                     "Proposition 5 predicts the symmetric energy (N+1)/(2N); Theorem 5 the "
                     "symmetric profile at each head's ρ (<code>thm5_dist</code>); together "
                     "they put random heads near M = (½, ½, 0, 0) (<code>dist_M</code>), "
                     "next to a seeded Gaussian baseline of the same shapes.</p>"
                     + table_html(by_layer(init), ("model", "layer", "heads",
                                                   "prop5_sym_energy",
                                         "sym_energy_median", "rho_median",
                                         "thm5_dist_median", "dist_M_median",
                                         "baseline_dist_M_median", "dist_M_cliffs_delta")))
    return ("training", "Training dynamics: heads travelling on the simplex", "".join(parts))


def _score_notes(manifest: dict[str, Any]) -> str:
    """The q/k-norm policy of the run and each model's notes on its scores."""
    items = []
    qk = manifest.get("qk_norm")
    if qk:
        items.append(f"<li>q/k-normalized heads (<code>--qk-norm "
                     f"{html.escape(str(qk.get('policy')))}</code>): "
                     f"{html.escape(str(qk.get('meaning')))}.</li>")
    for entry in manifest.get("models", []) or []:
        for note in entry.get("notes", []) or []:
            items.append(f"<li><b>{html.escape(str(entry.get('model')))}</b>: "
                         f"{html.escape(str(note))}</li>")
    if not items:
        return ""
    return ('<div id="score-notes"><p>How the scores relate to the surveyed forms:</p><ul>'
            + "".join(items) + "</ul></div>")


def build_report(
    directory: str | Path,
    *,
    out: str | Path | None = None,
    pngs: bool = True,
    seed: int = 0,
    n_boot: int = 1000,
    fits: bool = True,
    recompute: bool = False,
    rope_heads: int = 16,
    d_max: int = 128,
) -> Path:
    """Write the report of a survey directory; return the HTML path.

    Parameters
    ----------
    directory : path
        Survey output (``heads.parquet``, ``spectra.parquet``; ``stats/`` is computed if
        missing).
    out : path, optional
        HTML file (default ``DIR/report.html``).
    pngs : bool
        Also write the static PNGs to ``DIR/figures/``.
    rope_heads, d_max : int
        Heads per RoPE model and largest displacement of the L(d) slider.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> from qkforms.stats.synthetic_rows import rows_from_spectrum
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> h, s = rows_from_spectrum("sym", [[2.0, 1.0, -1.0, -0.5], [1.0, 0.5, -2.0, -1.0]])
    >>> pq.write_table(pa.table(h), d / "heads.parquet")
    >>> pq.write_table(pa.table(s), d / "spectra.parquet")
    >>> path = build_report(d, pngs=False, n_boot=0, fits=False)
    >>> path.name, 'data-expected-count="2"' in path.read_text(encoding="utf-8")
    ('report.html', True)
    """
    data = load(directory, seed=seed, n_boot=n_boot, fits=fits, recompute=recompute)
    with _progress.phase("report: figures and tables", unit="step"):
        target = _write_page(data, out, rope_heads=rope_heads, d_max=d_max, seed=seed,
                             n_boot=n_boot, recompute=recompute)
    if pngs:

        with _progress.phase("report: static PNGs", len(FIGURES), unit="figure") as bar:
            write_pngs(data.heads, data.baseline, data.directory / "figures",
                       root=data.directory)
            bar.update(len(FIGURES))
    return target


def _profile_sections(data: ReportData,
                      figs: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """The 3-simplex of head profiles and the face of symmetric profiles."""
    heads, base = data.heads, data.baseline
    sections: list[tuple[str, str, str]] = []
    tet = F.tetrahedron_figure(heads, base)
    tet["id"] = "fig-tetrahedron"
    figs.append(tet)
    sections.append(("simplex", "The 3-simplex of head profiles",
                     "<p>Each point is the profile π(L) = (a, b, c, d) of one head. "
                     "Red: Θ, the profiles of rank-one forms (two segments through the "
                     "midpoint of the a–b edge); dashed: the open edge c–d, which no form "
                     "attains (Theorem 4). Use the menu to colour by layer, spectral type "
                     "(radius rule, r = 0.02) or model; the Gaussian baseline is in the "
                     "legend.</p>"
                     f'<div id="fig-tetrahedron" class="fig" data-point-count="-1" '
                     f'data-expected-count="{len(heads)}"></div>'))
    face = F.face_figure(heads, base)
    face["id"] = "fig-face"
    figs.append(face)
    sections.append(("face", "The face Δ = {a = 0}: symmetric profiles",
                     "<p>Symmetric profiles (b_S, c_S, d_S) = (b, c, d)/(1 − a) with the "
                     "Theorem 5 limit (2ρ, (1−ρ)₊², (ρ−1)₊²)/(1+ρ²), which runs along the "
                     "edges b–c and b–d; the open edge c–d is empty.</p>"
                     '<div id="fig-face" class="fig" data-point-count="-1"></div>'))
    return sections


def _distribution_sections(data: ReportData,
                           figs: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """Layer x head maps, histograms of head statistics, spectra with fitted families."""
    heads, base = data.heads, data.baseline
    sections: list[tuple[str, str, str]] = []
    hm = F.heatmap_figures(heads, base)
    figs += hm
    sections.append(("heatmaps", "Layer × head maps next to the random baseline",
                     "<p>Left: trained heads; right: Gaussian heads of the same shape "
                     "(seeded). Choose the model in the menu.</p>"
                     + "".join(f'<div id="{f["id"]}" class="fig"></div>' for f in hm)))
    hist = F.histogram_figures(heads, base)
    figs += hist
    sections.append(("histograms", "Distributions of head statistics",
                     "".join(f'<div id="{f["id"]}" class="fig"></div>' for f in hist)))
    spec = F.spectra_figure(heads, data.spectra)
    figs.append(spec)
    sections.append(("spectra", "Spectra with fitted families",
                     "<p>For each model, the head of median pairing and the head of lowest "
                     "pairing: histograms of |λ(L)|, λ₊(S), |λ₋(S)| and σ(T) with the fitted "
                     "generalized gamma (solid) and lognormal (dashed), both with location "
                     "0.</p><div id=\"fig-spectra\" class=\"fig\"></div>"))
    return sections


def _rope_section(data: ReportData, figs: list[dict[str, Any]], *, rope_heads: int,
                  d_max: int) -> tuple[str, str, str]:
    """The profiles of the relative forms L(d) of a few heads per RoPE model."""
    rope_html: list[str] = []
    for model, prof, labels, d_values in rope_profiles(_last_checkpoints(data.manifest),
                                                       data.directory, heads=rope_heads,
                                                       d_max=d_max):
        fig = F.rope_figure(model, prof, labels, d_values)
        fig["id"] = f"fig-rope-{len(rope_html)}"
        figs.append(fig)
        rope_html.append(f'<div id="{fig["id"]}" class="fig"></div>')
    return ("rope", "RoPE: profile of L(d)",
            "<p>Profiles of the relative forms L(d) = K_redᵀ Rot(d) Q_red "
            "(query rotated by +d) for a few heads per RoPE model; move the slider "
            "over d.</p>" + "".join(rope_html) if rope_html else
            "<p class=\"note\">No RoPE factors in this survey "
            "(<code>manifest.json</code> names none).</p>")


def _tables_section(data: ReportData) -> tuple[str, str, str]:
    """The observation tables (the columns of ``summary.md``; all columns in the CSVs)."""
    parts = []
    for name, title, text, cols in MARKDOWN_SECTIONS:
        t = data.tables.get(name)
        if t is None or not len(t.columns):
            continue
        parts.append(f"<h3>{html.escape(title)}</h3><p>{html.escape(text)} "
                     f'(<a href="stats/{name}.csv">all columns</a>)</p>' + table_html(t, cols))
    return ("tables", "Observation tables", "".join(parts))



def _write_page(data: ReportData, out: str | Path | None, *, rope_heads: int,
                d_max: int, seed: int = 0, n_boot: int = 1000, recompute: bool = False) -> Path:
    """Build every section of the page from ``data`` and write it; return its path."""
    figs: list[dict[str, Any]] = []
    sections: list[tuple[str, str, str]] = []
    training = _training_section(data, figs)
    if training is not None:
        sections.append(training)
    sections += _profile_sections(data, figs)
    sections += _distribution_sections(data, figs)
    sections.append(_rope_section(data, figs, rope_heads=rope_heads, d_max=d_max))
    banded = bands_section(data.heads)
    if banded is not None:  # only for --precision-bands surveys
        sections.append(banded)
    behaviour = behaviour_section(data, figs, seed=seed, n_boot=n_boot, recompute=recompute)
    if behaviour is not None:  # with behaviour.parquet
        sections.append(behaviour)
    sections.append(_tables_section(data))

    page = render_page(title="qkforms survey report", intro=_intro(data), sections=sections,
                       figures=figs)
    target = Path(out) if out is not None else data.directory / "report.html"
    # DIR/report.html (and DIR/figures): below DIR no link is followed (docs/files.md)
    atomic_write(target, page.encode("utf-8"), root=data.directory if out is None else None)
    return target
