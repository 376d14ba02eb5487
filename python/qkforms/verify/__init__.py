"""``qkforms verify``: Lean and Python checked side by side, result by result.

For every result of the registry (:mod:`qkforms.registry`) the command reports

* the **Lean** status: when the Lean sources are found (a checkout containing the
  current directory or the installed package, or ``--lean-dir DIR``), static checks of
  ``lean/`` run (registered declarations declared and tagged, no
  ``sorry``/``admit``/``axiom``/``native_decide``, pins, imports, generated axiom
  script); when ``lake`` is on ``PATH`` too it runs ``lake build`` and
  ``lake env lean lean/scripts/Axioms.lean`` and judges each declaration by its axioms;
  when the whole build fails, each module is built on its own and each result's status
  derives from the module(s) declaring it (:mod:`qkforms.verify.lake`). Otherwise the
  Lean column says ``not run``, with the reason and how to enable it;
* the **premises** of each formalized result, read from a LeanDojo trace
  (:mod:`qkforms.verify.lean_trace`; ``--lean-trace`` runs LeanDojo's extractor after
  the build), or ``not run`` where no trace exists;
* the **exact** Python check (``qkforms.checks``), seeded, sizes configurable;
* the **properties** (hypothesis, :mod:`qkforms.properties`, run in process);

and an overall verdict (:mod:`qkforms.verify.verification_report`). A disagreement needs
both sides to have run: a Lean proof that built and passed the axiom audit, and a failing Python
check of the same result. The exit status is 0 unless something that ran failed; a
check that did not run is never a failure, except the Lean build under
``--lean require``.

Examples
--------
>>> import argparse
>>> p = argparse.ArgumentParser()
>>> configure(p)
>>> a = p.parse_args(["--lean", "skip", "--no-property-tests", "--only", "thm3"])
>>> (a.lean, a.property_tests, a.only, a.lean_dir, a.lean_trace)
('skip', False, ['thm3'], None, False)
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qkforms import registry
from qkforms.cli import bounded_int, seconds_arg, seed_arg
from qkforms.errors import QKFormsError, VerificationError
from qkforms.registry import LEAN_FORMALIZED, Result
from qkforms.verify import lake as _lake
from qkforms.verify import lean_trace as _trace
from qkforms.verify.checkout import LIBRARY, find_root
from qkforms.verify.lean_project import (
    AXIOMS_SCRIPT,
    LeanScan,
    render_axioms_script,
    scan,
    static_checks,
    static_lean_problems,
)
from qkforms.verify.python_side import (
    FAIL,
    NONE,
    NOT_RUN,
    PASS,
    ExactOutcome,
    PropertyRun,
    check_sizes,
    parse_sizes,
    run_exact,
    run_properties,
)
from qkforms.verify.verification_report import (
    LEAN_BUILT,
    LEAN_FAILED,
    LEAN_NOT_FORMALIZED,
    LEAN_NOT_RUN,
    LeanOutcome,
    PropertyOutcome,
    Report,
    Row,
    render_markdown,
    render_table,
)

__all__ = ["configure", "run", "verify", "write_axioms_script", "locate_lean_root"]

LEAN_MODES = ("auto", "require", "skip")

#: why the Lean side did not run, and how to enable it
NO_SOURCES = (
    "Lean sources not found: this qkforms was installed without its repository (e.g. from "
    "a wheel) and the current directory is not inside a qkforms checkout; enable: "
    "`qkforms verify --lean-dir DIR` with DIR a qkforms checkout"
)
NO_TOOLCHAIN = (
    "no Lean toolchain: `lake` is not on PATH; enable: install elan (it provides `lake`), "
    "then run `qkforms verify` in the checkout (docs/bridge.md)"
)
SKIPPED_BY_OPTION = "--lean skip"
#: largest ``--max-examples`` (hypothesis examples per property)
MAX_EXAMPLES = 1_000_000


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``qkforms verify`` arguments to ``parser``."""
    parser.add_argument("--lean-dir", "--root", dest="lean_dir", type=Path, default=None,
                        metavar="DIR",
                        help="a qkforms checkout holding lean/ and lakefile.lean (default: "
                             "the checkout containing the current directory or the "
                             "installed package, if any)")
    parser.add_argument("--lean", choices=LEAN_MODES, default="auto",
                        help="auto: build when lake is on PATH; require: fail without it; "
                             "skip: static checks only (default: auto)")
    parser.add_argument("--lean-timeout", type=seconds_arg, default=3 * 3600.0,
                        metavar="SECONDS",
                        help="timeout of each lake command (default: 10800)")
    parser.add_argument("--lake-cache", action="store_true",
                        help="run `lake exe cache get` before `lake build`")
    parser.add_argument("--lean-trace", action="store_true",
                        help="after the build, trace the modules that built with LeanDojo's "
                             "extractor (premises of every result; needs lake and "
                             f"{_trace.EXTRACTOR_DIST} {_trace.EXTRACTOR_VERSION} installed "
                             "without its dependencies, or an extractor file given by the "
                             "option below)")
    parser.add_argument("--dojo-extractor", type=Path, default=None, metavar="FILE",
                        help="LeanDojo's ExtractData.lean (default: the one of the installed "
                             f"{_trace.EXTRACTOR_DIST})")
    parser.add_argument("--trace-dir", type=Path, default=None, metavar="DIR",
                        help=f"read the LeanDojo trace from DIR (default: ROOT/{_trace.TRACE_DIR})")
    parser.add_argument("--seed", type=seed_arg, default=0, help="seed of the exact checks")
    parser.add_argument("--size", action="append", default=[], metavar="[ID:]KEY=VALUE",
                        help="size passed to the checks (all that accept KEY, or only ID)")
    parser.add_argument("--only", action="append", default=[], metavar="ID",
                        help="restrict the rows to these ids or groups (e.g. thm4)")
    parser.add_argument("--no-exact-checks", dest="exact_checks", action="store_false",
                        help="skip the exact Python checks")
    parser.add_argument("--no-property-tests", "--no-properties", dest="property_tests",
                        action="store_false", help="do not run the registered properties")
    parser.add_argument("--max-examples", type=bounded_int(1, MAX_EXAMPLES), default=None,
                        metavar="N",
                        help="hypothesis examples per property (default: each property's "
                             "own budget, 100 for most)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH",
                        help="write the report as JSON (schema qkforms.verify/3)")
    parser.add_argument("--markdown", type=Path, default=None, metavar="PATH",
                        help="write the report as a Markdown page")
    parser.add_argument("--write-axioms-script", action="store_true",
                        help=f"regenerate {AXIOMS_SCRIPT} from the registry and exit")


def write_axioms_script(root: Path, results: Sequence[Result] | None = None) -> Path:
    """Write ``lean/scripts/Axioms.lean`` generated from the registry; return its path.

    Raises
    ------
    UnsafePathError
        If ``lean`` or ``lean/scripts`` below ``root`` is a symbolic link or not a
        directory (nothing is written).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = write_axioms_script(pathlib.Path(tempfile.mkdtemp()), [])
    >>> p.read_text().startswith("import QKForms")
    True
    """
    from qkforms._fs import atomic_write

    path = Path(root) / AXIOMS_SCRIPT
    # atomic, and below ``root`` no link is followed: a linked lean/scripts is refused
    atomic_write(path, render_axioms_script(
        registry.RESULTS if results is None else results).encode("utf-8"), root=root)
    return path


def locate_lean_root(lean_dir: str | Path | None = None) -> Path | None:
    """The checkout whose Lean sources ``verify`` checks, or ``None`` when there is none.

    An explicit ``lean_dir`` must be a qkforms checkout; otherwise the checkout
    containing the current directory or the installed package is used, if any.

    Raises
    ------
    QKFormsError
        If ``lean_dir`` is given but is not a directory holding ``lakefile.lean`` or
        ``lean/QKForms``.

    Examples
    --------
    >>> (locate_lean_root() / "lakefile.lean").is_file()   # run from this checkout
    True
    """
    if lean_dir is None:
        try:
            return find_root()
        except VerificationError:
            return None
    path = Path(lean_dir).resolve()
    if not path.is_dir():
        raise QKFormsError(f"--lean-dir {lean_dir}: not a directory")
    if not ((path / "lakefile.lean").is_file() or (path / "lean" / "QKForms").is_dir()):
        raise QKFormsError(f"--lean-dir {lean_dir}: not a qkforms checkout (no lakefile.lean "
                           "and no lean/QKForms)")
    return path


def _decl_files(lean_scan: LeanScan, r: Result) -> dict[str, tuple[str, ...]]:
    """Registered declaration -> the files declaring it (the registered file if none)."""
    declared = lean_scan.declared()
    return {d: tuple(sorted({p for p, _ in declared.get(d, [])}))
            or ((r.lean_file,) if r.lean_file else ()) for d in r.lean}


def _lean_modules(lean_scan: LeanScan) -> list[_lake.LeanModule]:
    """The modules of the library with their project imports."""
    return [
        _lake.LeanModule(f.module, f.path,
                         tuple(i for i in f.imports if lean_scan.module_file(i) is not None))
        for f in lean_scan.files.values() if f.module is not None
    ]


def _check_numbers(lean_timeout: Any, seed: Any, max_examples: Any) -> None:
    """The ranges of :func:`verify`'s numbers (the command line checks them in argparse)."""
    import math

    from qkforms.cli import MAX_SEED
    from qkforms.errors import ParameterError, format_value

    if isinstance(lean_timeout, bool) or not isinstance(lean_timeout, int | float) or not (
            math.isfinite(lean_timeout) and lean_timeout > 0):
        raise ParameterError(f"lean_timeout must be a finite number of seconds > 0, got "
                             f"{format_value(lean_timeout)}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ParameterError(f"seed must be an integer between 0 and {MAX_SEED}, got "
                             f"{format_value(seed)}")
    if max_examples is not None and (
            isinstance(max_examples, bool) or not isinstance(max_examples, int)
            or not 1 <= max_examples <= MAX_EXAMPLES):
        raise ParameterError(f"max_examples must be an integer between 1 and {MAX_EXAMPLES}, "
                             f"got {format_value(max_examples)}")


def _lean_outcome(
    r: Result,
    problems: list[str],
    build: _lake.LeanBuild | None,
    not_run_reason: str,
    files: dict[str, tuple[str, ...]] | None = None,
) -> LeanOutcome:
    if r.lean_status != LEAN_FORMALIZED:
        return LeanOutcome(LEAN_NOT_FORMALIZED, "no Lean declarations registered")
    decls: list[dict[str, Any]] = []
    audits = []
    module_of = {m.file: m for m in build.modules.values()} if build is not None else {}
    for name in r.lean:
        audit = build.declarations.get(name) if build is not None else None
        audits.append(audit)
        mods = [module_of[f] for f in (files or {}).get(name, ()) if f in module_of]
        decls.append({
            "name": name,
            "status": audit.status if audit else LEAN_NOT_RUN,
            "axioms": list(audit.axioms) if audit and audit.axioms is not None else None,
            "detail": audit.detail if audit else not_run_reason,
            "modules": [{"module": m.module, "status": m.status} for m in mods],
        })
    if problems:
        return LeanOutcome(LEAN_FAILED, "; ".join(problems), decls)
    if not r.lean:
        return LeanOutcome(LEAN_FAILED, "formalized but no declaration registered", decls)
    if build is None:
        return LeanOutcome(LEAN_NOT_RUN, not_run_reason, decls)
    bad = [a for a in audits if a is None or a.status == LEAN_FAILED]
    if bad:
        return LeanOutcome(LEAN_FAILED, "; ".join(
            f"{a.name}: {a.detail}" for a in bad if a is not None) or "not audited", decls)
    if any(a.status != LEAN_BUILT for a in audits if a is not None):
        return LeanOutcome(LEAN_NOT_RUN, "; ".join(
            f"{a.name}: {a.detail}" for a in audits if a is not None and a.status != LEAN_BUILT),
            decls)
    return LeanOutcome(LEAN_BUILT, "built; axioms within propext, Classical.choice, Quot.sound",
                       decls)


def _property_outcome(r: Result, runs: dict[str, PropertyRun] | None,
                      reason: str) -> PropertyOutcome:
    if not r.properties:
        return PropertyOutcome(NONE, "no properties registered")
    if runs is None:
        return PropertyOutcome(NOT_RUN, reason)
    mine = [runs[n] for n in r.properties]
    failed = [p for p in mine if p.status == FAIL]
    if failed:
        return PropertyOutcome(FAIL, "; ".join(f"{p.name}: {p.detail}" for p in failed), mine)
    if all(p.status == PASS for p in mine):
        return PropertyOutcome(PASS, f"{len(mine)} properties passed", mine)
    reasons = list(dict.fromkeys(p.detail for p in mine if p.status != PASS))
    return PropertyOutcome(NOT_RUN, "; ".join(reasons), mine)


def _premises_not_run(results: Sequence[Result], reason: str) -> dict[str, _trace.PremiseOutcome]:
    return {r.id: _trace.PremiseOutcome(_trace.NOT_RUN, reason) for r in results}


def _run_summary(run: _lake.LakeRun | None) -> dict[str, Any] | None:
    if run is None:
        return None
    return {
        "command": list(run.command),
        "returncode": run.returncode,
        "seconds": round(run.seconds, 3),
        "output_tail": run.output.splitlines()[-40:],
    }


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
        :func:`locate_lean_root` (none found: the Lean side is ``not run``).
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
    if lean not in LEAN_MODES:
        raise QKFormsError(f"--lean must be one of {', '.join(LEAN_MODES)}, not {lean!r}")
    _check_numbers(lean_timeout, seed, max_examples)
    root = locate_lean_root(lean_dir)
    all_results = list(registry.RESULTS if results is None else results)
    rows_for = registry.select(only, all_results)
    sizes = dict(sizes or {})
    id_sizes = dict(id_sizes or {})
    check_sizes(sizes, id_sizes, all_results)  # before anything runs
    from qkforms import __version__

    global_failures: list[str] = []
    lake_path = _lake.find_lake() if lean != "skip" else None
    build: _lake.LeanBuild | None = None
    lean_scan: LeanScan | None = None
    static = []
    if root is None:
        reason = NO_SOURCES
        if lean == "require":
            global_failures.append(f"--lean require: {NO_SOURCES}")
    else:
        lean_scan = scan(root)
        static = static_checks(root, all_results, lean_scan)
        if lean == "skip":
            reason = SKIPPED_BY_OPTION
        elif lake_path is None:
            reason = NO_TOOLCHAIN
            if lean == "require":
                global_failures.append("--lean require: `lake` is not on PATH, so nothing in "
                                       "Lean was built")
        else:
            reason = "not audited"
            decls = {d: f for r in all_results for d, f in _decl_files(lean_scan, r).items()}
            build = _lake.build_and_audit(lake_path, root, decls, _lean_modules(lean_scan),
                                          timeout=lean_timeout, cache=lake_cache)
            if build.cache is not None and not build.cache.ok:
                global_failures.append(
                    f"`lake exe cache get` failed (exit {build.cache.returncode})")
            if not build.build.ok:
                tail = " | ".join(build.build.output.strip().splitlines()[-3:])
                global_failures.append(
                    f"`lake build` failed (exit {build.build.returncode}): {tail}")
            if build.audit is not None and not build.audit.ok:
                tail = " | ".join(build.audit.output.strip().splitlines()[-3:])
                global_failures.append(
                    f"axiom audit `{' '.join(['lake', *build.audit.command[1:]])}` failed "
                    f"(exit {build.audit.returncode}): {tail}")

    formalized = [r for r in rows_for if r.lean_status == LEAN_FORMALIZED]
    trace_run: _trace.TraceRun | None = None
    trace_problem = ""
    if lean_trace:
        extractor = Path(dojo_extractor) if dojo_extractor else _trace.find_extractor()
        if build is None or lake_path is None or root is None or lean_scan is None:
            trace_problem = f"--lean-trace: no Lean build ran ({reason})"
        elif extractor is None:
            trace_problem = (
                "--lean-trace: LeanDojo's extractor not found; enable: `pip install "
                f"--no-deps {_trace.EXTRACTOR_DIST}=={_trace.EXTRACTOR_VERSION}` or "
                "--dojo-extractor FILE")
        else:
            built = build.modules
            files = [m.file for m in _lake.import_order(_lean_modules(lean_scan))
                     if m.name != LIBRARY and m.name in built
                     and built[m.name].status == LEAN_BUILT]
            trace_run = _trace.run_trace(lake_path, root, files, extractor,
                                         timeout=lean_timeout)
            if not trace_run.ok:
                trace_problem = trace_run.problem
    if root is None or lean_scan is None:
        premises = _premises_not_run(formalized, NO_SOURCES)
        premise_reason = NO_SOURCES
    elif trace_problem and (trace_run is None or not trace_run.runs):
        premises = _premises_not_run(formalized, trace_problem)
        premise_reason = trace_problem
    else:
        premises, premise_reason = _trace.premises_of(
            root, lean_scan.declared(), {r.id: r.lean for r in formalized}, trace_dir)


    runs = None
    prop_reason = "--no-property-tests"
    if property_tests:
        names = [n for r in rows_for for n in r.properties]
        runs = run_properties(names, max_examples=max_examples) if names else {}

    rows = []
    for r in rows_for:
        problems = (static_lean_problems(lean_scan, r)
                    if lean_scan is not None and r.lean_status == LEAN_FORMALIZED else [])
        lean_out = _lean_outcome(r, problems, build, reason,
                                 _decl_files(lean_scan, r) if lean_scan is not None else None)
        prem = premises.get(r.id)
        if prem is not None and prem.status == _trace.FAIL:
            lean_out = LeanOutcome(
                LEAN_FAILED,
                (lean_out.detail + "; " if lean_out.status == LEAN_FAILED else "")
                + f"premises (LeanDojo trace): {prem.detail}", lean_out.declarations)
        if exact_checks:
            exact = run_exact(r.id, r.check, seed=seed, sizes=sizes, id_sizes=id_sizes.get(r.id))
        else:
            exact = ExactOutcome(NOT_RUN, None, None, "--no-exact-checks", 0.0)
        rows.append(Row(r, lean_out, exact, _property_outcome(r, runs, prop_reason), prem))

    toolchain = {
        "mode": lean,
        "lake": lake_path,
        "reason": None if build is not None else reason,
        "cache": _run_summary(build.cache) if build else None,
        "build": _run_summary(build.build) if build else None,
        "audit": _run_summary(build.audit) if build else None,
        "modules": [m.to_dict() for m in build.modules.values()] if build else [],
        "module_builds": [_run_summary(run) for run in build.module_runs] if build else [],
        "trace": {
            "requested": lean_trace,
            "run": trace_run.to_dict() if trace_run is not None else None,
            "problem": trace_problem or None,
            "dir": str(Path(trace_dir) if trace_dir else Path(root) / _trace.TRACE_DIR)
            if root is not None else None,
            "not_read": premise_reason or None,
        },
    }
    options = {
        "seed": seed,
        "sizes": sizes,
        "id_sizes": id_sizes,
        "only": list(only),
        "exact_checks": exact_checks,
        "property_tests": property_tests,
        "max_examples": max_examples,
    }
    return Report(
        root=None if root is None else str(root),
        options=options,
        toolchain=toolchain,
        static=static,
        rows=rows,
        global_failures=global_failures,
        qkforms_version=__version__,
        generated_at=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        static_not_run=NO_SOURCES if root is None else "",
    )


def run(args: argparse.Namespace) -> int:
    """Run ``qkforms verify`` with parsed arguments; return the exit status."""
    if args.write_axioms_script:
        root = locate_lean_root(args.lean_dir)
        if root is None:
            raise QKFormsError(f"--write-axioms-script: {NO_SOURCES}")
        path = write_axioms_script(root)
        print(f"wrote {path}")
        return 0
    sizes, id_sizes = parse_sizes(args.size)
    report = verify(
        args.lean_dir,
        only=args.only,
        lean=args.lean,
        lean_timeout=args.lean_timeout,
        lake_cache=args.lake_cache,
        seed=args.seed,
        sizes=sizes,
        id_sizes=id_sizes,
        exact_checks=args.exact_checks,
        property_tests=args.property_tests,
        max_examples=args.max_examples,
        lean_trace=args.lean_trace,
        dojo_extractor=args.dojo_extractor,
        trace_dir=args.trace_dir,
    )
    sys.stdout.write(render_table(report))
    from qkforms._fs import atomic_write

    if args.json is not None:
        atomic_write(args.json, report.to_json().encode("utf-8"))
        print(f"wrote {args.json}")
    if args.markdown is not None:
        atomic_write(args.markdown, render_markdown(report).encode("utf-8"))
        print(f"wrote {args.markdown}")
    return report.exit_status
