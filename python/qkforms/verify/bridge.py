"""The bridge: every registered result checked on the Lean and the Python side.

:func:`verify` runs, for the results of the registry (:mod:`qkforms.registry`):

1. the **Lean side** (:mod:`~qkforms.verify.lean_side`): when the Lean sources are found
   (a checkout containing the current directory or the installed package, or
   ``lean_dir``), the static checks of ``lean/`` (registered declarations declared and
   tagged, no ``sorry``/``admit``/``axiom``/``native_decide``, pins, imports, generated
   axiom script, ...); when ``lake`` is on ``PATH`` too, ``lake build`` and
   ``lake env lean lean/scripts/Axioms.lean``, judging each declaration by its axioms
   (when the whole build fails, each module is built on its own and each result's
   status derives from the module(s) declaring it, :mod:`qkforms.verify.lake`).
   Otherwise the Lean column says ``not run``, with the reason and how to enable it;
2. the **premises** of each formalized result, read from a LeanDojo trace
   (:mod:`qkforms.verify.lean_trace`; ``lean_trace=True`` runs LeanDojo's extractor
   after the build), or ``not run`` where no trace exists;
3. the **Python side** (:mod:`~qkforms.verify.python_side`): the exact check
   (``qkforms.checks``), seeded, sizes configurable, and the properties (hypothesis,
   :mod:`qkforms.properties`, run in process);
4. the **report** (:mod:`~qkforms.verify.verification_report`): one row per result and
   an overall verdict. A disagreement needs both sides to have run: a Lean proof that
   built and passed the axiom audit, and a failing Python check of the same result. The
   exit status is 0 unless something that ran failed; a check that did not run is never
   a failure, except the Lean build under ``lean="require"``.

Examples
--------
>>> mini = [Result("lemma0", "Lemma 0", "a result with no Lean proof",
...                check="qkforms.registry:no_such_check")]
>>> rep = verify(results=mini, lean="skip", property_tests=False)
>>> rep.rows[0].exact.detail
'check no_such_check is missing from qkforms.registry'
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qkforms import __version__, registry
from qkforms.registry import LEAN_FORMALIZED, Result
from qkforms.verify.checkout import locate_lean_root
from qkforms.verify.lean_side import (
    NO_SOURCES,
    LeanSide,
    Premises,
    read_premises,
    run_lean_side,
    toolchain_summary,
)
from qkforms.verify.options import VerifyOptions
from qkforms.verify.python_side import (
    PropertyRun,
    check_sizes,
    exact_outcome,
    property_outcome,
    registered_property_runs,
)
from qkforms.verify.verification_report import Report, Row

__all__ = ["verify"]


def verify(
    lean_dir: str | Path | None = None,
    *,
    results: Sequence[Result] | None = None,
    only: Sequence[str] = (),
    lean: str = "auto",
    lean_timeout: float = 3 * 3600.0,
    lake_cache: bool = False,
    seed: int = 0,
    sizes: dict[str, Any] | None = None,
    id_sizes: dict[str, dict[str, Any]] | None = None,
    exact_checks: bool = True,
    property_tests: bool = True,
    max_examples: int | None = None,
    lean_trace: bool = False,
    dojo_extractor: str | Path | None = None,
    trace_dir: str | Path | None = None,
) -> Report:
    """Check every registered result on the Lean and the Python side.

    Parameters
    ----------
    lean_dir : path, optional
        A qkforms checkout holding the Lean sources; default:
        :func:`~qkforms.verify.checkout.locate_lean_root` (none found: the Lean side is
        ``not run``).
    results : sequence of Result, optional
        The registry to check (default: :data:`qkforms.registry.RESULTS`).
    only : sequence of str
        Restrict the rows to these ids or groups (static checks still cover all).
    lean : {"auto", "require", "skip"}
        Whether to run ``lake`` (auto: when on ``PATH``; require: a missing toolchain or
        missing Lean sources is a failure).
    lean_timeout, lake_cache
        Timeout of each ``lake`` command; run ``lake exe cache get`` first.
    seed, sizes, id_sizes
        Seed and sizes of the exact checks (see :func:`~.python_side.parse_sizes`).
    exact_checks, property_tests : bool
        Run the exact checks / the properties.
    max_examples : int, optional
        Hypothesis examples per property (default: each property's own budget).
    lean_trace : bool
        After the build, run LeanDojo's extractor on the modules that built
        (:func:`~qkforms.verify.lean_trace.run_trace`).
    dojo_extractor : path, optional
        LeanDojo's ``ExtractData.lean`` (default: the installed ``lean-dojo-v2``'s).
    trace_dir : path, optional
        Read the trace from here (default ``ROOT/.lake/build/ir``).

    The keywords become one :class:`~qkforms.verify.options.VerifyOptions`, checked
    before anything runs.

    Returns
    -------
    Report
        ``report.exit_status`` is 0 unless something that ran failed.

    Examples
    --------
    >>> mini = [Result("lemma0", "Lemma 0", "a result with no Lean proof",
    ...                check="qkforms.registry:no_such_check")]
    >>> rep = verify(results=mini, lean="skip", property_tests=False)
    >>> [(r.result.id, r.lean.status, r.exact.status, r.verdict) for r in rep.rows]
    [('lemma0', 'not formalized', 'fail', 'fail')]
    >>> rep.exit_status
    1
    """
    options = VerifyOptions(
        only=tuple(only), lean=lean, lean_timeout=lean_timeout, lake_cache=lake_cache,
        seed=seed, sizes=sizes or {}, id_sizes=id_sizes or {}, exact_checks=exact_checks,
        property_tests=property_tests, max_examples=max_examples, lean_trace=lean_trace,
        dojo_extractor=dojo_extractor, trace_dir=trace_dir)
    root = locate_lean_root(lean_dir)
    all_results = list(registry.RESULTS if results is None else results)
    chosen = registry.select(options.only, all_results)
    check_sizes(options.sizes, options.id_sizes, all_results)  # before anything runs
    lean_side = run_lean_side(root, all_results, options)
    premises = read_premises(
        lean_side, [r for r in chosen if r.lean_status == LEAN_FORMALIZED], options)
    runs = registered_property_runs(chosen, options)
    rows = [_row(r, lean_side, premises, runs, options) for r in chosen]
    return _report(lean_side, premises, rows, options)


def _row(r: Result, lean_side: LeanSide, premises: Premises,
         runs: dict[str, PropertyRun] | None, options: VerifyOptions) -> Row:
    """One result's row: its Lean column (with its premises), exact and property columns."""
    prem = premises.outcomes.get(r.id)
    lean_out = lean_side.outcome(r, prem)
    return Row(r, lean_out, exact_outcome(r, options), property_outcome(r, runs), prem)


def _report(lean_side: LeanSide, premises: Premises, rows: list[Row],
            options: VerifyOptions) -> Report:
    root = lean_side.root
    return Report(
        root=None if root is None else str(root),
        options=options.report_options(),
        toolchain=toolchain_summary(lean_side, premises, options),
        static=lean_side.static,
        rows=rows,
        global_failures=lean_side.failures,
        qkforms_version=__version__,
        generated_at=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        static_not_run=NO_SOURCES if root is None else "",
    )
