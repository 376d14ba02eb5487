"""Benchmark of the README main command against the same survey without statistics.

Run: ``python benchmarks/main_bench.py [--rounds 2]``. In one run it alternates, in fresh
processes, ``qkforms survey --exact`` (SmolLM2, with the observation tables: the README
main command) and ``qkforms survey --exact --no-stats`` and prints each wall time, the
ratio of the medians (target <= 1.5, idle or under load) and the load average before
and after. Not a test: the machine is shared, so only the ratio of runs made in the same
minutes means something.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "python") + os.pathsep
       + os.environ.get("PYTHONPATH", "")}


def run(out: Path, *extra: str) -> float:
    """Wall time of one ``qkforms survey --exact`` in a fresh process."""
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "qkforms", "survey", "--exact", "--out", str(out),
                    "--no-progress", *extra], check=True, env=ENV, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="qkforms-main-bench-"))
    load0 = os.getloadavg()
    run(tmp / "warm", "--no-stats")  # page cache and bytecode
    full, alone = [], []
    for i in range(args.rounds):
        alone.append(run(tmp / f"alone-{i}", "--no-stats"))
        full.append(run(tmp / f"full-{i}"))
    load1 = os.getloadavg()
    print(f"main command (with stats) s:   {', '.join(f'{v:.1f}' for v in full)}")
    print(f"same survey --no-stats s:      {', '.join(f'{v:.1f}' for v in alone)}")
    ratio = statistics.median(full) / statistics.median(alone)
    print(f"ratio main / survey alone:     {ratio:.2f} (target <= 1.5: "
          f"{'met' if ratio <= 1.5 else 'NOT met'})")
    print(f"load average before / after:   {load0[0]:.2f} / {load1[0]:.2f} "
          f"({os.cpu_count()} cores)")
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
