"""llama.cpp GGUF files: one layout for every architecture of
:data:`qkforms.models.gguf_config.GGUF_ARCHITECTURES`.

Tensors (names as llama.cpp's converter writes them, shapes in output x input order):

* separate maps: ``blk.{i}.attn_q.weight`` ``[n_q n, N]``, ``blk.{i}.attn_k.weight``
  ``[n_kv n, N]`` and optional ``.bias`` ``[n_q n]``, ``[n_kv n]``;
* fused maps (phi3, gpt2, falcon): ``blk.{i}.attn_qkv.weight`` ``[n_q n + n_kv n +
  n_kv n_v, N]``, rows: all query heads, then all key heads, then the values (the
  converter already reordered Falcon's grouped layout into this order);
* q/k normalization gains (qwen3, gemma3, olmo2, stablelm, command-r):
  ``blk.{i}.attn_q_norm.weight`` / ``attn_k_norm.weight`` of shape ``[n]`` (shared by
  the heads), ``[H, n]`` (per head) or ``[H n]`` (over all heads).

Where the converter permuted each head's rows for llama.cpp's interleaved RoPE
(architectures llama, granite, olmo), :func:`~qkforms.models.layouts.llama.unpermute_llamacpp`
restores the model's own row order, weights and biases; nowhere else. With the
q/k-norm policy ``fold`` the gains (and the centering of a LayerNorm) are folded into
the maps (:func:`qkforms.models.scoremap.fold_qk_norm`).

Examples
--------
>>> from qkforms.models.config import ArchSpec
>>> from qkforms.models.gguf_config import GGUF_ARCHITECTURES
>>> spec = ArchSpec("phi3", "gguf", 1, 8, 4, 2, 1, "rope", 1e4, 1.0)
>>> layout = GGUFLayout(GGUF_ARCHITECTURES["phi3"], value_rows=4)
>>> [(r.name, r.shape) for r in layout.requests(spec, 0)]
[('blk.0.attn_qkv.weight', (16, 8))]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from qkforms.models.config import ArchSpec
from qkforms.models.gguf_config import GGUFArchitecture, spec_from_gguf
from qkforms.models.layouts import (
    Layout,
    QKArrays,
    TensorRequest,
    fold_qk_arrays,
    qk_norm_requests,
)
from qkforms.models.layouts.llama import unpermute_llamacpp
from qkforms.models.layouts.opt import separate_projections

__all__ = ["GGUFLayout"]


class GGUFLayout(Layout):
    """The q/k tensors of one GGUF file.

    Parameters
    ----------
    arch
        The file's :class:`~qkforms.models.gguf_config.GGUFArchitecture`.
    value_rows
        Rows of the value map inside a fused ``attn_qkv`` (``n_kv * value_length``).
    fold_qk_norm
        Read the q/k normalization gains and fold them (policy ``fold``).
    norm_shapes
        Stored shapes of ``attn_q_norm``/``attn_k_norm`` (checked like any tensor).

    Examples
    --------
    >>> from qkforms.models.gguf_config import GGUF_ARCHITECTURES
    >>> GGUFLayout(GGUF_ARCHITECTURES["llama"]).name
    'gguf'
    """

    name = "gguf"

    def __init__(self, arch: GGUFArchitecture, *, value_rows: int | None = None,
                 fold_qk_norm: bool = False,
                 norm_shapes: Mapping[str, tuple[int, ...]] | None = None) -> None:
        self.arch = arch
        self.model_types = (arch.name,)
        self.value_rows = value_rows
        self.fold = fold_qk_norm
        self.norm_shapes = dict(norm_shapes or {})

    def spec(self, cfg: Mapping[str, Any]) -> ArchSpec:
        """ArchSpec from GGUF metadata (:func:`~qkforms.models.gguf_config.spec_from_gguf`)."""
        return spec_from_gguf(cfg, [])

    def requests(self, spec: ArchSpec, layer: int) -> list[TensorRequest]:
        """The layer's q/k (or fused qkv) weights, biases and, to fold, q/k norm gains."""
        q_rows, k_rows = spec.n_q * spec.n, spec.n_kv * spec.n
        blk = f"blk.{layer}"
        if self.arch.fused:
            rows = q_rows + k_rows + (k_rows if self.value_rows is None else self.value_rows)
            out = [TensorRequest("qkv", f"{blk}.attn_qkv.weight", (rows, spec.N))]
            if spec.has_qk_bias:
                out.append(TensorRequest("qkv_bias", f"{blk}.attn_qkv.bias", (rows,)))
        else:
            out = [TensorRequest("q", f"{blk}.attn_q.weight", (q_rows, spec.N)),
                   TensorRequest("k", f"{blk}.attn_k.weight", (k_rows, spec.N))]
            if spec.has_qk_bias:
                out += [TensorRequest("q_bias", f"{blk}.attn_q.bias", (q_rows,)),
                        TensorRequest("k_bias", f"{blk}.attn_k.bias", (k_rows,))]
        if self.fold:
            out += qk_norm_requests(spec, f"{blk}.attn_q_norm.weight",
                                    f"{blk}.attn_k_norm.weight", self.norm_shapes)
        return out

    def split(self, spec: ArchSpec, arrays: Mapping[str, np.ndarray]) -> QKArrays:
        """Cut fused rows, undo the converter's permutation, reshape, fold q/k norms."""
        q_rows, k_rows = spec.n_q * spec.n, spec.n_kv * spec.n
        parts: dict[str, np.ndarray] = {}
        if self.arch.fused:
            W = np.asarray(arrays["qkv"])
            parts["q"], parts["k"] = W[:q_rows], W[q_rows:q_rows + k_rows]
            bias = arrays.get("qkv_bias")
            if bias is not None:
                b = np.asarray(bias)
                parts["q_bias"], parts["k_bias"] = b[:q_rows], b[q_rows:q_rows + k_rows]
        else:
            for role in ("q", "k", "q_bias", "k_bias"):
                if arrays.get(role) is not None:
                    parts[role] = np.asarray(arrays[role])
        if self.arch.permuted:
            for role, heads in (("q", spec.n_q), ("k", spec.n_kv), ("q_bias", spec.n_q),
                                ("k_bias", spec.n_kv)):
                if role in parts:
                    parts[role] = unpermute_llamacpp(parts[role], heads)
        qk = separate_projections(spec, parts)
        return fold_qk_arrays(spec, qk, arrays) if self.fold else qk

    def norm_tensor(self, spec: ArchSpec, layer: int) -> str | None:
        """``blk.{i}.attn_norm.weight`` (the gain of the norm before the attention)."""
        return f"blk.{layer}.attn_norm.weight"
