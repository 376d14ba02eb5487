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


def _own_helpers() -> set[int]:
    """Helper processes that live as long as this process: multiprocessing's resource
    tracker (started once, on first use, and ended when this process exits)."""
    try:
        from multiprocessing import resource_tracker

        pid = getattr(resource_tracker._resource_tracker, "_pid", None)
    except (ImportError, AttributeError):
        return set()
    return {int(pid)} if pid else set()


def tagged_processes(tag: str) -> list[int]:
    """Pids of the running processes with ``TAG=tag``: not zombies, not this process and
    not its own resource tracker (see :func:`_own_helpers`)."""
    needle = f"{TAG}={tag}".encode()
    own = _own_helpers()
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:  # not Linux: nothing to check
        return []
    for entry in entries:
        if not entry.isdigit() or int(entry) == os.getpid() or int(entry) in own:
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
