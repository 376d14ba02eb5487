"""Running ``lake`` and reading what it says.

The bridge talks to the Lean toolchain through two commands, run in the
repository root: ``lake build`` (does every module compile?) and
``lake env lean lean/scripts/Axioms.lean`` (which axioms does each registered
declaration depend on?). The parsers here turn their output into a status per
declaration: ``built`` only when the module(s) declaring it built and it depends
on no axiom beyond ``propext``, ``Classical.choice`` and ``Quot.sound`` (a
``sorry`` shows up as the axiom ``sorryAx``).

**Per module.** When the whole-library ``lake build`` fails, every module of the
library is built on its own with ``lake build +QKForms.X`` (Lake's ``+`` marks a
module target), in import order; a module whose project imports did not all build
is not built (``not run``, naming the import that failed). The status of a module is
the exit status of its own build, and its first error lines are read from that
build's log. The log of the whole-library build is not enough on its own: Lake's
build monitor (``src/lake/Lake/Build/Run.lean`` of ``leanprover/lean4``,
``Monitor.reportJob``) prints a job only when it logged something or when it ran an
action of at least ``unpack`` (non-verbose mode), so a module that was up to date
(replayed silently) and a module that never ran because an import failed both leave
no line. The axiom audit then imports only the modules that built (a generated
script in a temporary directory), so one broken module does not take the audit of
the others with it.

An error line is a Lake log entry, ``error: <file>:<line>:<col>: <message>``
(``LogEntry.toString`` of ``src/lake/Lake/Util/Log.lean``; the file is relative to the
package, older Lake versions prefix ``./`` segments), followed by the message's
continuation lines.

Examples
--------
>>> out = '''lean/scripts/Axioms.lean:3:0: info: 'QKForms.a' depends on axioms: [propext,
...  Classical.choice, Quot.sound]
... 'QKForms.b'' does not depend on any axioms
... '''
>>> parse_axioms(out)
{'QKForms.a': ('propext', 'Classical.choice', 'Quot.sound'), "QKForms.b'": ()}
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from qkforms.verify.checkout import LIBRARY
from qkforms.verify.lean_project import ALLOWED_AXIOMS, AXIOMS_SCRIPT
from qkforms.verify.statuses import BUILT, FAILED, NOT_RUN

__all__ = [
    "LakeRun",
    "LeanModule",
    "ModuleBuild",
    "DeclAudit",
    "LeanBuild",
    "find_lake",
    "run_lake",
    "kill_group",
    "parse_axioms",
    "module_errors",
    "import_order",
    "build_and_audit",
]



@dataclass(frozen=True)
class LakeRun:
    """One ``lake`` invocation: the command, its exit status and merged output."""

    command: tuple[str, ...]
    returncode: int
    output: str
    seconds: float

    @property
    def ok(self) -> bool:
        """Whether the command exited with status 0."""
        return self.returncode == 0


def find_lake() -> str | None:
    """The ``lake`` executable on ``PATH``, or ``None``.

    Examples
    --------
    >>> find_lake() is None or find_lake().endswith("lake")
    True
    """
    return shutil.which("lake")


def run_lake(lake: str, args: Sequence[str], root: Path, timeout: float) -> LakeRun:
    """Run ``lake ARGS`` in ``root``; a timeout or a missing executable is a failed run.

    The process-group policy of every child process qkforms starts: ``lake`` runs in a
    session (process group) of its own, and on a timeout, Ctrl-C or any other way out
    of this function before it exited, the **whole group** is killed (``lake`` starts
    ``lean`` and compiler processes, which would otherwise live on) and reaped
    (``docs/files.md``, "Child processes").

    Examples
    --------
    >>> import sys, pathlib
    >>> run = run_lake(sys.executable, ["-c", "print('hi')"], pathlib.Path("."), 60)
    >>> (run.ok, run.output.strip())
    (True, 'hi')
    >>> slow = run_lake(sys.executable, ["-c", "import time; time.sleep(60)"],
    ...                 pathlib.Path("."), 0.5)
    >>> slow.ok, slow.output.strip()
    (False, '[qkforms] timed out after 0.5 s; its process group was killed')
    """
    command = (lake, *args)
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(
            command,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            env=os.environ.copy(),
            start_new_session=True,
        )
    except OSError as exc:
        return LakeRun(command, -1, f"[qkforms] could not run {lake}: {exc}",
                       time.perf_counter() - start)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, _ = proc.communicate()
        return LakeRun(command, -1, (out or "") + f"\n[qkforms] timed out after {timeout:g} s; "
                       "its process group was killed", time.perf_counter() - start)
    except BaseException:
        kill_group(proc)
        proc.communicate()
        raise
    finally:
        if proc.poll() is None:  # pragma: no cover - every path above waited
            kill_group(proc)
    # the leader exited: members of its group it left behind are killed too
    kill_group(proc)
    return LakeRun(command, proc.returncode, out, time.perf_counter() - start)


def kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill the process group led by ``proc`` (started with ``start_new_session``); reap it.

    Examples
    --------
    >>> import subprocess, sys
    >>> p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
    ...                      start_new_session=True)
    >>> kill_group(p); p.returncode
    -9
    """
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone already
    if proc.returncode is None:
        proc.wait()


_AXIOMS_RE = re.compile(
    r"'(?P<name>[^\s]+?)' (?:depends on axioms: \[(?P<axioms>[^\]]*)\]"
    r"|(?P<none>does not depend on any axioms))",
    re.DOTALL,
)


def parse_axioms(output: str) -> dict[str, tuple[str, ...]]:
    """Parse ``#print axioms`` output into ``{declaration: axioms}``.

    Handles lists wrapped over several lines, names with primes and a
    ``file:line:col: info:`` prefix or none.

    Examples
    --------
    >>> parse_axioms("'X.y' depends on axioms: [sorryAx]")
    {'X.y': ('sorryAx',)}
    """
    found: dict[str, tuple[str, ...]] = {}
    for m in _AXIOMS_RE.finditer(output):
        if m.group("none"):
            found[m.group("name")] = ()
        else:
            found[m.group("name")] = tuple(
                a.strip() for a in m.group("axioms").split(",") if a.strip()
            )
    return found


@dataclass(frozen=True)
class DeclAudit:
    """The Lean verdict on one declaration: status (``built``, ``failed``,
    ``not run``), its axioms (``None`` when not audited) and why."""

    name: str
    status: str
    axioms: tuple[str, ...] | None
    detail: str




#: how many lines of a module's first errors the report keeps
ERROR_LINES = 8

_LOG_ENTRY_RE = re.compile(r"^(?:error|warning|info|trace):\s")
_JOB_LINE_RE = re.compile(r"^\s*[\u2714\u26a0\u2716\u2139]\s*\[\d+/\d+\]")


@dataclass(frozen=True)
class LeanModule:
    """A module of the library: its name, its file and the project modules it imports."""

    name: str
    file: str
    imports: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModuleBuild:
    """The build of one module: ``built``, ``failed`` (with its first error lines) or
    ``not run`` (with the reason)."""

    module: str
    file: str
    status: str
    detail: str
    errors: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return {"module": self.module, "file": self.file, "status": self.status,
                "detail": self.detail, "errors": list(self.errors)}


def module_errors(output: str, file: str, limit: int = ERROR_LINES) -> tuple[str, ...]:
    """The first lines of the errors a ``lake build`` log reports in ``file``.

    Each ``error: FILE:L:C: ...`` entry (any number of leading ``./``) is kept with its
    continuation lines, up to ``limit`` lines in all; entries of other files, other
    levels, job lines (``✖ [k/n] Building ...``) and the closing failure list end an
    entry.

    Examples
    --------
    >>> log = '''✖ [5/9] Building QKForms.RankBalance (2.1s)
    ... error: ././lean/QKForms/RankBalance.lean:12:4: unsolved goals
    ... n : ℕ
    ... ⊢ n = n
    ... warning: lean/QKForms/RankBalance.lean:30:0: unused variable
    ... error: Lean exited with code 1
    ... Some required targets logged failures:
    ... - QKForms.RankBalance'''
    >>> module_errors(log, "lean/QKForms/RankBalance.lean")
    ('error: lean/QKForms/RankBalance.lean:12:4: unsolved goals', 'n : ℕ', '⊢ n = n')
    """
    entry = re.compile(r"^error:\s+(?:\./)*" + re.escape(file) + r":\d+:\d+")
    out: list[str] = []
    inside = False
    for line in output.splitlines():
        if entry.match(line):
            inside = True
            out.append(re.sub(r"^error:\s+(?:\./)*", "error: ", line))
        elif inside and not (_LOG_ENTRY_RE.match(line) or _JOB_LINE_RE.match(line)
                             or line.startswith("Some required")):
            out.append(line)
        else:
            inside = False
        if len(out) >= limit:
            break
    return tuple(out[:limit])


def import_order(modules: Sequence[LeanModule]) -> list[LeanModule]:
    """The modules with every module after the project modules it imports.

    Examples
    --------
    >>> mods = [LeanModule("A.c", "c", ("A.b",)), LeanModule("A.b", "b", ("A.a",)),
    ...         LeanModule("A.a", "a")]
    >>> [m.name for m in import_order(mods)]
    ['A.a', 'A.b', 'A.c']
    """
    by_name = {m.name: m for m in modules}
    done: dict[str, LeanModule] = {}
    visiting: set[str] = set()

    def visit(m: LeanModule) -> None:
        if m.name in done or m.name in visiting:  # a cycle is Lake's error, not ours
            return
        visiting.add(m.name)
        for dep in m.imports:
            if dep in by_name:
                visit(by_name[dep])
        visiting.discard(m.name)
        done[m.name] = m

    for m in sorted(modules, key=lambda m: m.name):
        visit(m)
    return list(done.values())


@dataclass
class LeanBuild:
    """The outcome of ``lake build`` (whole library, then per module if it failed) and of
    the axiom audit."""

    lake: str
    build: LakeRun
    audit: LakeRun | None
    cache: LakeRun | None = None
    declarations: dict[str, DeclAudit] = field(default_factory=dict)
    modules: dict[str, ModuleBuild] = field(default_factory=dict)
    module_runs: list[LakeRun] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Build and audit both ran cleanly and every declaration is ``built``."""
        return (
            self.build.ok
            and self.audit is not None
            and self.audit.ok
            and all(d.status == BUILT for d in self.declarations.values())
        )


def _build_modules(lake: str, root: Path, modules: Sequence[LeanModule], timeout: float,
                   full: LakeRun, runs: list[LakeRun]) -> dict[str, ModuleBuild]:
    """Status of every module: all ``built`` after a clean whole-library build, else each
    module built on its own (``lake build +MOD``) in import order."""
    if full.ok:
        return {m.name: ModuleBuild(m.name, m.file, BUILT, "built (`lake build` succeeded)")
                for m in import_order(modules)}
    out: dict[str, ModuleBuild] = {}
    for m in import_order(modules):
        blocked = [d for d in m.imports if d in out and out[d].status != BUILT]
        if blocked:
            out[m.name] = ModuleBuild(
                m.name, m.file, NOT_RUN,
                f"not built: it imports {', '.join(blocked)}, which did not build")
            continue
        run = run_lake(lake, ["build", f"+{m.name}"], root, timeout)
        runs.append(run)
        if run.ok:
            out[m.name] = ModuleBuild(m.name, m.file, BUILT, f"built (`lake build +{m.name}`)")
            continue
        errors = module_errors(run.output, m.file)
        if not errors:  # no error in its own file: show the end of the log
            errors = tuple(ln for ln in run.output.strip().splitlines()[-3:])
        out[m.name] = ModuleBuild(
            m.name, m.file, FAILED,
            f"`lake build +{m.name}` failed (exit {run.returncode}): "
            + (errors[0] if errors else "no output"), errors)
    return out


def _audit_script(modules: Sequence[str], decls: Sequence[str]) -> str:
    lines = [f"import {m}" for m in modules]
    lines += ["", "-- generated by qkforms verify: the audit of the modules that built", ""]
    lines += [f"#print axioms {d}" for d in decls]
    return "\n".join(lines) + "\n"


def _judge_axioms(name: str, axioms: dict[str, tuple[str, ...]], audit: LakeRun) -> DeclAudit:
    if name not in axioms:
        why = "no `#print axioms` output"
        if not audit.ok:
            why += f" (audit exited {audit.returncode}; unknown constant or stale script?)"
        return DeclAudit(name, FAILED, None, why)
    used = axioms[name]
    if "sorryAx" in used:
        return DeclAudit(name, FAILED, used, "depends on sorryAx (a `sorry` in the proof)")
    if not set(used) <= ALLOWED_AXIOMS:
        extra = ", ".join(sorted(set(used) - ALLOWED_AXIOMS))
        return DeclAudit(name, FAILED, used, f"depends on non-standard axioms: {extra}")
    return DeclAudit(name, BUILT, used, "built; axioms " + (", ".join(used) or "none"))


def build_and_audit(
    lake: str,
    root: Path,
    decls: Mapping[str, Sequence[str]],
    modules: Sequence[LeanModule] = (),
    *,
    timeout: float = 3 * 3600.0,
    cache: bool = False,
) -> LeanBuild:
    """Build the library (per module when the whole build fails) and audit the axioms.

    Parameters
    ----------
    lake : str
        The ``lake`` executable.
    root : Path
        The repository root (holding ``lakefile.lean``).
    decls : mapping
        Registered declaration -> the Lean files (relative to ``root``) declaring it.
    modules : sequence of LeanModule
        The modules of the library with their project imports (from the static scan).
    timeout : float
        Seconds allowed for each ``lake`` command.
    cache : bool
        Run ``lake exe cache get`` first (fetches Mathlib's prebuilt files).

    Examples
    --------
    >>> import sys, pathlib, tempfile  # a stand-in "lake" whose builds all fail
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> mods = [LeanModule("QKForms.A", "lean/QKForms/A.lean"),
    ...         LeanModule("QKForms.B", "lean/QKForms/B.lean", ("QKForms.A",))]
    >>> b = build_and_audit(sys.executable, root, {"A.x": ["lean/QKForms/A.lean"],
    ...                                            "B.y": ["lean/QKForms/B.lean"]}, mods)
    >>> (b.build.ok, b.modules["QKForms.B"].status, b.declarations["A.x"].status)
    (False, 'not run', 'failed')
    """
    cache_run = run_lake(lake, ["exe", "cache", "get"], root, timeout) if cache else None
    build = run_lake(lake, ["build"], root, timeout)
    result = LeanBuild(lake=lake, build=build, audit=None, cache=cache_run)
    result.modules = _build_modules(lake, root, modules, timeout, build, result.module_runs)
    module_of = {m.file: m.name for m in modules}
    auditable: list[str] = []
    for name, files in decls.items():
        mods = [result.modules[module_of[f]] for f in files if f in module_of]
        failed = [m for m in mods if m.status == FAILED]
        blocked = [m for m in mods if m.status == NOT_RUN]
        if failed:
            result.declarations[name] = DeclAudit(name, FAILED, None, "; ".join(
                f"module {m.module} failed to build"
                + (f": {m.errors[0]}" if m.errors else "") for m in failed))
        elif blocked:
            result.declarations[name] = DeclAudit(name, NOT_RUN, None, "; ".join(
                f"module {m.module} {m.detail}; axioms not audited" for m in blocked))
        elif not mods and not build.ok:
            result.declarations[name] = DeclAudit(
                name, FAILED, None,
                f"lake build failed (exit {build.returncode}) and no module of the library "
                f"declares {name}")
        else:
            auditable.append(name)
    if not auditable:
        return result
    if build.ok:
        audit = run_lake(lake, ["env", "lean", AXIOMS_SCRIPT], root, timeout)
    else:
        built = [m.name for m in import_order(modules)
                 if result.modules[m.name].status == BUILT and m.name != LIBRARY]
        with tempfile.TemporaryDirectory(prefix="qkforms-audit-") as tmp:
            script = Path(tmp) / "PartialAxioms.lean"
            script.write_text(_audit_script(built, auditable), encoding="utf-8")
            audit = run_lake(lake, ["env", "lean", str(script)], root, timeout)
    result.audit = audit
    axioms = parse_axioms(audit.output)
    for name in auditable:
        result.declarations[name] = _judge_axioms(name, axioms, audit)
    return result
