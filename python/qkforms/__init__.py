"""qkforms: the bilinear forms inside attention heads.

For a head with query and key projections ``W_Q, W_K`` (each ``n x N``) the score
form is ``L = W_K^T W_Q``. This package computes its signature (Theorem 3), its
profile in the 3-simplex (Definition 6, Theorem 4), its distance to the rank-one
family Theta (Proposition 4, Theorem 5), in float64 and in exact arithmetic, and
surveys real models through the same core.

The top level is light: it imports numpy only. Exact arithmetic
(:mod:`qkforms.exact`), loaders (:mod:`qkforms.models`) and the survey load on demand.

Examples
--------
>>> import numpy as np, qkforms
>>> qkforms.profile(np.diag([1.0, -1.0]))
Profile(a=0.0, b=1.0, c=0.0, d=0.0)
"""

from __future__ import annotations

from qkforms.errors import (
    CheckpointError,
    DegenerateHeadError,
    LayerIndexError,
    MissingColumnError,
    MissingTensorError,
    ModelNotFoundError,
    NonFiniteError,
    NotRealError,
    NotSymmetricError,
    OutputError,
    ParameterError,
    PrecisionUnavailableError,
    QKFormsError,
    ShapeError,
    SurveyLockedError,
    UndecidedSignatureError,
    UnsafeFormatError,
    UnsafePathError,
    UnsupportedArchitectureError,
    VerificationError,
    ZeroFormError,
)
from qkforms.faces import FaceInfo, classify_profile, spectral_type
from qkforms.form_parts import Energies, energies, parts
from qkforms.form_signature import (
    Signature,
    SignatureDecision,
    count_signs,
    decide_signature,
    signature,
)
from qkforms.head import Head, Prediction, Reduced, gram_spectrum, head_energies, reduce_heads
from qkforms.pairing import lobe_departure, lobe_ratio, pairing_bound, pairing_gap, pairing_score
from qkforms.profile_map import Profile, lobes, profile, profile_from_eigenvalues, symmetric_profile
from qkforms.theta_family import (
    accumulation_limit,
    theta,
    theta_distance,
    theta_L,
    theta_p,
    theta_projection,
)

__version__ = "0.1.0"

__all__ = [
    "CheckpointError",
    "DegenerateHeadError",
    "UndecidedSignatureError",
    "Energies",
    "FaceInfo",
    "Head",
    "Prediction",
    "LayerIndexError",
    "MissingColumnError",
    "MissingTensorError",
    "ModelNotFoundError",
    "NonFiniteError",
    "NotRealError",
    "NotSymmetricError",
    "OutputError",
    "ParameterError",
    "PrecisionUnavailableError",
    "Profile",
    "QKFormsError",
    "Reduced",
    "ShapeError",
    "Signature",
    "SignatureDecision",
    "SurveyLockedError",
    "UnsafeFormatError",
    "UnsafePathError",
    "UnsupportedArchitectureError",
    "VerificationError",
    "ZeroFormError",
    "__version__",
    "accumulation_limit",
    "classify_profile",
    "count_signs",
    "decide_signature",
    "energies",
    "gram_spectrum",
    "head_energies",
    "lobe_departure",
    "lobe_ratio",
    "lobes",
    "pairing_bound",
    "pairing_gap",
    "pairing_score",
    "parts",
    "profile",
    "profile_from_eigenvalues",
    "reduce_heads",
    "signature",
    "spectral_type",
    "symmetric_profile",
    "theta",
    "theta_L",
    "theta_distance",
    "theta_p",
    "theta_projection",
]
