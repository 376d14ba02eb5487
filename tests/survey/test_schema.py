"""The schema table is the one source of the survey's columns (docs, parquet, readers)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")

from qkforms.gram import LayerSpectra  # noqa: E402
from qkforms.survey import schema  # noqa: E402
from qkforms.survey.head_statistics import head_statistics  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def test_docs_tables_are_generated_from_the_schema() -> None:
    text = (ROOT / "docs" / "survey.md").read_text(encoding="utf-8")
    assert schema.markdown_table(schema.HEADS) in text
    assert schema.markdown_table(schema.SPECTRA) in text
    assert not schema.update_docs(ROOT / "docs" / "survey.md", check=True)


def test_architecture_lists_the_same_columns_in_order() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    sec = text[text.index("## 5. Survey outputs"):]
    heads = sec[sec.index("`DIR/heads.parquet`"):sec.index("`DIR/spectra.parquet`")]
    listed = heads.split("columns:", 1)[1].split(".\n", 1)[0]
    names = [w.strip("`,") for w in listed.split()]
    assert tuple(names) == schema.HEADS_COLUMNS


def test_parquet_schemas_follow_the_table() -> None:
    for cols, arrow in ((schema.HEADS, schema.heads_schema()),
                        (schema.SPECTRA, schema.spectra_schema())):
        assert arrow.names == [c.name for c in cols]
        for c in cols:
            f = arrow.field(c.name)
            assert f.nullable == c.nullable
            assert str(f.type).replace("item: ", "") == c.type.replace("double", "double")
    # the bookkeeping columns are never null, everything computed may be
    never = {c.name for c in schema.HEADS if not c.nullable}
    assert never == {"model", "layer", "head", "kv_head", "N", "n", "status"}


def test_statistics_function_fills_exactly_the_stat_columns() -> None:
    rng = np.random.default_rng(0)
    lam = np.sort(rng.standard_normal((3, 6)), axis=1)[:, ::-1]
    st = head_statistics(lam, np.full(3, 10.0), np.full(3, 1.0), np.zeros(3),
                         np.abs(lam[:, :3]) ** 2, N=12, n=3)
    stat = {c.name for c in schema.HEADS if c.source == "stat"}
    assert set(st) == stat
    assert (set(schema.INT_COLUMNS) | set(schema.FLOAT_COLUMNS) | set(schema.BOOL_COLUMNS)
            | set(schema.STRING_COLUMNS)) == stat
    assert set(schema.EXACT_COLUMNS) <= stat  # --exact decides a subset of them


def test_spectra_list_columns_are_engine_fields() -> None:
    fields = {f.name for f in dataclasses.fields(LayerSpectra)}
    for c in schema.SPECTRA:
        if c.source == "spectra":
            assert c.name in fields and c.type == "list<double>"


def test_stats_readers_derive_from_the_schema() -> None:
    import importlib

    observations = importlib.import_module("qkforms.stats.observation_tables")

    assert observations.HEAD_COLUMNS == schema.STAT_READ_COLUMNS
    assert set(observations.HEAD_COLUMNS) <= set(schema.HEADS_COLUMNS)
    assert observations.SPECTRA_READ_COLUMNS == schema.SPECTRA_READ_COLUMNS
    assert set(schema.SPECTRA_COLUMNS) - set(schema.SPECTRA_READ_COLUMNS) == {"step"}
    assert set(schema.HEADS_COLUMNS) - set(schema.STAT_READ_COLUMNS) == {
        "kv_head", "error", "step", "tokens_seen", *schema.CERTIFY_COLUMNS,
        *schema.BAND_COLUMNS}
    assert not set(schema.CERTIFY_COLUMNS) & set(schema.BAND_COLUMNS)
