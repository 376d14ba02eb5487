"""Per-head survey statistics (THEORY §7.3), batched over the heads of a layer.

Everything is computed from a :class:`~qkforms.survey.spectra.LayerSpectra` with the
core's batched functions (:func:`qkforms.count_signs`,
:func:`qkforms.profile_from_eigenvalues`, :func:`qkforms.pairing_score`, ...); this
module only assembles the columns of ``heads.parquet`` (docs/survey.md).

Conventions
-----------
* Counts use the relative zero threshold ``1e-9`` on the reduced 2n spectrum; the
  ambient ``n_zero`` adds ``N - 2n``.
* ``theta_L_dist`` is the Euclidean distance in R^4 from the profile to
  ``theta_L(rho)``; ``thm5_dist`` the Euclidean distance in R^3 from the symmetric
  profile ``(b_S, c_S, d_S)`` to the Theorem 5 limit at the head's ``rho``.
* Failed heads get null statistics; statistics undefined for an ``ok`` head (e.g.
  ``a_over_b`` when ``b = 0``, ``lobe_departure`` without negative eigenvalues) are NaN
  or inf.

Examples
--------
>>> import numpy as np
>>> from qkforms.survey.spectra import layer_spectra
>>> from qkforms.survey.statistics import head_columns
>>> rng = np.random.default_rng(0)
>>> Q, K = rng.standard_normal((2, 3, 12)), rng.standard_normal((2, 3, 12))
>>> cols = head_columns(layer_spectra(Q, K, np.array([0, 1])), N=12, n=3)
>>> cols["n_pos"].tolist(), cols["n_neg"].tolist(), cols["n_zero"].tolist()
([3, 3], [3, 3], [6, 6])
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from qkforms.survey.spectra import LayerSpectra

__all__ = ["FLOAT_COLUMNS", "INT_COLUMNS", "SPECTRAL_TYPE_RADIUS", "ZERO_TOL", "head_columns"]

#: relative zero threshold on the reduced 2n x 2n spectrum (THEORY §7.3)
ZERO_TOL = 1e-9
#: radius of the Type II neighbourhood (THEORY §7.5)
SPECTRAL_TYPE_RADIUS = 0.02

INT_COLUMNS = ("n_pos", "n_neg", "n_zero")
FLOAT_COLUMNS = (
    "balance", "sym_energy", "pairing", "rho", "pairing_bound", "pairing_gap",
    "lobe_departure", "a", "b", "c", "d", "b_S", "c_S", "d_S", "theta_dist",
    "theta_L_dist", "thm5_dist", "trace_ratio", "participation_ratio", "stable_rank",
    "leading_share", "a_over_b", "b_minus_a", "norm_sq",
)


def _stats_of_ok(sp: LayerSpectra, idx: NDArray[np.intp], N: int, n: int) -> dict[str, NDArray]:
    from qkforms.pairing import lobe_departure, lobe_ratio, pairing_bound, pairing_score
    from qkforms.profile import Profile, profile_from_eigenvalues, symmetric_profile
    from qkforms.signature import count_signs
    from qkforms.theta import accumulation_limit, theta_distance, theta_L

    eig = sp.eig_S[idx]
    norm_sq = sp.norm_sq[idx]
    sig = count_signs(eig, tol=ZERO_TOL)
    n_pos = np.asarray(sig.n_pos, dtype=np.int64)
    n_neg = np.asarray(sig.n_neg, dtype=np.int64)
    n_zero = np.asarray(sig.n_zero, dtype=np.int64) + (N - 2 * n)
    with np.errstate(divide="ignore", invalid="ignore"):
        balance = 1.0 - np.abs(n_pos - n_neg) / (n_pos + n_neg)
    p = profile_from_eigenvalues(eig, norm_sq, sp.skew_sq[idx])
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
    h2 = sp.sv_L_sq[idx]
    s2 = h2.sum(axis=1)
    s4 = (h2 * h2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        a_over_b = p.a / p.b
    return {
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
        "a": p.a, "b": p.b, "c": p.c, "d": p.d,
        "b_S": b_S, "c_S": c_S, "d_S": d_S,
        "theta_dist": np.asarray(theta_distance(Profile(*pts.T))),
        "theta_L_dist": theta_L_dist,
        "thm5_dist": thm5_dist,
        "trace_ratio": np.abs(sp.trace[idx]) / np.sqrt(norm_sq),
        "participation_ratio": s2 * s2 / s4,
        "stable_rank": s2 / h2[:, 0],
        "leading_share": h2[:, 0] / s2,
        "a_over_b": a_over_b,
        "b_minus_a": p.b - p.a,
        "norm_sq": norm_sq,
    }


def head_columns(sp: LayerSpectra, *, N: int, n: int) -> dict[str, NDArray]:
    """Statistics columns for the heads of one layer (failed heads: masked).

    Heads whose symmetric part vanishes (``L`` antisymmetric, impossible for a head
    with a surjective stacked map by Theorem 3) are turned into failed heads here.

    Parameters
    ----------
    sp : LayerSpectra
        Output of :func:`qkforms.survey.spectra.layer_spectra`; its ``ok`` and
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
    >>> from qkforms.survey.spectra import layer_spectra
    >>> from qkforms.survey.statistics import head_columns
    >>> Q = np.array([[[1.0, 0.0, 0.0, 0.0]]]); K = np.array([[[0.0, 1.0, 0.0, 0.0]]])
    >>> cols = head_columns(layer_spectra(Q, K, np.array([0])), N=4, n=1)
    >>> [round(float(cols[k][0]), 12) for k in ("a", "b", "c", "d", "pairing")]
    [0.5, 0.5, 0.0, 0.0, 1.0]
    >>> str(cols["spectral_type"][0])
    'II'
    """
    from qkforms.faces import spectral_type
    from qkforms.profile import Profile

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
    types = np.full(h, None, dtype=object)
    if idx.size:
        vals = _stats_of_ok(sp, idx, N, n)
        for name, v in vals.items():
            cols[name][idx] = v
        pts = Profile(vals["a"], vals["b"], vals["c"], vals["d"])
        types[idx] = np.asarray(spectral_type(pts, radius=SPECTRAL_TYPE_RADIUS)).tolist()
    cols["spectral_type"] = types
    return cols
