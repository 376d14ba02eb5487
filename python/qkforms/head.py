"""Attention heads as bilinear forms: the exact reduction and the Gram route (Lemma 10).

A head has query and key maps ``W_Q, W_K`` of shape ``(n, N)`` (output x input) and
score form ``L = W_K^T W_Q`` (key-side argument first, ``docs/theory.md`` §1). With the stacked
matrix ``M = [W_K; W_Q]`` (2n x N), Gram matrix ``G = M M^T`` and
``J = [[0, I], [I, 0]]``, Lemma 10 gives ``S = M^T J M / 2``, and the nonzero
spectrum of ``S`` equals that of ``J G / 2`` (2n x 2n). Nothing here forms an N x N
matrix unless asked (:meth:`Head.form`).

Numerics: everything goes through the Gram engine (:mod:`qkforms.gram`): one factor of
``G`` per head (Cholesky, or Householder QR for ill-conditioned heads), from which the
spectra are read off ``n x n`` blocks (see the claims proved there).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms._validate import as_float_array
from qkforms.errors import (
    DegenerateHeadError,
    ParameterError,
    ShapeError,
    UndecidedSignatureError,
    ZeroFormError,
    format_value,
)
from qkforms.form_parts import Energies, FloatEnergies
from qkforms.form_signature import Signature, SignatureDecision, decide_signature
from qkforms.gram import (
    LayerSpectra,
    gram_energies,
    head_spectra,
    qr_factor,
    stack,
    stacked_rank,
    unit_scale,
)
from qkforms.profile_map import Profile, profile_from_eigenvalues

if TYPE_CHECKING:  # the exact twins, for annotations only (they load flint)
    from qkforms.exact.enclosure import Enclosure
    from qkforms.exact.head import ExactHead

__all__ = ["Head", "Prediction", "Reduced", "gram_spectrum", "head_energies", "reduce_heads"]


class Prediction(NamedTuple):
    """What Theorem 3 predicts for a head (:meth:`Head.prediction`).

    Attributes
    ----------
    kind : str or None
        ``"thm3"`` (the stacked map is onto), ``"thm3-live"`` (it is not, but its live
        part is: dead dimensions removed), ``"none"`` (neither), or None when floating
        point cannot decide (use ``exact=True``).
    signature : Signature or None
        ``(n', n', N - 2n')`` for ``"thm3"`` (``n' = n``) and ``"thm3-live"``.
    n_live : int
        Live head dimensions ``n'``.
    """

    kind: str | None
    signature: Signature | None
    n_live: int


def _factors(W_Q: ArrayLike, W_K: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    q = as_float_array(W_Q, "W_Q", min_ndim=2)
    k = as_float_array(W_K, "W_K", min_ndim=2)
    if q.shape != k.shape:
        raise ShapeError(
            f"W_Q and W_K must have the same shape (n, N); got {q.shape} and {k.shape}"
        )
    if q.shape[-1] == 0 or q.shape[-2] == 0:
        raise ShapeError(f"a head needs n >= 1 and N >= 1, got shape {q.shape}")
    return q, k


def gram_spectrum(W_Q: ArrayLike, W_K: ArrayLike) -> NDArray[np.float64]:
    """Eigenvalues of ``J G / 2`` (Lemma 10), sorted decreasingly; batched.

    These are the nonzero eigenvalues of ``S = (L + L^T)/2`` for ``L = W_K^T W_Q``,
    padded with zeros to length ``2n``; the full spectrum of ``S`` on ``R^N`` adds
    ``N - 2n`` further zeros. Cost O(N n^2) per head; no N x N matrix is formed
    (:func:`qkforms.gram.head_spectra`, Claim 2.1).

    Parameters
    ----------
    W_Q, W_K : array_like, shape (..., n, N)

    Returns
    -------
    ndarray, shape (..., 2n)

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import gram_spectrum
    >>> rng = np.random.default_rng(0)
    >>> Q, K = rng.standard_normal((2, 3, 8))
    >>> lam = gram_spectrum(Q, K)
    >>> S = (K.T @ Q + Q.T @ K) / 2
    >>> dense = np.sort(np.linalg.eigvalsh(S))[::-1]
    >>> bool(np.allclose(lam[:3], dense[:3]) and np.allclose(lam[3:], dense[-3:]))
    True
    """
    q, k = _factors(W_Q, W_K)
    lead, (n, N) = q.shape[:-2], q.shape[-2:]
    sp = head_spectra(q.reshape(-1, n, N), k.reshape(-1, n, N), want=("eig_S",))
    return sp.eig_S.reshape(*lead, 2 * n)


class Reduced(NamedTuple):
    """The exact 2n x 2n representative of a head (``docs/theory.md`` §12.2).

    ``L = basis^T-conjugate``: ``form == K_red.T @ Q_red == basis.T @ L_full @ basis``.
    """

    form: NDArray[np.float64]
    basis: NDArray[np.float64]
    Q_red: NDArray[np.float64]
    K_red: NDArray[np.float64]


def reduce_heads(W_Q: ArrayLike, W_K: ArrayLike) -> Reduced:
    """Exact orthogonal reduction of heads; batched.

    ``basis`` is an orthonormal basis (reduced QR) of ``im W_K^T + im W_Q^T``;
    ``Q_red = W_Q basis``, ``K_red = W_K basis`` (n x 2n) and
    ``form = K_red^T Q_red = basis^T L basis`` (2n x 2n). ``L`` vanishes on the
    orthogonal complement of the basis, so the reduction keeps the Frobenius norms,
    the nonzero spectrum of ``S``, the singular values of ``T`` and the profile.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import profile, reduce_heads
    >>> rng = np.random.default_rng(1)
    >>> Q, K = rng.standard_normal((2, 2, 7))
    >>> red = reduce_heads(Q, K)
    >>> red.form.shape
    (4, 4)
    >>> bool(np.allclose(profile(red.form), profile(K.T @ Q)))
    True
    """
    q, k = _factors(W_Q, W_K)
    n = q.shape[-2]
    basis, F = qr_factor(stack(q, k), basis=True)  # M^T = basis F^T
    K_red = F[..., :n, :]
    Q_red = F[..., n:, :]
    form = np.swapaxes(K_red, -1, -2) @ Q_red
    return Reduced(form=form, basis=basis, Q_red=Q_red, K_red=K_red)


def head_energies(W_Q: ArrayLike, W_K: ArrayLike) -> FloatEnergies:
    """Lemma 5 energies of ``L = W_K^T W_Q`` from n x n Gram blocks; batched.

    ``|L|^2 = <W_K W_K^T, W_Q W_Q^T>_F`` and ``tr L^2 = tr((W_Q W_K^T)^2)``; then
    ``|S|^2, |T|^2 = (|L|^2 +- tr L^2)/2`` (:func:`qkforms.gram.gram_energies`).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import energies
    >>> from qkforms.head import head_energies
    >>> rng = np.random.default_rng(2)
    >>> Q, K = rng.standard_normal((2, 3, 6))
    >>> bool(np.allclose(head_energies(Q, K), energies(K.T @ Q)))
    True
    """
    q, k = _factors(W_Q, W_K)
    M = stack(q, k)
    out = gram_energies(M @ np.swapaxes(M, -1, -2), q.shape[-2])
    if q.ndim == 2:
        return Energies(*(float(v) for v in out))
    return Energies(*out)


class Head:
    """One attention head, ``L = W_K^T W_Q``.

    Parameters
    ----------
    W_Q, W_K : array_like, shape (n, N)
        Query and key projections (output x input), any real dtype; stored as float64.
    b_Q, b_K : array_like, shape (n,), optional
        Query and key biases (used only by :meth:`homogenized_form`; the survey's
        form is the bilinear part, ``docs/theory.md`` §12.2).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import Head
    >>> rng = np.random.default_rng(0)
    >>> h = Head(rng.standard_normal((4, 20)), rng.standard_normal((4, 20)))
    >>> h.signature()                      # Theorem 3: (n, n, N - 2n)
    Signature(n_pos=4, n_neg=4, n_zero=12)
    >>> h.is_surjective()
    True
    >>> p = h.profile()
    >>> round(p.a + p.b + p.c + p.d, 12)
    1.0
    """

    def __init__(
        self,
        W_Q: ArrayLike,
        W_K: ArrayLike,
        *,
        b_Q: ArrayLike | None = None,
        b_K: ArrayLike | None = None,
    ) -> None:
        q, k = _factors(W_Q, W_K)
        if q.ndim != 2:
            raise ShapeError(
                f"Head takes one head of shape (n, N), got {q.shape}; "
                "use the batched functions for stacks"
            )
        self.W_Q, self.W_K = q, k
        n = q.shape[0]
        self.b_Q = None if b_Q is None else as_float_array(b_Q, "b_Q").reshape(n)
        self.b_K = None if b_K is None else as_float_array(b_K, "b_K").reshape(n)

    def __repr__(self) -> str:
        return f"Head(n={self.n}, N={self.N})"

    @property
    def n(self) -> int:
        """Head dimension."""
        return int(self.W_Q.shape[0])

    @property
    def N(self) -> int:  # noqa: N802 (the paper's name)
        """Model (residual-stream) dimension."""
        return int(self.W_Q.shape[1])

    def form(self) -> NDArray[np.float64]:
        """Return the dense N x N form ``L = W_K^T W_Q`` (only when asked)."""
        return self.W_K.T @ self.W_Q

    def reduced(self) -> Reduced:
        """Return the exact 2n x 2n representative; see :func:`reduce_heads`."""
        return reduce_heads(self.W_Q, self.W_K)

    @cached_property
    def _scales(self) -> tuple[float, float]:
        """Power-of-two scales of W_Q and W_K (:func:`qkforms.gram.unit_scale`)."""
        return float(unit_scale(self.W_Q)), float(unit_scale(self.W_K))

    @cached_property
    def _unit_spectra(self) -> LayerSpectra:
        # computed on rescaled factors so that tiny or huge weights neither under- nor
        # overflow; every scale-invariant quantity (signature, profile) uses this
        sq, sk = self._scales
        return head_spectra((self.W_Q / sq)[None], (self.W_K / sk)[None], want=("eig_S",))

    @property
    def _unit_spectrum(self) -> NDArray[np.float64]:
        return self._unit_spectra.eig_S[0]

    @cached_property
    def _unit_energies(self) -> FloatEnergies:
        sq, sk = self._scales
        return head_energies(self.W_Q / sq, self.W_K / sk)

    @property
    def _spectrum(self) -> NDArray[np.float64]:
        sq, sk = self._scales
        return self._unit_spectrum * (sq * sk)

    def spectrum(self) -> NDArray[np.float64]:
        """Eigenvalues of ``S`` from the 2n x 2n Gram route, decreasing (length 2n).

        The full spectrum on ``R^N`` is this plus ``N - 2n`` zeros (when ``N >= 2n``).
        """
        return self._spectrum.copy()

    def energies(self) -> FloatEnergies:
        """Lemma 5 energies of ``L`` (see :func:`qkforms.head.head_energies`)."""
        sq, sk = self._scales
        f = (sq * sk) ** 2
        return Energies(*(float(v) * f for v in self._unit_energies))

    @property
    def n_live(self) -> int:
        """Live head dimensions ``n'``: those with ``q_i != 0`` and ``k_i != 0`` (exact)."""
        return int(self._unit_spectra.n_live[0])

    def signature_decision(self) -> SignatureDecision:
        """The float decision of the signature, with its margin (no exact arithmetic).

        Each eigenvalue of the reduced ``S`` carries the Gram engine's error bound
        (:mod:`qkforms.gram_factor`, Claim 3); the counts are *decided* when every eigenvalue
        clears it, apart from the zeros known from dead dimensions and ``N < 2n``
        (:func:`qkforms.form_signature.decide_signature`).

        Examples
        --------
        >>> import numpy as np
        >>> from qkforms import Head
        >>> Q = np.random.default_rng(0).standard_normal((3, 9))
        >>> d = Head(Q, Q).signature_decision()    # W_K = W_Q: three true zeros
        >>> d.decided, d.n_uncertain
        (False, 3)
        """
        sp = self._unit_spectra
        return decide_signature(sp.eig_S[0], sp.err_rel[0], sp.err_abs[0], N=self.N,
                                n_live=sp.n_live[0])

    def signature(self, *, method: str = "auto") -> Signature:
        """Signature ``(n_+, n_-, n_0)`` of ``S`` on ``R^N``, decided, never guessed.

        Parameters
        ----------
        method : {"auto", "float", "exact"}
            ``"float"``: the float decision (:meth:`signature_decision`), raising
            :class:`~qkforms.errors.UndecidedSignatureError` when floating point cannot
            decide (an eigenvalue within its error bound: a rank-deficient head such as
            ``W_K = W_Q``, or one too close to such a head); ``"exact"``: exact
            arithmetic on the weights (:func:`qkforms.exact.head_signature`, any head);
            ``"auto"`` (default): float when decided, exact otherwise.

        Examples
        --------
        >>> import numpy as np
        >>> from qkforms import Head
        >>> Q = np.random.default_rng(0).standard_normal((3, 9))
        >>> Head(Q, Q).signature()              # undecided in float: exact arithmetic
        Signature(n_pos=3, n_neg=0, n_zero=6)
        """
        if method not in ("auto", "float", "exact"):
            raise ParameterError(
                f"method must be 'auto', 'float' or 'exact', got {format_value(method)}")
        if method != "exact":
            d = self.signature_decision()
            if d.decided:
                return Signature(*(int(v) for v in d.signature))
            if method == "float":
                raise UndecidedSignatureError(
                    f"floating point cannot decide this head's signature: "
                    f"{d.n_uncertain} eigenvalue(s) of S lie within their error bound "
                    f"(margin {d.margin:.3g}); use method='exact' (docs/survey.md, "
                    "\"Signatures: decided, never guessed\")")
        # lazy: qkforms.exact loads flint, and import qkforms stays numpy-only
        # lazy: keeps python-flint out of this module's import
        from qkforms.exact.form_signature import head_signature

        return head_signature(self.W_Q, self.W_K)

    def is_surjective(self, *, rtol: float | None = None) -> bool:
        """Whether the stacked map ``x -> (W_Q x, W_K x)`` is onto ``R^{2n}`` (numerical).

        Numerical rank of ``M = [W_K; W_Q]`` by singular values
        (``numpy.linalg.matrix_rank``; ``rtol`` relative to the largest). For a decided
        answer use :meth:`prediction` (``kind == "thm3"``); for an exact one
        :func:`qkforms.exact.stacked_is_surjective`.
        """
        return stacked_rank(self.W_Q, self.W_K, rtol=rtol) == 2 * self.n

    def prediction(self, *, exact: bool = False) -> Prediction:
        """What Theorem 3 predicts for this head, or for its live part (docs/theory.md §3).

        In floating point the prediction is known when the signature is decided (then
        the live pair is onto exactly when all ``2n'`` reduced eigenvalues are nonzero),
        or from dead dimensions alone; otherwise ``kind`` is None. ``exact=True``
        decides it with exact ranks (:func:`qkforms.exact.head_inertia`).

        Examples
        --------
        >>> import numpy as np
        >>> from qkforms import Head
        >>> rng = np.random.default_rng(0)
        >>> Q, K = rng.standard_normal((2, 3, 9))
        >>> Q[2] = 0.0                                    # a dead dimension
        >>> Head(Q, K).prediction()
        Prediction(kind='thm3-live', signature=Signature(n_pos=2, n_neg=2, n_zero=5), n_live=2)
        """
        n, N = self.n, self.N
        kind: str | None
        if exact:
            # lazy: qkforms.exact loads flint, and import qkforms stays numpy-only
            # lazy: keeps python-flint out of this module's import
            from qkforms.exact.inertia import head_inertia

            r = head_inertia(self.W_Q, self.W_K)
            m, kind = r.n_live, r.prediction
        else:
            m = self.n_live
            d = self.signature_decision()
            onto = bool(d.decided) and 2 * m <= N
            if m == n:
                kind = "thm3" if onto else ("none" if d.decided else None)
            else:
                kind = "thm3-live" if onto else ("none" if d.decided else None)
        sig = Signature(m, m, N - 2 * m) if kind in ("thm3", "thm3-live") else None
        return Prediction(kind, sig, m)

    def exact(self) -> ExactHead:
        """The exact facts of this head: its float64 weights taken as the rationals they are.

        Exact signature and inertia, live dimensions, certified ranks of ``M = [W_K; W_Q]``
        and of the live pair, and the Theorem 3 prediction, by
        :func:`qkforms.exact.head_inertia` (``docs/theory.md`` §3.3); needs the ``exact``
        extra (python-flint).

        Returns
        -------
        qkforms.exact.head.ExactHead

        See Also
        --------
        enclose : certified enclosures of the float statistics.
        signature : the float decision, exact when floating point cannot decide.
        qkforms.exact.head.ExactHead : what the returned object answers.

        Examples
        --------
        >>> import numpy as np
        >>> from qkforms import Head
        >>> Q = np.random.default_rng(0).standard_normal((3, 9))
        >>> facts = Head(Q, Q).exact()                  # W_K = W_Q: rank 3, not onto
        >>> facts.signature(), facts.stacked_rank, facts.prediction
        (Signature(n_pos=3, n_neg=0, n_zero=6), 3, 'none')
        """
        # lazy: qkforms.exact loads flint, and import qkforms stays numpy-only
        # lazy: keeps python-flint out of this module's import
        from qkforms.exact.head import ExactHead

        return ExactHead(self.W_Q, self.W_K)

    def enclose(self, *, method: str = "auto", prec: int | None = None) -> Enclosure:
        """Certified intervals of this head's profile, ``1 - a``, pairing, ``rho`` and
        distance to Θ (``docs/certified.md``), by :func:`qkforms.exact.enclose`.

        Parameters
        ----------
        method : {"auto", "rump", "charpoly"}
            Eigenvalue certificate, as in :func:`qkforms.exact.enclose`.
        prec : int, optional
            Arb working precision in bits (default: that of :func:`qkforms.exact.enclose`).

        Returns
        -------
        qkforms.exact.Enclosure

        See Also
        --------
        exact : the exact signature, ranks and prediction of this head.
        profile : the float profile the enclosure certifies.

        Examples
        --------
        >>> import numpy as np
        >>> from qkforms import Head
        >>> rng = np.random.default_rng(1)
        >>> head = Head(rng.standard_normal((2, 8)), rng.standard_normal((2, 8)))
        >>> enc = head.enclose()
        >>> enc.method, enc.a.hi - enc.a.lo < 1e-12, abs(enc.a.lo - head.profile().a) < 1e-9
        ('rump', True, True)
        """
        # lazy: qkforms.exact loads flint, and import qkforms stays numpy-only
        # lazy: keeps python-flint out of this module's import
        from qkforms.exact.enclosure import enclose

        if prec is None:
            return enclose(self, method=method)
        return enclose(self, method=method, prec=prec)

    def expected_signature(self) -> Signature:
        """The Theorem 3 signature ``(n, n, N - 2n)``; raises if the theorem does not apply.

        Raises
        ------
        DegenerateHeadError
            If the stacked map is not surjective (then Theorem 3 says nothing about the
            head itself; :meth:`prediction` says what it says about its live part).
        """
        if not self.is_surjective():
            raise DegenerateHeadError(
                f"the stacked map [W_Q; W_K] of this head has rank "
                f"{stacked_rank(self.W_Q, self.W_K)} < 2n = {2 * self.n}: "
                "Theorem 3 needs it surjective (rank 2n, so N >= 2n); Head.prediction() "
                "says what it predicts for the live part"
            )
        return Signature(self.n, self.n, self.N - 2 * self.n)

    def profile(self) -> Profile:
        """The profile ``(a, b, c, d)`` of ``L`` (Definition 6), without forming ``L``.

        Raises
        ------
        ZeroFormError
            If ``L = 0``.
        """
        e = self._unit_energies
        if e.norm_sq <= 0:
            raise ZeroFormError("this head's form L = W_K^T W_Q is zero: no profile")
        return profile_from_eigenvalues(self._unit_spectrum, e.norm_sq, max(e.skew_sq, 0.0))

    def homogenized_form(self) -> NDArray[np.float64]:
        """The (N+1) x (N+1) bilinear form of Proposition 3 (biases as an extra coordinate).

        ``score(x_key, x_query) = (x_key, 1)^T Lhat (x_query, 1)`` with
        ``Lhat = [[W_K^T W_Q, W_K^T b_Q], [b_K^T W_Q, b_K^T b_Q]]`` (missing biases are 0;
        the architectural ``1/sqrt(n)`` is not applied).
        """
        n, N = self.n, self.N
        bq = np.zeros(n) if self.b_Q is None else self.b_Q
        bk = np.zeros(n) if self.b_K is None else self.b_K
        out = np.empty((N + 1, N + 1))
        out[:N, :N] = self.form()
        out[:N, N] = self.W_K.T @ bq
        out[N, :N] = bk @ self.W_Q
        out[N, N] = bk @ bq
        return out
