"""GPT-2 / distilgpt2: the fused Conv1D ``c_attn``.

``h.{i}.attn.c_attn.weight`` is stored input x output, ``[N, 3N]`` (Conv1D computes
``x @ weight + bias``). Transposed it is ``[3N, N]``: rows ``0:N`` are the query map,
``N:2N`` the key map, ``2N:3N`` the value map, each cut into ``n_head`` consecutive
blocks of ``n = N / n_head`` rows. The bias ``[3N]`` has the same block order.
Positions are learned absolute embeddings added to the input.

Examples
--------
>>> import numpy as np
>>> from qkforms.models.layouts.gpt2 import LAYOUT
>>> spec = LAYOUT.spec({"model_type": "gpt2", "n_embd": 4, "n_head": 2, "n_layer": 1})
>>> W = np.arange(48.0).reshape(4, 12)            # stored [N, 3N]
>>> qk = LAYOUT.split(spec, {"qkv": W, "qkv_bias": np.arange(12.0)})
>>> qk.W_Q[1].tolist() == W.T[2:4].tolist(), qk.b_K.tolist()
(True, [[4.0, 5.0], [6.0, 7.0]])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from qkforms.errors import CheckpointError
from qkforms.models.config import ArchSpec, config_int
from qkforms.models.layouts import Layout, QKArrays, TensorRequest

__all__ = ["GPT2Layout", "LAYOUT"]


class GPT2Layout(Layout):
    """Fused Conv1D ``c_attn`` (input x output), Q|K|V blocks.

    Examples
    --------
    >>> GPT2Layout().model_types
    ('gpt2',)
    """

    name = "gpt2"
    model_types = ("gpt2",)

    def spec(self, cfg: Mapping[str, Any]) -> ArchSpec:
        """ArchSpec from a GPT-2 config (``n_embd``, ``n_head``, ``n_layer``)."""
        N = config_int(cfg, "n_embd", "hidden_size")
        heads = config_int(cfg, "n_head", "num_attention_heads")
        if N % heads:
            raise CheckpointError(f"gpt2: n_embd={N} is not divisible by n_head={heads}")
        return ArchSpec(architecture="gpt2", layout=self.name,
                        n_layers=config_int(cfg, "n_layer", "num_hidden_layers"),
                        N=N, n=N // heads, n_q=heads, n_kv=heads,
                        positional="absolute", has_qk_bias=True, causal=True)

    def requests(self, spec: ArchSpec, layer: int) -> list[TensorRequest]:
        """``c_attn`` weight ``[N, 3N]`` and bias ``[3N]``."""
        N = spec.N
        return [TensorRequest("qkv", f"h.{layer}.attn.c_attn.weight", (N, 3 * N)),
                TensorRequest("qkv_bias", f"h.{layer}.attn.c_attn.bias", (3 * N,))]

    def split(self, spec: ArchSpec, arrays: Mapping[str, np.ndarray]) -> QKArrays:
        """Transpose to output x input, take the Q and K blocks, cut into heads."""
        N, H, n = spec.N, spec.n_q, spec.n
        W = np.asarray(arrays["qkv"]).T
        bias = arrays.get("qkv_bias")
        b_Q = b_K = None
        if bias is not None:
            b_Q = np.array(bias[:N].reshape(H, n))
            b_K = np.array(bias[N:2 * N].reshape(H, n))
        return QKArrays(np.ascontiguousarray(W[:N].reshape(H, n, N)),
                        np.ascontiguousarray(W[N:2 * N].reshape(H, n, N)), b_Q, b_K)

    def norm_tensor(self, spec: ArchSpec, layer: int) -> str | None:
        """``h.{i}.ln_1.weight``."""
        return f"h.{layer}.ln_1.weight"


LAYOUT = GPT2Layout()
