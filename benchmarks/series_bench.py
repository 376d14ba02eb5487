"""Benchmark: a 100-checkpoint training run surveyed locally vs on a 2-worker dask cluster.

Run: ``python benchmarks/series_bench.py [--checkpoints 100] [--keep DIR]``. In one run it

1. writes a synthetic training run of ``--checkpoints`` checkpoints of a small llama-style
   model (``qkforms.survey.synthetic_checkpoints.write_series``: 4 layers, 8 query /
   4 key-value heads, by default N = 256, n = 32 (``--N``, ``--n``), float32; about 1 MiB
   per checkpoint);
2. surveys it with the local executor (``qkforms survey RUN --no-stats``, a fresh
   process, default threads: each checkpoint's layers read ahead and computed in
   ``cores`` threads);
3. surveys it with ``--executor dask --workers 2`` (a ``LocalCluster`` of two worker
   processes, one thread each, started and stopped inside the timed command);
4. checks that both wrote identical ``heads.parquet`` and ``spectra.parquet``, and prints
   the throughput of each (heads per second, wall time of the whole command including
   interpreter start, loading and sha256 of every checkpoint, merge and manifest) and the
   ratio dask / local.

Both commands run in this same invocation, alternately ``--repeat`` times (median wall
times), on the same files (page cache warmed by a first read), so the ratio is what to
compare across machines; on a shared machine single timings vary by 2x or more.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "python") + os.pathsep
       + os.environ.get("PYTHONPATH", "")}


def _timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, env=ENV, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoints", type=int, default=100)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--N", type=int, default=256, help="residual dimension (default 256)")
    p.add_argument("--n", type=int, default=32, help="head dimension (default 32)")
    p.add_argument("--keep", type=Path, default=None, help="work directory to keep")
    p.add_argument("--repeat", type=int, default=3,
                   help="alternate local and dask runs this many times (default 3)")
    args = p.parse_args(argv)

    import numpy as np
    import pyarrow.parquet as pq

    from qkforms.survey.synthetic_checkpoints import write_series

    work = args.keep or Path(tempfile.mkdtemp(prefix="qkforms-series-bench-"))
    run = work / "run"
    steps = [10 * i for i in range(args.checkpoints)]
    t = time.perf_counter()
    if not run.exists():
        write_series(run, steps, n_layers=args.layers, N=args.N, n=args.n, n_q=8, n_kv=4,
                     seed=1)
    print(f"run: {args.checkpoints} checkpoints x {args.layers} layers x 8 heads "
          f"(N = {args.N}, n = {args.n}) in {run} ({time.perf_counter() - t:.1f} s to write)")
    for f in run.rglob("*.safetensors"):  # warm the page cache
        f.read_bytes()
    heads = args.checkpoints * args.layers * 8
    base = [sys.executable, "-m", "qkforms", "survey", str(run), "--no-stats", "--no-progress"]
    local_s, dask_s = [], []
    for _ in range(max(1, args.repeat)):  # alternate, so that load changes hit both alike
        local_s.append(_timed([*base, "--out", str(work / "local")]))
        dask_s.append(_timed([*base, "--out", str(work / "dask"), "--executor", "dask",
                              "--workers", "2"]))
    local, dask = float(np.median(local_s)), float(np.median(dask_s))
    for name in ("heads", "spectra"):
        a = pq.read_table(work / "local" / f"{name}.parquet")
        b = pq.read_table(work / "dask" / f"{name}.parquet")
        assert a.equals(b), f"{name}.parquet differs between the executors"
    print(f"cores: {os.cpu_count()}; identical tables: yes")
    print(f"local executor : {local:7.1f} s  {heads / local:8.1f} heads/s  (median of "
          f"{', '.join(f'{x:.1f}' for x in local_s)} s)")
    print(f"dask, 2 workers: {dask:7.1f} s  {heads / dask:8.1f} heads/s  (median of "
          f"{', '.join(f'{x:.1f}' for x in dask_s)} s)")
    print(f"throughput ratio dask / local: {local / dask:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
