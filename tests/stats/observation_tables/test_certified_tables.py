"""Observation tables on certified surveys: decided heads only, undecided reported.

With the ``--certify`` columns present, a head counts as near Θ, strongly symmetric,
in a face or of a spectral type only when its intervals decide it
(``qkforms.exact.decide``); heads whose intervals straddle a threshold are counted as
undecided and never rounded to either side.
"""

from __future__ import annotations

import numpy as np
import pytest

from qkforms import Head, spectral_type
from qkforms.stats import observations
from qkforms.stats.observation_tables import STRONGLY_SYMMETRIC, UNDECIDED
from qkforms.stats.synthetic_rows import survey_rows
from qkforms.tolerances import NEAR_THETA, SPECTRAL_TYPE_RADIUS


def _heads(seed: int = 0, count: int = 8) -> list[Head]:
    rng = np.random.default_rng(seed)
    heads = []
    for i in range(count):
        n, N = 2, 10
        Q = rng.standard_normal((n, N))
        # alternate near-rank-one heads (near Θ) and Gaussian heads
        K = Q * 0.9 + 0.3 * rng.standard_normal((n, N)) if i % 2 else rng.standard_normal((n, N))
        heads.append(Head(Q, K))
    return heads


@pytest.fixture(scope="module")
def certified_rows():
    return survey_rows("toy", _heads(), heads_per_layer=4, certify=True)


def _tables(h, s):
    return observations(h, s, n_boot=20, fits=False, baseline=False)


def test_certified_counts_equal_the_interval_decisions(certified_rows):
    h, s = certified_rows
    t = _tables(h, s)
    row = t["certified"].row(0)
    lo, hi = np.array(h["theta_dist_lo"]), np.array(h["theta_dist_hi"])
    assert row["heads"] == row["heads_certified"] == 8
    assert row["near_theta_yes"] == int(np.sum(hi <= NEAR_THETA))
    assert row["near_theta_no"] == int(np.sum(lo > NEAR_THETA))
    assert row["near_theta_undecided"] == 0
    assert row["max_width"] < 1e-11
    sym_lo = np.array(h["sym_energy_lo"])
    assert row["strongly_symmetric_yes"] + row["strongly_symmetric_no"] == 8
    assert row["strongly_symmetric_no"] == int(np.sum(np.array(h["sym_energy_hi"])
                                                     < STRONGLY_SYMMETRIC))
    assert row["strongly_symmetric_yes"] == int(np.sum(sym_lo >= STRONGLY_SYMMETRIC))
    # well-separated random heads: every type decided, equal to the float rule
    float_types = [spectral_type((a, b, c, d), radius=SPECTRAL_TYPE_RADIUS)
                   for a, b, c, d in zip(h["a"], h["b"], h["c"], h["d"], strict=True)]
    for ty in ("I+", "II", "I-"):
        assert row[f"type_{ty}"] == float_types.count(ty)
    assert row["type_undecided"] == 0
    acc = t["accumulation"].row(0)
    assert acc["near_theta"] == row["near_theta_yes"] and acc["near_theta_undecided"] == 0


def test_straddling_heads_are_undecided_not_rounded(certified_rows):
    h, s = certified_rows
    h = {k: list(v) for k, v in h.items()}
    # head 0: theta distance interval across NEAR_THETA; head 1: c - d across 0 and
    # c_S + d_S far from the Type II radius (so only the parity is in doubt)
    h["theta_dist_lo"][0], h["theta_dist_hi"][0] = NEAR_THETA - 1e-3, NEAR_THETA + 1e-3
    h["a_lo"][1], h["a_hi"][1] = 0.3, 0.3
    h["b_lo"][1], h["b_hi"][1] = 0.4, 0.4
    h["c_lo"][1], h["c_hi"][1] = 0.14, 0.16
    h["d_lo"][1], h["d_hi"][1] = 0.14, 0.16
    t = _tables(h, s)
    row = t["certified"].row(0)
    assert row["near_theta_undecided"] == 1
    assert row["near_theta_yes"] + row["near_theta_no"] == 7
    assert row["type_undecided"] == 1 and row["parity_plus_undecided"] == 1
    radius = [r for r in t["spectral_types"].rows() if r["rule"] == "radius"][0]
    assert radius["n_undecided"] == 1
    assert radius["n_I+"] + radius["n_II"] + radius["n_I-"] + radius["n_undecided"] == 8
    labels = t["head_stats"]["type_radius"]
    assert list(labels).count(UNDECIDED) == 1 and labels[1] == UNDECIDED
    assert t["accumulation"].row(0)["near_theta_undecided"] == 1
    sens = [r for r in t["spectral_types_sensitivity"].rows() if r["model"] == "toy"]
    assert all(r["n_undecided"] >= 1 for r in sens)


def test_float_runs_have_no_certified_table():
    h, s = survey_rows("toy", _heads(1, 4), heads_per_layer=4)
    t = _tables(h, s)
    assert len(t["certified"].columns) == 0
    radius = [r for r in t["spectral_types"].rows() if r["rule"] == "radius"][0]
    assert "n_undecided" not in radius
    acc = t["accumulation"].row(0)
    assert acc["near_theta"] == int(np.sum(np.array(h["theta_dist"]) <= NEAR_THETA))


def test_exact_faces_are_decided_on_their_face_or_undecided() -> None:
    """Heads exactly on a face of the simplex: an exactly symmetric ``S``-spectrum
    (``c = d = 0``, ``b > 0``) is decided Type II, not left undecided; a PSD head
    (``W_K = W_Q``: ``d = 0``) is never decided off the face ``d = 0``."""
    e = np.eye(6)
    symmetric = [Head(e[[0, 2]], e[[1, 3]] * [[1.0], [2.0]]),  # S-spectrum +-1/2, +-1
                 Head(e[[0]], e[[4]])]
    rng = np.random.default_rng(3)
    psd = [Head(Q, Q) for Q in rng.standard_normal((2, 2, 6))]
    h, s = survey_rows("faces", symmetric + psd, certify=True)
    assert h["c"][:2] == [0.0, 0.0] and h["d"][:2] == [0.0, 0.0] and min(h["b"][:2]) > 0
    assert h["d"][2:] == [0.0, 0.0]
    t = _tables(h, s)
    labels = list(t["head_stats"]["type_radius"])
    assert labels[:2] == ["II", "II"]
    row = t["certified"].row(0)
    assert row["face_d0_no"] == 0
    assert row["face_d0_yes"] + row["face_d0_undecided"] == 4
