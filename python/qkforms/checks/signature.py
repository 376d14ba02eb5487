"""Checks of rank balance (Lemma 3), the Gram route (Lemma 10) and Theorem 3, exactly.

Examples
--------
>>> check_thm3().passed
True
"""

from __future__ import annotations

import flint
import numpy as np

from qkforms import exact
from qkforms.checks.result import CheckResult, Recorder

__all__ = ["check_lemma3", "check_lemma10", "check_thm3"]


def check_lemma3(seed: int = 0, *, N: int = 6, trials: int = 12) -> CheckResult:
    """Lemma 3: ``rank L <= n`` implies ``n_+(S) <= n`` and ``n_-(S) <= n``, exactly.

    Instances: ``L = A B`` with integer ``A`` (``N x r``), ``B`` (``r x N``) for
    ``r = 0..N`` (the exact rank of ``L`` is computed, not assumed), and the tight
    example ``L = [[0, I_r], [0, 0]]`` (``n_+ = n_- = r``). Signatures are exact
    (Descartes on the characteristic polynomial of ``S``); each count is compared
    with the exact rank.

    Examples
    --------
    >>> check_lemma3(seed=2).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("lemma3", "exact")
    tight = 0
    for t in range(trials):
        r = t % (N + 1)
        A = exact.integer_matrix(rng, N, r) if r else flint.fmpq_mat(N, 0)
        B = exact.integer_matrix(rng, r, N) if r else flint.fmpq_mat(0, N)
        L = A * B if r else flint.fmpq_mat(N, N)
        rk = exact.rank(L)
        S, _ = exact.parts(L)
        sig = exact.signature(S)
        rec.instance()
        rec.require(rk <= r, f"rank {rk} of a product through R^{r}")
        rec.require(sig.n_pos <= rk and sig.n_neg <= rk,
                    f"N={N}, rank {rk}: signature {tuple(sig)} exceeds the rank bound")
        tight += sig.n_pos == rk or sig.n_neg == rk
    for r in range(1, N // 2 + 1):
        rec.instance()
        L = flint.fmpq_mat(2 * r, 2 * r, [int(j == i + r) for i in range(2 * r)
                                          for j in range(2 * r)])
        sig = exact.signature(exact.parts(L)[0])
        rec.require(tuple(sig) == (r, r, 0), f"tight example r={r}: signature {tuple(sig)}")
    rec.note(f"{tight} random instances attain the bound in one sign; "
             "tight examples [[0, I], [0, 0]] attain it in both")
    return rec.result()


def _half_MtJM(M: flint.fmpq_mat, n: int) -> flint.fmpq_mat:
    J = flint.fmpq_mat(2 * n, 2 * n, [int(j == (i + n) % (2 * n)) for i in range(2 * n)
                                      for j in range(2 * n)])
    return M.transpose() * J * M * flint.fmpq(1, 2)


def _trace(A: flint.fmpq_mat) -> flint.fmpq:
    return sum((A[i, i] for i in range(A.nrows())), flint.fmpq(0))


def check_lemma10(seed: int = 0, *, n: int = 2, N: int = 6, trials: int = 6) -> CheckResult:
    """Lemma 10 exactly: ``S = 1/2 M^T J M``, traces, characteristic polynomials.

    For random integer heads (surjective, degenerate and with ``N < 2n``):
    ``sym(W_K^T W_Q) = 1/2 M^T J M``; ``tr S^k = tr (1/2 J G)^k`` for ``k = 1..4``;
    ``|S|^2 = tr((J G)^2)/4``; ``charpoly(S) = x^(N-2n) charpoly(1/2 J G)`` (or the
    mirror identity when ``N < 2n``); for surjective heads ``G`` is positive definite,
    ``1/2 J G`` is invertible and its spectrum (Descartes on its characteristic
    polynomial, real-rooted by the identity) has ``n`` positive and ``n`` negative
    values (so the normalized spectrum lies in ``Λ_n``). Also, for surjective heads,
    the moment transfer:
    with ``q = |S|^2``, ``tr f(S)`` over the nonzero spectrum equals ``tr f(1/2 J G)``
    for ``f(x) = x/(1 - x^2/q)`` and ``x^2/(1 - x^2/q)`` (the ``O``, ``E`` statistics of
    ``λ = spec/|S|`` up to the factors ``|S|`` and 1).

    Examples
    --------
    >>> check_lemma10(seed=3).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("lemma10", "exact")
    x = flint.fmpq_poly([0, 1])
    kinds = ["surjective", "equal", "shared_row", "narrow"]
    for t in range(trials):
        kind = kinds[t % len(kinds)]
        nn = 1 + int(rng.integers(0, n))
        NN = max(2 * nn, N) if kind != "narrow" else max(1, 2 * nn - 1)
        W_Q, W_K = exact.random_head(rng, nn, NN, kind)  # type: ignore[arg-type]
        M = exact.to_fmpq_mat(exact.stacked_matrix(W_Q, W_K))
        S = exact.symmetric_head_form(W_Q, W_K)
        A = exact.gram_operator(W_Q, W_K)
        G = M * M.transpose()
        rec.instance()
        tag = f"{kind} head (n, N) = ({nn}, {NN})"
        rec.require(S == _half_MtJM(M, nn), f"{tag}: S != 1/2 M^T J M")
        Sk, Ak = S, A
        for k in range(1, 5):
            rec.require(_trace(Sk) == _trace(Ak), f"{tag}: tr S^{k} != tr (JG/2)^{k}")
            Sk, Ak = Sk * S, Ak * A
        JG = A * 2
        q = exact.frobenius_inner(S, S)
        rec.require(q == exact.as_fraction(_trace(JG * JG)) / 4, f"{tag}: |S|^2 != tr(JG)^2/4")
        pS, pA = exact.charpoly(S), exact.charpoly(A)
        if NN >= 2 * nn:
            rec.require(pS == x ** (NN - 2 * nn) * pA, f"{tag}: charpoly identity fails")
        else:
            rec.require(pA == x ** (2 * nn - NN) * pS, f"{tag}: charpoly identity fails")
        if kind == "surjective":
            rec.require(exact.signature(G) == (2 * nn, 0, 0), f"{tag}: G not positive definite")
            rec.require(pA.coeffs()[0] != 0, f"{tag}: 1/2 J G is singular")
            counts = exact.descartes_counts(pA.coeffs())
            rec.require(counts == (nn, nn, 0), f"{tag}: spectrum of JG/2 has counts {counts}")
        if kind == "surjective":  # |lambda_i| < 1 needs both signs (Lemma 9)
            qq = flint.fmpq(q.numerator, q.denominator)
            eyeN = flint.fmpq_mat(NN, NN, [int(i == j) for i in range(NN) for j in range(NN)])
            eye2 = flint.fmpq_mat(2 * nn, 2 * nn, [int(i == j) for i in range(2 * nn)
                                                   for j in range(2 * nn)])
            try:
                RS = (eyeN - S * S / qq).inv()
                RA = (eye2 - A * A / qq).inv()
            except ZeroDivisionError:
                rec.require(False, f"{tag}: I - S^2/|S|^2 singular")
                continue
            rec.require(_trace(S * RS) == _trace(A * RA), f"{tag}: O-type trace transfer")
            rec.require(_trace(S * S * RS) == _trace(A * A * RA), f"{tag}: E-type transfer")
    rec.note("heads: surjective, W_K = W_Q, shared row, N < 2n; all identities exact")
    return rec.result()


def check_thm3(seed: int = 0, *, n: int = 3, N: int = 9, trials: int = 6,
               dense_N: int = 10) -> CheckResult:
    """Theorem 3 exactly: surjective heads have signature ``(n, n, N - 2n)``.

    Random integer heads, surjective by construction and certified by the exact
    rank test, are given exact signatures by two independent routes: Descartes on
    ``charpoly(J G)`` (Lemma 10, ``2n x 2n``) and, for ``N <= dense_N``, on the
    ``N x N`` characteristic polynomial of ``S``; both must equal ``(n, n, N-2n)``.
    A float-weight head (``n = 4, N = 20``, weights converted exactly) too.
    Degenerate heads (``W_K = W_Q``, a shared row, ``N < 2n``) must *not* be
    certified surjective and must get a different signature (``W_K = W_Q``:
    ``n_- = 0``), computed the same way.

    Examples
    --------
    >>> check_thm3(seed=1).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("thm3", "exact")
    for t in range(trials):
        nn = 1 + t % n
        NN = 2 * nn + int(rng.integers(0, max(1, N - 2 * nn + 1)))
        W_Q, W_K = exact.random_head(rng, nn, NN, "surjective")
        rec.instance()
        expected = (nn, nn, NN - 2 * nn)
        tag = f"head (n, N) = ({nn}, {NN})"
        rec.require(exact.stacked_is_surjective(W_Q, W_K), f"{tag}: not certified surjective")
        sig = exact.head_signature(W_Q, W_K, method="charpoly")
        rec.require(tuple(sig) == expected, f"{tag}: Gram-route signature {tuple(sig)}")
        if NN <= dense_N:
            dense = exact.head_signature(W_Q, W_K, method="dense")
            rec.require(tuple(dense) == expected, f"{tag}: dense signature {tuple(dense)}")
    rec.instance()
    Wq = rng.standard_normal((4, 20)) * 0.05
    Wk = rng.standard_normal((4, 20)) * 0.05
    sig = exact.head_signature(Wq, Wk, method="charpoly")
    rec.require(exact.stacked_is_surjective(Wq, Wk), "float head not certified surjective")
    rec.require(tuple(sig) == (4, 4, 12), f"float head: signature {tuple(sig)}")
    for kind in ("equal", "shared_row", "narrow"):
        nn = n
        NN = 2 * nn - 1 if kind == "narrow" else max(N, 2 * nn)
        W_Q, W_K = exact.random_head(rng, nn, NN, kind)
        rec.instance()
        surj = exact.stacked_is_surjective(W_Q, W_K)
        sig = exact.head_signature(W_Q, W_K, method="charpoly")
        con = exact.head_signature(W_Q, W_K, method="congruence")
        rec.require(not surj, f"degenerate {kind} head certified surjective")
        rec.require(tuple(sig) != (nn, nn, NN - 2 * nn),
                    f"degenerate {kind} head has the balanced signature {tuple(sig)}")
        rec.require(sig == con, f"{kind}: charpoly {tuple(sig)} != congruence {tuple(con)}")
        rec.require(max(sig.n_pos, sig.n_neg) <= nn, f"{kind}: Lemma 3 bound violated")
        if kind == "equal":
            rec.require(sig.n_neg == 0, f"W_K = W_Q must give a PSD form, got {tuple(sig)}")
        rec.note(f"degenerate {kind} (n, N) = ({nn}, {NN}): signature {tuple(sig)}")
    return rec.result()
