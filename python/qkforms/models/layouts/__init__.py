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
``llama``      separate q/k, grouped-query attention, explicit head_dim   llama, mistral, qwen2
``bert``       ``attention.self.query``/``key`` with biases (encoder)      bert
``gguf``       llama.cpp GGUF tensors (``blk.{i}.attn_q``/``attn_k`` or    GGUF files
               fused ``attn_qkv``), every architecture of
               :data:`qkforms.models.ggufio.GGUF_ARCHITECTURES`
=============  ==========================================================  ==========

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

from qkforms.errors import UnsupportedArchitectureError
from qkforms.models.config import ArchSpec

__all__ = [
    "Layout",
    "QKArrays",
    "TensorRequest",
    "layout_for_model_type",
    "norm_supported_model_types",
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
    "bert": "bert",
}


@dataclass(frozen=True)
class TensorRequest:
    """One stored tensor a layer needs.

    Attributes
    ----------
    role
        What it holds: ``"q"``, ``"k"``, ``"qkv"``, ``"q_bias"``, ``"k_bias"``,
        ``"qkv_bias"``.
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


def supported_model_types() -> list[str]:
    """Model types with a layout, sorted.

    Examples
    --------
    >>> supported_model_types()[:3]
    ['bert', 'bloom', 'gpt2']
    """
    return sorted(MODEL_TYPES)


def norm_supported_model_types() -> list[str]:
    """Model types whose layout names the norm before the attention, sorted.

    Examples
    --------
    >>> "opt" in norm_supported_model_types(), "llama" in norm_supported_model_types()
    (False, True)
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
            "and GGUF files (qkforms.models.ggufio.GGUF_ARCHITECTURES)")
    return importlib.import_module(f"qkforms.models.layouts.{module}").LAYOUT
