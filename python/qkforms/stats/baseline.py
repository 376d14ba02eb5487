"""Seeded Gaussian baseline survey of the same shape (``docs/theory.md`` §12.3,
Cor. 1–2, Prop. 5: §9).

For a layer of ``h`` heads of shape ``(N, n)`` the baseline draws ``h`` heads with iid
N(0, 1) entries in ``W_Q, W_K`` (n × N) and computes the same per-head scores as the
survey, by the same code: the Gram engine (:func:`qkforms.gram.head_spectra`, asked
only for the spectrum of S and the singular values of L) and the per-head statistics
function (:func:`qkforms.survey.statistics.head_statistics`). The random
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
    from qkforms.gram import head_spectra
    from qkforms.survey.statistics import head_statistics

    rng = rng_for(seed, "gaussian-baseline", *key)
    parts: dict[str, list[NDArray[np.float64]]] = {c: [] for c in BASELINE_COLUMNS}
    done = 0
    while done < count:
        h = min(CHUNK, count - done)
        W_Q = rng.standard_normal((h, n, N))
        W_K = rng.standard_normal((h, n, N))
        sp = head_spectra(W_Q, W_K, want=("eig_S", "sv_L_sq"))
        st = head_statistics(sp.eig_S, sp.norm_sq, np.maximum(sp.skew_sq, 0.0), sp.trace,
                             sp.sv_L_sq, N=N, n=n)
        for name in BASELINE_COLUMNS:
            parts[name].append(np.asarray(st[name], dtype=np.float64))
        done += h
    if count == 0:
        return {c: np.zeros(0) for c in BASELINE_COLUMNS}
    return {c: np.concatenate(v) for c, v in parts.items()}
