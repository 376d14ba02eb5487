"""Issue #19, class 4: right in the API and right in the survey; bad input refused.

The survey rescales every head as :class:`qkforms.Head` does (the same function,
:func:`qkforms.gram.unit_scale`), so weights of 1e300 or 1e-300 give the statistics of
the unscaled head instead of "non-finite" or "symmetric part zero" failures; the API
refuses what is not a finite real array with a ``QKFormsError``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pq = pytest.importorskip("pyarrow.parquet")

import qkforms as qk  # noqa: E402
from qkforms.cli import main  # noqa: E402
from qkforms.errors import NonFiniteError, NotRealError, QKFormsError  # noqa: E402
from qkforms.gram import layer_spectra, unit_scale  # noqa: E402
from qkforms.models import load  # noqa: E402
from qkforms.survey.schema import FLOAT_COLUMNS, INT_COLUMNS  # noqa: E402
from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint  # noqa: E402

SHAPE = {"n_layers": 2, "N": 32, "n": 4, "n_q": 4, "n_kv": 2, "seed": 11, "dtype": "F64"}
#: signature_margin measures the float computation (its error bound depends on how the
#: rounding fell, e.g. on the power-of-two balance of W_Q and W_K), not the head alone
INVARIANT = [c for c in (*INT_COLUMNS, *FLOAT_COLUMNS) if c not in ("norm_sq",
                                                                     "signature_margin")]


def survey_rows(path: Path, out: Path) -> dict[str, list]:
    assert main(["survey", str(path), "--out", str(out), "--exact", "--no-stats",
                 "--no-progress"]) == 0
    return pq.read_table(out / "heads.parquet").to_pydict()


@pytest.fixture(scope="module")
def unscaled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list]:
    tmp = tmp_path_factory.mktemp("unscaled")
    return survey_rows(write_llama_checkpoint(tmp / "ckpt", **SHAPE), tmp / "out")


@pytest.mark.parametrize("scale", [1e300, 1e-300, 2.0**-1000, 3.0])
def test_survey_of_scaled_weights_matches_the_unscaled_survey(scale: float,
                                                              unscaled: dict[str, list],
                                                              tmp_path: Path) -> None:
    ckpt = write_llama_checkpoint(tmp_path / "ckpt", scale=scale, **SHAPE)
    rows = survey_rows(ckpt, tmp_path / "out")
    assert rows["status"] == ["ok"] * 8, rows["error"]
    assert rows["signature_by"] == ["exact"] * 8 and rows["prediction_met"] == [True] * 8
    assert min(rows["signature_margin"]) > 1e6  # decided in float too, by far
    for col in INVARIANT:
        if col in INT_COLUMNS:
            assert rows[col] == unscaled[col], col
        else:
            np.testing.assert_allclose(rows[col], unscaled[col], rtol=1e-9, atol=1e-12,
                                       err_msg=col)
    # norm_sq is the one scale-dependent statistic: |L|^2 scales with scale^4, and is
    # inf/0 exactly when the true value is beyond float64
    with np.errstate(over="ignore", under="ignore"):
        s = np.float64(scale)
        expect = np.asarray(unscaled["norm_sq"]) * s * s * s * s
    if np.all(np.isfinite(expect)) and np.all(expect > 1e-290):
        np.testing.assert_allclose(rows["norm_sq"], expect, rtol=1e-9)
    else:
        assert np.all(np.asarray(rows["norm_sq"]) == expect), (rows["norm_sq"], expect)


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_survey_profile_equals_the_core_head_profile(scale: float, tmp_path: Path) -> None:
    # issue example: qk.Head(1e300 * W_Q, 1e300 * W_K).profile() is right; so is the survey
    ckpt = write_llama_checkpoint(tmp_path / "ckpt", scale=scale, **SHAPE)
    rows = survey_rows(ckpt, tmp_path / "out")
    model = load(ckpt)
    for i, hw in enumerate(model.heads()):
        p = hw.to_head().profile()
        got = [rows[c][i] for c in ("a", "b", "c", "d")]
        np.testing.assert_allclose(got, list(p), rtol=1e-9, atol=1e-12)


def test_unit_scale_is_exact_and_shared_with_head() -> None:
    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((2, 3, 4, 10))
    s = unit_scale(Q)
    assert np.all(np.log2(s) == np.round(np.log2(s)))  # powers of two: exact division
    assert np.all(np.abs(Q / s[:, None, None]) < 1)
    unit = layer_spectra(Q / s[:, None, None], K / unit_scale(K)[:, None, None],
                         np.arange(3))
    back = unit.scaled(s, unit_scale(K))
    direct = layer_spectra(Q, K, np.arange(3))
    for name in ("eig_S", "norm_sq", "sv_T", "abs_eig_L", "trace"):
        np.testing.assert_array_equal(getattr(back, name), getattr(direct, name))
    h = qk.Head(1e300 * Q[0], 1e300 * K[0])
    assert h._scales == (float(unit_scale(1e300 * Q[0])), float(unit_scale(1e300 * K[0])))
    np.testing.assert_allclose(list(h.profile()), list(qk.Head(Q[0], K[0]).profile()),
                               rtol=1e-12)


# --------------------------------------------------------------------------- the API


@pytest.mark.parametrize("bad", [
    np.eye(3) * (1 + 1j),                                            # complex
    np.array([["1", "0"], ["0", "1"]]),                              # numeric strings
    [["1", "0"], ["0", "1"]],
    np.ma.masked_array(np.eye(2), mask=[[False, True], [False, False]]),  # a masked entry
    np.array([[1.0, "a"], [0.0, 1.0]], dtype=object),
    np.array([[1.0, 2j], [0.0, 1.0]], dtype=object),
    np.array([[b"1", b"0"], [b"0", b"1"]]),
    np.array([[1.0, "0"], [0.0, 1.0]], dtype=object),               # a numeric string
    np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]").reshape(1, 2).repeat(2, 0),
    np.array([[1, 0], [0, 1]], dtype="timedelta64[s]"),             # numpy casts these
])
def test_the_api_refuses_what_is_not_a_real_array(bad: object) -> None:
    for call in (qk.signature, qk.profile, qk.energies, qk.parts):
        with pytest.raises(NotRealError):
            call(bad)  # type: ignore[arg-type]
    with pytest.raises(QKFormsError):
        qk.Head(bad, bad)  # type: ignore[arg-type]


def test_complex_input_is_an_error_not_a_warning() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's ComplexWarning would be an error too
        with pytest.raises(NotRealError, match="complex"):
            qk.signature(np.eye(3) * (1 + 1e-3j))


def test_the_api_still_takes_plain_real_input() -> None:
    assert qk.signature([[1, 0], [0, -1]]) == qk.Signature(1, 1, 0)
    assert qk.signature(np.ma.masked_array(np.eye(2))) == qk.Signature(2, 0, 0)  # no mask
    assert qk.signature(np.array([[1, 0], [0, 1]], dtype=object)) == qk.Signature(2, 0, 0)
    assert qk.signature(np.eye(2, dtype=np.float32)) == qk.Signature(2, 0, 0)
    with pytest.raises(NonFiniteError):
        qk.signature([[np.nan, 0], [0, 1]])


def test_theta_distance_of_a_huge_finite_point_is_finite() -> None:
    d = qk.theta_distance([1e300, 0.0, 0.0, 0.0])
    assert np.isfinite(d) and d == pytest.approx(1e300, rel=1e-12)
    d = qk.theta_distance([-1e300, 1e300, 0.0, 0.0])
    assert d == pytest.approx(np.sqrt(2) * 1e300, rel=1e-12)
    assert qk.theta_distance([0.0, 1.0, 0.0, 0.0]) == pytest.approx(np.sqrt(0.5))
    with pytest.raises(NotRealError):
        qk.theta_distance(["1", "0", "0", "0"])
    with pytest.raises(NonFiniteError):
        qk.theta_distance([np.inf, 0, 0, 0])
