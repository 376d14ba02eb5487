"""Config parsing for the surveyed model families (docs/theory.md §15) and RoPE settings.

The configs below carry only the fields the loader reads, with the field names each
family's ``config.json`` uses (GPT-2 ``n_embd``/``n_head``/``n_layer``; BLOOM ``n_head``/
``n_layer``; Pythia ``rotary_pct``/``rotary_emb_base``; Mistral explicit ``head_dim``).
Their head counts must add up to the survey's 9,512 heads.
"""

from __future__ import annotations

import pytest

from qkforms.errors import CheckpointError, UnsupportedArchitectureError
from qkforms.models.config import QKNorm, rope_settings
from qkforms.models.layouts import spec_from_config


def gpt2(N: int, H: int, L: int) -> dict:
    return {"model_type": "gpt2", "n_embd": N, "n_head": H, "n_layer": L}


def opt(N: int, H: int, L: int, **extra) -> dict:
    return {"model_type": "opt", "hidden_size": N, "num_attention_heads": H,
            "num_hidden_layers": L, **extra}


def bloom(N: int, H: int, L: int) -> dict:
    return {"model_type": "bloom", "hidden_size": N, "n_head": H, "n_layer": L}


SURVEY = {
    "distilgpt2": (gpt2(768, 12, 6), 64),
    "gpt2": (gpt2(768, 12, 12), 64),
    "gpt2-medium": (gpt2(1024, 16, 24), 64),
    "gpt2-large": (gpt2(1280, 20, 36), 64),
    "facebook/opt-125m": (opt(768, 12, 12), 64),
    "facebook/opt-350m": (opt(1024, 16, 24, word_embed_proj_dim=512,
                              do_layer_norm_before=False), 64),
    "facebook/opt-1.3b": (opt(2048, 32, 24), 64),
    "facebook/opt-2.7b": (opt(2560, 32, 32), 80),
    "facebook/opt-6.7b": (opt(4096, 32, 32), 128),
    "facebook/opt-13b": (opt(5120, 40, 40), 128),
    "bigscience/bloom-3b": (bloom(2560, 32, 30), 80),
    "bigscience/bloom-7b1": (bloom(4096, 32, 30), 128),
    "EleutherAI/pythia-70m-deduped": ({"model_type": "gpt_neox", "hidden_size": 512,
                                       "num_attention_heads": 8, "num_hidden_layers": 6,
                                       "rotary_pct": 0.25, "rotary_emb_base": 10000}, 64),
    "mistralai/Mistral-Small-24B-Base-2501": ({"model_type": "mistral", "hidden_size": 5120,
                                               "num_attention_heads": 32,
                                               "num_key_value_heads": 8, "head_dim": 128,
                                               "num_hidden_layers": 40,
                                               "rope_theta": 100000000.0}, 128),
}


def test_survey_head_count() -> None:
    specs = {name: spec_from_config(cfg) for name, (cfg, _) in SURVEY.items()}
    assert sum(s.n_layers * s.n_q for s in specs.values()) == 9512
    for name, (_, n) in SURVEY.items():
        assert specs[name].n == n, name
    mistral = specs["mistralai/Mistral-Small-24B-Base-2501"]
    assert (mistral.n_kv, mistral.kv_group, mistral.n_q * mistral.n, mistral.N) == (
        8, 4, 4096, 5120)
    assert not mistral.has_qk_bias and mistral.rope_base == 1e8
    pythia = specs["EleutherAI/pythia-70m-deduped"]
    assert (pythia.rotary_fraction, pythia.rope_base, pythia.has_qk_bias) == (0.25, 1e4, True)
    assert specs["bigscience/bloom-3b"].positional == "alibi"
    assert all(specs[k].has_qk_bias for k in SURVEY if "mistral" not in k)


def test_rope_settings_styles() -> None:
    assert rope_settings({}) == (10000.0, 1.0, None)
    new = {"rope_parameters": {"rope_type": "llama3", "rope_theta": 5e5, "factor": 8.0}}
    base, frac, scaling = rope_settings(new)
    assert (base, frac, scaling) == (5e5, 1.0, {"rope_type": "llama3", "factor": 8.0})
    old = {"rope_theta": 1e6, "rope_scaling": {"type": "linear", "factor": 4.0}}
    assert rope_settings(old) == (1e6, 1.0, {"type": "linear", "factor": 4.0})


@pytest.mark.parametrize(("cfg", "error", "match"), [
    (gpt2(770, 12, 2), CheckpointError, "not divisible"),
    ({"model_type": "opt", "hidden_size": 768, "num_hidden_layers": 2},
     CheckpointError, "num_attention_heads"),
    ({"model_type": "bert", "hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 1, "position_embedding_type": "relative_key"},
     UnsupportedArchitectureError, "relative"),
    (gpt2(768, 0, 2), CheckpointError, "positive"),
    ({"model_type": "gemma3n"}, UnsupportedArchitectureError, "AltUp"),
    ({"model_type": "qwen3_next"}, UnsupportedArchitectureError, "Gated DeltaNet"),
    ({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 1, "use_qk_norm": True}, UnsupportedArchitectureError,
     "use_qk_norm=true.*does not know where 'llama' checkpoints keep the gains"),
    ({"model_type": "cohere", "use_qk_norm": True}, UnsupportedArchitectureError,
     "use_qk_norm=true.*GGUF files of such models"),
    ({"model_type": "qwen3", "hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 1, "rms_norm_eps": "small"}, CheckpointError, "rms_norm_eps"),
    ({"model_type": "gemma3", "text_config": [1]}, CheckpointError, "text_config"),
    ({"model_type": "gemma3_text", "query_pre_attn_scalar": 0}, CheckpointError,
     "query_pre_attn_scalar"),
])
def test_bad_configs(cfg: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        spec_from_config(cfg)


#: configs shaped like those on the hub (only the fields the loader reads; transformers omits
#: defaults), with what they mean
QK_NORM_CONFIGS = {
    "Qwen/Qwen3-8B": ({"model_type": "qwen3", "hidden_size": 4096, "head_dim": 128,
                       "num_attention_heads": 32, "num_key_value_heads": 8,
                       "num_hidden_layers": 36, "rms_norm_eps": 1e-6, "rope_theta": 1e6,
                       "attention_bias": False},
                      (32, 8, 128, 4096, 1e6, None), QKNorm("rms", "head", 1e-6)),
    "Qwen/Qwen3-30B-A3B": ({"model_type": "qwen3_moe", "hidden_size": 2048, "head_dim": 128,
                            "num_attention_heads": 32, "num_key_value_heads": 4,
                            "num_hidden_layers": 48, "rms_norm_eps": 1e-6,
                            "rope_theta": 1e6},
                           (32, 4, 128, 2048, 1e6, None), QKNorm("rms", "head", 1e-6)),
    "allenai/OLMo-2-1124-7B": ({"model_type": "olmo2", "hidden_size": 4096,
                                "num_attention_heads": 32, "num_key_value_heads": 32,
                                "num_hidden_layers": 32, "rms_norm_eps": 1e-6,
                                "rope_theta": 5e5},
                               (32, 32, 128, 4096, 5e5, None), QKNorm("rms", "all", 1e-6)),
    # no rope_theta: OLMo 3's default 5e5
    "olmo3 (defaults)": ({"model_type": "olmo3", "hidden_size": 64, "num_attention_heads": 4,
                          "num_hidden_layers": 2},
                         (4, 4, 16, 64, 5e5, None), QKNorm("rms", "all", 1e-5)),
    "allenai/OLMoE-1B-7B-0924": ({"model_type": "olmoe", "hidden_size": 2048,
                                  "num_attention_heads": 16, "num_key_value_heads": 16,
                                  "num_hidden_layers": 16, "rms_norm_eps": 1e-5,
                                  "rope_theta": 1e4, "clip_qkv": None},
                                 (16, 16, 128, 2048, 1e4, None), QKNorm("rms", "all", 1e-5)),
    # text_config holds only what differs from Gemma3TextConfig's defaults
    "google/gemma-3-4b-it": ({"model_type": "gemma3", "text_config": {
        "hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
        "num_hidden_layers": 34, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
        "sliding_window": 1024}},
        (8, 4, 256, 2560, 1e6, {"rope_type": "linear", "factor": 8.0,
                                "rope_base_sliding_window": 1e4}),
        QKNorm("rms", "head", 1e-6, gain_offset=1.0)),
    "google/gemma-3-27b-it (text)": ({"model_type": "gemma3_text", "hidden_size": 5376,
                                      "num_attention_heads": 32, "num_key_value_heads": 16,
                                      "head_dim": 128, "query_pre_attn_scalar": 168,
                                      "num_hidden_layers": 62, "rope_parameters": {
                                          "full_attention": {"rope_type": "linear",
                                                             "factor": 8.0, "rope_theta": 1e6},
                                          "sliding_attention": {"rope_type": "default",
                                                                "rope_theta": 1e4}}},
                                     (32, 16, 128, 5376, 1e6,
                                      {"rope_type": "linear", "factor": 8.0,
                                       "rope_base_sliding_window": 1e4}),
                                     QKNorm("rms", "head", 1e-6, gain_offset=1.0)),
}


@pytest.mark.parametrize("name", list(QK_NORM_CONFIGS))
def test_qk_norm_configs(name: str) -> None:
    """The q/k-norm facts, head counts and RoPE of the q/k-normalized families."""
    cfg, (n_q, n_kv, n, N, base, scaling), norm = QK_NORM_CONFIGS[name]
    spec = spec_from_config(cfg)
    assert (spec.n_q, spec.n_kv, spec.n, spec.N) == (n_q, n_kv, n, N)
    assert (spec.rope_base, spec.rope_scaling, spec.qk_norm) == (base, scaling, norm)
    assert spec.architecture == cfg["model_type"] and not spec.has_qk_bias
    assert spec.causal and spec.attn_softcap is None
    # Gemma 3 27B scales by query_pre_attn_scalar^-1/2 = 168^-1/2, not 128^-1/2
    want_scale = 168 ** -0.5 if "27b" in name else None
    assert spec.attention_scale == want_scale


def test_gemma3_scores_facts() -> None:
    """Soft-capping and bidirectional attention (EmbeddingGemma) come from the config."""
    spec = spec_from_config({"model_type": "gemma3_text", "attn_logit_softcapping": 30.0,
                             "use_bidirectional_attention": True})
    assert spec.attn_softcap == 30.0 and not spec.causal
    assert spec.n_layers == 26 and spec.n == 256  # Gemma3TextConfig's defaults
