"""The single error hierarchy of qkforms.

Every error the package raises on bad input derives from :class:`QKFormsError`,
so ``except qkforms.QKFormsError`` catches all of them. Messages say what was
wrong, where, and what to do about it; values in them are formatted by
:func:`format_value` (``1.0``, never ``np.float64(1.0)``). A test
(``tests/test_error_contract.py``) walks the package source and fails on a
``raise`` of a built-in exception class, except the few justified inline with
an ``# error-contract:`` comment.

Examples
--------
>>> import numpy as np, qkforms
>>> try:
...     qkforms.profile(np.zeros((3, 3)))
... except qkforms.ZeroFormError as exc:
...     print(type(exc).__name__)
ZeroFormError
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "QKFormsError",
    "ParameterError",
    "MissingColumnError",
    "LayerIndexError",
    "ShapeError",
    "ZeroFormError",
    "NonFiniteError",
    "DegenerateHeadError",
    "UndecidedSignatureError",
    "NotSymmetricError",
    "CheckpointError",
    "MissingTensorError",
    "ModelNotFoundError",
    "UnsupportedArchitectureError",
    "UnsafeFormatError",
    "PrecisionUnavailableError",
    "VerificationError",
    "NotRealError",
    "UnsafePathError",
    "OutputError",
    "SurveyLockedError",
    "format_value",
]


class QKFormsError(Exception):
    """Base class of every error raised by qkforms."""


class ParameterError(QKFormsError, ValueError):
    """An argument is outside its domain or not one of the accepted choices.

    Examples: a negative tolerance, ``t`` outside ``[-1, 1]`` for ``theta(t)``, an
    unknown method name, a value that is not a real number.

    Examples
    --------
    >>> import qkforms
    >>> try:
    ...     qkforms.theta(2)
    ... except qkforms.ParameterError as exc:
    ...     print(exc)
    theta(t) needs -1 <= t <= 1, got t = 2
    """


class ShapeError(QKFormsError, ValueError):
    """An array has the wrong shape (e.g. a non-square form, mismatched Q and K)."""


class ZeroFormError(QKFormsError, ValueError):
    """The form is zero, where the quantity asked for is undefined (e.g. the profile)."""


class NotRealError(QKFormsError, TypeError):
    """An input is not a real numeric array: complex, strings, objects, or masked entries.

    Examples
    --------
    >>> import numpy as np, qkforms
    >>> try:
    ...     qkforms.signature(np.eye(2) * (1 + 1j))
    ... except NotRealError as exc:
    ...     print(type(exc).__name__)
    NotRealError
    """


class NonFiniteError(QKFormsError, ValueError):
    """Weights or a form contain NaN or infinite values."""


class DegenerateHeadError(QKFormsError, ValueError):
    """The stacked map [W_Q; W_K] is not surjective, so Theorem 3 does not apply."""


class UndecidedSignatureError(QKFormsError, ValueError):
    """Floating point cannot decide a signature: an eigenvalue lies within its error bound."""


class NotSymmetricError(QKFormsError, ValueError):
    """A matrix that must be symmetric is not."""


class CheckpointError(QKFormsError, ValueError):
    """A checkpoint file is malformed, truncated or inconsistent with its config."""


class MissingTensorError(CheckpointError, KeyError):
    """A tensor the architecture needs is not in the checkpoint."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else ""


class ModelNotFoundError(CheckpointError, FileNotFoundError):
    """The source is neither an existing path, a short name nor an available hub id.

    Examples
    --------
    >>> issubclass(ModelNotFoundError, CheckpointError)
    True
    """

    def __str__(self) -> str:  # FileNotFoundError would otherwise format errno fields
        return str(self.args[0]) if self.args else ""


class UnsupportedArchitectureError(QKFormsError, ValueError):
    """The architecture is unknown, or its score is not a fixed bilinear form."""


class UnsafeFormatError(QKFormsError, ValueError):
    """Refused to load a format that would execute code (pickle checkpoints)."""


class PrecisionUnavailableError(QKFormsError, ValueError):
    """A weight's storage precision is not defined for how it is stored.

    Examples: a GGUF vector-codebook type (``IQ2_XXS``: eight weights share one lattice
    point), an integer dtype, or a layout that computes the maps from the stored tensors.
    """


class MissingColumnError(QKFormsError, KeyError):
    """A table lacks a column that was asked for (``KeyError`` for mapping-style lookups)."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else ""


class LayerIndexError(ParameterError, IndexError):
    """A layer index outside ``[0, n_layers)`` (``IndexError`` for sequence-style lookups)."""


class VerificationError(QKFormsError):
    """A registered result failed its check, or the Lean side disagrees."""


class UnsafePathError(QKFormsError, ValueError):
    """A path qkforms would read, write or delete is not what it must be.

    Raised for a special file (FIFO, device, socket) where a regular file is read, a
    symbolic link or a foreign entry inside an output tree the survey manages, a shard
    index naming a file outside its model directory, or an empty/ill-typed ``--out``
    (the contract is in ``docs/survey.md``, "What the survey writes and deletes").
    """


class OutputError(QKFormsError, OSError):
    """Writing an output file failed (disk full, permission denied, ...); names the file.

    The temporary file of the failed write is removed; the previous version of the
    file, if any, is left as it was.
    """

    def __str__(self) -> str:  # OSError would otherwise format errno fields
        return str(self.args[0]) if self.args else ""


class SurveyLockedError(QKFormsError):
    """Another live survey (or its worker processes) is writing into the same ``--out``."""


_SHOW_ITEMS = 8  # array/sequence entries shown in a message before eliding the rest


def format_value(value: Any) -> str:
    """Format a value for an error message: numbers as Python prints them.

    NumPy scalars print as the Python number (``1.0``, not ``np.float64(1.0)``),
    arrays and sequences as lists of such numbers (long ones elided, with their
    shape), strings quoted. Every error message of the package that shows a value
    uses this one function.

    Parameters
    ----------
    value : Any
        The value to show.

    Returns
    -------
    str
        A short, readable rendering.

    Examples
    --------
    >>> import numpy as np
    >>> format_value(np.float64(1.0)), format_value(np.int64(3)), format_value("svd")
    ('1.0', '3', "'svd'")
    >>> format_value(np.array([0.25, 0.25, 0.5]))
    '[0.25, 0.25, 0.5]'
    >>> format_value((np.float32(0.5), 2))
    '(0.5, 2)'
    >>> format_value(np.arange(20.0))
    '[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, ...] (shape (20,))'
    >>> format_value(np.zeros((2, 2)))
    '[[0.0, 0.0], [0.0, 0.0]]'
    """
    import numpy as np  # the core imports numpy anyway; kept local so errors.py stays leaf

    if isinstance(value, np.generic):
        return format_value(value.item())
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, float):
        return repr(float(value))  # float subclasses print as the plain float
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return format_value(value.item())
        if value.size > _SHOW_ITEMS:
            head = ", ".join(format_value(v) for v in value.ravel()[:_SHOW_ITEMS])
            return f"[{head}, ...] (shape {tuple(int(d) for d in value.shape)})"
        return format_value(value.tolist())
    if isinstance(value, list | tuple):
        items = [format_value(v) for v in value[:_SHOW_ITEMS]]
        if len(value) > _SHOW_ITEMS:
            items.append(f"... ({len(value)} items)")
        if isinstance(value, tuple):
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{format_value(k)}: {format_value(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, set | frozenset):
        return "{" + ", ".join(sorted(format_value(v) for v in value)) + "}"
    return str(value)
