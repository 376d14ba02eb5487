"""Per-head survey statistics (``docs/theory.md`` §12.3): one function, batched over heads.

:func:`head_statistics` computes every statistic column of ``heads.parquet``
(``docs/survey.md``) from a head's spectrum of ``S``, its energies and the singular
values of ``L``, with the core's batched functions (:func:`qkforms.count_signs`,
:func:`qkforms.profile_from_eigenvalues`, :func:`qkforms.pairing_score`, ...). Every
caller uses it: the survey (:func:`head_columns`, on the output of the Gram engine
:func:`qkforms.gram.layer_spectra`), the Gaussian baselines
(:func:`qkforms.stats.baseline.baseline_heads`) and the synthetic rows of the statistics
(:mod:`qkforms.stats.synthetic`).

Conventions
-----------
* Counts use the relative zero threshold :data:`qkforms.tolerances.REDUCED_TOL` on the
  reduced 2n spectrum; the ambient ``n_zero`` adds ``N - 2n``.
* ``theta_L_dist`` is the Euclidean distance in R^4 from the profile to
  ``theta_L(rho)``; ``thm5_dist`` the Euclidean distance in R^3 from the symmetric
  profile ``(b_S, c_S, d_S)`` to the Theorem 5 limit at the head's ``rho``.
* Failed heads get null statistics; statistics undefined for an ``ok`` head (e.g.
  ``a_over_b`` when ``b = 0``, ``lobe_departure`` without negative eigenvalues) are NaN
  or inf.

Examples
--------
>>> import numpy as np
>>> from qkforms.gram import layer_spectra
>>> from qkforms.survey.statistics import head_columns
>>> rng = np.random.default_rng(0)
>>> Q, K = rng.standard_normal((2, 3, 12)), rng.standard_normal((2, 3, 12))
>>> cols = head_columns(layer_spectra(Q, K, np.array([0, 1])), N=12, n=3)
>>> cols["n_pos"].tolist(), cols["n_neg"].tolist(), cols["n_zero"].tolist()
([3, 3], [3, 3], [6, 6])
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms.gram import LayerSpectra
from qkforms.survey.schema import FLOAT_COLUMNS, INT_COLUMNS
from qkforms.tolerances import REDUCED_TOL, SPECTRAL_TYPE_RADIUS

__all__ = ["head_columns", "head_statistics"]


def head_statistics(
    eig_S: ArrayLike,
    norm_sq: ArrayLike,
    skew_sq: ArrayLike,
    trace: ArrayLike,
    sv_L_sq: ArrayLike,
    *,
    N: ArrayLike,
    n: ArrayLike,
) -> dict[str, NDArray]:
    """Every statistic column of ``heads.parquet`` for a batch of heads.

    Parameters
    ----------
    eig_S : array_like, shape (h, k)
        Spectrum of ``S`` (the reduced one: 2n values, any order).
    norm_sq, skew_sq, trace : array_like, shape (h,)
        ``|L|^2``, ``|T|^2`` and ``tr L``.
    sv_L_sq : array_like, shape (h, m)
        Squared singular values of ``L`` (any zero padding), decreasing.
    N, n : int or array_like of shape (h,)
        Ambient and head dimensions (``n_zero = N - n_pos - n_neg``).

    Returns
    -------
    dict
        :data:`~qkforms.survey.schema.INT_COLUMNS` (int64),
        :data:`~qkforms.survey.schema.FLOAT_COLUMNS` (float64) and ``spectral_type``
        (object array of str), each of length h.

    Examples
    --------
    >>> from qkforms.survey.statistics import head_statistics
    >>> st = head_statistics([[0.5, -0.5]], [1.0], [0.5], [0.0], [[1.0, 0.0]], N=4, n=1)
    >>> st["n_zero"].tolist(), st["a"].tolist(), st["pairing"].tolist(), st["spectral_type"]
    ([2], [0.5], [1.0], array(['II'], dtype=object))
    """
    from qkforms.faces import spectral_type
    from qkforms.pairing import lobe_departure, lobe_ratio, pairing_bound, pairing_score
    from qkforms.profile import Profile, profile_from_eigenvalues, symmetric_profile
    from qkforms.signature import count_signs
    from qkforms.theta import accumulation_limit, theta_distance, theta_L

    eig = -np.sort(-np.asarray(eig_S, dtype=np.float64), axis=1)
    norm_sq = np.asarray(norm_sq, dtype=np.float64)
    h2 = np.asarray(sv_L_sq, dtype=np.float64)
    sig = count_signs(eig, tol=REDUCED_TOL)
    n_pos = np.asarray(sig.n_pos, dtype=np.int64)
    n_neg = np.asarray(sig.n_neg, dtype=np.int64)
    n_zero = np.asarray(N, dtype=np.int64) - n_pos - n_neg
    with np.errstate(divide="ignore", invalid="ignore"):
        balance = 1.0 - np.abs(n_pos - n_neg) / (n_pos + n_neg)
    p = profile_from_eigenvalues(eig, norm_sq, np.asarray(skew_sq, dtype=np.float64))
    pts = np.stack([p.a, p.b, p.c, p.d], axis=-1)
    b_S, c_S, d_S = (np.asarray(x) for x in symmetric_profile(p))
    pairing = np.asarray(pairing_score(eig))
    rho = np.asarray(lobe_ratio(eig))
    bound = np.asarray(pairing_bound(rho))
    tl = theta_L(rho)
    lim = accumulation_limit(rho)
    theta_L_dist = np.linalg.norm(pts - np.stack(list(tl), axis=-1), axis=-1)
    thm5_dist = np.linalg.norm(
        np.stack([b_S, c_S, d_S], axis=-1) - np.stack([lim.b, lim.c, lim.d], axis=-1), axis=-1
    )
    s2 = h2.sum(axis=1)
    s4 = (h2 * h2).sum(axis=1)
    a, b, c, d = (np.asarray(x, dtype=np.float64) for x in p)  # batched: arrays
    with np.errstate(divide="ignore", invalid="ignore"):
        a_over_b = a / b
    out: dict[str, NDArray] = {
        "n_pos": n_pos,
        "n_neg": n_neg,
        "n_zero": n_zero,
        "balance": balance,
        "sym_energy": np.sum(eig * eig, axis=1) / norm_sq,
        "pairing": pairing,
        "rho": rho,
        "pairing_bound": bound,
        "pairing_gap": bound - pairing,
        "lobe_departure": np.asarray(lobe_departure(eig)),
        "a": a, "b": b, "c": c, "d": d,
        "b_S": b_S, "c_S": c_S, "d_S": d_S,
        "theta_dist": np.asarray(theta_distance(Profile(*pts.T))),
        "theta_L_dist": theta_L_dist,
        "thm5_dist": thm5_dist,
        "trace_ratio": np.abs(np.asarray(trace, dtype=np.float64)) / np.sqrt(norm_sq),
        "participation_ratio": s2 * s2 / s4,
        "stable_rank": s2 / h2[:, 0],
        "leading_share": h2[:, 0] / s2,
        "a_over_b": a_over_b,
        "b_minus_a": b - a,
        "norm_sq": norm_sq,
    }
    types = spectral_type(Profile(*pts.T), radius=SPECTRAL_TYPE_RADIUS)
    out["spectral_type"] = np.asarray(np.atleast_1d(types).tolist(), dtype=object)
    return out


def head_columns(sp: LayerSpectra, *, N: int, n: int) -> dict[str, NDArray]:
    """Statistics columns for the heads of one layer (failed heads: masked).

    Heads whose symmetric part vanishes (``L`` antisymmetric, impossible for a head
    with a surjective stacked map by Theorem 3) are turned into failed heads here.

    Parameters
    ----------
    sp : LayerSpectra
        Output of :func:`qkforms.gram.layer_spectra`; its ``ok`` and
        ``error`` are updated in place for such heads.
    N, n : int
        Ambient and head dimensions.

    Returns
    -------
    dict
        ``valid`` (bool mask of heads with statistics), ``spectral_type`` (object
        array, None where invalid), every name of :data:`INT_COLUMNS` (int64, 0 where
        invalid) and :data:`FLOAT_COLUMNS` (float64, NaN where invalid).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.gram import layer_spectra
    >>> from qkforms.survey.statistics import head_columns
    >>> Q = np.array([[[1.0, 0.0, 0.0, 0.0]]]); K = np.array([[[0.0, 1.0, 0.0, 0.0]]])
    >>> cols = head_columns(layer_spectra(Q, K, np.array([0])), N=4, n=1)
    >>> [round(float(cols[k][0]), 12) for k in ("a", "b", "c", "d", "pairing")]
    [0.5, 0.5, 0.0, 0.0, 1.0]
    >>> str(cols["spectral_type"][0])
    'II'
    """
    h = sp.ok.shape[0]
    sym_sq = np.where(sp.ok, np.nansum(np.nan_to_num(sp.eig_S) ** 2, axis=1), 0.0)
    for i in np.flatnonzero(sp.ok & (sym_sq <= 0)):
        sp.ok[i] = False
        sp.error[i] = "the symmetric part of L is zero (profile statistics undefined)"
    idx = np.flatnonzero(sp.ok)
    cols: dict[str, NDArray] = {"valid": sp.ok.copy()}
    for name in INT_COLUMNS:
        cols[name] = np.zeros(h, dtype=np.int64)
    for name in FLOAT_COLUMNS:
        cols[name] = np.full(h, np.nan)
    cols["spectral_type"] = np.full(h, None, dtype=object)
    if idx.size:
        vals = head_statistics(sp.eig_S[idx], sp.norm_sq[idx], sp.skew_sq[idx], sp.trace[idx],
                               sp.sv_L_sq[idx], N=N, n=n)
        for name, v in vals.items():
            cols[name][idx] = v
    return cols
