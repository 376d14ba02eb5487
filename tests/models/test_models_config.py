"""Config parsing for the surveyed model families (docs/theory.md §15) and RoPE settings.

The configs below carry only the fields the loader reads, with the field names each
family's ``config.json`` uses (GPT-2 ``n_embd``/``n_head``/``n_layer``; BLOOM ``n_head``/
``n_layer``; Pythia ``rotary_pct``/``rotary_emb_base``; Mistral explicit ``head_dim``).
Their head counts must add up to the survey's 9,512 heads.
"""

from __future__ import annotations

import pytest

from qkforms.errors import CheckpointError, UnsupportedArchitectureError
from qkforms.models.config import rope_settings, spec_from_config


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
    ({"model_type": "gemma3_text"}, UnsupportedArchitectureError, "q_norm"),
])
def test_bad_configs(cfg: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        spec_from_config(cfg)
