"""GPT-NeoX / Pythia: fused head-interleaved ``query_key_value``, partial RoPE.

``[gpt_neox.]layers.{i}.attention.query_key_value.weight`` is ``[3 H n, N]`` read as
``(H, 3, n, N)`` exactly as in BLOOM (index 0 = Q, 1 = K). Biases follow
``attention_bias`` (default true). Only the first ``rotary_pct`` of each head's
dimensions are rotated (``rotary_pct``/``partial_rotary_factor``; base
``rotary_emb_base``/``rope_theta``).

Examples
--------
>>> from qkforms.models.layouts.neox import LAYOUT
>>> spec = LAYOUT.spec({"model_type": "gpt_neox", "hidden_size": 512,
...     "num_attention_heads": 8, "num_hidden_layers": 6, "rotary_pct": 0.25,
...     "rotary_emb_base": 10000})
>>> spec.n, spec.rotary_fraction, spec.rope_base, spec.has_qk_bias
(64, 0.25, 10000.0, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from qkforms.errors import CheckpointError
from qkforms.models.config import ArchSpec, config_int, rope_settings
from qkforms.models.layouts import Layout, QKArrays, TensorRequest
from qkforms.models.layouts.bloom import interleaved_qkv

__all__ = ["NeoXLayout", "LAYOUT"]


class NeoXLayout(Layout):
    """Fused head-interleaved ``query_key_value``; RoPE on a fraction of each head.

    Examples
    --------
    >>> NeoXLayout().model_types
    ('gpt_neox',)
    """

    name = "neox"
    model_types = ("gpt_neox",)

    def spec(self, cfg: Mapping[str, Any]) -> ArchSpec:
        """ArchSpec from a GPT-NeoX config."""
        N = config_int(cfg, "hidden_size")
        heads = config_int(cfg, "num_attention_heads")
        if N % heads:
            raise CheckpointError(f"gpt_neox: hidden_size={N} is not divisible by "
                                  f"num_attention_heads={heads}")
        base, fraction, scaling = rope_settings(cfg, base_keys=("rotary_emb_base",),
                                                fraction_keys=("rotary_pct",))
        return ArchSpec(architecture="gpt_neox", layout=self.name,
                        n_layers=config_int(cfg, "num_hidden_layers"),
                        N=N, n=N // heads, n_q=heads, n_kv=heads, positional="rope",
                        rope_base=base, rotary_fraction=fraction, rope_scaling=scaling,
                        has_qk_bias=bool(cfg.get("attention_bias", True)), causal=True)

    def requests(self, spec: ArchSpec, layer: int) -> list[TensorRequest]:
        """The fused weight ``[3N, N]`` and (if ``attention_bias``) bias ``[3N]``."""
        base = f"layers.{layer}.attention.query_key_value"
        M = 3 * spec.n_q * spec.n
        out = [TensorRequest("qkv", f"{base}.weight", (M, spec.N))]
        if spec.has_qk_bias:
            out.append(TensorRequest("qkv_bias", f"{base}.bias", (M,)))
        return out

    def split(self, spec: ArchSpec, arrays: Mapping[str, np.ndarray]) -> QKArrays:
        """Read as ``(H, 3, n, N)``; index 0 = Q, 1 = K."""
        return interleaved_qkv(arrays["qkv"], arrays.get("qkv_bias"), heads=spec.n_q,
                               n=spec.n, N=spec.N)

    def norm_tensor(self, spec: ArchSpec, layer: int) -> str | None:
        """``layers.{i}.input_layernorm.weight``."""
        return f"layers.{layer}.input_layernorm.weight"


LAYOUT = NeoXLayout()
