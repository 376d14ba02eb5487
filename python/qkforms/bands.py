r"""Storage-precision bands: each head's statistics for every weight the file could hold.

A checkpoint stores each weight only to its storage precision: the trained weight lies
somewhere in ``[v - h, v + h]`` around the stored value ``v``, with ``h`` half an ulp of
a float dtype or half a quantization step of a GGUF block
(:mod:`qkforms.models.precision`). For a head with stored maps ``W_Q, W_K`` and
half-width matrices ``H_Q, H_K`` (same shapes, ``>= 0``) the **box** is the set of all
``(Q', K')`` with ``|Q' - W_Q| <= H_Q`` and ``|K' - W_K| <= H_K`` entrywise, and the
**band** of a statistic is an interval containing its value at every point of the box.
:func:`layer_bands` computes, per head, bands of the certified statistics
(:data:`BAND_STATS`: ``a, b, c, d``, ``1 - a``, pairing, ``rho``, distance to Θ) and
whether the signature is the same everywhere in the box, two ways
(docs/certified.md, "Storage-precision bands"):

**Rigorous.** For ``(Q', K')`` in the box, ``L' - L = dK^T Q + K^T dQ + dK^T dQ``, and
``|dK^T Q|_F^2 = <dK dK^T, Q Q^T>_F <= <H_K H_K^T, |Q Q^T|>_F`` (entrywise
``|dK dK^T| <= H_K H_K^T``), so ``|L' - L|_F <= delta`` with
``delta = <H_K H_K^T, |QQ^T|>^{1/2} + <H_Q H_Q^T, |KK^T|>^{1/2} + <H_K H_K^T, H_Q H_Q^T>^{1/2}``,
computed with a priori floating-point error bounds (rounded up). Let ``z = (alpha, beta,
tau)``: the ``n`` largest positive parts and negative parts of the spectrum of ``S``
(the lobes, Lemma 3: no more than ``n`` of each) and ``tau = |T|_F``. By the
Hoffman–Wielandt inequality for symmetric matrices (sorted eigenvalues move by at most
``|S' - S|_F`` in the Euclidean norm; Horn & Johnson, *Matrix Analysis*, 2nd ed.,
Cor. 6.3.8), ``x -> x_+`` being 1-Lipschitz, and ``|S' - S|_F^2 + |T' - T|_F^2 =
|L' - L|_F^2`` (Lemma 5 for ``L' - L``), ``z'`` lies in the Euclidean ball of radius
``delta`` around ``z``. Every statistic is a function of ``z``
(``|L|^2 = |alpha|^2 + |beta|^2 + tau^2``, ``|T|^2 = tau^2``) written once
(:mod:`qkforms.profile_map`, :mod:`qkforms.pairing`, :mod:`qkforms.theta_family`); evaluated with
the mean-value interval backend (:data:`qkforms.mean_value.MEAN_VALUE`) on the ball of
radius ``R = delta + epsilon`` around the float64 centre ``z_hat`` (``epsilon`` bounds
``|z_hat - z|``: proved from the certified enclosure when one is given, else the
allowance :data:`~qkforms.tolerances.BAND_FLOAT_ALLOWANCE` ``|L|``), it gives intervals
that contain the statistic at every point of the box. By Weyl's inequality every
eigenvalue moves by at most ``|S' - S|_2 <= delta``: the signature is stable when every
nonzero eigenvalue of the reduced spectrum exceeds ``R`` in modulus.

**First order.** The linearization of a statistic ``f`` at the stored weights,
maximized over the box: ``f +- sum |df/dW_Q| H_Q + sum |df/dW_K| H_K``, with the
gradient in closed form from the reduced factors (``dlambda_k/dW_Q = (K u_k) u_k^T``,
``dtau/dW_Q = K T / tau`` and the mirror images for ``W_K``, ``u_k`` the eigenvectors of
``S``) and ``df/dz`` from the same shared formulas (the mean-value backend at radius 0);
the distance to Θ goes through its square (differentiable on Θ). It is an *estimate*
(exact to first order; it can miss by the second-order terms), tested by sampling.
The signature is stable to first order when every eigenvalue exceeds its own first-order
worst-case change.

**Which band is reported.** The rigorous one (``kind`` ``"rigorous"`` when the centre is
certified, ``"rigorous-float"`` when it rests on the float64 allowance), unless its widest
interval is more than :data:`~qkforms.tolerances.BAND_RIGOR_FACTOR` times the widest
first-order one and wider than :data:`~qkforms.tolerances.BAND_RIGOR_FLOOR`; then the
first-order band (``kind`` ``"first-order"``). Both are kept on the :class:`Band`.

Examples
--------
>>> import numpy as np
>>> from qkforms import Head
>>> from qkforms.bands import precision_band
>>> from qkforms.models.precision import float_half_widths
>>> rng = np.random.default_rng(0)
>>> Q, K = rng.standard_normal((2, 4, 24)).astype(np.float32).astype(np.float64)
>>> band = precision_band(Q, K, float_half_widths(Q, "bfloat16"),
...                       float_half_widths(K, "bfloat16"))
>>> a = Head(Q, K).profile().a
>>> band.kind, band.interval("a").lo <= a <= band.interval("a").hi
('rigorous-float', True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms.errors import NonFiniteError, ParameterError, ShapeError, ZeroFormError, format_value
from qkforms.exact.balls import Interval
from qkforms.exact.enclosure import CERTIFIED_STATS, STAT_RANGES
from qkforms.form_parts import parts
from qkforms.gram import qr_factor, stack, unit_scale
from qkforms.mean_value import MEAN_VALUE, Slope, variables
from qkforms.pairing import lobe_ratio_from_lobes, pairing_from_lobes
from qkforms.profile_map import lobes_from_sorted, profile_from_lobes
from qkforms.theta_family import theta_distance_of_point, theta_sq_distance_of_point
from qkforms.tolerances import BAND_FLOAT_ALLOWANCE, BAND_RIGOR_FACTOR, BAND_RIGOR_FLOOR

__all__ = ["BAND_KINDS", "BAND_STATS", "Band", "layer_bands", "precision_band",
           "stat_gradients"]

Array = NDArray[np.float64]

#: the statistics that get a band (those of the certified enclosures)
BAND_STATS: tuple[str, ...] = CERTIFIED_STATS
#: the kinds of reported band (see the module docstring)
BAND_KINDS: tuple[str, ...] = ("rigorous", "rigorous-float", "first-order")

_U = 2.0**-53
#: the first-order outputs: the band statistics, the distance to Θ through its square
_FIRST_ORDER = tuple(s if s != "theta_dist" else "theta_sq" for s in BAND_STATS)


@dataclass(frozen=True)
class Band:
    """Storage-precision bands of one head (see the module docstring).

    Attributes
    ----------
    kind : str
        Which band :meth:`interval` reports: ``"rigorous"``, ``"rigorous-float"`` or
        ``"first-order"`` (:data:`BAND_KINDS`).
    radius : float
        ``R / |L|_F``: the relative radius of the rigorous ball (how far the storage
        precision lets ``L`` move, relative to its size).
    signature_stable : bool
        The signature of ``S`` is the same for every weight in the box (by the reported
        kind's bound).
    signature_margin : float
        ``min_k (|lambda_k| - r_k) / max|lambda|`` over the reduced spectrum, with
        ``r_k`` the kind's bound on the move of ``lambda_k``; positive iff stable.
    rigorous, first_order : dict
        Both bands, by statistic (None where undefined: pairing and ``rho`` when
        ``S = 0``).
    """

    kind: str
    radius: float
    signature_stable: bool
    signature_margin: float
    rigorous: dict[str, Interval | None] = field(repr=False)
    first_order: dict[str, Interval | None] = field(repr=False)
    rigorous_signature: tuple[bool, float] = field(repr=False, default=(False, math.nan))
    first_order_signature: tuple[bool, float] = field(repr=False, default=(False, math.nan))

    def interval(self, stat: str) -> Interval | None:
        """The reported band of one of :data:`BAND_STATS`.

        Examples
        --------
        >>> import numpy as np
        >>> from qkforms.bands import precision_band
        >>> b = precision_band([[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]], np.zeros((1, 3)),
        ...                    np.zeros((1, 3)))
        >>> b.interval("b").contains(0.5), b.interval("b").width < 1e-8
        (True, True)
        """
        if stat not in BAND_STATS:
            raise ParameterError(f"unknown statistic {format_value(stat)}; bands: "
                                 f"{', '.join(BAND_STATS)}")
        src = self.first_order if self.kind == "first-order" else self.rigorous
        return src[stat]

    def columns(self) -> dict[str, Any]:
        """The band columns of ``heads.parquet`` (``<stat>_band_lo``, ``<stat>_band_hi``,
        ``band_kind``, ``band_radius``, ``signature_band_stable``, ``signature_band_margin``).

        Examples
        --------
        >>> import numpy as np
        >>> from qkforms.bands import precision_band
        >>> cols = precision_band([[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]],
        ...                       np.full((1, 3), 1e-3), np.full((1, 3), 1e-3)).columns()
        >>> cols["a_band_lo"] <= 0.5 <= cols["a_band_hi"], cols["band_kind"]
        (True, 'rigorous-float')
        """
        out: dict[str, Any] = {}
        for stat in BAND_STATS:
            iv = self.interval(stat)
            out[f"{stat}_band_lo"] = math.nan if iv is None else iv.lo
            out[f"{stat}_band_hi"] = math.nan if iv is None else iv.hi
        out["band_kind"] = self.kind
        out["band_radius"] = self.radius
        out["signature_band_stable"] = self.signature_stable
        out["signature_band_margin"] = self.signature_margin
        return out


# --------------------------------------------------------------------------- rigorous pieces


def _up(x: float) -> float:
    return math.nextafter(x, math.inf)


def _perturbation_bound(Q: Array, K: Array, HQ: Array, HK: Array) -> float:
    """An upper bound of ``|K'^T Q' - K^T Q|_F`` over the box (module docstring).

    Floating point: a computed product or sum of ``m`` nonnegative terms is at least
    ``(1 - gamma_m)`` times the exact one, and ``|fl(Q Q^T) - Q Q^T| <= gamma_N |Q||Q|^T
    <= gamma_N r r^T`` entrywise (``r`` the row norms); Higham, *Accuracy and Stability
    of Numerical Algorithms*, 2nd ed., SIAM 2002, Lemma 3.1 and Sec. 3.5. The factor
    ``1 + 4(N + n^2 + 10)u`` covers all of them.
    """
    n, N = Q.shape
    g = 2.0 * (N + 2) * _U
    fac = 1.0 + 4.0 * (N + n * n + 10) * _U

    def rows(W: Array) -> Array:
        return np.sqrt(np.sum(W * W, axis=1) * (1.0 + g)) * (1.0 + 4.0 * _U)

    A, B = HK @ HK.T, HQ @ HQ.T
    rq, rk = rows(Q), rows(K)
    cq = np.abs(Q @ Q.T) + g * np.outer(rq, rq)
    ck = np.abs(K @ K.T) + g * np.outer(rk, rk)
    total = 0.0
    for t in (np.sum(A * cq), np.sum(B * ck), np.sum(A * B)):
        total = _up(total + _up(math.sqrt(_up(float(t) * fac + 1e-300))))
    return total


@dataclass
class _Head:
    """One head, rescaled by powers of two, with its reduction and lobes."""

    Q: Array
    K: Array
    HQ: Array
    HK: Array
    scale: float              # s_Q s_K: the units of the eigenvalues
    sq: float
    sk: float
    U: Array                  # N x k orthonormal
    Kr: Array                 # n x k
    Qr: Array
    Tr: Array                 # k x k skew part of L_red
    lam: Array                # k eigenvalues of S_red, decreasing
    V: Array                  # their eigenvectors (columns)
    z: Array                  # centre (alpha_1..n, beta_1..n, tau)
    dropped: float            # |lobe entries beyond n| (float noise)


def _reduce(Q: Array, K: Array, HQ: Array, HK: Array) -> _Head:
    n = Q.shape[0]
    sq, sk = float(unit_scale(Q[None])[0]), float(unit_scale(K[None])[0])
    Q, K, HQ, HK = Q / sq, K / sk, HQ / sq, HK / sk
    U, F = qr_factor(stack(Q, K), basis=True)
    Kr, Qr = F[:n], F[n:]
    S_r, T_r = parts(Kr.T @ Qr)
    lam, V = np.linalg.eigh(S_r)
    lam, V = lam[::-1].copy(), V[:, ::-1].copy()
    alpha, beta = lobes_from_sorted(lam)
    k = lam.shape[0]
    pad = max(0, n - k)
    a = np.concatenate([alpha[:n], np.zeros(pad)])
    b = np.concatenate([beta[:n], np.zeros(pad)])
    dropped = float(np.sqrt(np.sum(alpha[n:] ** 2) + np.sum(beta[n:] ** 2)))
    z = np.concatenate([a, b, [float(np.linalg.norm(T_r))]])
    return _Head(Q, K, HQ, HK, sq * sk, sq, sk, U, Kr, Qr, T_r, lam, V, z, dropped)


def _centre_error(hd: _Head, enclosure: Any | None) -> float:
    """An upper bound of ``|z_hat - z|_2`` (allowance, or proved from an enclosure)."""
    norm = float(np.linalg.norm(hd.z))
    if enclosure is None:
        return _up(BAND_FLOAT_ALLOWANCE * norm * (1.0 + 1e-12) + hd.dropped)
    n = (hd.z.shape[0] - 1) // 2
    s = Fraction(hd.scale)
    ivs = [(Fraction(iv.lo) / s, Fraction(iv.hi) / s) for iv in enclosure.eigenvalues]
    m = len(ivs)
    lo_a = [max(lo, Fraction(0)) for lo, _ in ivs]
    hi_a = [max(hi, Fraction(0)) for _, hi in ivs]
    lo_b = [max(-hi, Fraction(0)) for _, hi in reversed(ivs)]
    hi_b = [max(-lo, Fraction(0)) for lo, _ in reversed(ivs)]
    za = list(hd.z[:n]) + [0.0] * max(0, m - n)
    zb = list(hd.z[n:2 * n]) + [0.0] * max(0, m - n)
    t2 = enclosure.energies.skew_sq / (s * s)
    t_lo, t_hi = math.sqrt(float(t2)), math.sqrt(float(t2))
    t_lo, t_hi = math.nextafter(t_lo, 0.0) * (1 - 4 * _U), _up(t_hi) * (1 + 4 * _U)
    sq = Fraction(0)
    for zc, lo, hi in zip(za + zb, lo_a + lo_b, hi_a + hi_b, strict=False):
        d = max(abs(Fraction(zc) - lo), abs(Fraction(zc) - hi))
        sq += d * d
    d_tau = max(abs(Fraction(float(hd.z[-1])) - Fraction(t_lo)),
                abs(Fraction(float(hd.z[-1])) - Fraction(t_hi)))
    sq += d_tau * d_tau
    return _up(_up(math.sqrt(_up(float(sq)) * (1 + 4 * _U))))


# --------------------------------------------------------------------------- evaluation


def _statistics(alpha: Slope, beta: Slope, tau: Slope, *, squared_theta: bool) -> dict[str, Any]:
    """Every band statistic from the lobes and ``tau``, through the shared formulas."""
    ops = MEAN_VALUE
    norm_sq = ops.total(ops.square(alpha)) + ops.total(ops.square(beta)) + ops.square(tau)
    p = profile_from_lobes(alpha, beta, norm_sq, ops.square(tau), ops)
    point = np.empty(4, dtype=object)
    point[:] = list(p)
    out: dict[str, Any] = {"a": p.a, "b": p.b, "c": p.c, "d": p.d, "sym_energy": 1.0 - p.a,
                           "pairing": pairing_from_lobes(alpha, beta, ops),
                           "rho": lobe_ratio_from_lobes(alpha, beta, ops)}
    if squared_theta:
        out["theta_sq"] = theta_sq_distance_of_point(point, ops)
    else:
        out["theta_dist"] = theta_distance_of_point(point, ops)
    return out


def _rigorous(Z: Array, R: Array, n: int) -> dict[str, tuple[Array, Array]]:
    """Range enclosures of the band statistics over the balls (centres ``Z``, radii ``R``)."""
    alpha, beta, tau = variables(Z, R, [n, n, None])
    vals = _statistics(alpha, beta, tau, squared_theta=False)
    out = {}
    for stat in BAND_STATS:
        lo, hi = STAT_RANGES[stat]
        r = vals[stat].range
        out[stat] = (np.maximum(r[0], lo), np.minimum(r[1], hi))
    return out


def _at_centre(Z: Array, n: int) -> dict[str, tuple[Array, Array, Array]]:
    """Enclosures of the first-order outputs at the centres (lower, upper ends) and
    their ``d/dz`` (midpoints)."""
    alpha, beta, tau = variables(Z, np.zeros(Z.shape[0]), [n, n, None])
    vals = _statistics(alpha, beta, tau, squared_theta=True)
    return {k: (vals[k].centre[0], vals[k].centre[1], vals[k].gradient_mid())
            for k in _FIRST_ORDER}


def _weight_gradients(hd: _Head, grads: Array) -> tuple[Array, Array, NDArray[np.bool_]]:
    """``df/dW_Q``, ``df/dW_K`` (rescaled units) for each row of ``grads`` (``df/dz``),
    and the rows with a non-finite ``df/dz``."""
    n = hd.Q.shape[0]
    k = hd.lam.shape[0]
    m = min(n, k)
    S = grads.shape[0]
    bad = ~np.all(np.isfinite(grads), axis=1)
    grads = np.where(np.isfinite(grads), grads, 0.0)
    g_lam = np.zeros((S, k))
    pos = hd.lam[:m] > 0
    g_lam[:, :m] += grads[:, :m] * pos
    neg_idx = k - 1 - np.arange(m)
    neg = hd.lam[neg_idx] < 0
    g_lam[:, neg_idx] -= grads[:, n:n + m] * neg
    tau = hd.z[-1]
    c = grads[:, 2 * n] / tau if tau > 0 else np.zeros(S)
    P = (hd.V[None] * g_lam[:, None, :]) @ hd.V.T  # V diag(g) V^T per output
    GQ = hd.Kr[None] @ (P + c[:, None, None] * hd.Tr[None])
    GK = hd.Qr[None] @ (P - c[:, None, None] * hd.Tr[None])
    UT = hd.U.T
    WQ = (GQ.reshape(S * n, k) @ UT).reshape(S, n, -1)
    WK = (GK.reshape(S * n, k) @ UT).reshape(S, n, -1)
    return WQ, WK, bad


def _first_order_widths(hd: _Head, grads: Array) -> Array:
    """``sum |df/dW_Q| H_Q + sum |df/dW_K| H_K`` for each row of ``grads`` (``df/dz``)."""
    WQ, WK, bad = _weight_gradients(hd, grads)
    S = grads.shape[0]
    w = (np.abs(WQ).reshape(S, -1) @ hd.HQ.reshape(-1)
         + np.abs(WK).reshape(S, -1) @ hd.HK.reshape(-1))
    return np.where(bad, np.inf, w)


def stat_gradients(W_Q: Any, W_K: Any) -> dict[str, tuple[Array, Array]]:
    """The gradients of every band statistic with respect to ``W_Q`` and ``W_K``.

    The closed forms of the first-order bands (module docstring); NaN where a statistic
    is not differentiable in this way (the distance to Θ at 0, a zero symmetric part).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import Head
    >>> from qkforms.bands import stat_gradients
    >>> rng = np.random.default_rng(0)
    >>> Q, K = rng.standard_normal((2, 2, 6))
    >>> dQ, dK = stat_gradients(Q, K)["a"]
    >>> E = 1e-6 * rng.standard_normal(Q.shape)
    >>> step = Head(Q + E, K).profile().a - Head(Q - E, K).profile().a
    >>> bool(abs(step - 2 * np.sum(dQ * E)) < 1e-12)
    True
    """
    Q, K = np.asarray(W_Q, dtype=np.float64), np.asarray(W_K, dtype=np.float64)
    if Q.ndim != 2 or Q.shape != K.shape:
        raise ShapeError(f"W_Q and W_K must be matrices of one shape (n, N); got {Q.shape} "
                         f"and {K.shape}")
    hd = _reduce(Q, K, np.zeros_like(Q), np.zeros_like(K))
    n = Q.shape[0]
    cen = _at_centre(hd.z[None], n)
    grads = np.stack([cen[k][2][0] for k in _FIRST_ORDER])
    WQ, WK, bad = _weight_gradients(hd, grads)
    WQ, WK = WQ / hd.sq, WK / hd.sk
    out = {}
    for j, (stat, key) in enumerate(zip(BAND_STATS, _FIRST_ORDER, strict=True)):
        dq, dk = WQ[j], WK[j]
        if key == "theta_sq":  # d sqrt(m) = dm / (2 sqrt(m))
            m = float(cen[key][0][0] + (cen[key][1][0] - cen[key][0][0]) / 2)
            scale = 1.0 / (2.0 * math.sqrt(m)) if m > 0 else math.nan
            dq, dk = dq * scale, dk * scale
        if bad[j]:
            dq, dk = np.full_like(dq, np.nan), np.full_like(dk, np.nan)
        out[stat] = (dq, dk)
    return out


def _eigen_moves(hd: _Head) -> Array:
    """First-order worst-case move of each eigenvalue of ``S`` over the box."""
    B = np.abs(hd.U @ hd.V)  # |u_k| entrywise, N x k
    AQ, AK = np.abs(hd.Kr @ hd.V), np.abs(hd.Qr @ hd.V)
    return np.sum(AQ * (hd.HQ @ B), axis=0) + np.sum(AK * (hd.HK @ B), axis=0)


def _signature(lam: Array, moves: Array | float) -> tuple[bool, float]:
    top = float(np.max(np.abs(lam))) if lam.size else 0.0
    if top == 0:
        return False, math.nan
    margin = float(np.min(np.abs(lam) - moves)) / top
    return bool(margin > 0), margin


def _interval(lo: float, hi: float) -> Interval:
    return Interval(float(lo), float(hi))


# --------------------------------------------------------------------------- API


def _as_layer(name: str, a: Any) -> Array:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim != 3:
        raise ShapeError(f"{name} must have shape (heads, n, N), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise NonFiniteError(f"{name} contains NaN or infinite entries")
    return arr


def _checked_layer(W_Q: Any, W_K: Any, H_Q: Any, H_K: Any,
                   kv_index: Sequence[int] | NDArray[np.integer[Any]] | None
                   ) -> tuple[Array, Array, Array, Array, NDArray[np.int64]]:
    """The layer's weights, half-widths and key index of :func:`layer_bands`, checked."""
    Q, K = _as_layer("W_Q", W_Q), _as_layer("W_K", W_K)
    HQ, HK = _as_layer("H_Q", H_Q), _as_layer("H_K", H_K)
    if HQ.shape != Q.shape or HK.shape != K.shape:
        raise ShapeError(f"half-widths must have the shapes of the weights: W_Q {Q.shape}, "
                         f"H_Q {HQ.shape}, W_K {K.shape}, H_K {HK.shape}")
    if Q.shape[1:] != K.shape[1:]:
        raise ShapeError(f"W_Q heads have shape {Q.shape[1:]}, W_K heads {K.shape[1:]}")
    if (HQ < 0).any() or (HK < 0).any():
        raise ParameterError("storage half-widths must be nonnegative")
    n_q = Q.shape[0]
    kv = np.arange(n_q) if kv_index is None else np.asarray(kv_index, dtype=np.int64)
    if kv.shape != (n_q,) or (n_q and (kv.min() < 0 or kv.max() >= K.shape[0])):
        raise ShapeError(f"kv_index must have {n_q} entries in [0, {K.shape[0]}), got "
                         f"{format_value(kv.tolist())}")
    return Q, K, HQ, HK, kv


def layer_bands(
    W_Q: Any, W_K: Any, H_Q: Any, H_K: Any,
    kv_index: Sequence[int] | NDArray[np.integer[Any]] | None = None, *,
    valid: Sequence[bool] | NDArray[np.bool_] | None = None,
    enclosures: Sequence[Any] | None = None,
) -> list[Band | None]:
    """Storage-precision bands of every query head of a layer (GQA: key heads shared).

    Parameters
    ----------
    W_Q, W_K : array_like
        Shapes ``(n_q, n, N)`` and ``(n_kv, n, N)``: the stored weights.
    H_Q, H_K : array_like
        Their storage half-widths (same shapes, nonnegative;
        :meth:`qkforms.models.Model.layer_precision`).
    kv_index : sequence of int, optional
        Key head of each query head (default: ``0, 1, ...``).
    valid : sequence of bool, optional
        Heads to band (the others get None; default: all).
    enclosures : sequence, optional
        Per query head, its certified :class:`qkforms.exact.Enclosure` (or None): the
        rigorous band is then centred on a proved spectrum (kind ``"rigorous"``).

    Returns
    -------
    list of Band or None
        None for heads not asked for and heads whose form is zero.

    Raises
    ------
    ShapeError, NonFiniteError, ParameterError
        For malformed weights or half-widths (negative, or shapes that differ).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.bands import layer_bands
    >>> rng = np.random.default_rng(1)
    >>> Q, K = rng.standard_normal((2, 2, 9)), rng.standard_normal((1, 2, 9))
    >>> bands = layer_bands(Q, K, np.full(Q.shape, 1e-6), np.full(K.shape, 1e-6), [0, 0])
    >>> [b.kind for b in bands], all(b.signature_stable for b in bands)
    (['rigorous-float', 'rigorous-float'], True)
    """
    Q, K, HQ, HK, kv = _checked_layer(W_Q, W_K, H_Q, H_K, kv_index)
    n_q, n = Q.shape[0], Q.shape[1]
    want = np.ones(n_q, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    out: list[Band | None] = [None] * n_q
    heads, data, radii, kinds = [], [], [], []
    for h in (int(i) for i in np.flatnonzero(want)):
        g = int(kv[h])
        hd = _reduce(Q[h], K[g], HQ[h], HK[g])
        norm = float(np.linalg.norm(hd.z))
        if norm == 0:
            continue
        enc = None if enclosures is None else enclosures[h]
        delta = _perturbation_bound(hd.Q, hd.K, hd.HQ, hd.HK)
        heads.append(h)
        data.append(hd)
        radii.append(_up(delta + _centre_error(hd, enc)))
        kinds.append("rigorous" if enc is not None else "rigorous-float")
    if not heads:
        return out
    Z = np.stack([hd.z for hd in data])
    R = np.asarray(radii)
    rig = _rigorous(Z, R, n)
    cen = _at_centre(Z, n)
    for i, (h, hd) in enumerate(zip(heads, data, strict=True)):
        out[h] = _assemble(i, hd, R[i], kinds[i], rig, cen)
    return out


def _assemble(i: int, hd: _Head, radius: float, kind: str,
              rig: dict[str, tuple[Array, Array]],
              cen: dict[str, tuple[Array, Array, Array]]) -> Band:
    n = hd.Q.shape[0]
    sym_zero = not np.any(hd.z[:2 * n])
    grads = np.stack([cen[k][2][i] for k in _FIRST_ORDER])
    widths = _first_order_widths(hd, grads)
    rigorous: dict[str, Interval | None] = {}
    first: dict[str, Interval | None] = {}
    for j, (stat, key) in enumerate(zip(BAND_STATS, _FIRST_ORDER, strict=True)):
        if sym_zero and stat in ("pairing", "rho"):
            rigorous[stat] = first[stat] = None
            continue
        rigorous[stat] = _interval(rig[stat][0][i], rig[stat][1][i])
        lo_r, hi_r = STAT_RANGES[stat]
        c_lo, c_hi, w = float(cen[key][0][i]), float(cen[key][1][i]), float(widths[j])
        if not (math.isfinite(c_lo) and math.isfinite(c_hi) and math.isfinite(w)):
            first[stat] = _interval(lo_r, hi_r)
            continue
        lo, hi = c_lo - w, c_hi + w
        if key == "theta_sq":
            lo, hi = math.sqrt(max(lo, 0.0)), math.sqrt(max(hi, 0.0))
        first[stat] = _interval(max(lo, lo_r), min(hi, hi_r))
    rig_sig = _signature(hd.lam, radius)
    fo_sig = _signature(hd.lam, _eigen_moves(hd))
    rig_max = max((iv.width for iv in rigorous.values() if iv is not None), default=0.0)
    fo_max = max((iv.width for iv in first.values() if iv is not None), default=0.0)
    if not (rig_max <= BAND_RIGOR_FLOOR or rig_max <= BAND_RIGOR_FACTOR * fo_max):
        kind = "first-order"
    sig = fo_sig if kind == "first-order" else rig_sig
    norm = float(np.linalg.norm(hd.z))
    return Band(kind=kind, radius=_up(radius / norm), signature_stable=sig[0],
                signature_margin=sig[1], rigorous=rigorous, first_order=first,
                rigorous_signature=rig_sig, first_order_signature=fo_sig)


def precision_band(W_Q: Any, W_K: Any, H_Q: Any, H_K: Any, *,
                   enclosure: Any | None = None) -> Band:
    """Storage-precision bands of one head (``W_Q``, ``W_K`` of shape ``(n, N)``).

    Parameters
    ----------
    W_Q, W_K : array_like
        The stored weights.
    H_Q, H_K : array_like
        Their storage half-widths (same shapes, nonnegative).
    enclosure : Enclosure, optional
        The head's certified enclosure (:func:`qkforms.exact.enclose`), to centre the
        rigorous band on a proved spectrum.

    Raises
    ------
    ZeroFormError
        If ``L = 0``.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.bands import precision_band
    >>> b = precision_band(np.eye(2, 6), np.eye(2, 6, 2), np.full((2, 6), 0.01),
    ...                    np.full((2, 6), 0.01))
    >>> b.interval("a").lo < 0.5 < b.interval("a").hi, b.signature_stable
    (True, True)
    """
    arrays = [np.asarray(x, dtype=np.float64) for x in (W_Q, W_K, H_Q, H_K)]
    if any(a.ndim != 2 for a in arrays):
        raise ShapeError("precision_band takes matrices W_Q, W_K, H_Q, H_K of shape (n, N); "
                         f"got shapes {[a.shape for a in arrays]}")
    Q, K, HQ, HK = (a[None] for a in arrays)
    res = layer_bands(Q, K, HQ, HK, [0],
                      enclosures=None if enclosure is None else [enclosure])[0]
    if res is None:
        raise ZeroFormError("this head's form L = W_K^T W_Q is zero: no profile")
    return res
