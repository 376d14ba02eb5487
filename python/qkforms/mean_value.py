r"""Mean-value (centred) interval arithmetic: rigorous ranges of a formula over a ball.

:data:`MEAN_VALUE` is a :class:`qkforms.arithmetic.Arithmetic` backend whose numbers are
:class:`Slope` objects, so that the shared formulas of the profile, the pairing score,
the lobe ratio and the distance to Θ (:mod:`qkforms.profile_map`, :mod:`qkforms.pairing`,
:mod:`qkforms.theta_family`) evaluate, unchanged, to **enclosures of their range over a
Euclidean ball** ``B = {z : |z - c| <= R} ∩ {z >= 0}`` of their base variables
(:func:`variables`). Every :class:`Slope` ``u`` carries, per batch entry (numpy arrays
over heads),

* ``centre``: an interval containing ``u(c)``;
* ``range``: an interval containing ``u(z)`` for every ``z`` in ``B``;
* ``gradient``: an interval vector containing every (Clarke generalized) gradient of
  ``u`` at every point of ``B``.

Each operation computes the three from those of its operands by the rules of interval
arithmetic and the chain rule (the derivative of ``x_+`` over an interval containing 0
is ``[0, 1]``, that of ``min``/``max`` the hull of the operands' gradients, that of
``sqrt`` infinite when the argument's range reaches 0), and then **refines the range by
the mean-value theorem**: for ``z`` in ``B``, ``u(z) - u(c) = <g, z - c>`` for a
generalized gradient ``g`` at a point of the segment ``[c, z]`` (Lebourg's mean-value
theorem for Lipschitz functions; F. H. Clarke, *Optimization and Nonsmooth Analysis*,
Wiley 1983, Thm. 2.3.7, with the chain rule Thm. 2.6.6), so
``|u(z) - u(c)| <= R |g|_2 <= R G`` with ``G`` the norm of the componentwise largest
magnitudes of ``gradient``. The range is intersected with ``centre ± R G``. The
refinement keeps the Euclidean geometry of the ball, which a plain interval (box)
evaluation loses: a sum of ``m`` squares of variables each within ``R`` of its centre
moves by about ``2 R |c|``, not ``2 R |c|_1``.

Floating point: every operation is done in float64 round-to-nearest and the result's
endpoints are moved one ulp outward (``numpy.nextafter``); a correctly rounded result is
within half an ulp of the exact one, so the moved endpoints enclose it (``+ - * / sqrt``
are correctly rounded in IEEE 754). Sums of ``m`` nonnegative terms (gradient norms) are
enlarged by the factor ``1 + 2(m + 2)u`` (``u = 2^-53``), which bounds their rounding
error (N. J. Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM
2002, Lemma 3.1 and eq. (4.3)). ``0 * inf`` endpoints count as 0, and NaN endpoints as
the whole line.

Examples
--------
>>> import numpy as np
>>> from qkforms.mean_value import MEAN_VALUE, variables
>>> (z,) = variables(np.array([[3.0, 4.0]]), np.array([0.1]), [2])   # radius 0.1
>>> norm = MEAN_VALUE.sqrt(MEAN_VALUE.total(MEAN_VALUE.square(z)))
>>> lo, hi = norm.range                  # contains [4.9, 5.1], the exact range
>>> bool(lo[0] <= 4.9 and 5.1 <= hi[0]), round(float(hi[0] - lo[0]), 3)
(True, 0.206)
>>> round(float(np.hypot(3.1, 4.1) - np.hypot(2.9, 3.9)), 3)   # a box evaluation
0.28
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms.errors import ShapeError

__all__ = ["MEAN_VALUE", "MeanValueArithmetic", "Slope", "variables"]

Array = NDArray[np.float64]
Pair = tuple[Array, Array]

_U = 2.0**-53


def _dn(x: Array) -> Array:
    return np.nextafter(x, -np.inf)


def _up(x: Array) -> Array:
    return np.nextafter(x, np.inf)


def _clean(lo: Array, hi: Array) -> Pair:
    """NaN endpoints mean 'unknown': the whole line."""
    return np.where(np.isnan(lo), -np.inf, lo), np.where(np.isnan(hi), np.inf, hi)


def _add(a: Pair, b: Pair) -> Pair:
    with np.errstate(invalid="ignore", over="ignore"):
        return _clean(_dn(a[0] + b[0]), _up(a[1] + b[1]))


def _neg(a: Pair) -> Pair:
    return -a[1], -a[0]


def _mul(a: Pair, b: Pair) -> Pair:
    with np.errstate(invalid="ignore", over="ignore"):
        if a[0] is a[1] or b[0] is b[1]:  # a point factor: two products suffice
            x, y = (a, b) if a[0] is a[1] else (b, a)
            p1, p2 = x[0] * y[0], x[0] * y[1]
            lo, hi = np.minimum(p1, p2), np.maximum(p1, p2)
        else:
            p1, p2, p3, p4 = a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]
            lo = np.minimum(np.minimum(p1, p2), np.minimum(p3, p4))
            hi = np.maximum(np.maximum(p1, p2), np.maximum(p3, p4))
    if np.isnan(lo).any() or np.isnan(hi).any():  # 0 * inf endpoints: 0
        return _mul_nan(a, b)
    return _dn(lo), _up(hi)


def _mul_nan(a: Pair, b: Pair) -> Pair:
    with np.errstate(invalid="ignore", over="ignore"):
        p = np.stack(np.broadcast_arrays(a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]))
    p = np.where(np.isnan(p), 0.0, p)
    return _dn(p.min(axis=0)), _up(p.max(axis=0))


def _div(a: Pair, b: Pair) -> Pair:
    """``a / b``; the whole line where ``b`` contains 0."""
    safe = (b[0] > 0) | (b[1] < 0)
    bl, bh = np.where(safe, b[0], 1.0), np.where(safe, b[1], 1.0)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        p = np.stack(np.broadcast_arrays(a[0] / bl, a[0] / bh, a[1] / bl, a[1] / bh))
    p = np.where(np.isnan(p), 0.0, p)
    lo, hi = _dn(p.min(axis=0)), _up(p.max(axis=0))
    return np.where(safe, lo, -np.inf), np.where(safe, hi, np.inf)


def _sqrt(a: Pair) -> Pair:
    """Square root of a quantity that is nonnegative in exact arithmetic."""
    return (np.maximum(_dn(np.sqrt(np.maximum(a[0], 0.0))), 0.0),
            _up(np.sqrt(np.maximum(a[1], 0.0))))


def _square(a: Pair) -> Pair:
    lo, hi = a
    with np.errstate(over="ignore"):
        up = np.maximum(_up(lo * lo), _up(hi * hi))
        low = np.where(lo >= 0, _dn(lo * lo), np.where(hi <= 0, _dn(hi * hi), 0.0))
    return np.maximum(low, 0.0), up


def _sum(a: Pair, axis: int) -> Pair:
    """Sum over ``axis``, enlarged by the a priori rounding bound ``2(m + 2)u sum|x|``."""
    m = a[0].shape[axis]
    c = 2.0 * (m + 2) * _U
    with np.errstate(invalid="ignore", over="ignore"):
        lo = _dn(np.sum(a[0], axis=axis) - _up(c * np.sum(np.abs(a[0]), axis=axis)))
        hi = _up(np.sum(a[1], axis=axis) + _up(c * np.sum(np.abs(a[1]), axis=axis)))
    return _clean(lo, hi)


def _hull(a: Pair, b: Pair) -> Pair:
    return np.minimum(a[0], b[0]), np.maximum(a[1], b[1])


class Slope:
    """A quantity over a ball: centre, range and gradient enclosures (see the module).

    A Slope may hold an array of quantities (element shape ``e``, e.g. the ``n`` lobe
    entries): the endpoint arrays have shape ``e + (h,)`` (the batch axis last, so that
    quantities of different element shapes broadcast), the gradients ``e + (h, D)``.
    ``+ - * /`` broadcast like numpy; :meth:`MeanValueArithmetic.total` sums the last
    element axis.

    Attributes
    ----------
    centre, range : (ndarray, ndarray)
        Lower and upper endpoints.
    gradient : (ndarray, ndarray) or None
        None for a constant.
    radius : ndarray
        The ball's radius per batch entry, shape ``(h,)``.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.mean_value import variables
    >>> (x,) = variables(np.array([[1.0, 2.0]]), np.array([0.0]), [2])
    >>> p = x * x + 1.0                       # endpoints one ulp outside 2 and 5
    >>> p.centre_mid().ravel().round(12).tolist(), p.gradient_mid()[:, 0].tolist()
    ([2.0, 5.0], [[2.0, 0.0], [0.0, 4.0]])
    """

    __array_ufunc__ = None  # numpy defers to the reflected operators below

    def __init__(self, centre: Pair, rng: Pair, gradient: Pair | None, radius: Array,
                 refine: bool = True) -> None:
        self.centre = centre
        self.radius = radius
        self.gradient = gradient
        if refine and gradient is not None:
            rng = _refine(centre, rng, gradient, radius)
        self.range = rng

    # ------------------------------------------------------------------ helpers

    def _lift(self, other: Any) -> Slope:
        if isinstance(other, Slope):
            return other
        v = np.asarray(other, dtype=np.float64)
        if v.ndim:  # an array of constants: element axes before the batch axis
            v = v[..., None]
        return Slope((v, v), (v, v), None, self.radius, refine=False)

    def gradient_mid(self) -> Array:
        """Midpoints of the gradient enclosure (shape ``e + (h, D)``)."""
        if self.gradient is None:
            return np.zeros(np.shape(self.centre[0]) + (0,))
        return _mid(self.gradient)

    def centre_mid(self) -> Array:
        """Midpoints of the centre enclosure (shape ``e + (h,)``)."""
        return _mid(self.centre)

    # ------------------------------------------------------------------ + - * /

    def __add__(self, other: Any) -> Slope:
        o = self._lift(other)
        return Slope(_add(self.centre, o.centre), _add(self.range, o.range),
                     _grad_add(self.gradient, o.gradient), self.radius)

    __radd__ = __add__

    def __neg__(self) -> Slope:
        g = None if self.gradient is None else _neg(self.gradient)
        return Slope(_neg(self.centre), _neg(self.range), g, self.radius, refine=False)

    def __sub__(self, other: Any) -> Slope:
        return self + (-self._lift(other))

    def __rsub__(self, other: Any) -> Slope:
        return self._lift(other) + (-self)

    def __mul__(self, other: Any) -> Slope:
        o = self._lift(other)
        g = _grad_add(_grad_scale(self.gradient, o.range), _grad_scale(o.gradient, self.range))
        return Slope(_mul(self.centre, o.centre), _mul(self.range, o.range), g, self.radius)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Slope:
        o = self._lift(other)
        q = _div(self.range, o.range)
        # d(x/y) = (dx - (x/y) dy) / y, at every point of the ball
        one = np.ones_like(o.range[0])
        g = _grad_scale(_grad_add(self.gradient, _grad_scale(o.gradient, _neg(q))),
                        _div((one, one), o.range))
        return Slope(_div(self.centre, o.centre), q, g, self.radius)

    def __rtruediv__(self, other: Any) -> Slope:
        return self._lift(other) / self


def _mid(a: Pair) -> Array:
    lo, hi = a
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(np.isfinite(lo) & np.isfinite(hi), lo + (hi - lo) / 2, np.nan)


def _grad_add(a: Pair | None, b: Pair | None) -> Pair | None:
    if a is None:
        return b
    if b is None:
        return a
    return _add(a, b)


def _grad_scale(g: Pair | None, s: Pair) -> Pair | None:
    """Gradient times a scalar interval (per element and batch entry)."""
    if g is None:
        return None
    return _mul(g, (s[0][..., None], s[1][..., None]))


def _norm_up(g: Pair) -> Array:
    """An upper bound of ``max |v|_2`` over the vectors ``v`` of the interval vector ``g``."""
    m = np.maximum(np.abs(g[0]), np.abs(g[1]))
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.sum(m * m, axis=-1) * (1.0 + 2.0 * (m.shape[-1] + 2) * _U)
        return _up(np.sqrt(_up(s)))


def _refine(centre: Pair, rng: Pair, g: Pair, radius: Array) -> Pair:
    """``range ∩ (centre ± radius |g|)``, the mean-value enclosure over the ball."""
    with np.errstate(over="ignore", invalid="ignore"):
        reach = _up(radius * _norm_up(g))
        reach = np.where(np.isnan(reach), np.inf, reach)
        lo = np.maximum(rng[0], _dn(centre[0] - reach))
        hi = np.minimum(rng[1], _up(centre[1] + reach))
    return lo, hi


def _unary(x: Slope, c: Pair, r: Pair, dg: Pair) -> Slope:
    """A unary op: centre ``c``, range ``r``, derivative enclosure ``dg`` over the range."""
    return Slope(c, r, _grad_scale(x.gradient, dg), x.radius)


def _pos_pair(a: Pair) -> Pair:
    return np.maximum(a[0], 0.0), np.maximum(a[1], 0.0)


def _pos(x: Slope) -> Slope:
    lo, hi = x.range
    d = (np.where(lo > 0, 1.0, 0.0), np.where(hi > 0, 1.0, 0.0))
    return _unary(x, _pos_pair(x.centre), _pos_pair(x.range), d)


def _sqrt_slope(x: Slope) -> Slope:
    r = _sqrt(x.range)
    # d sqrt(t) = 1 / (2 sqrt(t)); unbounded when the range reaches 0
    one = np.ones_like(r[0])
    inv = _div((one, one), (_dn(2.0 * r[0]), _up(2.0 * r[1])))
    inv = (np.where(r[0] > 0, inv[0], -np.inf), np.where(r[0] > 0, inv[1], np.inf))
    return _unary(x, _sqrt(x.centre), r, inv)


def _square_slope(x: Slope) -> Slope:
    two_r = (_dn(2.0 * x.range[0]), _up(2.0 * x.range[1]))
    return _unary(x, _square(x.centre), _square(x.range), two_r)


def _min_slope(x: Slope, y: Slope) -> Slope:
    c = (np.minimum(x.centre[0], y.centre[0]), np.minimum(x.centre[1], y.centre[1]))
    r = (np.minimum(x.range[0], y.range[0]), np.minimum(x.range[1], y.range[1]))
    gx, gy = x.gradient, y.gradient
    g: Pair | None = None
    if gx is not None or gy is not None:
        like = gx if gx is not None else gy
        assert like is not None
        zero = np.zeros((1,) * (like[0].ndim - 1) + like[0].shape[-1:])
        gx = gx if gx is not None else (zero, zero)
        gy = gy if gy is not None else (zero, zero)
        x_low = (x.range[1] < y.range[0])[..., None]
        y_low = (y.range[1] < x.range[0])[..., None]
        both = _hull(gx, gy)
        g = (np.where(x_low, gx[0], np.where(y_low, gy[0], both[0])),
             np.where(x_low, gx[1], np.where(y_low, gy[1], both[1])))
    return Slope(c, r, g, x.radius)


def _total(x: Slope) -> Slope:
    """Sum over the last element axis."""
    g = None if x.gradient is None else _sum(x.gradient, axis=-3)
    return Slope(_sum(x.centre, axis=-2), _sum(x.range, axis=-2), g, x.radius)


class MeanValueArithmetic:
    """:class:`qkforms.arithmetic.Arithmetic` on :class:`Slope` (rigorous over a ball).

    The operations accept a :class:`Slope` (of any element shape) or a numpy object
    array of them (mapped elementwise; ``total`` then sums the array's last axis).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.mean_value import MEAN_VALUE, variables
    >>> (x,) = variables(np.array([[-1.0, 4.0]]), np.array([0.0]), [2])
    >>> MEAN_VALUE.sqrt(MEAN_VALUE.pos(x)).centre_mid().ravel().round(12).tolist()
    [0.0, 2.0]
    """

    name = "mean-value"

    def pos(self, x: Any) -> Any:
        return _map1(_pos, x)

    def square(self, x: Any) -> Any:
        return _map1(_square_slope, x)

    def sqrt(self, x: Any) -> Any:
        return _map1(_sqrt_slope, x)

    def total(self, x: Any) -> Any:
        if isinstance(x, Slope):
            return _total(x)
        arr = np.asarray(x, dtype=object)
        out = np.empty(arr.shape[:-1], dtype=object)
        for idx in np.ndindex(*arr.shape[:-1]):
            items = list(arr[idx])
            acc = items[0]
            for v in items[1:]:
                acc = acc + v
            out[idx] = acc
        return out[()] if out.ndim == 0 else out

    def minimum(self, x: Any, y: Any) -> Any:
        return _map2(_min_slope, x, y)

    def clip(self, x: Any, lo: float, hi: float) -> Any:
        return _map1(lambda s: _min_slope(-_min_slope(-s, s._lift(-lo)), s._lift(hi)), x)

    def ratio_or_inf(self, num: Any, den: Any) -> Any:
        return _map2(_ratio_or_inf, num, den)


def _ratio_or_inf(num: Slope, den: Slope) -> Slope:
    """``num / den``; where the centre's ``den`` is exactly 0 the centre is ``+inf``."""
    q = num / den
    zero = (den.centre[0] == 0) & (den.centre[1] == 0)
    c = (np.where(zero, np.inf, q.centre[0]), np.where(zero, np.inf, q.centre[1]))
    return Slope(c, q.range, q.gradient, q.radius, refine=False)


def _map1(f: Any, x: Any) -> Any:
    if isinstance(x, Slope):
        return f(x)
    arr = np.asarray(x, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    for idx in np.ndindex(*arr.shape):
        out[idx] = f(arr[idx])
    return out[()] if out.ndim == 0 else out


def _map2(f: Any, x: Any, y: Any) -> Any:
    if isinstance(x, Slope) and isinstance(y, Slope):
        return f(x, y)
    ax, ay = np.broadcast_arrays(np.asarray(x, dtype=object), np.asarray(y, dtype=object))
    out = np.empty(ax.shape, dtype=object)
    for idx in np.ndindex(*ax.shape):
        a, b = ax[idx], ay[idx]
        if isinstance(b, Slope) and not isinstance(a, Slope):
            a = b._lift(a)
        elif isinstance(a, Slope) and not isinstance(b, Slope):
            b = a._lift(b)
        out[idx] = f(a, b)
    return out[()] if out.ndim == 0 else out


def variables(centre: Array, radius: Array, sizes: Sequence[int | None], *,
              lower: float | None = 0.0) -> list[Slope]:
    """The base variables of a ball, in groups: one :class:`Slope` per group.

    Parameters
    ----------
    centre : ndarray, shape (h, D)
        The ball's centre per batch entry (exact float64 values).
    radius : ndarray, shape (h,)
        Its Euclidean radius (0: the point itself, for derivatives at the centre).
    sizes : sequence of int or None
        How the ``D`` coordinates are grouped: ``k`` gives a Slope of element shape
        ``(k,)``, None a scalar one (one coordinate); the sizes add up to ``D``.
    lower : float or None
        Known lower bound of every variable (the ball is intersected with
        ``{z >= lower}``); None for none.

    Examples
    --------
    >>> import numpy as np
    >>> lobes, tau = variables(np.array([[0.5, 2.0, 1.0]]), np.array([1.0]), [2, None])
    >>> lobes.range[0].ravel().round(12).tolist(), lobes.range[1].ravel().round(12).tolist()
    ([0.0, 1.0], [1.5, 3.0])
    """
    c = np.asarray(centre, dtype=np.float64)
    r = np.asarray(radius, dtype=np.float64)
    h, D = c.shape
    with np.errstate(over="ignore", invalid="ignore"):
        lo = np.where(r[:, None] == 0, c, _dn(c - r[:, None]))
        hi = np.where(r[:, None] == 0, c, _up(c + r[:, None]))
    if lower is not None:
        lo = np.maximum(lo, lower)
    out, j = [], 0
    for size in sizes:
        k = 1 if size is None else int(size)
        sl = slice(j, j + k)
        g = np.zeros((k, h, D))
        g[np.arange(k), :, np.arange(j, j + k)] = 1.0
        cc, ll, hh = c[:, sl].T, lo[:, sl].T, hi[:, sl].T
        if size is None:
            cc, ll, hh, g = cc[0], ll[0], hh[0], g[0]
        out.append(Slope((cc, cc), (ll, hh), (g, g), r, refine=False))
        j += k
    if j != D:
        raise ShapeError(f"variable sizes add up to {j}, the centre has {D} coordinates")
    return out


#: the mean-value backend
MEAN_VALUE = MeanValueArithmetic()
