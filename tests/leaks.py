"""Finding the processes a test run started (by an environment tag), for the leak checks.

Every process inherits its parent's environment, so a tag set in the test process's
environment marks every process the tests start -- ``python -m qkforms`` subprocesses,
the survey's spawned workers, their resource trackers -- including orphans, which are no
longer descendants of the test process. ``tests/conftest.py`` checks the whole session
with one tag; ``tests/reliability/conftest.py`` checks each reliability test with its own.
"""

from __future__ import annotations

import os
import signal
import time

#: the environment variable holding the tag
TAG = "QKFORMS_TEST_TAG"


def tagged_processes(tag: str) -> list[int]:
    """Pids of the running processes (not zombies, not this one) with ``TAG=tag``."""
    needle = f"{TAG}={tag}".encode()
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:  # not Linux: nothing to check
        return []
    for entry in entries:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[-1].split()[0]
        except (OSError, IndexError):
            continue
        if needle in env.split(b"\0") and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def command_line(pid: int) -> str:
    """The command line of a process (for messages)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def leftover_processes(tag: str, timeout: float) -> list[str]:
    """Wait up to ``timeout`` s for the tagged processes to end; kill and describe the rest."""
    deadline = time.monotonic() + timeout
    left = tagged_processes(tag)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = tagged_processes(tag)
    described = [f"{pid}: {command_line(pid)}" for pid in left]
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return described
