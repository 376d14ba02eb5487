"""BLOOM: fused, head-interleaved ``query_key_value`` and ALiBi.

``h.{i}.self_attention.query_key_value.weight`` is ``[3 H n, N]`` (output x input) and
is read as ``(H, 3, n, N)``: for head ``h`` index 0 is the query map, 1 the key map,
2 the value map -- per-head interleaving, *not* GPT-2's Q|K|V block order. The bias
``[3 H n]`` is read as ``(H, 3, n)``. ALiBi adds a distance-dependent scalar to the
score, which leaves the form ``W_K^T W_Q`` position independent.

Examples
--------
>>> import numpy as np
>>> from qkforms.models.layouts.bloom import LAYOUT, interleaved_qkv
>>> W = np.arange(24.0).reshape(6, 4)       # H = 2 heads of n = 1 row, N = 4
>>> qk = interleaved_qkv(W, None, heads=2, n=1, N=4)
>>> qk.W_Q[:, 0].tolist(), qk.W_K[:, 0].tolist()
([[0.0, 1.0, 2.0, 3.0], [12.0, 13.0, 14.0, 15.0]], [[4.0, 5.0, 6.0, 7.0], [16.0, 17.0, 18.0, 19.0]])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from qkforms.errors import CheckpointError
from qkforms.models.config import ArchSpec, config_int
from qkforms.models.layouts import Layout, QKArrays, TensorRequest

__all__ = ["BloomLayout", "LAYOUT", "interleaved_qkv"]


def interleaved_qkv(weight: np.ndarray, bias: np.ndarray | None, *, heads: int, n: int,
                    N: int) -> QKArrays:
    """Split a head-interleaved fused ``[3 H n, N]`` map into per-head Q and K.

    Examples
    --------
    >>> import numpy as np
    >>> qk = interleaved_qkv(np.zeros((6, 2)), np.arange(6.0), heads=1, n=2, N=2)
    >>> qk.b_Q.tolist(), qk.b_K.tolist()
    ([[0.0, 1.0]], [[2.0, 3.0]])
    """
    W = np.asarray(weight).reshape(heads, 3, n, N)
    b_Q = b_K = None
    if bias is not None:
        b = np.asarray(bias).reshape(heads, 3, n)
        b_Q, b_K = np.array(b[:, 0]), np.array(b[:, 1])
    return QKArrays(np.ascontiguousarray(W[:, 0]), np.ascontiguousarray(W[:, 1]), b_Q, b_K)


class BloomLayout(Layout):
    """Fused head-interleaved ``query_key_value`` with biases, ALiBi.

    Examples
    --------
    >>> BloomLayout().model_types
    ('bloom',)
    """

    name = "bloom"
    model_types = ("bloom",)

    def spec(self, cfg: Mapping[str, Any]) -> ArchSpec:
        """ArchSpec from a BLOOM config (``hidden_size``/``n_embed``, ``n_head``)."""
        N = config_int(cfg, "hidden_size", "n_embed")
        heads = config_int(cfg, "n_head", "num_attention_heads")
        if N % heads:
            raise CheckpointError(f"bloom: hidden_size={N} is not divisible by n_head={heads}")
        return ArchSpec(architecture="bloom", layout=self.name,
                        n_layers=config_int(cfg, "n_layer", "num_hidden_layers"),
                        N=N, n=N // heads, n_q=heads, n_kv=heads, positional="alibi",
                        has_qk_bias=True, causal=True)

    def requests(self, spec: ArchSpec, layer: int) -> list[TensorRequest]:
        """The fused weight ``[3N, N]`` and bias ``[3N]``."""
        base = f"h.{layer}.self_attention.query_key_value"
        M = 3 * spec.n_q * spec.n
        return [TensorRequest("qkv", f"{base}.weight", (M, spec.N)),
                TensorRequest("qkv_bias", f"{base}.bias", (M,))]

    def split(self, spec: ArchSpec, arrays: Mapping[str, np.ndarray]) -> QKArrays:
        """Read as ``(H, 3, n, N)``; index 0 = Q, 1 = K."""
        return interleaved_qkv(arrays["qkv"], arrays.get("qkv_bias"), heads=spec.n_q,
                               n=spec.n, N=spec.N)

    def norm_tensor(self, spec: ArchSpec, layer: int) -> str | None:
        """``h.{i}.input_layernorm.weight``."""
        return f"h.{layer}.input_layernorm.weight"


LAYOUT = BloomLayout()
