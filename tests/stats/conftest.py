"""Fixtures of the statistics tests."""

from __future__ import annotations

import pytest
from stats_inputs import gaussian_heads, join, rank_one_heads, survey_rows


@pytest.fixture(scope="session")
def mixed_survey() -> tuple[dict, dict]:
    """Two Gaussian 'models' of different shapes and one rank-one model."""
    return join(
        survey_rows("gauss-a", gaussian_heads(12, 8, 64, 1), heads_per_layer=4,
                    exact_certified=True),
        survey_rows("gauss-b", gaussian_heads(8, 6, 40, 2), heads_per_layer=4),
        survey_rows("rank-one", rank_one_heads(8, 24, 3), heads_per_layer=4),
    )
