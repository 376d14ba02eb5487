"""The single error hierarchy of qkforms.

Every error the package raises on purpose derives from :class:`QKFormsError`,
so ``except qkforms.QKFormsError`` catches all of them. Messages say what was
wrong, where, and what to do about it.

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

__all__ = [
    "QKFormsError",
    "ShapeError",
    "ZeroFormError",
    "NonFiniteError",
    "DegenerateHeadError",
    "NotSymmetricError",
    "CheckpointError",
    "MissingTensorError",
    "ModelNotFoundError",
    "UnsupportedArchitectureError",
    "UnsafeFormatError",
    "VerificationError",
    "NotRealError",
    "UnsafePathError",
    "OutputError",
    "SurveyLockedError",
]


class QKFormsError(Exception):
    """Base class of every error raised by qkforms."""


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
