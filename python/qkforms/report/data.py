"""What the report reads from a survey directory.

``DIR/heads.parquet`` and ``DIR/spectra.parquet`` (required), the statistics tables of
``DIR/stats/`` (computed with :func:`qkforms.stats.observation_tables` and written there when
missing), ``DIR/manifest.json`` (optional) and, for RoPE models, the reduced factors
``DIR/factors/<key>.npz`` named in the manifest (read with ``allow_pickle=False``).

Examples
--------
>>> from qkforms.report.data import ReportData
>>> ReportData.__dataclass_fields__.keys() >= {"heads", "tables", "manifest"}
True
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qkforms._fs import read_json
from qkforms.behaviour.associations import markdown_lines as behaviour_lines
from qkforms.errors import QKFormsError
from qkforms.stats import TABLES, observations
from qkforms.stats.output import write_tables
from qkforms.stats.survey_input import read_survey
from qkforms.stats.table import Table, read_parquet
from qkforms.stats.training import has_steps, last_step_rows

__all__ = ["ReportData", "load"]


@dataclass
class ReportData:
    """Everything the report draws.

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> ReportData(directory=".", heads=Table(), spectra=Table(), baseline=Table(),
    ...            tables={}).computed_stats
    False
    """

    directory: Path
    heads: Table  # head_stats: ok heads with statistics, type labels, fits
    spectra: Table
    baseline: Table
    tables: dict[str, Table]
    manifest: dict[str, Any] = field(default_factory=dict)
    computed_stats: bool = False
    # every row of heads.parquet (for a training run: all steps; ``heads`` holds the
    # last step's statistics)
    all_heads: Table = field(default_factory=Table)


def _read_table(path_stem: Path) -> Table | None:
    pq = path_stem.with_suffix(".parquet")
    if os.path.lexists(pq):  # a FIFO or device is refused by the reader, not skipped
        return read_parquet(pq)
    return None


def _stale(head_stats: Table, heads: Table) -> bool:
    """Whether ``stats/head_stats`` was computed from other heads than ``heads``.

    Compares the (model, layer, head) of the rows of ``head_stats`` with the ok heads
    of ``heads`` (of each model's last step, for a training run).
    """
    if has_steps(heads):
        heads = last_step_rows(heads, heads)[0]

    def keys(t: Table, ok_only: bool) -> list[tuple[str, int, int]]:
        if any(c not in t for c in ("model", "layer", "head")):
            return []
        rows = zip(t["model"].tolist(), t["layer"].tolist(), t["head"].tolist(),
                   (t["status"].tolist() if ok_only and "status" in t else [None] * len(t)),
                   strict=True)
        return sorted((str(m), int(la), int(h)) for m, la, h, s in rows
                      if not ok_only or s == "ok")

    return keys(head_stats, False) != keys(heads, True)


def load(
    directory: str | Path, *, seed: int = 0, n_boot: int = 1000, fits: bool = True,
    recompute: bool = False,
) -> ReportData:
    """Read a survey directory; compute and write ``DIR/stats`` if it is missing.

    Raises
    ------
    QKFormsError
        If ``heads.parquet`` or ``spectra.parquet`` is missing or fails its checks
        (:mod:`qkforms.stats.survey_input`), or ``manifest.json`` is not a regular JSON
        file holding an object.

    Examples
    --------
    >>> from qkforms.report.data import load
    >>> try:
    ...     load("/nonexistent-survey-dir")
    ... except Exception as exc:
    ...     print(type(exc).__name__)
    QKFormsError
    """
    d = Path(directory)
    # always read and checked, also when stats/ exists: a report never stands on stats/
    # alone (they are recomputed when they describe other heads)
    heads_raw, spectra = read_survey(d)
    stats_dir = d / "stats"
    tables: dict[str, Table] = {}
    computed = False
    if not recompute:
        for name in TABLES:
            t = _read_table(stats_dir / name)
            if t is not None:
                tables[name] = t
    if ("head_stats" in tables and _stale(tables["head_stats"], heads_raw)):
        recompute = True
    if recompute or "head_stats" not in tables:
        tables = observations(heads_raw, spectra, seed=seed, n_boot=n_boot, fits=fits)
        write_tables(tables, stats_dir, header=f"Computed by `qkforms report` (seed {seed}).",
                     root=d, sections=(behaviour_lines,))
        computed = True
    manifest: dict[str, Any] = {}
    mpath = d / "manifest.json"
    if os.path.lexists(mpath):  # a FIFO or /dev/zero link is refused, not ignored

        manifest = read_json(mpath, "survey manifest")
        if not isinstance(manifest, dict):
            raise QKFormsError(f"{mpath}: not a survey manifest (not a JSON object)")
    return ReportData(
        directory=d,
        heads=tables["head_stats"],
        spectra=spectra,
        baseline=tables.get("baseline_heads", Table()),
        tables=tables,
        manifest=manifest,
        computed_stats=computed,
        all_heads=heads_raw,
    )
