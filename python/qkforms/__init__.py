"""qkforms: the bilinear forms inside attention heads.

For a head with query and key projections ``W_Q, W_K`` (each ``n x N``) the score
form is ``L = W_K^T W_Q``. This package computes its signature (Theorem 3), its
profile in the 3-simplex (Definition 6, Theorem 4), its distance to the rank-one
family Theta (Proposition 4, Theorem 5), in float64 and in exact arithmetic, and
surveys real models through the same core.

The top level is light: it imports numpy and scipy only, and the names below are
loaded on first use.

Examples
--------
>>> import numpy as np, qkforms
>>> qkforms.profile(np.diag([1.0, -1.0]))
Profile(a=0.0, b=1.0, c=0.0, d=0.0)
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # errors
    "QKFormsError": "qkforms.errors",
    "ShapeError": "qkforms.errors",
    "ZeroFormError": "qkforms.errors",
    "NonFiniteError": "qkforms.errors",
    "DegenerateHeadError": "qkforms.errors",
    "NotSymmetricError": "qkforms.errors",
    "CheckpointError": "qkforms.errors",
    "MissingTensorError": "qkforms.errors",
    "UnsupportedArchitectureError": "qkforms.errors",
    "UnsafeFormatError": "qkforms.errors",
    "VerificationError": "qkforms.errors",
    # parts and energies (Lemma 5)
    "parts": "qkforms.parts",
    "energies": "qkforms.parts",
    "Energies": "qkforms.parts",
    # signature (Lemma 3, Theorem 3)
    "signature": "qkforms.signature",
    "count_signs": "qkforms.signature",
    "Signature": "qkforms.signature",
    # heads (Lemma 10, Theorem 3)
    "Head": "qkforms.head",
    "Reduced": "qkforms.head",
    "gram_spectrum": "qkforms.head",
    "reduce_heads": "qkforms.head",
    # profile (Definition 6, Lemma 4)
    "Profile": "qkforms.profile",
    "profile": "qkforms.profile",
    "profile_from_eigenvalues": "qkforms.profile",
    "lobes": "qkforms.profile",
    "symmetric_profile": "qkforms.profile",
    # pairing (Lemma 2)
    "pairing_score": "qkforms.pairing",
    "pairing_bound": "qkforms.pairing",
    "lobe_ratio": "qkforms.pairing",
    # Theta (Proposition 4, Theorem 5)
    "theta": "qkforms.theta",
    "theta_distance": "qkforms.theta",
    "theta_p": "qkforms.theta",
    "theta_L": "qkforms.theta",
    "accumulation_limit": "qkforms.theta",
    # faces (Theorem 4) and spectral types (survey)
    "FaceInfo": "qkforms.faces",
    "classify_profile": "qkforms.faces",
    "spectral_type": "qkforms.faces",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'qkforms' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
