"""What a loader hands out: files read, model facts, and per-layer / per-head weights.

These records carry no loading logic. :class:`ModelInfo` holds the
:class:`~qkforms.models.config.ArchSpec` read from the checkpoint (and exposes its
fields as attributes), plus what only the opened files tell: the display name, the
storage dtype(s), the files with their checksums and the format. :class:`LayerWeights`
and :class:`HeadWeights` hold float64 query/key maps in the convention of ``docs/theory.md`` §1
(``W`` of shape ``(n, N)``, output x input); :meth:`HeadWeights.to_head` turns one into
the core's :class:`qkforms.Head`.

Examples
--------
>>> import numpy as np
>>> from qkforms.models.records import LayerWeights
>>> lw = LayerWeights(0, np.ones((2, 1, 3)), np.ones((1, 1, 3)), None, None, np.array([0, 0]))
>>> lw.head(1).to_head()
Head(n=1, N=3)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from qkforms.head import Head
from qkforms.models.config import ArchSpec

__all__ = ["HeadWeights", "LayerWeights", "ModelInfo", "SourceFile"]


@dataclass(frozen=True)
class SourceFile:
    """One file a model was read from: path, size, sha256 (when asked) and mtime.

    Examples
    --------
    >>> SourceFile("/m/config.json", 10, None).size
    10
    """

    path: str
    size: int
    sha256: str | None
    #: modification time (ns) when the model was opened
    mtime_ns: int | None = None


@dataclass(frozen=True)
class ModelInfo:
    """What a checkpoint is, from its config and headers (no weights read).

    Attributes
    ----------
    name
        Display name (config ``_name_or_path``, GGUF ``general.name``, the short name's
        hub id, or the directory/file name).
    spec
        The :class:`~qkforms.models.config.ArchSpec` of the checkpoint; its fields are
        readable directly on the info: ``architecture`` (the model type of a Hugging
        Face config, :func:`qkforms.models.layouts.supported_model_types`, or the GGUF
        architecture), ``n_layers``, ``N``,
        ``n``, ``n_q``, ``n_kv``, ``positional`` (``"absolute"``, ``"alibi"`` or
        ``"rope"``), ``rope_base``, ``rotary_fraction``, ``rope_scaling`` (``None``
        unless ``positional == "rope"``; scaling ``None`` when not scaled),
        ``has_qk_bias``, ``causal``.
    dtype
        Storage dtype(s) of the q/k weight tensors (``float32``, ``bfloat16``, ``Q4_1``,
        ...; comma-separated when mixed; biases not counted).
    files
        Files read, with sizes and sha256 (``None`` when ``load(checksum=False)``).
    format
        ``"safetensors"``, ``"gguf"`` or ``"pickle"``; ``"transformers"`` and
        ``"transformer_lens"`` for models read in memory
        (:func:`qkforms.models.from_transformers`,
        :func:`qkforms.models.from_transformer_lens`).
    qk_norm_policy
        ``"fold"`` when the model normalizes queries/keys and its maps were folded
        (:mod:`qkforms.models.scoremap`); ``None`` for models without q/k normalization.
    weight_processing
        How the weights were processed before qkforms read them, when they were
        (TransformerLens' ``fold_ln``: :data:`qkforms.models.lens.PROCESSING`); ``None``
        for the maps as stored.

    Examples
    --------
    >>> from qkforms.models.config import ArchSpec
    >>> spec = ArchSpec("gpt2", "gpt2", 2, 8, 4, 2, 2, "absolute", has_qk_bias=True)
    >>> info = ModelInfo("m", spec, "float32", ())
    >>> info.N, info.n_heads, info.kv_group, info.rope_base
    (8, 4, 1, None)
    """

    name: str
    spec: ArchSpec
    dtype: str
    files: tuple[SourceFile, ...]
    format: str = "safetensors"
    qk_norm_policy: str | None = None
    weight_processing: str | None = None

    # -- the ArchSpec facts, read through -------------------------------------------
    @property
    def architecture(self) -> str:
        """Model type (``spec.architecture``)."""
        return self.spec.architecture

    @property
    def n_layers(self) -> int:
        """Layers."""
        return self.spec.n_layers

    @property
    def N(self) -> int:  # noqa: N802 (the paper's name)
        """Residual dimension."""
        return self.spec.N

    @property
    def n(self) -> int:
        """Head dimension."""
        return self.spec.n

    @property
    def n_q(self) -> int:
        """Query heads per layer."""
        return self.spec.n_q

    @property
    def n_kv(self) -> int:
        """Key/value heads per layer."""
        return self.spec.n_kv

    @property
    def positional(self) -> str:
        """``"absolute"``, ``"alibi"`` or ``"rope"``."""
        return self.spec.positional

    @property
    def rope_base(self) -> float | None:
        """RoPE frequency base (``None`` unless RoPE)."""
        return self.spec.rope_base if self.spec.positional == "rope" else None

    @property
    def rotary_fraction(self) -> float | None:
        """Fraction of each head's dimensions that is rotated (``None`` unless RoPE)."""
        return self.spec.rotary_fraction if self.spec.positional == "rope" else None

    @property
    def rope_scaling(self) -> dict[str, Any] | None:
        """RoPE scaling settings (``None`` unless RoPE and scaled)."""
        return self.spec.rope_scaling if self.spec.positional == "rope" else None

    @property
    def rope_layout(self) -> str | None:
        """``"split-half"`` or ``"interleaved"`` rotary pairs (``None`` unless RoPE)."""
        return self.spec.rope_layout if self.spec.positional == "rope" else None

    @property
    def attention_scale(self) -> float | None:
        """The score's factor on ``<q, k>`` when it is not ``1/sqrt(n)`` (else ``None``)."""
        return self.spec.attention_scale

    @property
    def attn_softcap(self) -> float | None:
        """Logit soft-capping constant (``None`` without soft-capping)."""
        return self.spec.attn_softcap

    @property
    def qk_norm(self) -> dict[str, Any] | None:
        """The q/k normalization as a plain dict (``None`` without one)."""
        norm = self.spec.qk_norm
        return None if norm is None else dataclasses.asdict(norm)

    @property
    def has_qk_bias(self) -> bool:
        """Whether the query/key maps are affine (biases present)."""
        return self.spec.has_qk_bias

    @property
    def causal(self) -> bool:
        """Decoder (True) or bidirectional encoder (False)."""
        return self.spec.causal

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (the facts, then files as dicts), e.g. for a manifest.

        Examples
        --------
        >>> from qkforms.models.config import ArchSpec
        >>> spec = ArchSpec("bert", "bert", 1, 4, 2, 2, 2, "absolute", has_qk_bias=True)
        >>> d = ModelInfo("m", spec, "float32", (SourceFile("/m/w", 3, "ab"),)).as_dict()
        >>> d["N"], d["causal"], d["files"]
        (4, True, [{'path': '/m/w', 'size': 3, 'sha256': 'ab', 'mtime_ns': None}])
        """
        out: dict[str, Any] = {k: getattr(self, k) for k in self.fact_names()}
        out["files"] = [dataclasses.asdict(f) for f in self.files]
        return out

    @staticmethod
    def fact_names() -> tuple[str, ...]:
        """The facts of a model (its name, the ArchSpec fields but the layout, then its own
        fields but spec and files: dtype, format, ...), derived from the dataclasses; what
        a survey manifest records per model.

        Examples
        --------
        >>> ModelInfo.fact_names()[:4]
        ('name', 'architecture', 'n_layers', 'N')
        """
        spec = tuple(f.name for f in dataclasses.fields(ArchSpec) if f.name != "layout")
        own = tuple(f.name for f in dataclasses.fields(ModelInfo)
                    if f.name not in ("name", "spec", "files"))
        return ("name", *spec, *own)

    @property
    def n_heads(self) -> int:
        """Query heads in the whole model (``n_layers * n_q``)."""
        return self.spec.n_layers * self.spec.n_q

    @property
    def kv_group(self) -> int:
        """Query heads per key/value head."""
        return self.spec.kv_group


@dataclass(frozen=True, eq=False)
class HeadWeights:
    """Query and key maps of one (layer, query head).

    ``W_Q``/``W_K`` have shape ``(n, N)`` (output x input), ``b_Q``/``b_K`` shape
    ``(n,)`` or ``None``; all float64 and read-only.

    Examples
    --------
    >>> import numpy as np
    >>> hw = HeadWeights(0, 0, 0, np.eye(1, 2), np.eye(1, 2, 1), np.array([2.0]), None)
    >>> hw.form().tolist()
    [[0.0, 0.0], [1.0, 0.0]]
    >>> hw.homogenized().tolist()
    [[0.0, 0.0, 0.0], [1.0, 0.0, 2.0], [0.0, 0.0, 0.0]]
    >>> hw.to_head().signature()
    Signature(n_pos=1, n_neg=1, n_zero=0)
    """

    layer: int
    head: int
    kv_head: int
    W_Q: np.ndarray
    W_K: np.ndarray
    b_Q: np.ndarray | None
    b_K: np.ndarray | None

    def to_head(self) -> Head:
        """The core's :class:`qkforms.Head` of these maps (biases included)."""
        return Head(self.W_Q, self.W_K, b_Q=self.b_Q, b_K=self.b_K)

    def form(self) -> np.ndarray:
        """The bilinear part ``L = W_K^T W_Q`` (``N x N``; key argument first)."""
        return self.to_head().form()

    def homogenized(self) -> np.ndarray:
        """The homogenized form of Proposition 3 (``(N+1) x (N+1)``).

        ``L_hat = [[W_K^T W_Q, W_K^T b_Q], [b_K^T W_Q, b_K^T b_Q]]``, so that the
        unscaled score of query ``x_k`` on key ``x_j`` is ``(x_j, 1)^T L_hat (x_k, 1)``.
        Missing biases count as zero (:meth:`qkforms.Head.homogenized_form`).
        """
        return self.to_head().homogenized_form()


@dataclass(frozen=True, eq=False)
class LayerWeights:
    """Query and key maps of all heads of one layer.

    Attributes
    ----------
    layer
        Layer index (0-based).
    W_Q, W_K
        ``(n_q, n, N)`` and ``(n_kv, n, N)`` float64, read-only.
    b_Q, b_K
        ``(n_q, n)`` and ``(n_kv, n)``, or ``None``.
    kv_index
        ``(n_q,)`` integer array: the key/value head each query head reads.

    Examples
    --------
    >>> import numpy as np
    >>> lw = LayerWeights(3, np.zeros((4, 2, 5)), np.ones((2, 2, 5)), None, None,
    ...                   np.array([0, 0, 1, 1]))
    >>> lw.head(2).kv_head, lw.head(2).W_K.sum()
    (1, np.float64(10.0))
    """

    layer: int
    W_Q: np.ndarray
    W_K: np.ndarray
    b_Q: np.ndarray | None
    b_K: np.ndarray | None
    kv_index: np.ndarray

    @property
    def n_q(self) -> int:
        """Query heads."""
        return int(self.W_Q.shape[0])

    def head(self, h: int) -> HeadWeights:
        """The :class:`HeadWeights` of query head ``h`` (views, no copy)."""
        g = int(self.kv_index[h])
        return HeadWeights(self.layer, int(h), g, self.W_Q[h], self.W_K[g],
                           None if self.b_Q is None else self.b_Q[h],
                           None if self.b_K is None else self.b_K[g])

    def heads(self) -> Iterator[HeadWeights]:
        """All query heads of the layer, in order."""
        for h in range(self.n_q):
            yield self.head(h)
