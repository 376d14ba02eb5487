"""Benchmark of the float core: dense N x N eigensolver vs the 2n x 2n Gram route.

Run: ``python benchmarks/core_bench.py``. Prints, in one run, per-head times and the
ratio dense-eigvalsh / Gram-route at (N, n) = (768, 64) and (5120, 128), and the exact
signature time per head at (576, 64) (SmolLM2's shape) when python-flint is present.
Times are medians over repeats; the ratio compares two methods measured in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

import qkforms as qk


def median_time(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def dense_vs_gram(N: int, n: int, repeats: int, rng: np.random.Generator) -> dict[str, float]:
    Q, K = rng.standard_normal((2, n, N))

    def dense() -> None:
        L = K.T @ Q
        np.linalg.eigvalsh(0.5 * (L + L.T))

    def gram() -> None:
        qk.gram_spectrum(Q, K)

    # both must agree before their times mean anything
    L = K.T @ Q
    d = np.sort(np.linalg.eigvalsh(0.5 * (L + L.T)))[::-1]
    g = qk.gram_spectrum(Q, K)
    assert np.allclose(g[:n], d[:n], rtol=1e-8) and np.allclose(g[n:], d[-n:], rtol=1e-8)
    t_dense = median_time(dense, repeats)
    t_gram = median_time(gram, max(repeats, 5))
    return {"dense_s": t_dense, "gram_s": t_gram, "ratio": t_dense / t_gram}


def exact_signature(N: int, n: int, heads: int, rng: np.random.Generator) -> float | None:
    try:
        from qkforms.exact import head_signature
    except ImportError:
        return None
    # float32-representable weights, as decoded checkpoints are
    Q, K = (rng.standard_normal((2, heads, n, N)) * 0.05).astype(np.float32).astype(np.float64)
    t0 = time.perf_counter()
    for i in range(heads):
        sig = head_signature(Q[i], K[i])
        assert tuple(sig) == (n, n, N - 2 * n), sig
    return (time.perf_counter() - t0) / heads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--exact-heads", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("shape (N, n)   dense eigvalsh [s]   Gram route [s]   ratio dense/Gram")
    for N, n in [(768, 64), (5120, 128)]:
        r = dense_vs_gram(N, n, args.repeats, rng)
        print(
            f"({N:>4}, {n:>3})   {r['dense_s']:>18.4f}   {r['gram_s']:>14.5f}"
            f"   {r['ratio']:>14.0f}x"
        )
    t = exact_signature(576, 64, args.exact_heads, rng)
    if t is None:
        print("exact signature: qkforms.exact not available")
    else:
        print(f"exact signature at (576, 64): {t:.4f} s per head (target <= 0.1 s)")


if __name__ == "__main__":
    main()
