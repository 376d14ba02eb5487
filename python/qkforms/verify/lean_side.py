"""The Lean side of ``qkforms verify``: static checks, build and audit, premises.

One run of :func:`run_lean_side` scans ``lean/`` and runs the static checks
(:mod:`~qkforms.verify.lean_project`); with ``lake`` on PATH it builds the library and
audits the axioms of every registered declaration (:mod:`~qkforms.verify.lake`).
:func:`read_premises` reads the premises of the formalized results from a LeanDojo trace
(:mod:`~qkforms.verify.lean_trace`; with ``--lean-trace`` it runs the extractor first).
:meth:`LeanSide.outcome` then gives each result its Lean column: ``built``, ``failed``,
``not run`` (with the reason and how to enable it) or ``not formalized``.

Examples
--------
>>> side = run_lean_side(None, [], VerifyOptions(lean="skip"))   # no checkout found
>>> (side.lake, side.reason == NO_SOURCES, side.failures)
(None, True, [])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qkforms import registry
from qkforms._fs import atomic_write
from qkforms.registry import LEAN_FORMALIZED, LEAN_NOT_FORMALIZED, Result
from qkforms.verify import lake as _lake
from qkforms.verify import lean_trace as _trace
from qkforms.verify.checkout import LIBRARY
from qkforms.verify.lean_project import (
    AXIOMS_SCRIPT,
    LeanScan,
    StaticCheck,
    render_axioms_script,
    scan,
    static_checks,
    static_lean_problems,
)
from qkforms.verify.options import VerifyOptions
from qkforms.verify.statuses import BUILT, FAIL, FAILED, NOT_RUN

__all__ = [
    "LEAN_BUILT",
    "LEAN_FAILED",
    "LEAN_NOT_FORMALIZED",
    "LEAN_NOT_RUN",
    "NO_SOURCES",
    "NO_TOOLCHAIN",
    "SKIPPED_BY_OPTION",
    "LeanOutcome",
    "LeanSide",
    "Premises",
    "read_premises",
    "run_lean_side",
    "toolchain_summary",
    "write_axioms_script",
]

#: the Lean column of a row (or :data:`~qkforms.registry.LEAN_NOT_FORMALIZED`)
LEAN_BUILT = BUILT
LEAN_FAILED = FAILED
LEAN_NOT_RUN = NOT_RUN

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


@dataclass
class LeanOutcome:
    """Lean status of one result, its declarations' audits and a short reason."""

    status: str
    detail: str
    declarations: list[dict[str, Any]] = field(default_factory=list)


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
    path = Path(root) / AXIOMS_SCRIPT
    # atomic, and below ``root`` no link is followed: a linked lean/scripts is refused
    atomic_write(path, render_axioms_script(
        registry.RESULTS if results is None else results).encode("utf-8"), root=root)
    return path


# ------------------------------------------------------------------ static checks, build


@dataclass
class LeanSide:
    """What the Lean side found: the checkout's scan and static checks, and the build.

    ``reason`` says why a declaration was not audited (no sources, ``--lean skip``, no
    toolchain); ``failures`` are the failures of the run as a whole (``--lean require``
    without a toolchain, a failed ``lake`` command).
    """

    root: Path | None
    mode: str
    lake: str | None
    scan: LeanScan | None = None
    static: list[StaticCheck] = field(default_factory=list)
    build: _lake.LeanBuild | None = None
    reason: str = NO_SOURCES
    failures: list[str] = field(default_factory=list)

    def outcome(self, r: Result, premises: _trace.PremiseOutcome | None) -> LeanOutcome:
        """The Lean column of ``r``; a ``sorry`` among its premises makes it ``failed``.

        Examples
        --------
        >>> from qkforms.registry import get
        >>> side = LeanSide(None, "skip", None)
        >>> side.outcome(get("thm3"), None).status, side.outcome(get("cor1"), None).status
        ('not run', 'not formalized')
        >>> side.outcome(get("thm3"), _trace.PremiseOutcome("fail", "sorry in x")).detail
        'premises (LeanDojo trace): sorry in x'
        """
        problems = (static_lean_problems(self.scan, r)
                    if self.scan is not None and r.lean_status == LEAN_FORMALIZED else [])
        out = _lean_outcome(r, problems, self.build, self.reason,
                            _decl_files(self.scan, r) if self.scan is not None else None)
        if premises is not None and premises.status == FAIL:
            out = LeanOutcome(
                LEAN_FAILED,
                (out.detail + "; " if out.status == LEAN_FAILED else "")
                + f"premises (LeanDojo trace): {premises.detail}", out.declarations)
        return out


def run_lean_side(root: Path | None, results: Sequence[Result],
                  options: VerifyOptions) -> LeanSide:
    """Scan ``root/lean``, run the static checks and, when ``lake`` runs, build and audit.

    The static checks cover every result of ``results`` (the whole registry, whatever
    ``--only`` selects).

    Examples
    --------
    >>> side = run_lean_side(None, [], VerifyOptions(lean="require"))
    >>> side.failures == [f"--lean require: {NO_SOURCES}"]
    True
    """
    lake_path = _lake.find_lake() if options.lean != "skip" else None
    side = LeanSide(root, options.lean, lake_path)
    if root is None:
        if options.lean == "require":
            side.failures.append(f"--lean require: {NO_SOURCES}")
        return side
    side.scan = scan(root)
    side.static = static_checks(root, results, side.scan)
    if options.lean == "skip":
        side.reason = SKIPPED_BY_OPTION
    elif lake_path is None:
        side.reason = NO_TOOLCHAIN
        if options.lean == "require":
            side.failures.append("--lean require: `lake` is not on PATH, so nothing in "
                                 "Lean was built")
    else:
        side.reason = "not audited"
        decls = {d: f for r in results for d, f in _decl_files(side.scan, r).items()}
        side.build = _lake.build_and_audit(lake_path, root, decls, _lean_modules(side.scan),
                                           timeout=options.lean_timeout,
                                           cache=options.lake_cache)
        side.failures.extend(_build_failures(side.build))
    return side


def _build_failures(build: _lake.LeanBuild) -> list[str]:
    """The failed ``lake`` commands of a build: cache, whole-library build, axiom audit."""
    out = []
    if build.cache is not None and not build.cache.ok:
        out.append(f"`lake exe cache get` failed (exit {build.cache.returncode})")
    if not build.build.ok:
        tail = " | ".join(build.build.output.strip().splitlines()[-3:])
        out.append(f"`lake build` failed (exit {build.build.returncode}): {tail}")
    if build.audit is not None and not build.audit.ok:
        tail = " | ".join(build.audit.output.strip().splitlines()[-3:])
        out.append(f"axiom audit `{' '.join(['lake', *build.audit.command[1:]])}` failed "
                   f"(exit {build.audit.returncode}): {tail}")
    return out


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


# ----------------------------------------------------------------------------- premises


@dataclass
class Premises:
    """The premise report of each formalized result, and how it was (not) read.

    ``not_read`` is why no trace was read ("" when one was); ``run`` and ``problem`` are
    the extractor run of ``--lean-trace`` and what went wrong with it.
    """

    outcomes: dict[str, _trace.PremiseOutcome]
    not_read: str
    run: _trace.TraceRun | None = None
    problem: str = ""


def read_premises(side: LeanSide, formalized: Sequence[Result],
                  options: VerifyOptions) -> Premises:
    """The premises of ``formalized`` from the LeanDojo trace (run first with
    ``--lean-trace``), or ``not run`` with the reason.

    Examples
    --------
    >>> from qkforms.registry import get
    >>> opts = VerifyOptions(lean="skip")
    >>> p = read_premises(run_lean_side(None, [], opts), [get("thm3")], opts)
    >>> p.outcomes["thm3"].status, p.not_read == NO_SOURCES
    ('not run', True)
    """
    run, problem = _run_trace(side, options) if options.lean_trace else (None, "")
    if side.root is None or side.scan is None:
        return Premises(_premises_not_run(formalized, NO_SOURCES), NO_SOURCES, run, problem)
    if problem and (run is None or not run.runs):
        return Premises(_premises_not_run(formalized, problem), problem, run, problem)
    outcomes, not_read = _trace.premises_of(
        side.root, side.scan.declared(), {r.id: r.lean for r in formalized}, options.trace_dir)
    return Premises(outcomes, not_read, run, problem)


def _run_trace(side: LeanSide, options: VerifyOptions) -> tuple[_trace.TraceRun | None, str]:
    """Run LeanDojo's extractor on the modules that built; the run and its problem."""
    extractor = (Path(options.dojo_extractor) if options.dojo_extractor
                 else _trace.find_extractor())
    if side.build is None or side.lake is None or side.root is None or side.scan is None:
        return None, f"--lean-trace: no Lean build ran ({side.reason})"
    if extractor is None:
        return None, ("--lean-trace: LeanDojo's extractor not found; enable: `pip install "
                      f"--no-deps {_trace.EXTRACTOR_DIST}=={_trace.EXTRACTOR_VERSION}` or "
                      "--dojo-extractor FILE")
    built = side.build.modules
    files = [m.file for m in _lake.import_order(_lean_modules(side.scan))
             if m.name != LIBRARY and m.name in built and built[m.name].status == LEAN_BUILT]
    run = _trace.run_trace(side.lake, side.root, files, extractor,
                           timeout=options.lean_timeout)
    return run, "" if run.ok else run.problem


def _premises_not_run(results: Sequence[Result], reason: str) -> dict[str, _trace.PremiseOutcome]:
    return {r.id: _trace.PremiseOutcome(NOT_RUN, reason) for r in results}


# ------------------------------------------------------------------------------ summary


def toolchain_summary(side: LeanSide, premises: Premises,
                      options: VerifyOptions) -> dict[str, Any]:
    """The ``toolchain`` part of the report: mode, ``lake``, each run, modules, trace.

    Examples
    --------
    >>> opts = VerifyOptions(lean="skip")
    >>> side = run_lean_side(None, [], opts)
    >>> summary = toolchain_summary(side, read_premises(side, [], opts), opts)
    >>> summary["mode"], summary["build"], summary["reason"] == NO_SOURCES
    ('skip', None, True)
    """
    build = side.build
    trace_dir = options.trace_dir
    return {
        "mode": options.lean,
        "lake": side.lake,
        "reason": None if build is not None else side.reason,
        "cache": _run_summary(build.cache) if build else None,
        "build": _run_summary(build.build) if build else None,
        "audit": _run_summary(build.audit) if build else None,
        "modules": [m.to_dict() for m in build.modules.values()] if build else [],
        "module_builds": [_run_summary(run) for run in build.module_runs] if build else [],
        "trace": {
            "requested": options.lean_trace,
            "run": premises.run.to_dict() if premises.run is not None else None,
            "problem": premises.problem or None,
            "dir": str(Path(trace_dir) if trace_dir else Path(side.root) / _trace.TRACE_DIR)
            if side.root is not None else None,
            "not_read": premises.not_read or None,
        },
    }


def _run_summary(run: _lake.LakeRun | None) -> dict[str, Any] | None:
    if run is None:
        return None
    return {
        "command": list(run.command),
        "returncode": run.returncode,
        "seconds": round(run.seconds, 3),
        "output_tail": run.output.splitlines()[-40:],
    }
