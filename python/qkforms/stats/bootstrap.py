"""Seeded percentile-bootstrap confidence intervals over heads.

The resampling unit is the **head** (one row of ``heads.parquet``): a replicate
draws heads with replacement and recomputes the statistic. For a pooled statistic
(several models) the heads are resampled *within each model* (stratified
bootstrap), so every replicate keeps each model's head count; a per-model statistic
has a single stratum. Statistics that are undefined for some heads (e.g. the mode
ratio, defined only when all three gamma shapes exceed 1) are resampled among the
heads where they are defined. Intervals are the 2.5 % and 97.5 % percentiles of
``B`` replicates (default 1000).

Every random stream is seeded from the user's seed and the names of what it
serves (:func:`rng_for`), so results do not depend on the order of computation.

Examples
--------
>>> import numpy as np
>>> from qkforms.stats.bootstrap import median_ci, rng_for
>>> x = np.arange(101.0)
>>> med, lo, hi = median_ci(x, rng=rng_for(0, "demo"), n_boot=200)
>>> med, bool(lo < 50 < hi)
(50.0, True)
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Hashable

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "CI_LEVEL",
    "cliffs_delta",
    "cliffs_delta_ci",
    "median_ci",
    "ratio_of_medians_ci",
    "resample_index",
    "rng_for",
    "share_ci",
    "stat_ci",
]

#: two-sided level of every interval
CI_LEVEL = 0.95
DEFAULT_BOOT = 1000
#: most replicates accepted (``--bootstrap``): the index matrix is replicates x heads int64
MAX_BOOT = 20_000


def rng_for(seed: int, *keys: Hashable) -> np.random.Generator:
    """A generator seeded by ``seed`` and a stable hash (CRC-32) of each key.

    Examples
    --------
    >>> from qkforms.stats.bootstrap import rng_for
    >>> int(rng_for(0, "a", 3).integers(10**9)) == int(rng_for(0, "a", 3).integers(10**9))
    True
    """
    words = [int(seed) & 0xFFFFFFFF]
    words += [zlib.crc32(repr(k).encode("utf-8")) for k in keys]
    return np.random.default_rng(words)


def resample_index(
    groups: ArrayLike | None, size: int, n_boot: int, rng: np.random.Generator
) -> NDArray[np.int64]:
    """Index matrix ``(n_boot, size)`` of a bootstrap stratified by ``groups``.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.stats.bootstrap import resample_index
    >>> idx = resample_index(["x", "x", "y"], 3, 5, np.random.default_rng(0))
    >>> idx.shape, bool(np.all(idx[:, 2] == 2))
    ((5, 3), True)
    """
    if groups is None:
        return rng.integers(0, size, size=(n_boot, size))
    g = np.asarray(groups)
    out = np.empty((n_boot, size), dtype=np.int64)
    for value in _unique_in_order(g):
        members = np.flatnonzero(g == value)
        out[:, members] = members[rng.integers(0, len(members), size=(n_boot, len(members)))]
    return out


def _unique_in_order(g: NDArray) -> list:
    seen: dict = {}
    for v in g.tolist():
        seen.setdefault(v, None)
    return list(seen)


def stat_ci(
    values: ArrayLike,
    stat: Callable[[NDArray], NDArray],
    *,
    groups: ArrayLike | None = None,
    rng: np.random.Generator,
    n_boot: int = DEFAULT_BOOT,
) -> tuple[float, float, float]:
    """Statistic and percentile interval; ``stat`` maps ``(B, m)`` to ``(B,)`` along axis 1.

    NaN values are dropped first (with their groups). Empty input gives NaNs.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.stats.bootstrap import stat_ci, rng_for
    >>> est, lo, hi = stat_ci([1.0, 2.0, 3.0, np.nan], lambda v: v.mean(axis=1),
    ...                       rng=rng_for(0), n_boot=100)
    >>> est, bool(1.0 <= lo <= est <= hi <= 3.0)
    (2.0, True)
    """
    x = np.asarray(values, dtype=np.float64)
    keep = ~np.isnan(x)
    g = None if groups is None else np.asarray(groups)[keep]
    x = x[keep]
    if x.size == 0:
        return (np.nan, np.nan, np.nan)
    with np.errstate(invalid="ignore"):  # inf - inf inside interpolation gives nan
        est = float(stat(x[None, :])[0])
        if n_boot <= 0:
            return (est, np.nan, np.nan)
        reps = stat(x[resample_index(g, x.size, n_boot, rng)])
        alpha = (1.0 - CI_LEVEL) / 2.0
        lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
    return (est, float(lo), float(hi))


def _median(v: NDArray) -> NDArray:
    return np.median(v, axis=1)


def _mean(v: NDArray) -> NDArray:
    return np.mean(v, axis=1)


def median_ci(
    values: ArrayLike,
    *,
    groups: ArrayLike | None = None,
    rng: np.random.Generator,
    n_boot: int = DEFAULT_BOOT,
) -> tuple[float, float, float]:
    """Median and its bootstrap interval (NaNs dropped).

    Examples
    --------
    >>> from qkforms.stats.bootstrap import median_ci, rng_for
    >>> median_ci([3.0, 1.0, 2.0], rng=rng_for(0), n_boot=0)
    (2.0, nan, nan)
    """
    return stat_ci(values, _median, groups=groups, rng=rng, n_boot=n_boot)


def share_ci(
    mask: ArrayLike,
    *,
    groups: ArrayLike | None = None,
    rng: np.random.Generator,
    n_boot: int = DEFAULT_BOOT,
) -> tuple[float, float, float]:
    """Share of true entries and its bootstrap interval.

    Examples
    --------
    >>> from qkforms.stats.bootstrap import share_ci, rng_for
    >>> share_ci([True, False, True, True], rng=rng_for(0), n_boot=0)
    (0.75, nan, nan)
    """
    m = np.asarray(mask, dtype=np.float64)
    return stat_ci(m, _mean, groups=groups, rng=rng, n_boot=n_boot)


def ratio_of_medians_ci(
    x: ArrayLike,
    y: ArrayLike,
    *,
    groups_x: ArrayLike | None = None,
    groups_y: ArrayLike | None = None,
    rng: np.random.Generator,
    n_boot: int = DEFAULT_BOOT,
) -> tuple[float, float, float]:
    """``median(x)/median(y)`` with ``x`` and ``y`` resampled independently.

    Examples
    --------
    >>> from qkforms.stats.bootstrap import ratio_of_medians_ci, rng_for
    >>> ratio_of_medians_ci([2.0, 4.0, 6.0], [1.0, 2.0, 3.0], rng=rng_for(0), n_boot=0)
    (2.0, nan, nan)
    """
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    ka, kb = ~np.isnan(a), ~np.isnan(b)
    ga = None if groups_x is None else np.asarray(groups_x)[ka]
    gb = None if groups_y is None else np.asarray(groups_y)[kb]
    a, b = a[ka], b[kb]
    if a.size == 0 or b.size == 0:
        return (np.nan, np.nan, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        est = float(np.median(a) / np.median(b))
        if n_boot <= 0:
            return (est, np.nan, np.nan)
        ra = np.median(a[resample_index(ga, a.size, n_boot, rng)], axis=1)
        rb = np.median(b[resample_index(gb, b.size, n_boot, rng)], axis=1)
        reps = ra / rb
    alpha = (1.0 - CI_LEVEL) / 2.0
    lo, hi = np.nanquantile(reps, [alpha, 1.0 - alpha])
    return (est, float(lo), float(hi))


def cliffs_delta(x: ArrayLike, y: ArrayLike) -> float:
    """Cliff's delta ``P(X > Y) - P(X < Y)`` over all pairs (ties count 0).

    Examples
    --------
    >>> from qkforms.stats.bootstrap import cliffs_delta
    >>> cliffs_delta([3.0, 4.0], [1.0, 2.0]), cliffs_delta([1.0, 2.0], [1.0, 2.0])
    (1.0, 0.0)
    """
    a = np.asarray(x, dtype=np.float64)
    b = np.sort(np.asarray(y, dtype=np.float64))
    less = np.searchsorted(b, a, side="left")  # #(y < x)
    leq = np.searchsorted(b, a, side="right")  # #(y <= x)
    greater = b.size - leq  # #(y > x)
    return float((less.sum() - greater.sum()) / (a.size * b.size))


def cliffs_delta_ci(
    x: ArrayLike,
    y: ArrayLike,
    *,
    groups_x: ArrayLike | None = None,
    groups_y: ArrayLike | None = None,
    rng: np.random.Generator,
    n_boot: int = DEFAULT_BOOT,
) -> tuple[float, float, float]:
    """Cliff's delta with a bootstrap interval (both samples resampled independently).

    Examples
    --------
    >>> from qkforms.stats.bootstrap import cliffs_delta_ci, rng_for
    >>> cliffs_delta_ci([3.0, 4.0], [1.0, 2.0], rng=rng_for(0), n_boot=20)
    (1.0, 1.0, 1.0)
    """
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    ka, kb = ~np.isnan(a), ~np.isnan(b)
    ga = None if groups_x is None else np.asarray(groups_x)[ka]
    gb = None if groups_y is None else np.asarray(groups_y)[kb]
    a, b = a[ka], b[kb]
    if a.size == 0 or b.size == 0:
        return (np.nan, np.nan, np.nan)
    est = cliffs_delta(a, b)
    if n_boot <= 0:
        return (est, np.nan, np.nan)
    ia = resample_index(ga, a.size, n_boot, rng)
    ib = resample_index(gb, b.size, n_boot, rng)
    reps = np.array([cliffs_delta(a[ia[i]], b[ib[i]]) for i in range(n_boot)])
    alpha = (1.0 - CI_LEVEL) / 2.0
    lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
    return (est, float(lo), float(hi))
