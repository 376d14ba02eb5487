"""Gemma 3: the Llama layout with per-head q/k RMSNorm of gain ``1 + w``.

Hugging Face ``Gemma3ForCausalLM`` (model type ``gemma3_text``) and the text part of
``Gemma3ForConditionalGeneration`` (``gemma3``: the config's ``text_config``, the tensors
under the prefix holding ``language_model``, next to a SigLIP vision tower whose layers
are named alike). Tensors as in :mod:`qkforms.models.layouts.llama`; each projected query
and key head goes through ``Gemma3RMSNorm`` (gains ``self_attn.q_norm.weight`` /
``k_norm.weight`` of shape ``[n]``, effective gain ``1 + w``, ``rms_norm_eps``) before
RoPE, and so does the residual stream before the attention (``input_layernorm``, also
``1 + w``). The score is scaled by ``query_pre_attn_scalar^-1/2`` (recorded as
``attention_scale`` when it is not ``n^-1/2``) and soft-capped when
``attn_logit_softcapping`` is set. Sliding-window layers have their own RoPE base
(``rope_base_sliding_window`` in the scaling, :func:`~qkforms.models.config.rope_settings`).

``config.json`` files written by ``transformers`` omit the fields of ``text_config`` that
equal ``Gemma3TextConfig``'s defaults (the Gemma 3 4B config names only ``hidden_size``,
``intermediate_size``, ``num_hidden_layers``, ``rope_scaling``, ``sliding_window``), so
the missing ones are taken from :data:`TEXT_DEFAULTS`.

Examples
--------
>>> spec = LAYOUT.spec({"model_type": "gemma3", "text_config": {
...     "hidden_size": 2560, "num_hidden_layers": 34, "model_type": "gemma3_text",
...     "rope_scaling": {"factor": 8.0, "rope_type": "linear"}}})
>>> spec.n_q, spec.n_kv, spec.n, spec.N, spec.rope_base, spec.attention_scale
(8, 4, 256, 2560, 1000000.0, None)
>>> spec.rope_scaling
{'rope_type': 'linear', 'factor': 8.0, 'rope_base_sliding_window': 10000.0}
>>> spec.qk_norm
QKNorm(kind='rms', scope='head', eps=1e-06, gain_offset=1.0)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

from qkforms.errors import CheckpointError
from qkforms.models.config import ArchSpec, config_float
from qkforms.models.layouts.llama import LlamaLayout

__all__ = ["LAYOUT", "TEXT_DEFAULTS", "Gemma3Layout"]

#: ``transformers.Gemma3TextConfig``'s defaults of the fields the loader reads
TEXT_DEFAULTS: dict[str, Any] = {
    "hidden_size": 2304,
    "num_hidden_layers": 26,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "rms_norm_eps": 1e-6,
    "attention_bias": False,
    "query_pre_attn_scalar": 256,
    "attn_logit_softcapping": None,
    "use_bidirectional_attention": False,
    "rope_theta": 1_000_000.0,  # full-attention layers
    "rope_local_base_freq": 10_000.0,  # sliding-window layers
}


class Gemma3Layout(LlamaLayout):
    """Gemma 3 text decoders (also inside multimodal checkpoints).

    Examples
    --------
    >>> Gemma3Layout().model_types
    ('gemma3_text', 'gemma3')
    """

    name = "gemma3"
    model_types = ("gemma3_text", "gemma3")
    qk_norm_scopes: ClassVar[dict[str, str]] = {"gemma3_text": "head", "gemma3": "head"}
    qk_gain_offset: ClassVar[float] = 1.0
    defaults: ClassVar[dict[str, dict[str, Any]]] = {}

    def spec(self, cfg: Mapping[str, Any]) -> ArchSpec:
        """ArchSpec from a Gemma 3 config (its ``text_config`` for model type ``gemma3``)."""
        model_type = str(cfg.get("model_type", "gemma3_text"))
        text = (cfg.get("text_config") or {}) if model_type == "gemma3" else cfg
        if not isinstance(text, Mapping):
            raise CheckpointError(f"{model_type}: config field 'text_config' must be an "
                                  f"object, got {text!r}")
        text = {**TEXT_DEFAULTS, **{k: v for k, v in text.items() if v is not None},
                "model_type": model_type}
        if not isinstance(text.get("rope_parameters"), Mapping):
            # the older fields, as transformers' Gemma3TextConfig reads them
            full = {"rope_type": "default", "rope_theta": text["rope_theta"]}
            if isinstance(text.get("rope_scaling"), Mapping):
                full.update(text["rope_scaling"])
            text["rope_parameters"] = {
                "full_attention": full,
                "sliding_attention": {"rope_type": "default",
                                      "rope_theta": text["rope_local_base_freq"]}}
        spec = super().spec(text)
        scalar = config_float(text["query_pre_attn_scalar"],
                              f"{model_type}: config field query_pre_attn_scalar")
        softcap = text.get("attn_logit_softcapping")
        return dataclasses.replace(
            spec, attention_scale=None if scalar == spec.n else scalar ** -0.5,
            attn_softcap=None if softcap is None else config_float(
                softcap, f"{model_type}: config field attn_logit_softcapping"),
            causal=not text.get("use_bidirectional_attention"))

    def norm_gain_offset(self, spec: ArchSpec) -> float:
        """1: ``input_layernorm`` multiplies by ``1 + w``."""
        return 1.0

    def prefix_marker(self, spec: ArchSpec) -> str:
        """``"language_model"`` in multimodal checkpoints (model type ``gemma3``)."""
        return "language_model" if spec.architecture == "gemma3" else ""


LAYOUT = Gemma3Layout()
