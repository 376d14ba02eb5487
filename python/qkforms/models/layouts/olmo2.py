"""OLMo 2 and OLMo 3: the Llama layout with one q/k RMSNorm over all heads, post-norm.

Hugging Face ``Olmo2ForCausalLM`` / ``Olmo3ForCausalLM``: ``layers.{i}.self_attn.q_proj``
/ ``k_proj`` as in :mod:`qkforms.models.layouts.llama`; the projected queries (all
heads at once, before the reshape into heads and before RoPE) go through an RMSNorm
with gain ``self_attn.q_norm.weight`` of shape ``[n_q n]``, the keys through one of
shape ``[n_kv n]`` (``rms_norm_eps``, no bias). The norms of the residual stream come
*after* the attention and the MLP (``post_attention_layernorm``,
``post_feedforward_layernorm``): no norm feeds the attention, so ``--fold-norm`` has
nothing to fold and refuses these models. OLMo 3 gives its sliding-window and
full-attention layers their own RoPE settings (:func:`~qkforms.models.config.rope_settings`).

Examples
--------
>>> spec = LAYOUT.spec({"model_type": "olmo2", "hidden_size": 32, "num_attention_heads": 4,
...                     "num_key_value_heads": 2, "num_hidden_layers": 2})
>>> spec.qk_norm
QKNorm(kind='rms', scope='all', eps=1e-05, gain_offset=0.0)
>>> [(r.name, r.shape) for r in LAYOUT.requests(spec, 0)][2:]
[('layers.0.self_attn.q_norm.weight', (32,)), ('layers.0.self_attn.k_norm.weight', (16,))]
>>> LAYOUT.norm_tensor(spec, 0) is None
True
"""

from __future__ import annotations

from typing import Any, ClassVar

from qkforms.models.layouts import Layout
from qkforms.models.layouts.llama import LlamaLayout

__all__ = ["LAYOUT", "Olmo2Layout"]


class Olmo2Layout(LlamaLayout):
    """OLMo 2/3: q/k RMSNorm over all heads; no norm before the attention.

    Examples
    --------
    >>> Olmo2Layout().model_types
    ('olmo2', 'olmo3')
    """

    name = "olmo2"
    model_types = ("olmo2", "olmo3")
    qk_norm_scopes: ClassVar[dict[str, str]] = {"olmo2": "all", "olmo3": "all"}
    defaults: ClassVar[dict[str, dict[str, Any]]] = {
        "olmo2": {"rms_norm_eps": 1e-5},
        "olmo3": {"rms_norm_eps": 1e-5, "rope_theta": 500000.0},
    }
    #: post-norm: nothing normalizes the attention's input (``--fold-norm`` refuses)
    norm_tensor = Layout.norm_tensor


LAYOUT = Olmo2Layout()
