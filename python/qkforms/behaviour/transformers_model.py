"""The ``transformers`` side of a behaviour run (``docs/behaviour.md``): loading the model
of a checkpoint the survey's loader opened, and finding the modules that hold the
survey's maps by their weights (the keying of the heads).

``torch`` and ``transformers`` are imported only when a function here runs
(the ``behaviour`` extra).

Examples
--------
>>> TOKENIZER_FILES[0]
'tokenizer.json'
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from qkforms.errors import (
    CheckpointError,
    QKFormsError,
    UnsupportedArchitectureError,
    VerificationError,
)

if TYPE_CHECKING:
    from qkforms.models import ModelInfo

__all__ = [
    "TOKENIZER_FILES",
    "forward_kwargs",
    "import_torch",
    "load_transformers",
    "maps_present",
    "projection_index",
    "query_modules",
]

#: files of a Hugging Face directory that hold a tokenizer's vocabulary (without one,
#: transformers 5 builds an empty tokenizer)
TOKENIZER_FILES: tuple[str, ...] = ("tokenizer.json", "tokenizer.model", "vocab.txt",
                                    "vocab.json", "spiece.model", "sentencepiece.bpe.model")


# --------------------------------------------------------------------------- loading


def import_torch() -> Any:
    """The ``torch`` module, with ``transformers`` importable; else a clear error.

    Raises
    ------
    QKFormsError
        When torch or transformers is not installed (the ``behaviour`` extra).
    """
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError as exc:
        raise QKFormsError(
            f"qkforms behaviour runs the model with torch and transformers ({exc.name} is "
            "not installed): pip install 'qkforms[behaviour]' (torch==2.13.0 is the CPU "
            "wheel; install it first where the default index serves a CUDA build)") from None
    return torch


def load_transformers(info: ModelInfo, *, dtype: str) -> tuple[Any, Any, dict[str, Any]]:
    """The ``transformers`` model (eager attention, eval mode) and tokenizer of a checkpoint
    the survey's loader opened, and what was loaded (for the manifest).

    GGUF files go through ``transformers``' GGUF loading
    (``from_pretrained(directory, gguf_file=...)``, which dequantizes with the ``gguf``
    package and builds the tokenizer from the file's metadata); Hugging Face directories
    through ``from_pretrained(directory)``. Without tokenizer files the probes draw from
    the embedding's ids (recorded).
    """
    torch = import_torch()
    import transformers

    files = [f.path for f in info.files]
    kwargs: dict[str, Any] = {"attn_implementation": "eager", "dtype": getattr(torch, dtype)}
    if info.format == "gguf":
        path = files[-1]
        where: dict[str, Any] = {"pretrained_model_name_or_path": os.path.dirname(path),
                                 "gguf_file": os.path.basename(path)}
    elif info.format == "safetensors":
        where = {"pretrained_model_name_or_path": os.path.dirname(files[0])}
    else:
        raise UnsupportedArchitectureError(
            f"{info.name}: qkforms behaviour runs safetensors directories and GGUF files "
            f"(this checkpoint is {info.format})")
    t = time.perf_counter()
    try:
        model = transformers.AutoModel.from_pretrained(**where, **kwargs)
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise CheckpointError(f"{info.name}: transformers cannot load "
                              f"{where['pretrained_model_name_or_path']} "
                              f"({type(exc).__name__}: {exc})") from exc
    model.eval()
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    tokenizer = None
    note = "the model's tokenizer"
    directory = str(where["pretrained_model_name_or_path"])
    if info.format != "gguf" and not any(os.path.isfile(os.path.join(directory, f))
                                         for f in TOKENIZER_FILES):
        note = ("no tokenizer files next to the checkpoint; tokens drawn from the embedding's "
                "ids")
    else:
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(**where)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            note = (f"no tokenizer ({type(exc).__name__}: {str(exc).splitlines()[0][:200]}); "
                    "tokens drawn from the embedding's ids")
    return model, tokenizer, {"loader": "transformers.AutoModel.from_pretrained",
                              **{k: str(v) for k, v in where.items()},
                              "class": type(model).__name__, "torch_load_s": load_s,
                              "tokenizer_s": time.perf_counter() - t, "tokenizer": note,
                              "tokenizer_class": type(tokenizer).__name__
                              if tokenizer is not None else None}


# --------------------------------------------------------------------------- keying


def _linear_rows(module: Any, N: int) -> Any:
    """The weight of a projection module as (out, N) rows (Linear, or GPT-2's Conv1D)."""
    w = getattr(module, "weight", None)
    if w is None or getattr(w, "ndim", 0) != 2:
        return None
    if type(module).__name__ == "Conv1D" and w.shape[0] == N:
        return w.detach().T
    if w.shape[1] == N:
        return w.detach()
    return None


def projection_index(torch_model: Any, N: int) -> list[tuple[str, Any, NDArray[np.float64],
                                                               NDArray[np.float64]]]:
    """(name, module, row fingerprints, probe vector) of every projection from R^N."""
    torch = import_torch()
    v = np.random.default_rng(0).standard_normal(N)
    out = []
    for name, module in torch_model.named_modules():
        rows = _linear_rows(module, N)
        if rows is None or isinstance(module, torch.nn.Embedding):
            continue
        fp = (rows.to(torch.float64) @ torch.from_numpy(v)).numpy()
        out.append((name, module, fp, v))
    return out


def _find_block(index: list[Any], block: NDArray[np.float64], taken: set[str],
                N: int) -> tuple[str, Any, int] | None:
    """The first module (not in ``taken``) whose rows hold ``block`` (n x N) contiguously."""
    target = float(block[0] @ index[0][3]) if index else 0.0
    scale = float(np.abs(block).max()) or 1.0
    tol = 1e-5 * scale * math.sqrt(N)
    for name, module, fp, _v in index:
        if name in taken:
            continue
        for r in np.flatnonzero(np.abs(fp - target) <= tol):
            if r + block.shape[0] > fp.size:
                continue
            rows = _linear_rows(module, N)[int(r): int(r) + block.shape[0]]
            cand = rows.double().numpy()
            if np.allclose(cand, block, rtol=1e-5, atol=1e-6 * scale):
                return name, module, int(r)
    return None


def query_modules(torch_model: Any, layers: Sequence[Any], N: int) -> list[tuple[str, Any]]:
    """For each layer, the module holding the survey's query map (found by its weights).

    Raises
    ------
    VerificationError
        When a layer's ``W_Q`` of query head 0 is not a block of rows of any module:
        the ``transformers`` model does not hold the maps the survey read.
    """
    index = projection_index(torch_model, N)
    taken: set[str] = set()
    found = []
    for lw in layers:
        hit = _find_block(index, np.asarray(lw.W_Q[0]), taken, N)
        if hit is None:
            raise VerificationError(
                f"layer {lw.layer}: no module of the transformers model holds the survey's "
                "query map of head 0 (W_Q); the model run is not the checkpoint the survey "
                "reads, or it stores its projections in a layout qkforms does not know")
        taken.add(hit[0])
        found.append((hit[0], hit[1]))
    return found


def maps_present(index: list[Any], lw: Any, N: int) -> bool:
    """Whether every head's W_Q and every key head's W_K is a row block of some module."""
    blocks = [np.asarray(b) for b in (*lw.W_Q, *lw.W_K)]
    return all(_find_block(index, b, set(), N) is not None for b in blocks)


def forward_kwargs(torch_model: Any) -> dict[str, Any]:
    """The keyword arguments of a forward pass that returns the attention patterns.

    Examples
    --------
    >>> class Model:
    ...     def forward(self, input_ids, use_cache=None): ...
    >>> forward_kwargs(Model())
    {'output_attentions': True, 'use_cache': False}
    """
    import inspect

    params = inspect.signature(torch_model.forward).parameters
    extra: dict[str, Any] = {"output_attentions": True}
    if "use_cache" in params:
        extra["use_cache"] = False
    return extra
