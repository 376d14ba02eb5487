"""Optional dependencies: which extra provides which module, checked before any work.

Every command checks the modules it will need *before* it starts (``qkforms report``
used to fail on a missing plotting extra only after minutes of statistics), and says
which extra to install: :func:`require` raises :class:`MissingExtraError` naming the
missing modules and the ``pip install "qkforms[EXTRA]"`` line. The check only looks the
modules up (:func:`importlib.util.find_spec`), it imports nothing, so it takes
milliseconds. :data:`EXTRA_MODULES` lists, per extra of ``pyproject.toml``, the modules
qkforms imports from it (a test checks the two agree).

Examples
--------
>>> require("survey", command="qkforms survey")   # the survey extra is installed here
>>> try:
...     require("survey", modules=("no_such_module_xyz",), command="qkforms survey")
... except MissingExtraError as exc:
...     print(exc)
qkforms survey needs no_such_module_xyz, which is not installed: pip install "qkforms[survey]"
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

from qkforms.errors import QKFormsError

__all__ = ["EXTRA_MODULES", "MissingExtraError", "missing", "require"]

#: extra of ``pyproject.toml`` -> the top-level modules qkforms imports from its packages
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "survey": ("gguf", "ml_dtypes", "pyarrow", "tqdm", "psutil", "threadpoolctl"),
    "dask": ("dask", "distributed"),
    "plots": ("matplotlib", "plotly"),
    "docs": ("sphinx", "myst_parser", "sphinx_mathjax_offline"),
    "torch": ("torch", "transformers", "safetensors", "accelerate"),
    "transformer-lens": ("transformer_lens",),
}


class MissingExtraError(QKFormsError, ImportError):
    """An optional dependency a command needs is not installed (names the extra)."""


def missing(modules: Sequence[str]) -> list[str]:
    """The modules of ``modules`` that cannot be imported (looked up, not imported).

    Examples
    --------
    >>> missing(["json", "no_such_module_xyz"])
    ['no_such_module_xyz']
    """
    out = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a broken or half-installed package
            found = False
        if not found:
            out.append(name)
    return out


def require(extra: str, *, modules: Sequence[str] | None = None, command: str = "qkforms",
            why: str = "") -> None:
    """Raise :class:`MissingExtraError` unless ``modules`` (default: all of ``extra``'s)
    can be imported.

    Parameters
    ----------
    extra
        The extra that installs them (a key of :data:`EXTRA_MODULES`).
    modules
        The modules needed (a subset of the extra's, or others it provides).
    command
        Who needs them, at the start of the message.
    why
        What they are needed for (appended to the message).

    Examples
    --------
    >>> try:
    ...     require("plots", modules=("no_plotting_xyz",), command="qkforms report",
    ...             why="the interactive figures")
    ... except MissingExtraError as exc:
    ...     print(str(exc)[-58:])
    ed: pip install "qkforms[plots]" (the interactive figures)
    """
    if extra not in EXTRA_MODULES:
        raise QKFormsError(f"unknown extra {extra!r} (known: {', '.join(EXTRA_MODULES)})")
    absent = missing(EXTRA_MODULES[extra] if modules is None else modules)
    if absent:
        verb = "is" if len(absent) == 1 else "are"
        tail = f" ({why})" if why else ""
        raise MissingExtraError(f"{command} needs {', '.join(absent)}, which {verb} not "
                                f'installed: pip install "qkforms[{extra}]"{tail}')
