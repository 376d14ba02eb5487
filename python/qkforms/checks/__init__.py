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
26
>>> r = run_check("thm3", seed=1)
>>> r.id, r.passed, r.method
('thm3', True, 'exact')
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import ModuleType
from typing import Any

from qkforms.checks import (
    accumulation,
    attention,
    energy,
    faces,
    pairing,
    profile,
    signature,
)
from qkforms.checks.result import METHODS, CheckResult
from qkforms.errors import ParameterError, QKFormsError
from qkforms.registry import RESULTS, check_function_name

_MODULES: tuple[ModuleType, ...] = (
    energy, signature, profile, faces, accumulation, pairing, attention,
)


def _resolve(result_id: str) -> Callable[..., CheckResult]:
    """The check function of a registered id, found in the check modules."""
    name = check_function_name(result_id)
    hits = [getattr(m, name) for m in _MODULES if hasattr(m, name)]
    if len(hits) != 1:
        # error-contract: an invariant between the registry and the check modules, checked
        # at import time; no user input reaches it (tests/test_registry.py covers it)
        raise ImportError(f"registered result {result_id!r} needs exactly one function "
                          f"{name} in qkforms.checks.*, found {len(hits)}")
    return hits[0]


#: id -> check, in registry order (docs/architecture.md §1), derived from the registry.
CHECKS: dict[str, Callable[..., CheckResult]] = {r.id: _resolve(r.id) for r in RESULTS}
globals().update({check_function_name(rid): f for rid, f in CHECKS.items()})

__all__ = [  # the check names come from the registry
    "CHECKS",
    "METHODS",
    "CheckResult",
    "run_check",
    *(check_function_name(rid) for rid in CHECKS),
]

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
