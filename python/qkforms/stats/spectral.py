"""Per-head spectral geometry and distribution fits (``docs/theory.md`` §12.6,
Observations 7–9).

From one head's stored spectra (``spectra.parquet``: ``eig_S`` — the 2n eigenvalues of
the symmetric part, decreasing; ``sv_T`` — the n distinct singular values of the skew
part; ``abs_eig_L`` — the n moduli of the nonzero eigenvalues of L) this module forms
the four positive samples of ``docs/theory.md`` §12.6,

* ``abs_eig_L`` — ``|λ(L)|``;
* ``lambda_pos`` — the positive eigenvalues of S;
* ``lambda_neg`` — the absolute values of the negative eigenvalues of S;
* ``sigma_T`` — ``σ(T)`` (one value per ± pair),

(an eigenvalue counts as zero when ``|λ| <= REDUCED_TOL max|λ|``, as in ``docs/theory.md`` §12.3;
:mod:`qkforms.tolerances`) and computes,
batched over the heads of a layer:

* gamma fits (location 0) of ``λ₊``, ``|λ₋|``, ``σ(T)``: shapes ``k_pos, k_neg, k_T``,
  scales, modes ``(k - 1) θ`` (NaN unless ``k > 1``);
* the mode ratio ``τ/sqrt(|μ| ν)`` and the shape ratio ``k_T/sqrt(k₊ k₋)``, both only
  when all three shapes exceed 1 (``all_shapes_gt1``);
* ``sorted_corr``: Pearson correlation between the sorted 2n values ``|λ(S)|`` and the
  sorted 2n singular values of T (each distinct value twice);
* ``geo_rel_err``: ``‖σ − sqrt(λ₊ ⊙ λ₋)‖/‖σ‖`` with the lobes sorted decreasingly and
  zero-padded to n;
* for each sample: generalized gamma vs lognormal by likelihood (ties → gengamma),
  AIC, BIC and the Kolmogorov–Smirnov distance of both fits.

Examples
--------
>>> import numpy as np
>>> from qkforms.stats.spectral import head_samples
>>> s = head_samples([3.0, 1.0, -0.5, -2.0], [1.5, 0.7], [2.0, 1.0])
>>> s["lambda_pos"].tolist(), s["lambda_neg"].tolist()
([3.0, 1.0], [2.0, 0.5])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from qkforms.stats.fits import (
    fit_gamma,
    fit_gengamma,
    fit_lognormal,
    gengamma_cdf,
    ks_distance,
)
from qkforms.threads import map_slices
from qkforms.tolerances import REDUCED_TOL

__all__ = [
    "SAMPLES",
    "geo_rel_err",
    "head_samples",
    "family_rows",
    "sorted_corr",
    "spectral_rows",
]

#: the four per-head samples of docs/theory.md §12.6, in report order
SAMPLES: tuple[str, ...] = ("abs_eig_L", "lambda_pos", "lambda_neg", "sigma_T")
#: minimum sample size for a fit
MIN_FIT_SIZE = 5


def _arr(x: Any) -> NDArray[np.float64]:
    if x is None:
        return np.zeros(0)
    return np.asarray(x, dtype=np.float64).ravel()


def head_samples(
    eig_S: ArrayLike, sv_T: ArrayLike, abs_eig_L: ArrayLike
) -> dict[str, NDArray[np.float64]]:
    """The four positive samples of one head, each sorted decreasingly.

    Examples
    --------
    >>> from qkforms.stats.spectral import head_samples
    >>> head_samples([2.0, 1e-12, -1.0], [1.0], [1.5])["lambda_pos"].tolist()
    [2.0]
    """
    lam = _arr(eig_S)
    scale = np.max(np.abs(lam)) if lam.size else 0.0
    tol = REDUCED_TOL * scale
    pos = np.sort(lam[lam > tol])[::-1]
    neg = np.sort(-lam[lam < -tol])[::-1]

    def positive(v: NDArray[np.float64]) -> NDArray[np.float64]:
        v = v[np.isfinite(v)]
        top = np.max(np.abs(v)) if v.size else 0.0
        return np.sort(v[v > REDUCED_TOL * top])[::-1]

    return {
        "abs_eig_L": positive(_arr(abs_eig_L)),
        "lambda_pos": pos,
        "lambda_neg": neg,
        "sigma_T": positive(_arr(sv_T)),
    }


def sorted_corr(eig_S: ArrayLike, sv_T: ArrayLike) -> float:
    """Correlation of sorted ``|λ(S)|`` (2n values) and sorted ``σ(T)`` (each twice).

    The shorter list is zero-padded to the longer one; NaN if either is constant.

    Examples
    --------
    >>> from qkforms.stats.spectral import sorted_corr
    >>> round(sorted_corr([2.0, 1.0, -1.0, -2.0], [2.0, 1.0]), 12)
    1.0
    """
    s = np.sort(np.abs(_arr(eig_S)))[::-1]
    t = np.repeat(np.sort(_arr(sv_T))[::-1], 2)
    k = max(s.size, t.size)
    if k < 2:
        return float("nan")
    s = np.pad(s, (0, k - s.size))
    t = np.pad(t, (0, k - t.size))
    if np.std(s) == 0 or np.std(t) == 0:
        return float("nan")
    return float(np.corrcoef(s, t)[0, 1])


def geo_rel_err(lambda_pos: ArrayLike, lambda_neg: ArrayLike, sv_T: ArrayLike) -> float:
    """``‖σ − sqrt(λ₊ ⊙ λ₋)‖/‖σ‖`` index-wise on decreasing, zero-padded lists.

    Exactly 0 for a rank-one form. NaN when ``σ = 0``.

    Examples
    --------
    >>> from qkforms.stats.spectral import geo_rel_err
    >>> geo_rel_err([4.0], [1.0], [2.0])
    0.0
    """
    p = np.sort(_arr(lambda_pos))[::-1]
    q = np.sort(_arr(lambda_neg))[::-1]
    s = np.sort(_arr(sv_T))[::-1]
    k = max(p.size, q.size, s.size)
    p, q, s = (np.pad(v, (0, k - v.size)) for v in (p, q, s))
    norm = np.linalg.norm(s)
    if norm == 0:
        return float("nan")
    return float(np.linalg.norm(s - np.sqrt(p * q)) / norm)


def _group_by_length(samples: Sequence[NDArray[np.float64]]) -> dict[int, list[int]]:
    groups: dict[int, list[int]] = {}
    for i, s in enumerate(samples):
        if s.size >= MIN_FIT_SIZE:
            groups.setdefault(int(s.size), []).append(i)
    return groups


def _gamma_columns(samples: Sequence[NDArray[np.float64]]) -> tuple[NDArray, NDArray]:
    """Gamma shape and scale per head (NaN where the sample is too small)."""
    k = np.full(len(samples), np.nan)
    theta = np.full(len(samples), np.nan)
    for idx in _group_by_length(samples).values():
        x = np.stack([samples[i] for i in idx])
        kk, tt, _ = fit_gamma(x)
        k[idx], theta[idx] = kk, tt
    return k, theta


def _fit_block(x: NDArray[np.float64]) -> dict[str, NDArray]:
    """Generalized gamma and lognormal fits and KS distances of the rows of ``x``."""
    gg = fit_gengamma(x)
    sig, sc, ll_ln = fit_lognormal(x)
    with np.errstate(all="ignore"):
        ks_gg = ks_distance(x, gengamma_cdf(x, gg.a, gg.c, gg.scale))
    z = (np.log(x) - np.log(sc)[:, None]) / sig[:, None]
    return {"gg_a": gg.a, "gg_c": gg.c, "gg_scale": gg.scale, "gg_loglik": gg.loglik,
            "ln_sigma": sig, "ln_scale": sc, "ln_loglik": ll_ln, "ks_gg": ks_gg,
            "ks_ln": ks_distance(x, special.ndtr(z))}


def _family_columns(name: str, samples: Sequence[NDArray[np.float64]],
                    threads: int = 1) -> dict[str, NDArray]:
    h = len(samples)
    out = {
        f"{name}_m": np.asarray([s.size for s in samples], dtype=np.int64),
        f"{name}_gg_a": np.full(h, np.nan),
        f"{name}_gg_c": np.full(h, np.nan),
        f"{name}_gg_scale": np.full(h, np.nan),
        f"{name}_gg_loglik": np.full(h, np.nan),
        f"{name}_ln_sigma": np.full(h, np.nan),
        f"{name}_ln_scale": np.full(h, np.nan),
        f"{name}_ln_loglik": np.full(h, np.nan),
        f"{name}_ks_gg": np.full(h, np.nan),
        f"{name}_ks_ln": np.full(h, np.nan),
    }
    for idx in _group_by_length(samples).values():
        x = np.stack([samples[i] for i in idx])
        # every fit is per row (fits.py), so the slices give the numbers of one batch

        def block(a: int, b: int, x: NDArray[np.float64] = x) -> dict[str, NDArray]:
            return _fit_block(x[a:b])

        parts = map_slices(block, len(idx), threads=threads)
        for key in parts[0]:
            out[f"{name}_{key}"][idx] = np.concatenate([p[key] for p in parts])
    m_arr = out[f"{name}_m"].astype(np.float64)
    ll_gg, ll_ln = out[f"{name}_gg_loglik"], out[f"{name}_ln_loglik"]
    out[f"{name}_aic_gg"] = 2 * 3 - 2 * ll_gg
    out[f"{name}_aic_ln"] = 2 * 2 - 2 * ll_ln
    with np.errstate(divide="ignore", invalid="ignore"):
        out[f"{name}_bic_gg"] = 3 * np.log(m_arr) - 2 * ll_gg
        out[f"{name}_bic_ln"] = 2 * np.log(m_arr) - 2 * ll_ln
    fitted = ~np.isnan(ll_gg) & ~np.isnan(ll_ln)
    best = np.where(ll_gg >= ll_ln, "gengamma", "lognormal").astype(object)
    best[~fitted] = None
    out[f"{name}_best"] = best
    return out


def family_rows(
    eig_S: Sequence[Any],
    sv_T: Sequence[Any],
    abs_eig_L: Sequence[Any],
    *,
    threads: int = 1,
) -> dict[str, NDArray[Any]]:
    """The family-fit columns of a batch of heads, from any number of layers at once.

    The columns ``spectral_rows(..., fits=True)`` adds to the geometry columns: for each
    of :data:`SAMPLES`, the generalized gamma and lognormal fits, AIC, BIC, KS distances
    and the better family. Every fit is computed per row (its stopping rule included,
    :mod:`qkforms.stats.fits`), so batching the heads of many layers, and splitting the
    batch over ``threads`` threads (:func:`qkforms.threads.map_slices`), gives the same
    numbers as fitting each layer alone, bit for bit -- only faster (one fit call over
    270 rows ran about 4x faster than 30 calls of 9).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.stats.spectral import family_rows, spectral_rows
    >>> rng = np.random.default_rng(0)
    >>> lam = [np.sort(np.concatenate([rng.gamma(3.0, 1.0, 8), -rng.gamma(3.0, 1.0, 8)]))[::-1]
    ...        for _ in range(3)]
    >>> sv, ab = rng.gamma(3.0, 1.0, (3, 8)), rng.gamma(3.0, 1.0, (3, 8))
    >>> both = family_rows(lam, list(sv), list(ab), threads=2)
    >>> one = spectral_rows(lam[1:2], list(sv[1:2]), list(ab[1:2]), fits=True)
    >>> bool(both["sigma_T_gg_c"][1] == one["sigma_T_gg_c"][0])
    True
    """
    samples = [head_samples(e, s, a) for e, s, a in zip(eig_S, sv_T, abs_eig_L, strict=True)]
    cols: dict[str, NDArray[Any]] = {}
    for name in SAMPLES:
        cols.update(_family_columns(name, [s[name] for s in samples], threads))
    return cols


def spectral_rows(
    eig_S: Sequence[Any],
    sv_T: Sequence[Any],
    abs_eig_L: Sequence[Any],
    *,
    fits: bool = True,
) -> dict[str, NDArray[Any]]:
    """Per-head spectral-geometry columns (and family fits) for a batch of heads.

    Parameters
    ----------
    eig_S, sv_T, abs_eig_L : sequences of 1-d arrays, one per head
    fits : bool
        Also fit generalized gamma and lognormal laws to the four samples.

    Returns
    -------
    dict of column name -> array (one entry per head)

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.stats.spectral import spectral_rows
    >>> rng = np.random.default_rng(0)
    >>> lam = np.concatenate([rng.gamma(3.0, 1.0, 64), -rng.gamma(3.0, 1.0, 64)])
    >>> cols = spectral_rows([np.sort(lam)[::-1]], [rng.gamma(3.0, 1.0, 64)],
    ...                      [rng.gamma(3.0, 1.0, 64)], fits=False)
    >>> bool(2.0 < cols["k_pos"][0] < 4.5)
    True
    """
    samples = [head_samples(e, s, a) for e, s, a in zip(eig_S, sv_T, abs_eig_L, strict=True)]
    h = len(samples)
    cols: dict[str, NDArray[Any]] = {}
    ks: dict[str, NDArray] = {}
    for key, sample in (("pos", "lambda_pos"), ("neg", "lambda_neg"), ("T", "sigma_T")):
        k, theta = _gamma_columns([s[sample] for s in samples])
        ks[key] = k
        cols[f"k_{key}"] = k
        cols[f"theta_{key}"] = theta
        with np.errstate(invalid="ignore"):
            cols[f"mode_{key}"] = np.where(k > 1, (k - 1.0) * theta, np.nan)
    all_gt1 = (ks["pos"] > 1) & (ks["neg"] > 1) & (ks["T"] > 1)
    cols["all_shapes_gt1"] = all_gt1
    with np.errstate(invalid="ignore", divide="ignore"):
        cols["mode_ratio"] = np.where(
            all_gt1, cols["mode_T"] / np.sqrt(cols["mode_pos"] * cols["mode_neg"]), np.nan
        )
        cols["shape_ratio"] = np.where(all_gt1, ks["T"] / np.sqrt(ks["pos"] * ks["neg"]), np.nan)
    cols["sorted_corr"] = np.asarray(
        [sorted_corr(e, s) for e, s in zip(eig_S, sv_T, strict=True)], dtype=np.float64
    )
    cols["geo_rel_err"] = np.asarray(
        [geo_rel_err(s["lambda_pos"], s["lambda_neg"], s["sigma_T"]) for s in samples],
        dtype=np.float64,
    )
    if fits:
        for name in SAMPLES:
            cols.update(_family_columns(name, [s[name] for s in samples]))
    for v in cols.values():
        assert len(v) == h
    return cols
