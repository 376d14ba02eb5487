"""A small column table: the "DataFrame-like" value the statistics return.

The statistics must not need pandas (not a dependency of qkforms), so tables are
kept as ordered mappings ``column -> 1-d numpy array`` with a few conveniences:
row access, CSV and Parquet writing, conversion to pandas or pyarrow when those
are installed, and a Markdown rendering for ``observations.md``.

Input tables (the survey's ``heads.parquet`` and ``spectra.parquet``) may be given
as a :class:`Table`, a pandas DataFrame, a pyarrow Table or a plain mapping of
columns; :func:`as_table` accepts all of them.

Examples
--------
>>> from qkforms.stats.table import Table
>>> t = Table({"model": ["m", "m"], "x": [1.0, 2.5]})
>>> len(t), t.columns
(2, ['model', 'x'])
>>> t.row(1)
{'model': 'm', 'x': 2.5}
>>> print(t.to_csv_string(), end="")
model,x
m,1
m,2.5
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms._fs import MAX_TABLE_BYTES, atomic_write, read_bytes
from qkforms.errors import MissingColumnError, QKFormsError, ShapeError, format_value

__all__ = ["Table", "as_table", "concat", "read_arrow", "read_parquet"]


def _as_column(values: Any) -> NDArray[Any]:
    """Turn a sequence into a 1-d numpy array (object dtype for lists and mixed values)."""
    if isinstance(values, np.ndarray) and values.ndim == 1:
        return values
    seq = list(values)
    if not seq:
        return np.asarray([], dtype=np.float64)
    if any(isinstance(v, (list, tuple, np.ndarray)) for v in seq):
        col = np.empty(len(seq), dtype=object)
        for i, v in enumerate(seq):
            col[i] = None if v is None else np.asarray(v, dtype=np.float64)
        return col
    if all(isinstance(v, (bool, np.bool_)) for v in seq):
        return np.asarray(seq, dtype=bool)
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in seq):
        return np.asarray(seq, dtype=np.int64)
    numeric = (int, float, np.integer, np.floating)
    if any(v is not None for v in seq) and all(
        v is None or (isinstance(v, numeric) and not isinstance(v, (bool, np.bool_))) for v in seq
    ):
        return np.asarray([np.nan if v is None else float(v) for v in seq], dtype=np.float64)
    col = np.empty(len(seq), dtype=object)
    for i, v in enumerate(seq):
        col[i] = v
    return col


class Table:
    """Ordered columns of equal length (numpy arrays).

    Parameters
    ----------
    columns : mapping of str to sequence
        Column name to values. Lists of lists become object columns of arrays.

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> t = Table({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    >>> t["a"].tolist(), t.take([2, 0])["b"].tolist()
    ([1, 2, 3], ['z', 'x'])
    """

    def __init__(self, columns: Mapping[str, Any] | None = None) -> None:
        self._cols: dict[str, NDArray[Any]] = {}
        length: int | None = None
        for name, values in (columns or {}).items():
            col = _as_column(values)
            if length is None:
                length = len(col)
            elif len(col) != length:
                raise ShapeError(
                    f"column {name!r} has {len(col)} values but earlier columns have {length}"
                )
            self._cols[str(name)] = col
        self._len = length or 0

    # -- mapping-like access ---------------------------------------------------
    @property
    def columns(self) -> list[str]:
        """Column names in order.

        Examples
        --------
        >>> Table({"x": [1], "y": [2]}).columns
        ['x', 'y']
        """
        return list(self._cols)

    def __len__(self) -> int:
        return self._len

    def __contains__(self, name: object) -> bool:
        return name in self._cols

    def __getitem__(self, name: str) -> NDArray[Any]:
        try:
            return self._cols[name]
        except KeyError:
            raise MissingColumnError(f"no column {format_value(name)}; columns are "
                                     f"{format_value(self.columns)}") from None

    def get(self, name: str, default: Any = None) -> Any:
        """Return a column, or ``default`` when it is missing.

        Examples
        --------
        >>> Table({"x": [1]}).get("z") is None
        True
        """
        return self._cols.get(name, default)

    def __eq__(self, other: object) -> bool:  # exact equality (NaN == NaN)
        if not isinstance(other, Table) or self.columns != other.columns or len(self) != len(other):
            return False
        for name in self.columns:
            x, y = self[name], other[name]
            if x.dtype.kind == "f" and y.dtype.kind == "f":
                if not np.array_equal(x, y, equal_nan=True):
                    return False
            elif [_plain(v) for v in x] != [_plain(v) for v in y]:
                return False
        return True

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Table({len(self)} rows; columns={self.columns})"

    def row(self, i: int) -> dict[str, Any]:
        """Row ``i`` as a dict of plain Python values.

        Examples
        --------
        >>> Table({"x": [1.5, 2.5]}).row(1)
        {'x': 2.5}
        """
        return {name: _plain(col[i]) for name, col in self._cols.items()}

    def rows(self) -> Iterator[dict[str, Any]]:
        """Iterate over rows as dicts.

        Examples
        --------
        >>> [r["x"] for r in Table({"x": [1, 2]}).rows()]
        [1, 2]
        """
        for i in range(len(self)):
            yield self.row(i)

    def take(self, index: Sequence[int] | NDArray[Any]) -> Table:
        """Rows at ``index`` (integer positions or a boolean mask).

        Examples
        --------
        >>> Table({"x": [1, 2, 3]}).take([True, False, True])["x"].tolist()
        [1, 3]
        """
        idx = np.asarray(index)
        return Table({k: v[idx] for k, v in self._cols.items()})

    def where(self, name: str, value: Any) -> Table:
        """Rows whose column ``name`` equals ``value``.

        Examples
        --------
        >>> Table({"m": ["a", "b"], "x": [1, 2]}).where("m", "b")["x"].tolist()
        [2]
        """
        col = self[name]
        return self.take(np.asarray([v == value for v in col], dtype=bool))

    def with_column(self, name: str, values: Any) -> Table:
        """A copy with column ``name`` added or replaced.

        Examples
        --------
        >>> Table({"x": [1]}).with_column("y", [2.0]).columns
        ['x', 'y']
        """
        cols: dict[str, Any] = dict(self._cols)
        cols[name] = values
        return Table(cols)

    def select(self, names: Iterable[str]) -> Table:
        """A copy with only the given columns, in the given order.

        Examples
        --------
        >>> Table({"x": [1], "y": [2]}).select(["y"]).columns
        ['y']
        """
        return Table({n: self[n] for n in names})

    def to_dict(self) -> dict[str, list[Any]]:
        """Columns as lists of plain Python values.

        Examples
        --------
        >>> Table({"x": [1.0], "v": [[1.0, 2.0]]}).to_dict()
        {'x': [1.0], 'v': [[1.0, 2.0]]}
        """
        return {k: [_plain(v) for v in col] for k, col in self._cols.items()}

    # -- output ---------------------------------------------------------------
    def to_csv_string(self) -> str:
        """CSV text (list cells are written as space-separated numbers).

        Examples
        --------
        >>> print(Table({"v": [[1.0, 2.0]], "x": [None]}).to_csv_string(), end="")
        v,x
        1.0 2.0,
        """
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.columns)
        for row in self.rows():
            writer.writerow([_csv_cell(v) for v in row.values()])
        return buf.getvalue()

    def to_csv(self, path: str | Path, *, root: str | Path | None = None) -> Path:
        """Write CSV to ``path`` (atomically; below ``root`` no link is followed); return it.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> p = Table({"x": [1]}).to_csv(pathlib.Path(tempfile.mkdtemp()) / "t.csv")
        >>> p.read_text().splitlines()
        ['x', '1']
        """
        path = Path(path)
        atomic_write(path, self.to_csv_string().encode("utf-8"), root=root)
        return path

    def to_arrow(self) -> Any:
        """A ``pyarrow.Table`` (needs pyarrow).

        Examples
        --------
        >>> Table({"x": [1.0]}).to_arrow().num_rows
        1
        """
        import pyarrow as pa

        arrays = {}
        for name, col in self._cols.items():
            if col.dtype == object:
                arrays[name] = pa.array([_plain(v) for v in col])
            else:
                arrays[name] = pa.array(col)
        return pa.table(arrays)

    def to_parquet(self, path: str | Path, *, root: str | Path | None = None) -> Path:
        """Write Parquet to ``path`` (needs pyarrow; atomically, as :meth:`to_csv`).

        Examples
        --------
        >>> import tempfile, pathlib
        >>> from qkforms.stats.table import read_parquet
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.parquet"
        >>> read_parquet(Table({"x": [1.0]}).to_parquet(p))["x"].tolist()
        [1.0]
        """
        import pyarrow.parquet as pq

        path = Path(path)
        table = self.to_arrow()
        atomic_write(path, lambda f: pq.write_table(table, f), root=root)
        return path

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` (needs pandas).

        Examples
        --------
        >>> Table({"x": [1.0]}).to_pandas().shape
        (1, 1)
        """
        import pandas as pd

        return pd.DataFrame({k: list(v) if v.dtype == object else v for k, v in self._cols.items()})

    def to_markdown(self, columns: Sequence[str] | None = None, digits: int = 4) -> str:
        """A GitHub Markdown table of the given columns (all by default).

        Examples
        --------
        >>> print(Table({"m": ["a"], "x": [0.5]}).to_markdown())
        | m | x |
        |---|---|
        | a | 0.5000 |
        """
        names = list(columns) if columns is not None else self.columns
        names = [n for n in names if n in self._cols]
        lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
        for row in self.rows():
            lines.append("| " + " | ".join(_fmt(row[n], digits) for n in names) + " |")
        return "\n".join(lines)


def _plain(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    return v


def _csv_cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, list):
        return " ".join(repr(float(x)) for x in v)
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return repr(v) if not v.is_integer() else str(int(v)) if abs(v) < 1e15 else repr(v)
    return str(v)


def _fmt(v: Any, digits: int) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return "–"
        if v != 0 and (abs(v) < 10 ** (-digits) or abs(v) >= 1e6):
            return f"{v:.{digits - 1}e}"
        return f"{v:.{digits}f}"
    return str(v)


def as_table(obj: Any) -> Table:
    """Convert a Table, pandas DataFrame, pyarrow Table or mapping of columns to a Table.

    Examples
    --------
    >>> from qkforms.stats.table import as_table
    >>> as_table({"x": [1.0, 2.0]}).columns
    ['x']
    """
    if isinstance(obj, Table):
        return obj
    if hasattr(obj, "column_names") and hasattr(obj, "to_pydict"):  # pyarrow
        return Table(obj.to_pydict())
    if hasattr(obj, "to_dict") and hasattr(obj, "columns") and hasattr(obj, "iloc"):  # pandas
        return Table({str(c): list(obj[c]) if obj[c].dtype == object else obj[c].to_numpy()
                      for c in obj.columns})
    if isinstance(obj, Mapping):
        return Table(obj)
    raise QKFormsError(
        f"cannot read a table from {type(obj).__name__}; "
        "give a qkforms Table, a pandas DataFrame, a pyarrow Table or a dict of columns"
    )


def concat(tables: Sequence[Table]) -> Table:
    """Stack tables with the same columns (the first table's order) row-wise.

    Examples
    --------
    >>> from qkforms.stats.table import Table, concat
    >>> concat([Table({"x": [1]}), Table({"x": [2, 3]})])["x"].tolist()
    [1, 2, 3]
    """
    tables = [t for t in tables if len(t.columns)]
    if not tables:
        return Table()
    names = tables[0].columns
    out: dict[str, list[Any]] = {n: [] for n in names}
    for t in tables:
        for n in names:
            col = t.get(n)
            out[n].extend(list(col) if col is not None else [None] * len(t))
    return Table(out)


def read_arrow(path: str | Path) -> Any:
    """Read a Parquet file into a ``pyarrow.Table`` (regular files of bounded size only).

    Raises
    ------
    QKFormsError
        If the file is missing, too large, damaged, or pyarrow is not installed.

    Examples
    --------
    >>> from qkforms.stats.table import read_arrow
    >>> try:
    ...     read_arrow("/nonexistent/heads.parquet")
    ... except Exception as exc:
    ...     print(type(exc).__name__)
    QKFormsError
    """
    path = Path(path)
    if not os.path.lexists(path):
        raise QKFormsError(f"{path} does not exist; run `qkforms survey --out DIR` first")
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise QKFormsError(
            "reading Parquet needs pyarrow: pip install 'qkforms[survey]'"
        ) from exc
    # read whole (regular files of bounded size only), then parsed from memory: no
    # arrow I/O thread is left holding a Python file object when a damaged file fails
    raw = read_bytes(path, "table", limit=MAX_TABLE_BYTES)
    try:
        # ParquetFile, not read_table: read_table imports pandas (0.5 s of a stats step)
        return pq.ParquetFile(pa.BufferReader(raw)).read()
    except Exception as exc:  # noqa: BLE001 - pyarrow's ArrowInvalid & co. for a damaged file
        raise QKFormsError(f"{path}: not a readable Parquet file ({type(exc).__name__}: "
                           f"{exc}); rerun the survey that wrote it") from exc


def read_parquet(path: str | Path) -> Table:
    """Read a Parquet file into a Table (needs pyarrow; :func:`read_arrow`).

    Raises
    ------
    QKFormsError
        If the file is missing, damaged, or pyarrow is not installed.

    Examples
    --------
    >>> from qkforms.stats.table import read_parquet
    >>> try:
    ...     read_parquet("/nonexistent/heads.parquet")
    ... except Exception as exc:
    ...     print(type(exc).__name__)
    QKFormsError
    """
    return Table(read_arrow(path).to_pydict())
