"""An opened checkpoint: :class:`Model` streams the query/key maps one layer at a time.

A :class:`Model` is made by :func:`qkforms.models.load` from a :class:`TensorStore` (the
file backend: safetensors, GGUF or pickle), the :class:`~qkforms.models.layouts.Layout`
of its architecture and the plan of tensor names per layer checked at load time.
:meth:`Model.layer` reads one layer's q/k tensors, lets the layout cut them into heads
and checks them for NaN/Inf; :meth:`Model.norm_weight` reads the gain of the norm that
feeds a layer's attention, at the tensor name its layout gives.

Examples
--------
>>> import qkforms.models as qm
>>> with qm.load("minilm") as model:
...     model.tensor_names(0)["q"]
'encoder.layer.0.attention.self.query.weight'
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol

import numpy as np

from qkforms.errors import (
    CheckpointError,
    LayerIndexError,
    NonFiniteError,
    UnsupportedArchitectureError,
    format_value,
)
from qkforms.models.layouts import Layout, QKArrays, norm_supported_model_types
from qkforms.models.precision import half_widths, split_half_widths
from qkforms.models.records import HeadWeights, LayerWeights, ModelInfo

__all__ = ["Model", "TensorStore"]


class TensorStore(Protocol):
    """What a checkpoint backend provides (safetensors, GGUF, pickle).

    Examples
    --------
    >>> from qkforms.models.safetensors import SafetensorsStore
    >>> all(hasattr(SafetensorsStore, m) for m in ("read", "shape", "dtype", "file_of"))
    True
    """

    @property
    def names(self) -> list[str]: ...

    def __contains__(self, name: object) -> bool: ...

    def shape(self, name: str) -> tuple[int, ...]: ...

    def dtype(self, name: str) -> str: ...

    def read(self, name: str) -> np.ndarray: ...

    def file_of(self, name: str) -> str: ...

    def close(self) -> None: ...



def _frozen(arr: np.ndarray) -> np.ndarray:
    """A read-only contiguous float64 copy (or view) of ``arr``: records are immutable."""
    out = np.ascontiguousarray(arr, dtype=np.float64)
    out.setflags(write=False)
    return out

class Model:
    """A checkpoint opened for streaming its query/key maps.

    Create with :func:`load`. ``info`` describes the model; :meth:`layers` and
    :meth:`heads` are generators that read one layer's q/k tensors per step.

    Examples
    --------
    >>> import qkforms.models as qm
    >>> with qm.load("minilm") as model:
    ...     layer = next(model.layers())
    ...     layer.W_Q.shape, layer.W_K.shape
    ((12, 32, 384), (12, 32, 384))
    """

    def __init__(self, info: ModelInfo, layout: Layout, store: TensorStore,
                 plan: list[dict[str, str]]) -> None:
        self.info = info
        self._layout = layout
        self._store = store
        self._plan = plan
        #: sha256 of the stored bytes of every tensor read so far, by name
        #: (:meth:`layer`, :meth:`norm_weight`): the provenance of what was computed on
        self.tensor_sha256: dict[str, str] = {}

    def __repr__(self) -> str:
        i = self.info
        return (f"Model({i.name!r}, {i.architecture}, layers={i.n_layers}, "
                f"heads={i.n_q}/{i.n_kv}, N={i.N}, n={i.n}, {i.format})")

    def tensor_names(self, layer: int) -> dict[str, str]:
        """The checkpoint tensors (by role) that hold the q/k maps of ``layer``."""
        return dict(self._plan[self._check_layer(layer)])

    def _check_layer(self, layer: int) -> int:
        if not 0 <= int(layer) < self.info.n_layers:
            raise LayerIndexError(f"layer {format_value(layer)} out of range (the model has "
                                  f"{self.info.n_layers} layers, 0 to {self.info.n_layers - 1})")
        return int(layer)

    def _read(self, name: str) -> np.ndarray:
        """Read one tensor, hashing its stored bytes as they are read (``tensor_sha256``).

        Stores without ``read_with_digest`` (pickles) are hashed on the decoded float64
        values instead.
        """
        with_digest = getattr(self._store, "read_with_digest", None)
        if with_digest is not None:
            arr, digest = with_digest(name)
        else:
            arr, digest = self._store.read(name), None
        if digest is None:
            import hashlib

            digest = "float64:" + hashlib.sha256(
                np.ascontiguousarray(arr, dtype=np.float64).data).hexdigest()
        self.tensor_sha256[name] = digest
        return arr

    def layer(self, layer: int, *, check_finite: bool = True) -> LayerWeights:
        """Read, cut and check the q/k maps of one layer.

        Parameters
        ----------
        layer : int
        check_finite : bool
            With False, NaN/Inf weights are returned as they are (so that a caller
            can fail the affected heads one by one instead of the whole layer).

        Raises
        ------
        NonFiniteError
            If ``check_finite`` and a query/key weight or bias of the layer is NaN or
            infinite (naming the layer, the head and the tensor).
        """
        layer = self._check_layer(layer)
        spec = self.info.spec
        names = self._plan[layer]
        arrays = {role: self._read(name) for role, name in names.items()}
        qk = self._layout.split(spec, arrays)
        kv_index = np.arange(spec.n_q) // spec.kv_group
        if check_finite:
            _check_finite(self.info.name, layer, qk, kv_index, names)
        kv_index.setflags(write=False)
        return LayerWeights(layer, _frozen(qk.W_Q), _frozen(qk.W_K),
                            None if qk.b_Q is None else _frozen(qk.b_Q),
                            None if qk.b_K is None else _frozen(qk.b_K), kv_index)

    def layer_precision(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        """Storage half-widths of the q/k maps of one layer, shaped like ``W_Q``, ``W_K``.

        Every trained weight that the checkpoint's storage rounds to the stored value
        lies within this half-width of it (:func:`qkforms.models.precision.half_widths`:
        half an ulp of a float dtype, half a quantization step of a GGUF block); the
        layout's cut into heads is applied to them entry by entry.

        Raises
        ------
        PrecisionUnavailableError
            For storage without a per-weight precision (GGUF vector codebooks) and
            layouts that compute the maps (folded q/k norm gains).

        Examples
        --------
        >>> import qkforms.models as qm
        >>> with qm.load("minilm") as model:
        ...     H_Q, H_K = model.layer_precision(0)
        ...     lw = model.layer(0)
        >>> H_Q.shape == lw.W_Q.shape, bool((H_Q <= abs(lw.W_Q) * 2.0**-24).all())
        (True, True)
        """
        layer = self._check_layer(layer)
        names = self._plan[layer]
        arrays = {role: self._store.read(name) for role, name in names.items()}
        widths = {role: half_widths(self._store, name) for role, name in names.items()}
        return split_half_widths(self._layout, self.info.spec, arrays, widths)

    def norm_precision(self, layer: int) -> np.ndarray:
        """Storage half-widths of the gain of :meth:`norm_weight` (shape ``(N,)``).

        Examples
        --------
        >>> import qkforms.models as qm
        >>> with qm.load("smollm2", checksum=False) as model:
        ...     h, g = model.norm_precision(0), model.norm_weight(0)
        >>> h.shape == g.shape, bool((h <= abs(g) * 2.0**-24).all())
        (True, True)
        """
        name = self._norm_tensor_name(self._check_layer(layer))
        return np.asarray(half_widths(self._store, name), dtype=np.float64).reshape(-1)

    def _norm_tensor_name(self, layer: int) -> str:
        """The checkpoint tensor holding the gain of the norm before ``layer``'s attention."""
        info = self.info
        want = self._layout.norm_tensor(info.spec, layer)
        if want is None:
            raise UnsupportedArchitectureError(
                f"the norm before the attention of {info.architecture!r} models is not "
                "known, or there is none (post-norm models) (supported: "
                f"{', '.join(norm_supported_model_types())}, and GGUF files)"
            )
        hits = [t for t in self._store.names if t == want or t.endswith("." + want)]
        if len(hits) != 1:
            raise UnsupportedArchitectureError(
                f"{info.name}: norm tensor {want!r} "
                f"{'not found' if not hits else 'ambiguous'} in the checkpoint"
            )
        return hits[0]

    def norm_weight(self, layer: int) -> np.ndarray:
        """The gain ``gamma`` (shape ``(N,)``) of the norm feeding ``layer``'s attention
        (the stored weight plus the layout's ``norm_gain_offset``: Gemma's ``1 + w``).

        Folding it into the q/k maps (``W <- W diag(gamma)``) is a congruence of the
        form: the signature is kept, the profile changes.

        Raises
        ------
        UnsupportedArchitectureError
            When the architecture's norm placement is not known (e.g. OPT, whose
            pre/post-norm order depends on the checkpoint) or the tensor is absent.
        """
        info = self.info
        name = self._norm_tensor_name(self._check_layer(layer))
        gamma = np.asarray(self._read(name), dtype=np.float64).reshape(-1)
        if gamma.shape != (info.N,):
            raise CheckpointError(
                f"{info.name}: norm tensor {name!r} has shape {gamma.shape}, "
                f"expected ({info.N},)"
            )
        return gamma + self._layout.norm_gain_offset(info.spec)

    def layers(self, layers: Iterable[int] | None = None) -> Iterator[LayerWeights]:
        """Yield :class:`LayerWeights` one layer at a time (all layers by default)."""
        chosen = range(self.info.n_layers) if layers is None else layers
        for layer in chosen:
            yield self.layer(layer)

    def heads(self, layers: Iterable[int] | None = None) -> Iterator[HeadWeights]:
        """Yield :class:`HeadWeights` for every (layer, query head), layer by layer."""
        for lw in self.layers(layers):
            yield from lw.heads()

    def close(self) -> None:
        """Close the checkpoint files."""
        self._store.close()

    def __enter__(self) -> Model:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_finite(model: str, layer: int, qk: QKArrays, kv_index: np.ndarray,
                  names: dict[str, str]) -> None:
    """Raise NonFiniteError naming the first head with a NaN/Inf weight or bias."""
    checks = [("W_Q", qk.W_Q, "query", ("q", "qkv")), ("b_Q", qk.b_Q, "query",
                                                         ("q_bias", "qkv_bias")),
              ("W_K", qk.W_K, "key", ("k", "qkv")), ("b_K", qk.b_K, "key",
                                                     ("k_bias", "qkv_bias"))]
    for label, arr, side, roles in checks:
        if arr is None:
            continue
        bad = ~np.isfinite(arr).reshape(arr.shape[0], -1).all(axis=1)
        if bad.any():
            h = int(np.flatnonzero(bad)[0])
            count = int((~np.isfinite(arr[h])).sum())
            tensor = next((names[r] for r in roles if r in names), "?")
            if side == "query":
                who = f"query head {h} (key head {int(kv_index[h])})"
            else:
                users = np.flatnonzero(kv_index == h).tolist()
                who = f"key head {h} (used by query heads {users})"
            raise NonFiniteError(f"{model}: layer {layer}, {who}: {label} has {count} "
                                 f"non-finite (NaN/Inf) entries (tensor {tensor!r})")
