"""Model configurations: from ``config.json`` (or GGUF metadata) to an :class:`ArchSpec`.

An :class:`ArchSpec` is everything the loaders need to cut the query and key
projections of a checkpoint into heads: the layout, the counts (layers, query heads,
key/value heads), the dimensions ``N`` (residual stream) and ``n`` (head), the
positional scheme and whether the projections carry biases.

Architectures whose queries or keys are normalized after the projection (``q_norm`` /
``k_norm``: Qwen3, OLMo2, Gemma 3, ...) are refused here: their score
``<norm(W_Q x), norm(W_K y)>`` is not a fixed bilinear form in ``(x, y)``
(``docs/theory.md`` §12.1); GGUF files of them are read with the q/k-norm policy ``fold``
(:mod:`qkforms.models.scoremap`).

Examples
--------
>>> from qkforms.models.config import spec_from_config
>>> spec = spec_from_config({"model_type": "gpt2", "n_embd": 768, "n_head": 12,
...                          "n_layer": 12})
>>> spec.N, spec.n, spec.n_q, spec.positional
(768, 64, 12, 'absolute')
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from qkforms.errors import CheckpointError, UnsupportedArchitectureError

__all__ = [
    "ArchSpec",
    "QKNorm",
    "QK_NORM_MODEL_TYPES",
    "config_float",
    "config_int",
    "read_config",
    "refuse_qk_norm",
    "rope_settings",
    "spec_from_config",
]

#: model types known to normalize queries/keys after the projection
QK_NORM_MODEL_TYPES: dict[str, str] = {
    "qwen3": "Qwen3 applies RMSNorm to each query and key head (q_norm/k_norm)",
    "qwen3_moe": "Qwen3-MoE applies RMSNorm to each query and key head (q_norm/k_norm)",
    "qwen3_next": "Qwen3-Next applies RMSNorm to queries and keys (q_norm/k_norm)",
    "olmo2": "OLMo2 applies RMSNorm to the projected queries and keys (q_norm/k_norm)",
    "olmo3": "OLMo3 applies RMSNorm to the projected queries and keys (q_norm/k_norm)",
    "olmoe": "OLMoE applies RMSNorm to the projected queries and keys (q_norm/k_norm)",
    "gemma3": "Gemma 3 applies RMSNorm to queries and keys (q_norm/k_norm)",
    "gemma3_text": "Gemma 3 applies RMSNorm to queries and keys (q_norm/k_norm)",
    "gemma3n": "Gemma 3n applies RMSNorm to queries and keys (q_norm/k_norm)",
    "chameleon": "Chameleon applies LayerNorm to queries and keys (q_norm/k_norm)",
}

#: config flags that switch on query/key normalization in otherwise plain layouts
QK_NORM_FLAGS = ("use_qk_norm", "qk_layernorm", "qk_norm", "use_qk_layernorm")


#: what a q/k normalization divides by: RMS (``rms``) or the standard deviation after
#: centering (``layer``, LayerNorm without bias)
QK_NORM_KINDS = ("rms", "layer")
#: over what the statistics are taken: each head's ``n`` coordinates, or all heads at once
QK_NORM_SCOPES = ("head", "all")


@dataclass(frozen=True)
class QKNorm:
    """How a model normalizes its projected queries and keys (before RoPE).

    The normalized query of head ``h`` is ``gamma_h * c_h(x) / sqrt(mean(c(x)^2) + eps)``
    with ``c = C (W_Q x + b_Q)``, ``C`` the identity (``kind="rms"``) or the centering
    (``kind="layer"``), and the mean taken over the head's ``n`` coordinates
    (``scope="head"``) or over all heads' coordinates (``scope="all"``). The keys alike.
    :mod:`qkforms.models.scoremap` folds it (``--qk-norm fold``).

    Attributes
    ----------
    kind
        ``"rms"`` (RMSNorm: Qwen3, Gemma 3, OLMo2) or ``"layer"`` (LayerNorm without
        bias: StableLM, Command-R).
    scope
        ``"head"`` or ``"all"``.
    eps
        The epsilon under the square root.
    gain_offset
        The effective gain is the stored weight plus this (0 for GGUF files, whose
        converter already stores Gemma's ``1 + w``).

    Examples
    --------
    >>> QKNorm("rms", "head", 1e-6).gain_offset
    0.0
    """

    kind: str
    scope: str
    eps: float
    gain_offset: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in QK_NORM_KINDS or self.scope not in QK_NORM_SCOPES:
            raise UnsupportedArchitectureError(
                f"unknown q/k normalization {self.kind!r} over {self.scope!r} (known: "
                f"{', '.join(QK_NORM_KINDS)} over {', '.join(QK_NORM_SCOPES)})")
        if not self.eps >= 0.0:
            raise CheckpointError(f"q/k normalization epsilon must be >= 0, got {self.eps!r}")


@dataclass(frozen=True)
class ArchSpec:
    """What a loader needs to know about an architecture.

    Attributes
    ----------
    architecture
        The model type (``"gpt2"``, ``"opt"``, ``"bloom"``, ``"gpt_neox"``, ``"llama"``,
        ``"mistral"``, ``"qwen2"``, ``"bert"``).
    layout
        Name of the layout module that cuts the tensors (``qkforms.models.layouts.*``).
    n_layers, N, n, n_q, n_kv
        Layers, residual dimension, head dimension, query heads and key/value heads per
        layer.
    positional
        ``"absolute"`` (learned, added to the input), ``"alibi"`` or ``"rope"``.
    rope_base, rotary_fraction, rope_scaling
        RoPE frequency base, fraction of each head's dimensions that is rotated, and the
        scaling settings (``None`` when absent or not RoPE).
    has_qk_bias
        Whether the query/key projections carry biases.
    causal
        Decoder (True) or bidirectional encoder (False).
    rope_layout
        Which coordinates of a head RoPE rotates together, in the order the loader hands
        the rows out: ``"split-half"`` (``i`` with ``i + r/2``, Hugging Face
        ``rotate_half``) or ``"interleaved"`` (``2i`` with ``2i + 1``: Command-R).
    attention_scale
        The factor multiplying ``<q, k>`` in the score when the model does not use
        ``1/sqrt(n)`` (Granite's attention multiplier); ``None``: ``1/sqrt(n)``.
    attn_softcap
        Logit soft-capping ``c`` (Gemma 2): the score ``s`` becomes ``c tanh(s / c)``.
    qk_norm
        The :class:`QKNorm` of the projected queries/keys, or ``None``.

    Examples
    --------
    >>> ArchSpec("llama", "llama", 2, 64, 16, 4, 2, "rope", 1e4, 1.0).kv_group
    2
    """

    architecture: str
    layout: str
    n_layers: int
    N: int
    n: int
    n_q: int
    n_kv: int
    positional: str
    rope_base: float | None = None
    rotary_fraction: float | None = None
    rope_scaling: dict[str, Any] | None = field(default=None, compare=False)
    has_qk_bias: bool = False
    causal: bool = True
    rope_layout: str = "split-half"
    attention_scale: float | None = None
    attn_softcap: float | None = None
    qk_norm: QKNorm | None = None

    def __post_init__(self) -> None:
        for key in ("n_layers", "N", "n", "n_q", "n_kv"):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise CheckpointError(f"{self.architecture}: {key} must be a positive "
                                      f"integer, got {value!r}")
        if self.n_q % self.n_kv:
            raise CheckpointError(f"{self.architecture}: {self.n_q} query heads cannot be "
                                  f"grouped over {self.n_kv} key/value heads")
        if self.rope_layout not in ("split-half", "interleaved"):
            raise CheckpointError(f"{self.architecture}: unknown RoPE layout "
                                  f"{self.rope_layout!r}")

    @property
    def kv_group(self) -> int:
        """Query heads per key/value head (1 without grouped-query attention)."""
        return self.n_q // self.n_kv


def read_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a ``config.json``.

    Raises
    ------
    CheckpointError
        If the file is not a JSON object.

    Examples
    --------
    >>> import json, os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "config.json")
    >>> with open(p, "w") as f:
    ...     json.dump({"model_type": "bert"}, f)
    >>> read_config(p)["model_type"]
    'bert'
    """
    from qkforms._fs import open_regular
    from qkforms.errors import UnsafePathError

    path = os.fspath(path)
    try:
        with open_regular(path, "r", encoding="utf-8") as f:
            cfg = json.load(f)
    except UnsafePathError as exc:
        raise CheckpointError(str(exc)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path}: not a valid JSON config ({exc})") from exc
    if not isinstance(cfg, dict):
        raise CheckpointError(f"{path}: the config is not a JSON object")
    return cfg


def config_int(cfg: Mapping[str, Any], *keys: str, default: int | None = None) -> int:
    """The first of ``keys`` present in ``cfg``, as a positive integer.

    Examples
    --------
    >>> config_int({"n_embd": 768}, "hidden_size", "n_embd")
    768
    """
    for key in keys:
        value = cfg.get(key)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise CheckpointError(f"config field {key!r} must be a positive integer, "
                                      f"got {value!r}")
            return value
    if default is not None:
        return default
    raise CheckpointError(f"config has none of the fields {', '.join(map(repr, keys))}")


def config_float(value: Any, where: str, *, low: float = 0.0, high: float = float("inf"),
                 low_open: bool = True) -> float:
    """A configuration value as a finite float in ``(low, high]`` (``[low, high]`` if not
    ``low_open``).

    Raises
    ------
    CheckpointError
        Naming ``where`` and the value, if it is not a number (e.g. the string ``"abc"``
        or a boolean), not finite, or out of range.

    Examples
    --------
    >>> config_float(1e4, "rope_theta")
    10000.0
    >>> try:
    ...     config_float("abc", "config.json: rope_theta")
    ... except CheckpointError as exc:
    ...     print(exc)
    config.json: rope_theta must be a number, got 'abc'
    """
    import math

    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CheckpointError(f"{where} must be a number, got {value!r}")
    out = float(value)
    if not math.isfinite(out) or out > high or out < low or (low_open and out == low):
        bounds = f"{'(' if low_open else '['}{low:g}, {high:g}]"
        raise CheckpointError(f"{where} must be a finite number in {bounds}, got {value!r}")
    return out


def rope_settings(cfg: Mapping[str, Any], *, base_keys: tuple[str, ...] = ("rope_theta",),
                  fraction_keys: tuple[str, ...] = ("partial_rotary_factor",),
                  default_base: float = 10000.0) -> tuple[float, float, dict[str, Any] | None]:
    """RoPE base, rotary fraction and scaling from a config (old and new field styles).

    Newer ``transformers`` write ``rope_parameters = {"rope_theta", "rope_type",
    "partial_rotary_factor", ...}``; older configs use top-level ``rope_theta`` /
    ``rotary_emb_base``, ``rotary_pct`` / ``partial_rotary_factor`` and ``rope_scaling``.

    Examples
    --------
    >>> rope_settings({"rope_parameters": {"rope_theta": 5e5, "rope_type": "linear",
    ...                                    "factor": 2.0}})
    (500000.0, 1.0, {'rope_type': 'linear', 'factor': 2.0})
    >>> rope_settings({"rotary_emb_base": 10000, "rotary_pct": 0.25},
    ...               base_keys=("rotary_emb_base",), fraction_keys=("rotary_pct",))
    (10000.0, 0.25, None)
    """
    params = cfg.get("rope_parameters")
    if isinstance(params, Mapping) and params and not all(
            isinstance(v, Mapping) for v in params.values()):
        merged: dict[str, Any] = dict(params)
    else:
        merged = {}
    base = merged.get("rope_theta")
    if base is None:
        for key in base_keys + ("rope_theta",):
            if cfg.get(key) is not None:
                base = cfg[key]
                break
    fraction = merged.get("partial_rotary_factor")
    if fraction is None:
        for key in fraction_keys + ("partial_rotary_factor",):
            if cfg.get(key) is not None:
                fraction = cfg[key]
                break
    scaling = {k: v for k, v in merged.items()
               if k not in ("rope_theta", "partial_rotary_factor")}
    if scaling.get("rope_type", scaling.get("type")) in (None, "default"):
        scaling = {}
    if not scaling and isinstance(cfg.get("rope_scaling"), Mapping):
        scaling = dict(cfg["rope_scaling"])
    return (config_float(base, "config field rope_theta (RoPE base)")
            if base is not None else float(default_base),
            config_float(fraction, "config field partial_rotary_factor (rotary fraction)",
                         high=1.0) if fraction is not None else 1.0,
            scaling or None)


def refuse_qk_norm(cfg: Mapping[str, Any], tensor_names: list[str] | None = None, *,
                   hint: str | None = None) -> None:
    """Raise if queries or keys are normalized after the projection.

    Parameters
    ----------
    cfg
        The model config.
    tensor_names
        Optional checkpoint tensor names; any ``q_norm``/``k_norm``/``q_layernorm``
        tensor also triggers the refusal.
    hint
        What the user can do instead (appended to the message); default: point at
        ``--qk-norm fold`` for GGUF files.

    Raises
    ------
    UnsupportedArchitectureError
        Saying why such a score is not a fixed bilinear form.

    Examples
    --------
    >>> try:
    ...     refuse_qk_norm({"model_type": "qwen3"})
    ... except UnsupportedArchitectureError as exc:
    ...     print("not a fixed bilinear form" in str(exc))
    True
    """
    model_type = str(cfg.get("model_type", "?"))
    why = QK_NORM_MODEL_TYPES.get(model_type)
    if why is None:
        for flag in QK_NORM_FLAGS:
            if cfg.get(flag):
                why = f"its config sets {flag}=true"
                break
    if why is None and tensor_names:
        markers = ("q_norm", "k_norm", "q_layernorm", "k_layernorm", "attn_q_norm",
                   "attn_k_norm", "query_layernorm", "key_layernorm")
        hit = next((t for t in tensor_names if any(f".{m}." in f".{t}" for m in markers)),
                   None)
        if hit is not None:
            why = f"the checkpoint has a query/key normalization tensor ({hit!r})"
    if why is not None:
        raise UnsupportedArchitectureError(
            f"{model_type!r} is not supported: {why}. The attention score "
            "<norm(W_Q x), norm(W_K y)> is then not a fixed bilinear form in (x, y) -- it "
            "depends on the norms of the projected tokens -- so the head has no single "
            "L = W_K^T W_Q (docs/survey.md, 'q/k-normalized and soft-capped heads'). "
            + (hint or "GGUF files of such models can be surveyed with --qk-norm fold "
               "(load(..., qk_norm='fold'))."))


def spec_from_config(cfg: Mapping[str, Any]) -> ArchSpec:
    """Build the :class:`ArchSpec` of a Hugging Face config.

    Raises
    ------
    UnsupportedArchitectureError
        For q/k-normalizing models, and for unknown model types (naming the supported).

    Examples
    --------
    >>> spec = spec_from_config({"model_type": "mistral", "hidden_size": 5120,
    ...     "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
    ...     "num_hidden_layers": 40, "rope_theta": 1e8})
    >>> spec.n_q, spec.n_kv, spec.n, spec.kv_group, spec.rope_base
    (32, 8, 128, 4, 100000000.0)
    """
    from qkforms.models.layouts import layout_for_model_type

    refuse_qk_norm(cfg)
    model_type = cfg.get("model_type")
    if not isinstance(model_type, str):
        archs = cfg.get("architectures")
        raise UnsupportedArchitectureError(
            f"config has no 'model_type' (architectures: {archs!r}); cannot choose a layout")
    return layout_for_model_type(model_type).spec(cfg)
