"""GGUF decode throughput per ggml tensor type, as ratios to reading F16 (not a test).

Run: ``python benchmarks/gguf_decode_bench.py [--rows 2048] [--cols 4096] [--repeat 3]``.

In one run it writes one GGUF file holding a ``rows x cols`` tensor of every type the
installed ``gguf`` package can dequantize (:func:`qkforms.models.ggufio.decodable_types`;
types ``gguf.quants.quantize`` can produce are quantized from normal floats, the others
are random blocks with finite scales), then times the loader's read of each tensor
(``GGUFStore.read``: ``gguf.quants.dequantize`` plus the widening to float64, from a warm
page cache), best of ``--repeat``. It prints a table of million values per second and
the time of each type relative to F16 in the same run; ``--json FILE`` also writes it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from qkforms.models.ggufio import GGUFStore, decodable_types  # noqa: E402


def _blocks(rng: np.random.Generator, gguf: object, qtype: object, rows: int, cols: int
            ) -> np.ndarray:
    """Quantized bytes (or typed values) of a ``rows x cols`` tensor of ``qtype``."""
    data = rng.standard_normal((rows, cols)).astype(np.float32)
    try:
        return gguf.quants.quantize(data, qtype)
    except NotImplementedError:
        pass
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    raw = rng.integers(0, 256, (rows * cols // block, size), dtype=np.uint8)
    for _ in range(200):
        with np.errstate(invalid="ignore", over="ignore"):
            values = gguf.quants.dequantize(raw, qtype).reshape(raw.shape[0], block)
        bad = ~np.isfinite(values).all(axis=1)
        if not bad.any():
            return raw.reshape(rows, -1)
        raw[bad] = rng.integers(0, 256, (int(bad.sum()), size), dtype=np.uint8)
    raise RuntimeError(f"no finite {qtype.name} blocks")


def main() -> None:
    import gguf

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--cols", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    types = list(decodable_types())
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "types.gguf")
        w = gguf.GGUFWriter(path, "llama")
        for name in types:
            qtype = gguf.GGMLQuantizationType[name]
            w.add_tensor(name, _blocks(rng, gguf, qtype, args.rows, args.cols),
                         raw_dtype=qtype)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        store = GGUFStore(path)
        results = {}
        for name in types:
            store.read(name)  # warm the page cache and the library's lookup grids
            best = float("inf")
            for _ in range(args.repeat):
                t = time.perf_counter()
                store.read(name)
                best = min(best, time.perf_counter() - t)
            results[name] = best
        store.close()
    values = args.rows * args.cols
    base = results["F16"]
    print(f"GGUF decode to float64, {args.rows} x {args.cols} per type, best of "
          f"{args.repeat}; ratio = time / time(F16), same run")
    print(f"{'type':<8} {'s':>8} {'Mvalues/s':>10} {'ratio':>7}")
    for name, secs in sorted(results.items(), key=lambda kv: kv[1]):
        print(f"{name:<8} {secs:8.4f} {values / secs / 1e6:10.1f} {secs / base:7.2f}")
    if args.json:
        args.json.write_text(json.dumps({"rows": args.rows, "cols": args.cols,
                                         "seconds": results,
                                         "ratio_to_f16": {k: v / base
                                                          for k, v in results.items()}},
                                        indent=2))


if __name__ == "__main__":
    main()
