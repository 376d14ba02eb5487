#!/usr/bin/env python3
"""Mutation testing of the mathematical core: do the tests catch small plausible bugs?

Each *mutant* is the package with one small source edit of the kind a person makes by
accident — ``<`` for ``<=``, ``+`` for ``-``, ``max`` for ``min``, ``and`` for ``or``, a
dropped minus sign, an off-by-one constant, ``True`` for ``False``. The script runs the
tests relevant to the mutated module against every mutant; a mutant is *killed* when a
test fails (or the run times out) and *survives* when all pass. The kill rate is the
share killed; each survivor is either a gap in the tests or an equivalent edit (one that
cannot change behaviour), and is listed for a person to judge.

Usage (from the repository root, in the test environment)::

    python scripts/mutation.py                       # every group, full campaign
    python scripts/mutation.py --groups core --max-per-module 40 --seed 1
    python scripts/mutation.py --list --groups gram  # print the mutants, run nothing

Groups (module -> the tests run against its mutants): ``core`` (``parts``,
``signature``, ``profile``, ``pairing``, ``theta``, ``faces``, ``arithmetic``, ``head``,
``_validate``), ``exact`` (``qkforms/exact/``), ``gram`` (``qkforms/gram.py``), ``stats``
(``qkforms/stats/`` but its command-line, executor and output modules); each runs its
module's doctests too. Mutants are generated from the source with exact
token positions (comments, docstrings and line numbers stay as they are). Not mutated:
docstrings and other strings, type annotations, ``raise`` statements (their messages),
``assert`` statements (internal invariants), ``__all__``, and lines marked
``# pragma: no mutate`` (an equivalent edit, justified in the comment).

How it runs: the repository is copied to a temporary directory (one copy per worker);
a worker process imports the heavy third-party libraries once and then forks one child
per mutant, which writes the mutated module into its copy and runs ``pytest -x`` there
in process (no byte-code cache, so a stale ``.pyc`` can never be used). A run exceeding
``--timeout-factor`` times the unmutated run (plus 10 s) counts as killed (timeout).
Results go to ``--out`` (default ``mutation-report/``): ``mutants.json`` and
``report.md`` (kill rate per module and group, and every survivor). Exit status 1 when
the overall kill rate is below ``--target`` (default 0.90).

The machine this runs on is shared: the default is one worker, tests restricted to the
relevant files, ``OMP_NUM_THREADS=1``; ``--time-budget`` stops starting new mutants
after that many seconds (the report says how many ran).
"""

from __future__ import annotations

import argparse
import ast
import io
import itertools
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import tokenize
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = "python/qkforms"

#: group -> (modules relative to the package, tests run against their mutants)
GROUPS: dict[str, tuple[list[str], list[str]]] = {
    "core": (
        ["form_parts.py", "form_signature.py", "profile_map.py", "pairing.py",
         "theta_family.py", "faces.py", "arithmetic.py", "head.py", "_validate.py"],
        ["tests/core/test_core.py", "tests/core/test_gram.py", "tests/test_error_contract.py",
         "tests/survey/test_head_statistics.py",
         "tests/reliability/test_reliability_scale.py"],  # input contract, extreme scales
    ),
    "exact": (
        ["exact/constructions.py", "exact/faces.py", "exact/orthogonal.py", "exact/form_parts.py",
         "exact/polynomial.py", "exact/profile_map.py", "exact/rational.py",
         "exact/form_signature.py", "exact/balls.py", "exact/enclosure.py",
         "exact/verified_spectrum.py"],
        # the checks run on the mirror; the certified tests on the ball arithmetic and the
        # verified spectra (docs/certified.md)
        ["tests/exact/test_exact.py", "tests/checks/test_checks.py",
         "tests/exact/test_certified.py", "tests/test_properties_certified.py"],
    ),
    "gram": (
        ["gram.py", "gram_factor.py", "live_pair.py"],  # the engine, split in three (#26)
        ["tests/core/test_gram.py", "tests/core/test_core.py",
         "tests/survey/test_head_statistics.py"],
    ),
    "stats": (
        ["stats/baseline.py", "stats/bootstrap.py", "stats/cells.py", "stats/fits.py",
         "stats/layer.py", *(f"stats/observation_tables/{m}.py" for m in (
             "__init__", "accumulation", "balance", "bands", "by_layer", "certified",
             "decisions", "families", "head_stats", "inputs", "pairing",
             "proportional_lobes", "spectral_geometry", "spectral_types",
             "symmetric_energy", "tasks")),
         "stats/training.py", "stats/spectral.py", "stats/synthetic_rows.py",
         "stats/table.py", "stats/types.py"],
        ["tests/stats/test_types_bootstrap_table.py", "tests/stats/test_fits.py",
         "tests/stats/observation_tables/test_observations.py", "tests/stats/test_pandas_input.py",
         "tests/stats/observation_tables/test_certified_tables.py",
         "tests/stats/test_samples_rows_tasks.py", "tests/stats/test_training.py"],
    ),
}

COMPARE_SWAP = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="),
                ast.GtE: (">=", ">"), ast.Eq: ("==", "!="), ast.NotEq: ("!=", "==")}
BINOP_SWAP = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "/"),
              ast.Div: ("/", "*"), ast.FloorDiv: ("//", "/"), ast.Pow: ("**", "*"),
              ast.MatMult: ("@", "*")}
NAME_SWAP = {"max": "min", "min": "max", "maximum": "minimum", "minimum": "maximum",
             "argmax": "argmin", "argmin": "argmax", "any": "all", "all": "any",
             "amax": "amin", "amin": "amax", "nanmax": "nanmin", "nanmin": "nanmax"}
NO_MUTATE = "pragma: no mutate"


@dataclass
class Mutant:
    """One source edit: replace ``old`` by ``new`` at (line, byte column) of ``module``."""

    module: str
    line: int
    col: int
    old: str
    new: str
    kind: str
    status: str = "pending"  # killed | survived | timeout | error | pending
    seconds: float = 0.0
    source_line: str = field(default="", repr=False)

    @property
    def key(self) -> str:
        return f"{self.module}:{self.line}:{self.col}:{self.old}->{self.new}"


def anchors(mutants: list[Mutant]) -> dict[tuple[str, str, str, str, int], Mutant]:
    """Identities that survive edits elsewhere in a file: the line's text (not its number),
    the edit, and which occurrence of that edit on such a line it is."""
    out: dict[tuple[str, str, str, str, int], Mutant] = {}
    for m in sorted(mutants, key=lambda m: (m.module, m.line, m.col)):
        k = 0
        while (m.module, m.source_line, m.old, m.new, k) in out:
            k += 1
        out[(m.module, m.source_line, m.old, m.new, k)] = m
    return out


# --------------------------------------------------------------------------- generation


def _excluded_spans(tree: ast.Module) -> list[tuple[int, int]]:
    """Line ranges whose nodes are never mutated (raise, assert, __all__)."""
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise | ast.Assert):
            spans.append((node.lineno, node.end_lineno or node.lineno))
        elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id in ("__all__", "__slots__")
                for t in node.targets):
            spans.append((node.lineno, node.end_lineno or node.lineno))
    return spans


def _annotation_nodes(tree: ast.Module) -> set[int]:
    """ids of every node inside a type annotation."""
    out: set[int] = set()

    def mark(node: ast.AST | None) -> None:
        if node is not None:
            out.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            mark(node.returns)
            for a in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs,
                      node.args.vararg, node.args.kwarg]:
                if a is not None:
                    mark(a.annotation)
        elif isinstance(node, ast.AnnAssign):
            mark(node.annotation)
    return out


def _tokens(source: str) -> list[tokenize.TokenInfo]:
    return list(tokenize.generate_tokens(io.StringIO(source).readline))


def _char_to_byte(lines: list[str], line: int, col: int) -> int:
    return len(lines[line - 1][:col].encode("utf-8"))


def _op_between(toks: list[tokenize.TokenInfo], lines: list[str], start: tuple[int, int],
                end: tuple[int, int], text: str) -> tuple[int, int] | None:
    """(line, byte col) of the first token ``text`` between two byte positions."""
    for tok in toks:
        if tok.string != text or tok.type not in (tokenize.OP, tokenize.NAME):
            continue
        pos = (tok.start[0], _char_to_byte(lines, tok.start[0], tok.start[1]))
        if start <= pos and pos < end:
            return pos
    return None


def _end(node: ast.AST) -> tuple[int, int]:
    return (node.end_lineno or 0, node.end_col_offset or 0)


def _start(node: ast.AST) -> tuple[int, int]:
    return (node.lineno, node.col_offset)  # type: ignore[attr-defined]


def generate(module: str, source: str) -> list[Mutant]:
    """Every mutant of one module, in source order."""
    tree = ast.parse(source)
    lines = source.splitlines()
    toks = _tokens(source)
    skip_lines = {i + 1 for i, text in enumerate(lines) if NO_MUTATE in text}
    spans = _excluded_spans(tree)
    annotations = _annotation_nodes(tree)
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef)
                  and n.body and isinstance(n.body[0], ast.Expr)
                  and isinstance(n.body[0].value, ast.Constant)}
    out: list[Mutant] = []

    def add(pos: tuple[int, int] | None, old: str, new: str, kind: str) -> None:
        if pos is None:
            return
        line, col = pos
        if line in skip_lines or any(a <= line <= b for a, b in spans):
            return
        out.append(Mutant(module, line, col, old, new, kind,
                          source_line=lines[line - 1].strip()))

    for node in ast.walk(tree):
        if id(node) in annotations or id(node) in docstrings:
            continue
        if isinstance(node, ast.Compare):
            left = node.left
            for op, right in zip(node.ops, node.comparators, strict=True):
                swap = COMPARE_SWAP.get(type(op))
                if swap:
                    add(_op_between(toks, lines, _end(left), _start(right), swap[0]),
                        swap[0], swap[1], "compare")
                left = right
        elif isinstance(node, ast.BinOp | ast.AugAssign):
            swap = BINOP_SWAP.get(type(node.op))
            if swap:
                a, b = ((node.left, node.right) if isinstance(node, ast.BinOp)
                        else (node.target, node.value))
                old = swap[0] if isinstance(node, ast.BinOp) else swap[0] + "="
                new = swap[1] if isinstance(node, ast.BinOp) else swap[1] + "="
                add(_op_between(toks, lines, _end(a), _start(b), old), old, new, "arithmetic")
        elif isinstance(node, ast.BoolOp):
            old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            add(_op_between(toks, lines, _end(node.values[0]), _start(node.values[1]), old),
                old, new, "boolean")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.Not):
            old = "-" if isinstance(node.op, ast.USub) else "not "
            line, col = _start(node)
            text = lines[line - 1].encode("utf-8")[col:col + len(old)].decode("utf-8", "replace")
            if text == old:
                add((line, col), old, "", "sign" if old == "-" else "boolean")
        elif isinstance(node, ast.Constant) and type(node.value) in (bool, int, float):
            line, col = _start(node)
            raw = lines[line - 1].encode("utf-8")[col:node.end_col_offset].decode("utf-8")
            if node.end_lineno != line:
                continue
            if isinstance(node.value, bool):
                add((line, col), raw, str(not node.value), "constant")
            elif isinstance(node.value, int):
                add((line, col), raw, str(node.value + 1), "constant")
            elif node.value in (0.0, 0.5, 1.0, 2.0):
                add((line, col), raw, {0.0: "1.0", 0.5: "1.0", 1.0: "0.5", 2.0: "1.0"}[
                    node.value], "constant")
        elif isinstance(node, ast.Attribute | ast.Name):
            name = node.attr if isinstance(node, ast.Attribute) else node.id
            if name in NAME_SWAP and isinstance(node.ctx, ast.Load):
                line, end = _end(node)
                add((line, end - len(name.encode("utf-8"))), name, NAME_SWAP[name], "function")
    out.sort(key=lambda m: (m.line, m.col, m.old, m.new))
    return out


def apply(source: str, m: Mutant) -> str:
    lines = source.splitlines(keepends=True)
    raw = lines[m.line - 1].encode("utf-8")
    old = m.old.encode("utf-8")
    assert raw[m.col:m.col + len(old)] == old, (m.key, raw[m.col:m.col + len(old)])
    lines[m.line - 1] = (raw[:m.col] + m.new.encode("utf-8") + raw[m.col + len(old):]).decode(
        "utf-8")
    mutated = "".join(lines)
    ast.parse(mutated)  # every mutant is valid Python
    return mutated


# --------------------------------------------------------------------------- running

PRELOAD = ("numpy", "scipy", "scipy.stats", "scipy.special", "scipy.optimize", "scipy.linalg",
           "sympy", "flint", "mpmath", "hypothesis", "pytest", "packaging.requirements",
           "importlib.metadata")


def _copy_tree(dst: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".lake", "_build", "*.egg-info",
                                    ".git", "mutation-report", ".hypothesis")
    for name in ("python", "tests", "docs", "conftest.py", "pyproject.toml", "README.md"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dst / name, ignore=ignore)
        elif src.exists():
            shutil.copy2(src, dst / name)


def _child_run(copy: Path, tests: list[str], module_path: str) -> None:
    """Runs in a forked child: pytest in process against the copy; exits with its code."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.chdir(copy)
    sys.path.insert(0, str(copy / "python"))
    if module_path == "--qkforms-location-check":
        import qkforms

        os._exit(0 if Path(qkforms.__file__).resolve().is_relative_to(copy.resolve()) else 1)
    import pytest

    code = pytest.main(["-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                        "--doctest-modules", "--strict-markers",
                        *tests, module_path])
    os._exit(int(code))


def run_once(copy: Path, tests: list[str], module_path: str, timeout: float) -> tuple[str, float]:
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            _child_run(copy, tests, module_path)
        finally:
            os._exit(70)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        elapsed = time.monotonic() - start
        if done:
            code = os.waitstatus_to_exitcode(status)
            if code == 0:
                return "survived", elapsed
            if code in (1, 2, 3) or code < 0:
                return "killed", elapsed
            return "error", elapsed  # 4 usage error, 5 no tests, 70 crash of the runner
        if elapsed > timeout:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout", elapsed
        time.sleep(0.05)


def worker(copy: Path, jobs: list[tuple[Mutant, list[str]]], deadline: float,
           timeouts: dict[str, float]) -> Iterator[Mutant]:
    """Run mutants one after another in ``copy`` (the parent process of the forks)."""
    for m, tests in jobs:
        if time.monotonic() > deadline:
            return
        path = copy / PKG / m.module
        original = path.read_text(encoding="utf-8")
        path.write_text(apply(original, m), encoding="utf-8")
        try:
            m.status, m.seconds = run_once(copy, tests, f"{PKG}/{m.module}",
                                           timeouts[m.module])
        finally:
            path.write_text(original, encoding="utf-8")
        yield m


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--groups", nargs="+", default=list(GROUPS), choices=list(GROUPS))
    ap.add_argument("--modules", nargs="+", help="only these modules (e.g. theta_family.py)")
    ap.add_argument("--max-per-module", type=int, default=0,
                    help="sample at most this many mutants per module (0: all)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--timeout-factor", type=float, default=4.0)
    ap.add_argument("--time-budget", type=float, default=0.0,
                    help="seconds after which no new mutant starts (0: no limit)")
    ap.add_argument("--target", type=float, default=0.90)
    ap.add_argument("--out", type=Path, default=ROOT / "mutation-report")
    ap.add_argument("--list", action="store_true", help="print the mutants and stop")
    ap.add_argument("--rerun", type=Path, metavar="MUTANTS_JSON",
                    help="run only the survivors of an earlier report (its mutants.json)")
    args = ap.parse_args(argv)

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    sys.dont_write_bytecode = True
    rng = random.Random(args.seed)
    per_module: list[list[tuple[Mutant, list[str]]]] = []
    generated: dict[str, int] = {}
    group_of: dict[str, str] = {}
    for group in args.groups:
        modules, tests = GROUPS[group]
        for module in modules:
            if args.modules and Path(module).name not in args.modules and module not in \
                    args.modules:
                continue
            mutants = generate(module, (ROOT / PKG / module).read_text(encoding="utf-8"))
            generated[module] = len(mutants)
            group_of[module] = group
            if args.rerun:
                earlier = anchors([Mutant(**m) for m in json.loads(args.rerun.read_text())
                                   if m["module"] == module])
                wanted = {a for a, m in earlier.items() if m.status == "survived"}
                now = anchors(mutants)
                mutants = [m for a, m in now.items() if a in wanted]
                if len(mutants) < len(wanted):
                    print(f"{module}: {len(wanted) - len(mutants)} earlier survivor(s) are no "
                          "longer in the source")
            elif args.max_per_module and len(mutants) > args.max_per_module:
                mutants = sorted(rng.sample(mutants, args.max_per_module),
                                 key=lambda m: (m.line, m.col))
            per_module.append([(m, tests) for m in mutants])
    # round robin over the modules: a time budget that stops the run early leaves every
    # module sampled, not the last ones untouched
    plan = [job for row in itertools.zip_longest(*per_module) for job in row if job is not None]
    if args.list:
        for m, _ in plan:
            print(f"{m.module}:{m.line}: {m.old!r} -> {m.new!r} [{m.kind}]  {m.source_line}")
        print(f"{len(plan)} mutants ({sum(generated.values())} generated)")
        return 0

    for name in PRELOAD:  # once, before forking: the children share them
        try:
            __import__(name)
        except ImportError:
            pass
    assert "qkforms" not in sys.modules, "the parent must not import the package under test"
    started = time.monotonic()
    deadline = started + args.time_budget if args.time_budget else float("inf")
    workdirs = [Path(tempfile.mkdtemp(prefix=f"qkforms-mutation-{i}-"))
                for i in range(args.workers)]
    try:
        for d in workdirs:
            _copy_tree(d)
            if run_once(d, [], "--qkforms-location-check", 60.0)[0] != "survived":
                print(f"the package imported in {d} is not the copy under test")
                return 2
        # the unmutated run: must pass, and sets each module's timeout
        timeouts: dict[str, float] = {}
        for module in group_of:
            tests = GROUPS[group_of[module]][1]
            status, seconds = run_once(workdirs[0], tests, f"{PKG}/{module}", 1800.0)
            if status != "survived":
                print(f"unmutated run of {module} does not pass ({status}); fix that first")
                return 2
            timeouts[module] = args.timeout_factor * seconds + 10.0
            print(f"baseline {module}: {seconds:.1f} s", flush=True)
        results = run_plan(plan, workdirs, deadline, timeouts)
    finally:
        for d in workdirs:
            shutil.rmtree(d, ignore_errors=True)
    return report(results, plan, generated, group_of, args, time.monotonic() - started)


def run_plan(plan: list[tuple[Mutant, list[str]]], workdirs: list[Path], deadline: float,
             timeouts: dict[str, float]) -> list[Mutant]:
    """Split the plan over the workers (one forked process per worker copy)."""
    if len(workdirs) == 1:
        out = []
        for i, m in enumerate(worker(workdirs[0], plan, deadline, timeouts), 1):
            print(f"[{i}/{len(plan)}] {m.status:8s} {m.module}:{m.line} "
                  f"{m.old!r}->{m.new!r} ({m.seconds:.1f} s)", flush=True)
            out.append(m)
        return out
    # several workers: each is a forked process writing its results as JSON lines
    chunks = [plan[i::len(workdirs)] for i in range(len(workdirs))]
    pids, files = [], []
    for copy, chunk in zip(workdirs, chunks, strict=True):
        path = copy / "results.jsonl"
        files.append(path)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - a worker
            with path.open("w") as fh:
                for m in worker(copy, chunk, deadline, timeouts):
                    fh.write(json.dumps(asdict(m)) + "\n")
                    fh.flush()
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    out = []
    for path in files:
        for line in path.read_text().splitlines():
            out.append(Mutant(**json.loads(line)))
    return out


def report(results: list[Mutant], plan: list[tuple[Mutant, list[str]]],
           generated: dict[str, int], group_of: dict[str, str], args: argparse.Namespace,
           seconds: float) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "mutants.json").write_text(json.dumps([asdict(m) for m in results], indent=1))
    lines = ["# Mutation testing report", "",
             f"{len(results)} of {len(plan)} planned mutants ran in {seconds / 60:.1f} min "
             f"(generated: {sum(generated.values())}; sample: "
             f"{args.max_per_module or 'all'} per module, seed {args.seed}).", "",
             "| module | group | generated | ran | killed | timeout | survived | error | "
             "kill rate |", "|---|---|---|---|---|---|---|---|---|"]
    total_ran = total_dead = 0
    for module, group in group_of.items():
        ms = [m for m in results if m.module == module]
        k = sum(m.status == "killed" for m in ms)
        t = sum(m.status == "timeout" for m in ms)
        s = sum(m.status == "survived" for m in ms)
        e = sum(m.status == "error" for m in ms)
        ran = k + t + s
        total_ran += ran
        total_dead += k + t
        rate = f"{(k + t) / ran:.1%}" if ran else "—"
        lines.append(f"| {module} | {group} | {generated[module]} | {len(ms)} | {k} | {t} | "
                     f"{s} | {e} | {rate} |")
    overall = total_dead / total_ran if total_ran else 0.0
    lines += ["", f"**Overall kill rate: {overall:.1%}** ({total_dead}/{total_ran}; "
              f"target {args.target:.0%}).", "", "## Survivors", ""]
    for m in results:
        if m.status == "survived":
            lines.append(f"- `{m.module}:{m.line}` `{m.old}` → `{m.new or '(removed)'}` "
                         f"({m.kind}): `{m.source_line}`")
    errors = [m for m in results if m.status == "error"]
    if errors:
        lines += ["", "## Errors (the runner, not the tests)", ""]
        lines += [f"- `{m.key}`" for m in errors]
    text = "\n".join(lines) + "\n"
    (args.out / "report.md").write_text(text)
    print(text)
    return 0 if overall >= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
