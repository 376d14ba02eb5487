"""Benchmark and measurements of the storage-precision bands (not a test).

Run: ``python benchmarks/bands_bench.py [--models smollm2 minilm] [--no-survey]
[--heads 6] [--samples 40]``. In one run, for each model shipped through PyPI:

1. *survey cost* (unless ``--no-survey``): ``qkforms survey MODEL --no-stats`` plain,
   with ``--precision-bands`` and with ``--certify``, in fresh processes; wall times and
   the ratios to the plain survey (target: the bands' ratio at most the certificate's);
2. *what the bands say*, from the ``--precision-bands`` survey: the band kinds, the
   median and largest ``band_radius`` and band widths, and how many near-Θ decisions,
   spectral types (radius rule) and signatures are stable under the bands;
3. *coverage* of the reported bands on real heads (``--heads`` per model): weights drawn
   uniformly in the box (``--samples`` per head), and the two corners of the box that
   maximize and minimize each statistic's linearization
   (:func:`qkforms.bands.stat_gradients`); the share of sampled values inside the
   reported band, per kind, and the largest excess beyond it relative to the half-width
   of the head's widest band. A rigorous band must contain every sample; a first-order band is exact
   to first order only, and the extreme corners measure how far the second order takes
   the statistic beyond it. For comparison, the median change of each statistic under
   the uniform samples (the issue's emulation of quantization noise).

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

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "python") + os.pathsep
       + os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}


def survey_wall(source: str, out: Path, *extra: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "qkforms", "survey", source, "--out", str(out),
                    "--no-progress", "--no-stats", *extra], check=True, env=ENV,
                   capture_output=True)
    return time.perf_counter() - t0


def readings(heads_path: Path) -> dict:
    """Kinds, radii, widths and stable decisions of a ``--precision-bands`` survey."""
    import pyarrow.parquet as pq

    from qkforms.bands import BAND_STATS
    from qkforms.exact import decide
    from qkforms.faces import spectral_type
    from qkforms.tolerances import NEAR_THETA, SPECTRAL_TYPE_RADIUS

    rows = [r for r in pq.read_table(heads_path).to_pylist() if r["status"] == "ok"]
    kinds: dict[str, int] = {}
    for r in rows:
        kinds[r["band_kind"]] = kinds.get(r["band_kind"], 0) + 1

    def col(name: str) -> np.ndarray:
        return np.array([r[name] for r in rows], dtype=np.float64)

    widths = {s: col(f"{s}_band_hi") - col(f"{s}_band_lo") for s in BAND_STATS}
    near = decide(lambda x: x <= NEAR_THETA, [col("theta_dist_band_lo")],
                  [col("theta_dist_band_hi")])
    lows = [col(f"{s}_band_lo") for s in "abcd"]
    highs = [col(f"{s}_band_hi") for s in "abcd"]
    types = decide(lambda a, b, c, d: np.asarray(
        spectral_type(np.stack([a, b, c, d], axis=-1), radius=SPECTRAL_TYPE_RADIUS)),
        lows, highs)
    return {
        "heads": len(rows), "kinds": kinds,
        "radius_median": float(np.median(col("band_radius"))),
        "radius_max": float(np.max(col("band_radius"))),
        "width_median": {s: float(np.median(w[np.isfinite(w)])) for s, w in widths.items()},
        "near_theta_float": int(np.sum(col("theta_dist") <= NEAR_THETA)),
        "near_theta_stable": int(sum(v is not None for v in near)),
        "near_theta_stable_yes": int(sum(v is True for v in near)),
        "types_stable": int(sum(v is not None for v in types)),
        "signatures_stable": int(sum(bool(r["signature_band_stable"]) for r in rows)),
    }


def coverage(source: str, heads: int, samples: int, seed: int = 0) -> dict:
    """Sampled weights in the box against the reported bands (see the module docstring)."""
    import qkforms.models as qm
    from qkforms.bands import BAND_STATS, layer_bands, stat_gradients
    from qkforms.gram import head_spectra
    from qkforms.survey.head_statistics import head_statistics

    rng = np.random.default_rng(seed)
    model = qm.load(source, checksum=False)
    info = model.info
    picks = [(int(layer), int(h)) for layer, h in zip(
        rng.choice(info.n_layers, heads), rng.choice(info.n_q, heads), strict=True)]

    def stats(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
        sp = head_spectra(Q[None], K[None])
        st = head_statistics(sp.eig_S, sp.norm_sq, sp.skew_sq, sp.trace, sp.sv_L_sq,
                             N=info.N, n=info.n)
        return np.array([float(st[s][0]) for s in BAND_STATS])

    inside: dict[str, list[int]] = {}
    excess: dict[str, float] = {}
    noise: list[np.ndarray] = []
    for layer, h in picks:
        lw = model.layer(layer)
        H_Q, H_K = model.layer_precision(layer)
        g = int(lw.kv_index[h])
        Q, K, HQ, HK = lw.W_Q[h], lw.W_K[g], H_Q[h], H_K[g]
        band = layer_bands(Q[None], K[None], HQ[None], HK[None], [0])[0]
        assert band is not None
        grads = stat_gradients(Q, K)
        base = stats(Q, K)
        # excess is measured in half-widths of the head's widest band (a statistic at a
        # kink, e.g. d = 0 exactly, has a first-order band of width 0)
        widest = max((iv.hi - iv.lo) / 2 for iv in (band.interval(s) for s in BAND_STATS)
                     if iv is not None and np.isfinite(iv.hi - iv.lo))
        draws = [(rng.uniform(-1, 1, Q.shape), rng.uniform(-1, 1, K.shape))
                 for _ in range(samples)]
        for s in BAND_STATS:
            dq, dk = grads[s]
            if np.all(np.isfinite(dq)) and np.all(np.isfinite(dk)):
                draws += [(np.sign(dq), np.sign(dk)), (-np.sign(dq), -np.sign(dk))]
        for k, (uq, uk) in enumerate(draws):
            v = stats(Q + uq * HQ, K + uk * HK)
            if k < samples:
                noise.append(np.abs(v - base))
            tag = f"{band.kind} {'uniform' if k < samples else 'corners'}"
            for s, x in zip(BAND_STATS, v, strict=True):
                iv = band.interval(s)
                if iv is None:
                    continue
                ok = iv.lo <= x <= iv.hi
                inside.setdefault(tag, [0, 0])
                inside[tag][0] += int(ok)
                inside[tag][1] += 1
                out = max(x - iv.hi, iv.lo - x, 0.0) / widest
                excess[tag] = max(excess.get(tag, 0.0), out)
    med = np.median(np.stack(noise), axis=0)
    return {"heads": len(picks), "inside": {k: v[0] / v[1] for k, v in inside.items()},
            "samples": {k: v[1] for k, v in inside.items()}, "excess": excess,
            "noise_median": dict(zip(BAND_STATS, med.tolist(), strict=True))}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["smollm2", "minilm"])
    ap.add_argument("--no-survey", action="store_true", help="skip the survey timings")
    ap.add_argument("--heads", type=int, default=6, help="heads per model for coverage")
    ap.add_argument("--samples", type=int, default=40, help="uniform samples per head")
    args = ap.parse_args(argv)
    print(f"load average before: {os.getloadavg()}  cores: {os.cpu_count()}")
    for source in args.models:
        print(f"\n{source}")
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "bands"
            if not args.no_survey:
                plain = survey_wall(source, Path(tmp) / "plain")
                bands = survey_wall(source, out, "--precision-bands")
                cert = survey_wall(source, Path(tmp) / "cert", "--certify")
                print(f"  survey plain {plain:.1f} s, --precision-bands {bands:.1f} s "
                      f"(x{bands / plain:.2f}), --certify {cert:.1f} s (x{cert / plain:.2f})")
            else:
                survey_wall(source, out, "--precision-bands")
            r = readings(out / "heads.parquet")
        print(f"  {r['heads']} heads, kinds {r['kinds']}; band_radius median "
              f"{r['radius_median']:.3g}, max {r['radius_max']:.3g}")
        print("  median band width: " + ", ".join(
            f"{s} {w:.3g}" for s, w in r["width_median"].items()))
        print(f"  near Θ: {r['near_theta_float']} by the float values; stable under the "
              f"bands {r['near_theta_stable']} ({r['near_theta_stable_yes']} near); types "
              f"stable {r['types_stable']}; signatures stable {r['signatures_stable']}")
        c = coverage(source, args.heads, args.samples)
        for tag in sorted(c["inside"]):
            print(f"  coverage ({tag}): {c['inside'][tag]:.3f} of {c['samples'][tag]} "
                  f"values; largest excess {c['excess'][tag]:.3g} widest half-widths")
        print("  median change under uniform noise in the box: " + ", ".join(
            f"{s} {v:.2g}" for s, v in c["noise_median"].items()))
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
