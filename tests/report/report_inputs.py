"""A small synthetic survey directory (two models, one with RoPE factors) for the report tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from qkforms import Head, reduce_heads
from qkforms.stats.synthetic_rows import survey_rows

ROPE = {"name": "rope-toy", "key": "rope-toy", "factors": "factors/rope-toy.npz",
        "positional": "rope", "rope_base": 10000.0, "rotary_fraction": 1.0}


def write_survey(directory: Path) -> dict[str, object]:
    """Write heads/spectra parquet, manifest.json and a factors archive; return facts."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(8)
    plain = [Head(*rng.standard_normal((2, 6, 40))) for _ in range(12)]   # 3 layers x 4
    W = rng.standard_normal((2, 6, 4, 16))  # W_Q, W_K of 6 heads (n = 4, N = 16)
    rope_heads = [Head(W[0, i], W[1, i]) for i in range(6)]  # 2 layers x 3 heads
    h1, s1 = survey_rows("plain-toy", plain, heads_per_layer=4)
    h2, s2 = survey_rows("rope-toy", rope_heads, heads_per_layer=3)
    heads = {k: h1[k] + h2[k] for k in h1}
    spectra = {k: s1[k] + s2[k] for k in s1}
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(heads), directory / "heads.parquet")
    pq.write_table(pa.table(spectra), directory / "spectra.parquet")
    red = reduce_heads(W[0], W[1])
    (directory / "factors").mkdir(exist_ok=True)
    arrays = {}
    for layer in range(2):
        arrays[f"L{layer:04d}_Q_red"] = red.Q_red[3 * layer: 3 * layer + 3]
        arrays[f"L{layer:04d}_K_red"] = red.K_red[3 * layer: 3 * layer + 3]
    np.savez(directory / "factors" / "rope-toy.npz", **arrays)
    manifest = {"tool": "qkforms survey", "version": "test", "created": "2026-01-01T00:00:00Z",
                "models": [{"name": "plain-toy", "key": "plain-toy", "factors": None}, ROPE]}
    (directory / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return {"heads": len(heads["model"]), "red": red, "rope_heads": rope_heads}


_BUILT: dict[str, tuple] = {}


def built_report(tmp_path_factory) -> tuple:
    """Write the survey and its report once per session (shared by the test modules)."""
    if "report" in _BUILT:
        return _BUILT["report"]
    pytest.importorskip("plotly")
    pytest.importorskip("matplotlib")
    pytest.importorskip("pyarrow")
    from qkforms.report.build import build_report

    d = tmp_path_factory.mktemp("survey")
    facts = write_survey(d)
    path = build_report(d, n_boot=50, d_max=16, rope_heads=4)
    _BUILT["report"] = (d, path, facts)
    return _BUILT["report"]
