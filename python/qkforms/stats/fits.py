"""Maximum-likelihood fits of positive samples, batched over heads (``docs/theory.md`` §12.6).

Every function takes a 2-d array ``x`` of shape ``(heads, m)`` (one positive sample
of size ``m`` per row) and fits all rows at once; location is fixed at 0 throughout.

* :func:`fit_gamma` — gamma law (shape ``k``, scale ``theta``), the same maximum of
  the likelihood as ``scipy.stats.gamma.fit(x, floc=0)``, found by Newton's method
  on ``log k - digamma(k) = log mean(x) - mean(log x)``.
* :func:`fit_lognormal` — closed form (``scipy.stats.lognorm.fit(x, floc=0)``).
* :func:`fit_gengamma` — generalized gamma ``scipy.stats.gengamma(a, c, scale)``.
  For fixed ``c`` the variable ``(x/scale)^c`` is gamma(``a``) distributed, so the
  likelihood maximized over ``(a, scale)`` is a gamma fit of ``x^c`` plus the
  Jacobian ``m log|c| + (c - 1) sum(log x)``: a one-dimensional *profile
  likelihood* in ``c``. It is maximized on a grid of ``c`` (both signs,
  ``0.02 <= |c| <= 40``) and refined by golden-section search; the result is the
  best of that refined maximum, the gamma fit (``c = 1``) and the Weibull fit
  (``a = 1``) — the batched counterpart of "best of a direct fit and fits seeded
  by gamma and Weibull". :func:`fit_gengamma_scipy` runs the literal scipy
  procedure on one sample (slow; used to cross-check).
* :func:`ks_distance` — Kolmogorov–Smirnov distance of a fitted law to each row.

Examples
--------
>>> import numpy as np
>>> from qkforms.stats.fits import fit_gamma
>>> x = np.random.default_rng(0).gamma(2.0, 3.0, size=(1, 4000))
>>> k, theta, loglik = fit_gamma(x)
>>> bool(abs(k[0] - 2.0) < 0.15 and abs(theta[0] - 3.0) < 0.3)
True
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from qkforms._validate import as_float_array
from qkforms.errors import ParameterError, ShapeError

__all__ = [
    "GenGammaFit",
    "fit_gamma",
    "fit_gengamma",
    "fit_gengamma_scipy",
    "fit_lognormal",
    "fit_weibull",
    "gengamma_cdf",
    "gengamma_loglik",
    "ks_distance",
]

_GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0
_C_GRID = np.concatenate([-np.geomspace(40.0, 0.02, 28), np.geomspace(0.02, 40.0, 28), [1.0]])


def _rows(x: ArrayLike) -> NDArray[np.float64]:
    arr = as_float_array(x, "samples", finite=False)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ShapeError(f"samples must have shape (heads, m), got {arr.shape}")
    if arr.shape[1] < 2 or np.any(~np.isfinite(arr)) or np.any(arr <= 0):
        raise ParameterError("each sample needs >= 2 finite positive values")
    return arr


def _gamma_shape(s: NDArray[np.float64]) -> NDArray[np.float64]:
    """Solve ``log k - digamma(k) = s`` (s > 0) for k, elementwise (any shape).

    Newton's method with a stopping rule *per entry*: an entry stops at the first step
    that changes it by at most ``1e-13 k`` (or after 30 steps), whatever the other
    entries do. So the value of an entry does not depend on what it is batched with:
    fitting the heads of many layers in one call gives the same numbers, bit for bit,
    as fitting each layer (or each head) alone.
    """
    s = np.maximum(s, 1e-12)
    k = (3.0 - s + np.sqrt((s - 3.0) ** 2 + 24.0 * s)) / (12.0 * s)
    flat, sf = k.reshape(-1), s.reshape(-1)
    idx = np.arange(flat.size)
    for _ in range(30):
        kk, ss = flat[idx], sf[idx]
        f = np.log(kk) - special.digamma(kk) - ss
        fp = 1.0 / kk - special.zeta(2.0, kk)  # trigamma(k) = Hurwitz zeta(2, k)
        k_new = kk - f / fp
        k_new = np.where(k_new <= 0, kk / 2.0, k_new)
        flat[idx] = k_new
        idx = idx[~(np.abs(k_new - kk) <= 1e-13 * kk)]
        if not idx.size:
            break
    return flat.reshape(k.shape)


def _gamma_profile(
    logz_mean: NDArray[np.float64], log_meanz: NDArray[np.float64], m: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Gamma MLE from ``mean(log z)`` and ``log mean(z)``: shape, log-scale, log-likelihood."""
    s = log_meanz - logz_mean
    k = _gamma_shape(s)
    log_theta = log_meanz - np.log(k)
    # sum[(k-1) log z - z/theta - lgamma(k) - k log theta], with sum z/theta = m k
    loglik = m * ((k - 1.0) * logz_mean - k - special.gammaln(k) - k * log_theta)
    return k, log_theta, loglik


def fit_gamma(
    x: ArrayLike,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Gamma fit with location 0 of each row: ``(shape k, scale theta, log-likelihood)``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from qkforms.stats.fits import fit_gamma
    >>> x = np.random.default_rng(1).gamma(1.8, 2.0, size=64)
    >>> k, theta, _ = fit_gamma(x)
    >>> k_ref, _, theta_ref = stats.gamma.fit(x, floc=0)
    >>> bool(np.isclose(k[0], k_ref, rtol=1e-3) and np.isclose(theta[0], theta_ref, rtol=1e-3))
    True
    """
    arr = _rows(x)
    logx = np.log(arr)
    m = arr.shape[1]
    k, log_theta, loglik = _gamma_profile(logx.mean(axis=1), np.log(arr.mean(axis=1)), m)
    return k, np.exp(log_theta), loglik


def fit_lognormal(
    x: ArrayLike,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Lognormal fit with location 0: ``(sigma, scale = exp(mu), log-likelihood)``.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.stats.fits import fit_lognormal
    >>> sigma, scale, _ = fit_lognormal(np.exp([[0.0, 2.0]]))
    >>> sigma.tolist(), scale.tolist()
    ([1.0], [2.718281828459045])
    """
    arr = _rows(x)
    logx = np.log(arr)
    m = arr.shape[1]
    mu = logx.mean(axis=1)
    sigma = np.maximum(logx.std(axis=1), 1e-300)
    loglik = -logx.sum(axis=1) - m * np.log(sigma) - 0.5 * m * np.log(2.0 * np.pi) - 0.5 * m
    return sigma, np.exp(mu), loglik


def _logy(arr: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Logs of the rows divided by their geometric mean (for overflow-free powers)."""
    logx = np.log(arr)
    center = logx.mean(axis=1, keepdims=True)
    return logx - center, center[:, 0]


def _gg_profile(
    logy: NDArray[np.float64], c: NDArray[np.float64]
) -> tuple[NDArray, NDArray, NDArray]:
    """Profile log-likelihood at ``c`` for centred log-data ``logy`` (shape ``(h, m)``).

    ``c`` has shape ``(h,)`` (one value per row) or ``(h, g)`` (g values per row: a
    whole grid in one batch). Returns ``(loglik, a, log_scale)``, shaped like ``c``, of
    the data ``y = x / geometric mean``.
    """
    m = logy.shape[1]
    ly = logy if c.ndim == 1 else logy[:, None, :]
    cl = c[..., None] * ly
    top = cl.max(axis=-1)
    log_meanz = top + np.log(np.mean(np.exp(cl - top[..., None]), axis=-1))
    logz_mean = c * ly.mean(axis=-1)  # = 0 since logy is centred, kept for clarity
    a, log_beta, loglik = _gamma_profile(logz_mean, log_meanz, m)
    loglik = loglik + m * np.log(np.abs(c)) + (c - 1.0) * ly.sum(axis=-1)
    return loglik, a, log_beta / c


def _weibull_profile(logy: NDArray[np.float64], c: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
    """Weibull (a = 1) log-likelihood at ``c > 0`` and log-scale, data ``y``."""
    m = logy.shape[1]
    cl = c[:, None] * logy
    top = cl.max(axis=1)
    log_meanz = top + np.log(np.mean(np.exp(cl - top[:, None]), axis=1))
    loglik = -m * log_meanz - m + m * np.log(c) + (c - 1.0) * logy.sum(axis=1)
    return loglik, log_meanz / c


def _golden_max(f, lo: NDArray[np.float64], hi: NDArray[np.float64], iters: int = 45):
    """Batched golden-section maximization of ``f(c) -> values`` on ``[lo, hi]``."""
    x1 = hi - _GOLDEN * (hi - lo)
    x2 = lo + _GOLDEN * (hi - lo)
    f1, f2 = f(x1), f(x2)
    for _ in range(iters):
        left = f1 >= f2  # maximum in [lo, x2]
        hi = np.where(left, x2, hi)
        lo = np.where(left, lo, x1)
        new = np.where(left, hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo))
        fn = f(new)
        x2, f2, x1, f1 = (
            np.where(left, x1, new),
            np.where(left, f1, fn),
            np.where(left, new, x2),
            np.where(left, fn, f2),
        )
    return np.where(f1 >= f2, x1, x2)


class GenGammaFit(NamedTuple):
    """Generalized gamma fit per row (``scipy.stats.gengamma(a, c, scale=scale)``).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.stats.fits import fit_gengamma
    >>> fit = fit_gengamma(np.random.default_rng(0).gamma(2.0, 1.0, size=(2, 50)))
    >>> fit.a.shape, set(fit.source) <= {"profile", "gamma", "weibull"}
    ((2,), True)
    """

    a: NDArray[np.float64]
    c: NDArray[np.float64]
    scale: NDArray[np.float64]
    loglik: NDArray[np.float64]
    source: NDArray[np.str_]  # "profile", "gamma" or "weibull": which candidate won


def gengamma_loglik(
    x: ArrayLike, a: ArrayLike, c: ArrayLike, scale: ArrayLike
) -> NDArray[np.float64]:
    """Log-likelihood of each row under ``gengamma(a, c, scale)`` (location 0).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from qkforms.stats.fits import gengamma_loglik
    >>> x = np.array([[0.5, 1.0, 2.0]])
    >>> ref = stats.gengamma.logpdf(x[0], 1.5, -0.7, scale=1.3).sum()
    >>> bool(np.isclose(gengamma_loglik(x, [1.5], [-0.7], [1.3])[0], ref))
    True
    """
    arr = _rows(x)
    a, c, scale = (np.asarray(v, dtype=np.float64)[:, None] for v in (a, c, scale))
    logu = np.log(arr) - np.log(scale)
    val = np.log(np.abs(c)) + (c * a - 1.0) * logu - np.exp(c * logu) - special.gammaln(a)
    return (val - np.log(scale)).sum(axis=1)


def fit_gengamma(x: ArrayLike) -> GenGammaFit:
    """Generalized gamma fit with location 0 of each row (see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.stats.fits import fit_gengamma
    >>> x = np.random.default_rng(2).weibull(2.5, size=(1, 5000)) * 3.0  # a=1, c=2.5
    >>> fit = fit_gengamma(x)
    >>> bool(abs(fit.c[0] - 2.5) < 0.5 and abs(fit.a[0] - 1.0) < 0.3)
    True
    """
    arr = _rows(x)
    logy, center = _logy(arr)
    h = arr.shape[0]
    # grid of c, then golden-section refinement between the best point's neighbours
    grid_vals = _gg_profile(logy, np.broadcast_to(_C_GRID, (h, _C_GRID.size)))[0]
    order = np.argsort(_C_GRID)
    sorted_c = _C_GRID[order]
    vals = grid_vals[:, order]
    vals = np.where(np.isfinite(vals), vals, -np.inf)
    best = np.argmax(vals, axis=1)
    lo = sorted_c[np.maximum(best - 1, 0)]
    hi = sorted_c[np.minimum(best + 1, len(sorted_c) - 1)]
    # never straddle c = 0 (the law degenerates there): clip to the best point's sign
    sign = np.sign(sorted_c[best])
    lo = np.where(sign > 0, np.maximum(lo, 1e-3), lo)
    hi = np.where(sign < 0, np.minimum(hi, -1e-3), hi)

    def f(c: NDArray[np.float64]) -> NDArray[np.float64]:
        v = _gg_profile(logy, c)[0]
        return np.where(np.isfinite(v), v, -np.inf)

    c_opt = _golden_max(f, lo, hi)
    ll_p, a_p, ls_p = _gg_profile(logy, c_opt)
    # candidates: gamma (c = 1) and Weibull (a = 1)
    ones = np.ones(h)
    ll_g, a_g, ls_g = _gg_profile(logy, ones)
    c_w = _golden_max(lambda c: _weibull_profile(logy, c)[0], np.full(h, 0.02), np.full(h, 40.0))
    ll_w, ls_w = _weibull_profile(logy, c_w)
    cand_ll = np.stack([np.where(np.isfinite(ll_p), ll_p, -np.inf), ll_g, ll_w], axis=1)
    win = np.argmax(cand_ll, axis=1)
    pick = np.arange(h)
    a = np.stack([a_p, a_g, ones], axis=1)[pick, win]
    c = np.stack([c_opt, ones, c_w], axis=1)[pick, win]
    log_scale = np.stack([ls_p, ls_g, ls_w], axis=1)[pick, win] + center
    m = arr.shape[1]
    loglik = cand_ll[pick, win] - m * center  # undo the division by the geometric mean
    source = np.asarray(["profile", "gamma", "weibull"])[win]
    with np.errstate(over="ignore"):
        scale = np.exp(log_scale)
    return GenGammaFit(a, c, scale, loglik, source)


def fit_weibull(x: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray]:
    """Weibull fit with location 0: ``(shape c, scale, log-likelihood)``.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.stats.fits import fit_weibull
    >>> x = np.random.default_rng(3).weibull(1.5, size=(1, 4000)) * 2.0
    >>> c, scale, _ = fit_weibull(x)
    >>> bool(abs(c[0] - 1.5) < 0.1 and abs(scale[0] - 2.0) < 0.1)
    True
    """
    arr = _rows(x)
    logy, center = _logy(arr)
    h = arr.shape[0]
    c = _golden_max(lambda cc: _weibull_profile(logy, cc)[0], np.full(h, 0.02), np.full(h, 40.0))
    ll, ls = _weibull_profile(logy, c)
    return c, np.exp(ls + center), ll - arr.shape[1] * center


def gengamma_cdf(x: ArrayLike, a: ArrayLike, c: ArrayLike, scale: ArrayLike) -> NDArray:
    """CDF of ``gengamma(a, c, scale)`` at each entry of the rows of ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from qkforms.stats.fits import gengamma_cdf
    >>> bool(np.isclose(gengamma_cdf([[2.0]], [1.5], [-0.5], [1.0])[0, 0],
    ...                 stats.gengamma.cdf(2.0, 1.5, -0.5)))
    True
    """
    arr = np.asarray(x, dtype=np.float64)
    a, c, scale = (np.asarray(v, dtype=np.float64)[:, None] for v in (a, c, scale))
    u = np.exp(c * (np.log(arr) - np.log(scale)))
    return np.where(c > 0, special.gammainc(a, u), special.gammaincc(a, u))


def ks_distance(x: ArrayLike, cdf_values: ArrayLike) -> NDArray[np.float64]:
    """Kolmogorov–Smirnov distance per row, given the fitted CDF at each data point.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.stats.fits import ks_distance
    >>> x = np.array([[0.1, 0.5, 0.9]])
    >>> round(float(ks_distance(x, x)[0]), 6)  # uniform(0, 1) CDF at the points
    0.233333
    """
    arr = np.asarray(x, dtype=np.float64)
    cdf = np.asarray(cdf_values, dtype=np.float64)
    order = np.argsort(arr, axis=1)
    f = np.take_along_axis(cdf, order, axis=1)
    m = arr.shape[1]
    i = np.arange(1, m + 1)
    return np.maximum((i / m - f).max(axis=1), (f - (i - 1) / m).max(axis=1))


def fit_gengamma_scipy(x: ArrayLike) -> tuple[float, float, float, float]:
    """Best scipy fit ``(a, c, scale, loglik)`` of one sample (slow reference).

    Best likelihood among ``scipy.stats.gengamma.fit(x, floc=0)`` started from its
    default, from the gamma fit (``c = 1``) and from the Weibull fit (``a = 1``).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.stats.fits import fit_gengamma_scipy
    >>> x = np.random.default_rng(4).gamma(2.0, 1.0, size=200)
    >>> a, c, scale, ll = fit_gengamma_scipy(x)
    >>> bool(np.isfinite(ll))
    True
    """
    import warnings

    from scipy import stats

    data = np.asarray(x, dtype=np.float64).ravel()
    k, _, theta = stats.gamma.fit(data, floc=0)
    cw, _, sw = stats.weibull_min.fit(data, floc=0)
    best: tuple[float, float, float, float] | None = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for start in (None, (k, 1.0, theta), (1.0, cw, sw)):
            try:
                if start is None:
                    a, c, _, s = stats.gengamma.fit(data, floc=0)
                else:
                    a, c, _, s = stats.gengamma.fit(data, start[0], start[1], floc=0,
                                                    scale=start[2])
            except Exception:  # noqa: BLE001 - a failed start is just skipped
                continue
            ll = float(np.sum(stats.gengamma.logpdf(data, a, c, scale=s)))
            if np.isfinite(ll) and (best is None or ll > best[3]):
                best = (float(a), float(c), float(s), ll)
    if best is None:  # pragma: no cover - scipy failed on every start
        return (np.nan, np.nan, np.nan, -np.inf)
    return best
