"""BERT encoders: ``attention.self.query`` / ``attention.self.key`` with biases.

``encoder.layer.{i}.attention.self.query.weight`` is ``[H n, N]`` (output x input), bias
``[H n]``; likewise ``key``. The encoder is bidirectional (no causal mask) and uses
learned absolute position embeddings; relative position embedding types
(``relative_key``, ``relative_key_query``) add position-dependent terms to the score and
are refused.

Examples
--------
>>> from qkforms.models.layouts.bert import LAYOUT
>>> spec = LAYOUT.spec({"model_type": "bert", "hidden_size": 384,
...     "num_attention_heads": 12, "num_hidden_layers": 6})
>>> spec.n, spec.causal, spec.has_qk_bias
(32, False, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from qkforms.errors import CheckpointError, UnsupportedArchitectureError
from qkforms.models.config import ArchSpec, config_int
from qkforms.models.layouts import Layout, QKArrays, TensorRequest
from qkforms.models.layouts.opt import separate_projections

__all__ = ["BertLayout", "LAYOUT"]


class BertLayout(Layout):
    """Separate ``query``/``key`` linear maps with biases; bidirectional.

    Examples
    --------
    >>> BertLayout().model_types
    ('bert',)
    """

    name = "bert"
    model_types = ("bert",)

    def spec(self, cfg: Mapping[str, Any]) -> ArchSpec:
        """ArchSpec from a BERT config."""
        kind = cfg.get("position_embedding_type", "absolute")
        if kind not in (None, "absolute"):
            raise UnsupportedArchitectureError(
                f"bert with position_embedding_type={kind!r} is not supported: relative "
                "position embeddings add a displacement-dependent term to the score")
        N = config_int(cfg, "hidden_size")
        heads = config_int(cfg, "num_attention_heads")
        if N % heads:
            raise CheckpointError(f"bert: hidden_size={N} is not divisible by "
                                  f"num_attention_heads={heads}")
        return ArchSpec(architecture="bert", layout=self.name,
                        n_layers=config_int(cfg, "num_hidden_layers"),
                        N=N, n=N // heads, n_q=heads, n_kv=heads, positional="absolute",
                        has_qk_bias=True, causal=False)

    def requests(self, spec: ArchSpec, layer: int) -> list[TensorRequest]:
        """``query``/``key`` weights and biases."""
        base = f"encoder.layer.{layer}.attention.self"
        N, HN = spec.N, spec.n_q * spec.n
        return [TensorRequest("q", f"{base}.query.weight", (HN, N)),
                TensorRequest("k", f"{base}.key.weight", (HN, N)),
                TensorRequest("q_bias", f"{base}.query.bias", (HN,)),
                TensorRequest("k_bias", f"{base}.key.bias", (HN,))]

    def split(self, spec: ArchSpec, arrays: Mapping[str, np.ndarray]) -> QKArrays:
        """Reshape into heads."""
        return separate_projections(spec, arrays)

    def norm_tensor(self, spec: ArchSpec, layer: int) -> str | None:
        """Post-LN encoder: the input of layer i is the output LayerNorm of layer i - 1
        (the embeddings' LayerNorm for layer 0)."""
        if layer == 0:
            return "embeddings.LayerNorm.weight"
        return f"encoder.layer.{layer - 1}.output.LayerNorm.weight"


LAYOUT = BertLayout()
