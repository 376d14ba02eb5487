"""What the report reads from a survey directory.

``DIR/heads.parquet`` and ``DIR/spectra.parquet`` (required), the statistics tables of
``DIR/stats/`` (computed with :func:`qkforms.stats.observations` and written there when
missing), ``DIR/manifest.json`` (optional) and, for RoPE models, the reduced factors
``DIR/factors/<key>.npz`` named in the manifest (read with ``allow_pickle=False``).

Examples
--------
>>> from qkforms.report.data import ReportData
>>> ReportData.__dataclass_fields__.keys() >= {"heads", "tables", "manifest"}
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qkforms.errors import QKFormsError
from qkforms.stats.table import Table, read_parquet

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
    if pq.is_file():
        return read_parquet(pq)
    return None


def load(
    directory: str | Path, *, seed: int = 0, n_boot: int = 1000, fits: bool = True,
    recompute: bool = False,
) -> ReportData:
    """Read a survey directory; compute and write ``DIR/stats`` if it is missing.

    Raises
    ------
    QKFormsError
        If ``heads.parquet`` or ``spectra.parquet`` is missing.

    Examples
    --------
    >>> from qkforms.report.data import load
    >>> try:
    ...     load("/nonexistent-survey-dir")
    ... except Exception as exc:
    ...     print(type(exc).__name__)
    QKFormsError
    """
    from qkforms.stats import TABLES, observations
    from qkforms.stats.output import write_tables

    d = Path(directory)
    heads_raw = read_parquet(d / "heads.parquet")
    spectra = read_parquet(d / "spectra.parquet")
    stats_dir = d / "stats"
    tables: dict[str, Table] = {}
    computed = False
    if not recompute:
        for name in TABLES:
            t = _read_table(stats_dir / name)
            if t is not None:
                tables[name] = t
    if recompute or "head_stats" not in tables:
        tables = observations(heads_raw, spectra, seed=seed, n_boot=n_boot, fits=fits)
        write_tables(tables, stats_dir, header=f"Computed by `qkforms report` (seed {seed}).")
        computed = True
    manifest: dict[str, Any] = {}
    mpath = d / "manifest.json"
    if mpath.is_file():
        from qkforms._fs import read_json

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
