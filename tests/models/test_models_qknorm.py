"""Faithfulness of ``--qk-norm fold`` on Hugging Face checkpoints, architecture by
architecture.

For every case of ``tiny.QK_NORM_CONFIGS`` (Qwen3, Qwen3-MoE, OLMo 2, OLMo 3, OLMoE,
Gemma 3 text, Gemma 3 multimodal) a tiny random-initialised ``transformers`` model --
every parameter drawn from a seeded normal, so the q/k norm gains are non-trivial and of
both signs -- is saved with safetensors and loaded by qkforms with ``qk_norm="fold"``.
The model is run in float64 with its tokens at positions ``0 .. T-1``; for every layer,
query head, query token ``i`` and key token ``j`` its own pre-softmax score (the queries
and keys it multiplies, captured at its attention function) must equal

    ``cap( c * f_i g_j * (x_j, 1)^T L'_hat(i - j) (x_i, 1) )``

where ``L'_hat(d)`` is built from the loaded (folded) maps with the loaded RoPE facts
(``tiny.predicted_scores``), ``c`` the loaded attention scale, ``f, g`` the inverse RMS
of the model's own projections (computed here from its ``q_proj``/``k_proj`` modules and
its norms' epsilon, independently of qkforms), and ``cap`` the identity except for the
soft-capped Gemma 3 case. The tolerance reflects the float32 inside the models' RMSNorms
and RoPE tables.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import tiny

import qkforms.models as qm
from qkforms.errors import UnsupportedArchitectureError

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

CASES = list(tiny.QK_NORM_CONFIGS)
#: case -> (architecture recorded, q/k norm scope, gain offset)
EXPECTED = {
    "qwen3": ("qwen3", "head", 0.0),
    "qwen3_moe": ("qwen3_moe", "head", 0.0),
    "olmo2": ("olmo2", "all", 0.0),
    "olmo3": ("olmo3", "all", 0.0),
    "olmoe": ("olmoe", "all", 0.0),
    "gemma3_text": ("gemma3_text", "head", 1.0),
    "gemma3": ("gemma3", "head", 1.0),
}
T = 7


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory):
    cache: dict[str, tuple[object, str]] = {}

    def get(case: str) -> tuple[object, str]:
        if case not in cache:
            model = tiny.tiny_hf_model(case, seed=40 + CASES.index(case),
                                       configs=tiny.QK_NORM_CONFIGS)
            d = tmp_path_factory.mktemp(case)
            model.save_pretrained(str(d))
            assert (d / "model.safetensors").is_file()
            cache[case] = (model, str(d))
        return cache[case]

    return get


def _text_model(model: object) -> object:
    """The decoder that runs on text (the language model of a multimodal checkpoint)."""
    inner = getattr(model, "model", None)
    return getattr(inner, "language_model", None) or model


def _eps(norm: object) -> float:
    return float(getattr(norm, "variance_epsilon", None) or norm.eps)


def _layer_rope(info: qm.ModelInfo, layer_type: str | None) -> dict:
    """The RoPE facts of a layer as recorded: the sliding-window layers' own base."""
    if layer_type == "sliding_attention" and info.rope_scaling and (
            "rope_base_sliding_window" in info.rope_scaling):
        return {"rope_base": info.rope_scaling["rope_base_sliding_window"],
                "rotary_fraction": info.rotary_fraction, "rope_layout": info.rope_layout}
    return {"rope_base": info.rope_base, "rotary_fraction": info.rotary_fraction,
            "rope_scaling": info.rope_scaling, "rope_layout": info.rope_layout}


@pytest.mark.parametrize("case", CASES)
def test_hf_fold_scores_reproduce_model(case: str, saved) -> None:
    model, path = saved(case)
    loaded = qm.load(path, qk_norm="fold")
    info = loaded.info
    text = _text_model(model)
    cfg = text.config
    arch, scope, offset = EXPECTED[case]
    n_q, n_kv = cfg.num_attention_heads, cfg.num_key_value_heads
    n = getattr(cfg, "head_dim", None) or cfg.hidden_size // n_q
    assert (info.architecture, info.format, info.qk_norm_policy) == (arch, "safetensors",
                                                                      "fold")
    assert (info.n_layers, info.n_q, info.n_kv, info.n, info.N) == (
        2, n_q, n_kv, n, cfg.hidden_size)
    assert (info.qk_norm["kind"], info.qk_norm["scope"]) == ("rms", scope)
    assert info.qk_norm["gain_offset"] == offset
    assert info.has_qk_bias == bool(getattr(cfg, "attention_bias", False))
    softcap = info.attn_softcap
    assert softcap == getattr(cfg, "attn_logit_softcapping", None)
    ids = torch.randint(0, 60, (1, T), generator=torch.Generator().manual_seed(12))
    captured = tiny.capture_attention(text, ids)
    modules = tiny.attention_modules(text)
    layer_types = getattr(cfg, "layer_types", None) or [None] * info.n_layers
    X = None
    checked = 0
    for lw, cap, mod, layer_type in zip(loaded.layers(), captured, modules, layer_types,
                                        strict=True):
        scale = info.attention_scale if info.attention_scale is not None else n ** -0.5
        assert scale == pytest.approx(cap.scaling, rel=1e-12)
        eps = _eps(mod.q_norm)
        assert info.qk_norm["eps"] == pytest.approx(eps, rel=1e-12) == _eps(mod.k_norm)
        f = tiny.norm_factors(tiny.projection_before_norm(mod, cap.x, "q", n_q), "rms",
                              scope, eps)
        g = tiny.norm_factors(tiny.projection_before_norm(mod, cap.x, "k", n_kv), "rms",
                              scope, eps)
        X = np.hstack([cap.x, np.ones((T, 1))])
        rope = _layer_rope(info, layer_type)
        for hw in lw.heads():
            model_scores = cap.scaling * cap.q[hw.head] @ cap.k[hw.kv_head].T  # [query, key]
            ours = tiny.predicted_scores(hw, X, scale, f, g, rope)
            if softcap is not None:
                model_scores = softcap * np.tanh(model_scores / softcap)
                ours = softcap * np.tanh(ours / softcap)
            size = np.abs(model_scores).max()
            assert size > 0.01  # a real, non-degenerate score
            np.testing.assert_allclose(ours, model_scores, rtol=0, atol=2e-6 * size,
                                       err_msg=f"{case} layer {lw.layer} head {hw.head}")
            big = np.abs(model_scores) > 1e-6 * size  # L' fixes the sign of every score
            assert np.array_equal(np.sign(ours[big]), np.sign(model_scores[big]))
            checked += 1
    assert checked == 2 * n_q


@pytest.mark.parametrize("case", CASES)
def test_hf_fold_is_the_gains(case: str, saved) -> None:
    """The folded maps are diag(gain) W of the model's own parameters (gain: the stored
    weight plus the architecture's offset) -- and policy refuse names --qk-norm fold."""
    model, path = saved(case)
    with pytest.raises(UnsupportedArchitectureError,
                       match=r"normalizes its projected queries and keys \(RMSNorm over "
                             r".*q_norm.weight.*Use --qk-norm fold"):
        qm.load(path)
    text = _text_model(model)
    _, scope, offset = EXPECTED[case]
    loaded = qm.load(path, qk_norm="fold")
    for lw, mod in zip(loaded.layers(), tiny.attention_modules(text), strict=True):
        for side, W in (("q", lw.W_Q), ("k", lw.W_K)):
            stored = getattr(mod, f"{side}_proj").weight.detach().numpy()
            gain = getattr(mod, f"{side}_norm").weight.detach().numpy() + offset
            heads = W.shape[0]
            rows = np.tile(gain, heads) if scope == "head" else gain
            assert rows.shape == (stored.shape[0],)
            np.testing.assert_array_equal(W.reshape(stored.shape), rows[:, None] * stored)
            assert not np.allclose(rows, rows[0])  # non-trivial gains


def test_gemma3_multimodal_reads_the_language_model(saved) -> None:
    """The vision tower's layers are named like the decoder's; the language model's are
    the ones read, and its norm before the attention has gain 1 + w (--fold-norm)."""
    model, path = saved("gemma3")
    loaded = qm.load(path, qk_norm="fold")
    names = loaded.tensor_names(1)
    assert names["q"] == "language_model.model.layers.1.self_attn.q_proj.weight"
    assert names["k_norm"] == "language_model.model.layers.1.self_attn.k_norm.weight"
    layer = _text_model(model).layers[1]
    np.testing.assert_array_equal(loaded.norm_weight(1),
                                  1.0 + layer.input_layernorm.weight.detach().numpy())


def test_olmo2_has_no_norm_before_attention(saved) -> None:
    loaded = qm.load(saved("olmo2")[1], qk_norm="fold")
    with pytest.raises(UnsupportedArchitectureError, match="post-norm"):
        loaded.norm_weight(0)


def test_survey_of_hf_checkpoints_records_policy(saved, tmp_path) -> None:
    """``qkforms survey --qk-norm fold`` on Hugging Face Qwen3 and Gemma 3 checkpoints:
    the rows are the statistics of L', and manifest, summary and report say so exactly
    as for GGUF files; the default policy refuses before any work."""
    import argparse
    import contextlib
    import io

    import pyarrow.parquet as pq

    from qkforms.main_command import configure, run
    from qkforms.report.build import build_report

    qwen3, gemma3 = saved("qwen3")[1], saved("gemma3_text")[1]
    parser = argparse.ArgumentParser()
    configure(parser)
    out = tmp_path / "out"
    with contextlib.redirect_stdout(io.StringIO()):
        assert run(parser.parse_args([qwen3, gemma3, "--out", str(out), "--qk-norm", "fold",
                                      "--no-stats", "--no-progress"])) == 0
    man = json.loads((out / "manifest.json").read_text())
    assert man["options"]["qk_norm"] == "fold" and man["qk_norm"]["policy"] == "fold"
    assert "fixes the sign of every score" in man["qk_norm"]["meaning"]
    q_entry, g_entry = man["models"]
    assert q_entry["format"] == g_entry["format"] == "safetensors"
    assert q_entry["qk_norm_policy"] == "fold" and q_entry["qk_norm"]["scope"] == "head"
    assert [note[:28] for note in q_entry["notes"]] == ["q/k normalization folded (--"]
    assert g_entry["qk_norm"]["gain_offset"] == 1.0
    assert g_entry["attention_scale"] == pytest.approx(12 ** -0.5)
    assert g_entry["attn_softcap"] == 5.0
    assert len(g_entry["notes"]) == 2
    assert g_entry["notes"][0].startswith("logit soft-capping")
    assert "L' = (C W_K)^T" in g_entry["notes"][1]
    summary = (out / "summary.md").read_text()
    assert "q/k-normalized heads (--qk-norm fold)" in summary and "(cap = 5)" in summary
    heads = pq.read_table(out / "heads.parquet").to_pandas()
    for entry, path in ((q_entry, qwen3), (g_entry, gemma3)):
        rows = heads[heads.model == entry["model"]].set_index(["layer", "head"])
        assert len(rows) == 8
        for hw in qm.load(path, qk_norm="fold").heads():
            want = np.linalg.norm(hw.W_K.T @ hw.W_Q) ** 2
            assert rows.loc[(hw.layer, hw.head), "norm_sq"] == pytest.approx(want, rel=1e-9)
    page = build_report(out, pngs=False, n_boot=0, fits=False).read_text(encoding="utf-8")
    assert 'id="score-notes"' in page and "q/k normalization folded" in page
    with pytest.raises(UnsupportedArchitectureError, match="--qk-norm fold"):
        run(parser.parse_args([qwen3, "--out", str(tmp_path / "o2"), "--no-stats"]))
    assert not (tmp_path / "o2" / "manifest.json").exists()


def test_config_defaults_are_those_of_transformers() -> None:
    """The defaults the layouts assume for fields a config.json omits are the ones of
    transformers' config classes (which decide what such a checkpoint means)."""
    import transformers

    from qkforms.models.layouts.gemma3 import TEXT_DEFAULTS
    from qkforms.models.layouts.llama import LlamaLayout
    from qkforms.models.layouts.olmo2 import Olmo2Layout

    def value(cfg: object, key: str) -> object:
        rope = getattr(cfg, "rope_parameters", None) or {}
        if key == "rope_theta" and "full_attention" in rope:
            return rope["full_attention"]["rope_theta"]
        if key == "rope_local_base_freq":
            return rope["sliding_attention"]["rope_theta"]
        return getattr(cfg, key)

    classes = {"qwen3": "Qwen3Config", "qwen3_moe": "Qwen3MoeConfig",
               "olmoe": "OlmoeConfig", "olmo2": "Olmo2Config", "olmo3": "Olmo3Config"}
    checked = 0
    for layout in (LlamaLayout, Olmo2Layout):
        for model_type, defaults in layout.defaults.items():
            cfg = getattr(transformers, classes[model_type])()
            for key, want in defaults.items():
                assert value(cfg, key) == want, (model_type, key)
                checked += 1
    text = transformers.Gemma3TextConfig()
    for key, want in TEXT_DEFAULTS.items():
        assert value(text, key) == want, ("gemma3_text", key)
        checked += 1
    assert checked == 19
