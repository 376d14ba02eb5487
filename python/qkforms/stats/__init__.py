"""Observation tables from survey outputs (``qkforms stats DIR...``).

The survey calls :func:`observations` at its end; the command line reads
``DIR/heads.parquet`` and ``DIR/spectra.parquet`` and writes ``DIR/stats/``
(:func:`qkforms.stats.output.write_tables`). Definitions of every column are in
``docs/statistics.md``.

Examples
--------
>>> from qkforms.stats import TABLES
>>> TABLES[0]
'observation1_balance'
"""

from __future__ import annotations

from qkforms.stats.observation_tables import POOLED, TABLES, observations
from qkforms.stats.table import Table, as_table, concat, read_parquet

__all__ = ["POOLED", "TABLES", "Table", "as_table", "concat", "observations", "read_parquet"]
