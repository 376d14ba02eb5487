"""Properties of Lemma 3, Lemma 10 and Theorem 3 (ids ``lemma3``, ``lemma10``, ``thm3``,
``thm3.live``).

Matrices are built constructively from drawn integers (products ``A B`` for a rank
bound, :func:`~qkforms.properties.strategies.heads` for surjective and degenerate
heads); nothing is filtered.
"""

from __future__ import annotations

import flint
import numpy as np
from hypothesis import strategies as st

import qkforms
from qkforms import exact
from qkforms.checks.signature import DEAD_KINDS, add_dead_rows, half_swap_form
from qkforms.properties import prop
from qkforms.properties.strategies import (
    DEGENERATE_KINDS,
    HEAD_KINDS,
    heads,
    int_matrix,
    rational_orthogonal,
)


@prop(st.integers(1, 6).flatmap(lambda N: st.tuples(st.just(N), st.integers(0, N))),
       st.data())
def lemma3_rank_bound(sizes: tuple[int, int], data: st.DataObject) -> None:
    N, r = sizes
    A = data.draw(int_matrix(N, r)) if r else np.zeros((N, 0), dtype=np.int64)
    B = data.draw(int_matrix(r, N)) if r else np.zeros((0, N), dtype=np.int64)
    L = A @ B
    rk = exact.rank(L) if r else 0
    sig = exact.signature(L + L.T)
    assert rk <= r
    assert sig.n_pos <= rk and sig.n_neg <= rk
    assert sum(sig) == N


@prop(st.lists(st.sampled_from([0, 1, 2, 3, -1, -2, -3]), min_size=1, max_size=6),
       st.lists(st.integers(-2, 2), min_size=15, max_size=15), st.integers(0, 2**16))
def lemma3_float_and_exact_signatures_agree_on_known_spectra(
        lam: list[int], skew: list[int], seed: int) -> None:
    """Float core (relative threshold) and exact path on ``U^T diag(lam) U``, well separated."""
    rng = np.random.default_rng(seed)
    S = exact.symmetric_with_spectrum([x * 1 for x in lam], rng)
    expected = (sum(x > 0 for x in lam), sum(x < 0 for x in lam), sum(x == 0 for x in lam))
    assert tuple(exact.signature(S)) == expected
    Sf = np.array([[float(v) for v in row] for row in exact.fraction_matrix(S)])
    assert tuple(qkforms.signature(Sf)) == expected


@prop(heads())
def lemma10_gram_route_identities(head: tuple[np.ndarray, np.ndarray]) -> None:
    W_Q, W_K = head
    n, N = W_Q.shape
    S = exact.symmetric_head_form(W_Q, W_K)
    A = exact.gram_operator(W_Q, W_K)
    x = flint.fmpq_poly([0, 1])
    assert exact.charpoly(S) == x ** (N - 2 * n) * exact.charpoly(A)
    Sk, Ak = S, A
    for _ in range(3):
        assert exact.trace(Sk) == exact.trace(Ak)
        Sk, Ak = Sk * S, Ak * A
    assert exact.descartes_counts(exact.charpoly(A).coeffs()) == (n, n, 0)


@prop(heads(kind="equal"))
def lemma10_identities_hold_for_degenerate_heads(head: tuple[np.ndarray, np.ndarray]
                                                      ) -> None:
    W_Q, W_K = head
    n, N = W_Q.shape
    S = exact.symmetric_head_form(W_Q, W_K)
    A = exact.gram_operator(W_Q, W_K)
    x = flint.fmpq_poly([0, 1])
    assert exact.charpoly(S) == x ** (N - 2 * n) * exact.charpoly(A)
    assert exact.charpoly(A).coeffs()[0] == 0  # 1/2 J G is singular


@prop(st.sampled_from(HEAD_KINDS).flatmap(heads), st.integers(0, 2), st.data())
def lemma10_any_gram_factor_gives_the_nonzero_spectrum(head: tuple[np.ndarray, np.ndarray],
                                                       pad: int, data: st.DataObject) -> None:
    """Any factor ``F F^T = M M^T`` (``F = M U``, ``U`` orthogonal, plus zero columns):
    ``x^k charpoly(S) = x^N charpoly(1/2 F^T J F)`` and the same sign counts."""
    W_Q, W_K = head
    n, N = W_Q.shape
    M = exact.to_fmpq_mat(exact.stacked_matrix(W_Q, W_K))
    F = M * data.draw(rational_orthogonal(N))
    F = flint.fmpq_mat([row + [0] * pad for row in F.tolist()])
    assert F * F.transpose() == M * M.transpose()
    S = exact.symmetric_head_form(W_Q, W_K)
    SF = half_swap_form(F, n)
    x = flint.fmpq_poly([0, 1])
    assert x ** (N + pad) * exact.charpoly(S) == x ** N * exact.charpoly(SF)
    a, b = exact.signature(S), exact.signature(SF)
    assert (a.n_pos, a.n_neg) == (b.n_pos, b.n_neg)


@prop(heads())
def lemma10_float_gram_spectrum_matches_dense(head: tuple[np.ndarray, np.ndarray]) -> None:
    W_Q, W_K = (h.astype(np.float64) for h in head)
    n = W_Q.shape[0]
    L = W_K.T @ W_Q
    dense = np.sort(np.linalg.eigvalsh((L + L.T) / 2))[::-1]
    gram = np.asarray(qkforms.gram_spectrum(W_Q, W_K))
    scale = np.abs(dense).max()
    np.testing.assert_allclose(gram[:n], dense[:n], atol=1e-9 * scale)
    np.testing.assert_allclose(gram[n:], dense[-n:], atol=1e-9 * scale)


@prop(heads())
def thm3_surjective_heads_are_balanced(head: tuple[np.ndarray, np.ndarray]) -> None:
    W_Q, W_K = head
    n, N = W_Q.shape
    balanced = (n, n, N - 2 * n)
    assert exact.stacked_is_surjective(W_Q, W_K)
    assert tuple(exact.head_signature(W_Q, W_K)) == balanced
    assert tuple(exact.head_signature(W_Q, W_K, method="charpoly")) == balanced
    if N <= 8:
        assert tuple(exact.head_signature(W_Q, W_K, method="dense")) == balanced


@prop(st.sampled_from(DEGENERATE_KINDS).flatmap(
    lambda kind: st.tuples(st.just(kind), heads(kind=kind))))
def thm3_degenerate_heads_are_not_balanced(arg: tuple) -> None:
    kind, (W_Q, W_K) = arg
    n, N = W_Q.shape
    assert not exact.stacked_is_surjective(W_Q, W_K)
    sig = exact.head_signature(W_Q, W_K)
    assert sig == exact.head_signature(W_Q, W_K, method="charpoly")
    assert sig == exact.head_signature(W_Q, W_K, method="dense")
    assert tuple(sig) != (n, n, N - 2 * n)
    if kind == "equal":
        assert sig.n_neg == 0
    if kind == "proportional":
        assert sig.n_pos == 0


@prop(st.integers(1, 3), st.integers(0, 5), st.integers(0, 2**16))
def thm3_float_weights(n: int, extra: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    N = 2 * n + extra
    W_Q = rng.standard_normal((n, N)) * 0.02
    W_K = rng.standard_normal((n, N)) * 0.02
    sig = exact.head_signature(W_Q, W_K, method="charpoly")
    assert exact.stacked_is_surjective(W_Q, W_K)
    assert tuple(sig) == (n, n, N - 2 * n)
    assert exact.head_signature(W_Q, W_K) == sig
    assert tuple(qkforms.Head(W_Q, W_K).signature()) == (n, n, N - 2 * n)  # float core


@prop(st.sampled_from(HEAD_KINDS).flatmap(lambda kind: st.tuples(st.just(kind), heads(kind=kind))),
    st.lists(st.booleans(), min_size=1, max_size=4), st.integers(0, 2**16))
def thm3_float_decisions_are_never_wrong(arg: tuple, dead: list[bool], seed: int) -> None:
    """On any head (onto, degenerate, with dead dimensions from zeroed rows) the float
    decision is either undecided or the exact signature; so is the live-part prediction."""
    _, (W_Q, W_K) = arg
    W_Q, W_K = W_Q.astype(np.float64), W_K.astype(np.float64)
    rng = np.random.default_rng(seed)
    n = W_Q.shape[0]
    for i, kill in zip(range(n), dead * n, strict=False):
        if kill:  # a zero gain on one side: dimension i is dead
            (W_Q if rng.integers(2) else W_K)[i] = 0.0
    head = qkforms.Head(W_Q, W_K)
    truth = exact.head_signature(W_Q, W_K, method="charpoly")
    d = head.signature_decision()
    if d.decided:
        assert tuple(d.signature) == tuple(truth)
    assert head.signature() == truth
    facts = exact.head_inertia(W_Q, W_K)
    assert facts.signature == truth
    floated = head.prediction()
    assert floated.kind in (None, facts.prediction)
    if facts.prediction != "none":
        assert facts.signature == (facts.n_live, facts.n_live, W_Q.shape[1] - 2 * facts.n_live)


@prop(heads(), st.lists(st.sampled_from(DEAD_KINDS), min_size=1, max_size=2),
      st.integers(0, 2**16))
def thm3_live_dead_rows_keep_the_live_signature(head: tuple[np.ndarray, np.ndarray],
                                                kinds: list[str], seed: int) -> None:
    """A surjective head with dead coordinates added has signature ``(n', n', N - 2n')``."""
    W_Q, W_K = head
    n, N = W_Q.shape
    Q0, K0 = flint.fmpq_mat(W_Q.tolist()), flint.fmpq_mat(W_K.tolist())
    Q1, K1, _ = add_dead_rows(np.random.default_rng(seed), Q0, K0, kinds)
    assert K1.transpose() * Q1 == K0.transpose() * Q0
    assert not exact.stacked_is_surjective(Q1, K1)
    assert tuple(exact.head_signature(Q1, K1, method="charpoly")) == (n, n, N - 2 * n)
