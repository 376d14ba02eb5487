"""The thread policy (qkforms.threads): BLAS at one thread, also for libraries loaded late."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# scipy ships its own OpenBLAS, loaded only when scipy.linalg is first imported: a
# limit taken before that import must still reach it in the next context
LATE_LIBRARY = """
import json
import numpy as np
from threadpoolctl import threadpool_info
from qkforms.threads import single_threaded_libraries

with single_threaded_libraries():
    float(np.linalg.eigvalsh(np.eye(2)).sum())
import scipy.linalg  # noqa: E402,F401  (loads scipy's own BLAS)
before = {i["filepath"]: i["num_threads"] for i in threadpool_info()
          if i["user_api"] == "blas"}
with single_threaded_libraries():
    inside = {i["filepath"]: i["num_threads"] for i in threadpool_info()
              if i["user_api"] == "blas"}
print(json.dumps({"before": before, "inside": inside}))
"""


def _fresh_process(script: str) -> dict[str, dict[str, int]]:
    """Run ``script`` in a fresh Python without BLAS thread variables; its JSON output."""
    pytest.importorskip("threadpoolctl")
    pytest.importorskip("scipy")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    env["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True,
                         text=True, env=env, check=True).stdout
    return dict(json.loads(out))


def test_single_threaded_libraries_limits_blas_loaded_after_the_first_call() -> None:
    got = _fresh_process(LATE_LIBRARY)
    if max(got["before"].values()) < 2:
        pytest.skip("every BLAS runs one thread here anyway (one core)")
    assert len(got["inside"]) == len(got["before"]) >= 1
    assert set(got["inside"].values()) == {1}, got


# qkforms imports scipy.linalg lazily (the Gram engine's trtri), inside a limit that may
# have been entered before scipy.linalg was ever imported: its BLAS must be limited too
IMPORTED_INSIDE = """
import json, sys
import numpy as np
from threadpoolctl import threadpool_info
from qkforms.threads import single_threaded_libraries

assert "scipy.linalg" not in sys.modules
with single_threaded_libraries():
    import scipy.linalg  # noqa: F401  (as qkforms.gram_factor does, lazily)
    inside = {i["filepath"]: i["num_threads"] for i in threadpool_info()
              if i["user_api"] == "blas"}
after = {i["filepath"]: i["num_threads"] for i in threadpool_info()
         if i["user_api"] == "blas"}
print(json.dumps({"inside": inside, "after": after}))
"""


def test_single_threaded_libraries_limits_scipy_imported_inside_the_context() -> None:
    got = _fresh_process(IMPORTED_INSIDE)
    if max(got["after"].values()) < 2:
        pytest.skip("every BLAS runs one thread here anyway (one core)")
    if len(got["after"]) < 2:
        pytest.skip("scipy shares numpy's BLAS here (one library to limit)")
    assert len(got["inside"]) == len(got["after"])  # numpy's and scipy's own
    assert set(got["inside"].values()) == {1}, got


def test_the_controller_is_made_again_after_an_import(monkeypatch: pytest.MonkeyPatch) -> None:
    # a library loaded by an import after a limit was taken (not scipy's: that one is
    # loaded first) is found by the next limit: the controller is made again
    threadpoolctl = pytest.importorskip("threadpoolctl")
    import types

    from qkforms import threads

    made: list[int] = []
    real = threadpoolctl.ThreadpoolController

    def counting() -> object:
        made.append(1)
        return real()

    monkeypatch.setattr(threadpoolctl, "ThreadpoolController", counting)
    monkeypatch.setattr(threads, "_CONTROLLER", None)
    with threads.single_threaded_libraries():
        pass
    with threads.single_threaded_libraries():
        pass
    assert len(made) == 1  # nothing imported in between: the same controller
    monkeypatch.setitem(sys.modules, "qkforms_test_late_module", types.ModuleType("late"))
    with threads.single_threaded_libraries():
        pass
    assert len(made) == 2
