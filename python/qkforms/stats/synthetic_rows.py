"""Survey rows (architecture.md §5) for given heads or spectra: small synthetic inputs.

These functions build ``heads.parquet``/``spectra.parquet``-shaped column dicts
through the survey's own computations (the Gram engine :func:`qkforms.gram.head_spectra`
and the per-head statistics :func:`qkforms.survey.head_statistics.head_statistics`), so the
statistics can be run on inputs
with known answers: rank-one heads (on Θ), Gaussian heads (symmetric energy near
``(N+1)/(2N)``), symmetric forms with prescribed spectra (proportional lobes, gamma
lobes of Theorem 5). They are a test and demonstration aid, not the survey.

Examples
--------
>>> import numpy as np
>>> from qkforms import Head
>>> from qkforms.stats.synthetic_rows import survey_rows
>>> rng = np.random.default_rng(0)
>>> h, s = survey_rows("toy", [Head(*rng.standard_normal((2, 3, 16)))])
>>> h["n_pos"], h["n_neg"], h["n_zero"]
([3], [3], [10])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from qkforms.bands import precision_band
from qkforms.exact import enclose
from qkforms.gram import head_spectra
from qkforms.head import Head
from qkforms.models.precision import float_half_widths
from qkforms.stats.observation_tables import ObservationOptions, prepare_inputs
from qkforms.stats.observation_tables.inputs import TableInputs
from qkforms.survey.arrow_tables import band_columns, certify_columns
from qkforms.survey.head_statistics import exact_facts, head_statistics
from qkforms.survey.schema import BAND_COLUMNS, CERTIFY_COLUMNS, HEADS_COLUMNS, INT_COLUMNS

__all__ = ["rows_from_spectrum", "survey_rows", "toy_inputs"]


def _stat_row(eig_S: np.ndarray, norm_sq: float, skew_sq: float, trace: float,
              sv_L_sq: np.ndarray, N: int, n: int, err: tuple[float, float, float] | None = None
              ) -> dict[str, Any]:
    """The statistic columns of one head, as Python scalars (the survey's one function).

    ``err``: ``(err_rel, err_abs, n_live)`` of the Gram engine; None for an exact spectrum.
    """
    rel, absolute, live = (0.0, 0.0, n) if err is None else err
    st = head_statistics(eig_S[None], [norm_sq], [skew_sq], [trace], sv_L_sq[None], N=N, n=n,
                         err_rel=[rel], err_abs=[absolute], n_live=[live])
    row = {k: (v[0].item() if isinstance(v[0], np.generic) else v[0]) for k, v in st.items()}
    for k in INT_COLUMNS:  # integer columns come back as floats with NaN for null
        row[k] = None if row[k] is None or row[k] != row[k] else int(row[k])
    return row


def _append(out: dict[str, list[Any]], row: dict[str, Any]) -> None:
    for k, v in row.items():
        out.setdefault(k, []).append(v)


def survey_rows(
    model: str,
    heads: Sequence[Any],
    *,
    heads_per_layer: int | None = None,
    exact: bool = False,
    certify: bool = False,
    band_dtype: str | None = None,
) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """heads/spectra columns for :class:`qkforms.Head` objects, layer-major.

    Parameters
    ----------
    model : str
        Model name of every row.
    heads : sequence of Head
    heads_per_layer : int, optional
        Heads per layer (default: all in layer 0).
    exact : bool
        Decide the signature columns exactly, as ``qkforms survey --exact`` does
        (:func:`qkforms.survey.head_statistics.exact_facts`).
    certify : bool
        Fill the ``--certify`` columns with :func:`qkforms.exact.enclose` (else null).
    band_dtype : str, optional
        Fill the ``--precision-bands`` columns (:func:`qkforms.bands.precision_band`) as
        if the weights were stored in this float dtype (e.g. ``"bfloat16"``; the weights
        must be representable in it); null when not given.

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
        n, N = head.n, head.N
        sp = head_spectra(head.W_Q[None], head.W_K[None])
        row = {"model": model, "step": None, "tokens_seen": None, "layer": layer, "head": index,
               "kv_head": index, "N": N, "n": n,
               "status": "ok", "error": None}
        row.update(_stat_row(sp.eig_S[0], float(sp.norm_sq[0]), max(float(sp.skew_sq[0]), 0.0),
                             float(sp.trace[0]), sp.sv_L_sq[0], N, n,
                             (float(sp.err_rel[0]), float(sp.err_abs[0]), int(sp.n_live[0]))))
        if exact:
            row.update(exact_facts(head.W_Q, head.W_K)[0])
        if certify:
            row.update({k: v[0] for k, v in certify_columns([enclose(head)]).items()})
        if band_dtype is not None:
            band = precision_band(head.W_Q, head.W_K, float_half_widths(head.W_Q, band_dtype),
                                  float_half_widths(head.W_K, band_dtype))
            row.update({k: v[0] for k, v in band_columns([band]).items()})
        _append(hcols, _order(row))
        _append(scols, {"model": model, "step": None, "layer": layer, "head": index,
                        "eig_S": sp.eig_S[0].tolist(), "sv_T": sp.sv_T[0].tolist(),
                        "abs_eig_L": sp.abs_eig_L[0].tolist()})
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
    >>> from qkforms.stats.synthetic_rows import rows_from_spectrum
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
        row = {"model": model, "step": None, "tokens_seen": None, "layer": layer, "head": index,
               "kv_head": index, "N": NN, "n": n,
               "status": "ok", "error": None}
        row.update(_stat_row(lam, norm_sq, 0.0, float(lam.sum()),
                             np.sort(lam**2)[::-1], NN, n))
        _append(hcols, _order(row))
        _append(scols, {"model": model, "step": None, "layer": layer, "head": index,
                        "eig_S": lam.tolist(),
                        "sv_T": np.zeros(n).tolist(), "abs_eig_L": sv_L.tolist()})
    return hcols, scols


def _order(row: dict[str, Any]) -> dict[str, Any]:
    """The row in file order; the ``--certify`` and band columns are null unless given."""
    optional = (*CERTIFY_COLUMNS, *BAND_COLUMNS)
    return {k: row.get(k) if k in optional else row[k] for k in HEADS_COLUMNS}


def toy_inputs(n_boot: int = 20) -> TableInputs:
    """The inputs of the observation tables for six Gaussian heads (n = 4, N = 32) in two
    layers of one model ``toy``, without family fits: the examples of the table builders.

    Examples
    --------
    >>> from qkforms.stats.synthetic_rows import toy_inputs
    >>> len(toy_inputs().ok)
    6
    """
    rng = np.random.default_rng(0)
    heads = [Head(*rng.standard_normal((2, 4, 32))) for _ in range(6)]
    h, s = survey_rows("toy", heads, heads_per_layer=3)
    return prepare_inputs(h, s, ObservationOptions(n_boot=n_boot, fits=False))
