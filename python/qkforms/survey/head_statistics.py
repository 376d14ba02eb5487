"""Per-head survey statistics (``docs/theory.md`` §12.3): one function, batched over heads.

:func:`head_statistics` computes every statistic column of ``heads.parquet``
(``docs/survey.md``) from a head's spectrum of ``S``, its energies, the singular values
of ``L`` and the float error model of the Gram engine, with the core's batched functions
(:func:`qkforms.decide_signature`, :func:`qkforms.profile_from_eigenvalues`,
:func:`qkforms.pairing_score`, ...). Every caller uses it: the survey
(:func:`head_columns`, on the output of the Gram engine
:func:`qkforms.gram.layer_spectra`), the Gaussian baselines
(:func:`qkforms.stats.baseline.baseline_heads`) and the synthetic rows of the statistics
(:mod:`qkforms.stats.synthetic`).

Conventions
-----------
* Signatures are decided, never guessed (:func:`qkforms.decide_signature`): the counts
  are null unless every reduced eigenvalue clears its error bound (or is a known zero);
  ``signature_margin`` and ``n_uncertain`` say how close a head is. The ranks, the
  surjectivity and the Theorem 3 prediction follow from the decision and the dead
  dimensions (``n_live``); ``--exact`` decides every head.
* Integer columns come back as float arrays with NaN for null; boolean and string
  columns as object arrays with None for null.
* ``theta_L_dist`` is the Euclidean distance in R^4 from the profile to
  ``theta_L(rho)``; ``thm5_dist`` the Euclidean distance in R^3 from the symmetric
  profile ``(b_S, c_S, d_S)`` to the Theorem 5 limit at the head's ``rho``.
* Statistics of ``S`` that are undefined or undecidable when ``S`` vanishes (pairing,
  ``rho``, the lobe and symmetric-profile statistics, the spectral type) are null when
  ``|S|`` does not exceed the norm of the eigenvalues' error bounds; other undefined
  values of an ``ok`` head (``a_over_b`` when ``b = 0``, ``lobe_departure`` without
  negative eigenvalues) are NaN or inf.

Examples
--------
>>> import numpy as np
>>> from qkforms.gram import layer_spectra
>>> from qkforms.survey.head_statistics import head_columns
>>> rng = np.random.default_rng(0)
>>> Q, K = rng.standard_normal((2, 3, 12)), rng.standard_normal((2, 3, 12))
>>> Q[1, 2] = 0.0                                     # head 1: one dead dimension
>>> cols = head_columns(layer_spectra(Q, K, np.array([0, 1])), N=12, n=3)
>>> cols["n_pos"].tolist(), cols["n_live"].tolist(), cols["prediction"].tolist()
([3.0, 2.0], [3.0, 2.0], ['thm3', 'thm3-live'])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms.exact.form_signature import head_signature
from qkforms.exact.inertia import head_inertia
from qkforms.faces import spectral_type
from qkforms.form_signature import decide_signature
from qkforms.gram import LayerSpectra
from qkforms.pairing import lobe_departure, lobe_ratio, pairing_bound, pairing_score
from qkforms.profile_map import Profile, profile_from_eigenvalues, symmetric_profile
from qkforms.survey.schema import BOOL_COLUMNS, FLOAT_COLUMNS, INT_COLUMNS, STRING_COLUMNS
from qkforms.theta_family import accumulation_limit, theta_distance, theta_L
from qkforms.tolerances import SPECTRAL_TYPE_RADIUS

#: the columns filled for a zero form too (its signature is ``(0, 0, N)``)
SIGNATURE_FACTS: tuple[str, ...] = ("n_pos", "n_neg", "n_zero", "signature_by",
                                    "signature_margin", "n_uncertain", "n_live",
                                    "stacked_rank", "live_rank", "surjective", "prediction",
                                    "prediction_met")

__all__ = ["SIGNATURE_FACTS", "ZERO_FORM", "exact_facts", "head_columns", "head_statistics",
           "rank_facts"]

#: the ``error`` of a head whose form vanishes (``status == "zero_form"``)
ZERO_FORM = "L = W_K^T W_Q is zero: its profile is undefined (docs/theory.md §5.1)"

#: statistics that need ``S != 0`` (null when ``S`` is zero within its error bounds)
_NEED_S = ("pairing", "rho", "pairing_bound", "pairing_gap", "lobe_departure", "b_S", "c_S",
           "d_S", "theta_L_dist", "thm5_dist", "a_over_b")


def head_statistics(
    eig_S: ArrayLike,
    norm_sq: ArrayLike,
    skew_sq: ArrayLike,
    trace: ArrayLike,
    sv_L_sq: ArrayLike,
    *,
    N: ArrayLike,
    n: ArrayLike,
    err_rel: ArrayLike = 0.0,
    err_abs: ArrayLike = 0.0,
    n_live: ArrayLike | None = None,
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
        Ambient and head dimensions.
    err_rel, err_abs : float or array_like of shape (h,)
        The float error model of the eigenvalues (:class:`qkforms.gram.LayerSpectra`);
        0 declares them exact.
    n_live : array_like of shape (h,), optional
        Live head dimensions (default ``n``).

    Returns
    -------
    dict
        Every name of :data:`~qkforms.survey.schema.INT_COLUMNS` and
        :data:`~qkforms.survey.schema.FLOAT_COLUMNS` (float64, NaN for null),
        :data:`~qkforms.survey.schema.BOOL_COLUMNS` and
        :data:`~qkforms.survey.schema.STRING_COLUMNS` (object arrays, None for null),
        each of length h.

    Examples
    --------
    >>> from qkforms.survey.head_statistics import head_statistics
    >>> st = head_statistics([[0.5, -0.5]], [1.0], [0.5], [0.0], [[1.0, 0.0]], N=4, n=1)
    >>> st["n_zero"].tolist(), st["a"].tolist(), st["pairing"].tolist(), st["spectral_type"]
    ([2.0], [0.5], [1.0], array(['II'], dtype=object))
    >>> st["prediction"].tolist(), st["prediction_met"].tolist(), st["signature_by"].tolist()
    (['thm3'], [True], ['float'])
    """
    eig = -np.sort(-np.asarray(eig_S, dtype=np.float64), axis=1)
    h = eig.shape[0]
    norm_sq = np.asarray(norm_sq, dtype=np.float64)
    h2 = np.asarray(sv_L_sq, dtype=np.float64)
    rel = np.broadcast_to(np.asarray(err_rel, dtype=np.float64), (h,))
    absolute = np.broadcast_to(np.asarray(err_abs, dtype=np.float64), (h,))
    out = _signature_columns(eig, rel, absolute, N=N, n=n, n_live=n_live)
    zero_form = ~(norm_sq > 0)  # L = 0: only the signature facts are defined
    p = profile_from_eigenvalues(eig, np.where(zero_form, 1.0, norm_sq),
                                 np.asarray(skew_sq, dtype=np.float64))
    pts = np.stack([p.a, p.b, p.c, p.d], axis=-1)
    # S = 0 exactly (L antisymmetric, or a zero form): the statistics of S are undefined;
    # compute them on a stand-in and null them below
    no_S = ~(np.abs(eig).max(axis=1, initial=0.0) > 0)
    sym_pts = np.where(no_S[:, None], np.array([0.0, 1.0, 0.0, 0.0]), pts)
    out.update(_profile_columns(eig, p, pts, sym_pts, no_S, h2, norm_sq,
                                np.asarray(trace, dtype=np.float64)))
    types = spectral_type(Profile(*sym_pts.T), radius=SPECTRAL_TYPE_RADIUS)
    out["spectral_type"] = np.asarray(np.atleast_1d(types).tolist(), dtype=object)
    _null_undefined(out, eig, rel, absolute, no_S, zero_form)
    return out


def _profile_columns(eig: NDArray, p: Profile, pts: NDArray, sym_pts: NDArray, no_S: NDArray,
                     h2: NDArray, norm_sq: NDArray, trace: NDArray) -> dict[str, NDArray]:
    """The columns after the signature's, in the table's order: the energy share of
    ``S``, the pairing, the profile and its distances, and the singular values'."""
    sym = _pairing_columns(eig, no_S, pts, sym_pts)
    a, b, c, d = (np.asarray(x, dtype=np.float64) for x in p)  # batched: arrays
    with np.errstate(divide="ignore", invalid="ignore"):
        a_over_b = a / b
    return {
        "sym_energy": np.sum(eig * eig, axis=1) / norm_sq,
        **{name: sym[name] for name in ("pairing", "rho", "pairing_bound", "pairing_gap",
                                        "lobe_departure")},
        "a": a, "b": b, "c": c, "d": d,
        "b_S": sym["b_S"], "c_S": sym["c_S"], "d_S": sym["d_S"],
        "theta_dist": np.asarray(theta_distance(Profile(*pts.T))),
        "theta_L_dist": sym["theta_L_dist"],
        "thm5_dist": sym["thm5_dist"],
        **_singular_value_columns(h2, norm_sq, trace),
        "a_over_b": a_over_b,
        "b_minus_a": b - a,
        "norm_sq": norm_sq,
    }


def _signature_columns(eig: NDArray, rel: NDArray, absolute: NDArray, *, N: ArrayLike,
                       n: ArrayLike, n_live: ArrayLike | None) -> dict[str, NDArray]:
    """The signature as the float spectrum decides it, its margin and the rank facts."""
    h = eig.shape[0]
    NN = np.broadcast_to(np.asarray(N, dtype=np.int64), (h,))
    nn = np.broadcast_to(np.asarray(n, dtype=np.int64), (h,))
    m = nn if n_live is None else np.asarray(n_live, dtype=np.int64)
    dec = decide_signature(eig, rel, absolute, N=NN, n_live=m)
    decided = np.asarray(dec.decided, dtype=bool)
    n_pos = np.where(decided, dec.signature.n_pos, np.nan)
    n_neg = np.where(decided, dec.signature.n_neg, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        balance = 1.0 - np.abs(n_pos - n_neg) / (n_pos + n_neg)
    return {
        "n_pos": n_pos,
        "n_neg": n_neg,
        "n_zero": np.where(decided, dec.signature.n_zero, np.nan),
        "signature_by": np.array(["float" if v else None for v in decided], dtype=object),
        "signature_margin": np.asarray(dec.margin, dtype=np.float64),
        "n_uncertain": np.asarray(dec.n_uncertain, dtype=np.float64),
        "n_live": m.astype(np.float64),
        **rank_facts(decided, m, nn, NN, n_pos, n_neg),
        "balance": balance,
    }


def _pairing_columns(eig: NDArray, no_S: NDArray, pts: NDArray,
                     sym_pts: NDArray) -> dict[str, NDArray]:
    """The statistics of the symmetric part: pairing, lobes, the profile of ``S`` and the
    distances to Θ_L and to Theorem 5's limit (on a stand-in spectrum where ``S = 0``)."""
    stand_in = np.zeros_like(eig[:1])
    if eig.shape[1] >= 2:
        stand_in[0, 0], stand_in[0, -1] = 1.0, -1.0
    eig_S = np.where(no_S[:, None], stand_in, eig)
    b_S, c_S, d_S = (np.asarray(x) for x in symmetric_profile(Profile(*sym_pts.T)))
    pairing = np.asarray(pairing_score(eig_S))
    rho = np.asarray(lobe_ratio(eig_S))
    bound = np.asarray(pairing_bound(rho))
    tl = theta_L(rho)
    lim = accumulation_limit(rho)
    theta_L_dist = np.linalg.norm(pts - np.stack(list(tl), axis=-1), axis=-1)
    thm5_dist = np.linalg.norm(
        np.stack([b_S, c_S, d_S], axis=-1) - np.stack([lim.b, lim.c, lim.d], axis=-1), axis=-1
    )
    return {
        "pairing": pairing,
        "rho": rho,
        "pairing_bound": bound,
        "pairing_gap": bound - pairing,
        "lobe_departure": np.asarray(lobe_departure(eig_S)),
        "b_S": b_S, "c_S": c_S, "d_S": d_S,
        "theta_L_dist": theta_L_dist,
        "thm5_dist": thm5_dist,
    }


def _singular_value_columns(h2: NDArray, norm_sq: NDArray,
                            trace: NDArray) -> dict[str, NDArray]:
    """The statistics of the singular values of ``L`` and of its trace."""
    s2 = h2.sum(axis=1)
    s4 = (h2 * h2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        stable_rank = s2 / h2[:, 0]
    return {
        "trace_ratio": np.abs(trace) / np.sqrt(norm_sq),
        "participation_ratio": s2 * s2 / s4,
        "stable_rank": stable_rank,
        "leading_share": h2[:, 0] / s2,
    }


def _null_undefined(out: dict[str, NDArray], eig: NDArray, rel: NDArray, absolute: NDArray,
                    no_S: NDArray, zero_form: NDArray) -> None:
    """Null (in place) the statistics of ``S`` where it is zero within its error bounds
    (they are noise there), and every non-signature column of a zero form."""
    err = rel[:, None] * np.abs(eig) + absolute[:, None]
    s_zero = no_S | (np.sum(eig * eig, axis=1) <= np.sum(err * err, axis=1))
    for name in _NEED_S:
        out[name] = np.where(s_zero, np.nan, out[name])
    out["spectral_type"] = _null_where(s_zero, out["spectral_type"])
    for name in out:
        if name not in SIGNATURE_FACTS:
            out[name] = _null_where(zero_form, out[name])


def _null_where(mask: NDArray[np.bool_], values: NDArray) -> NDArray:
    """``values`` with null (None, or NaN for numbers) where ``mask``."""
    out = values.copy()
    out[mask] = None if values.dtype == object else np.nan
    return out


def rank_facts(decided: NDArray[np.bool_], m: NDArray[np.int64], n: NDArray[np.int64],
                N: NDArray[np.int64], n_pos: NDArray[np.float64],
                n_neg: NDArray[np.float64]) -> dict[str, NDArray]:
    """Ranks, surjectivity and the Theorem 3 prediction implied by a float decision.

    Decided means every reduced eigenvalue of the live pair is nonzero apart from the
    ``2n' - min(2n', N)`` forced by the rank bound, so the live pair has rank
    ``min(2n', N)``; a dead dimension is a zero row, so the stacked map is not onto.
    """
    h = m.shape[0]
    live_onto = decided & (2 * m <= N)
    full = m == n
    surjective = np.array([(bool(lo) if dd else None) if f else False
                           for lo, dd, f in zip(live_onto, decided, full, strict=True)],
                          dtype=object)
    kind = np.full(h, None, dtype=object)
    kind[decided & full] = np.where(live_onto[decided & full], "thm3", "none")
    kind[decided & ~full] = np.where(live_onto[decided & ~full], "thm3-live", "none")
    predicted = np.isin(kind.astype(str), ["thm3", "thm3-live"])
    met = np.array([bool(np.asarray(pos == mm) & np.asarray(neg == mm)) if pr else None
                    for pos, neg, mm, pr in zip(n_pos, n_neg, m, predicted, strict=True)],
                   dtype=object)
    return {
        "stacked_rank": np.where(decided & full & live_onto, 2 * n, np.nan),
        "live_rank": np.where(decided, np.minimum(2 * m, N), np.nan),
        "surjective": surjective,
        "prediction": kind,
        "prediction_met": met,
    }


def head_columns(sp: LayerSpectra, *, N: int, n: int) -> dict[str, NDArray]:
    """Statistics columns for the heads of one layer.

    Heads with ``L = 0`` (no live dimension, or ``|L|^2`` computed as 0) get the status
    ``"zero_form"`` (their ``ok`` and ``error`` are updated in place): their signature,
    live dimension and ranks are filled, their profile statistics are null.

    Parameters
    ----------
    sp : LayerSpectra
        Output of :func:`qkforms.gram.layer_spectra`.
    N, n : int
        Ambient and head dimensions.

    Returns
    -------
    dict
        ``valid`` (bool mask of ``ok`` heads, those with statistics and spectra),
        ``status`` (object array), and every statistic column as
        :func:`head_statistics` returns it (null where not ``ok``).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.gram import layer_spectra
    >>> from qkforms.survey.head_statistics import head_columns
    >>> Q = np.array([[[1.0, 0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0, 0.0]]])
    >>> K = np.array([[[0.0, 1.0, 0.0, 0.0]]])
    >>> cols = head_columns(layer_spectra(Q, K, np.array([0, 0])), N=4, n=1)
    >>> [round(float(cols[k][0]), 12) for k in ("a", "b", "c", "d", "pairing")]
    [0.5, 0.5, 0.0, 0.0, 1.0]
    >>> str(cols["spectral_type"][0]), cols["status"].tolist(), cols["n_zero"].tolist()
    ('II', ['ok', 'zero_form'], [2.0, 4.0])
    """
    h = sp.ok.shape[0]
    status = np.array(["ok" if v else "failed" for v in sp.ok], dtype=object)
    finite = np.flatnonzero(sp.ok)
    zero = finite[~(sp.norm_sq[finite] > 0)]  # no live dimension gives |L|^2 = 0 too
    for i in zero:
        status[i] = "zero_form"
        sp.error[i] = ZERO_FORM
    cols: dict[str, NDArray] = {}
    for name in INT_COLUMNS + FLOAT_COLUMNS:
        cols[name] = np.full(h, np.nan)
    for name in BOOL_COLUMNS + STRING_COLUMNS:
        cols[name] = np.full(h, None, dtype=object)
    if finite.size:
        with np.errstate(divide="ignore", invalid="ignore"):
            vals = head_statistics(sp.eig_S[finite], sp.norm_sq[finite], sp.skew_sq[finite],
                                   sp.trace[finite], sp.sv_L_sq[finite], N=N, n=n,
                                   err_rel=sp.err_rel[finite], err_abs=sp.err_abs[finite],
                                   n_live=sp.n_live[finite])
        for name, v in vals.items():
            cols[name][finite] = v
    sp.ok[zero] = False
    cols["valid"] = sp.ok.copy()
    cols["status"] = status
    return cols


def exact_facts(W_Q: NDArray[np.float64], W_K: NDArray[np.float64], *, method: str = "auto",
                progress: Any = None) -> tuple[dict[str, Any], bool]:
    """The signature columns of one head decided exactly (``--exact``), and ``L == 0``.

    Parameters
    ----------
    W_Q, W_K : ndarray, shape (n, N)
        The weights as surveyed (converted exactly).
    method : {"auto", "charpoly"}
        The signature route (:func:`qkforms.exact.head_signature`); the ranks and the
        prediction always come from :func:`qkforms.exact.head_inertia`.
    progress : callable, optional
        Passed to :func:`qkforms.exact.head_inertia`.

    Returns
    -------
    (dict, bool)
        Values of the ``n_pos``, ``n_neg``, ``n_zero``, ``n_live``, ``stacked_rank``,
        ``live_rank``, ``surjective``, ``prediction``, ``prediction_met`` and
        ``signature_by`` columns, and whether ``L = 0`` exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.survey.head_statistics import exact_facts
    >>> Q = np.eye(2, 6)
    >>> facts, zero = exact_facts(Q, Q)                  # W_K = W_Q
    >>> facts["n_pos"], facts["n_neg"], facts["prediction"], zero
    (2, 0, 'none', False)
    """
    n, N = W_Q.shape
    r = head_inertia(W_Q, W_K, progress=progress)
    sig = r.signature
    if method == "charpoly":  # Descartes on charpoly(J G): independent of Theorem 3
        sig = head_signature(W_Q, W_K, method="charpoly")
    m = r.n_live
    facts: dict[str, Any] = {
        "n_pos": sig.n_pos, "n_neg": sig.n_neg, "n_zero": sig.n_zero, "n_live": m,
        "stacked_rank": r.stacked_rank, "live_rank": r.live_rank,
        "surjective": r.stacked_rank == 2 * n, "prediction": r.prediction,
        "prediction_met": (tuple(sig) == (m, m, N - 2 * m)) if r.prediction != "none" else None,
        "signature_by": "exact",
    }
    return facts, r.zero_form
