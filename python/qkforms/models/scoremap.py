"""From a head's bilinear form to its score: q/k normalization and logit soft-capping.

Most heads score a query token ``x`` against a key token ``y`` by ``s = c x^T L y`` with
``L = W_K^T W_Q`` (homogenized with the biases) and a positive constant ``c``. Two
families of models put a map around that form; the survey treats them by explicit
policies (``docs/survey.md``, "q/k-normalized and soft-capped heads").

**q/k normalization** (Qwen3, Gemma 3, OLMo 2/3, OLMoE, StableLM 2, Command-R+): queries
and keys are normalized after the projection (:class:`~qkforms.models.config.QKNorm`;
the layouts name the gain tensors, :func:`qkforms.models.layouts.qk_norm_requests`). With
``u = C W x`` (``C`` the identity for RMSNorm, the centering for LayerNorm) the
normalized query is ``gamma_q * u / r(x)``, ``r(x) = sqrt(mean(u^2) + eps) > 0``, so

    ``s(x, y) = c f(x) g(y) x^T L' y``,  ``f = 1/r_q > 0``,  ``g = 1/r_k > 0``,
    ``L' = (C W_K)^T diag(gamma_q * gamma_k) (C W_Q)``.

The score is not a fixed bilinear form (docs/theory.md §12.1 excludes it), but ``L'`` fixes
the sign of every score and its ratio between key tokens up to the factor ``g``.
Policy ``refuse`` (default) refuses such models; policy ``fold`` hands out the maps
``W'_Q = diag(gamma_q) C W_Q``, ``W'_K = diag(gamma_k) C W_K`` (:func:`fold_qk_norm`), so
that every statistic is that of ``L'``.

**Logit soft-capping** (Gemma 2): the score is ``cap * tanh(s / cap)``, a strictly
increasing odd function of ``s``: signs and the order of scores are those of the
bilinear form, which is surveyed as it is.

Examples
--------
>>> import numpy as np
>>> from qkforms.models.config import QKNorm
>>> W = np.arange(12.0).reshape(1, 2, 6)           # one head, n = 2, N = 6
>>> Wf, bf = fold_qk_norm(W, None, np.array([2.0, 3.0]), QKNorm("rms", "head", 1e-6))
>>> Wf[0, :, 0].tolist(), bf
([0.0, 18.0], None)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from qkforms.errors import CheckpointError, QKFormsError, UnsupportedArchitectureError
from qkforms.models.config import QKNorm

if TYPE_CHECKING:
    from qkforms.models.records import ModelInfo

__all__ = [
    "QK_NORM_POLICIES",
    "QK_NORM_POLICY_MEANINGS",
    "check_qk_norm_policy",
    "fold_qk_norm",
    "gain_rows",
    "qk_norm_factors",
    "qk_norm_refusal",
    "score_notes",
]

#: the policies for q/k-normalized heads (``--qk-norm``); the first is the default
QK_NORM_POLICIES = ("refuse", "fold")

#: what ``--qk-norm fold`` means (manifest, summary, report)
QK_NORM_FOLD_NOTE = (
    "q/k normalization folded (--qk-norm fold): the model normalizes its projected "
    "queries and keys, so its score is c f(x) g(y) x^T L' y with positive factors f, g "
    "(the inverse RMS, or standard deviation, of the projected query and key) and "
    "L' = (C W_K)^T diag(gamma_q * gamma_k) (C W_Q) (C: centering for LayerNorm, identity "
    "for RMSNorm; gamma: the stored gains). Every statistic here is that of L', which "
    "fixes the sign of every score; the score itself is not a fixed bilinear form.")

#: what each ``--qk-norm`` policy means (manifest, summary, report)
QK_NORM_POLICY_MEANINGS = {
    "refuse": ("models that normalize their projected queries and keys (Qwen3, Gemma 3, "
               "OLMo2, ...) are refused: their score is not a fixed bilinear form"),
    "fold": ("models that normalize their projected queries and keys are surveyed through "
             "L' = (C W_K)^T diag(gamma_q * gamma_k) (C W_Q): their score is "
             "c f(x) g(y) x^T L' y with positive f, g, so L' fixes the sign of every score"),
}

#: what soft-capping means for the survey
SOFTCAP_NOTE = (
    "logit soft-capping: the score s is replaced by cap * tanh(s / cap), a strictly "
    "increasing odd map, so signs and the order of scores are those of the bilinear form "
    "x^T L y, which is surveyed as it is.")


def check_qk_norm_policy(policy: str) -> str:
    """Return ``policy`` if it is one of :data:`QK_NORM_POLICIES`.

    Raises
    ------
    QKFormsError
        Naming the valid policies.

    Examples
    --------
    >>> check_qk_norm_policy("fold")
    'fold'
    """
    if policy not in QK_NORM_POLICIES:
        raise QKFormsError(f"unknown q/k-norm policy {policy!r}: use one of "
                           f"{', '.join(QK_NORM_POLICIES)}")
    return policy


def qk_norm_refusal(subject: str, norm: QKNorm, gains: tuple[str, ...] = ()
                    ) -> UnsupportedArchitectureError:
    """The error of policy ``refuse`` for a model that normalizes its queries and keys.

    Parameters
    ----------
    subject
        Who is refused (file and architecture), at the start of the message.
    norm
        The model's :class:`~qkforms.models.config.QKNorm`.
    gains
        The tensors holding the gains, when known (named in the message).

    Examples
    --------
    >>> err = qk_norm_refusal("m: 'qwen3'", QKNorm("rms", "head", 1e-6))
    >>> str(err)[:62]
    "m: 'qwen3' normalizes its projected queries and keys (RMSNorm "
    >>> "--qk-norm fold" in str(err)
    True
    """
    over = "over each head" if norm.scope == "head" else "over all heads at once"
    kind = "RMSNorm" if norm.kind == "rms" else "LayerNorm"
    where = f", gains {' and '.join(repr(g) for g in gains)}" if gains else ""
    return UnsupportedArchitectureError(
        f"{subject} normalizes its projected queries and keys ({kind} {over}{where}), so "
        "the score <norm(W_Q x), norm(W_K y)> is not a fixed bilinear form in (x, y) "
        "(docs/survey.md, 'q/k-normalized and soft-capped heads'). Use --qk-norm fold "
        "(load(..., qk_norm='fold')) to survey L' = (C W_K)^T diag(gamma_q gamma_k) "
        "(C W_Q), which fixes the sign of every score.")


def gain_rows(gamma: np.ndarray, heads: int, n: int, what: str) -> np.ndarray:
    """The gain of a q/k norm as ``(heads, n)`` rows.

    A stored gain of shape ``(n,)`` is shared by all heads, ``(heads, n)`` is per head
    (StableLM, Command-R+), ``(heads * n,)`` runs over all heads' coordinates (OLMo2).

    Raises
    ------
    CheckpointError
        For any other shape.

    Examples
    --------
    >>> gain_rows(np.array([1.0, 2.0]), 3, 2, "q").tolist()
    [[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]
    """
    g = np.asarray(gamma, dtype=np.float64)
    if g.shape == (n,):
        return np.broadcast_to(g, (heads, n))
    if g.shape in ((heads, n), (heads * n,)):
        return g.reshape(heads, n)
    raise CheckpointError(f"the {what} normalization gain has shape {g.shape}; expected "
                          f"({n},), ({heads}, {n}) or ({heads * n},)")


def _center(W: np.ndarray, scope: str) -> np.ndarray:
    """``C W``: subtract the mean over each head's rows (``head``) or over all rows."""
    if scope == "head":
        return W - W.mean(axis=1, keepdims=True)
    flat = W.reshape(-1, *W.shape[2:])
    return W - flat.mean(axis=0)


def fold_qk_norm(W: np.ndarray, b: np.ndarray | None, gamma: np.ndarray, norm: QKNorm
                 ) -> tuple[np.ndarray, np.ndarray | None]:
    """Fold a q/k normalization's centering and gain into the projection.

    Parameters
    ----------
    W
        ``(H, n, N)`` query (or key) maps of one layer.
    b
        ``(H, n)`` biases or ``None``.
    gamma
        The stored gain (see :func:`gain_rows`); ``norm.gain_offset`` is added.
    norm
        The model's :class:`~qkforms.models.config.QKNorm`.

    Returns
    -------
    (W', b')
        ``diag(gamma) C W`` and ``diag(gamma) C b`` (``None`` when ``b`` is).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.models.config import QKNorm
    >>> W = np.array([[[1.0, 0.0], [3.0, 2.0]]])          # H = 1, n = 2, N = 2
    >>> fold_qk_norm(W, None, np.ones(2), QKNorm("layer", "head", 1e-5))[0].tolist()
    [[[-1.0, -1.0], [1.0, 1.0]]]
    """
    H, n = W.shape[0], W.shape[1]
    g = gain_rows(gamma, H, n, "query/key") + norm.gain_offset
    Wc, bc = W, b
    if norm.kind == "layer":
        Wc = _center(W, norm.scope)
        bc = None if b is None else _center(b[..., None], norm.scope)[..., 0]
    Wf = g[:, :, None] * Wc
    return Wf, (None if bc is None else g * bc)


def qk_norm_factors(W: np.ndarray, b: np.ndarray | None, X: np.ndarray, norm: QKNorm
                    ) -> np.ndarray:
    """The positive factors ``1 / sqrt(mean(u^2) + eps)`` of tokens ``X`` per head.

    ``u = C (W x + b)`` is the projection the model normalizes (before the gain). With
    :func:`fold_qk_norm` the model's normalized query of token ``x`` in head ``h`` is
    ``factor[t, h] * (W'_h x + b'_h)``.

    Parameters
    ----------
    W, b
        The unfolded ``(H, n, N)`` maps and ``(H, n)`` biases (or ``None``).
    X
        ``(T, N)`` tokens.
    norm
        The :class:`~qkforms.models.config.QKNorm`.

    Returns
    -------
    numpy.ndarray
        ``(T, H)``, all positive.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.models.config import QKNorm
    >>> W = np.array([[[3.0], [4.0]]])                     # H = 1, n = 2, N = 1
    >>> f = qk_norm_factors(W, None, np.array([[2.0]]), QKNorm("rms", "head", 0.0))
    >>> float(f[0, 0] * np.sqrt(np.mean(np.array([6.0, 8.0]) ** 2)))
    1.0
    """
    u = np.einsum("hnN,tN->thn", W, X)
    if b is not None:
        u = u + b[None]
    if norm.kind == "layer":
        u = u - (u.mean(axis=2, keepdims=True) if norm.scope == "head"
                 else u.mean(axis=(1, 2), keepdims=True))
    ms = (u ** 2).mean(axis=2) if norm.scope == "head" else np.broadcast_to(
        (u ** 2).mean(axis=(1, 2))[:, None], u.shape[:2])
    return 1.0 / np.sqrt(ms + norm.eps)


def score_notes(info: ModelInfo) -> list[str]:
    """What the survey must say about how this model's scores relate to its forms.

    Examples
    --------
    >>> from qkforms.models.config import ArchSpec
    >>> from qkforms.models.records import ModelInfo
    >>> spec = ArchSpec("gemma2", "gguf", 1, 8, 4, 2, 2, "rope", 1e4, 1.0, attn_softcap=50.0)
    >>> score_notes(ModelInfo("m", spec, "F32", ()))[0].startswith("logit soft-capping")
    True
    """
    notes = []
    if info.spec.attn_softcap is not None:
        notes.append(f"{SOFTCAP_NOTE[:-1]} (cap = {info.spec.attn_softcap:g}).")
    if info.qk_norm_policy == "fold":
        notes.append(QK_NORM_FOLD_NOTE)
    return notes
