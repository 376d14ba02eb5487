"""``qkforms verify``: Lean and Python checked side by side, result by result.

For every result of the registry (:mod:`qkforms.registry`) the command reports

* the **Lean** status: static checks of ``lean/`` always run (registered declarations
  declared and tagged, no ``sorry``/``admit``/``axiom``/``native_decide``, pins, imports,
  generated axiom script); when ``lake`` is on ``PATH`` (or with ``--lean require``) it
  runs ``lake build`` and ``lake env lean lean/scripts/Axioms.lean`` and judges each
  declaration by its axioms. Without a toolchain the Lean column says ``not checked``;
* the **exact** Python check (``qkforms.checks``), seeded, sizes configurable;
* the **property** tests (pytest node ids, run in a subprocess);

and an overall verdict (:mod:`qkforms.verify.report`). A Python failure of a result
whose Lean proof is claimed is a disagreement. The exit status is 0 only when nothing
failed; a missing toolchain is not a failure unless ``--lean require``.

Examples
--------
>>> import argparse
>>> p = argparse.ArgumentParser()
>>> configure(p)
>>> a = p.parse_args(["--lean", "skip", "--no-property-tests", "--only", "thm3"])
>>> (a.lean, a.property_tests, a.only)
('skip', False, ['thm3'])
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qkforms import registry
from qkforms.errors import QKFormsError
from qkforms.registry import LEAN_FORMALIZED, Result
from qkforms.verify import lake as _lake
from qkforms.verify.lean_project import (
    AXIOMS_SCRIPT,
    find_root,
    render_axioms_script,
    scan,
    static_checks,
    static_lean_problems,
)
from qkforms.verify.python_side import (
    FAIL,
    PASS,
    SKIPPED,
    ExactOutcome,
    parse_sizes,
    run_exact,
    run_property_tests,
)
from qkforms.verify.report import (
    LEAN_BUILT,
    LEAN_FAILED,
    LEAN_NOT_CHECKED,
    LEAN_NOT_FORMALIZED,
    LeanOutcome,
    PropertyOutcome,
    Report,
    Row,
    render_markdown,
    render_table,
)

__all__ = ["configure", "run", "verify", "write_axioms_script"]

LEAN_MODES = ("auto", "require", "skip")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``qkforms verify`` arguments to ``parser``."""
    parser.add_argument("--root", type=Path, default=None,
                        help="repository root (default: search upward for lakefile.lean)")
    parser.add_argument("--lean", choices=LEAN_MODES, default="auto",
                        help="auto: build when lake is on PATH; require: fail without it; "
                             "skip: static checks only (default: auto)")
    parser.add_argument("--lean-timeout", type=float, default=3 * 3600.0, metavar="SECONDS",
                        help="timeout of each lake command (default: 10800)")
    parser.add_argument("--lake-cache", action="store_true",
                        help="run `lake exe cache get` before `lake build`")
    parser.add_argument("--seed", type=int, default=0, help="seed of the exact checks")
    parser.add_argument("--size", action="append", default=[], metavar="[ID:]KEY=VALUE",
                        help="size passed to the checks (all that accept KEY, or only ID)")
    parser.add_argument("--only", action="append", default=[], metavar="ID",
                        help="restrict the rows to these ids or groups (e.g. thm4)")
    parser.add_argument("--no-exact-checks", dest="exact_checks", action="store_false",
                        help="skip the exact Python checks")
    parser.add_argument("--no-property-tests", dest="property_tests", action="store_false",
                        help="skip the registered property tests")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH",
                        help=f"write the report as JSON ({'qkforms.verify/1'})")
    parser.add_argument("--markdown", type=Path, default=None, metavar="PATH",
                        help="write the report as a Markdown page")
    parser.add_argument("--write-axioms-script", action="store_true",
                        help=f"regenerate {AXIOMS_SCRIPT} from the registry and exit")


def write_axioms_script(root: Path, results: Sequence[Result] | None = None) -> Path:
    """Write ``lean/scripts/Axioms.lean`` generated from the registry; return its path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = write_axioms_script(pathlib.Path(tempfile.mkdtemp()), [])
    >>> p.read_text().startswith("import QKForms")
    True
    """
    path = Path(root) / AXIOMS_SCRIPT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_axioms_script(registry.RESULTS if results is None else results),
                    encoding="utf-8")
    return path


def _lean_outcome(
    r: Result,
    problems: list[str],
    build: _lake.LeanBuild | None,
    not_checked_reason: str,
) -> LeanOutcome:
    if r.lean_status != LEAN_FORMALIZED:
        return LeanOutcome(LEAN_NOT_FORMALIZED, "no Lean declarations registered")
    decls: list[dict[str, Any]] = []
    audits = []
    for name in r.lean:
        audit = build.declarations.get(name) if build is not None else None
        audits.append(audit)
        decls.append({
            "name": name,
            "status": audit.status if audit else LEAN_NOT_CHECKED,
            "axioms": list(audit.axioms) if audit and audit.axioms is not None else None,
            "detail": audit.detail if audit else not_checked_reason,
        })
    if problems:
        return LeanOutcome(LEAN_FAILED, "; ".join(problems), decls)
    if not r.lean:
        return LeanOutcome(LEAN_FAILED, "formalized but no declaration registered", decls)
    if build is None:
        return LeanOutcome(LEAN_NOT_CHECKED, not_checked_reason, decls)
    bad = [a for a in audits if a is None or a.status == LEAN_FAILED]
    if bad:
        return LeanOutcome(LEAN_FAILED, "; ".join(
            f"{a.name}: {a.detail}" for a in bad if a is not None) or "not audited", decls)
    if any(a.status != LEAN_BUILT for a in audits if a is not None):
        return LeanOutcome(LEAN_NOT_CHECKED, "; ".join(
            f"{a.name}: {a.detail}" for a in audits if a is not None and a.status != LEAN_BUILT),
            decls)
    return LeanOutcome(LEAN_BUILT, "built; axioms within propext, Classical.choice, Quot.sound",
                       decls)


def _property_outcome(r: Result, outcomes: dict[str, Any] | None, reason: str) -> PropertyOutcome:
    if not r.property_tests:
        return PropertyOutcome(SKIPPED, "no property tests registered")
    if outcomes is None:
        return PropertyOutcome(SKIPPED, reason)
    tests = [outcomes[n] for n in r.property_tests]
    failed = [t for t in tests if t.status == FAIL]
    if failed:
        return PropertyOutcome(FAIL, "; ".join(f"{t.node_id}: {t.detail}" for t in failed), tests)
    if all(t.status == PASS for t in tests):
        return PropertyOutcome(PASS, f"{len(tests)} node id(s) passed", tests)
    return PropertyOutcome(SKIPPED, "; ".join(
        f"{t.node_id}: {t.detail}" for t in tests if t.status != PASS), tests)


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
    root: str | Path | None = None,
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
) -> Report:
    """Check every registered result on the Lean and the Python side.

    Parameters
    ----------
    root : path, optional
        Repository root; default: :func:`~qkforms.verify.lean_project.find_root`.
    results : sequence of Result, optional
        The registry to check (default: :data:`qkforms.registry.RESULTS`).
    only : sequence of str
        Restrict the rows to these ids or groups (static checks still cover all).
    lean : {"auto", "require", "skip"}
        Whether to run ``lake`` (auto: when on ``PATH``).
    lean_timeout, lake_cache
        Timeout of each ``lake`` command; run ``lake exe cache get`` first.
    seed, sizes, id_sizes
        Seed and sizes of the exact checks (see :func:`~.python_side.parse_sizes`).
    exact_checks, property_tests : bool
        Run the exact checks / the property tests.

    Returns
    -------
    Report
        ``report.exit_status`` is 0 only when nothing failed.

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
    root = find_root() if root is None else Path(root).resolve()
    if not root.is_dir():
        raise QKFormsError(f"root {root} is not a directory")
    all_results = list(registry.RESULTS if results is None else results)
    rows_for = registry.select(only, all_results)
    from qkforms import __version__

    lean_scan = scan(root)
    static = static_checks(root, all_results, lean_scan)
    global_failures: list[str] = []

    lake_path = _lake.find_lake() if lean != "skip" else None
    build: _lake.LeanBuild | None = None
    if lean == "skip":
        reason = "not checked (--lean skip)"
    elif lake_path is None:
        reason = "not checked (no toolchain: `lake` not on PATH)"
        if lean == "require":
            global_failures.append("--lean require: `lake` is not on PATH, so nothing in "
                                   "Lean was built")
    else:
        reason = "not checked"
        decls = {d: r.lean_file or "" for r in all_results for d in r.lean}
        build = _lake.build_and_audit(lake_path, root, decls, timeout=lean_timeout,
                                      cache=lake_cache)
        if build.cache is not None and not build.cache.ok:
            global_failures.append(
                f"`lake exe cache get` failed (exit {build.cache.returncode})")
        if not build.build.ok:
            tail = " | ".join(build.build.output.strip().splitlines()[-3:])
            global_failures.append(f"`lake build` failed (exit {build.build.returncode}): {tail}")
        elif build.audit is not None and not build.audit.ok:
            tail = " | ".join(build.audit.output.strip().splitlines()[-3:])
            global_failures.append(
                f"axiom audit `lake env lean {AXIOMS_SCRIPT}` failed "
                f"(exit {build.audit.returncode}): {tail}")

    sizes = dict(sizes or {})
    id_sizes = dict(id_sizes or {})
    unknown = sorted(set(id_sizes) - {r.id for r in all_results})
    if unknown:
        raise QKFormsError(f"--size names unregistered ids: {', '.join(unknown)}")

    outcomes = None
    prop_reason = "skipped (--no-property-tests)"
    if property_tests:
        node_ids = [n for r in rows_for for n in r.property_tests]
        outcomes = run_property_tests(root, node_ids) if node_ids else {}

    rows = []
    for r in rows_for:
        problems = static_lean_problems(lean_scan, r) if r.lean_status == LEAN_FORMALIZED else []
        lean_out = _lean_outcome(r, problems, build, reason)
        if exact_checks:
            exact = run_exact(r.id, r.check, seed=seed, sizes=sizes, id_sizes=id_sizes.get(r.id))
        else:
            exact = ExactOutcome(SKIPPED, None, None, "skipped (--no-exact-checks)", 0.0)
        rows.append(Row(r, lean_out, exact, _property_outcome(r, outcomes, prop_reason)))

    toolchain = {
        "mode": lean,
        "lake": lake_path,
        "cache": _run_summary(build.cache) if build else None,
        "build": _run_summary(build.build) if build else None,
        "audit": _run_summary(build.audit) if build else None,
    }
    options = {
        "seed": seed,
        "sizes": sizes,
        "id_sizes": id_sizes,
        "only": list(only),
        "exact_checks": exact_checks,
        "property_tests": property_tests,
    }
    return Report(
        root=str(root),
        options=options,
        toolchain=toolchain,
        static=static,
        rows=rows,
        global_failures=global_failures,
        qkforms_version=__version__,
        generated_at=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


def run(args: argparse.Namespace) -> int:
    """Run ``qkforms verify`` with parsed arguments; return the exit status."""
    root = find_root() if args.root is None else Path(args.root).resolve()
    if args.write_axioms_script:
        path = write_axioms_script(root)
        print(f"wrote {path}")
        return 0
    sizes, id_sizes = parse_sizes(args.size)
    report = verify(
        root,
        only=args.only,
        lean=args.lean,
        lean_timeout=args.lean_timeout,
        lake_cache=args.lake_cache,
        seed=args.seed,
        sizes=sizes,
        id_sizes=id_sizes,
        exact_checks=args.exact_checks,
        property_tests=args.property_tests,
    )
    sys.stdout.write(render_table(report))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(report.to_json(), encoding="utf-8")
        print(f"wrote {args.json}")
    if args.markdown is not None:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(render_markdown(report), encoding="utf-8")
        print(f"wrote {args.markdown}")
    return report.exit_status
