"""TransformerLens models held in memory: their per-head ``W_Q``/``W_K`` as a :class:`Model`.

TransformerLens keeps the query and key maps of every head as stacked tensors in the
*input x output* convention (``q = x @ W_Q + b_Q``):

* ``model.W_Q``: ``[n_layers, n_heads, d_model, d_head]``, ``model.b_Q``:
  ``[n_layers, n_heads, d_head]``;
* ``model.W_K``, ``model.b_K``: the same with ``n_heads`` -- ``HookedTransformer``
  (TransformerLens < 4) repeats a grouped-query model's key heads to the query heads
  (``repeat_interleave``) -- or with ``n_key_value_heads``: ``TransformerBridge``
  (TransformerLens >= 3; the only model class of 4.x) returns the grouped layout
  ``[n_layers, n_kv_heads, d_model, d_head]`` (``transformer_bridge.py``, ``W_K`` and
  ``_expand_kv_heads``: "query head h reads kv head h // (n_heads // n_kv_heads)").

:func:`from_transformer_lens` reads both, transposes each head to the ``(n, N)``
(output x input) maps of ``docs/theory.md`` §1, maps query head ``h`` to key head
``h // (n_q / n_kv)`` (a repeated key layout is checked to be a repetition and
reduced), and builds the :class:`~qkforms.models.Model` the survey takes.

**Weight processing.** TransformerLens' default processing (``HookedTransformer`` at
load time; ``TransformerBridge.enable_compatibility_mode()``) folds the gain of the norm
before each attention into ``W_Q``/``W_K`` (and, for LayerNorm, its bias into
``b_Q``/``b_K``) and, for LayerNorm, centres ``W_Q``/``W_K`` along ``d_model``
(``weight_processing.py``, ``fold_layer_norm`` / ``_fold_layer``). The survey surveys
what it is given and records which it is (``ModelInfo.weight_processing``, in the
manifest): with processing off the forms equal those of the plain survey of the same
model; with ``fold_ln`` on an LN model each form is ``P D L D P`` (``D = diag(gamma)``,
the ``--fold-norm`` form, composed with the centring projection ``P = I - 1 1^T / N``);
on an RMSNorm model ``D L D``. TransformerLens 4 performs that processing in float32
whatever the model's dtype, so processed float64 weights agree with the exact fold to
float32 rounding only.

Examples
--------
>>> import numpy as np
>>> from types import SimpleNamespace
>>> rng = np.random.default_rng(0)
>>> cfg = SimpleNamespace(n_layers=1, d_model=8, d_head=2, n_heads=4, n_key_value_heads=2)
>>> tl = SimpleNamespace(cfg=cfg, W_Q=rng.standard_normal((1, 4, 8, 2)),
...                      W_K=rng.standard_normal((1, 2, 8, 2)), b_Q=None, b_K=None)
>>> layer = from_transformer_lens(tl).layer(0)
>>> layer.W_Q.shape, layer.W_K.shape, layer.kv_index.tolist()
((4, 2, 8), (2, 2, 8), [0, 0, 1, 1])
>>> bool(np.array_equal(layer.W_Q[3], tl.W_Q[0, 3].T))
True
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from qkforms.errors import CheckpointError, QKFormsError, UnsupportedArchitectureError
from qkforms.models.config import ArchSpec
from qkforms.models.layouts import Layout, QKArrays, TensorRequest
from qkforms.models.loading import _assemble
from qkforms.models.memory import IN_MEMORY, ArrayStore, memory_source, to_numpy
from qkforms.models.model import Model
from qkforms.models.records import ModelInfo

__all__ = ["PROCESSING", "LensLayout", "from_transformer_lens", "weight_processing"]

#: the values of ``ModelInfo.weight_processing`` for TransformerLens models, and meanings
PROCESSING: dict[str, str] = {
    "fold_ln+center": ("TransformerLens fold_ln on a LayerNorm model: the norm's gain is "
                       "folded into W_Q and W_K, its bias into b_Q and b_K, and W_Q, W_K are "
                       "centred along d_model, so each form is P D L D P (D = diag(gain), "
                       "P = I - 11^T/N)"),
    "fold_ln": ("TransformerLens fold_ln on an RMSNorm model: the norm's gain is folded "
                "into W_Q and W_K, so each form is D L D (D = diag(gain))"),
    "processed-no-fold": ("TransformerLens weight processing without fold_ln: the query "
                          "and key maps are those stored"),
}

#: TransformerLens positional embedding types -> ``ArchSpec.positional``
_POSITIONAL = {"standard": "absolute", "shortformer": "absolute", "rotary": "rope",
               "alibi": "alibi"}


class LensLayout(Layout):
    """Per-layer TransformerLens tensors (``W_Q [n_q, N, n]``, ``W_K [n_kv, N, n]``, biases)
    to the ``(H, n, N)`` maps of the core.

    Examples
    --------
    >>> spec = ArchSpec("transformer_lens", "transformer_lens", 1, 3, 2, 1, 1, "absolute")
    >>> qk = LAYOUT.split(spec, {"W_Q": np.arange(6.0).reshape(1, 3, 2),
    ...                          "W_K": np.ones((1, 3, 2))})
    >>> qk.W_Q[0].tolist()
    [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    """

    name = "transformer_lens"
    model_types = ()

    def spec(self, cfg: Mapping[str, Any]) -> ArchSpec:
        """Not used: the spec comes from the model's ``cfg`` (:func:`from_transformer_lens`)."""
        raise UnsupportedArchitectureError("TransformerLens models are read in memory with "
                                           "qkforms.models.from_transformer_lens")

    def requests(self, spec: ArchSpec, layer: int) -> list[TensorRequest]:
        """``blocks.{i}.attn.W_Q``/``W_K`` (and ``b_Q``/``b_K`` with biases)."""
        base = f"blocks.{layer}.attn"
        out = [TensorRequest("W_Q", f"{base}.W_Q", (spec.n_q, spec.N, spec.n)),
               TensorRequest("W_K", f"{base}.W_K", (spec.n_kv, spec.N, spec.n))]
        if spec.has_qk_bias:
            out += [TensorRequest("b_Q", f"{base}.b_Q", (spec.n_q, spec.n)),
                    TensorRequest("b_K", f"{base}.b_K", (spec.n_kv, spec.n))]
        return out

    def split(self, spec: ArchSpec, arrays: Mapping[str, np.ndarray]) -> QKArrays:
        """Transpose each head from input x output to output x input."""
        b_Q, b_K = arrays.get("b_Q"), arrays.get("b_K")
        return QKArrays(np.ascontiguousarray(np.swapaxes(arrays["W_Q"], 1, 2)),
                        np.ascontiguousarray(np.swapaxes(arrays["W_K"], 1, 2)),
                        None if b_Q is None else np.asarray(b_Q),
                        None if b_K is None else np.asarray(b_K))


LAYOUT = LensLayout()


def weight_processing(model: Any) -> str | None:
    """Which TransformerLens weight processing ``model``'s maps carry (a key of
    :data:`PROCESSING`), or ``None`` for the maps as stored.

    ``TransformerBridge`` says whether it processed its weights (``_weights_processed``)
    and whether ``fold_ln`` was asked (its adapter's ``_fold_ln_requested``, unless the
    adapter ``supports_fold_ln`` not); ``HookedTransformer`` marks a folded norm by
    ``cfg.normalization_type`` ``"LNPre"`` or ``"RMSPre"``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> weight_processing(SimpleNamespace(cfg=SimpleNamespace(normalization_type="LNPre")))
    'fold_ln+center'
    >>> weight_processing(SimpleNamespace(cfg=SimpleNamespace(normalization_type="RMS")))
    """
    cfg = model.cfg
    norm = str(getattr(cfg, "normalization_type", None))
    if hasattr(model, "_weights_processed"):  # TransformerBridge
        if not model._weights_processed:
            return None
        adapter = getattr(model, "adapter", None)
        folded = (getattr(adapter, "_fold_ln_requested", True)
                  and getattr(adapter, "supports_fold_ln", True))
        if not folded or norm not in ("LN", "LNPre", "RMS", "RMSPre"):
            return "processed-no-fold"
        return "fold_ln+center" if norm.startswith("LN") else "fold_ln"
    if norm == "LNPre":
        return "fold_ln+center"
    if norm == "RMSPre":
        return "fold_ln"
    return None


def _int(cfg: Any, key: str) -> int:
    value = getattr(cfg, key, None)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise CheckpointError(f"TransformerLens cfg.{key} must be a positive integer, got "
                              f"{value!r}")
    return value


def _spec(cfg: Any, has_bias: bool) -> ArchSpec:
    n_q, n = _int(cfg, "n_heads"), _int(cfg, "d_head")
    n_kv = getattr(cfg, "n_key_value_heads", None) or n_q
    kind = str(getattr(cfg, "positional_embedding_type", "standard"))
    if kind not in _POSITIONAL:
        raise UnsupportedArchitectureError(
            f"TransformerLens positional_embedding_type {kind!r} is not supported (known: "
            f"{', '.join(_POSITIONAL)}): it adds a position-dependent term qkforms does not map")
    positional = _POSITIONAL[kind]
    rotary_dim = getattr(cfg, "rotary_dim", None)
    scale = float(getattr(cfg, "attn_scale", -1.0) or -1.0)
    attention_scale = None
    if not getattr(cfg, "use_attn_scale", True):
        attention_scale = 1.0
    elif scale > 0 and not math.isclose(scale, math.sqrt(n)):
        attention_scale = 1.0 / scale
    cap = float(getattr(cfg, "attn_scores_soft_cap", -1.0) or -1.0)
    rope = positional == "rope"
    return ArchSpec(
        architecture="transformer_lens", layout="transformer_lens",
        n_layers=_int(cfg, "n_layers"), N=_int(cfg, "d_model"), n=n, n_q=n_q, n_kv=int(n_kv),
        positional=positional,
        rope_base=float(getattr(cfg, "rotary_base", 10000.0)) if rope else None,
        rotary_fraction=(min(1.0, rotary_dim / n) if rotary_dim else 1.0) if rope else None,
        has_qk_bias=has_bias,
        causal=str(getattr(cfg, "attention_dir", "causal")) == "causal",
        rope_layout="interleaved" if getattr(cfg, "rotary_adjacent_pairs", False)
        else "split-half",
        attention_scale=attention_scale, attn_softcap=cap if cap > 0 else None)


def _key_heads(W: Any, n_q: int, n_kv: int, what: str) -> Any:
    """The ``n_kv`` key heads of a stacked key tensor (grouped, or repeated to ``n_q``)."""
    heads = int(W.shape[1])
    if heads == n_kv or n_kv == n_q:
        return W
    if heads != n_q:
        raise CheckpointError(f"TransformerLens {what} has {heads} heads per layer; expected "
                              f"{n_kv} (grouped) or {n_q} (repeated)")
    group = n_q // n_kv
    grouped = W[:, ::group]
    full = to_numpy(W)
    if not np.array_equal(full, np.repeat(to_numpy(grouped), group, axis=1)):
        raise CheckpointError(f"TransformerLens {what} has {n_q} heads per layer but they are "
                              f"not each key/value head repeated {group} times")
    return grouped


def from_transformer_lens(model: Any, *, name: str | None = None,
                          checksum: bool = True) -> Model:
    """The :class:`~qkforms.models.Model` of a TransformerLens model held in memory.

    Parameters
    ----------
    model
        A ``TransformerBridge`` or ``HookedTransformer`` -- anything with ``cfg``
        (``n_layers``, ``d_model``, ``d_head``, ``n_heads``, optional
        ``n_key_value_heads``, ``positional_embedding_type``, ``rotary_dim``,
        ``rotary_base``, ``attention_dir``, ...) and the stacked ``W_Q``, ``W_K`` (and
        ``b_Q``, ``b_K``) of the module docstring.
    name
        Display name (default ``cfg.model_name``).
    checksum
        Record a sha256 of the query/key tensors.

    Returns
    -------
    Model
        ``info.format == "transformer_lens"``; ``info.weight_processing`` says which
        processing the maps carry (:func:`weight_processing`, :data:`PROCESSING`).

    Raises
    ------
    QKFormsError
        When ``model`` has no ``cfg`` or ``W_Q``/``W_K``.
    CheckpointError
        For shapes that disagree with ``cfg``.
    UnsupportedArchitectureError
        For models that normalize their queries and keys (``cfg.use_qk_norm``; survey the
        Hugging Face model, ``from_transformers(bridge.original_model, qk_norm="fold")``)
        and unknown positional schemes.
    """
    cfg = getattr(model, "cfg", None)
    if cfg is None or not hasattr(model, "W_Q") or not hasattr(model, "W_K"):
        raise QKFormsError("from_transformer_lens needs a TransformerLens model (cfg, W_Q, "
                           f"W_K), got {type(model).__name__}")
    if getattr(cfg, "use_qk_norm", False):
        raise UnsupportedArchitectureError(
            "this TransformerLens model normalizes its projected queries and keys "
            "(cfg.use_qk_norm), so its score is not a fixed bilinear form "
            "(docs/survey.md, 'q/k-normalized and soft-capped heads'); survey its Hugging "
            "Face model with qkforms.models.from_transformers(model.original_model, "
            "qk_norm='fold')")
    W_Q, W_K = model.W_Q, model.W_K
    b_Q, b_K = getattr(model, "b_Q", None), getattr(model, "b_K", None)
    spec = _spec(cfg, has_bias=b_Q is not None and b_K is not None)
    W_K = _key_heads(W_K, spec.n_q, spec.n_kv, "W_K")
    if spec.has_qk_bias:
        b_K = _key_heads(b_K, spec.n_q, spec.n_kv, "b_K")
    tensors: dict[str, Any] = {}
    for role, stacked in (("W_Q", W_Q), ("W_K", W_K), ("b_Q", b_Q), ("b_K", b_K)):
        if stacked is None or (role.startswith("b") and not spec.has_qk_bias):
            continue
        if int(stacked.shape[0]) != spec.n_layers:
            raise CheckpointError(f"TransformerLens {role} has shape {tuple(stacked.shape)}; "
                                  f"expected {spec.n_layers} layers first")
        for layer in range(spec.n_layers):
            tensors[f"blocks.{layer}.attn.{role}"] = stacked[layer]
    what = type(model).__name__
    store = ArrayStore(tensors, where=f"{IN_MEMORY[:-1]}: {what}>")
    display = name or str(getattr(cfg, "model_name", "") or "") or what
    out = _assemble(display, spec, LAYOUT, store, [], "transformer_lens", checksum=False)
    arrays = [store.read(t) for t in tensors] if checksum else []
    info: ModelInfo = dataclasses.replace(
        out.info, files=(memory_source(what, arrays, checksum),),
        weight_processing=weight_processing(model))
    out.info = info
    return out
