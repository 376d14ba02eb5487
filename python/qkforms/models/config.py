"""Model configurations: from ``config.json`` (or GGUF metadata) to an :class:`ArchSpec`.

An :class:`ArchSpec` is everything the loaders need to cut the query and key
projections of a checkpoint into heads: the layout, the counts (layers, query heads,
key/value heads), the dimensions ``N`` (residual stream) and ``n`` (head), the
positional scheme and whether the projections carry biases.

Architectures whose queries or keys are normalized after the projection (``q_norm`` /
``k_norm``: Qwen3, OLMo 2, Gemma 3, ...) get a :class:`QKNorm` on their spec from their
layout (:func:`qkforms.models.layouts.spec_from_config` builds the spec of a model
type from its layout): their score ``<norm(W_Q x), norm(W_K y)>`` is not a fixed
bilinear form in ``(x, y)`` (``docs/theory.md`` §12.1), and the loader refuses them
unless the q/k-norm policy is ``fold`` (:mod:`qkforms.models.scoremap`). Model types whose q/k
normalization qkforms cannot fold are refused here with the reason
(:data:`REFUSED_MODEL_TYPES`), and so are
checkpoints whose config or tensors show a q/k normalization their layout does not
describe (:func:`refuse_qk_norm`).

Examples
--------
>>> from qkforms.models.layouts import spec_from_config
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

from qkforms._fs import read_bytes
from qkforms.errors import CheckpointError, QKFormsError, UnsupportedArchitectureError

__all__ = [
    "ArchSpec",
    "QKNorm",
    "REFUSED_MODEL_TYPES",
    "config_float",
    "config_int",
    "read_config",
    "refuse_clamped_qkv",
    "refuse_qk_norm",
    "rope_settings",
]

#: why Gemma 3n is refused (Hugging Face checkpoints and GGUF files alike)
GEMMA3N_REASON = ("Gemma 3n mixes per-layer inputs into the residual stream (AltUp) before "
                  "the attention; qkforms does not map it")

#: Hugging Face model types with q/k normalization that qkforms refuses, with the reason
#: (the ones it folds have a layout: :func:`qkforms.models.layouts.supported_model_types`)
REFUSED_MODEL_TYPES: dict[str, str] = {
    "qwen3_next": ("Qwen3-Next alternates linear-attention layers (Gated DeltaNet), which have "
                   "no softmax score, with gated attention layers; qkforms surveys models "
                   "whose every layer is dot-product attention"),
    "gemma3n": GEMMA3N_REASON,
    "chameleon": ("Chameleon's q/k LayerNorm has a bias (q_norm.bias, k_norm.bias), so the "
                  "normalized score is not f(x) g(y) x^T L' y and folding cannot apply"),
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
        ``"rms"`` (RMSNorm: Qwen3, Gemma 3, OLMo 2) or ``"layer"`` (LayerNorm without
        bias: StableLM, Command-R).
    scope
        ``"head"`` (Qwen3, Gemma 3) or ``"all"`` (OLMo 2/3, OLMoE).
    eps
        The epsilon under the square root.
    gain_offset
        The effective gain is the stored weight plus this: 1 for Hugging Face Gemma 3
        checkpoints (``Gemma3RMSNorm`` multiplies by ``1 + w``), 0 otherwise (GGUF files
        of Gemma 3 too: llama.cpp's converter stores ``1 + w``).

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
        The model type of a Hugging Face config (``"gpt2"``, ``"llama"``, ``"qwen3"``,
        ``"gemma3"``, ...) or the GGUF architecture.
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
    path = os.fspath(path)
    try:
        raw = read_bytes(path, "config")  # a regular file of bounded size
    except QKFormsError as exc:
        raise CheckpointError(str(exc)) from None
    try:
        cfg = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
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
    Models with sliding-window layers of their own RoPE (Gemma 3, OLMo 3) write
    ``rope_parameters`` per layer type: the ``full_attention`` entry gives the base and
    scaling, and a different base of the ``sliding_attention`` layers is recorded in the
    scaling as ``rope_base_sliding_window`` (as GGUF files record it).

    Examples
    --------
    >>> rope_settings({"rope_parameters": {"rope_theta": 5e5, "rope_type": "linear",
    ...                                    "factor": 2.0}})
    (500000.0, 1.0, {'rope_type': 'linear', 'factor': 2.0})
    >>> rope_settings({"rotary_emb_base": 10000, "rotary_pct": 0.25},
    ...               base_keys=("rotary_emb_base",), fraction_keys=("rotary_pct",))
    (10000.0, 0.25, None)
    >>> rope_settings({"rope_parameters": {
    ...     "full_attention": {"rope_type": "default", "rope_theta": 1e6},
    ...     "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}})
    (1000000.0, 1.0, {'rope_base_sliding_window': 10000.0})
    """
    params = cfg.get("rope_parameters")
    sliding_base = None
    merged: dict[str, Any] = {}
    if isinstance(params, Mapping) and params:
        if all(isinstance(v, Mapping) for v in params.values()):  # per layer type
            merged = dict(params.get("full_attention") or {})
            sliding = params.get("sliding_attention")
            if isinstance(sliding, Mapping) and sliding.get("rope_theta") is not None:
                sliding_base = config_float(sliding["rope_theta"], "config field "
                                            "rope_parameters.sliding_attention.rope_theta")
        else:
            merged = dict(params)
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
    main_base = (config_float(base, "config field rope_theta (RoPE base)")
                 if base is not None else float(default_base))
    if sliding_base is not None and sliding_base != main_base:
        scaling["rope_base_sliding_window"] = sliding_base
    return (main_base,
            config_float(fraction, "config field partial_rotary_factor (rotary fraction)",
                         high=1.0) if fraction is not None else 1.0,
            scaling or None)


def refuse_clamped_qkv(subject: str, limit: Any) -> None:
    """Raise for a model that clamps its projected queries, keys and values.

    Raises
    ------
    UnsupportedArchitectureError
        Always (``subject`` names the model or file).

    Examples
    --------
    >>> try:
    ...     refuse_clamped_qkv("'olmoe'", 8.0)
    ... except UnsupportedArchitectureError as exc:
    ...     print(str(exc)[:42])
    'olmoe': the model clamps queries, keys an
    """
    raise UnsupportedArchitectureError(
        f"{subject}: the model clamps queries, keys and values elementwise to +-{limit} "
        "(clip_qkv), so its score is a bilinear form only for tokens whose projections "
        "stay inside the clamp; not supported")


def refuse_qk_norm(cfg: Mapping[str, Any], tensor_names: list[str] | None = None, *,
                   hint: str | None = None) -> None:
    """Raise if the config or tensors show a q/k normalization the layout does not fold.

    Called for model types whose layout describes no q/k normalization (and for unknown
    model types, before they are refused as unknown): a q/k-norm flag in the config or a
    q/k-norm tensor in the checkpoint means the loader would hand out maps whose form is
    not the model's.

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
    ...     refuse_qk_norm({"model_type": "llama", "use_qk_norm": True})
    ... except UnsupportedArchitectureError as exc:
    ...     print("not a fixed bilinear form" in str(exc))
    True
    """
    model_type = str(cfg.get("model_type", "?"))
    why = None
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
            "L = W_K^T W_Q (docs/survey.md, 'q/k-normalized and soft-capped heads'), and "
            f"qkforms does not know where {model_type!r} checkpoints keep the gains to fold. "
            + (hint or "GGUF files of such models can be surveyed with --qk-norm fold "
               "(load(..., qk_norm='fold'))."))
