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
The observation tables draw their replicates through :class:`Draws`: one index matrix
per sample of heads in a table row (named by the row and the sample, and by the sizes
of the strata), shared by every statistic of that sample -- a joint bootstrap of the
row, with the same marginal intervals as one stream per statistic and a fraction of
the draws.

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
    "Draws",
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


class Draws:
    """The bootstrap index matrices of one sample of heads, shared by its statistics.

    ``index(groups, size, n_boot)`` is :func:`resample_index` on a stream seeded by
    ``(seed, "bootstrap", *keys, size, strata)`` (``strata``: the labels of ``groups``
    and their counts, in order of first appearance), computed once and reused: every
    statistic over the same heads -- or over subsets with the same strata sizes, e.g.
    where another statistic is undefined -- gets the same replicates. So the numbers
    depend on the seed, the keys and the strata, not on which statistics are computed
    or in which order.

    Examples
    --------
    >>> from qkforms.stats.bootstrap import Draws
    >>> d = Draws(0, "accumulation", "m", "heads")
    >>> a = d.index(None, 5, 3)
    >>> bool((a == d.index(None, 5, 3)).all()), a.shape
    (True, (3, 5))
    >>> bool((a == Draws(0, "accumulation", "m", "heads").index(None, 5, 3)).all())
    True
    """

    def __init__(self, seed: int, *keys: Hashable) -> None:
        self.seed = int(seed)
        self.keys = keys
        self._cache: dict[tuple, NDArray[np.int64]] = {}

    def index(self, groups: ArrayLike | None, size: int, n_boot: int) -> NDArray[np.int64]:
        """Index matrix ``(n_boot, size)`` of a bootstrap stratified by ``groups``."""
        if groups is None:
            strata: tuple = ()
        else:
            g = np.asarray(groups)
            labels = _unique_in_order(g)
            strata = tuple((v, int(np.count_nonzero(g == v))) for v in labels)
        sig = (int(size), int(n_boot), strata)
        idx = self._cache.get(sig)
        if idx is None:
            rng = rng_for(self.seed, "bootstrap", *self.keys, int(size), strata)
            idx = self._cache[sig] = resample_index(groups, size, n_boot, rng)
        return idx


def _index(groups: ArrayLike | None, size: int, n_boot: int,
           rng: np.random.Generator | None, draws: Draws | None) -> NDArray[np.int64]:
    """The replicates of a sample: from ``draws`` when given, else drawn from ``rng``."""
    if draws is not None:
        return draws.index(groups, size, n_boot)
    if rng is None:
        raise TypeError("give rng or draws")  # error-contract: internal call, a programming error
    return resample_index(groups, size, n_boot, rng)


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
    rng: np.random.Generator | None = None,
    n_boot: int = DEFAULT_BOOT,
    draws: Draws | None = None,
) -> tuple[float, float, float]:
    """Statistic and percentile interval; ``stat`` maps ``(B, m)`` to ``(B,)`` along axis 1.

    NaN values are dropped first (with their groups). Empty input gives NaNs. The
    replicates come from ``draws`` (:class:`Draws`) when given, else from ``rng``.

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
        reps = stat(x[_index(g, x.size, n_boot, rng, draws)])
        alpha = (1.0 - CI_LEVEL) / 2.0
        lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
    return (est, float(lo), float(hi))


def _median(v: NDArray) -> NDArray:
    """``numpy.median(v, axis=1)``, the same numbers, by sorting the rows.

    numpy's median selects with ``partition``, which on rows of a few hundred values is
    several times slower than its vectorised sort; the middle values are the same
    either way, and the mean of two is taken as numpy takes it, ``(a + b) / 2``. Rows
    with NaN go to numpy (its NaN rule).

    Examples
    --------
    >>> import numpy as np
    >>> v = np.random.default_rng(0).normal(size=(50, 8)).round(1)
    >>> v[3, 2] = np.inf
    >>> bool((_median(v) == np.median(v, axis=1)).all())
    True
    """
    m = v.shape[1]
    if m == 0 or np.isnan(v).any():
        return np.median(v, axis=1)
    s = np.sort(v, axis=1)
    if m % 2:
        return s[:, m // 2].copy()
    return (s[:, m // 2 - 1] + s[:, m // 2]) / 2


def _mean(v: NDArray) -> NDArray:
    return np.mean(v, axis=1)


def median_ci(
    values: ArrayLike,
    *,
    groups: ArrayLike | None = None,
    rng: np.random.Generator | None = None,
    n_boot: int = DEFAULT_BOOT,
    draws: Draws | None = None,
) -> tuple[float, float, float]:
    """Median and its bootstrap interval (NaNs dropped).

    Examples
    --------
    >>> from qkforms.stats.bootstrap import median_ci, rng_for
    >>> median_ci([3.0, 1.0, 2.0], rng=rng_for(0), n_boot=0)
    (2.0, nan, nan)
    """
    return stat_ci(values, _median, groups=groups, rng=rng, n_boot=n_boot, draws=draws)


def share_ci(
    mask: ArrayLike,
    *,
    groups: ArrayLike | None = None,
    rng: np.random.Generator | None = None,
    n_boot: int = DEFAULT_BOOT,
    draws: Draws | None = None,
) -> tuple[float, float, float]:
    """Share of true entries and its bootstrap interval.

    Examples
    --------
    >>> from qkforms.stats.bootstrap import share_ci, rng_for
    >>> share_ci([True, False, True, True], rng=rng_for(0), n_boot=0)
    (0.75, nan, nan)
    """
    m = np.asarray(mask, dtype=np.float64)
    return stat_ci(m, _mean, groups=groups, rng=rng, n_boot=n_boot, draws=draws)


def ratio_of_medians_ci(
    x: ArrayLike,
    y: ArrayLike,
    *,
    groups_x: ArrayLike | None = None,
    groups_y: ArrayLike | None = None,
    rng: np.random.Generator | None = None,
    n_boot: int = DEFAULT_BOOT,
    draws_x: Draws | None = None,
    draws_y: Draws | None = None,
) -> tuple[float, float, float]:
    """``median(x)/median(y)`` with ``x`` and ``y`` resampled independently.

    The replicates of ``x`` and ``y`` come from ``draws_x``, ``draws_y`` when given
    (both), else from ``rng`` (``x``'s first).

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
        ra = _median(a[_index(ga, a.size, n_boot, rng, draws_x)])
        rb = _median(b[_index(gb, b.size, n_boot, rng, draws_y)])
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
    rng: np.random.Generator | None = None,
    n_boot: int = DEFAULT_BOOT,
    draws_x: Draws | None = None,
    draws_y: Draws | None = None,
) -> tuple[float, float, float]:
    """Cliff's delta with a bootstrap interval (both samples resampled independently).

    Replicates as in :func:`ratio_of_medians_ci`; each replicate's delta is computed
    exactly (integer pair counts), by :func:`_cliffs_replicates`.

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
    ia = _index(ga, a.size, n_boot, rng, draws_x)
    ib = _index(gb, b.size, n_boot, rng, draws_y)
    reps = _cliffs_replicates(a, b, ia, ib)
    alpha = (1.0 - CI_LEVEL) / 2.0
    lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
    return (est, float(lo), float(hi))


#: largest ``len(x) * len(y)`` for which :func:`_cliffs_replicates` uses the sign matrix
_SIGN_MATRIX_MAX = 2**22


def _cliffs_replicates(a: NDArray, b: NDArray, ia: NDArray[np.int64],
                       ib: NDArray[np.int64]) -> NDArray[np.float64]:
    """``[cliffs_delta(a[ia[i]], b[ib[i]]) for i]``, all replicates at once.

    With ``c_a``, ``c_b`` the replicate's counts of each value of ``a`` and ``b``, the
    sum over pairs of ``sign(x - y)`` is ``c_a @ sign(a - b^T) @ c_b``: integers, exact in
    float64, divided as :func:`cliffs_delta` divides, so the values are the same.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(size=7), np.round(rng.normal(size=5), 1)
    >>> a[0], b[0] = np.inf, np.inf
    >>> ia, ib = rng.integers(0, 7, (20, 7)), rng.integers(0, 5, (20, 5))
    >>> loop = [cliffs_delta(a[ia[i]], b[ib[i]]) for i in range(20)]
    >>> bool((_cliffs_replicates(a, b, ia, ib) == loop).all())
    True
    """
    n_boot, na, nb = ia.shape[0], a.size, b.size
    if na * nb > _SIGN_MATRIX_MAX:
        return np.array([cliffs_delta(a[ia[i]], b[ib[i]]) for i in range(n_boot)])
    sign = (np.greater.outer(a, b).astype(np.float64)
            - np.less.outer(a, b))  # sign(x - y); 0 for ties (inf == inf too)
    out = np.empty(n_boot)
    step = max(1, 2**20 // max(na, nb))  # replicates per block (bounds the count matrices)
    for s0 in range(0, n_boot, step):
        s1 = min(n_boot, s0 + step)
        rows = np.arange(s1 - s0)[:, None]
        ca = np.bincount((rows * na + ia[s0:s1]).ravel(), minlength=(s1 - s0) * na)
        cb = np.bincount((rows * nb + ib[s0:s1]).ravel(), minlength=(s1 - s0) * nb)
        total = np.sum((ca.reshape(-1, na).astype(np.float64) @ sign)
                       * cb.reshape(-1, nb), axis=1)
        out[s0:s1] = total / (na * nb)
    return out
