"""The float/exact twins: ``Head.exact()`` and ``Head.enclose()`` give what
``qkforms.exact`` gives for the same weights."""

from __future__ import annotations

import numpy as np
import pytest

from qkforms import Head

exact = pytest.importorskip("qkforms.exact")


def _heads() -> dict[str, Head]:
    rng = np.random.default_rng(7)
    Q, K = rng.standard_normal((2, 3, 10))
    dead = Q.copy()
    dead[1] = 0.0  # a dead dimension: n' = 2
    return {"generic": Head(Q, K), "psd": Head(Q, Q), "dead": Head(dead, K)}


@pytest.mark.parametrize("name", ["generic", "psd", "dead"])
def test_exact_facts_are_those_of_qkforms_exact(name: str) -> None:
    head = _heads()[name]
    facts = head.exact()
    inertia = exact.head_inertia(head.W_Q, head.W_K)
    assert facts.inertia == inertia
    assert facts.signature() == exact.head_signature(head.W_Q, head.W_K)
    assert facts.signature(method="charpoly") == exact.head_signature(
        head.W_Q, head.W_K, method="charpoly")
    assert (facts.n_live, facts.stacked_rank, facts.live_rank, facts.prediction,
            facts.zero_form) == (inertia.n_live, inertia.stacked_rank, inertia.live_rank,
                                 inertia.prediction, inertia.zero_form)
    assert facts.is_surjective() == exact.stacked_is_surjective(head.W_Q, head.W_K)
    assert head.signature(method="exact") == facts.signature()
    assert head.prediction(exact=True).kind == facts.prediction


def test_exact_facts_of_known_heads() -> None:
    facts = _heads()
    assert facts["generic"].exact().signature() == (3, 3, 4)
    assert facts["generic"].exact().prediction == "thm3"
    assert facts["psd"].exact().signature() == (3, 0, 7)
    assert (facts["psd"].exact().stacked_rank, facts["psd"].exact().is_surjective()) == (3, False)
    assert facts["dead"].exact().n_live == 2
    assert facts["dead"].exact().prediction == "thm3-live"
    assert facts["dead"].exact().signature() == (2, 2, 6)


@pytest.mark.parametrize("name", ["generic", "dead"])
def test_enclose_is_that_of_qkforms_exact(name: str) -> None:
    head = _heads()[name]
    enc = head.enclose()
    ref = exact.enclose(head.W_Q, head.W_K)
    for stat in ("a", "b", "c", "d", "sym_energy", "pairing", "rho", "theta_dist"):
        assert getattr(enc, stat) == getattr(ref, stat), stat
    assert enc.energies == ref.energies
    assert enc.method == ref.method
    low = head.enclose(method="charpoly", prec=64)
    assert low.method == "charpoly"
    assert low.a == exact.enclose(head.W_Q, head.W_K, method="charpoly", prec=64).a
    p = head.profile()  # the float profile lies within float error of the certified one
    for s in "abcd":
        iv = getattr(enc, s)
        assert iv.hi - iv.lo < 1e-12 and abs(iv.lo - getattr(p, s)) < 1e-9, s
