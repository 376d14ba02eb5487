"""Writing the observation tables: ``DIR/stats/*.csv`` (+ ``.parquet``) and ``observations.md``.

Examples
--------
>>> import tempfile, pathlib
>>> from qkforms.stats.table import Table
>>> from qkforms.stats.output import write_tables
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> paths = write_tables({"symmetric_energy": Table({"model": ["m"], "heads": [3]})}, d)
>>> sorted(p.name for p in paths)[:2]
['observations.md', 'symmetric_energy.csv']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from qkforms._fs import atomic_write, ensure_dir
from qkforms.stats.observation_tables import STRONGLY_SYMMETRIC
from qkforms.stats.table import Table
from qkforms.tolerances import NEAR_THETA, SPECTRAL_TYPE_RADIUS

#: a further section of ``observations.md``: the tables -> its Markdown lines
Section = Callable[[dict[str, Table]], list[str]]

__all__ = ["MARKDOWN_SECTIONS", "render_markdown", "write_tables"]

#: (table, title, description, key columns) of observations.md
MARKDOWN_SECTIONS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("observation1_balance", "Observation 1 — balanced spectra, and Theorem 3 head by head",
     "Heads by status; among ok heads, decided signatures (by float, `--certify` or "
     "`--exact`), balanced ones, and what Theorem 3 predicts: `thm3` for surjective heads, "
     "`thm3_live` for heads whose live part (dead dimensions dropped) is onto, and the "
     "contradictions (decided signatures that differ from the prediction: a numerical "
     "failure if decided in float, a bug if certified or exact).",
     ("model", "heads", "ok", "zero_form", "failed", "decided", "undecided", "balanced",
      "balanced_share", "surjective", "thm3_met", "thm3_live", "thm3_live_met",
      "no_prediction", "contradictions")),
    ("symmetric_energy", "Symmetric energy vs the random baseline (Cor. 1–2, Prop. 5)",
     "Median symmetric energy S = 1 − a with its 95 % bootstrap interval, the theoretical "
     "baseline (N+1)/(2N) and the median of a seeded Gaussian survey of the same shape.",
     ("model", "heads", "baseline_theory", "sym_energy_median", "sym_energy_median_ci_low",
      "sym_energy_median_ci_high", "baseline_sym_energy_median", "strongly_symmetric_share")),
    ("pairing", "Pairing level",
     "Median pairing score with 10–90 % range, next to the Gaussian baseline.",
     ("model", "heads", "pairing_median", "pairing_median_ci_low", "pairing_median_ci_high",
      "pairing_p10", "pairing_p90", "baseline_pairing_median", "below_baseline_min_share")),
    ("proportional_lobes", "Observation 5 — proportional lobes",
     "Lobe departure and pairing gap (0 iff proportional lobes), the lobe ratio ρ and the "
     "distance of the symmetric profile to the Theorem 5 limit at the head's ρ.",
     ("model", "heads", "lobe_departure_median", "lobe_departure_p10", "lobe_departure_p90",
      "pairing_gap_median", "pairing_gap_p10", "pairing_gap_p90", "rho_median",
      "thm5_dist_median")),
    ("accumulation", "Accumulation near Θ, with effective-rank checks",
     "Distance to Θ, b − a (median and Student-t fit), c·d, and participation-ratio "
     "checks (heads with PR < 2 and < 5 are close to rank one).",
     ("model", "heads", "theta_dist_median", "baseline_theta_dist_median",
      "b_minus_a_median", "b_minus_a_t_df", "b_minus_a_t_loc", "cd_median",
      "participation_ratio_median", "pr_lt2", "pr_lt5")),
    ("accumulation_test", "Formal test: are trained profiles close to Θ?",
     "Distance to Θ of trained heads vs two nulls: the Gaussian baseline (whose profiles sit "
     "at the midpoint M of Θ) and uniform points of the simplex. Cliff's delta < 0 means "
     "trained heads are closer to Θ than the null.",
     ("model", "null", "n_trained", "n_null", "trained_median", "null_median",
      "median_ratio", "cliffs_delta", "cliffs_delta_ci_low", "cliffs_delta_ci_high",
      "p_value")),
    ("spectral_types", "Spectral types I+ / II / I− (three rules)",
     "Counts per rule: `radius` (r = 0.02 on the symmetric profile), `imbalance`, `kmeans`.",
     ("model", "rule", "heads", "n_I+", "n_II", "n_I-", "share_I+", "share_II", "share_I-",
      "parity_plus_share", "kmeans_best_k")),
    ("spectral_types_sensitivity", "Spectral types: sensitivity to the radius",
     "Counts of the `radius` rule for r in 0.01, 0.02, 0.03, 0.05, 0.10.",
     ("model", "radius", "n_I+", "n_II", "n_I-", "share_II")),
    ("certified", "Certified decisions (`--certify`)",
     "Heads counted against each threshold only when their certified intervals decide it "
     f"(docs/certified.md); `undecided` heads are neither. Near Θ: distance ≤ {NEAR_THETA:g}; "
     f"strongly symmetric: 1 − a ≥ {STRONGLY_SYMMETRIC:g}; faces: b = 0, c = 0, d = 0 "
     f"exactly; types: radius rule (r = {SPECTRAL_TYPE_RADIUS:g}).",
     ("model", "heads", "heads_certified", "max_width", "near_theta_yes", "near_theta_no",
      "near_theta_undecided", "strongly_symmetric_yes", "strongly_symmetric_undecided",
      "face_c0_yes", "face_d0_yes", "cd0_undecided", "type_I+", "type_II", "type_I-",
      "type_undecided")),
    ("bands", "Decisions stable under the storage-precision bands (`--precision-bands`)",
     "Heads whose decision is the same for every weight within the storage precision of "
     "the stored one (the rule decided on the box of the head's bands; docs/certified.md): "
     f"near Θ (distance ≤ {NEAR_THETA:g}), the radius-rule type (r = "
     f"{SPECTRAL_TYPE_RADIUS:g}) and the signature. `kind_*` counts rigorous and "
     "first-order (estimated) bands.",
     ("model", "heads", "heads_banded", "kind_rigorous", "kind_rigorous_float",
      "kind_first_order", "band_radius_median", "theta_dist_width_median",
      "near_theta_stable_yes", "near_theta_stable_no", "near_theta_unstable",
      "types_stable", "types_unstable", "signature_stable", "signature_unstable")),
    ("spectral_geometry", "Observations 7–9 — spectral geometry",
     "Mode ratio τ/√(|μ|ν) and shape ratio k_T/√(k₊k₋) over heads with all three gamma "
     "shapes > 1 (excluded heads counted), sorted-spectra correlation and the "
     "geometric-mean relative error.",
     ("model", "heads", "heads_all_shapes_gt1", "excluded_shapes_le1", "mode_ratio_median",
      "shape_ratio_median", "sorted_corr_median", "geo_rel_err_median")),
    ("families", "Distribution families (generalized gamma vs lognormal)",
     "Share of heads whose sample is better fit (likelihood; ties → gengamma) by each family, "
     "with the KS distance of the generalized-gamma fit.",
     ("model", "sample", "heads_fitted", "gengamma_share", "lognormal_share",
      "ks_gengamma_median", "ks_gengamma_p25", "ks_gengamma_p75")),
    ("families_summary", "Distribution families averaged over models",
     "Mean ± sd over models of the per-model shares.",
     ("sample", "models", "gengamma_share_mean", "gengamma_share_sd", "lognormal_share_mean",
      "lognormal_share_sd", "ks_gengamma_median_of_model_medians")),
)


def render_markdown(tables: dict[str, Table], *, header: str = "",
                    sections: Sequence[Section] = ()) -> str:
    """The text of ``observations.md`` (key columns of every observation table).

    ``sections`` are the sections of tables computed above the statistics (e.g. the
    behaviour associations, :func:`qkforms.behaviour.associations.markdown_lines`): each
    maps the tables to its lines, placed after the observation tables.

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> from qkforms.stats.output import render_markdown
    >>> "Observation 1" in render_markdown({"observation1_balance": Table({"model": ["m"]})})
    True
    """
    lines = ["# Observations", ""]
    if header:
        lines += [header, ""]
    lines += [
        "Per model and pooled (`ALL`). Intervals are 95 % percentile-bootstrap intervals "
        "over heads (stratified by model for `ALL`); full tables with every column are the "
        "CSV files next to this page; definitions in `docs/statistics.md`.",
        "",
    ]
    for name, title, text, cols in MARKDOWN_SECTIONS:
        table = tables.get(name)
        if table is None or not len(table.columns):
            continue
        lines += [f"## {title}", "", text, "", table.to_markdown(cols), ""]
    lines += _low_rank_layers(tables.get("by_layer"))
    for section in sections:
        lines += section(tables)
    lines += _training_dynamics(tables)
    return "\n".join(lines)


def _pooled(table: Table) -> Table:
    """The rows of a series table that pool all layers (``layer`` null)."""
    import math

    keep = [i for i, v in enumerate(table["layer"])
            if v is None or (isinstance(v, float) and math.isnan(v))]
    return table.take(keep)


def _training_dynamics(tables: dict[str, Table]) -> list[str]:
    """The section of a training run: pooled per-step medians, settling steps, step 0."""
    steps = tables.get("series_steps")
    if steps is None or not len(steps):
        return []
    lines = ["## Training dynamics", "",
             "The tables above describe the last checkpoint of each run. Per step, all "
             "layers pooled (per-layer rows and every interval in `series_steps.csv`):", "",
             _pooled(steps).to_markdown((
                 "model", "step", "tokens_seen", "heads", "balanced", "sym_energy_median",
                 "pairing_median", "rho_median", "c_median", "d_median", "theta_dist_median",
                 "dist_M_median", "participation_ratio_median", "share_I+", "share_II",
                 "share_I-")), "",
             "When each quantity settles (plateau rule, `docs/statistics.md`; all layers "
             "pooled):", "",
             _pooled(tables["series_settling"]).to_markdown((
                 "model", "quantity", "first_value", "last_value", "settle_step",
                 "settle_fraction", "settled")), ""]
    init = tables.get("series_init")
    if init is not None and len(init):
        lines += ["Step 0 (random initialization) against Proposition 5, Theorem 5 and the "
                  "Gaussian baseline:", "",
                  init.to_markdown(("model", "layer", "heads", "prop5_sym_energy",
                                    "sym_energy_median", "rho_median", "thm5_dist_median",
                                    "dist_M_median", "baseline_dist_M_median",
                                    "dist_M_cliffs_delta")), ""]
    return lines


def _low_rank_layers(by_layer: Table | None) -> list[str]:
    """The section listing layers where at least half the heads have participation ratio < 2."""
    if by_layer is None or not len(by_layer) or "pr_lt2" not in by_layer:
        return []
    keep = [i for i, (k, h) in enumerate(zip(by_layer["pr_lt2"], by_layer["heads"], strict=True))
            if h and 2 * int(k) >= int(h)]
    lines = ["## Layers with nearly rank-one forms", "",
             "Layers where at least half of the heads have participation ratio < 2: their "
             "profiles sit near Θ because the forms are nearly rank one (Proposition 4), so "
             "they are reported apart from the accumulation observation.", ""]
    if not keep:
        return [*lines, "None.", ""]
    cols = ("model", "layer", "heads", "pr_lt2", "pr_lt5", "participation_ratio_median",
            "theta_dist_median")
    return [*lines, by_layer.take(keep).to_markdown(cols), ""]


def write_tables(
    tables: dict[str, Table], out_dir: str | Path, *, header: str = "", parquet: Any = None,
    root: str | Path | None = None, sections: Sequence[Section] = (),
) -> list[Path]:
    """Write every table as CSV (and Parquet when pyarrow is importable) and the Markdown.

    Parameters
    ----------
    tables : dict of name -> Table
    out_dir : path
        Created if missing (``DIR/stats``).
    parquet : bool, optional
        Force Parquet on/off; by default on iff pyarrow imports.
    root : path, optional
        The directory the user named (``DIR`` of ``DIR/stats``; default ``out_dir``):
        below it no symbolic link is followed, so a linked ``DIR/stats`` is refused
        before anything is written (``docs/files.md``).
    sections : sequence of callables
        Further sections of ``observations.md`` (:func:`render_markdown`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from qkforms.stats.table import Table
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> [p.name for p in write_tables({"pairing": Table({"model": ["m"]})}, d, parquet=False)]
    ['pairing.csv', 'observations.md']
    """
    out = Path(out_dir)
    root = out if root is None else Path(root)
    ensure_dir(out, root=root)
    if parquet is None:
        try:
            import pyarrow  # noqa: F401

            parquet = True
        except ImportError:
            parquet = False
    written: list[Path] = []
    for name, table in tables.items():
        if not len(table.columns):
            continue
        written.append(table.to_csv(out / f"{name}.csv", root=root))
        if parquet:
            written.append(table.to_parquet(out / f"{name}.parquet", root=root))
    md = out / "observations.md"
    text = render_markdown(tables, header=header, sections=sections)
    atomic_write(md, text.encode("utf-8"), root=root)
    written.append(md)
    return written
