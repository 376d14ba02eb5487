"""The qkforms checkout whose Lean sources ``qkforms verify`` reads.

The Lean library is not part of an installed wheel: it lives in a checkout of the
repository (``lakefile.lean`` beside ``lean/QKForms``). :func:`find_root` searches for one
upward from a directory and from this package's location; :func:`locate_lean_root` takes
the checkout named by ``--lean-dir`` or else the one found (none: the Lean side is
``not run``).

Examples
--------
>>> root = find_root()                      # run from this checkout
>>> (root / "lean" / LIBRARY).is_dir()
True
"""

from __future__ import annotations

from pathlib import Path

from qkforms.errors import QKFormsError, VerificationError

__all__ = ["LIBRARY", "find_root", "locate_lean_root"]

#: the Lean library (``lean/QKForms.lean`` and the modules under ``lean/QKForms/``)
LIBRARY = "QKForms"


def find_root(start: str | Path | None = None) -> Path:
    """Find the repository root.

    Searches upward from ``start`` (default: the current directory) for a directory
    holding ``lakefile.lean``, then from this package's location; a directory with
    ``pyproject.toml`` and ``lean/QKForms`` also counts (so a missing lakefile is
    reported by the pin check rather than as a missing root).

    Raises
    ------
    VerificationError
        If no root is found.

    Examples
    --------
    >>> (find_root() / "python" / "qkforms").is_dir()
    True
    """
    starts = [Path.cwd() if start is None else Path(start), Path(__file__).resolve().parent]
    for marker in (_has_lakefile, _has_project_layout):
        for s in starts:
            for d in [s.resolve(), *s.resolve().parents]:
                if marker(d):
                    return d
    raise VerificationError(
        f"no qkforms repository root (a directory with lakefile.lean) above {starts[0]} "
        "or the installed package; pass --root"
    )


def _has_lakefile(d: Path) -> bool:
    return (d / "lakefile.lean").is_file()


def _has_project_layout(d: Path) -> bool:
    return (d / "pyproject.toml").is_file() and (d / "lean" / LIBRARY).is_dir()


def locate_lean_root(lean_dir: str | Path | None = None) -> Path | None:
    """The checkout whose Lean sources ``verify`` checks, or ``None`` when there is none.

    An explicit ``lean_dir`` must be a qkforms checkout; otherwise the checkout
    containing the current directory or the installed package is used, if any.

    Raises
    ------
    QKFormsError
        If ``lean_dir`` is given but is not a directory holding ``lakefile.lean`` or
        ``lean/QKForms``.

    Examples
    --------
    >>> (locate_lean_root() / "lakefile.lean").is_file()   # run from this checkout
    True
    """
    if lean_dir is None:
        try:
            return find_root()
        except VerificationError:
            return None
    path = Path(lean_dir).resolve()
    if not path.is_dir():
        raise QKFormsError(f"--lean-dir {lean_dir}: not a directory")
    if not ((path / "lakefile.lean").is_file() or (path / "lean" / "QKForms").is_dir()):
        raise QKFormsError(f"--lean-dir {lean_dir}: not a qkforms checkout (no lakefile.lean "
                           "and no lean/QKForms)")
    return path
