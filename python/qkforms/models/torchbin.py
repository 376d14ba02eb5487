"""Pickle checkpoints (``pytorch_model.bin``), only on explicit opt-in.

Pickle files can execute code when loaded, so :func:`qkforms.models.load` refuses them
unless ``allow_pickle=True``. Even then they are read with
``torch.load(weights_only=True)``, which unpickles tensors and plain containers only,
and memory-maps the storage (``mmap=True``) so that tensors are paged in on use.

Examples
--------
>>> from qkforms.models.torchbin import PICKLE_SUFFIXES
>>> ".bin" in PICKLE_SUFFIXES
True
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from qkforms._fs import require_regular
from qkforms.errors import CheckpointError, MissingTensorError, UnsafePathError

__all__ = ["PICKLE_SUFFIXES", "TorchBinStore"]

#: file suffixes treated as pickle checkpoints
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")


class TorchBinStore:
    """Tensors of pickle checkpoints read with ``torch.load(weights_only=True)``.

    Parameters
    ----------
    files
        The pickle files (shards).
    weight_map
        Optional name -> shard mapping (``pytorch_model.bin.index.json``).

    Examples
    --------
    >>> import os, tempfile, pytest
    >>> torch = pytest.importorskip("torch")
    >>> p = os.path.join(tempfile.mkdtemp(), "pytorch_model.bin")
    >>> torch.save({"w": torch.ones(2, 3, dtype=torch.bfloat16)}, p)
    >>> store = TorchBinStore([p])
    >>> store.shape("w"), store.dtype("w"), store.read("w").sum()
    ((2, 3), 'bfloat16', np.float64(6.0))
    """

    def __init__(self, files: list[str], weight_map: dict[str, str] | None = None) -> None:
        try:
            import torch
        except ImportError as exc:
            raise CheckpointError("allow_pickle=True needs torch to read .bin checkpoints "
                                  "(pip install torch)") from exc
        self._torch = torch
        self.paths = [os.fspath(p) for p in files]
        self._where: dict[str, tuple[str, Any]] = {}
        for path in self.paths:
            try:
                require_regular(path)  # a FIFO would block torch.load forever
            except UnsafePathError as exc:
                raise CheckpointError(str(exc)) from None
            try:
                state = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
            except Exception as exc:
                raise CheckpointError(f"{path}: cannot read pickle checkpoint with "
                                      f"weights_only=True: {exc}") from exc
            if not isinstance(state, dict):
                raise CheckpointError(f"{path}: expected a state dict, got "
                                      f"{type(state).__name__}")
            for name, value in state.items():
                if isinstance(value, torch.Tensor):
                    if weight_map is None or os.path.basename(weight_map.get(name, path)) \
                            == os.path.basename(path):
                        self._where[name] = (path, value)

    @property
    def names(self) -> list[str]:
        """All tensor names."""
        return list(self._where)

    def __contains__(self, name: object) -> bool:
        return name in self._where

    def _lookup(self, name: str) -> tuple[str, Any]:
        try:
            return self._where[name]
        except KeyError:
            where = ", ".join(os.path.basename(p) for p in self.paths)
            raise MissingTensorError(f"tensor {name!r} is not in the checkpoint "
                                     f"({where})") from None

    def file_of(self, name: str) -> str:
        """Path of the file holding ``name``."""
        return self._lookup(name)[0]

    def shape(self, name: str) -> tuple[int, ...]:
        """Shape of a tensor."""
        return tuple(int(s) for s in self._lookup(name)[1].shape)

    def dtype(self, name: str) -> str:
        """dtype name (``float32``, ``bfloat16``, ...)."""
        return str(self._lookup(name)[1].dtype).removeprefix("torch.")

    def read(self, name: str) -> np.ndarray:
        """The tensor as float64 (exact for every floating dtype)."""
        tensor = self._lookup(name)[1]
        return tensor.detach().to(self._torch.float64).numpy().copy()

    def close(self) -> None:
        """Drop the tensors."""
        self._where = {}
