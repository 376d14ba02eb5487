"""Benchmark: refusing and opening a large-vocabulary GGUF against reading its header.

Run: ``python benchmarks/gguf_open_bench.py [--vocab 150000]``. In one run it writes a
small Qwen3-style GGUF (q/k RMSNorm, so ``qkforms.models.load`` refuses it under the
default ``qk_norm="refuse"``) with a ``vocab``-token tokenizer
(:func:`qkforms.survey.synthetic_checkpoints.write_gguf_checkpoint`), then times, best of 3,

* reading its header (:class:`qkforms.models.ggufio.GGUFStore`: metadata and tensor
  table, tokenizer arrays skipped);
* the refusal (``load(path)`` raising ``UnsupportedArchitectureError``);
* opening it (``load(path, qk_norm="fold")``);
* and, for comparison, parsing it with ``gguf.GGUFReader`` (what the loader did before),

and prints each time and the ratios refusal / header and open / header (targets: refusal
and opening under 10 s). Not a test.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def best(f, reps: int = 3) -> float:
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return min(ts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vocab", type=int, default=150_000)
    ap.add_argument("--no-reader", action="store_true", help="skip the gguf.GGUFReader timing")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "python"))
    import qkforms.models as qm
    from qkforms.errors import UnsupportedArchitectureError
    from qkforms.models.ggufio import GGUFStore
    from qkforms.survey.synthetic_checkpoints import write_gguf_checkpoint

    path = str(write_gguf_checkpoint(Path(tempfile.mkdtemp()) / "big.gguf", vocab=args.vocab))
    load0 = os.getloadavg()[0]

    def refuse() -> None:
        try:
            qm.load(path)
        except UnsupportedArchitectureError:
            return
        raise SystemExit("the q/k-norm model was not refused")

    header = best(lambda: GGUFStore(path).close())
    refusal = best(refuse)
    opened = best(lambda: qm.load(path, qk_norm="fold").close())
    print(f"file: {os.path.getsize(path) / 1e6:.1f} MB, {args.vocab}-token vocabulary")
    print(f"header read s:             {header:.4f}")
    print(f"refusal s:                 {refusal:.4f}  (ratio to header {refusal / header:.1f})")
    print(f"open (qk_norm=fold) s:     {opened:.4f}  (ratio to header {opened / header:.1f})")
    if not args.no_reader:
        import gguf

        reader = best(lambda: gguf.GGUFReader(path), reps=1)
        print(f"gguf.GGUFReader parse s:   {reader:.2f}  (ratio to header {reader / header:.0f})")
    print(f"load average: {load0:.2f} / {os.getloadavg()[0]:.2f}")
    for what, t in (("refusal", refusal), ("open", opened)):
        print(f"target {what} < 10 s: {'met' if t < 10 else 'NOT met'}")
    os.remove(path)


if __name__ == "__main__":
    main()
