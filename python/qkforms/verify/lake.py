"""Running ``lake`` and reading what it says.

The bridge talks to the Lean toolchain through two commands, run in the
repository root: ``lake build`` (does every module compile?) and
``lake env lean lean/scripts/Axioms.lean`` (which axioms does each registered
declaration depend on?). The parsers here turn their output into a status per
declaration: ``built`` only when the build succeeded and the declaration depends
on no axiom beyond ``propext``, ``Classical.choice`` and ``Quot.sound`` (a
``sorry`` shows up as the axiom ``sorryAx``).

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
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from qkforms.verify.lean_project import ALLOWED_AXIOMS, AXIOMS_SCRIPT

__all__ = [
    "LakeRun",
    "DeclAudit",
    "LeanBuild",
    "find_lake",
    "run_lake",
    "kill_group",
    "parse_axioms",
    "failed_build_files",
    "build_and_audit",
]

BUILT = "built"
FAILED = "failed"
NOT_RUN = "not run"


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


_ERROR_FILE_RE = re.compile(r"(?:\./)*(?P<path>lean/[^\s:]+\.lean):\d+:\d+:")
_FAILED_MODULE_RES = (
    re.compile(r"^\s*✖\s*\[\d+/\d+\]\s*(?:Building|Compiling)\s+(?P<mod>[\w.']+)", re.MULTILINE),
    re.compile(r"^\s*-\s+(?P<mod>[\w.']+)\s*$", re.MULTILINE),
)


def failed_build_files(output: str) -> set[str]:
    """Files under ``lean/`` that a ``lake build`` log reports errors in.

    Reads ``error: lean/X.lean:l:c: ...`` lines (with or without ``./`` prefixes),
    ``✖ [k/n] Building Mod`` lines and the ``- Mod`` list after "Some required
    builds logged failures"; a module ``QKForms.X`` maps to ``lean/QKForms/X.lean``.

    Examples
    --------
    >>> log = '''✖ [5/9] Building QKForms.RankBalance
    ... error: ././././lean/QKForms/RankBalance.lean:12:4: unsolved goals
    ... error: build failed'''
    >>> sorted(failed_build_files(log))
    ['lean/QKForms/RankBalance.lean']
    """
    files: set[str] = set()
    for line in output.splitlines():
        if "error" in line:
            m = _ERROR_FILE_RE.search(line)
            if m:
                files.add(m.group("path"))
    for rx in _FAILED_MODULE_RES:
        for m in rx.finditer(output):
            mod = m.group("mod")
            if mod.split(".", 1)[0] == "QKForms":
                files.add("lean/" + mod.replace(".", "/") + ".lean")
    return files


@dataclass(frozen=True)
class DeclAudit:
    """The Lean verdict on one declaration: status (``built``, ``failed``,
    ``not run``), its axioms (``None`` when not audited) and why."""

    name: str
    status: str
    axioms: tuple[str, ...] | None
    detail: str


@dataclass
class LeanBuild:
    """The outcome of ``lake build`` and of the axiom audit."""

    lake: str
    build: LakeRun
    audit: LakeRun | None
    cache: LakeRun | None = None
    declarations: dict[str, DeclAudit] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Build and audit both ran cleanly and every declaration is ``built``."""
        return (
            self.build.ok
            and self.audit is not None
            and self.audit.ok
            and all(d.status == BUILT for d in self.declarations.values())
        )


def build_and_audit(
    lake: str,
    root: Path,
    decls: dict[str, str],
    *,
    timeout: float = 3 * 3600.0,
    cache: bool = False,
) -> LeanBuild:
    """Run ``lake build`` and the axiom audit; judge each registered declaration.

    Parameters
    ----------
    lake : str
        The ``lake`` executable.
    root : Path
        The repository root (holding ``lakefile.lean``).
    decls : dict
        Registered declaration -> its Lean file (relative to ``root``).
    timeout : float
        Seconds allowed for each ``lake`` command.
    cache : bool
        Run ``lake exe cache get`` first (fetches Mathlib's prebuilt files).

    Examples
    --------
    >>> import sys, pathlib, tempfile  # a stand-in "lake" whose build fails
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> b = build_and_audit(sys.executable, root, {"A.x": "lean/QKForms/A.lean"})
    >>> (b.build.ok, b.declarations["A.x"].status)
    (False, 'failed')
    """
    cache_run = run_lake(lake, ["exe", "cache", "get"], root, timeout) if cache else None
    build = run_lake(lake, ["build"], root, timeout)
    result = LeanBuild(lake=lake, build=build, audit=None, cache=cache_run)
    if not build.ok:
        bad = failed_build_files(build.output)
        for name, path in decls.items():
            if path in bad or not bad:
                where = f"errors in {path}" if path in bad else "no file named in the log"
                result.declarations[name] = DeclAudit(
                    name, FAILED, None, f"lake build failed ({where}; exit {build.returncode})"
                )
            else:
                result.declarations[name] = DeclAudit(
                    name, NOT_RUN, None,
                    f"lake build failed in {', '.join(sorted(bad))}; axioms not audited",
                )
        return result
    audit = run_lake(lake, ["env", "lean", AXIOMS_SCRIPT], root, timeout)
    result.audit = audit
    axioms = parse_axioms(audit.output)
    for name in decls:
        if name not in axioms:
            why = "no `#print axioms` output"
            if not audit.ok:
                why += f" (audit exited {audit.returncode}; unknown constant or stale script?)"
            result.declarations[name] = DeclAudit(name, FAILED, None, why)
            continue
        used = axioms[name]
        if "sorryAx" in used:
            result.declarations[name] = DeclAudit(
                name, FAILED, used, "depends on sorryAx (a `sorry` in the proof)"
            )
        elif not set(used) <= ALLOWED_AXIOMS:
            extra = ", ".join(sorted(set(used) - ALLOWED_AXIOMS))
            result.declarations[name] = DeclAudit(
                name, FAILED, used, f"depends on non-standard axioms: {extra}"
            )
        else:
            result.declarations[name] = DeclAudit(
                name, BUILT, used, "built; axioms " + (", ".join(used) or "none")
            )
    return result
