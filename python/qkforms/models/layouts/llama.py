"""Llama-style decoders (Llama, Mistral, Qwen2, Qwen3, Qwen3-MoE, OLMoE) in Hugging Face
and GGUF form.

Hugging Face: ``layers.{i}.self_attn.q_proj.weight`` ``[n_q n, N]`` and ``k_proj``
``[n_kv n, N]`` (output x input, consecutive heads of ``n`` rows). With grouped-query
attention query head ``h`` reads key head ``floor(h / (n_q / n_kv))``. The head dimension
may be given explicitly (``head_dim``) and differ from ``N / n_q`` (Mistral-Small-24B:
``32 * 128 = 4096 != 5120``). Biases: Llama follows ``attention_bias`` (default false),
Qwen2 always has q/k biases, Mistral never.

q/k normalization (:attr:`LlamaLayout.qk_norm_scopes`): Qwen3 and Qwen3-MoE apply an
RMSNorm to each projected query and key head, gains ``self_attn.q_norm.weight`` /
``k_norm.weight`` of shape ``[n]`` shared by the heads; OLMoE one RMSNorm over all
heads, gains ``[n_q n]`` / ``[n_kv n]``. Both before RoPE, without bias, with the
config's ``rms_norm_eps``; with the q/k-norm policy ``fold`` the gains are folded into
the maps (:func:`~qkforms.models.layouts.fold_qk_arrays`). OLMoE's ``clip_qkv`` is
refused.

GGUF (llama.cpp, architectures ``llama``, ``granite``, ``olmo``; read by
:mod:`qkforms.models.layouts.gguf`): llama.cpp's converter permutes the rows of each
head so that its interleaved ("normal") RoPE sees the pairs that Hugging Face's
split-half RoPE rotates together::

    permute(W, H) = W.reshape(H, 2, n/2, N).swapaxes(1, 2).reshape(W.shape)

(with ``H = n_kv`` for the key map). :func:`unpermute_llamacpp` inverts it --
``W.reshape(H, n/2, 2, N).swapaxes(1, 2)`` -- so heads match the Hugging Face layout.
The same permutation applies to biases.

Examples
--------
>>> import numpy as np
>>> W = np.arange(8.0).reshape(8, 1)                 # one head of n = 8 rows
>>> permuted = W.reshape(1, 2, 4, 1).swapaxes(1, 2).reshape(8, 1)
>>> permuted[:, 0].tolist()
[0.0, 4.0, 1.0, 5.0, 2.0, 6.0, 3.0, 7.0]
>>> unpermute_llamacpp(permuted, 1)[:, 0].tolist()
[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from qkforms.errors import CheckpointError
from qkforms.models.config import (
    ArchSpec,
    QKNorm,
    config_float,
    config_int,
    refuse_clamped_qkv,
    rope_settings,
)
from qkforms.models.layouts import (
    Layout,
    QKArrays,
    TensorRequest,
    fold_qk_arrays,
    qk_norm_requests,
)
from qkforms.models.layouts.opt import separate_projections

__all__ = ["LAYOUT", "LlamaLayout", "unpermute_llamacpp"]

#: model types with q/k biases regardless of the config
_ALWAYS_BIAS = {"qwen2"}
#: model types without q/k biases regardless of the config
_NEVER_BIAS = {"mistral"}


def unpermute_llamacpp(weights: np.ndarray, n_head: int) -> np.ndarray:
    """Undo llama.cpp's q/k row permutation (``convert_hf_to_gguf`` ``permute``).

    Parameters
    ----------
    weights
        ``[n_head * n, ...]`` rows as stored in the GGUF file (weights or biases).
    n_head
        Heads of this map (query heads for ``attn_q``, key/value heads for ``attn_k``).

    Returns
    -------
    numpy.ndarray
        Rows in Hugging Face order (split-half RoPE pairs ``i``, ``i + n/2``).

    Examples
    --------
    >>> import numpy as np
    >>> rows = np.arange(12.0)                         # 2 heads, n = 6
    >>> hf = rows.reshape(2, 2, 3).swapaxes(1, 2).reshape(12)   # what llama.cpp stores
    >>> unpermute_llamacpp(hf, 2).tolist() == rows.tolist()
    True
    """
    w = np.asarray(weights)
    rows = w.shape[0]
    if rows % (2 * n_head):
        raise CheckpointError(f"cannot undo the llama.cpp permutation: {rows} rows do not "
                              f"split into {n_head} heads of even size")
    half = rows // n_head // 2
    return w.reshape(n_head, half, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


class LlamaLayout(Layout):
    """Separate q/k projections, grouped-query attention, explicit ``head_dim``, and the
    q/k RMSNorm of the model types in :attr:`qk_norm_scopes`.

    Examples
    --------
    >>> LlamaLayout().model_types
    ('llama', 'mistral', 'qwen2', 'qwen3', 'qwen3_moe', 'olmoe')
    """

    name = "llama"
    model_types: tuple[str, ...] = ("llama", "mistral", "qwen2", "qwen3", "qwen3_moe",
                                    "olmoe")
    #: model types that RMS-normalize their projected queries and keys: over each head
    #: (``"head"``, gains ``[n]``) or over all heads at once (``"all"``, gains ``[H n]``)
    qk_norm_scopes: ClassVar[dict[str, str]] = {"qwen3": "head", "qwen3_moe": "head",
                                                "olmoe": "all"}
    #: the effective q/k-norm gain is the stored weight plus this
    qk_gain_offset: ClassVar[float] = 0.0
    #: defaults of ``transformers``' config classes for fields a ``config.json`` may omit
    defaults: ClassVar[dict[str, dict[str, Any]]] = {
        "qwen3": {"head_dim": 128, "rms_norm_eps": 1e-6},
        "qwen3_moe": {"rms_norm_eps": 1e-6},
        "olmoe": {"rms_norm_eps": 1e-5},
    }

    def spec(self, cfg: Mapping[str, Any]) -> ArchSpec:
        """ArchSpec from a config of one of :attr:`model_types`."""
        model_type = str(cfg.get("model_type", "llama"))
        cfg = {**self.defaults.get(model_type, {}),
               **{k: v for k, v in cfg.items() if v is not None}}
        if cfg.get("clip_qkv") is not None:
            refuse_clamped_qkv(repr(model_type), cfg["clip_qkv"])
        N = config_int(cfg, "hidden_size")
        n_q = config_int(cfg, "num_attention_heads")
        n_kv = config_int(cfg, "num_key_value_heads", default=n_q)
        if cfg.get("head_dim") is None and N % n_q:
            raise CheckpointError(f"{model_type}: hidden_size={N} is not divisible by "
                                  f"num_attention_heads={n_q} and no head_dim is given")
        n = config_int(cfg, "head_dim", default=N // n_q)
        base, fraction, scaling = rope_settings(cfg)
        if model_type in _ALWAYS_BIAS:
            bias = True
        elif model_type in _NEVER_BIAS:
            bias = False
        else:
            bias = bool(cfg.get("attention_bias", False))
        return ArchSpec(architecture=model_type, layout=self.name,
                        n_layers=config_int(cfg, "num_hidden_layers"), N=N, n=n,
                        n_q=n_q, n_kv=n_kv, positional="rope", rope_base=base,
                        rotary_fraction=fraction, rope_scaling=scaling, has_qk_bias=bias,
                        causal=True, qk_norm=self._qk_norm(cfg, model_type))

    def _qk_norm(self, cfg: Mapping[str, Any], model_type: str) -> QKNorm | None:
        scope = self.qk_norm_scopes.get(model_type)
        if scope is None:
            return None
        eps = config_float(cfg.get("rms_norm_eps"), f"{model_type}: config field "
                           "rms_norm_eps (q/k RMSNorm epsilon)", low_open=False)
        return QKNorm("rms", scope, eps, self.qk_gain_offset)

    def requests(self, spec: ArchSpec, layer: int) -> list[TensorRequest]:
        """``q_proj``/``k_proj`` weights (and biases when the model has them; and the q/k
        normalization gains ``q_norm``/``k_norm`` when it has them)."""
        base = f"layers.{layer}.self_attn"
        q_rows, k_rows = spec.n_q * spec.n, spec.n_kv * spec.n
        out = [TensorRequest("q", f"{base}.q_proj.weight", (q_rows, spec.N)),
               TensorRequest("k", f"{base}.k_proj.weight", (k_rows, spec.N))]
        if spec.has_qk_bias:
            out += [TensorRequest("q_bias", f"{base}.q_proj.bias", (q_rows,)),
                    TensorRequest("k_bias", f"{base}.k_proj.bias", (k_rows,))]
        return out + qk_norm_requests(spec, f"{base}.q_norm.weight", f"{base}.k_norm.weight")

    def split(self, spec: ArchSpec, arrays: Mapping[str, np.ndarray]) -> QKArrays:
        """Reshape to ``(n_q, n, N)`` and ``(n_kv, n, N)``; fold q/k norm gains."""
        return fold_qk_arrays(spec, separate_projections(spec, arrays), arrays)

    def norm_tensor(self, spec: ArchSpec, layer: int) -> str | None:
        """``layers.{i}.input_layernorm.weight`` (RMSNorm before attention)."""
        return f"layers.{layer}.input_layernorm.weight"


LAYOUT = LlamaLayout()
