"""Models held in memory: a ``transformers`` model surveyed without saving it first.

:func:`from_transformers` turns a loaded ``transformers`` model (``PreTrainedModel``:
``AutoModelForCausalLM.from_pretrained(...)``, a model built ``from_config`` and trained
in a notebook, ...) into the :class:`~qkforms.models.Model` that
:func:`qkforms.models.load` would make of the same model saved with
``save_pretrained``: the config goes through the same
:func:`~qkforms.models.layouts.spec_from_config`, the parameters (``model.state_dict()``)
are read through :class:`ArrayStore` under the same tensor names, and the same
:mod:`~qkforms.models.layouts` cut them into heads -- fused projections (GPT-2's Conv1D
``c_attn``, BLOOM's and GPT-NeoX's head-interleaved ``query_key_value``), biases,
grouped-query attention (query head ``h`` reads key head ``h // (n_q / n_kv)``) and the
q/k normalizations under the ``qk_norm`` policy. So the per-layer head maps are the
on-disk loader's, number for number, and :func:`qkforms.survey.survey` accepts the result
like any loaded model (``format = "transformers"``; no file is read).

:class:`ArrayStore` is the :class:`~qkforms.models.TensorStore` over a mapping of
in-memory arrays (``torch`` tensors or numpy arrays); nothing here imports ``torch``.

Examples
--------
>>> import numpy as np
>>> store = ArrayStore({"h.0.attn.c_attn.weight": np.ones((4, 12), dtype=np.float32)})
>>> store.shape("h.0.attn.c_attn.weight"), store.dtype("h.0.attn.c_attn.weight")
((4, 12), 'float32')
>>> store.read("h.0.attn.c_attn.weight").dtype
dtype('float64')
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from qkforms.errors import CheckpointError, QKFormsError, format_value
from qkforms.models.config import refuse_qk_norm
from qkforms.models.layouts import layout_for_model_type, spec_from_config
from qkforms.models.loading import _assemble, refuse_by_qk_norm_policy
from qkforms.models.model import Model
from qkforms.models.records import SourceFile
from qkforms.models.scoremap import check_qk_norm_policy

__all__ = ["ArrayStore", "from_transformers", "memory_source", "to_numpy"]

#: the pseudo-path of tensors held in memory (error messages, ``SourceFile.path``)
IN_MEMORY = "<in memory>"


def to_numpy(tensor: Any) -> np.ndarray:
    """A float64 numpy copy of a ``torch`` tensor (any float dtype, any device) or array.

    Examples
    --------
    >>> to_numpy(np.arange(3, dtype=np.float16)).tolist()
    [0.0, 1.0, 2.0]
    """
    if hasattr(tensor, "detach"):  # a torch tensor: bf16/fp16 widen exactly to float64
        tensor = tensor.detach().to(device="cpu").double().numpy()
    return np.array(tensor, dtype=np.float64)


class ArrayStore:
    """A :class:`~qkforms.models.TensorStore` over in-memory arrays (read as float64).

    Parameters
    ----------
    tensors
        Tensor name -> ``torch`` tensor or numpy array.
    where
        What to call the place the tensors are in (error messages).

    Examples
    --------
    >>> s = ArrayStore({"a": np.zeros(2)})
    >>> "a" in s, s.names, s.file_of("a")
    (True, ['a'], '<in memory>')
    """

    def __init__(self, tensors: Mapping[str, Any], where: str = IN_MEMORY) -> None:
        self._tensors = dict(tensors)
        self._where = where

    @property
    def names(self) -> list[str]:
        """The tensor names, in the mapping's order."""
        return list(self._tensors)

    def __contains__(self, name: object) -> bool:
        return name in self._tensors

    def _get(self, name: str) -> Any:
        try:
            return self._tensors[name]
        except KeyError:
            raise CheckpointError(f"tensor {name!r} is not in {self._where}") from None

    def shape(self, name: str) -> tuple[int, ...]:
        """The tensor's shape."""
        return tuple(int(d) for d in self._get(name).shape)

    def dtype(self, name: str) -> str:
        """The tensor's dtype name (``float32``, ``bfloat16``, ...)."""
        return str(self._get(name).dtype).removeprefix("torch.")

    def read(self, name: str) -> np.ndarray:
        """The tensor as a float64 numpy array (a copy)."""
        return to_numpy(self._get(name))

    def file_of(self, name: str) -> str:
        """Where the tensor is (:data:`IN_MEMORY`)."""
        self._get(name)
        return self._where

    def close(self) -> None:
        """Nothing to close (the arrays belong to the caller)."""


def memory_source(what: str, arrays: list[np.ndarray], checksum: bool) -> SourceFile:
    """The :class:`~qkforms.models.records.SourceFile` recorded for in-memory weights.

    ``path`` names the object (``"<in memory: GPT2LMHeadModel>"``), ``size`` is the bytes
    of the float64 query/key tensors, and ``sha256`` (when ``checksum``) hashes them in
    order, so that ``--resume`` and the manifest can tell two models apart.

    Examples
    --------
    >>> memory_source("M", [np.zeros(2)], checksum=True).sha256[:12]
    '45e2f25e0283'
    """
    digest = hashlib.sha256() if checksum else None
    size = 0
    for arr in arrays:
        data = np.ascontiguousarray(arr, dtype=np.float64)
        size += data.nbytes
        if digest is not None:
            digest.update(str(data.shape).encode())
            digest.update(data.tobytes())
    return SourceFile(f"<in memory: {what}>", size,
                      digest.hexdigest() if digest is not None else None)


def from_transformers(model: Any, *, name: str | None = None, qk_norm: str = "refuse",
                      checksum: bool = True) -> Model:
    """The :class:`~qkforms.models.Model` of a ``transformers`` model held in memory.

    Parameters
    ----------
    model
        A ``transformers.PreTrainedModel`` (anything with ``config.to_dict()`` and
        ``state_dict()``) of a supported model type
        (:func:`qkforms.models.layouts.supported_model_types`).
    name
        Display name (default: the config's ``_name_or_path``, else the class name).
    qk_norm
        The q/k-norm policy, as for :func:`qkforms.models.load` (``"refuse"`` or
        ``"fold"``).
    checksum
        Record a sha256 of the query/key tensors (read once now).

    Returns
    -------
    Model
        ``info.format == "transformers"``; the heads equal those of
        ``load(<the model saved with save_pretrained>)``. The parameters are read when
        the layers are iterated, so changes made to the model afterwards are seen.

    Raises
    ------
    QKFormsError
        When ``model`` is not a ``transformers`` model.
    UnsupportedArchitectureError, CheckpointError, MissingTensorError
        As :func:`qkforms.models.load` for the same model on disk.

    Examples
    --------
    >>> from qkforms.models import from_transformers
    >>> try:
    ...     from_transformers(object())
    ... except QKFormsError as exc:
    ...     print(str(exc)[:58])
    from_transformers needs a transformers model (with config.
    """
    check_qk_norm_policy(qk_norm)
    config: Any = getattr(model, "config", None)
    if not callable(getattr(config, "to_dict", None)) or not callable(
            getattr(model, "state_dict", None)):
        raise QKFormsError("from_transformers needs a transformers model (with config.to_dict() "
                           f"and state_dict()), got {format_value(model)}")
    cfg = config.to_dict()
    what = type(model).__name__
    spec = spec_from_config(cfg)
    layout = layout_for_model_type(spec.architecture)
    refuse_by_qk_norm_policy(f"{what}: {spec.architecture!r}", spec, layout, qk_norm)
    store = ArrayStore(model.state_dict(), where=f"{IN_MEMORY[:-1]}: {what}>")
    if spec.qk_norm is None:
        refuse_qk_norm(cfg, store.names)
    display = name or str(cfg.get("_name_or_path") or "") or what
    out = _assemble(display, spec, layout, store, [], "transformers", checksum=False)
    arrays = [store.read(t) for layer in range(spec.n_layers)
              for t in out.tensor_names(layer).values()] if checksum else []
    out.info = dataclasses.replace(out.info, files=(memory_source(what, arrays, checksum),))
    return out
