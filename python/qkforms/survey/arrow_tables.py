"""Arrow tables of the survey: one layer's rows, and the merge of all layers.

The columns and their types come from :mod:`qkforms.survey.schema`; the values from
the Gram engine (:class:`qkforms.gram.LayerSpectra`), the per-head statistics
(:func:`qkforms.survey.head_statistics.head_columns`), exact certification and the certified
enclosures (:func:`certify_columns`). pyarrow is
imported here and only here (besides the store's parquet I/O).

Examples
--------
>>> import numpy as np
>>> from qkforms.gram import layer_spectra
>>> from qkforms.survey.head_statistics import head_columns
>>> from qkforms.survey.arrow_tables import heads_table
>>> rng = np.random.default_rng(0)
>>> sp = layer_spectra(rng.standard_normal((2, 2, 9)), rng.standard_normal((1, 2, 9)),
...                    np.array([0, 0]))
>>> t = heads_table("toy", 0, np.array([0, 0]), 9, 2, sp.error, head_columns(sp, N=9, n=2))
>>> t.num_rows, t.column("n_zero").to_pylist(), t.column("prediction").to_pylist()
(2, [5, 5], ['thm3', 'thm3'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from qkforms.gram import LayerSpectra
from qkforms.survey.schema import (
    BAND_COLUMNS,
    BOOL_COLUMNS,
    CERTIFY_COLUMNS,
    FLOAT_COLUMNS,
    INT_COLUMNS,
    SPECTRA,
    STRING_COLUMNS,
    heads_schema,
    spectra_schema,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["band_columns", "certify_columns", "concat_tables", "heads_table", "list_array",
           "spectra_table"]


def list_array(values: NDArray[np.float64]) -> pa.ListArray:
    """A pyarrow ``list<double>`` array with one row per row of a 2-D array.

    Examples
    --------
    >>> import numpy as np
    >>> list_array(np.array([[1.0, 2.0], [3.0, 4.0]])).to_pylist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    import pyarrow as pa

    rows, width = values.shape
    offsets = pa.array(np.arange(rows + 1, dtype=np.int32) * width, type=pa.int32())
    return pa.ListArray.from_arrays(offsets, pa.array(values.reshape(-1), type=pa.float64()))


def heads_table(model: str, layer: int, kv_index: NDArray[np.int64], N: int, n: int,
                error: Sequence[str | None], cols: dict[str, NDArray],
                certify: Mapping[str, Sequence[Any]] | None = None, *, step: int | None = None,
                tokens_seen: int | None = None,
                bands: Mapping[str, Sequence[Any]] | None = None) -> pa.Table:
    """The ``heads.parquet`` rows of one layer.

    Parameters
    ----------
    model, layer, kv_index, N, n
        The identifying columns.
    step, tokens_seen
        The checkpoint's place in a training run (null for a single model).
    error
        Why each head is not ``ok`` (None for ok heads).
    cols
        Output of :func:`qkforms.survey.head_statistics.head_columns` (``status`` and every
        statistic column; NaN or None is null), possibly decided further by ``--exact``.
    certify
        The :data:`~qkforms.survey.schema.CERTIFY_COLUMNS` (a list per column, None
        where not certified); all null when not given (no ``--certify``).
    bands
        The :data:`~qkforms.survey.schema.BAND_COLUMNS` (:func:`band_columns`); all null
        when not given (no ``--precision-bands``).
    """
    import pyarrow as pa

    n_q = int(kv_index.shape[0])
    data: dict[str, Any] = {
        "model": pa.array([model] * n_q, type=pa.string()),
        "step": pa.array([step] * n_q, type=pa.int64()),
        "tokens_seen": pa.array([tokens_seen] * n_q, type=pa.int64()),
        "layer": pa.array(np.full(n_q, layer, dtype=np.int32)),
        "head": pa.array(np.arange(n_q, dtype=np.int32)),
        "kv_head": pa.array(kv_index.astype(np.int32)),
        "N": pa.array(np.full(n_q, N, dtype=np.int32)),
        "n": pa.array(np.full(n_q, n, dtype=np.int32)),
        "status": pa.array([str(v) for v in cols["status"]], type=pa.string()),
        "error": pa.array(list(error), type=pa.string()),
    }
    for name in INT_COLUMNS:
        vals = np.asarray(cols[name], dtype=np.float64)
        null = ~np.isfinite(vals)
        data[name] = pa.array(np.where(null, 0, vals).astype(np.int32), mask=null)
    for name in FLOAT_COLUMNS:
        vals = np.asarray(cols[name], dtype=np.float64)
        data[name] = pa.array(vals, mask=np.isnan(vals), type=pa.float64())
    for name in BOOL_COLUMNS:
        data[name] = pa.array([None if v is None else bool(v) for v in cols[name]],
                              type=pa.bool_())
    for name in STRING_COLUMNS:
        data[name] = pa.array([None if v is None else str(v) for v in cols[name]],
                              type=pa.string())
    schema = heads_schema()
    for name in CERTIFY_COLUMNS:
        values = [None] * n_q if certify is None else list(certify[name])
        data[name] = pa.array(values, type=schema.field(name).type)
    for name in BAND_COLUMNS:
        values = [None] * n_q if bands is None else list(bands[name])
        data[name] = pa.array(values, type=schema.field(name).type)
    return pa.table([data[f.name] for f in schema], schema=schema)


def spectra_table(model: str, layer: int, sp: LayerSpectra,
                  valid: NDArray[np.bool_], *, step: int | None = None) -> pa.Table:
    """The ``spectra.parquet`` rows of one layer (its valid heads).

    The list columns are the :class:`~qkforms.gram.LayerSpectra` fields of the same
    names (:data:`qkforms.survey.schema.SPECTRA`).
    """
    import pyarrow as pa

    ok = np.flatnonzero(valid)
    data: dict[str, Any] = {
        "model": pa.array([model] * ok.size, type=pa.string()),
        "step": pa.array([step] * ok.size, type=pa.int64()),
        "layer": pa.array(np.full(ok.size, layer, dtype=np.int32)),
        "head": pa.array(ok.astype(np.int32)),
    }
    for c in SPECTRA:
        if c.source == "spectra":
            data[c.name] = list_array(getattr(sp, c.name)[ok])
    schema = spectra_schema()
    return pa.table([data[f.name] for f in schema], schema=schema)


def concat_tables(parts: Sequence[pa.Table], kind: str) -> pa.Table:
    """Concatenate layer tables of ``kind`` (``"heads"`` or ``"spectra"``); empty if none.

    Examples
    --------
    >>> concat_tables([], "spectra").num_rows
    0
    """
    import pyarrow as pa

    if parts:
        return pa.concat_tables(parts)
    return (heads_schema() if kind == "heads" else spectra_schema()).empty_table()


def certify_columns(enclosures: Sequence[Any]) -> dict[str, list[Any]]:
    """The :data:`~qkforms.survey.schema.CERTIFY_COLUMNS` of a layer's heads.

    Parameters
    ----------
    enclosures
        Per head, a :class:`qkforms.exact.Enclosure` or None (not certified).

    Examples
    --------
    >>> from qkforms.exact import enclose
    >>> cols = certify_columns([enclose([[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]]), None])
    >>> cols["certify_method"], cols["a_lo"][1]
    (['rump', None], None)
    """
    import math

    out: dict[str, list[Any]] = {name: [] for name in CERTIFY_COLUMNS}
    for enc in enclosures:
        values = {} if enc is None else {
            **{k: (None if math.isnan(v) else v) for k, v in enc.columns().items()},
            "certify_method": enc.method,
        }
        for name in CERTIFY_COLUMNS:
            out[name].append(values.get(name))
    return out


def band_columns(bands: Sequence[Any]) -> dict[str, list[Any]]:
    """The :data:`~qkforms.survey.schema.BAND_COLUMNS` of a layer's heads.

    Parameters
    ----------
    bands
        Per head, a :class:`qkforms.bands.Band` or None (no band).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.bands import precision_band
    >>> b = precision_band([[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]], np.full((1, 3), 1e-3),
    ...                    np.full((1, 3), 1e-3))
    >>> cols = band_columns([b, None])
    >>> cols["band_kind"], cols["a_band_lo"][1]
    (['rigorous-float', None], None)
    """
    import math

    out: dict[str, list[Any]] = {name: [] for name in BAND_COLUMNS}
    for band in bands:
        values = {} if band is None else {
            k: (None if isinstance(v, float) and math.isnan(v) else v)
            for k, v in band.columns().items()}
        for name in BAND_COLUMNS:
            out[name].append(values.get(name))
    return out
