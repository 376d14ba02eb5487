"""Models held in memory equal the on-disk loader: ``from_transformers`` on every supported
Hugging Face layout, and ``from_transformer_lens`` on TransformerLens' ``TransformerBridge``
(processing off: the plain survey; ``fold_ln``: the ``--fold-norm`` form composed with the
centring projection) and on the ``HookedTransformer`` layout (repeated key heads).

The same tiny random ``transformers`` models as the faithfulness tests (tests/models/tiny.py)
are saved with ``save_pretrained`` and loaded from disk; the in-memory model must hand out
the same per-layer maps (bit for bit) and its survey the same heads table (to 1e-12).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import tiny

import qkforms.models as qm
from qkforms.errors import CheckpointError, QKFormsError, UnsupportedArchitectureError
from qkforms.survey import SurveyOptions, survey

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

#: every supported Hugging Face layout: (case, configs, q/k-norm policy)
CASES = ([(a, tiny.TINY_CONFIGS, "refuse") for a in tiny.TINY_CONFIGS]
         + [(a, tiny.QK_NORM_CONFIGS, "fold") for a in tiny.QK_NORM_CONFIGS])
#: the cases whose whole survey is compared too (fused, GQA + bias, q/k norm, multimodal)
SURVEYED = {"gpt2", "bloom", "llama", "qwen3", "gemma3"}
#: heads-table columns that are not statistics of the maps
NOT_STATS = {"model", "source"}


def _same_layers(a: qm.Model, b: qm.Model) -> None:
    assert a.info.spec == b.info.spec
    assert a.info.qk_norm_policy == b.info.qk_norm_policy
    for la, lb in zip(a.layers(), b.layers(), strict=True):
        assert np.array_equal(la.W_Q, lb.W_Q) and np.array_equal(la.W_K, lb.W_K)
        for x, y in ((la.b_Q, lb.b_Q), (la.b_K, lb.b_K)):
            assert (x is None) == (y is None)
            if x is not None:
                assert np.array_equal(x, y)
        assert la.kv_index.tolist() == lb.kv_index.tolist()


def _survey(model: qm.Model, out: Path, **opts: Any) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    survey([model], SurveyOptions(out=out, progress=False, **opts))
    return pq.read_table(out / "heads.parquet").to_pylist()


def _assert_rows_close(rows: list[dict], ref: list[dict], tol: float = 1e-12) -> None:
    assert len(rows) == len(ref) > 0
    for r, s in zip(rows, ref, strict=True):
        assert r["status"] == s["status"] == "ok", (r["status"], r.get("error"))
        for key, value in s.items():
            if key in NOT_STATS or not isinstance(value, float):
                if key not in NOT_STATS:
                    assert r[key] == value, key
                continue
            assert r[key] == pytest.approx(value, rel=tol, abs=tol), key


@pytest.mark.parametrize(("arch", "configs", "policy"), CASES, ids=[c[0] for c in CASES])
def test_from_transformers_equals_the_saved_model(arch: str, configs: dict, policy: str,
                                                  tmp_path: Path) -> None:
    model = tiny.tiny_hf_model(arch, configs=configs)
    model.save_pretrained(tmp_path / "saved", safe_serialization=True)
    disk = qm.load(tmp_path / "saved", qk_norm=policy)
    mem = qm.from_transformers(model, qk_norm=policy)
    assert mem.info.format == "transformers" and mem.info.weight_processing is None
    assert mem.info.files[0].path.startswith("<in memory: ")
    assert len(mem.info.files[0].sha256) == 64
    _same_layers(mem, disk)
    if arch in SURVEYED:
        rows = _survey(mem, tmp_path / "mem", qk_norm=policy, exact=True)
        ref = _survey(disk, tmp_path / "disk", qk_norm=policy, exact=True)
        _assert_rows_close(rows, ref)
        man = json.loads((tmp_path / "mem" / "manifest.json").read_text())
        assert man["models"][0]["format"] == "transformers"


def test_from_transformers_refuses_qk_norm_by_default() -> None:
    model = tiny.tiny_hf_model("qwen3", configs=tiny.QK_NORM_CONFIGS)
    with pytest.raises(UnsupportedArchitectureError, match="--qk-norm fold"):
        qm.from_transformers(model)


def test_from_transformers_sees_later_changes_and_hashes_them() -> None:
    model = tiny.tiny_hf_model("gpt2")
    before = qm.from_transformers(model)
    with torch.no_grad():
        model.transformer.h[0].attn.c_attn.weight[0, 0] += 1.0
    after = qm.from_transformers(model)
    assert before.info.files[0].sha256 != after.info.files[0].sha256
    assert before.layer(0).W_Q[0, 0, 0] == after.layer(0).W_Q[0, 0, 0]  # read at iteration


def test_not_a_model() -> None:
    with pytest.raises(QKFormsError, match="needs a transformers model"):
        qm.from_transformers(np.zeros(3))
    with pytest.raises(QKFormsError, match="needs a TransformerLens model"):
        qm.from_transformer_lens(object())


# ------------------------------------------------------------------ TransformerLens


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A word-level tokenizer saved locally (the bridge needs one; no hub)."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel

    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(WordLevel({f"t{i}": i for i in range(64)}, unk_token="t0")),
        bos_token="t1", eos_token="t2", pad_token="t3", unk_token="t0")
    path = tmp_path_factory.mktemp("tokenizer")
    tok.save_pretrained(path)
    return transformers.AutoTokenizer.from_pretrained(path)


#: case -> TransformerLens model name (selects its adapter; nothing is fetched)
BRIDGED = {"gpt2": "gpt2", "llama": "meta-llama/Llama-3.2-1B"}


def _bridge(arch: str, tokenizer: Any) -> tuple[Any, Any]:
    pytest.importorskip("transformer_lens")
    from transformer_lens.model_bridge import TransformerBridge

    model = tiny.tiny_hf_model(arch)
    bridge = TransformerBridge.boot_transformers(BRIDGED[arch], hf_model=model,
                                                 tokenizer=tokenizer, dtype=torch.float64)
    return model, bridge


@pytest.mark.parametrize("arch", list(BRIDGED))
def test_bridge_unprocessed_equals_the_plain_survey(arch: str, tokenizer: Any,
                                                    tmp_path: Path) -> None:
    _, bridge = _bridge(arch, tokenizer)
    if arch == "llama":  # TransformerBridge's grouped layout [n_layers, n_kv_heads, ...]
        assert tuple(bridge.W_K.shape) == (2, 2, 48, 16) and bridge.W_Q.shape[1] == 6
    lens = qm.from_transformer_lens(bridge)
    hf = qm.from_transformers(tiny.tiny_hf_model(arch))  # the same seed: the same weights
    assert lens.info.format == "transformer_lens" and lens.info.weight_processing is None
    for la, lb in zip(lens.layers(), hf.layers(), strict=True):
        assert np.array_equal(la.W_Q, lb.W_Q) and np.array_equal(la.W_K, lb.W_K)
        assert np.array_equal(la.b_Q, lb.b_Q) and np.array_equal(la.b_K, lb.b_K)
        assert la.kv_index.tolist() == lb.kv_index.tolist()
    _assert_rows_close(_survey(lens, tmp_path / "lens"), _survey(hf, tmp_path / "hf"))


def _norm_gains(model: Any, arch: str) -> list[np.ndarray]:
    layers = model.transformer.h if arch == "gpt2" else model.model.layers
    norm = "ln_1" if arch == "gpt2" else "input_layernorm"
    return [getattr(b, norm).weight.detach().numpy().copy() for b in layers]


@pytest.mark.parametrize("arch", list(BRIDGED))
def test_bridge_fold_ln_is_fold_norm_composed_with_centring(arch: str, tokenizer: Any,
                                                            tmp_path: Path) -> None:
    """``enable_compatibility_mode()``: each form is ``P D L D P`` (LayerNorm) or
    ``D L D`` (RMSNorm); TransformerLens 4 computes the fold in float32, so the maps
    agree to float32 rounding, and the survey records the processing."""
    _, bridge = _bridge(arch, tokenizer)
    model = tiny.tiny_hf_model(arch)  # the same seed: the weights before processing
    plain = [(lw.W_Q.copy(), lw.W_K.copy()) for lw in qm.from_transformers(model).layers()]
    gains = _norm_gains(model, arch)
    bridge.enable_compatibility_mode(disable_warnings=True)
    lens = qm.from_transformer_lens(bridge)
    want = "fold_ln+center" if arch == "gpt2" else "fold_ln"
    assert lens.info.weight_processing == want
    N = lens.info.N
    P = np.eye(N) - np.full((N, N), 1.0 / N) if arch == "gpt2" else np.eye(N)
    for lw, (W_Q, W_K), gamma in zip(lens.layers(), plain, gains, strict=True):
        fold_Q, fold_K = W_Q * gamma @ P, W_K * gamma @ P  # (W D) P, as --fold-norm then P
        scale = max(np.abs(fold_Q).max(), np.abs(fold_K).max())
        assert np.abs(lw.W_Q - fold_Q).max() <= 1e-6 * scale
        assert np.abs(lw.W_K - fold_K).max() <= 1e-6 * scale
        for h in range(lens.info.n_q):  # the forms themselves
            g = int(lw.kv_index[h])
            L = lw.W_K[g].T @ lw.W_Q[h]
            ref = P @ (gamma[:, None] * (W_K[g].T @ W_Q[h]) * gamma[None, :]) @ P
            assert np.abs(L - ref).max() <= 1e-5 * np.abs(ref).max()
    survey([lens], SurveyOptions(out=tmp_path / "out", progress=False))
    entry = json.loads((tmp_path / "out" / "manifest.json").read_text())["models"][0]
    assert entry["weight_processing"] == want and entry["format"] == "transformer_lens"


def test_hooked_transformer_layout_with_repeated_key_heads() -> None:
    """``HookedTransformer`` (TransformerLens < 4) stacks ``W_K`` with the key heads
    repeated to the query heads; a folded LayerNorm shows as ``LNPre``."""
    rng = np.random.default_rng(3)
    L, H, G, N, n = 2, 6, 2, 12, 4
    W_Q = rng.standard_normal((L, H, N, n))
    K = rng.standard_normal((L, G, N, n))
    b_Q, b_K = rng.standard_normal((L, H, n)), rng.standard_normal((L, G, n))
    cfg = SimpleNamespace(n_layers=L, d_model=N, d_head=n, n_heads=H, n_key_value_heads=G,
                          positional_embedding_type="rotary", rotary_dim=2, rotary_base=500.0,
                          normalization_type="LNPre", attention_dir="causal",
                          model_name="tiny-hooked")
    hooked = SimpleNamespace(cfg=cfg, W_Q=torch.from_numpy(W_Q),
                             W_K=torch.from_numpy(np.repeat(K, H // G, axis=1)),
                             b_Q=torch.from_numpy(b_Q),
                             b_K=torch.from_numpy(np.repeat(b_K, H // G, axis=1)))
    model = qm.from_transformer_lens(hooked)
    info = model.info
    assert (info.name, info.n_q, info.n_kv, info.positional) == ("tiny-hooked", H, G, "rope")
    assert (info.rotary_fraction, info.rope_base, info.weight_processing) == (
        0.5, 500.0, "fold_ln+center")
    for layer, lw in enumerate(model.layers()):
        assert lw.kv_index.tolist() == [0, 0, 0, 1, 1, 1]
        for h in range(H):
            hw = lw.head(h)
            g = h // (H // G)
            assert np.array_equal(hw.W_Q, W_Q[layer, h].T)
            assert np.array_equal(hw.W_K, K[layer, g].T)
            assert np.array_equal(hw.b_Q, b_Q[layer, h]) and np.array_equal(hw.b_K, b_K[layer, g])
    bad = np.repeat(K, H // G, axis=1)
    bad[0, 1] += 1.0  # not a repetition of the key heads
    hooked.W_K = torch.from_numpy(bad)
    with pytest.raises(CheckpointError, match="not each key/value head repeated 3 times"):
        qm.from_transformer_lens(hooked)
    hooked.cfg.use_qk_norm = True
    with pytest.raises(UnsupportedArchitectureError, match="from_transformers"):
        qm.from_transformer_lens(hooked)
