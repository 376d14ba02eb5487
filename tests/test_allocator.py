"""The survey processes' allocator policy (qkforms.allocator): freed memory is reused."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# a worker thread allocates, fills and frees a 64 MiB array per "layer", as the survey's
# threads do; the minor page faults of the later layers are counted
LAYERS = """
import json, resource, sys, threading
import numpy as np
from qkforms.allocator import keep_freed_memory

took = keep_freed_memory() if sys.argv[1] == "policy" else None
faults = []

def layers():
    for _ in range(8):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        a = np.empty(8 * 2**20)
        a.fill(1.0)
        del a
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)

t = threading.Thread(target=layers)
t.start()
t.join()
print(json.dumps({"took": took, "later": sum(faults[2:])}))
"""


def _layers(mode: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python") + os.pathsep
           + os.environ.get("PYTHONPATH", "")}
    for key in [k for k in env if k.startswith("MALLOC_") or k == "GLIBC_TUNABLES"]:
        del env[key]
    out = subprocess.run([sys.executable, "-c", LAYERS, mode], capture_output=True,
                         text=True, env=env, check=True).stdout
    return dict(json.loads(out))


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the policy is glibc's mallopt")
def test_keep_freed_memory_reuses_the_freed_blocks_of_a_thread() -> None:
    plain, policy = _layers("plain"), _layers("policy")
    assert policy["took"] is True
    # without the policy every layer faults its 64 MiB in again (4 KiB or 2 MiB pages);
    # with it the freed block is reused: no page of the later layers is new
    assert int(plain["later"]) >= 6 * 16, plain  # >= half a fault per 2 MiB page
    assert int(policy["later"]) < int(plain["later"]) // 4, (plain, policy)


def test_cli_sets_the_policy_only_for_its_own_survey_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import qkforms.allocator as allocator
    from qkforms import cli

    calls: list[int] = []
    monkeypatch.setattr(allocator, "keep_freed_memory", lambda: calls.append(1) or True)
    monkeypatch.setattr(sys, "argv", ["qkforms", "survey", "--help"])
    with pytest.raises(SystemExit):
        cli.main()  # the program itself: the policy is set
    assert calls == [1]
    with pytest.raises(SystemExit):
        cli.main(["survey", "--help"])  # called with argv (a host program, a test): not
    assert calls == [1]


def test_survey_workers_set_the_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    import signal

    import qkforms.allocator as allocator
    from qkforms.survey import parallel

    calls: list[str] = []
    monkeypatch.setattr(allocator, "keep_freed_memory", lambda: calls.append("policy") or True)
    monkeypatch.setattr(parallel, "die_with_parent", lambda pid: calls.append("parent"))
    monkeypatch.setattr(signal, "signal", lambda *a: calls.append("sigint"))
    parallel._worker_init(os.getpid())
    assert calls == ["policy", "sigint", "parent"]


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_release_freed_memory_returns_free_pages() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python") + os.pathsep
           + os.environ.get("PYTHONPATH", "")}
    script = """
import json
import numpy as np
from qkforms.allocator import keep_freed_memory, release_freed_memory

def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4
keep_freed_memory()
a = np.ones(16 * 2**20)          # 128 MiB from the one heap
held = rss_kib()
del a
kept = rss_kib()                   # still resident: kept for reuse
release_freed_memory()
print(json.dumps({"held": held, "kept": kept, "released": rss_kib()}))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, check=True).stdout
    got = json.loads(out)
    assert got["kept"] > got["held"] - 16 * 1024, got  # the 128 MiB stayed resident
    assert got["released"] < got["kept"] - 100 * 1024, got  # and went back to the kernel
