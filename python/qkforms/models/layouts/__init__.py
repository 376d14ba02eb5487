"""Checkpoint layouts: where each architecture keeps its query and key projections.

A layout names, for one layer, the stored tensors that hold the query and key maps
(with their expected stored shapes, checked against the config before anything is
read) and cuts them into per-head ``W_Q (n_q, n, N)``, ``W_K (n_kv, n, N)`` (output x
input) and biases ``b_Q (n_q, n)``, ``b_K (n_kv, n)``.

=============  ==========================================================  ==========
module         stored form                                                 model types
=============  ==========================================================  ==========
``gpt2``       Conv1D ``c_attn`` input x output ``[N, 3N]``, blocks Q|K|V  gpt2
``opt``        separate ``q_proj``/``k_proj`` ``[n_q n, N]``                opt
``bloom``      fused head-interleaved ``query_key_value`` ``[3 H n, N]``   bloom
``neox``       same interleaving as BLOOM, partial rotary                  gpt_neox
``llama``      separate q/k, grouped-query attention, explicit head_dim;  llama, mistral, qwen2,
               q/k RMSNorm gains ``self_attn.q_norm``/``k_norm``           qwen3, qwen3_moe, olmoe
``olmo2``      as ``llama``, no norm before the attention (post-norm)     olmo2, olmo3
``gemma3``     as ``llama``, text part of multimodal checkpoints, gains   gemma3_text, gemma3
               ``1 + w``, ``query_pre_attn_scalar``
``bert``       ``attention.self.query``/``key`` with biases (encoder)      bert
``gguf``       llama.cpp GGUF tensors (``blk.{i}.attn_q``/``attn_k`` or    GGUF files
               fused ``attn_qkv``), every architecture of
               :data:`qkforms.models.gguf_config.GGUF_ARCHITECTURES`
=============  ==========================================================  ==========

Layouts of models that normalize their projected queries and keys put the
:class:`~qkforms.models.config.QKNorm` on the spec and request the gains as roles
``q_norm``/``k_norm`` (:func:`qk_norm_requests`); :func:`fold_qk_arrays` folds them
(:func:`qkforms.models.scoremap.fold_qk_norm`), whatever the format.

Examples
--------
>>> from qkforms.models.layouts import layout_for_model_type, supported_model_types
>>> layout_for_model_type("gpt_neox").name
'neox'
>>> "mistral" in supported_model_types()
True
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from qkforms.errors import CheckpointError, UnsupportedArchitectureError
from qkforms.models.config import REFUSED_MODEL_TYPES, ArchSpec, refuse_qk_norm
from qkforms.models.scoremap import fold_qk_norm

__all__ = [
    "Layout",
    "QKArrays",
    "TensorRequest",
    "fold_qk_arrays",
    "layout_for_model_type",
    "norm_supported_model_types",
    "qk_norm_requests",
    "spec_from_config",
    "supported_model_types",
]

#: model type -> layout module
MODEL_TYPES: dict[str, str] = {
    "gpt2": "gpt2",
    "opt": "opt",
    "bloom": "bloom",
    "gpt_neox": "neox",
    "llama": "llama",
    "mistral": "llama",
    "qwen2": "llama",
    "qwen3": "llama",
    "qwen3_moe": "llama",
    "olmoe": "llama",
    "olmo2": "olmo2",
    "olmo3": "olmo2",
    "gemma3_text": "gemma3",
    "gemma3": "gemma3",
    "bert": "bert",
}


@dataclass(frozen=True)
class TensorRequest:
    """One stored tensor a layer needs.

    Attributes
    ----------
    role
        What it holds: ``"q"``, ``"k"``, ``"qkv"``, ``"q_bias"``, ``"k_bias"``,
        ``"qkv_bias"``, ``"q_norm"``, ``"k_norm"`` (q/k normalization gains).
    name
        Tensor name relative to the checkpoint's prefix (e.g. ``h.3.attn.c_attn.weight``).
    shape
        Expected stored shape.

    Examples
    --------
    >>> TensorRequest("q", "layers.0.q.weight", (8, 8)).shape
    (8, 8)
    """

    role: str
    name: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class QKArrays:
    """Per-head query/key maps of one layer (float64).

    Examples
    --------
    >>> import numpy as np
    >>> qk = QKArrays(np.zeros((2, 3, 4)), np.zeros((1, 3, 4)), None, None)
    >>> qk.W_Q.shape, qk.W_K.shape
    ((2, 3, 4), (1, 3, 4))
    """

    W_Q: np.ndarray
    W_K: np.ndarray
    b_Q: np.ndarray | None
    b_K: np.ndarray | None


class Layout(ABC):
    """How one family of architectures stores its query and key projections.

    Examples
    --------
    >>> issubclass(type(layout_for_model_type("bert")), Layout)
    True
    """

    #: short name (the module name)
    name: str = ""
    #: model types served by this layout
    model_types: tuple[str, ...] = ()

    @abstractmethod
    def spec(self, cfg: Mapping[str, Any]) -> ArchSpec:
        """Build the :class:`~qkforms.models.config.ArchSpec` from a config."""

    @abstractmethod
    def requests(self, spec: ArchSpec, layer: int) -> list[TensorRequest]:
        """The tensors of ``layer`` holding the q/k maps (first one: the weight of Q)."""

    @abstractmethod
    def split(self, spec: ArchSpec, arrays: Mapping[str, np.ndarray]) -> QKArrays:
        """Cut the tensors (by role) into per-head maps."""

    def norm_tensor(self, spec: ArchSpec, layer: int) -> str | None:
        """The tensor (relative to the prefix) holding the gain of the norm feeding the
        attention of ``layer``, or None when this layout does not know where it is
        (e.g. OPT, whose pre/post-norm order depends on the checkpoint)."""
        return None

    def norm_gain_offset(self, spec: ArchSpec) -> float:
        """What the model adds to the stored weight of :meth:`norm_tensor` to get its
        gain (1 for Gemma's ``1 + w``; 0 by default)."""
        return 0.0

    def prefix_marker(self, spec: ArchSpec) -> str:
        """A string the prefix of the layer tensors must contain (``""``: any prefix),
        to pick the language model's layers in a multimodal checkpoint."""
        return ""


def qk_norm_requests(spec: ArchSpec, q_name: str, k_name: str,
                     shapes: Mapping[str, tuple[int, ...]] | None = None
                     ) -> list[TensorRequest]:
    """The requests for a layer's q/k normalization gains (none without ``spec.qk_norm``).

    Parameters
    ----------
    spec
        The model's spec; ``spec.qk_norm.scope`` gives the expected shapes: ``[n]``
        per head, ``[n_q n]`` / ``[n_kv n]`` over all heads.
    q_name, k_name
        The tensors (relative to the prefix).
    shapes
        Stored shapes by side (``"q"``, ``"k"``) overriding those (GGUF files stack
        per-head gains as ``[H, n]``).

    Examples
    --------
    >>> from qkforms.models.config import ArchSpec, QKNorm
    >>> spec = ArchSpec("olmo2", "olmo2", 1, 16, 4, 4, 2, "rope", 1e4, 1.0,
    ...                 qk_norm=QKNorm("rms", "all", 1e-6))
    >>> [(r.role, r.shape) for r in qk_norm_requests(spec, "q_norm", "k_norm")]
    [('q_norm', (16,)), ('k_norm', (8,))]
    """
    norm = spec.qk_norm
    if norm is None:
        return []
    want: dict[str, tuple[int, ...]]
    if norm.scope == "head":
        want = {"q": (spec.n,), "k": (spec.n,)}
    else:
        want = {"q": (spec.n_q * spec.n,), "k": (spec.n_kv * spec.n,)}
    want.update(shapes or {})
    return [TensorRequest("q_norm", q_name, tuple(want["q"])),
            TensorRequest("k_norm", k_name, tuple(want["k"]))]


def fold_qk_arrays(spec: ArchSpec, qk: QKArrays, arrays: Mapping[str, np.ndarray]
                   ) -> QKArrays:
    """Fold the q/k normalization gains (roles ``q_norm``, ``k_norm``) into the maps.

    ``W'_Q = diag(gamma_q) C W_Q`` and ``W'_K = diag(gamma_k) C W_K`` (biases alike) by
    :func:`qkforms.models.scoremap.fold_qk_norm`; ``qk`` unchanged without
    ``spec.qk_norm``.

    Raises
    ------
    CheckpointError
        When a gain is missing from ``arrays``.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.models.config import ArchSpec, QKNorm
    >>> spec = ArchSpec("qwen3", "llama", 1, 2, 2, 1, 1, "rope", 1e4, 1.0,
    ...                 qk_norm=QKNorm("rms", "head", 1e-6))
    >>> qk = QKArrays(np.ones((1, 2, 2)), np.ones((1, 2, 2)), None, None)
    >>> out = fold_qk_arrays(spec, qk, {"q_norm": np.array([2.0, 3.0]),
    ...                                 "k_norm": np.array([1.0, -1.0])})
    >>> out.W_Q[0, :, 0].tolist(), out.W_K[0, :, 0].tolist()
    ([2.0, 3.0], [1.0, -1.0])
    """
    norm = spec.qk_norm
    if norm is None:
        return qk
    missing = [role for role in ("q_norm", "k_norm") if arrays.get(role) is None]
    if missing:
        raise CheckpointError(f"{spec.architecture}: folding the q/k normalization needs "
                              f"the layer's query and key gains ({', '.join(missing)} "
                              "missing)")
    W_Q, b_Q = fold_qk_norm(qk.W_Q, qk.b_Q, arrays["q_norm"], norm)
    W_K, b_K = fold_qk_norm(qk.W_K, qk.b_K, arrays["k_norm"], norm)
    return QKArrays(W_Q, W_K, b_Q, b_K)


def supported_model_types() -> list[str]:
    """Model types with a layout, sorted.

    Examples
    --------
    >>> supported_model_types()[:4]
    ['bert', 'bloom', 'gemma3', 'gemma3_text']
    """
    return sorted(MODEL_TYPES)


def norm_supported_model_types() -> list[str]:
    """Model types whose layout names the norm before the attention, sorted.

    Examples
    --------
    >>> [t in norm_supported_model_types() for t in ("opt", "olmo2", "llama", "gemma3")]
    [False, False, True, True]
    """
    return [t for t in supported_model_types()
            if type(layout_for_model_type(t)).norm_tensor is not Layout.norm_tensor]


def layout_for_model_type(model_type: str) -> Layout:
    """The layout that reads ``model_type`` checkpoints.

    Raises
    ------
    UnsupportedArchitectureError
        For unknown model types, naming the supported ones.

    Examples
    --------
    >>> layout_for_model_type("opt").name
    'opt'
    """
    module = MODEL_TYPES.get(model_type)
    if module is None:
        raise UnsupportedArchitectureError(
            f"unknown architecture {model_type!r}: qkforms reads "
            f"{', '.join(supported_model_types())} checkpoints (Hugging Face safetensors) "
            "and GGUF files (qkforms.models.gguf_config.GGUF_ARCHITECTURES)")
    return importlib.import_module(f"qkforms.models.layouts.{module}").LAYOUT


def spec_from_config(cfg: Mapping[str, Any]) -> ArchSpec:
    """Build the :class:`~qkforms.models.config.ArchSpec` of a Hugging Face config.

    Models that normalize their projected queries and keys (Qwen3, OLMo 2, Gemma 3, ...)
    get their :class:`~qkforms.models.config.QKNorm` from their layout; whether they are
    surveyed is the loader's q/k-norm policy (:func:`qkforms.models.load`).

    Raises
    ------
    UnsupportedArchitectureError
        For the model types of :data:`~qkforms.models.config.REFUSED_MODEL_TYPES` (with
        the reason), q/k norms the layout does not describe
        (:func:`~qkforms.models.config.refuse_qk_norm`), and unknown model types (naming
        the supported).

    Examples
    --------
    >>> spec = spec_from_config({"model_type": "mistral", "hidden_size": 5120,
    ...     "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
    ...     "num_hidden_layers": 40, "rope_theta": 1e8})
    >>> spec.n_q, spec.n_kv, spec.n, spec.kv_group, spec.rope_base
    (32, 8, 128, 4, 100000000.0)
    >>> spec_from_config({"model_type": "qwen3", "hidden_size": 64, "head_dim": 16,
    ...     "num_attention_heads": 4, "num_key_value_heads": 2,
    ...     "num_hidden_layers": 2}).qk_norm
    QKNorm(kind='rms', scope='head', eps=1e-06, gain_offset=0.0)
    """
    model_type = cfg.get("model_type")
    if not isinstance(model_type, str):
        refuse_qk_norm(cfg)
        archs = cfg.get("architectures")
        raise UnsupportedArchitectureError(
            f"config has no 'model_type' (architectures: {archs!r}); cannot choose a layout")
    if model_type in REFUSED_MODEL_TYPES:
        raise UnsupportedArchitectureError(
            f"{model_type!r} is not supported: {REFUSED_MODEL_TYPES[model_type]}")
    try:
        layout = layout_for_model_type(model_type)
    except UnsupportedArchitectureError:
        refuse_qk_norm(cfg)
        raise
    spec = layout.spec(cfg)
    if spec.qk_norm is None:
        refuse_qk_norm(cfg)
    return spec
