"""Benchmark of ``qkforms survey`` against its I/O floor (not a test).

Run: ``python benchmarks/survey_bench.py [--layers 40] [--keep DIR]``. In one run it

1. writes a synthetic Mistral-Small-24B-shaped checkpoint (40 layers, 32 query / 8 KV
   heads, N = 5120, n = 128, bf16, q/k tensors only, about 2.1 GB, Mistral
   ``config.json``) into a temporary directory;
2. measures the I/O floor: a fresh process that opens the checkpoint and merely reads
   and decodes every layer's q/k tensors (``Model.layers()``), nothing else;
3. runs ``qkforms survey`` on it in a fresh process (wall time, peak RSS of that
   process) and reports survey / floor;
4. does the same for SmolLM2-135M (``smollm2``; floor = dequantizing its q/k tensors);
5. times exact certification (``qkforms.exact.head_signature``) per head on SmolLM2;
6. profiles one 24B-shaped layer stage by stage in one process with single-threaded
   BLAS (read+decode, Gram blocks, Cholesky, each eigenproblem of the Gram engine,
   statistics, tables, parquet write) and prints the lower bound that this CPU work
   puts on the survey's wall time on the machine's cores, as a ratio to the floor.

The page cache is warmed by a first read before anything is timed, so the floor and
the survey read from memory alike. It also measures a compute floor in the same run: the
Gram FLOPs of every layer (:func:`gram_floor_gflop`) at the single-thread dgemm rate of
this machine, spread over its cores. Targets: 24B-shaped survey within 120 s and within
2.5x its I/O floor (goal: 1.5x max(I/O, compute floor)), peak RSS <= 1 GiB, exact <= 0.1
s/head.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "python") + os.pathsep
       + os.environ.get("PYTHONPATH", "")}

FLOOR_SCRIPT = """
import sys, time
import qkforms.models as qm
t0 = time.perf_counter()
m = qm.load(sys.argv[1], checksum=False)
for lw in m.layers():
    pass
print(time.perf_counter() - t0)
"""


HASH_SCRIPT = """
import sys
import qkforms.models as qm
qm.load(sys.argv[1], checksum=True)
"""


def _run(cmd: list[str]) -> tuple[float, float, str]:
    """Run a command in a fresh process: (wall seconds, peak RSS MiB, stdout)."""
    code = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "wall = time.perf_counter() - t\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "print(json.dumps({'wall': wall, 'rss': rss, 'rc': p.returncode,"
        " 'out': p.stdout, 'err': p.stderr[-2000:]}))\n"
    )
    res = subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True,
                         env=ENV, check=True)
    info = json.loads(res.stdout)
    if info["rc"] != 0:
        raise SystemExit(f"command failed: {' '.join(cmd)}\n{info['err']}")
    return info["wall"], info["rss"], info["out"]


def floor(source: str) -> tuple[float, float]:
    """Wall time of a process that only reads+decodes the q/k tensors, and its RSS."""
    wall, rss, _ = _run([sys.executable, "-c", FLOOR_SCRIPT, source])
    return wall, rss


def survey(source: str, out: Path, *extra: str) -> tuple[float, float, dict]:
    wall, rss, _ = _run([sys.executable, "-m", "qkforms", "survey", source, "--out", str(out),
                         "--no-progress", "--no-stats", *extra])
    manifest = json.loads((out / "manifest.json").read_text())
    return wall, rss, manifest


def exact_per_head(heads: int) -> float:
    sys.path.insert(0, str(ROOT / "python"))
    import qkforms.models as qm
    from qkforms.exact import head_signature

    m = qm.load("smollm2", checksum=False)
    done = 0
    t = 0.0
    for lw in m.layers():
        for hw in lw.heads():
            t0 = time.perf_counter()
            sig = head_signature(hw.W_Q, hw.W_K)
            t += time.perf_counter() - t0
            assert tuple(sig) == (m.info.n, m.info.n, m.info.N - 2 * m.info.n), sig
            done += 1
            if done == heads:
                return t / done
    return t / max(done, 1)


PROFILE_SCRIPT = """
import json, sys, tempfile, time
from pathlib import Path
import numpy as np
import qkforms.models as qm
from qkforms import gram, gram_factor
from qkforms.survey.parallel import blas_single_thread
from qkforms.survey.head_statistics import head_columns
from qkforms.survey.store import PartStore
from qkforms.survey.arrow_tables import heads_table, spectra_table

def best(f, reps=3):
    out, ts = None, []
    for _ in range(reps):
        t = time.perf_counter(); out = f(); ts.append(time.perf_counter() - t)
    return min(ts), out

m = qm.load(sys.argv[1], checksum=False)
prof = {}
prof["read_decode"], lw = best(lambda: m.layer(0))
N, n = m.info.N, m.info.n
with blas_single_thread():
    prof["gram_blocks"], G = best(lambda: gram.layer_gram(lw.W_Q, lw.W_K, lw.kv_index))
    prof["cholesky"], (F, _) = best(lambda: gram_factor._cholesky(G))
    prof["factor_blocks"], _ = best(lambda: gram.spectra_from_factor(F, n, want=()))
    for key in gram.SPECTRA:  # each eigenproblem alone (minus the shared blocks)
        t, _ = best(lambda: gram.spectra_from_factor(F, n, want=(key,)))
        prof["eigenproblem_" + key] = max(t - prof["factor_blocks"], 0.0)
    sp = gram.layer_spectra(lw.W_Q, lw.W_K, lw.kv_index)
    prof["statistics"], cols = best(lambda: head_columns(sp, N=N, n=n))
prof["tables"], tabs = best(lambda: (
    heads_table("m", 0, lw.kv_index, N, n, sp.error, cols),
    spectra_table("m", 0, sp, cols["valid"])))
store = PartStore(Path(tempfile.mkdtemp()), "m")
store.start({}, resume=False)
prof["write"], _ = best(lambda: store.write_layer(0, tabs[0], tabs[1], None))
print(json.dumps(prof))
"""


RATE_SCRIPT = """
import json, sys, time
import numpy as np
from qkforms.threads import single_threaded_libraries
N, n, h = int(sys.argv[1]), int(sys.argv[2]), 8
W = np.random.default_rng(0).standard_normal((h, n, N))
ts = []
with single_threaded_libraries():
    for _ in range(5):
        t = time.perf_counter()
        np.matmul(W, np.swapaxes(W, 1, 2))
        ts.append(time.perf_counter() - t)
print(json.dumps({"gflops": 2.0 * h * n * n * N / min(ts) / 1e9}))
"""


def gram_floor_gflop(N: int, n: int, n_q: int, n_kv: int) -> float:
    """The Gram FLOPs of one layer that any correct method needs: the symmetric blocks
    ``W_K W_K^T`` (per key head) and ``W_Q W_Q^T`` (per query head) at half price
    (symmetric kernels), ``Q_h K_g^T`` in full."""
    return 2.0 * N * n * n * (n_kv / 2 + n_q / 2 + n_q) / 1e9


def blas_kernel() -> str:
    """The BLAS library and kernel this Python uses (threadpoolctl)."""
    try:
        import numpy as np  # noqa: F401  (loads the BLAS)
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown"
    return ", ".join(f"{i['internal_api']} {i.get('architecture', '?')}"
                     for i in threadpool_info() if i["user_api"] == "blas") or "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=40, help="layers of the 24B-shaped model")
    ap.add_argument("--keep", type=Path, default=None,
                    help="reuse/keep the synthetic checkpoint in this directory")
    ap.add_argument("--exact-heads", type=int, default=54)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "python"))
    from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint

    tmp = Path(tempfile.mkdtemp(prefix="qkforms-bench-"))
    ckpt = args.keep or tmp / "mistral-24b-shaped"
    report: dict[str, float | str] = {}
    if not (ckpt / "model.safetensors").exists():
        t = time.perf_counter()
        write_llama_checkpoint(ckpt, n_layers=args.layers, N=5120, n=128, n_q=32, n_kv=8,
                               dtype="BF16", seed=0, name="synthetic Mistral-Small-24B shape")
        report["write_checkpoint_s"] = time.perf_counter() - t
    size = (ckpt / "model.safetensors").stat().st_size
    report["checkpoint_GB"] = size / 1e9
    floor(str(ckpt))  # warm the page cache
    f1, f_rss = floor(str(ckpt))
    s_wall, s_rss, man = survey(str(ckpt), tmp / "out-24b")
    s2_wall, s2_rss, man2 = survey(str(ckpt), tmp / "out-24b-w2", "--workers", "2")
    f2, _ = floor(str(ckpt))
    io = min(f1, f2)
    hash_wall, _, _ = _run([sys.executable, "-c", HASH_SCRIPT, str(ckpt)])
    # the compute floor: the Gram FLOPs at the single-thread dgemm rate of this run, on
    # all cores
    _, _, rate_out = _run([sys.executable, "-c", RATE_SCRIPT, "5120", "128"])
    gflops = json.loads(rate_out)["gflops"]
    compute_floor = (gram_floor_gflop(5120, 128, 32, 8) * args.layers
                     / (gflops * (os.cpu_count() or 1)))
    t = man["models"][0]["timings"]
    report.update({
        "24b_heads": man["models"][0]["heads"],
        "24b_io_floor_s": io,
        "24b_survey_wall_s": s_wall,
        "24b_survey_layer_loop_s": t["wall_s"],
        "24b_ratio_survey_over_floor": s_wall / io,
        "blas_dgemm_gflops_1_thread": gflops,
        "24b_compute_floor_s": compute_floor,
        "24b_ratio_survey_over_compute_floor": s_wall / compute_floor,
        "24b_ratio_survey_over_max_floor": s_wall / max(io, compute_floor),
        "24b_survey_peak_rss_MiB": s_rss,
        "24b_floor_peak_rss_MiB": f_rss,
        "24b_compute_s": t["compute_s"],
        "24b_read_s_in_survey": t["read_s"],
        "24b_write_s": t["write_s"],
        "24b_load_with_sha256_s": hash_wall,
        "24b_survey_workers2_wall_s": s2_wall,
        "24b_workers2_ratio_over_floor": s2_wall / io,
        "24b_workers2_peak_rss_MiB_largest_process": s2_rss,
    })
    floor("smollm2")
    sf, _ = floor("smollm2")
    sw, srss, sman = survey("smollm2", tmp / "out-smollm2")
    report.update({
        "smollm2_dequantize_floor_s": sf,
        "smollm2_survey_wall_s": sw,
        "smollm2_ratio": sw / sf,
        "smollm2_peak_rss_MiB": srss,
        "smollm2_balanced_ok": sman["models"][0]["heads"] - sman["models"][0]["failed"],
    })
    report["smollm2_exact_s_per_head"] = exact_per_head(args.exact_heads)
    ew, _, eman = survey("smollm2", tmp / "out-smollm2-exact", "--exact")
    report["smollm2_survey_exact_wall_s"] = ew
    report["smollm2_survey_exact_s_per_head"] = (
        eman["models"][0]["timings"]["exact_s"] / eman["models"][0]["heads"])
    # where the time goes: one layer, stage by stage, single-threaded BLAS
    _, _, out = _run([sys.executable, "-c", PROFILE_SCRIPT, str(ckpt)])
    prof = json.loads(out)
    layers = man["models"][0]["layers"]
    cores = os.cpu_count() or 1
    cpu = sum(prof.values()) * len(layers)
    report["blas"] = blas_kernel()
    for k, v in prof.items():
        report[f"profile_layer_{k}_s"] = v
    report["profile_cpu_s_all_layers"] = cpu
    report["profile_lower_bound_wall_s"] = cpu / cores
    report["profile_lower_bound_ratio"] = cpu / cores / io
    report["load_average_at_end"] = os.getloadavg()[0]
    report["profile_engine_only_lower_bound_ratio"] = (
        sum(v for k, v in prof.items() if k not in ("read_decode", "tables", "write"))
        * len(layers) / cores / io)
    width = max(len(k) for k in report)
    for k, v in report.items():
        print(f"{k:<{width}}  {v:.3f}" if isinstance(v, float) else f"{k:<{width}}  {v}")
    targets = {
        "24B survey <= 120 s": report["24b_survey_wall_s"] <= 120,
        "24B survey <= 2.5x I/O floor": report["24b_ratio_survey_over_floor"] <= 2.5,
        "24B survey <= 1.5x max(I/O, compute floor) (goal)":
            report["24b_ratio_survey_over_max_floor"] <= 1.5,
        "24B peak RSS <= 1 GiB": report["24b_survey_peak_rss_MiB"] <= 1024,
        "exact <= 0.1 s/head": report["smollm2_exact_s_per_head"] <= 0.1,
    }
    for k, ok in targets.items():
        print(f"target {k}: {'met' if ok else 'NOT met'}")
    import shutil

    # the survey outputs always go; the checkpoint stays only with --keep (it is in tmp
    # otherwise)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
