"""Helpers of the reliability tests: tagged processes, CLI subprocesses, error checks."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from leaks import TAG, tagged_processes

__all__ = ["ROOT", "TAG", "assert_one_line_error", "cli_env", "files_under", "kill_started",
           "run_cli", "start_cli", "tagged_processes", "temporaries", "wait_until"]

ROOT = Path(__file__).resolve().parents[2]


def wait_until(predicate: Callable[[], object], timeout: float, what: str,
               interval: float = 0.05) -> None:
    """Poll ``predicate`` until true; fail after ``timeout`` seconds naming ``what``."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def cli_env(**extra: str) -> dict[str, str]:
    """The environment of a ``python -m qkforms`` subprocess (the tag is inherited)."""
    env = {**os.environ, **extra}
    env["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_cli(args: Sequence[str], *, timeout: float = 600,
            **extra: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m qkforms ARGS`` to completion (a hang fails after ``timeout``)."""
    return subprocess.run([sys.executable, "-m", "qkforms", *args], env=cli_env(**extra),
                          capture_output=True, text=True, timeout=timeout, check=False)


def start_cli(args: Sequence[str], **extra: str) -> subprocess.Popen[str]:
    """Start ``python -m qkforms ARGS`` in its own session (so signals reach its group)."""
    return subprocess.Popen([sys.executable, "-m", "qkforms", *args], env=cli_env(**extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def kill_started(proc: subprocess.Popen[str], ready: Callable[[], object], what: str,
                 *, timeout: float = 240) -> None:
    """Wait until ``ready()`` holds, then ``kill -9`` the started CLI and reap it.

    The process is killed (and its pipes closed) on every path, so a failed wait leaves
    nothing running; the caller checks what the kill left behind.
    """
    try:
        wait_until(ready, timeout, what)
        os.kill(proc.pid, 9)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
        if proc.stdout is not None:
            proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()
    assert proc.returncode == -9


def assert_one_line_error(result: subprocess.CompletedProcess[str] | tuple[int, str],
                          *needles: str, status: int = 1) -> str:
    """The command failed with ``status`` and exactly one stderr line holding ``needles``."""
    code, err = (result.returncode, result.stderr) if not isinstance(result, tuple) else result
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == status, (code, err)
    assert "Traceback" not in err, err
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def files_under(path: Path) -> list[str]:
    """Every entry below ``path`` (relative, sorted), links not followed."""
    out = []
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            out.append(os.path.relpath(os.path.join(dirpath, name), path))
    return sorted(out)


def temporaries(path: Path) -> list[str]:
    """The temporary files of interrupted writes below ``path``."""
    return [p for p in files_under(path) if ".tmp-" in os.path.basename(p)]
