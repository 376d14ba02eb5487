r"""The Gram engine (Lemma 10): one factorization per head, every spectrum read off it.

Everything qkforms computes about a head ``L = W_K^T W_Q`` (``W`` of shape ``(n, N)``)
in floating point goes through this module: :class:`qkforms.Head`,
:func:`qkforms.gram_spectrum`, :func:`qkforms.reduce_heads`, :func:`qkforms.head_energies`,
the survey (batched per layer, with grouped-query attention), the Gaussian baselines
and the synthetic survey rows of the statistics. No ``N x N`` matrix is formed.

The factorization
-----------------
Let ``M = [W_K; W_Q]`` (``2n x N``, keys first) and ``G = M M^T`` (``2n x 2n``). A
*factor* of the head is an ``F`` (``2n x 2n``) with ``G = F F^T`` whose first n rows
vanish beyond column n. The engine makes it in one of two ways, with one rule between
them (:data:`qkforms.tolerances.PIVOT_LIMIT`):

* **Cholesky** of ``G`` (``F`` lower triangular), the default: the Gram blocks cost
  ``O(N n^2)`` per head and the key block ``W_K W_K^T`` is shared by the query heads
  of a key group;
* **Householder QR** of ``M^T = U R`` (``F = R^T``, padded with zero columns to
  ``2n x 2n`` when ``N < 2n``) for heads whose smallest squared Cholesky pivot is at
  most ``PIVOT_LIMIT`` times the largest diagonal entry of ``G``, or whose Cholesky
  factor does not prove ``G`` positive definite (``eta >= 1`` in Claim 3), or that have
  no Cholesky factor: squaring ``M`` into ``G`` loses accuracy when ``M`` is badly
  conditioned, QR does not. Heads whose stacked map is not onto are computed like any
  other (they are findings, not failures: ``docs/survey.md``).

**Dead dimensions.** ``L = sum_i k_i q_i^T`` over the rows of ``W_K`` and ``W_Q``, so a
head dimension ``i`` with ``q_i = 0`` or ``k_i = 0`` (exactly; e.g. a zero q/k-norm gain
after folding) contributes nothing. The engine drops such dimensions from both
projections and factors the *live pair* ``M' = [K'; Q']`` (``2n' x N``): its Gram matrix
is the principal submatrix of ``G`` on the live rows, so nothing is recomputed. The
spectra of the live pair are those of the head (same ``L``), padded with exact zeros to
the widths of ``n``; ``n_live`` records ``n'``.

**Claim 1 (reduction).** *There is* ``U`` (``N x k``, orthonormal columns,
``k = min(N, 2n)``) *with* ``M = F_k U^T``, *where* ``F_k`` *is* ``F`` *without its
padding columns. With* ``K_red`` *and* ``Q_red`` *the first and last n rows of* ``F``,
``L = U L_red U^T`` *with* ``L_red = K_red^T Q_red`` *(up to zero padding rows and
columns), so* ``L`` *and* ``L_red`` *have the same nonzero eigenvalues, singular
values, and the same for their symmetric and skew parts.*

*Proof.* QR: ``M^T = U R`` gives ``M = R^T U^T``. Cholesky (``G`` positive definite):
put ``U = M^T F^{-T}``; then ``U^T U = F^{-1} G F^{-T} = I`` and ``F U^T = M``. Rows
split as ``W_K = K_red U^T``, ``W_Q = Q_red U^T``, so
``L = W_K^T W_Q = U (K_red^T Q_red) U^T``. Completing ``U`` to an orthogonal
``[U, U_perp]`` gives ``L = [U, U_perp] diag(L_red, 0) [U, U_perp]^T``, an orthogonal
similarity; it commutes with transposition, so it carries ``S`` and ``T`` to the parts
of ``L_red`` (``S_red = (L_red + L_red^T)/2``, ``T_red = (L_red - L_red^T)/2``). ∎

**Claim 2 (blocks).** *Write* ``K_red = [A, 0]`` *and* ``Q_red = [B, C]`` *with*
``A, B, C`` *of size* ``n x n``, *and put* ``X = A^T B``, ``Y = A^T C``, ``D = X - X^T``.
*Then*

.. math::

    L_{red} = \begin{pmatrix} X & Y \\ 0 & 0 \end{pmatrix}, \quad
    2 S_{red} = \begin{pmatrix} X + X^T & Y \\ Y^T & 0 \end{pmatrix}
              = F^T \mathcal{J} F, \quad
    2 T_{red} = \begin{pmatrix} D & Y \\ -Y^T & 0 \end{pmatrix}
              = F^T \mathcal{J}' F,

*with* ``J = [[0, I], [I, 0]]`` *and the skew swap* ``J' = [[0, I], [-I, 0]]``, *and*

1. *the nonzero spectrum of* ``S`` *is that of* ``S_red`` *(one symmetric* ``2n x 2n``
   *eigenproblem), equal to that of* ``J G / 2`` *(Lemma 10);*
2. *the singular values of* ``T`` *are the square roots of the eigenvalues of*
   ``T_red^T T_red = (1/4) [[D^T D + Y Y^T, D^T Y], [Y^T D, Y^T Y]]``, *each twice
   (``T_red`` is real skew);*
3. *the nonzero singular values of* ``L`` *are the square roots of the eigenvalues of*
   ``X X^T + Y Y^T = A^T (W_Q W_Q^T) A`` *(n x n);*
4. *the nonzero eigenvalues of* ``L`` *are those of* ``X`` *(n x n), i.e. of*
   ``W_Q W_K^T = B A^T``;
5. ``|L|^2 = <W_K W_K^T, W_Q W_Q^T>``, ``tr L = tr(W_Q W_K^T)`` *and*
   ``tr L^2 = tr((W_Q W_K^T)^2)``, *read off the blocks of* ``G``.

*Proof.* ``L_red = K_red^T Q_red = [A^T; 0] [B, C]``, which gives ``L_red`` and its
parts; ``F^T J F = K_red^T Q_red + Q_red^T K_red = 2 S_red`` and
``F^T J' F = K_red^T Q_red - Q_red^T K_red = 2 T_red``. (1) by Claim 1, and
``F^T J F`` has the nonzero spectrum of ``J F F^T = J G``. (2) A real skew matrix is
normal with eigenvalues ``±iσ``, so its singular values are the ``σ``, each twice;
multiply out ``(2T_red)^T (2T_red)``. (3) The nonzero rows of ``L_red`` are
``[X, Y] = A^T Q_red``, and ``Q_red Q_red^T = Q_red U^T U Q_red^T = W_Q W_Q^T``.
(4) ``L_red`` is block upper triangular with diagonal blocks ``X`` and ``0``;
``A^T B`` and ``B A^T = Q_red K_red^T = W_Q W_K^T`` have the same eigenvalues.
(5) ``|K^T Q|^2 = tr(Q^T K K^T Q) = <K K^T, Q Q^T>``, ``tr(K^T Q) = tr(Q K^T)``
and ``tr((K^T Q)^2) = tr((Q K^T)^2)``. ∎

**Claim 3 (float error model for signs)** bounds the error of each computed eigenvalue
of ``S``: it is stated and proved in :mod:`qkforms.gram_factor`, with the factors
(Cholesky, QR and the fallback rule) it is about. The live pair is
:mod:`qkforms.live_pair`.

So one factorization serves every quantity: per head, one Cholesky (or QR), and only
the eigenproblems a caller asks for (``want``): one symmetric ``2n`` for ``S``, one
symmetric ``2n`` for ``T``, one symmetric ``n`` for the singular values of ``L``, one
general ``n`` for the eigenvalues of ``L``; the products feeding them are ``n x n``
blocks. ``tests/core/test_gram.py`` checks each item against dense ``N x N`` computations.

Examples
--------
>>> import numpy as np
>>> from qkforms.gram import head_spectra
>>> rng = np.random.default_rng(0)
>>> Q, K = rng.standard_normal((2, 3, 10))
>>> sp = head_spectra(Q[None], K[None])
>>> L = K.T @ Q
>>> bool(np.allclose(sp.sv_L_sq[0], np.linalg.svd(L, compute_uv=False)[:3] ** 2))
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms._validate import as_float_array
from qkforms.errors import ShapeError
from qkforms.form_parts import FloatEnergies, energies_from_norm_and_trace
from qkforms.gram_factor import (
    SPECTRA,
    factor_heads,
    padded_factor,
    qr_factor,
    spectra_from_factor,
    stack,
    stacked_rank,
)
from qkforms.live_pair import live_dimensions, live_pair_gram, pad_live_spectrum

__all__ = [
    "SPECTRA",
    "LayerSpectra",
    "gram_energies",
    "head_spectra",
    "layer_gram",
    "layer_spectra",
    "live_dimensions",
    "qr_factor",
    "spectra_from_factor",
    "stack",
    "stacked_rank",
    "unit_scale",
]

Array = NDArray[np.float64]


@dataclass
class LayerSpectra:
    """Spectra and energies of a batch of heads (the query heads of a layer).

    Rows of failed heads (``ok`` False) hold NaN and carry a reason in ``error``;
    spectra not asked for (``want``) are NaN too.

    Attributes
    ----------
    ok : ndarray of bool, shape (h,)
    error : list of (str or None)
    eig_S : ndarray, shape (h, 2n)
        Eigenvalues of the symmetric part of ``L_red``, decreasing (the nonzero
        spectrum of ``S`` on ``R^N``, padded with zeros when ``M`` is not onto).
    norm_sq, skew_sq, trace : ndarray, shape (h,)
        ``|L|^2`` (sum of squared entries), ``|T|^2`` and ``tr L``.
    sv_L_sq : ndarray, shape (h, n)
        Squared singular values of ``L`` (its nonzero ones), decreasing.
    sv_T : ndarray, shape (h, n)
        The n distinct singular values of ``T`` (each occurs twice), decreasing.
    abs_eig_L : ndarray, shape (h, n)
        Moduli of the eigenvalues of the n x n matrix ``W_Q W_K^T`` (the nonzero
        eigenvalues of ``L``), decreasing.
    n_live : ndarray, shape (h,)
        Live head dimensions ``n'`` (those with ``q_i != 0`` and ``k_i != 0``); the
        spectra are those of the live pair, padded with exact zeros (float, NaN for
        failed heads).
    err_rel, err_abs : ndarray, shape (h,)
        The float error model of Claim 3 (:mod:`qkforms.gram_factor`): each computed
        eigenvalue ``lam`` of ``S`` is within ``err_rel * |lam| + err_abs`` of an exact
        one (first order).
    Q_red, K_red : ndarray, shape (h, n, 2n), or None
        Reduced factors with ``L_red = K_red^T Q_red`` (kept on request; of the whole
        stacked map, dead dimensions included, as the RoPE relative forms need).

    Examples
    --------
    >>> sp = LayerSpectra.failed(2, 3, "unreadable")
    >>> sp.eig_S.shape, sp.error
    ((2, 6), ['unreadable', 'unreadable'])
    >>> [f for f, w in LayerSpectra.widths().items() if w == 0]
    ['norm_sq', 'skew_sq', 'trace', 'n_live', 'err_rel', 'err_abs']
    """

    ok: NDArray[np.bool_]
    error: list[str | None]
    # width: values per head in units of n; degree: how the field scales with the weights
    # (W_Q, W_K -> s_Q W_Q, s_K W_K multiplies it by (s_Q s_K)^degree); factor: which one
    eig_S: Array = field(metadata={"width": 2, "degree": 1})
    norm_sq: Array = field(metadata={"width": 0, "degree": 2})
    skew_sq: Array = field(metadata={"width": 0, "degree": 2})
    trace: Array = field(metadata={"width": 0, "degree": 1})
    sv_L_sq: Array = field(metadata={"width": 1, "degree": 2})
    sv_T: Array = field(metadata={"width": 1, "degree": 1})
    abs_eig_L: Array = field(metadata={"width": 1, "degree": 1})
    n_live: Array = field(metadata={"width": 0})
    err_rel: Array = field(metadata={"width": 0, "degree": 0})
    err_abs: Array = field(metadata={"width": 0, "degree": 1})
    Q_red: Array | None = field(default=None, metadata={"factor": "Q"})
    K_red: Array | None = field(default=None, metadata={"factor": "K"})

    @staticmethod
    def widths() -> dict[str, int]:
        """Width of each numeric per-head field in units of n (0: one number per head)."""
        return {f.name: f.metadata["width"] for f in dataclasses.fields(LayerSpectra)
                if "width" in f.metadata}

    @staticmethod
    def factor_fields() -> tuple[str, ...]:
        """The optional reduced-factor fields (``Q_red``, ``K_red``)."""
        return tuple(f.name for f in dataclasses.fields(LayerSpectra)
                     if f.metadata.get("factor"))

    @classmethod
    def failed(cls, h: int, n: int, reason: str, *, keep_factors: bool = False) -> LayerSpectra:
        """``h`` heads that all failed for ``reason`` (every number NaN)."""
        nums = {k: np.full((h,) if w == 0 else (h, w * n), np.nan)
                for k, w in cls.widths().items()}
        facs = {k: np.full((h, n, 2 * n), np.nan) if keep_factors else None
                for k in cls.factor_fields()}
        # the fields are filled by name from the dataclass's own field list (widths())
        return cls(ok=np.zeros(h, dtype=bool), error=[reason] * h, **nums, **facs)  # type: ignore[arg-type]

    def scaled(self, s_Q: ArrayLike, s_K: ArrayLike) -> LayerSpectra:
        """The spectra of the heads ``(s_Q[h] W_Q[h], s_K[h] W_K[h])`` from these.

        Each field is multiplied by ``(s_Q s_K)^degree`` (one factor at a time, so that
        a zero stays zero), ``Q_red`` by ``s_Q`` and ``K_red`` by ``s_K``. With the
        power-of-two scales of :func:`unit_scale` this is exact unless the true value
        is beyond the float64 range, where it overflows to ``inf`` or underflows to 0.

        Examples
        --------
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> Q, K = rng.standard_normal((2, 1, 2, 6))
        >>> unit = layer_spectra(Q, K, np.array([0]))
        >>> big = layer_spectra(4 * Q, 0.5 * K, np.array([0]))
        >>> bool(np.array_equal(unit.scaled([4.0], [0.5]).eig_S, big.eig_S))
        True
        """
        sq = np.asarray(s_Q, dtype=np.float64)
        sk = np.asarray(s_K, dtype=np.float64)
        out: dict[str, object] = {"ok": self.ok.copy(), "error": list(self.error)}
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            for f in dataclasses.fields(self):
                value = getattr(self, f.name)
                if "degree" in f.metadata:
                    q = sq.reshape((-1,) + (1,) * (value.ndim - 1))
                    k = sk.reshape((-1,) + (1,) * (value.ndim - 1))
                    for _ in range(f.metadata["degree"]):
                        value = value * q * k
                    out[f.name] = value
                elif f.metadata.get("factor") and value is not None:
                    s = sq if f.metadata["factor"] == "Q" else sk
                    out[f.name] = value * s.reshape(-1, 1, 1)
                elif f.name not in out:
                    out[f.name] = value
        return LayerSpectra(**out)  # type: ignore[arg-type]

    @classmethod
    def concat(cls, parts: Sequence[LayerSpectra]) -> LayerSpectra:
        """The heads of several batches, in order (same n and factor choice).

        Examples
        --------
        >>> a = LayerSpectra.failed(1, 2, "x"); b = LayerSpectra.failed(2, 2, "y")
        >>> LayerSpectra.concat([a, b]).error
        ['x', 'y', 'y']
        """
        merged: dict[str, object] = {"error": [e for p in parts for e in p.error]}
        for f in dataclasses.fields(cls):
            if f.name == "error":
                continue
            vals = [getattr(p, f.name) for p in parts]
            merged[f.name] = None if vals[0] is None else np.concatenate(vals)
        return cls(**merged)  # type: ignore[arg-type]  # fields checked by name above


# --------------------------------------------------------------------------- inputs


def unit_scale(W: ArrayLike) -> Array:
    """Power-of-two scale of each matrix of a stack, bringing its entries into (-1, 1).

    ``2**e`` with ``max|W| < 2**e <= 2 max|W|`` (``e <= 1023``: entries of ``2**1023``
    and more come into ``[-2, 2)``), per matrix (the last two axes); 1.0 for
    a zero matrix or one with NaN/inf entries (those stay visible to the engine, which
    fails such heads). Dividing by a power of two is exact, so computing on ``W / s``
    changes no rounding -- it only keeps tiny or huge weights (1e-300, 1e300) from
    under- or overflowing in the Gram matrices. :class:`qkforms.Head` and the survey
    both rescale with this function (and :meth:`LayerSpectra.scaled` scales back).

    Examples
    --------
    >>> import numpy as np
    >>> s = unit_scale(np.array([[[3.0, -5.0]], [[0.0, 0.0]], [[1e300, 1.0]]]))
    >>> s[:2].tolist(), float(np.log2(s[2]))
    ([8.0, 1.0], 997.0)
    """
    a = np.asarray(W, dtype=np.float64)
    if a.ndim < 2:
        raise ShapeError(f"unit_scale needs matrices (..., n, N), got shape {a.shape}")
    if a.size == 0:
        return np.ones(a.shape[:-2])
    with np.errstate(invalid="ignore"):  # max |W| without an |W| copy of the weights
        m = np.maximum(np.max(a, axis=(-2, -1)), -np.min(a, axis=(-2, -1)))
    good = np.isfinite(m) & (m > 0)
    _, e = np.frexp(np.where(good, m, 1.0))
    # 2**1024 is not a float64: entries >= 2**1023 are scaled into [-2, 2) instead
    return np.where(good, np.ldexp(1.0, np.minimum(e, 1023)), 1.0)


def _check_layer(W_Q: Array, W_K: Array, kv_index: NDArray[np.int64]) -> tuple[int, int, int, int]:
    if W_Q.ndim != 3 or W_K.ndim != 3:
        raise ShapeError(
            f"layer weights must be W_Q (n_q, n, N) and W_K (n_kv, n, N); "
            f"got shapes {W_Q.shape} and {W_K.shape}"
        )
    n_q, n, N = W_Q.shape
    n_kv = W_K.shape[0]
    if W_K.shape[1:] != (n, N):
        raise ShapeError(f"W_K heads have shape {W_K.shape[1:]}, W_Q heads {(n, N)}")
    if kv_index.shape != (n_q,):
        raise ShapeError(f"kv_index must have shape ({n_q},), got {kv_index.shape}")
    if n_q and (kv_index.min() < 0 or kv_index.max() >= n_kv):
        raise ShapeError(f"kv_index must lie in [0, {n_kv}), got {kv_index.tolist()}")
    return n_q, n_kv, n, N


# --------------------------------------------------------------------------- Gram blocks


def layer_gram(W_Q: Array, W_K: Array, kv_index: ArrayLike) -> Array:
    """Gram matrices ``G_h = M_h M_h^T`` of the stacked maps ``M_h = [W_K[g]; W_Q[h]]``.

    The key block ``W_K W_K^T`` is computed once per key head and ``Q_h K_g^T`` once
    per key group (one matrix product for the query heads of a group).

    Parameters
    ----------
    W_Q : ndarray, shape (n_q, n, N)
    W_K : ndarray, shape (n_kv, n, N)
    kv_index : array_like of int, shape (n_q,)
        Key head of each query head.

    Returns
    -------
    ndarray, shape (n_q, 2n, 2n)

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.gram import layer_gram
    >>> rng = np.random.default_rng(1)
    >>> Q, K = rng.standard_normal((3, 2, 5)), rng.standard_normal((1, 2, 5))
    >>> G = layer_gram(Q, K, np.zeros(3, dtype=int))
    >>> M = np.vstack([K[0], Q[2]])
    >>> bool(np.allclose(G[2], M @ M.T))
    True
    """
    kv = np.asarray(kv_index, dtype=np.int64)
    n_q, n_kv, n, N = _check_layer(W_Q, W_K, kv)
    dt = np.result_type(W_Q.dtype, np.float64)
    G = np.empty((n_q, 2 * n, 2 * n), dtype=dt)
    used, where = np.unique(kv, return_inverse=True)  # key heads of these query heads only
    WK = W_K[used] if used.size < n_kv else W_K
    G[:, :n, :n] = np.matmul(WK, np.swapaxes(WK, 1, 2))[where]
    G[:, n:, n:] = np.matmul(W_Q, np.swapaxes(W_Q, 1, 2))
    if n_q == n_kv and np.array_equal(kv, np.arange(n_q)):  # one key head per query head
        QKt = np.matmul(W_Q, np.swapaxes(W_K, 1, 2))
        G[:, n:, :n] = QKt
        G[:, :n, n:] = np.swapaxes(QKt, 1, 2)
        return G
    for g in np.unique(kv):
        hs = np.flatnonzero(kv == g)
        if np.all(np.diff(hs) == 1):
            block = W_Q[hs[0] : hs[-1] + 1]  # a view: no copy for the usual GQA layout
        else:
            block = W_Q[hs]
        QKt = (block.reshape(-1, N) @ W_K[g].T).reshape(hs.size, n, n)  # Q_h K_g^T
        G[hs, n:, :n] = QKt
        G[hs, :n, n:] = np.swapaxes(QKt, 1, 2)
    return G


def gram_energies(G: Array, n: int) -> FloatEnergies:
    """Lemma 5 energies of ``L = W_K^T W_Q`` from the blocks of ``G``; batched (Claim 2.5).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import energies
    >>> rng = np.random.default_rng(2)
    >>> Q, K = rng.standard_normal((2, 3, 6))
    >>> M = np.vstack([K, Q])
    >>> bool(np.allclose(gram_energies(M @ M.T, 3), energies(K.T @ Q)))
    True
    """
    kk, qq, qk = G[..., :n, :n], G[..., n:, n:], G[..., n:, :n]
    norm_sq = np.sum(kk * qq, axis=(-2, -1))
    trace_sq = np.sum(qk * np.swapaxes(qk, -1, -2), axis=(-2, -1))
    return energies_from_norm_and_trace(norm_sq, trace_sq)


# --------------------------------------------------------------------------- spectra


def layer_spectra(
    W_Q: Array,
    W_K: Array,
    kv_index: ArrayLike,
    *,
    keep_factors: bool = False,
    want: Collection[str] = SPECTRA,
) -> LayerSpectra:
    """Spectra of every query head of a layer (batched Gram route, ``docs/theory.md`` §12.2, §12.3).

    Every head with finite weights is computed, whatever its stacked map: heads with
    dead dimensions through their live pair, ill-conditioned or rank-deficient heads
    through QR (the fallback rule of the module docstring).

    Parameters
    ----------
    W_Q : ndarray, shape (n_q, n, N)
    W_K : ndarray, shape (n_kv, n, N)
    kv_index : array_like of int, shape (n_q,)
        Key/value head used by each query head (GQA).
    keep_factors : bool
        Also return ``Q_red`` and ``K_red`` (n x 2n per head) for RoPE relative forms.
    want : collection of str
        Which of :data:`SPECTRA` to compute (the others are NaN).

    Returns
    -------
    LayerSpectra
        Heads with NaN/Inf weights are failed.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import gram_spectrum
    >>> from qkforms.gram import layer_spectra
    >>> rng = np.random.default_rng(3)
    >>> Q, K = rng.standard_normal((4, 3, 10)), rng.standard_normal((2, 3, 10))
    >>> kv = np.array([0, 0, 1, 1])
    >>> sp = layer_spectra(Q, K, kv)
    >>> bool(np.allclose(sp.eig_S, gram_spectrum(Q, K[kv])))
    True
    >>> Q[2, 1] = 0.0                          # a dead dimension: n' = 2
    >>> layer_spectra(Q, K, kv).n_live.tolist()
    [3.0, 3.0, 2.0, 3.0]
    >>> Q[1, 0, 0] = np.nan
    >>> layer_spectra(Q, K, kv).error[1]
    'non-finite values (NaN or inf) in W_Q or W_K'
    """
    kv = np.asarray(kv_index, dtype=np.int64)
    n_q, _, n, N = _check_layer(W_Q, W_K, kv)
    G = layer_gram(W_Q, W_K, kv)
    ok = np.asarray(np.isfinite(G).all(axis=(1, 2)), dtype=bool)
    error: list[str | None] = [
        None if good else "non-finite values (NaN or inf) in W_Q or W_K" for good in ok
    ]
    live = np.any(W_Q != 0, axis=2) & np.any(W_K != 0, axis=2)[kv]  # (n_q, n)
    n_live = live.sum(axis=1)
    out = LayerSpectra.failed(n_q, n, "", keep_factors=keep_factors)
    out.ok, out.error = ok, error
    good = np.flatnonzero(ok)
    if not good.size:
        return out
    e = gram_energies(G[good], n)
    out.norm_sq[good] = e.norm_sq
    out.skew_sq[good] = e.skew_sq
    out.trace[good] = np.trace(G[good][:, n:, :n], axis1=1, axis2=2)
    out.n_live[good] = n_live[good]
    layer = _Layer(W_Q, W_K, kv, G, live, n, N)
    for m in np.unique(n_live[good])[::-1]:  # n' = n (no dead dimension) first
        m = int(m)
        idx = good[n_live[good] == m]
        F = _put_group_spectra(out, layer, idx, m, want)
        if keep_factors:
            _put_factors(out, layer, idx, F, m)
    return out


@dataclass(frozen=True)
class _Layer:
    """One layer as :func:`layer_spectra` computes it: weights, key head of each query head,
    Gram matrices, live dimensions (n_q, n), and the sizes n, N."""

    W_Q: Array
    W_K: Array
    kv: NDArray[np.int64]
    G: Array
    live: NDArray[np.bool_]
    n: int
    N: int

    def group_gram(self, idx: NDArray[np.int64], m: int) -> tuple[Array, Callable[[int], Array]]:
        """Gram matrices of the heads ``idx`` (all of n' = m) and their stacked matrices:
        of the whole head when ``m == n``, else of its live pair."""
        if m == self.n:
            def M_of(i: int) -> Array:
                h = int(idx[i])
                return stack(self.W_Q[h], self.W_K[int(self.kv[h])])
            return self.G[idx], M_of

        def M_of_live(i: int) -> Array:
            h = int(idx[i])
            sel = self.live[h]
            return stack(self.W_Q[h][sel], self.W_K[int(self.kv[h])][sel])
        return live_pair_gram(self.G, self.live, idx), M_of_live


def _put_group_spectra(out: LayerSpectra, layer: _Layer, idx: NDArray[np.int64], m: int,
                       want: Collection[str]) -> Array:
    """Factor the heads ``idx`` (all of n' = m), put their error model and spectra (padded to
    the widths of n) into ``out``; return their factors."""
    n = layer.n
    if m == 0:  # L = 0: every spectrum is zero
        F = np.zeros((idx.size, 0, 0))
        rel = absolute = np.zeros(idx.size)
        spectra = {key: np.zeros((idx.size, 0)) for key in want}
    else:
        G_m, M_of = layer.group_gram(idx, m)
        F, rel, absolute = factor_heads(G_m, m, layer.N, M_of)
        spectra = spectra_from_factor(F, m, want=want)
    out.err_rel[idx] = rel
    out.err_abs[idx] = absolute
    widths = LayerSpectra.widths()
    for key, value in spectra.items():
        if m == n:
            getattr(out, key)[idx] = value
        else:
            getattr(out, key)[idx] = pad_live_spectrum(key, value, m, n, widths[key])
    return F


def _put_factors(out: LayerSpectra, layer: _Layer, idx: NDArray[np.int64], F: Array,
                 m: int) -> None:
    """Put the reduced factors of the heads ``idx`` into ``out`` (of the whole stacked map:
    the RoPE forms need it, so heads with dead dimensions are factored again by QR)."""
    assert out.Q_red is not None and out.K_red is not None
    n, W_Q, W_K, kv = layer.n, layer.W_Q, layer.W_K, layer.kv
    if m < n:
        F = np.stack([padded_factor(qr_factor(stack(W_Q[h], W_K[int(kv[h])])))
                      for h in idx])
    out.Q_red[idx] = F[:, n:, :]
    out.K_red[idx] = F[:, :n, :]


def head_spectra(W_Q: ArrayLike, W_K: ArrayLike, *,
                 want: Collection[str] = SPECTRA) -> LayerSpectra:
    """Spectra of independent heads (each with its own keys), batched over one axis.

    Non-surjective heads are computed like the others (see :func:`layer_spectra`).

    Parameters
    ----------
    W_Q, W_K : array_like, shape (h, n, N)
        Finite (raises :class:`~qkforms.errors.NonFiniteError` otherwise).
    want : collection of str
        Which of :data:`SPECTRA` to compute.

    Returns
    -------
    LayerSpectra

    Examples
    --------
    >>> import numpy as np
    >>> sp = head_spectra(np.eye(2, 6)[None], np.eye(2, 6)[None], want=("eig_S",))
    >>> sp.eig_S.round(12).tolist(), bool(np.isnan(sp.sv_T).all())
    ([[1.0, 1.0, 0.0, 0.0]], True)
    """
    q = as_float_array(W_Q, "W_Q", min_ndim=3)
    k = as_float_array(W_K, "W_K", min_ndim=3)
    if q.shape != k.shape or q.ndim != 3:
        raise ShapeError(f"W_Q and W_K must both have shape (h, n, N); got {q.shape} and "
                         f"{k.shape}")
    return layer_spectra(q, k, np.arange(q.shape[0]), want=want)
