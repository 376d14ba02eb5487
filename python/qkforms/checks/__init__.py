"""Registered checks: one seeded check per result id of ``docs/architecture.md`` §1.

Every check builds seeded instances and verifies its statement exactly (rational
arithmetic with python-flint / sympy / ``fractions``), or, for the probabilistic
results (``lemma6``, ``thm5``, ``cor1``, ``cor2``, ``prop5``), by a seeded Monte
Carlo with a tolerance of 5 standard errors, together with exact checks of their
deterministic parts. A check returns a :class:`CheckResult`; it does not raise when
the statement fails on an instance (``passed`` is then false and ``detail`` names
the instance).

Examples
--------
>>> from qkforms.checks import run_check, CHECKS
>>> len(CHECKS)
25
>>> r = run_check("thm3", seed=1)
>>> r.id, r.passed, r.method
('thm3', True, 'exact')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from qkforms.checks.accumulation import check_lemma6, check_thm5
from qkforms.checks.attention import check_lemma1, check_prop1, check_prop3
from qkforms.checks.energy import check_cor1, check_cor2, check_lemma5, check_prop5
from qkforms.checks.faces import (
    check_thm4_a_face,
    check_thm4_b_face,
    check_thm4_c_face,
    check_thm4_d_face,
    check_thm4_empty_edge,
    check_thm4_simplex,
)
from qkforms.checks.pairing import check_lemma2, check_lemma7, check_lemma8, check_lemma9
from qkforms.checks.profile import check_def6, check_lemma4, check_prop4
from qkforms.checks.result import METHODS, CheckResult
from qkforms.checks.signature import check_lemma3, check_lemma10, check_thm3
from qkforms.errors import QKFormsError

__all__ = [
    "CHECKS",
    "METHODS",
    "CheckResult",
    "run_check",
    "check_lemma5",
    "check_lemma3",
    "check_lemma2",
    "check_lemma10",
    "check_thm3",
    "check_def6",
    "check_lemma4",
    "check_prop4",
    "check_thm4_simplex",
    "check_thm4_a_face",
    "check_thm4_b_face",
    "check_thm4_d_face",
    "check_thm4_c_face",
    "check_thm4_empty_edge",
    "check_lemma6",
    "check_thm5",
    "check_cor1",
    "check_cor2",
    "check_prop5",
    "check_lemma7",
    "check_lemma8",
    "check_lemma9",
    "check_lemma1",
    "check_prop1",
    "check_prop3",
]

#: id -> check, in the order of docs/architecture.md §1.
CHECKS: dict[str, Callable[..., CheckResult]] = {
    "lemma5": check_lemma5,
    "lemma3": check_lemma3,
    "lemma2": check_lemma2,
    "lemma10": check_lemma10,
    "thm3": check_thm3,
    "def6": check_def6,
    "lemma4": check_lemma4,
    "prop4": check_prop4,
    "thm4.simplex": check_thm4_simplex,
    "thm4.a_face": check_thm4_a_face,
    "thm4.b_face": check_thm4_b_face,
    "thm4.d_face": check_thm4_d_face,
    "thm4.c_face": check_thm4_c_face,
    "thm4.empty_edge": check_thm4_empty_edge,
    "lemma6": check_lemma6,
    "thm5": check_thm5,
    "cor1": check_cor1,
    "cor2": check_cor2,
    "prop5": check_prop5,
    "lemma7": check_lemma7,
    "lemma8": check_lemma8,
    "lemma9": check_lemma9,
    "lemma1": check_lemma1,
    "prop1": check_prop1,
    "prop3": check_prop3,
}


def run_check(result_id: str, seed: int = 0, **sizes: Any) -> CheckResult:
    """Run the registered check of ``result_id`` with a seed and optional sizes.

    Parameters
    ----------
    result_id
        An id of ``docs/architecture.md`` §1 (e.g. ``"thm4.a_face"``).
    seed
        Seed of the instance generator.
    **sizes
        Keyword sizes accepted by that check (e.g. ``N=6``, ``trials=20``).

    Raises
    ------
    QKFormsError
        For an unknown id.
    TypeError
        For a size the check does not accept.

    Examples
    --------
    >>> run_check("lemma5", seed=2, N=3).passed
    True
    """
    try:
        func = CHECKS[result_id]
    except KeyError:
        raise QKFormsError(
            f"no registered check for id {result_id!r}; known ids: {', '.join(CHECKS)}"
        ) from None
    return func(seed=seed, **sizes)
