"""Issue 22 on real checkpoint formats: q/k-norm gains with exact zeros (dead dimensions).

A tiny Qwen3 (per-head q/k RMSNorm) whose q-norm gains contain exact zeros is saved as a
Hugging Face directory and converted to GGUF by llama.cpp's own converter; both are
surveyed with ``--qk-norm fold`` (with and without ``--exact``). Every head is measured
(none fails), and each row is compared with references built from the torch weights
themselves: the folded maps ``diag(gamma) W``, the signature by Descartes' rule on the
dense characteristic polynomial, the profile of the dense form.
"""

from __future__ import annotations

from pathlib import Path

import llamacpp
import numpy as np
import pytest
import tiny

import qkforms as qk
from qkforms import exact

pytestmark = pytest.mark.torch


def _zero_gain_qwen3(tmp_path: Path):
    """A tiny Qwen3 (per-head q/k RMSNorm) whose q_norm gains have exact zeros."""
    import torch

    model = tiny.tiny_hf_model("qwen3", seed=1, configs=tiny.GGUF_CONFIGS)
    with torch.no_grad():
        for i, layer in enumerate(model.model.layers):
            w = layer.self_attn.q_norm.weight
            w[torch.arange(w.shape[0]) % (2 + i) == 0] = 0.0
    d = tmp_path / "qwen3"
    model.save_pretrained(str(d))
    return model, d


def _reference_rows(model, source: str, *, gguf: bool) -> dict[tuple[int, int], tuple]:
    """Signatures from the folded maps built from the torch weights themselves."""
    import torch

    cfg = model.config
    n_q, n_kv, hd = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
    out = {}
    for li, layer in enumerate(model.model.layers):
        a = layer.self_attn
        Wq = a.q_proj.weight.detach().to(torch.float64).numpy().reshape(n_q, hd, -1)
        Wk = a.k_proj.weight.detach().to(torch.float64).numpy().reshape(n_kv, hd, -1)
        gq = a.q_norm.weight.detach().to(torch.float64).numpy()
        gk = a.k_norm.weight.detach().to(torch.float64).numpy()
        for h in range(n_q):
            Q = gq[:, None] * Wq[h]
            K = gk[:, None] * Wk[h // (n_q // n_kv)]
            if gguf:  # the converter stores float32: compare with the float32 values
                Q = (gq.astype(np.float32)[:, None] * Wq[h].astype(np.float32)).astype(float)
                K = (gk.astype(np.float32)[:, None]
                     * Wk[h // (n_q // n_kv)].astype(np.float32)).astype(float)
            out[li, h] = (Q, K)
    return out


@pytest.mark.parametrize("fmt", ["hf", "gguf"])
def test_qk_norm_checkpoint_with_zero_gains(tmp_path: Path, fmt: str) -> None:
    """The issue's real case: --qk-norm fold with exact zeros in the gains. Every head is
    measured (none failed); each has dead dimensions; Theorem 3 holds for the live part."""
    import pyarrow.parquet as pq

    from qkforms.cli import main

    model, d = _zero_gain_qwen3(tmp_path)
    source = str(d)
    if fmt == "gguf":
        if llamacpp.converter_dir() is None:
            pytest.skip("llama.cpp's converter is not fetched (scripts/test.sh fetches it)")
        source = str(llamacpp.convert(d, tmp_path / "m.gguf"))
    out = tmp_path / "out"
    assert main(["survey", source, "--out", str(out), "--qk-norm", "fold", "--exact",
                 "--no-stats", "--no-progress"]) == 0
    rows = pq.read_table(out / "heads.parquet").to_pylist()
    refs = _reference_rows(model, source, gguf=fmt == "gguf")
    assert len(rows) == len(refs) and all(r["status"] == "ok" for r in rows)
    for r in rows:
        Q, K = refs[r["layer"], r["head"]]
        live = int(np.sum(Q.any(axis=1) & K.any(axis=1)))
        assert r["n_live"] == live < Q.shape[0]
        ref = exact.head_signature(Q, K, method="dense")
        assert (r["n_pos"], r["n_neg"], r["n_zero"]) == tuple(ref) == (live, live,
                                                                       Q.shape[1] - 2 * live)
        assert r["prediction"] == "thm3-live" and r["prediction_met"] is True
        L = K.T @ Q
        assert r["c"] == pytest.approx(qk.profile(L).c, abs=1e-7)
    # without --exact the same heads are decided in float (zero gains are exact zeros)
    out2 = tmp_path / "out2"
    assert main(["survey", source, "--out", str(out2), "--qk-norm", "fold", "--no-stats",
                 "--no-progress"]) == 0
    rows2 = pq.read_table(out2 / "heads.parquet").to_pylist()
    assert all(r["signature_by"] == "float" and r["prediction_met"] for r in rows2)
