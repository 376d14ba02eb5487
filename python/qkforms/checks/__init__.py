"""Registered checks: one seeded check per result id of ``docs/architecture.md`` §1.

Every check builds seeded instances and verifies its statement exactly (rational
arithmetic with python-flint / sympy / ``fractions``), or, for the probabilistic
results (``lemma6``, ``thm5``, ``cor1``, ``cor2``, ``prop5``), by a seeded Monte
Carlo with a tolerance of 5 standard errors, together with exact checks of their
deterministic parts. A check returns a :class:`CheckResult`; it does not raise when
the statement fails on an instance (``passed`` is then false and ``detail`` names
the instance).

Each check is defined in a topic module (``energy``, ``signature``, ``profile``, ``faces``,
``accumulation``, ``pairing``, ``attention``), named by its registry row
(``check="qkforms.checks.signature:check_thm3"``), and exported here under the same name;
:data:`CHECKS` maps the ids to them in registry order.

Examples
--------
>>> from qkforms.checks import run_check, CHECKS, check_thm3
>>> len(CHECKS), CHECKS["thm3"] is check_thm3
(26, True)
>>> r = run_check("thm3", seed=1)
>>> r.id, r.passed, r.method
('thm3', True, 'exact')
"""

from __future__ import annotations

import inspect
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
from qkforms.checks.signature import check_lemma3, check_lemma10, check_thm3, check_thm3_live
from qkforms.errors import ParameterError, QKFormsError
from qkforms.registry import RESULTS, Result, check_function_name

__all__ = [
    "CHECKS",
    "METHODS",
    "CheckResult",
    "run_check",
    # one per registered result, in registry order (docs/architecture.md §1)
    "check_lemma5",
    "check_lemma3",
    "check_lemma2",
    "check_lemma10",
    "check_thm3",
    "check_thm3_live",
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


def _resolve(r: Result) -> Callable[..., CheckResult]:
    """The check a registry row names (``module:function``), as imported above."""
    module, _, name = r.check.partition(":")
    func = globals().get(name) if name in __all__ else None
    if (func is None or getattr(func, "__module__", None) != module
            or name != check_function_name(r.id)):
        # error-contract: an invariant between the registry and the check modules, checked
        # at import time; no user input reaches it (tests/test_registry.py covers it)
        raise ImportError(f"registered result {r.id!r} names the check {r.check!r}, but "
                          f"qkforms.checks exports no {check_function_name(r.id)} defined "
                          f"in {module}")
    return func


#: id -> check, in registry order (docs/architecture.md §1), derived from the registry.
CHECKS: dict[str, Callable[..., CheckResult]] = {r.id: _resolve(r) for r in RESULTS}

_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


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
    ParameterError
        For a size the check does not accept (the message lists the accepted ones).

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
    params = inspect.signature(func).parameters.values()
    accepted = [p.name for p in params if p.name != "seed" and p.kind in _KEYWORD_KINDS]
    unknown = sorted(set(sizes) - set(accepted))
    if unknown and not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        raise ParameterError(
            f"check {result_id!r} accepts the sizes {', '.join(accepted) or '(none)'}; "
            f"got unknown {', '.join(unknown)}"
        )
    return func(seed=seed, **sizes)
