"""Profiles of the RoPE relative forms L(d) for the report's slider (``docs/theory.md`` §12.4).

For every model of ``manifest.json`` whose entry names a ``factors`` file (the survey
stores the reduced factors ``Q_red, K_red`` of RoPE models as
``factors/<key>.npz``, keys ``L<layer:04d>_Q_red`` and ``L<layer:04d>_K_red``, arrays
``(n_q, n, 2n)``), a few heads spread over the layers are chosen and the profile of
``L(d) = K_red^T Rot(d) Q_red`` is computed for ``d = 0..d_max`` with the survey's
:func:`qkforms.survey.rope.relative_form` and the core's :func:`qkforms.profile`.
The archive is opened with ``allow_pickle=False``.

Examples
--------
>>> from qkforms.report.rope_view import rope_profiles
>>> rope_profiles({}, ".")
[]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms import profile
from qkforms._fs import open_regular
from qkforms.survey.manifest import factors_path
from qkforms.survey.rope import relative_form

__all__ = ["rope_profiles"]


def _heads_to_show(shapes: dict[int, int], count: int) -> list[tuple[int, int]]:
    pairs = [(layer, h) for layer in sorted(shapes) for h in range(shapes[layer])]
    if len(pairs) <= count:
        return pairs
    pick = np.linspace(0, len(pairs) - 1, count).round().astype(int)
    return [pairs[i] for i in dict.fromkeys(pick.tolist())]


#: most heads per model in the L(d) slider (``--rope-heads``)
MAX_HEADS = 256
#: largest displacement of the slider (``--d-max``)
MAX_D = 4096


def rope_profiles(
    manifest: dict[str, Any], directory: str | Path, *, heads: int = 16, d_max: int = 128
) -> list[tuple[str, NDArray[np.float64], list[str], list[int]]]:
    """``(model, profiles (d, heads, 4), labels, d values)`` for each RoPE model with factors.

    Examples
    --------
    >>> rope_profiles({"models": [{"name": "m", "factors": None}]}, ".")
    []
    """
    out = []
    for entry in manifest.get("models", []) or []:
        path = factors_path(entry, directory)
        if path is None:
            continue

        with open_regular(path) as fh, np.load(fh, allow_pickle=False) as npz:
            names = set(npz.files)
            shapes: dict[int, int] = {}
            for name in names:
                if name.endswith("_Q_red") and name.startswith("L"):
                    layer = int(name[1:5])
                    shapes[layer] = int(npz[name].shape[0])
            chosen = _heads_to_show(shapes, heads)
            Q = {}
            K = {}
            for layer, h in chosen:
                Q[(layer, h)] = np.asarray(npz[f"L{layer:04d}_Q_red"][h], dtype=np.float64)
                K[(layer, h)] = np.asarray(npz[f"L{layer:04d}_K_red"][h], dtype=np.float64)
        d_values = list(range(d_max + 1))
        keep = [k for k in chosen if np.all(np.isfinite(Q[k])) and np.all(np.isfinite(K[k]))]
        if not keep:
            continue
        prof = np.zeros((len(d_values), len(keep), 4))
        for j, k in enumerate(keep):
            for i, d in enumerate(d_values):
                L = relative_form(Q[k], K[k], d, entry)
                prof[i, j] = np.asarray(profile(L), dtype=np.float64)
        labels = [f"{entry.get('name', entry.get('key'))} L{la} H{h}" for la, h in keep]
        out.append((str(entry.get("name", entry.get("key"))), prof, labels, d_values))
    return out
