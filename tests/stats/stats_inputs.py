"""Synthetic survey inputs with known answers for the statistics tests (helpers)."""

from __future__ import annotations

from typing import Any

import numpy as np

from qkforms import Head
from qkforms.stats.synthetic_rows import rows_from_spectrum, survey_rows


def join(*parts: tuple[dict[str, list[Any]], dict[str, list[Any]]]) -> tuple[dict, dict]:
    """Concatenate several (heads, spectra) column dicts."""
    heads: dict[str, list[Any]] = {}
    spectra: dict[str, list[Any]] = {}
    for h, s in parts:
        for k, v in h.items():
            heads.setdefault(k, []).extend(v)
        for k, v in s.items():
            spectra.setdefault(k, []).extend(v)
    return heads, spectra


def gaussian_heads(count: int, n: int, N: int, seed: int) -> list[Head]:
    rng = np.random.default_rng(seed)
    return [Head(*rng.standard_normal((2, n, N))) for _ in range(count)]


def rank_one_heads(count: int, N: int, seed: int) -> list[Head]:
    rng = np.random.default_rng(seed)
    return [Head(*rng.standard_normal((2, 1, N))) for _ in range(count)]


def proportional_spectra(count: int, n: int, seed: int) -> list[np.ndarray]:
    """Symmetric spectra with beta = rho * alpha exactly (rho varies per head)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        alpha = rng.gamma(2.0, 1.0, n)
        rho = rng.uniform(0.3, 2.0)
        out.append(np.concatenate([alpha, -rho * alpha]))
    return out


def gamma_lobe_spectra(count: int, n: int, rho: float, k: float, seed: int) -> list[np.ndarray]:
    """Theorem 5 spectra: v X_i and -u X'_i with X ~ gamma(k), rho = u / v."""
    rng = np.random.default_rng(seed)
    return [np.concatenate([rng.gamma(k, 1.0, n), -rho * rng.gamma(k, 1.0, n)])
            for _ in range(count)]


def mixed_survey_rows() -> tuple[dict, dict]:
    """Two Gaussian 'models' of different shapes and one rank-one model."""
    return join(
        survey_rows("gauss-a", gaussian_heads(12, 8, 64, 1), heads_per_layer=4, exact=True),
        survey_rows("gauss-b", gaussian_heads(8, 6, 40, 2), heads_per_layer=4),
        survey_rows("rank-one", rank_one_heads(8, 24, 3), heads_per_layer=4),
    )


__all__ = ["gamma_lobe_spectra", "gaussian_heads", "join", "mixed_survey_rows",
           "proportional_spectra", "rank_one_heads", "rows_from_spectrum", "survey_rows"]
