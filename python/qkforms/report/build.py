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

from qkforms.report.data import ReportData, load

__all__ = ["SECTION_IDS", "build_report"]

SECTION_IDS = ("simplex", "face", "heatmaps", "histograms", "spectra", "rope", "tables")


def _intro(data: ReportData) -> str:
    heads = data.heads
    models = list(dict.fromkeys(str(m) for m in heads["model"]))
    m = data.manifest
    made = f" Survey created {html.escape(str(m.get('created')))}" if m.get("created") else ""
    version = f" with qkforms {html.escape(str(m.get('version')))}" if m.get("version") else ""
    stats_note = ("statistics computed now by <code>qkforms report</code> and written to "
                  "<code>stats/</code>" if data.computed_stats else
                  "statistics read from <code>stats/</code>")
    return (
        f"<p>{len(heads)} heads of {len(models)} model(s): "
        f"{html.escape(', '.join(models))}.{made}{version}; {stats_note}. "
        "Every interactive figure can be rotated/zoomed; hover a point for the head's "
        "model, layer, head and statistics. Definitions: <code>docs/statistics.md</code>; "
        "static PNG versions in <code>figures/</code>.</p>"
        + _score_notes(m)
    )


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
    >>> from qkforms.stats.synthetic import rows_from_spectrum
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> h, s = rows_from_spectrum("sym", [[2.0, 1.0, -1.0, -0.5], [1.0, 0.5, -2.0, -1.0]])
    >>> pq.write_table(pa.table(h), d / "heads.parquet")
    >>> pq.write_table(pa.table(s), d / "spectra.parquet")
    >>> path = build_report(d, pngs=False, n_boot=0, fits=False)
    >>> path.name, 'data-expected-count="2"' in path.read_text(encoding="utf-8")
    ('report.html', True)
    """
    from qkforms.report import figures as F
    from qkforms.report.html import render_page, table_html
    from qkforms.report.rope_view import rope_profiles
    from qkforms.stats.output import MARKDOWN_SECTIONS

    data = load(directory, seed=seed, n_boot=n_boot, fits=fits, recompute=recompute)
    heads, base = data.heads, data.baseline
    figs: list[dict[str, Any]] = []
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
    rope_html = []
    for model, prof, labels, d_values in rope_profiles(data.manifest, data.directory,
                                                       heads=rope_heads, d_max=d_max):
        fig = F.rope_figure(model, prof, labels, d_values)
        fig["id"] = f"fig-rope-{len(rope_html)}"
        figs.append(fig)
        rope_html.append(f'<div id="{fig["id"]}" class="fig"></div>')
    sections.append(("rope", "RoPE: profile of L(d)",
                     "<p>Profiles of the relative forms L(d) = K_redᵀ Rot(d) Q_red "
                     "(query rotated by +d) for a few heads per RoPE model; move the slider "
                     "over d.</p>" + "".join(rope_html) if rope_html else
                     "<p class=\"note\">No RoPE factors in this survey "
                     "(<code>manifest.json</code> names none).</p>"))
    parts = []
    for name, title, text, cols in MARKDOWN_SECTIONS:
        t = data.tables.get(name)
        if t is None or not len(t.columns):
            continue
        parts.append(f"<h3>{html.escape(title)}</h3><p>{html.escape(text)} "
                     f'(<a href="stats/{name}.csv">all columns</a>)</p>' + table_html(t, cols))
    sections.append(("tables", "Observation tables", "".join(parts)))

    page = render_page(title="qkforms survey report", intro=_intro(data), sections=sections,
                       figures=figs)
    target = Path(out) if out is not None else data.directory / "report.html"
    target.write_text(page, encoding="utf-8")
    if pngs:
        from qkforms.report.static import write_pngs

        write_pngs(heads, base, data.directory / "figures")
    return target
