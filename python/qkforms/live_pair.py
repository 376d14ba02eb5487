"""Dead head dimensions and the live pair of a head (``docs/theory.md`` §3.3, dead dimensions).

``L = sum_i k_i q_i^T`` over the rows of ``W_K`` and ``W_Q``, so a head dimension ``i``
with ``q_i = 0`` or ``k_i = 0`` (exactly) contributes nothing: the Gram engine
(:func:`qkforms.gram.layer_spectra`, "Dead dimensions" in :mod:`qkforms.gram`) factors
the *live pair* ``M' = [K'; Q']`` of the live dimensions, whose Gram matrix is a
principal submatrix of ``G``, and pads its spectra with exact zeros to the widths of n.

Examples
--------
>>> import numpy as np
>>> from qkforms.live_pair import live_dimensions
>>> live_dimensions(np.array([[1.0, 0.0], [0.0, 0.0]]), np.ones((2, 2))).tolist()
[True, False]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["live_dimensions", "live_pair_gram", "pad_live_spectrum"]

Array = NDArray[np.float64]


def live_dimensions(W_Q: ArrayLike, W_K: ArrayLike) -> NDArray[np.bool_]:
    """Mask of the live head dimensions: ``q_i != 0`` and ``k_i != 0`` (exact test); batched.

    A dimension whose query or key row is exactly zero contributes nothing to
    ``L = sum_i k_i q_i^T``; a tiny nonzero row is live.

    Examples
    --------
    >>> import numpy as np
    >>> Q = np.array([[1.0, 0.0], [0.0, 0.0], [1e-300, 0.0]])
    >>> K = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> live_dimensions(Q, K).tolist()
    [True, False, True]
    """
    q = np.asarray(W_Q)
    k = np.asarray(W_K)
    return np.asarray(np.any(q != 0, axis=-1) & np.any(k != 0, axis=-1), dtype=bool)


def live_pair_gram(G: Array, live: NDArray[np.bool_], idx: NDArray[np.int64]) -> Array:
    """Gram matrices of the live pairs of heads ``idx``: rows of the live dimensions in both
    blocks of ``G`` (``live`` of shape (h, n); the heads of ``idx`` have the same n').

    Examples
    --------
    >>> import numpy as np
    >>> G = np.arange(16.0).reshape(1, 4, 4)
    >>> live_pair_gram(G, np.array([[True, False]]), np.array([0])).tolist()
    [[[0.0, 2.0], [8.0, 10.0]]]
    """
    n = live.shape[1]
    rows = [np.concatenate([np.flatnonzero(live[h]), n + np.flatnonzero(live[h])])
            for h in idx]
    return np.stack([G[h][np.ix_(r, r)] for h, r in zip(idx, rows, strict=True)])


def pad_live_spectrum(key: str, value: Array, m: int, n: int, width: int) -> Array:
    """Spectra ``value`` (h, width * m) of live pairs of n' = m, padded with exact zeros to
    ``width * n``; ``eig_S`` keeps its order (positive, exact zeros, negative).

    Examples
    --------
    >>> import numpy as np
    >>> pad_live_spectrum("eig_S", np.array([[2.0, -1.0]]), 1, 2, 2).tolist()
    [[2.0, 0.0, 0.0, -1.0]]
    >>> pad_live_spectrum("sv_T", np.array([[3.0]]), 1, 2, 1).tolist()
    [[3.0, 0.0]]
    """
    padded = np.zeros((value.shape[0], width * n))
    if key == "eig_S":  # keep the order: positive, exact zeros, negative
        padded[:] = -np.sort(-np.concatenate([value, padded[:, 2 * m:]], axis=1),
                             axis=1)
    else:
        padded[:, : value.shape[1]] = value
    return padded
