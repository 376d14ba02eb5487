"""Synthetic Llama/Mistral-style checkpoints for tests and benchmarks.

:func:`write_llama_checkpoint` writes a Hugging Face model directory (``config.json``
plus one ``model.safetensors``) holding only the query/key projections (and,
optionally, the ``input_layernorm`` gains) of a decoder with grouped-query attention.
Weights are iid Gaussian, generated and written one layer at a time (memory stays at
one layer), stored as ``BF16``, ``F32`` or ``F64`` (the last with an optional ``scale``
multiplying every weight, e.g. 1e300 or 1e-300 to test extreme magnitudes). Individual
heads can be made to fail on purpose: ``nan_heads`` puts a NaN into a query head,
``degenerate_heads`` copies the key head into the query head (``W_Q = W_K``, so the
stacked map has rank n < 2n). :func:`write_gguf_checkpoint` writes a GGUF file of the
same kind with a tokenizer of any vocabulary size (e.g. 150k tokens, to time opening
and refusing large-vocabulary files).

Examples
--------
>>> import tempfile
>>> from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint
>>> d = write_llama_checkpoint(tempfile.mkdtemp(), n_layers=2, N=32, n=4, n_q=4, n_kv=2)
>>> import qkforms.models as qm
>>> m = qm.load(d)
>>> m.info.n_layers, m.info.n_q, m.info.n_kv, m.info.dtype
(2, 4, 2, 'bfloat16')
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from qkforms.errors import ParameterError, format_value

__all__ = ["to_bfloat16_bits", "write_gguf_checkpoint", "write_llama_checkpoint",
           "write_series"]


def to_bfloat16_bits(x: np.ndarray) -> np.ndarray:
    """Round float32 values to bfloat16 (nearest, ties to even); return the uint16 bits.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.survey.synthetic_checkpoints import to_bfloat16_bits
    >>> to_bfloat16_bits(np.array([1.0, -2.0, 1.00390625], dtype=np.float32)).tolist()
    [16256, 49152, 16256]
    """
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))
    return (rounded >> np.uint32(16)).astype(np.uint16)


def write_llama_checkpoint(
    path: str | os.PathLike[str],
    *,
    n_layers: int,
    N: int,
    n: int,
    n_q: int,
    n_kv: int,
    dtype: str = "BF16",
    seed: int = 0,
    model_type: str = "mistral",
    rope_theta: float = 1e8,
    norms: bool = False,
    nan_heads: Iterable[tuple[int, int]] = (),
    degenerate_heads: Iterable[tuple[int, int]] = (),
    name: str | None = None,
    scale: float = 1.0,
    pull: float = 0.0,
) -> Path:
    """Write a synthetic q/k-only checkpoint; return its directory.

    Parameters
    ----------
    path : path
        Directory to create (or reuse).
    n_layers, N, n, n_q, n_kv : int
        Layers, residual dimension, head dimension, query and key/value heads.
    dtype : {"BF16", "F32", "F64"}
    seed : int
    model_type : str
        ``"mistral"`` or ``"llama"``.
    rope_theta : float
    norms : bool
        Also write ``input_layernorm.weight`` gains (positive, around 1).
    nan_heads, degenerate_heads : iterable of (layer, query head)
    name : str, optional
        ``_name_or_path`` in the config (the model's display name).
    scale : float
        Multiplies every q/k weight (in float64; only with ``dtype="F64"``).
    pull : float
        Move every query map towards its key map, ``W_Q <- (1 - pull) W_Q + pull W_K``
        (``pull = 0``: iid Gaussian; towards 1 the forms become symmetric positive
        semidefinite; 1 itself makes every head degenerate).

    Returns
    -------
    Path
    """
    if dtype not in ("BF16", "F32", "F64"):
        raise ParameterError(f"dtype must be 'BF16', 'F32' or 'F64', got {format_value(dtype)}")
    if scale != 1.0 and dtype != "F64":
        raise ParameterError("scale needs dtype='F64' (other dtypes cannot hold scaled weights)")
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    config = _llama_config(model_type=model_type, n_layers=n_layers, N=N, n=n, n_q=n_q,
                           n_kv=n_kv, dtype=dtype, rope_theta=rope_theta, name=name)
    (out / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    head = _safetensors_header(_llama_tensors(n_layers, N, n, n_q, n_kv, norms), dtype)
    _write_llama_weights(out / "model.safetensors", head, n_layers=n_layers, N=N, n=n,
                         n_q=n_q, n_kv=n_kv, dtype=dtype, seed=seed, scale=scale, pull=pull,
                         norms=norms, nan_heads=set(nan_heads),
                         degenerate_heads=set(degenerate_heads))
    return out


def _write_llama_weights(path: Path, head: bytes, *, n_layers: int, N: int, n: int, n_q: int,
                         n_kv: int, dtype: str, seed: int, scale: float, pull: float,
                         norms: bool, nan_heads: set[tuple[int, int]],
                         degenerate_heads: set[tuple[int, int]]) -> None:
    """The safetensors file of :func:`write_llama_checkpoint`: its header, then every
    layer's query and key maps (and norm gains), drawn layer by layer from ``seed``."""
    nan_set, degen, group = nan_heads, degenerate_heads, n_q // n_kv
    rng = np.random.default_rng(seed)
    weight_scale = scale
    init_scale = np.float32(1.0 / np.sqrt(N))

    def encode(a: np.ndarray, factor: float = weight_scale) -> bytes:
        if dtype == "F64":
            return (a.astype(np.float64) * factor).astype("<f8").tobytes()
        return (to_bfloat16_bits(a) if dtype == "BF16" else a.astype("<f4")).tobytes()

    with open(path, "wb") as f:
        f.write(len(head).to_bytes(8, "little"))
        f.write(head)
        for layer in range(n_layers):
            q = rng.standard_normal((n_q, n, N), dtype=np.float32) * init_scale
            k = rng.standard_normal((n_kv, n, N), dtype=np.float32) * init_scale
            if pull:
                q = ((1.0 - pull) * q + pull * k[np.arange(n_q) // group]).astype(np.float32)
            for lay, h in degen:
                if lay == layer:
                    q[h] = k[h // group]
            for lay, h in nan_set:
                if lay == layer:
                    q[h, 0, 0] = np.nan
            f.write(encode(q.reshape(n_q * n, N)))
            f.write(encode(k.reshape(n_kv * n, N)))
            if norms:
                gamma = (1.0 + 0.1 * rng.standard_normal(N)).astype(np.float32)
                f.write(encode(gamma, 1.0))


def _llama_config(*, model_type: str, n_layers: int, N: int, n: int, n_q: int, n_kv: int,
                  dtype: str, rope_theta: float, name: str | None) -> dict[str, object]:
    """The ``config.json`` of :func:`write_llama_checkpoint`."""
    return {
        "architectures": ["MistralForCausalLM" if model_type == "mistral" else "LlamaForCausalLM"],
        "model_type": model_type,
        "_name_or_path": name or f"synthetic-{model_type}-{n_layers}x{n_q}q{n_kv}kv-{N}-{n}",
        "hidden_size": N,
        "num_attention_heads": n_q,
        "num_key_value_heads": n_kv,
        "head_dim": n,
        "num_hidden_layers": n_layers,
        "intermediate_size": 4 * N,
        "vocab_size": 32,
        "rope_theta": rope_theta,
        "rms_norm_eps": 1e-5,
        "max_position_embeddings": 4096,
        "torch_dtype": {"BF16": "bfloat16", "F32": "float32", "F64": "float64"}[dtype],
    }


def _llama_tensors(n_layers: int, N: int, n: int, n_q: int, n_kv: int,
                   norms: bool) -> list[tuple[str, tuple[int, ...]]]:
    """The tensors of :func:`write_llama_checkpoint`, in file order, with their shapes."""
    tensors: list[tuple[str, tuple[int, ...]]] = []
    for layer in range(n_layers):
        base = f"model.layers.{layer}"
        tensors.append((f"{base}.self_attn.q_proj.weight", (n_q * n, N)))
        tensors.append((f"{base}.self_attn.k_proj.weight", (n_kv * n, N)))
        if norms:
            tensors.append((f"{base}.input_layernorm.weight", (N,)))
    return tensors


def _safetensors_header(tensors: list[tuple[str, tuple[int, ...]]], dtype: str) -> bytes:
    """The JSON header of a safetensors file of ``tensors`` (padded to 8 bytes)."""
    itemsize = {"BF16": 2, "F32": 4, "F64": 8}[dtype]
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for tname, shape in tensors:
        size = int(np.prod(shape)) * itemsize
        header[tname] = {
            "dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size],
        }
        offset += size
    head = json.dumps(header).encode("utf-8")
    return head + b" " * (-len(head) % 8)


def write_series(
    path: str | os.PathLike[str],
    steps: Iterable[int],
    *,
    n_layers: int = 2,
    N: int = 32,
    n: int = 4,
    n_q: int = 4,
    n_kv: int = 2,
    seed: int = 0,
    tokens_per_step: int | None = 1024,
    dtype: str = "F32",
) -> Path:
    """A synthetic training run: ``checkpoint-<step>/`` directories with ``trainer_state.json``.

    Every checkpoint has the same Gaussian initialization (``seed``) pulled towards
    symmetric forms by ``pull = 0.8 · step / max(steps)`` (see
    :func:`write_llama_checkpoint`): at step 0 the heads are random products, later the
    profiles move from the midpoint M of Θ towards the vertex c = 1. The state file holds
    ``global_step`` and, when ``tokens_per_step`` is given, ``num_input_tokens_seen``.

    Examples
    --------
    >>> import tempfile
    >>> from qkforms.survey.training_runs import discover_run
    >>> from qkforms.survey.synthetic_checkpoints import write_series
    >>> run = write_series(tempfile.mkdtemp() + "/run", [0, 50, 100], n_layers=1)
    >>> s = discover_run(run)
    >>> s.steps, [c.tokens_seen for c in s.checkpoints]
    ([0, 50, 100], [0, 51200, 102400])
    """
    out = Path(path)
    steps = sorted(set(int(s) for s in steps))
    top = max(max(steps), 1)
    for step in steps:
        ck = write_llama_checkpoint(out / f"checkpoint-{step}", n_layers=n_layers, N=N, n=n,
                                    n_q=n_q, n_kv=n_kv, dtype=dtype, seed=seed,
                                    model_type="llama", pull=0.8 * step / top,
                                    name=f"synthetic-run-{out.name}")
        state: dict[str, object] = {"global_step": step, "log_history": []}
        if tokens_per_step is not None:
            state["num_input_tokens_seen"] = step * tokens_per_step
        (ck / "trainer_state.json").write_text(json.dumps(state), encoding="utf-8")
    return out


def write_gguf_checkpoint(
    path: str | os.PathLike[str],
    *,
    vocab: int = 150_000,
    architecture: str = "qwen3",
    n_layers: int = 2,
    N: int = 64,
    n: int = 16,
    n_q: int = 4,
    n_kv: int = 2,
    qk_norm: bool = True,
    seed: int = 0,
) -> Path:
    """Write a small GGUF decoder (F32 q/k maps) with a ``vocab``-token tokenizer.

    The metadata are those of llama.cpp's converter for ``architecture`` (block count,
    embedding length, head counts, key length, RoPE base) plus ``tokenizer.ggml.tokens``,
    ``token_type``, ``scores`` and ``merges`` of ``vocab`` entries each; with
    ``qk_norm`` each layer has ``attn_q_norm``/``attn_k_norm`` gains (Qwen3: refused
    under ``qk_norm="refuse"``). Returns the file's path.

    Examples
    --------
    >>> import os, tempfile
    >>> from qkforms.survey.synthetic_checkpoints import write_gguf_checkpoint
    >>> import qkforms.models as qm
    >>> p = write_gguf_checkpoint(os.path.join(tempfile.mkdtemp(), "m.gguf"), vocab=50,
    ...                           qk_norm=False)
    >>> m = qm.load(p)
    >>> m.info.spec.architecture, m.info.n_layers, m.info.n_q, m.info.n
    ('qwen3', 2, 4, 16)
    """
    import gguf

    out = Path(path)
    rng = np.random.default_rng(seed)
    w = gguf.GGUFWriter(os.fspath(out), architecture)
    w.add_name(f"synthetic {architecture}, {vocab}-token vocabulary")
    w.add_block_count(n_layers)
    w.add_context_length(2048)
    w.add_embedding_length(N)
    w.add_feed_forward_length(4 * N)
    w.add_head_count(n_q)
    w.add_head_count_kv(n_kv)
    w.add_key_length(n)
    w.add_value_length(n)
    w.add_rope_freq_base(1e6)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_tokenizer_model("gpt2")
    w.add_token_list([f"tok{i:06d}" for i in range(vocab)])
    w.add_token_types([1] * vocab)
    w.add_token_scores([0.0] * vocab)
    w.add_token_merges([f"t ok{i:06d}" for i in range(vocab)])
    for layer in range(n_layers):
        blk = f"blk.{layer}"
        w.add_tensor(f"{blk}.attn_q.weight",
                     rng.standard_normal((n_q * n, N)).astype(np.float32))
        w.add_tensor(f"{blk}.attn_k.weight",
                     rng.standard_normal((n_kv * n, N)).astype(np.float32))
        w.add_tensor(f"{blk}.attn_norm.weight", np.ones(N, dtype=np.float32))
        if qk_norm:
            for s in "qk":
                w.add_tensor(f"{blk}.attn_{s}_norm.weight",
                             (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return out
