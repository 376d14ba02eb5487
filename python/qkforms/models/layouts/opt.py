"""OPT: separate ``q_proj`` / ``k_proj`` linear maps with biases.

``decoder.layers.{i}.self_attn.q_proj.weight`` is ``[H n, N]`` (output x input, rows
cut into ``H`` consecutive heads of ``n`` rows), likewise ``k_proj``; biases ``[H n]``
when ``enable_bias`` (default true). OPT multiplies the projected query by ``n^-1/2``
inside the module; that scale is not part of ``L`` (``docs/theory.md`` §1). Positions are learned
absolute embeddings added to the input.

Examples
--------
>>> import numpy as np
>>> from qkforms.models.layouts.opt import LAYOUT
>>> spec = LAYOUT.spec({"model_type": "opt", "hidden_size": 4, "num_attention_heads": 2,
...                     "num_hidden_layers": 3})
>>> [r.name for r in LAYOUT.requests(spec, 1)][:2]
['decoder.layers.1.self_attn.q_proj.weight', 'decoder.layers.1.self_attn.k_proj.weight']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from qkforms.errors import CheckpointError
from qkforms.models.config import ArchSpec, config_int
from qkforms.models.layouts import Layout, QKArrays, TensorRequest

__all__ = ["OPTLayout", "LAYOUT", "separate_projections"]


def separate_projections(spec: ArchSpec, arrays: Mapping[str, np.ndarray]) -> QKArrays:
    """Cut separate ``[n_q n, N]`` / ``[n_kv n, N]`` q/k weights (and biases) into heads.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.models.config import ArchSpec
    >>> spec = ArchSpec("llama", "llama", 1, 3, 2, 2, 1, "rope", 1e4, 1.0)
    >>> qk = separate_projections(spec, {"q": np.arange(12.0).reshape(4, 3),
    ...                                  "k": np.ones((2, 3))})
    >>> qk.W_Q[1].tolist(), qk.W_K.shape
    ([[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]], (1, 2, 3))
    """
    N, n = spec.N, spec.n
    W_Q = np.ascontiguousarray(np.asarray(arrays["q"]).reshape(spec.n_q, n, N))
    W_K = np.ascontiguousarray(np.asarray(arrays["k"]).reshape(spec.n_kv, n, N))
    b_Q = arrays.get("q_bias")
    b_K = arrays.get("k_bias")
    return QKArrays(W_Q, W_K,
                    None if b_Q is None else np.asarray(b_Q).reshape(spec.n_q, n),
                    None if b_K is None else np.asarray(b_K).reshape(spec.n_kv, n))


class OPTLayout(Layout):
    """Separate ``q_proj``/``k_proj`` with biases (``enable_bias``).

    Examples
    --------
    >>> OPTLayout().model_types
    ('opt',)
    """

    name = "opt"
    model_types = ("opt",)

    def spec(self, cfg: Mapping[str, Any]) -> ArchSpec:
        """ArchSpec from an OPT config."""
        N = config_int(cfg, "hidden_size")
        heads = config_int(cfg, "num_attention_heads")
        if N % heads:
            raise CheckpointError(f"opt: hidden_size={N} is not divisible by "
                                  f"num_attention_heads={heads}")
        return ArchSpec(architecture="opt", layout=self.name,
                        n_layers=config_int(cfg, "num_hidden_layers"),
                        N=N, n=N // heads, n_q=heads, n_kv=heads, positional="absolute",
                        has_qk_bias=bool(cfg.get("enable_bias", True)), causal=True)

    def requests(self, spec: ArchSpec, layer: int) -> list[TensorRequest]:
        """``q_proj``/``k_proj`` weights and (if enabled) biases."""
        base = f"decoder.layers.{layer}.self_attn"
        N, HN = spec.N, spec.n_q * spec.n
        out = [TensorRequest("q", f"{base}.q_proj.weight", (HN, N)),
               TensorRequest("k", f"{base}.k_proj.weight", (HN, N))]
        if spec.has_qk_bias:
            out += [TensorRequest("q_bias", f"{base}.q_proj.bias", (HN,)),
                    TensorRequest("k_bias", f"{base}.k_proj.bias", (HN,))]
        return out

    def split(self, spec: ArchSpec, arrays: Mapping[str, np.ndarray]) -> QKArrays:
        """Reshape the separate projections into heads."""
        return separate_projections(spec, arrays)


LAYOUT = OPTLayout()
