"""Seeded Gaussian baseline survey of the same shape (THEORY §7.3, Cor. 1–2, Prop. 5).

For a layer of ``h`` heads of shape ``(N, n)`` the baseline draws ``h`` heads with iid
N(0, 1) entries in ``W_Q, W_K`` (n × N) and computes, through the core
(:func:`qkforms.gram_spectrum`, :func:`qkforms.profile_from_eigenvalues`, :mod:`qkforms.pairing`,
:func:`qkforms.theta_distance`), the same per-head scores as the survey. The random
stream is seeded by ``(seed, model, layer)`` so every layer is reproducible on its
own (and identical under any executor).

By Proposition 5, ``E[sym_energy] = (N+1)/(2N)`` for every n.

Examples
--------
>>> from qkforms.stats.baseline import baseline_heads
>>> rows = baseline_heads(3, N=64, n=8, seed=0, key=("demo", 0))
>>> len(rows["sym_energy"]), bool(abs(rows["sym_energy"].mean() - 65 / 128) < 0.05)
(3, True)
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms.stats.bootstrap import rng_for

__all__ = ["BASELINE_COLUMNS", "baseline_heads", "expected_sym_energy"]

#: per-head columns of the baseline (same meaning as in heads.parquet)
BASELINE_COLUMNS: tuple[str, ...] = (
    "sym_energy",
    "pairing",
    "rho",
    "pairing_gap",
    "lobe_departure",
    "a",
    "b",
    "c",
    "d",
    "b_S",
    "c_S",
    "d_S",
    "theta_dist",
    "b_minus_a",
    "participation_ratio",
)

#: heads drawn at once (bounds memory: 2 * CHUNK * n * N floats)
CHUNK = 8


def expected_sym_energy(N: int | NDArray[Any]) -> float | NDArray[np.float64]:
    """``(N + 1)/(2N)``: expected symmetric energy of a Gaussian head (Prop. 5).

    Examples
    --------
    >>> from qkforms.stats.baseline import expected_sym_energy
    >>> round(expected_sym_energy(768), 6)
    0.500651
    """
    n_arr = np.asarray(N, dtype=np.float64)
    out = (n_arr + 1.0) / (2.0 * n_arr)
    return float(out) if out.ndim == 0 else out


def _gram_blocks(
    W_Q: NDArray[np.float64], W_K: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``|L|^2`` and the participation ratio of ``L = W_K^T W_Q`` from n x n Gram blocks.

    ``|L|^2 = <W_K W_K^T, W_Q W_Q^T>_F``; the squared singular values of L are the
    eigenvalues of ``C^T (W_K W_K^T) C`` with ``W_Q W_Q^T = C C^T`` (Cholesky).
    """
    kk = W_K @ np.swapaxes(W_K, -1, -2)
    qq = W_Q @ np.swapaxes(W_Q, -1, -2)
    norm_sq = np.sum(kk * qq, axis=(-2, -1))
    C = np.linalg.cholesky(qq)
    h2 = np.clip(np.linalg.eigvalsh(np.swapaxes(C, -1, -2) @ kk @ C), 0.0, None)
    return norm_sq, np.sum(h2, axis=-1) ** 2 / np.sum(h2**2, axis=-1)


def baseline_heads(
    count: int, *, N: int, n: int, seed: int, key: tuple[Hashable, ...]
) -> dict[str, NDArray[np.float64]]:
    """Scores of ``count`` Gaussian heads of shape ``(N, n)``.

    Parameters
    ----------
    count : int
        Number of heads.
    N, n : int
        Model and head dimensions.
    seed : int
        User seed.
    key : tuple
        Names that make the stream unique, e.g. ``(model, layer)``.

    Returns
    -------
    dict of column name -> array of length ``count`` (:data:`BASELINE_COLUMNS`)

    Examples
    --------
    >>> from qkforms.stats.baseline import baseline_heads
    >>> a = baseline_heads(2, N=32, n=4, seed=0, key=("m", 0))
    >>> b = baseline_heads(2, N=32, n=4, seed=0, key=("m", 0))
    >>> bool((a["pairing"] == b["pairing"]).all()), sorted(a)[:3]
    (True, ['a', 'b', 'b_S'])
    """
    from qkforms import gram_spectrum, profile_from_eigenvalues, theta_distance
    from qkforms.pairing import lobe_departure, lobe_ratio, pairing_bound, pairing_score

    rng = rng_for(seed, "gaussian-baseline", *key)
    parts: dict[str, list[NDArray[np.float64]]] = {c: [] for c in BASELINE_COLUMNS}
    done = 0
    while done < count:
        h = min(CHUNK, count - done)
        W_Q = rng.standard_normal((h, n, N))
        W_K = rng.standard_normal((h, n, N))
        lam = gram_spectrum(W_Q, W_K)
        norm_sq, pr = _gram_blocks(W_Q, W_K)
        p = profile_from_eigenvalues(lam, norm_sq)
        a, b, c, d = (np.asarray(v, dtype=np.float64).reshape(h) for v in p)
        rho = np.asarray(lobe_ratio(lam), dtype=np.float64).reshape(h)
        pair = np.asarray(pairing_score(lam), dtype=np.float64).reshape(h)
        one_minus_a = 1.0 - a
        cols = {
            "sym_energy": one_minus_a,
            "pairing": pair,
            "rho": rho,
            "pairing_gap": np.asarray(pairing_bound(rho)).reshape(h) - pair,
            "lobe_departure": np.asarray(lobe_departure(lam), dtype=np.float64).reshape(h),
            "a": a,
            "b": b,
            "c": c,
            "d": d,
            "b_S": b / one_minus_a,
            "c_S": c / one_minus_a,
            "d_S": d / one_minus_a,
            "theta_dist": np.asarray(
                theta_distance(np.stack([a, b, c, d], axis=-1)), dtype=np.float64
            ).reshape(h),
            "b_minus_a": b - a,
            "participation_ratio": pr,
        }
        for name, v in cols.items():
            parts[name].append(v)
        done += h
    if count == 0:
        return {c: np.zeros(0) for c in BASELINE_COLUMNS}
    return {c: np.concatenate(v) for c, v in parts.items()}
