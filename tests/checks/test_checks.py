"""Tests of the registered checks ``qkforms.checks``: all pass, and they can fail."""

from __future__ import annotations

import dataclasses

import pytest

import qkforms.exact as exact_module
from qkforms import checks
from qkforms.checks import CHECKS, CheckResult, run_check
from qkforms.checks.result import METHODS
from qkforms.errors import ParameterError, QKFormsError
from qkforms.registry import RESULTS, check_function_name


def test_every_registered_id_has_a_check() -> None:
    ids = [r.id for r in RESULTS]
    assert list(CHECKS) == ids
    for rid in ids:
        assert getattr(checks, check_function_name(rid)) is CHECKS[rid]


def test_a_row_naming_another_module_than_the_defining_one_is_refused() -> None:
    from qkforms.registry import Result, get

    row = get("thm3")
    assert checks._resolve(row) is checks.check_thm3
    for spec in ("qkforms.checks.energy:check_thm3", "qkforms.checks:check_thm3",
                 "qkforms.checks.signature:check_lemma3"):
        wrong = Result(row.id, row.paper, row.title, check=spec)
        with pytest.raises(ImportError, match="exports no check_thm3 defined in"):
            checks._resolve(wrong)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("result_id", list(CHECKS))
def test_check_passes(result_id: str, seed: int) -> None:
    result = run_check(result_id, seed=seed)
    assert isinstance(result, CheckResult)
    assert result.id == result_id
    assert result.method in METHODS
    assert result.instances > 0
    assert result.passed, result.detail


def test_probabilistic_checks_declare_monte_carlo() -> None:
    for rid in ("lemma6", "thm5", "cor1", "cor2", "prop5"):
        assert "monte-carlo" in CHECKS[rid]().method
    for rid in ("thm3", "def6", "thm4.d_face"):
        assert CHECKS[rid]().method == "exact"


def test_run_check_errors_and_sizes() -> None:
    with pytest.raises(QKFormsError, match="no registered check"):
        run_check("thm99")
    with pytest.raises(ParameterError, match="accepts the sizes .*got unknown bogus"):
        run_check("lemma5", bogus=3)
    assert run_check("thm3", seed=4, n=2, N=6, trials=3).passed
    assert run_check("lemma6", runs=30, sizes=(64, 1024)).passed


def test_check_result_is_frozen() -> None:
    result = run_check("lemma5")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.passed = False  # type: ignore[misc]


# ---------------------------------------------------------------- the checks can fail


def test_thm3_fails_if_signatures_count_zeros_as_positive(monkeypatch: pytest.MonkeyPatch) -> None:
    real = exact_module.head_signature

    def broken(W_Q, W_K, *, method="auto"):  # noqa: ANN001, ANN202
        sig = real(W_Q, W_K, method=method)
        return exact_module.Signature(sig.n_pos + sig.n_zero, sig.n_neg, 0)

    monkeypatch.setattr(exact_module, "head_signature", broken)
    result = run_check("thm3")
    assert not result.passed and "FAIL" in result.detail


def test_lemma3_fails_with_a_wrong_signature(monkeypatch: pytest.MonkeyPatch) -> None:
    real = exact_module.signature
    monkeypatch.setattr(exact_module, "signature",
                        lambda S: (lambda s: exact_module.Signature(s.n_pos + s.n_zero,
                                                                     s.n_neg, 0))(real(S)))
    assert not run_check("lemma3").passed


def test_profile_checks_fail_if_the_skew_part_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    real = exact_module.profile

    def broken(L, **kw):  # noqa: ANN001, ANN003, ANN202
        p = real(L, **kw)
        return exact_module.ExactProfile(0 * p.a, p.b, p.c, p.d)

    monkeypatch.setattr(exact_module, "profile", broken)
    assert not run_check("thm4.simplex").passed
    assert not run_check("thm4.a_face").passed


def test_face_check_fails_if_c_and_d_are_swapped(monkeypatch: pytest.MonkeyPatch) -> None:
    real = exact_module.profile

    def swapped(L, **kw):  # noqa: ANN001, ANN003, ANN202
        p = real(L, **kw)
        return exact_module.ExactProfile(p.a, p.b, p.d, p.c)

    monkeypatch.setattr(exact_module, "profile", swapped)
    assert not run_check("thm4.d_face").passed
    assert not run_check("def6").passed


def test_monte_carlo_check_fails_without_tolerance(monkeypatch: pytest.MonkeyPatch) -> None:
    import qkforms.checks.energy as energy

    monkeypatch.setattr(energy, "_Z", 0.0)
    result = run_check("prop5")
    assert not result.passed and "SE" in result.detail


def test_gram_factor_statements_fail_for_a_matrix_that_is_not_a_factor() -> None:
    import numpy as np

    from qkforms.checks.signature import GramFactorCase, gram_factor_case, gram_factor_failures

    case = gram_factor_case(np.random.default_rng(0), n_live=2, n_dead=1)
    name, F = case.factors[0]
    wrong = GramFactorCase(case.W_Q, case.W_K, ((name, F * 2),))  # (2F)(2F)^T = 4 M M^T
    msgs = gram_factor_failures(wrong)
    assert any("F F^T != M M^T" in m for m in msgs)
    assert any("charpoly" in m for m in msgs) and any("energies" in m for m in msgs)
    assert gram_factor_failures(case) == []


def test_thm3_live_fails_if_dead_rows_counted_as_live(monkeypatch: pytest.MonkeyPatch) -> None:
    def naive(W_Q, W_K, *, method="auto"):  # noqa: ANN001, ANN202, ARG001 - Theorem 3 misread
        n, N = W_Q.nrows(), W_Q.ncols()
        return exact_module.Signature(n, n, N - 2 * n)

    monkeypatch.setattr(exact_module, "head_signature", naive)
    result = run_check("thm3.live")
    assert not result.passed and "FAIL" in result.detail


def test_prop4_rank_link_fails_if_the_rank_is_off_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    real = exact_module.rank
    monkeypatch.setattr(exact_module, "rank", lambda A: real(A) + 1)
    assert not run_check("prop4").passed
