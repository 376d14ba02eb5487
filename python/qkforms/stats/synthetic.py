"""Survey rows (architecture.md §5) for given heads or spectra: small synthetic inputs.

These functions build ``heads.parquet``/``spectra.parquet``-shaped column dicts
through the core (:class:`qkforms.Head`, :func:`qkforms.profile_from_eigenvalues`,
:mod:`qkforms.pairing`, :mod:`qkforms.theta`), so the statistics can be run on inputs
with known answers: rank-one heads (on Θ), Gaussian heads (symmetric energy near
``(N+1)/(2N)``), symmetric forms with prescribed spectra (proportional lobes, gamma
lobes of Theorem 5). They are a test and demonstration aid, not the survey.

Examples
--------
>>> import numpy as np
>>> from qkforms import Head
>>> from qkforms.stats.synthetic import survey_rows
>>> rng = np.random.default_rng(0)
>>> h, s = survey_rows("toy", [Head(*rng.standard_normal((2, 3, 16)))])
>>> h["n_pos"], h["n_neg"], h["n_zero"]
([3], [3], [10])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["rows_from_spectrum", "survey_rows"]

ZERO_TOL = 1e-9


def _common(
    eig_S: NDArray[np.float64], norm_sq: float, skew_sq: float, sv_L: NDArray[np.float64],
    trace: float,
) -> dict[str, Any]:
    """Columns shared by both constructors, from the spectrum of S and energies of L."""
    from qkforms import profile_from_eigenvalues, theta_distance, theta_L
    from qkforms.faces import spectral_type
    from qkforms.pairing import (
        lobe_departure,
        lobe_ratio,
        pairing_bound,
        pairing_score,
    )
    from qkforms.theta import accumulation_limit

    lam = np.sort(eig_S)[::-1]
    top = np.max(np.abs(lam)) if lam.size else 0.0
    n_pos = int(np.sum(lam > ZERO_TOL * top))
    n_neg = int(np.sum(lam < -ZERO_TOL * top))
    p = profile_from_eigenvalues(lam, norm_sq, skew_sq)
    a, b, c, d = (float(v) for v in p)
    rho = float(lobe_ratio(lam))
    pair = float(pairing_score(lam))
    bound = float(pairing_bound(rho))
    sym = 1.0 - a
    bS, cS, dS = b / sym, c / sym, d / sym
    lim = accumulation_limit(rho)
    thm5 = float(np.sqrt((bS - lim.b) ** 2 + (cS - lim.c) ** 2 + (dS - lim.d) ** 2))
    tl = np.asarray(theta_L(rho), dtype=np.float64)
    h2 = np.sort(sv_L)[::-1] ** 2
    return {
        "n_pos": n_pos,
        "n_neg": n_neg,
        "balance": 1.0 - abs(n_pos - n_neg) / max(n_pos + n_neg, 1),
        "sym_energy": sym,
        "pairing": pair,
        "rho": rho,
        "pairing_bound": bound,
        "pairing_gap": bound - pair,
        "lobe_departure": float(lobe_departure(lam)),
        "a": a, "b": b, "c": c, "d": d,
        "b_S": bS, "c_S": cS, "d_S": dS,
        "theta_dist": float(theta_distance((a, b, c, d))),
        "theta_L_dist": float(np.linalg.norm(np.asarray([a, b, c, d]) - tl)),
        "thm5_dist": thm5,
        "trace_ratio": abs(trace) / np.sqrt(norm_sq),
        "participation_ratio": float(h2.sum() ** 2 / np.sum(h2**2)),
        "stable_rank": float(h2.sum() / h2[0]),
        "leading_share": float(h2[0] / h2.sum()),
        "a_over_b": a / b if b > 0 else float("inf"),
        "b_minus_a": b - a,
        "spectral_type": str(spectral_type((a, b, c, d), radius=0.02)),
        "norm_sq": float(norm_sq),
    }


def _append(out: dict[str, list[Any]], row: dict[str, Any]) -> None:
    for k, v in row.items():
        out.setdefault(k, []).append(v)


def survey_rows(
    model: str,
    heads: Sequence[Any],
    *,
    heads_per_layer: int | None = None,
    exact_certified: bool | None = None,
) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """heads/spectra columns for :class:`qkforms.Head` objects, layer-major.

    Parameters
    ----------
    model : str
        Model name of every row.
    heads : sequence of Head
    heads_per_layer : int, optional
        Heads per layer (default: all in layer 0).
    exact_certified : bool, optional
        Value of the ``exact_certified`` column (``None``: not checked).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import Head
    >>> rng = np.random.default_rng(0)
    >>> h, s = survey_rows("m", [Head(*rng.standard_normal((2, 2, 8))) for _ in range(4)],
    ...                    heads_per_layer=2)
    >>> h["layer"], h["head"], len(s["eig_S"][0])
    ([0, 0, 1, 1], [0, 1, 0, 1], 4)
    """
    per = heads_per_layer or max(len(heads), 1)
    hcols: dict[str, list[Any]] = {}
    scols: dict[str, list[Any]] = {}
    for i, head in enumerate(heads):
        layer, index = divmod(i, per)
        red = head.reduced().form
        S = 0.5 * (red + red.T)
        T = 0.5 * (red - red.T)
        lam = np.sort(np.linalg.eigvalsh(S))[::-1]
        e = head.energies()
        n, N = head.n, head.N
        sv_T = np.sort(np.linalg.svd(T, compute_uv=False))[::-1][: 2 * n : 2]
        eig_L = np.linalg.eigvals(red)
        abs_L = np.sort(np.abs(eig_L))[::-1][:n]
        sv_L = np.linalg.svd(red, compute_uv=False)[:n]
        row = {"model": model, "layer": layer, "head": index, "kv_head": index, "N": N, "n": n,
               "status": "ok", "error": None}
        common = _common(lam, float(e.norm_sq), max(float(e.skew_sq), 0.0), sv_L,
                         float(np.trace(red)))
        row.update(common)
        row["n_zero"] = N - common["n_pos"] - common["n_neg"]
        row["exact_certified"] = exact_certified
        _append(hcols, _order(row))
        _append(scols, {"model": model, "layer": layer, "head": index,
                        "eig_S": lam.tolist(), "sv_T": sv_T.tolist(),
                        "abs_eig_L": abs_L.tolist()})
    return hcols, scols


def rows_from_spectrum(
    model: str, spectra: Sequence[ArrayLike], *, N: int | None = None,
    heads_per_layer: int | None = None,
) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """heads/spectra columns for *symmetric* forms with the given eigenvalues.

    The form is ``diag(λ)`` (so ``a = 0``, ``T = 0``); ``n`` is half the spectrum
    length, ``N`` defaults to ``2n``. ``sv_T`` is all zeros and ``|λ(L)|`` is the
    ``n`` largest ``|λ|``.

    Examples
    --------
    >>> from qkforms.stats.synthetic import rows_from_spectrum
    >>> h, s = rows_from_spectrum("sym", [[2.0, 1.0, -1.0, -0.5]])
    >>> h["a"], h["lobe_departure"]
    ([0.0], [0.0])
    """
    per = heads_per_layer or max(len(spectra), 1)
    hcols: dict[str, list[Any]] = {}
    scols: dict[str, list[Any]] = {}
    for i, spec in enumerate(spectra):
        layer, index = divmod(i, per)
        lam = np.sort(np.asarray(spec, dtype=np.float64))[::-1]
        n = lam.size // 2
        NN = N or 2 * n
        norm_sq = float(np.sum(lam**2))
        sv_L = np.sort(np.abs(lam))[::-1][:n]
        row = {"model": model, "layer": layer, "head": index, "kv_head": index, "N": NN, "n": n,
               "status": "ok", "error": None}
        common = _common(lam, norm_sq, 0.0, np.sort(np.abs(lam))[::-1], float(lam.sum()))
        row.update(common)
        row["n_zero"] = NN - common["n_pos"] - common["n_neg"]
        row["exact_certified"] = None
        _append(hcols, _order(row))
        _append(scols, {"model": model, "layer": layer, "head": index, "eig_S": lam.tolist(),
                        "sv_T": np.zeros(n).tolist(), "abs_eig_L": sv_L.tolist()})
    return hcols, scols


_ORDER = (
    "model", "layer", "head", "kv_head", "N", "n", "status", "error", "n_pos", "n_neg",
    "n_zero", "balance", "sym_energy", "pairing", "rho", "pairing_bound", "pairing_gap",
    "lobe_departure", "a", "b", "c", "d", "b_S", "c_S", "d_S", "theta_dist", "theta_L_dist",
    "thm5_dist", "trace_ratio", "participation_ratio", "stable_rank", "leading_share",
    "a_over_b", "b_minus_a", "spectral_type", "norm_sq", "exact_certified",
)


def _order(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in _ORDER}
