"""Query and key maps of real checkpoints, one layer at a time.

:func:`load` opens a checkpoint -- a Hugging Face directory (``config.json`` +
safetensors, single or sharded), a llama.cpp GGUF file, a short name (``"smollm2"``,
``"minilm"``) or, when ``huggingface_hub`` is installed, a hub id -- reads and checks
its headers, and returns a :class:`Model`. Nothing but headers is read until
:meth:`Model.layers` or :meth:`Model.heads` is iterated; each step then reads only the
query/key tensors of one layer (memory independent of the depth of the model).

Every head comes out in the convention of ``docs/theory.md`` §1: ``W_Q[h]``, ``W_K[g]`` of shape
``(n, N)`` (output x input), float64, ``g = kv_head = floor(h / (n_q / n_kv))``, and the
optional biases ``b_Q[h]``, ``b_K[g]`` of shape ``(n,)``. The score of a query token
``x_k`` on a key token ``x_j`` is ``<W_Q x_k + b_Q, W_K x_j + b_K>`` (times the model's
``1/sqrt(n)``, plus position terms), i.e. ``(x_j, 1)^T L_hat (x_k, 1)`` with the
homogenized form of Proposition 3 (:meth:`HeadWeights.homogenized`).

Modules: :mod:`~qkforms.models.records` (``SourceFile``, ``ModelInfo``, ``LayerWeights``,
``HeadWeights``), :mod:`~qkforms.models.sources` (paths, short names, hub ids,
checksums), :mod:`~qkforms.models.short_names` (the short names),
:mod:`~qkforms.models.loading` (:func:`load`: format dispatch and header
checks), :mod:`~qkforms.models.model` (:class:`Model`), the file backends
(:mod:`~qkforms.models.safetensors`, :mod:`~qkforms.models.ggufio`,
:mod:`~qkforms.models.torchbin`), :mod:`~qkforms.models.config` (``ArchSpec``),
:mod:`~qkforms.models.gguf_config` (GGUF metadata to ``ArchSpec``) and
:mod:`~qkforms.models.layouts` (where each architecture keeps its q/k maps and norms).

Errors (all from :mod:`qkforms.errors`): :class:`~qkforms.errors.CheckpointError`
for malformed, truncated or config-inconsistent files (and :class:`ModelNotFoundError`,
a subclass, for sources that do not exist); :class:`~qkforms.errors.MissingTensorError`;
:class:`~qkforms.errors.NonFiniteError` for NaN/Inf weights (raised while iterating, for
the layer that contains them); :class:`~qkforms.errors.UnsupportedArchitectureError`;
:class:`~qkforms.errors.UnsafeFormatError` for pickle checkpoints.

Examples
--------
>>> import qkforms.models as qm
>>> model = qm.load("minilm")
>>> model.info.n_layers, model.info.n_q, model.info.N, model.info.n
(6, 12, 384, 32)
>>> head = next(model.heads())
>>> head.W_Q.shape, head.b_Q.shape
((32, 384), (32,))
"""

from __future__ import annotations

from qkforms.errors import ModelNotFoundError
from qkforms.models.lens import from_transformer_lens
from qkforms.models.loading import load
from qkforms.models.memory import from_transformers
from qkforms.models.model import Model, TensorStore
from qkforms.models.records import HeadWeights, LayerWeights, ModelInfo, SourceFile

__all__ = [
    "HeadWeights",
    "LayerWeights",
    "Model",
    "ModelInfo",
    "ModelNotFoundError",
    "SourceFile",
    "TensorStore",
    "from_transformer_lens",
    "from_transformers",
    "load",
]
