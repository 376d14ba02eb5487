"""observations() gives the same tables from pandas DataFrames as from column dicts."""

from __future__ import annotations

import numpy as np
import pytest

from qkforms import Head
from qkforms.stats import observations
from qkforms.stats.synthetic_rows import survey_rows

pd = pytest.importorskip("pandas")


def test_pandas_input_gives_the_same_tables() -> None:
    rng = np.random.default_rng(7)
    heads = [Head(*rng.standard_normal((2, 3, 16))) for _ in range(8)]
    h, s = survey_rows("toy", heads, heads_per_layer=4)
    kwargs = {"seed": 0, "fits": False, "n_boot": 50, "baseline": False}
    from_dicts = observations(h, s, **kwargs)
    from_pandas = observations(pd.DataFrame(h), pd.DataFrame(s), **kwargs)
    assert sorted(from_dicts) == sorted(from_pandas)
    for name in ("observation1_balance", "pairing", "accumulation"):
        a, b = from_dicts[name].to_pandas(), from_pandas[name].to_pandas()
        pd.testing.assert_frame_equal(a, b)
        assert len(a) == 2  # the model and the pooled row
