"""Table cells shared by the statistics tables (docs/statistics.md "Conventions").

A table row is a dict of cells; :func:`put_median`, :func:`put_share` and
:func:`put_ratio` write an estimate with its 95 % bootstrap interval
(``<name>_ci_low``, ``<name>_ci_high``; :mod:`qkforms.stats.bootstrap`), resampled with
the replicates a :class:`Context` keeps per (table row, sample). :func:`scopes` yields a
row per model and the pooled row (:data:`POOLED`). Also here: the Observation 1 masks
(:func:`signature_masks`) that the observation tables and the training-run tables share.

Examples
--------
>>> import numpy as np
>>> row: dict = {}
>>> put_share(row, Context(0, 20), ("doc",), "share", np.array([True, False]), None)
>>> row["share"]
0.5
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms.errors import QKFormsError
from qkforms.stats.bootstrap import Draws, median_ci, ratio_of_medians_ci, rng_for, share_ci
from qkforms.stats.table import Table

__all__ = [
    "BALANCE_READ_COLUMNS",
    "Context",
    "POOLED",
    "BOOTSTRAP_SAMPLES",
    "floats",
    "ordered_unique",
    "put_median",
    "put_ratio",
    "put_share",
    "rows_to_table",
    "scopes",
    "signature_masks",
]

#: the heads.parquet columns of the Observation 1 counts
BALANCE_READ_COLUMNS: tuple[str, ...] = ("status", "n_pos", "n_neg", "n_zero", "N", "n",
                                         "signature_by", "surjective", "prediction",
                                         "prediction_met")
#: label of the pooled row
POOLED = "ALL"
#: the samples a table row resamples: its heads, the Gaussian baseline heads, a null
BOOTSTRAP_SAMPLES = ("heads", "baseline", "null")


def floats(col: Any) -> NDArray[np.float64]:
    """A column as float64, with null (None) as NaN.

    Examples
    --------
    >>> floats([1, None, 2.5]).tolist()
    [1.0, nan, 2.5]
    """
    out = np.empty(len(col), dtype=np.float64)
    for i, v in enumerate(col):
        out[i] = np.nan if v is None else float(v)
    return out


class Context:
    """Seed, bootstrap size and the replicates of every (table row, sample).

    Every statistic of a row's sample is resampled with the same replicates
    (:class:`~qkforms.stats.bootstrap.Draws` named ``(row key, sample)``; docs/statistics.md).

    Examples
    --------
    >>> Context(0, 10).rng("x").integers(5) == Context(0, 10).rng("x").integers(5)
    np.True_
    """

    def __init__(self, seed: int, n_boot: int) -> None:
        self.seed = seed
        self.n_boot = n_boot
        self._draws: dict[tuple, Draws] = {}

    def rng(self, *keys: Any) -> np.random.Generator:
        return rng_for(self.seed, "bootstrap", *keys)

    def draws(self, key: tuple, sample: str = "heads") -> Draws:
        """The replicates of ``sample`` (one of :data:`BOOTSTRAP_SAMPLES`) in the row ``key``."""
        if sample not in BOOTSTRAP_SAMPLES:
            raise QKFormsError(f"unknown bootstrap sample {sample!r}")
        d = self._draws.get((key, sample))
        if d is None:
            d = self._draws[(key, sample)] = Draws(self.seed, *key, sample)
        return d


def put_median(
    row: dict[str, Any], ctx: Context, key: tuple, name: str, x: NDArray, groups: Any,
    quantiles: tuple[int, int] | None = (10, 90), sample: str = "heads",
) -> None:
    """Write ``<name>_median`` with its interval, and the ``quantiles`` of ``x``.

    The interval resamples ``sample`` of the row ``key`` (within ``groups`` when given);
    the quantiles (``<name>_p10``, ``<name>_p90`` by default) skip NaN, keep +-inf.

    Examples
    --------
    >>> row: dict = {}
    >>> put_median(row, Context(0, 0), ("doc",), "x", np.array([1.0, 2.0, 9.0]), None)
    >>> row["x_median"], row["x_p10"]
    (2.0, 1.2)
    """
    est, lo, hi = median_ci(x, groups=groups, draws=ctx.draws(key, sample), n_boot=ctx.n_boot)
    row[f"{name}_median"] = est
    row[f"{name}_median_ci_low"] = lo
    row[f"{name}_median_ci_high"] = hi
    if quantiles is not None:
        finite = x[~np.isnan(x)]  # +-inf (e.g. rho of a NSD head) stay: they order fine
        with np.errstate(invalid="ignore"):
            q = np.quantile(finite, [quantiles[0] / 100, quantiles[1] / 100]) if finite.size \
                else [np.nan, np.nan]
        row[f"{name}_p{quantiles[0]}"] = float(q[0])
        row[f"{name}_p{quantiles[1]}"] = float(q[1])


def put_share(
    row: dict[str, Any], ctx: Context, key: tuple, name: str, mask: NDArray, groups: Any
) -> None:
    """Write the share of True in ``mask`` as ``name``, with its interval.

    Examples
    --------
    >>> row: dict = {}
    >>> put_share(row, Context(0, 0), ("doc",), "s", np.array([True, True, False, False]), None)
    >>> row["s"]
    0.5
    """
    est, lo, hi = share_ci(mask, groups=groups, draws=ctx.draws(key), n_boot=ctx.n_boot)
    row[name] = est
    row[f"{name}_ci_low"] = lo
    row[f"{name}_ci_high"] = hi


def put_ratio(
    row: dict[str, Any], ctx: Context, key: tuple, name: str, x: NDArray, y: NDArray,
    gx: Any, gy: Any, y_sample: str = "baseline",
) -> None:
    """Write median(x) / median(y) as ``name``, with its interval (``y`` from ``y_sample``).

    Examples
    --------
    >>> row: dict = {}
    >>> put_ratio(row, Context(0, 0), ("doc",), "r", np.array([2.0, 4.0, 6.0]),
    ...           np.array([1.0, 2.0, 3.0]), None, None)
    >>> row["r"]
    2.0
    """
    est, lo, hi = ratio_of_medians_ci(
        x, y, groups_x=gx, groups_y=gy, n_boot=ctx.n_boot, draws_x=ctx.draws(key),
        draws_y=ctx.draws(key, y_sample),
    )
    row[name] = est
    row[f"{name}_ci_low"] = lo
    row[f"{name}_ci_high"] = hi


def rows_to_table(rows: Sequence[dict[str, Any]]) -> Table:
    """The rows as a table: a column per key in order of first appearance, null where absent.

    Examples
    --------
    >>> rows_to_table([{"a": 1}, {"a": 2, "b": 3}])["b"].tolist()
    [nan, 3.0]
    """
    if not rows:
        return Table()
    names: list[str] = []
    for r in rows:
        for k in r:
            if k not in names:
                names.append(k)
    return Table({k: [r.get(k) for r in rows] for k in names})


def ordered_unique(values: Sequence[Any]) -> list[Any]:
    """The distinct values in order of first appearance.

    Examples
    --------
    >>> ordered_unique(["b", "a", "b"])
    ['b', 'a']
    """
    seen: dict[Any, None] = {}
    for v in values:
        seen.setdefault(v, None)
    return list(seen)


def scopes(models: NDArray) -> Iterator[tuple[str, NDArray[np.bool_], Any]]:
    """(label, mask, bootstrap groups): one scope per model, then the pooled scope.

    The pooled scope resamples heads within models (its groups are the models).

    Examples
    --------
    >>> [(label, m.tolist()) for label, m, _ in scopes(np.array(["a", "b", "a"]))]
    [('a', [True, False, True]), ('b', [False, True, False]), ('ALL', [True, True, True])]
    """
    names = ordered_unique(models.tolist())
    for m in names:
        yield str(m), models == m, None
    yield POOLED, np.ones(len(models), dtype=bool), models


def signature_masks(ok: Table) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """``(balanced, full_signature)`` masks of ok heads (Observation 1, Theorem 3).

    ``balanced``: ``n_pos == n_neg``; ``full_signature``: ``(n_pos, n_neg, n_zero) ==
    (n, n, N - 2n)``; both False where the signature is undecided (null).

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> t = Table({"n_pos": [2, 2], "n_neg": [2, 1], "n_zero": [4, 5], "N": [8, 8],
    ...            "n": [2, 2]})
    >>> [m.tolist() for m in signature_masks(t)]
    [[True, False], [True, False]]
    """
    n_pos, n_neg = floats(ok["n_pos"]), floats(ok["n_neg"])
    n_zero = floats(ok["n_zero"])
    N, n = floats(ok["N"]), floats(ok["n"])
    balanced = (n_pos == n_neg) & ~np.isnan(n_pos)
    full = (n_pos == n) & (n_neg == n) & (n_zero == N - 2 * n)
    return balanced, full


