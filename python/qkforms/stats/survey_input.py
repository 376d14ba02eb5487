"""Checking survey tables read back: ``heads.parquet`` and ``spectra.parquet`` as input.

``qkforms stats`` and ``qkforms report`` (and :func:`qkforms.stats.observation_tables`) take
these tables from the user, so every one is checked against the schema of
:mod:`qkforms.survey.schema` before a statistic is computed from it
(``docs/files.md``, "Tables read as input"):

* **columns and types** -- the columns the statistics read are present; every column
  of the schema that is present holds its type (a ``balance`` column of strings is
  refused, not parsed);
* **nulls** -- a column whose schema says it is never null has no null;
* **NaN** -- the survey writes null where a value is missing or undefined, never NaN,
  so a NaN in an ``ok`` row is refused (:func:`read_heads`; in memory, null and NaN
  are one value, so this check runs on the Parquet file);
* **duplicates** -- no two rows of one table describe the same head
  (``model``, ``step``, ``layer``, ``head``);
* **spectra** -- every ``ok`` head has its spectra row;
* **training runs** -- every checkpoint (step) of a model has the same heads with the
  same shapes ``N``, ``n``: the checkpoints of one run share one architecture.

Each failure is one :class:`~qkforms.errors.QKFormsError` naming the file, the column
and the first offending row.

Examples
--------
>>> from qkforms.stats.table import Table
>>> from qkforms.stats.survey_input import check_heads
>>> rows = Table({"model": ["m", "m"], "layer": [0, 0], "head": [0, 0]})
>>> try:
...     check_heads(rows, "heads.parquet", required=())
... except Exception as exc:
...     print(str(exc).split(";")[0])
heads.parquet: rows 0 and 1 describe the same head (model 'm', layer 0, head 0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from qkforms.errors import MissingColumnError, QKFormsError, format_value
from qkforms.stats.table import Table, read_arrow
from qkforms.survey.schema import (
    HEADS,
    SPECTRA,
    SPECTRA_READ_COLUMNS,
    STAT_READ_COLUMNS,
    Column,
)

if TYPE_CHECKING:
    from qkforms.stats.table import Table

__all__ = ["check_heads", "check_spectra", "read_heads", "read_spectra", "read_survey"]

#: the columns that name one head of a survey table
KEY_COLUMNS = ("model", "step", "layer", "head")
#: status of a head whose statistics were computed
OK = "ok"

_INT_RANGE = {"int32": 2**31, "int64": 2**63}
_WHAT = {"string": "text", "int32": "integers", "int64": "integers", "double": "numbers",
         "bool": "true/false values", "list<double>": "lists of numbers"}


def _is_null(v: Any) -> bool:
    return v is None or (isinstance(v, float | np.floating) and math.isnan(v))


def _bad_value(col: Column, v: Any) -> bool:
    """Whether one (non-null) value does not belong in a column of ``col.type``."""
    if col.type == "string":
        return not isinstance(v, str)
    if col.type == "bool":
        return not isinstance(v, bool | np.bool_)
    if col.type == "list<double>":
        if not isinstance(v, list | tuple | np.ndarray):
            return True
        arr = np.asarray(v)
        return arr.ndim != 1 or (arr.size > 0 and arr.dtype.kind not in "fiu")
    if isinstance(v, bool | np.bool_) or not isinstance(v, int | float | np.integer | np.floating):
        return True
    if col.type in _INT_RANGE:
        if isinstance(v, float | np.floating) and (not math.isfinite(v) or v != int(v)):
            return True
        return not -_INT_RANGE[col.type] <= int(v) < _INT_RANGE[col.type]
    return False


def _first_bad(arr: np.ndarray, col: Column) -> int:
    """Index of the first value of the wrong type for ``col`` (-1: none); vectorized
    for numeric arrays, per value for object arrays."""
    kind = arr.dtype.kind
    if kind in "fiu":
        if col.type == "double":
            return -1
        if col.type not in _INT_RANGE:
            return 0
        with np.errstate(invalid="ignore"):
            vals = arr.astype(np.float64)
            null = np.isnan(vals)
            bad = ~null & ((vals != np.round(vals)) | ~np.isfinite(vals)
                           | (np.abs(vals) >= _INT_RANGE[col.type]))
        return int(np.argmax(bad)) if bad.any() else -1
    if kind == "b":
        return -1 if col.type == "bool" else 0
    if kind in "US":
        return -1 if col.type == "string" and kind == "U" else 0
    if kind != "O":
        return 0
    return next((i for i, v in enumerate(arr) if not _is_null(v) and _bad_value(col, v)), -1)


def _check_column(values: Any, col: Column, where: str) -> None:
    arr = np.asarray(values)
    if arr.ndim != 1:
        arr = np.asarray(list(values), dtype=object)
    bad = _first_bad(arr, col) if arr.size else -1
    if bad >= 0:
        raise QKFormsError(
            f"{where}: column {col.name!r} must hold {_WHAT[col.type]} ({col.type}), but row "
            f"{bad} holds {format_value(arr[bad])} ({type(arr[bad]).__name__}); the file "
            "is not a survey output (docs/survey.md, \"Output files\")")
    if not col.nullable:
        if arr.dtype.kind == "f":
            nulls = np.flatnonzero(np.isnan(arr))
            null = int(nulls[0]) if nulls.size else -1
        elif arr.dtype.kind == "O":
            null = next((i for i, v in enumerate(arr) if _is_null(v)), -1)
        else:
            null = -1
        if null >= 0:
            raise QKFormsError(f"{where}: column {col.name!r} is null in row {null}; the "
                               "schema says it never is (docs/survey.md, \"Output files\")")


def _keys(t: Table) -> list[tuple[Any, ...]]:
    n = len(t)
    out = []
    cols = [t[c].tolist() if c in t else [None] * n for c in KEY_COLUMNS]
    for row in zip(*cols, strict=True):
        out.append(tuple(None if _is_null(v) else (int(v) if i else v)
                         for i, v in enumerate(row)))
    return out


def _describe(key: tuple[Any, ...]) -> str:
    parts = [f"{name} {format_value(v)}" for name, v in zip(KEY_COLUMNS, key, strict=True)
             if v is not None]
    return ", ".join(parts)


def _check_duplicates(keys: list[tuple[Any, ...]], where: str) -> None:
    seen: dict[tuple[Any, ...], int] = {}
    for i, k in enumerate(keys):
        first = seen.setdefault(k, i)
        if first != i:
            raise QKFormsError(f"{where}: rows {first} and {i} describe the same head "
                               f"({_describe(k)}); a survey table has one row per head")


def _check_series(t: Table, keys: list[tuple[Any, ...]], where: str) -> None:
    """Every step of a model has the same heads with the same shapes (N, n)."""
    if "step" not in t or "N" not in t or "n" not in t:
        return
    shapes: dict[Any, dict[Any, set[tuple[int, int, int, int]]]] = {}
    for (model, step, layer, head), N, n in zip(keys, t["N"].tolist(), t["n"].tolist(),
                                                strict=True):
        if step is None:
            continue
        shapes.setdefault(model, {}).setdefault(step, set()).add(
            (layer, head, int(N), int(n)))
    for model, steps in shapes.items():
        first = min(steps)
        for step in sorted(steps):
            if steps[step] == steps[first]:
                continue
            diff = sorted(steps[step] ^ steps[first])[0]
            at = step if diff in steps[step] else first
            raise QKFormsError(
                f"{where}: model {format_value(model)} is a training run whose checkpoints "
                f"differ: step {first} and step {step} do not have the same heads and shapes "
                f"(layer {diff[0]} head {diff[1]} with N = {diff[2]}, n = {diff[3]} exists "
                f"only at step {at}); the checkpoints of one run share one architecture")


def check_heads(t: Table, where: str = "heads table", *,
                required: Sequence[str] = STAT_READ_COLUMNS) -> Table:
    """Check rows of ``heads.parquet`` (in memory); return them.

    Raises
    ------
    MissingColumnError
        A column of ``required`` is absent.
    QKFormsError
        A column of the wrong type, a null where the schema allows none, two rows of
        one head, or a training run whose checkpoints differ in shape.

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> try:
    ...     check_heads(Table({"balance": ["1.0"]}), "h.parquet", required=())
    ... except Exception as exc:
    ...     print(str(exc).split(";")[0])
    h.parquet: column 'balance' must hold numbers (double), but row 0 holds '1.0' (str)
    """
    missing = [c for c in required if c not in t]
    if missing:
        raise MissingColumnError(f"{where}: lacks the column(s) {', '.join(missing)} of a "
                                 "survey heads table (docs/survey.md, \"Output files\")")
    for col in HEADS:
        if col.name in t:
            _check_column(t[col.name], col, where)
    keys = _keys(t)
    _check_duplicates(keys, where)
    _check_series(t, keys, where)
    return t


def check_spectra(spectra: Table, heads: Table | None = None,
                  where: str = "spectra table") -> Table:
    """Check rows of ``spectra.parquet`` (and that every ok head of ``heads`` has one).

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> h = Table({"model": ["m"], "layer": [0], "head": [3], "status": ["ok"]})
    >>> s = Table({"model": ["m"], "layer": [0], "head": [1], "eig_S": [[1.0, -1.0]],
    ...            "sv_T": [[0.0]], "abs_eig_L": [[1.0]]})
    >>> try:
    ...     check_spectra(s, h, "s.parquet")
    ... except Exception as exc:
    ...     print(str(exc).split(";")[0])
    s.parquet: no spectra row for the ok head model 'm', layer 0, head 3
    """
    missing = [c for c in SPECTRA_READ_COLUMNS if c not in spectra]
    if missing:
        raise MissingColumnError(f"{where}: lacks the column(s) {', '.join(missing)} of a "
                                 "survey spectra table (docs/survey.md, \"Output files\")")
    for col in SPECTRA:
        if col.name in spectra:
            _check_column(spectra[col.name], col, where)
    keys = _keys(spectra)
    _check_duplicates(keys, where)
    if heads is not None and "status" in heads:
        have = set(keys)
        unstepped = {(m, la, h) for m, _, la, h in keys}  # rows without a step match any
        for k, status in zip(_keys(heads), heads["status"].tolist(), strict=True):
            if status == OK and k not in have and not (
                    k[1] is None and (k[0], k[2], k[3]) in unstepped):
                raise QKFormsError(f"{where}: no spectra row for the ok head {_describe(k)}; "
                                   "the heads and spectra tables are not of one survey")
    return spectra


def _nan_in_ok_rows(table: Any, where: str) -> None:
    """Refuse a NaN (not a null) in a floating-point column of an ``ok`` row (arrow level)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if "status" not in table.column_names:
        return
    ok = pc.fill_null(pc.equal(table.column("status").cast(pa.string()), OK), False)
    for col in HEADS:
        if col.type != "double" or col.name not in table.column_names:
            continue
        values = table.column(col.name)
        if not pa.types.is_floating(values.type):
            continue
        nan = pc.fill_null(pc.and_(pc.is_nan(values), ok), False)
        count = pc.sum(nan).as_py() or 0
        if count:
            row = pc.index(nan, True).as_py()
            raise QKFormsError(
                f"{where}: column {col.name!r} is NaN in {count} 'ok' row(s) (first: row "
                f"{row}); the survey writes null, never NaN, where a statistic is missing or "
                "undefined, so the file is not a survey output (rerun the survey)")


def _read(path: Path) -> Any:
    return read_arrow(path)


def read_heads(path: str | Path) -> Table:
    """Read and check ``heads.parquet`` (:func:`check_heads`, and no NaN in ``ok`` rows).

    Examples
    --------
    >>> import math, pathlib, tempfile
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "heads.parquet"
    >>> pq.write_table(pa.table({"model": ["m"], "head": [0], "layer": [0],
    ...                          "status": ["ok"], "a": [math.nan]}), p)
    >>> try:
    ...     read_heads(p)
    ... except Exception as exc:
    ...     print(str(exc).split(";")[0].split(": ", 1)[1])
    column 'a' is NaN in 1 'ok' row(s) (first: row 0)
    """
    table = _read(Path(path))
    _nan_in_ok_rows(table, str(path))
    return check_heads(Table(table.to_pydict()), str(path))


def read_spectra(path: str | Path, heads: Table | None = None) -> Table:
    """Read and check ``spectra.parquet`` (:func:`check_spectra`)."""
    return check_spectra(Table(_read(Path(path)).to_pydict()), heads, str(path))


def read_survey(directory: str | Path) -> tuple[Table, Table]:
    """``(heads, spectra)`` of a survey directory, both read and checked.

    Raises
    ------
    QKFormsError
        If a table is missing, unreadable or fails a check (naming the file).
    """
    d = Path(directory)
    heads = read_heads(d / "heads.parquet")
    return heads, read_spectra(d / "spectra.parquet", heads)
