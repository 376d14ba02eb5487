"""GGUF metadata to an :class:`~qkforms.models.config.ArchSpec`, architecture by architecture.

llama.cpp's converter writes the ``<arch>.*`` metadata and the tensor names of a model;
:func:`spec_from_gguf` turns them into the :class:`~qkforms.models.config.ArchSpec` the
loaders cut heads with (the GGUF twin of
:func:`qkforms.models.layouts.spec_from_config`), for every architecture of
:data:`GGUF_ARCHITECTURES`, and refuses the others with a reason
(:data:`REFUSED_GGUF_ARCHITECTURES`). The file itself is read by
:class:`qkforms.models.ggufio.GGUFStore`.

Examples
--------
>>> from qkforms.models.gguf_config import GGUF_ARCHITECTURES, spec_from_gguf
>>> GGUF_ARCHITECTURES["phi3"].fused
True
>>> spec_from_gguf({"general.architecture": "qwen2", "qwen2.block_count": 2,
...     "qwen2.embedding_length": 64, "qwen2.attention.head_count": 4},
...     ["blk.0.attn_q.bias"]).has_qk_bias
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from qkforms.errors import CheckpointError, UnsupportedArchitectureError, format_value
from qkforms.models.config import (
    GEMMA3N_REASON,
    ArchSpec,
    QKNorm,
    config_float,
    refuse_clamped_qkv,
)
from qkforms.models.layouts import supported_model_types

__all__ = [
    "GGUFArchitecture",
    "GGUF_ARCHITECTURES",
    "REFUSED_GGUF_ARCHITECTURES",
    "SUPPORTED_GGUF_ARCHITECTURES",
    "gguf_architecture",
    "spec_from_gguf",
]


@dataclass(frozen=True)
class GGUFArchitecture:
    """Where one GGUF architecture keeps its query/key maps, as llama.cpp's converter
    (``convert_hf_to_gguf.py``) writes them.

    Attributes
    ----------
    name
        ``general.architecture``.
    models
        The model families stored under this name (documentation).
    fused
        One ``attn_qkv`` tensor (rows: all query heads, all key heads, all value
        heads) instead of ``attn_q``/``attn_k``.
    permuted
        The converter permuted each head's q/k rows (``LlamaModel.permute``) for
        llama.cpp's interleaved RoPE; the loader undoes it. Only for these.
    positional
        ``"rope"`` or ``"absolute"``.
    rope_layout
        The RoPE pairing of the rows the loader hands out (after undoing a
        permutation): ``"split-half"``, or ``"interleaved"`` for models that rotate
        adjacent pairs in their own code (Command-R).
    qk_norm_kind
        ``"rms"`` or ``"layer"``: what ``attn_q_norm``/``attn_k_norm`` tensors mean in
        this architecture, when the file has them.

    Examples
    --------
    >>> GGUF_ARCHITECTURES["phi3"].fused, GGUF_ARCHITECTURES["llama"].permuted
    (True, True)
    """

    name: str
    models: str
    fused: bool = False
    permuted: bool = False
    positional: str = "rope"
    rope_layout: str = "split-half"
    qk_norm_kind: str = "rms"


#: GGUF architectures with ordinary dot-product heads, by ``general.architecture``
GGUF_ARCHITECTURES: dict[str, GGUFArchitecture] = {a.name: a for a in (
    GGUFArchitecture("llama", "Llama 1-3, Mistral, Mixtral (attention), SmolLM, TinyLlama",
                     permuted=True),
    GGUFArchitecture("granite", "IBM Granite 3 (attention multiplier)", permuted=True),
    GGUFArchitecture("olmo", "OLMo 1", permuted=True),
    GGUFArchitecture("qwen2", "Qwen1.5, Qwen2, Qwen2.5 (q/k biases)"),
    GGUFArchitecture("qwen2moe", "Qwen1.5-MoE, Qwen2-MoE (attention only)"),
    GGUFArchitecture("qwen3", "Qwen3 (q/k RMSNorm per head)"),
    GGUFArchitecture("qwen3moe", "Qwen3-MoE (attention only; q/k RMSNorm per head)"),
    GGUFArchitecture("phi3", "Phi-3, Phi-3.5, Phi-4 (fused attn_qkv)", fused=True),
    GGUFArchitecture("gemma", "Gemma"),
    GGUFArchitecture("gemma2", "Gemma 2 (logit soft-capping)"),
    GGUFArchitecture("gemma3", "Gemma 3 (q/k RMSNorm per head)"),
    GGUFArchitecture("starcoder2", "StarCoder2 (q/k biases)"),
    GGUFArchitecture("stablelm", "StableLM 2 (partial RoPE; q/k LayerNorm per head in 12B)",
                     qk_norm_kind="layer"),
    GGUFArchitecture("olmo2", "OLMo 2, OLMo 3 (q/k RMSNorm over all heads)"),
    GGUFArchitecture("gpt2", "GPT-2 (fused attn_qkv, learned positions)", fused=True,
                     positional="absolute", qk_norm_kind="layer"),
    GGUFArchitecture("falcon", "Falcon 7B/40B/180B (fused attn_qkv, multi-query)", fused=True),
    GGUFArchitecture("command-r", "Command-R, Command-R+ (interleaved RoPE; q/k LayerNorm "
                     "per head in R+)", rope_layout="interleaved", qk_norm_kind="layer"),
)}

#: GGUF ``general.architecture`` values this loader understands
SUPPORTED_GGUF_ARCHITECTURES = tuple(GGUF_ARCHITECTURES)

_MLA = ("multi-head latent attention: keys and values come from a compressed latent that "
        "is RMS-normalized (kv_a_norm) and a RoPE key part shared by all heads; qkforms "
        "does not map it to per-head query/key maps")
_NO_ATTENTION = "it has no dot-product attention (a state-space or recurrent model)"

#: architectures refused with a reason (besides the unknown ones)
REFUSED_GGUF_ARCHITECTURES: dict[str, str] = {
    "deepseek2": _MLA,
    "minicpm3": _MLA,
    "plm": _MLA,
    "mamba": _NO_ATTENTION,
    "mamba2": _NO_ATTENTION,
    "rwkv6": _NO_ATTENTION,
    "rwkv6qwen2": _NO_ATTENTION,
    "rwkv7": _NO_ATTENTION,
    "arwkv7": _NO_ATTENTION,
    "cohere2": ("Command R7B interleaves RoPE layers with layers without positional "
                "encoding; qkforms records one positional scheme per model"),
    "llama4": ("Llama 4 interleaves RoPE layers with position-free layers that "
               "L2-normalize queries and keys, and chunks its attention"),
    "gemma3n": GEMMA3N_REASON,
}


def _meta_int(meta: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = meta.get(key, default)
    if value is None:
        raise CheckpointError(f"GGUF metadata lacks {key!r}")
    if isinstance(value, list | tuple):
        if len(set(value)) != 1:
            raise UnsupportedArchitectureError(f"GGUF metadata {key!r} varies per layer "
                                               f"({format_value(value)}); not supported")
        value = value[0]
    try:
        out = int(value)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(
            f"GGUF metadata {key!r} is not an integer: {format_value(value)}") from exc
    if out <= 0:
        raise CheckpointError(f"GGUF metadata {key!r} must be positive, got {out}")
    return out


def _meta_float(meta: Mapping[str, Any], key: str) -> float | None:
    value = meta.get(key)
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"GGUF metadata {key!r} is not a number: {value!r}") from exc


def gguf_architecture(meta: Mapping[str, Any]) -> GGUFArchitecture:
    """The :class:`GGUFArchitecture` of a file's metadata.

    Raises
    ------
    UnsupportedArchitectureError
        For refused architectures (with the reason) and unknown ones (naming the
        supported).

    Examples
    --------
    >>> gguf_architecture({"general.architecture": "qwen2"}).permuted
    False
    >>> try:
    ...     gguf_architecture({"general.architecture": "deepseek2"})
    ... except UnsupportedArchitectureError as exc:
    ...     print("latent attention" in str(exc))
    True
    """
    arch = meta.get("general.architecture")
    if arch in REFUSED_GGUF_ARCHITECTURES:
        raise UnsupportedArchitectureError(
            f"GGUF architecture {arch!r} is not supported: "
            f"{REFUSED_GGUF_ARCHITECTURES[arch]}")
    if not isinstance(arch, str) or arch not in GGUF_ARCHITECTURES:
        raise UnsupportedArchitectureError(
            f"unknown GGUF architecture {arch!r}: qkforms reads GGUF files of architecture "
            f"{', '.join(SUPPORTED_GGUF_ARCHITECTURES)} (and Hugging Face safetensors "
            f"checkpoints of {', '.join(supported_model_types())})")
    return GGUF_ARCHITECTURES[arch]


def _rope_scaling(meta: Mapping[str, Any], arch: str, tensor_names: list[str]
                  ) -> dict[str, Any] | None:
    """RoPE scaling facts: ``rope.scaling.*`` keys, frequency-factor tensors, local base."""
    scaling: dict[str, Any] = {}
    kind = meta.get(f"{arch}.rope.scaling.type")
    if kind not in (None, "none"):
        scaling["rope_type"] = str(kind)
    prefix = f"{arch}.rope.scaling."
    for key, value in meta.items():
        if key.startswith(prefix) and key != f"{arch}.rope.scaling.type":
            scaling[key[len(prefix):]] = value
    if "rope_freqs.weight" in tensor_names:  # Llama 3.1 style per-frequency factors
        scaling.setdefault("rope_type", "llama3")
        scaling["frequency_factors"] = "rope_freqs.weight"
    if "rope_factors_long.weight" in tensor_names:  # Phi-3 LongRoPE
        scaling.setdefault("rope_type", "longrope")
        scaling["frequency_factors"] = "rope_factors_long.weight, rope_factors_short.weight"
    swa = _meta_float(meta, f"{arch}.rope.freq_base_swa")
    if swa is not None:  # Gemma 3: another base in the sliding-window layers
        scaling["rope_base_sliding_window"] = swa
    return scaling or None


def _qk_norm(meta: Mapping[str, Any], entry: GGUFArchitecture, tensor_names: list[str],
             shapes: Mapping[str, tuple[int, ...]], n: int, n_q: int) -> QKNorm | None:
    q_name, k_name = "blk.0.attn_q_norm.weight", "blk.0.attn_k_norm.weight"
    if q_name not in tensor_names and k_name not in tensor_names:
        return None
    arch = entry.name
    if q_name not in tensor_names or k_name not in tensor_names:
        raise UnsupportedArchitectureError(
            f"GGUF {arch!r}: the file normalizes only the "
            f"{'queries' if q_name in tensor_names else 'keys'} (one of attn_q_norm / "
            "attn_k_norm is missing); not supported")
    if entry.permuted:
        raise UnsupportedArchitectureError(
            f"GGUF {arch!r} with q/k normalization: the converter permuted the q/k rows, "
            "and where it put the norm gains is not mapped")
    if any(f"blk.0.attn_{s}_norm.bias" in tensor_names for s in "qk"):
        raise UnsupportedArchitectureError(
            f"GGUF {arch!r}: the q/k normalization has a bias, so the normalized score is "
            "not f(x) g(y) x^T L' y; not supported")
    shape = shapes.get(q_name, ())
    scope = "all" if shape == (n_q * n,) and n_q > 1 else "head"
    if entry.qk_norm_kind == "rms":
        eps = _meta_float(meta, f"{arch}.attention.layer_norm_rms_epsilon")
    else:
        eps = _meta_float(meta, f"{arch}.attention.layer_norm_epsilon")
    return QKNorm(entry.qk_norm_kind, scope, 1e-6 if eps is None else eps)


def spec_from_gguf(meta: Mapping[str, Any], tensor_names: list[str],
                   shapes: Mapping[str, tuple[int, ...]] | None = None) -> ArchSpec:
    """Build an :class:`ArchSpec` from GGUF metadata.

    Parameters
    ----------
    meta
        The file's metadata (``general.architecture``, ``<arch>.*``).
    tensor_names
        The file's tensor names (biases, q/k norms, RoPE factor tensors are detected
        from them).
    shapes
        Row-major shapes of (at least) the q/k norm tensors, to tell a per-head norm
        from one over all heads.

    Raises
    ------
    UnsupportedArchitectureError
        For refused or unknown architectures, per-layer head counts, clamped q/k/v.

    Examples
    --------
    >>> spec = spec_from_gguf({"general.architecture": "llama", "llama.block_count": 30,
    ...     "llama.embedding_length": 576, "llama.attention.head_count": 9,
    ...     "llama.attention.head_count_kv": 3, "llama.rope.freq_base": 1e5}, [])
    >>> spec.n, spec.kv_group, spec.rope_base, spec.rotary_fraction
    (64, 3, 100000.0, 1.0)
    """
    entry = gguf_architecture(meta)
    arch = entry.name
    if meta.get(f"{arch}.attention.clamp_kqv") is not None:
        refuse_clamped_qkv(f"GGUF {arch!r}", meta[f"{arch}.attention.clamp_kqv"])
    N = _meta_int(meta, f"{arch}.embedding_length")
    n_q = _meta_int(meta, f"{arch}.attention.head_count")
    n_kv = _meta_int(meta, f"{arch}.attention.head_count_kv", n_q)
    if f"{arch}.attention.key_length" not in meta and N % n_q:
        raise CheckpointError(f"GGUF: embedding_length={N} is not divisible by "
                              f"head_count={n_q} and no attention.key_length is given")
    n = _meta_int(meta, f"{arch}.attention.key_length", N // n_q)
    rope = entry.positional == "rope"
    rot = meta.get(f"{arch}.rope.dimension_count")
    fraction = (config_float(rot, f"GGUF metadata {arch}.rope.dimension_count", high=n) / n
                if rope and rot is not None else 1.0)
    softcap = _meta_float(meta, f"{arch}.attn_logit_softcapping")
    if softcap is None and arch == "gemma2":
        softcap = 50.0  # llama.cpp's default for Gemma 2 files written without the key
    has_bias = any(f"blk.0.attn_{t}.bias" in tensor_names for t in ("q", "k", "qkv"))
    return ArchSpec(
        architecture=arch, layout="gguf", n_layers=_meta_int(meta, f"{arch}.block_count"),
        N=N, n=n, n_q=n_q, n_kv=n_kv, positional=entry.positional,
        rope_base=config_float(meta.get(f"{arch}.rope.freq_base", 10000.0),
                               f"GGUF metadata {arch}.rope.freq_base") if rope else None,
        rotary_fraction=fraction if rope else None,
        rope_scaling=_rope_scaling(meta, arch, tensor_names) if rope else None,
        has_qk_bias=has_bias, causal=True, rope_layout=entry.rope_layout,
        attention_scale=_meta_float(meta, f"{arch}.attention.scale"),
        attn_softcap=softcap,
        qk_norm=_qk_norm(meta, entry, tensor_names, shapes or {}, n, n_q))
