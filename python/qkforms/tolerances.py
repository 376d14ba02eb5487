"""Every numerical threshold of the float core and the survey, defined once.

=========================  =========  ==========================================================
name                       value      meaning
=========================  =========  ==========================================================
``DENSE_TOL``              ``1e-7``   zero eigenvalue of a dense N x N spectrum:
                                      ``|lam| <= tol * max|lam|`` (docs/theory.md §3.1)
``REDUCED_TOL``            ``1e-9``   the same on the reduced 2n spectrum of a head, for
                                      the spectral samples of the statistics (λ₊, |λ₋|);
                                      a head's *signature* is decided, not thresholded
                                      (docs/theory.md §3.2, :func:`qkforms.decide_signature`)
``PIVOT_LIMIT``            ``1e-8``   the Gram engine's one fallback rule (:mod:`qkforms.gram`):
                                      a head whose smallest squared Cholesky pivot is at most
                                      this times the largest diagonal entry of ``G`` (or has
                                      no Cholesky factor) is factored by Householder QR
``SPECTRAL_TYPE_RADIUS``   ``0.02``   radius of the Type II neighbourhood, ``c_S + d_S <= r``
                                      (docs/theory.md §12.5)
``NEAR_THETA``             ``0.05``   a head is "near Θ" when ``theta_dist <= NEAR_THETA``
                                      (survey summary, observation tables; with
                                      ``--certify`` only when ``theta_dist_hi`` is)
``BAND_RIGOR_FACTOR``      ``10``     storage-precision bands (:mod:`qkforms.bands`): the
                                      rigorous band is reported unless its widest interval
                                      is more than this many times the widest first-order
                                      one (and wider than ``BAND_RIGOR_FLOOR``)
``BAND_RIGOR_FLOOR``       ``1e-6``   a rigorous band no wider than this is always reported
``BAND_FLOAT_ALLOWANCE``   ``1e-9``   without ``--certify``, the bands take the float64
                                      spectrum of the stored weights as exact up to this
                                      times ``‖L‖`` (its error is about ``1e-15 ‖L‖``;
                                      ``--certify`` replaces the allowance by a proof)
=========================  =========  ==========================================================

The survey records them in ``manifest.json`` (``thresholds``), and a resumed run refuses
parts computed with other values.

Examples
--------
>>> from qkforms.tolerances import REDUCED_TOL, SPECTRAL_TYPE_RADIUS
>>> REDUCED_TOL, SPECTRAL_TYPE_RADIUS
(1e-09, 0.02)
"""

from __future__ import annotations

__all__ = [
    "BAND_FLOAT_ALLOWANCE",
    "BAND_RIGOR_FACTOR",
    "BAND_RIGOR_FLOOR",
    "DENSE_TOL",
    "NEAR_THETA",
    "PIVOT_LIMIT",
    "REDUCED_TOL",
    "SPECTRAL_TYPE_RADIUS",
    "thresholds",
]

#: Relative zero threshold for full N x N spectra (docs/theory.md §3.1).
DENSE_TOL = 1e-7
#: Relative zero threshold of the spectral samples of reduced 2n x 2n head spectra.
REDUCED_TOL = 1e-9
#: Smallest squared Cholesky pivot, relative to the largest diagonal entry of ``G``, below
#: which a head is factored through QR instead (pivots bound the smallest eigenvalue of
#: ``G`` from above, so this catches every head with ``cond(G) > 1/PIVOT_LIMIT``).
PIVOT_LIMIT = 1e-8
#: Radius of the Type II neighbourhood of the symmetric profile (docs/theory.md §12.5).
SPECTRAL_TYPE_RADIUS = 0.02
#: Distance to Θ below which a head counts as near Θ (a reporting threshold: it does not
#: change any number of heads.parquet, so it is not among :func:`thresholds`).
NEAR_THETA = 0.05
#: Storage-precision bands: the rigorous band is reported unless its widest interval
#: exceeds this factor times the widest first-order interval (docs/certified.md).
BAND_RIGOR_FACTOR = 10.0
#: A rigorous band whose widest interval is at most this wide is always reported.
BAND_RIGOR_FLOOR = 1e-6
#: Allowance (relative to ``|L|_F``) for the float64 spectrum of the stored weights in
#: the bands when it is not certified (``--certify`` proves it instead).
BAND_FLOAT_ALLOWANCE = 1e-9


def thresholds() -> dict[str, float]:
    """The thresholds that change survey numbers, as recorded in ``manifest.json``.

    Examples
    --------
    >>> sorted(thresholds())
    ['cholesky_pivot_limit', 'spectral_type_radius', 'zero_tol_reduced']
    """
    return {"zero_tol_reduced": REDUCED_TOL, "spectral_type_radius": SPECTRAL_TYPE_RADIUS,
            "cholesky_pivot_limit": PIVOT_LIMIT}
