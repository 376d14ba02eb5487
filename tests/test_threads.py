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


def test_single_threaded_libraries_limits_blas_loaded_after_the_first_call() -> None:
    pytest.importorskip("threadpoolctl")
    pytest.importorskip("scipy")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    env["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", LATE_LIBRARY], capture_output=True,
                         text=True, env=env, check=True).stdout
    got = json.loads(out)
    if max(got["before"].values()) < 2:
        pytest.skip("every BLAS runs one thread here anyway (one core)")
    assert len(got["inside"]) == len(got["before"]) >= 1
    assert set(got["inside"].values()) == {1}, got
