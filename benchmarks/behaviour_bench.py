"""``qkforms behaviour smollm2``: wall time and memory, against baselines of the same run.

Run: ``python benchmarks/behaviour_bench.py [--repeat 2] [--json FILE]`` (not a test).

Alternating, ``--repeat`` times, in fresh processes:

* ``behaviour``: the command ``qkforms behaviour smollm2 --out TMP`` with its defaults
  (16 + 16 sequences of 128 tokens, every one of the 270 heads scored, the first 4
  sequences of each probe rebuilt from the survey's maps);
* ``floor``: what any run of the model on the same tokens costs: ``transformers``
  loading the GGUF (``from_pretrained(..., gguf_file=...)``) and its tokenizer, then one
  forward pass over the same 2 x 16 x 128 tokens without attention patterns;
* ``survey``: ``qkforms survey smollm2 --no-stats`` (the geometry of the same heads).

It prints each run's wall time and peak RSS (``ru_maxrss`` of the child), the medians,
the ratios behaviour/floor and behaviour/survey, the load average, and the phases that
``behaviour.json`` records. Absolute times on the shared 2-core machine vary with the
other tenants' load by 2-3x; compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "python"), "OMP_NUM_THREADS": "1",
       "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

FLOOR = r"""
import os, torch, transformers
torch.set_num_threads(1)
from qkforms.models.short_names import resolve_short_name
path = resolve_short_name("smollm2")[0]
d, f = os.path.dirname(path), os.path.basename(path)
tok = transformers.AutoTokenizer.from_pretrained(d, gguf_file=f)
model = transformers.AutoModel.from_pretrained(d, gguf_file=f, dtype=torch.float32).eval()
ids = torch.randint(100, 40000, (32, 128), generator=torch.Generator().manual_seed(0))
with torch.no_grad():
    for k in range(0, 32, 16):
        model(input_ids=ids[k:k + 16], use_cache=False)
"""


def _child(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB, this child's own ``ru_maxrss``) of one process."""
    with tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=err)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd[:4])} failed:\n{err.read().decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    runs: dict[str, list[tuple[float, float]]] = {"behaviour": [], "floor": [], "survey": []}
    phases = None
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.repeat):
            out = Path(tmp) / f"b{k}"
            runs["behaviour"].append(_child([sys.executable, "-m", "qkforms", "behaviour",
                                             "smollm2", "--out", str(out), "--no-progress"]))
            phases = json.loads((out / "behaviour.json").read_text())["models"][0]
            runs["floor"].append(_child([sys.executable, "-c", FLOOR]))
            runs["survey"].append(_child([sys.executable, "-m", "qkforms", "survey", "smollm2",
                                          "--out", str(Path(tmp) / f"s{k}"), "--no-stats",
                                          "--no-progress"]))
            load.append(os.getloadavg()[0])
    med = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
    for k, v in runs.items():
        print(f"{k:10s} wall " + ", ".join(f"{w:.1f}" for w, _ in v) + f" s (median "
              f"{med[k]:.1f}); peak RSS {max(r for _, r in v):.0f} MiB")
    print(f"behaviour / floor  = {med['behaviour'] / med['floor']:.2f}")
    print(f"behaviour / survey = {med['behaviour'] / med['survey']:.2f}")
    print(f"load average (1 min) during the runs: {', '.join(f'{x:.1f}' for x in load)}")
    if phases is not None:
        tf = phases["transformers"]
        print("last behaviour run, phases (s): survey loader "
              f"{phases['timings']['load_s']:.1f}, transformers model {tf['torch_load_s']:.1f}, "
              f"tokenizer {tf['tokenizer_s']:.1f}, forward passes "
              f"{phases['timings']['forward_s']:.1f}, scores and rebuilding "
              f"{phases['timings']['analysis_s']:.1f}")
    if args.json is not None:
        args.json.write_text(json.dumps({"runs": runs, "median": med, "load": load,
                                         "phases": phases}, indent=2))


if __name__ == "__main__":
    main()
