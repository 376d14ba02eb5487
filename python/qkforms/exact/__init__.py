"""Exact-arithmetic mirror of the float core (rationals via python-flint and sympy).

No floating point touches a value here: floats are converted exactly to dyadic
rationals, signatures come from characteristic polynomials and Descartes' rule of
signs, profiles from rational spectra (or sympy radicals), orthogonal matrices from
the Cayley transform.

Main entry points: :class:`ExactHead` (the exact facts of one head, also
:meth:`qkforms.Head.exact`), :func:`signature`, :func:`head_signature`, :func:`rank`,
:func:`stacked_is_surjective`, :func:`cayley_orthogonal`, :func:`profile`,
:func:`profile_from_spectrum`, :func:`hp_decomposition`, and the certified enclosures
:func:`enclose` (also :meth:`qkforms.Head.enclose`; interval bounds, guaranteed by ball
arithmetic, of a head's profile, symmetric energy, pairing score, ``rho`` and distance
to Theta; docs/certified.md).

Examples
--------
>>> from qkforms import exact
>>> exact.signature([[0, 1], [1, 0]])
Signature(n_pos=1, n_neg=1, n_zero=0)
>>> exact.head_signature([[1, 0, 0, 0, 0]], [[0, 1, 0, 0, 0]])
Signature(n_pos=1, n_neg=1, n_zero=3)
>>> exact.profile([[1, 0], [0, -1]]).to_float()
Profile(a=0.0, b=1.0, c=0.0, d=0.0)
"""

from __future__ import annotations

from qkforms.exact.balls import Interval
from qkforms.exact.constructions import (
    diagonal,
    head_with_rational_spectrum,
    integer_matrix,
    random_form,
    random_head,
    random_spectrum,
    symmetric_with_spectrum,
)
from qkforms.exact.enclosure import CERTIFIED_STATS, Enclosure, decide, enclose, enclose_layer
from qkforms.exact.faces import (
    commute,
    has_symmetric_spectrum,
    hp_decomposition,
    is_nsd,
    is_psd,
    is_semidefinite,
)
from qkforms.exact.form_parts import as_fraction, energies, frobenius_inner, parts, trace
from qkforms.exact.form_signature import (
    Signature,
    charpoly,
    gram_operator,
    head_signature,
    rank,
    signature,
    stacked_is_surjective,
    stacked_matrix,
    symmetric_head_form,
)
from qkforms.exact.head import ExactHead
from qkforms.exact.inertia import HeadInertia, head_inertia
from qkforms.exact.orthogonal import (
    IrrationalSpectrumError,
    cayley_orthogonal,
    is_orthogonal,
    line_projector,
    orthogonal_eigenbasis,
    random_orthogonal,
    random_skew,
    rational_spectrum,
)
from qkforms.exact.polynomial import descartes_counts, sign_changes
from qkforms.exact.profile_map import (
    ExactProfile,
    PairingQuantities,
    exact_lobes,
    pairing_quantities,
    profile,
    profile_from_spectrum,
    quadratic_spectrum,
    symmetric_profile,
)
from qkforms.exact.rational import (
    NotRationalError,
    fraction_matrix,
    frob_sq,
    is_symmetric,
    modular_image,
    scaled_integer_matrix,
    to_fmpq_mat,
    to_fraction,
    to_sympy_matrix,
)
from qkforms.exact.verified_spectrum import SpectrumEnclosure, enclose_spectrum

__all__ = [
    "CERTIFIED_STATS",
    "Enclosure",
    "ExactHead",
    "ExactProfile",
    "Interval",
    "IrrationalSpectrumError",
    "NotRationalError",
    "PairingQuantities",
    "Signature",
    "SpectrumEnclosure",
    "as_fraction",
    "cayley_orthogonal",
    "charpoly",
    "commute",
    "decide",
    "descartes_counts",
    "diagonal",
    "enclose",
    "enclose_layer",
    "enclose_spectrum",
    "energies",
    "exact_lobes",
    "fraction_matrix",
    "frob_sq",
    "frobenius_inner",
    "gram_operator",
    "has_symmetric_spectrum",
    "head_signature",
    "head_inertia",
    "HeadInertia",
    "head_with_rational_spectrum",
    "hp_decomposition",
    "integer_matrix",
    "is_nsd",
    "is_orthogonal",
    "is_psd",
    "is_semidefinite",
    "is_symmetric",
    "line_projector",
    "modular_image",
    "orthogonal_eigenbasis",
    "pairing_quantities",
    "parts",
    "profile",
    "profile_from_spectrum",
    "quadratic_spectrum",
    "random_form",
    "random_head",
    "random_orthogonal",
    "random_skew",
    "random_spectrum",
    "rank",
    "rational_spectrum",
    "scaled_integer_matrix",
    "sign_changes",
    "signature",
    "stacked_is_surjective",
    "stacked_matrix",
    "symmetric_head_form",
    "symmetric_profile",
    "symmetric_with_spectrum",
    "to_fmpq_mat",
    "to_fraction",
    "to_sympy_matrix",
    "trace",
]
