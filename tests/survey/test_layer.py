"""Issue 22: the survey measures every head; a head outside Theorem 3's hypotheses is data.

Each family of heads (dead dimensions from zero gains, duplicated or zero rows,
``W_K = W_Q``, ``W_K = -W_Q``, a rank-deficient ``W_Q``, heads near a degenerate one) is
surveyed with the default float route, ``--certify`` and ``--exact``, and compared with
references computed independently of the Gram engine and of :mod:`qkforms.exact.inertia`:
the signature by Descartes' rule on the dense ``N x N`` characteristic polynomial
(``method="dense"``), the ranks by sympy, the profile from the dense form ``L``.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import sympy

import qkforms as qk
from qkforms import exact
from qkforms.survey.layer import LayerInputs, LayerOptions, process_layer

N, n = 12, 4


def _ints(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Small integer-valued floats: sums and multiples of rows stay exact."""
    return rng.integers(-4, 5, size=shape).astype(np.float64)


def _families() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(22)
    Q, K = _ints(rng, (n, N)), _ints(rng, (n, N))
    fam: dict[str, tuple[np.ndarray, np.ndarray]] = {"generic": (Q, K)}
    q = Q.copy()
    q[[1, 3]] = 0.0  # zero query gains on dimensions 1 and 3
    fam["zero q gains"] = (q, K)
    k = K.copy()
    k[2] = 0.0
    fam["zero k gain"] = (Q, k)
    fam["zero gains on both sides"] = (q, k)
    d = Q.copy()
    d[1] = d[0]  # a duplicated query row
    fam["duplicated row"] = (d, K)
    fam["W_K = W_Q"] = (Q, Q.copy())
    fam["W_K = -W_Q"] = (Q, -Q)
    r = Q.copy()
    r[3] = r[0] + r[1]  # rank-deficient W_Q, exactly
    fam["rank-deficient W_Q"] = (r, K)
    s = np.zeros((n, N))
    s[:2] = Q[:2]
    fam["half the rows zero, tied"] = (s, s.copy())
    fam["one dimension left"] = (np.vstack([Q[:1], np.zeros((n - 1, N))]), K)
    return fam


FAMILIES = _families()


def _ranks(W_Q: np.ndarray, W_K: np.ndarray) -> tuple[int, int, int]:
    """(n_live, rank of [W_K; W_Q], rank of the live pair) by sympy, exactly."""
    live = [i for i in range(n) if W_Q[i].any() and W_K[i].any()]
    M = sympy.Matrix(np.vstack([W_K, W_Q]).astype(int).tolist())
    Ml = sympy.Matrix(np.vstack([W_K[live], W_Q[live]]).astype(int).tolist()) if live else None
    return len(live), M.rank(), (Ml.rank() if Ml is not None else 0)


def _survey(W_Q: np.ndarray, W_K: np.ndarray, exact: bool = False,
            certify: bool = False) -> dict:
    lw = SimpleNamespace(layer=0, W_Q=W_Q[None], W_K=W_K[None], kv_index=np.array([0]))
    res = process_layer(lw, SimpleNamespace(N=N, n=n), LayerInputs("t"),
                        LayerOptions(exact=exact, certify=certify))
    return res.heads.to_pylist()[0]


@pytest.mark.parametrize("name", list(FAMILIES))
@pytest.mark.parametrize("mode", ["float", "certify", "exact"])
def test_every_family_is_measured_and_matches_dense_references(name: str, mode: str) -> None:
    W_Q, W_K = FAMILIES[name]
    row = _survey(W_Q, W_K, exact=mode == "exact", certify=mode == "certify")
    L = W_K.T @ W_Q
    ref = exact.head_signature(W_Q, W_K, method="dense")  # N x N charpoly, Descartes
    m, rank_M, rank_live = _ranks(W_Q, W_K)
    assert row["n_live"] == m
    if not L.any():
        assert row["status"] == "zero_form" and row["a"] is None
    else:
        assert row["status"] == "ok" and row["error"] is None  # never failed
        p = qk.profile(L)
        got = (row["a"], row["b"], row["c"], row["d"])
        assert got == pytest.approx(tuple(p), abs=1e-12)
        assert row["theta_dist"] == pytest.approx(qk.theta_distance(p), abs=1e-12)
    sig = (row["n_pos"], row["n_neg"], row["n_zero"])
    if mode == "exact":
        assert row["signature_by"] == "exact" and sig == tuple(ref)
        assert (row["stacked_rank"], row["live_rank"]) == (rank_M, rank_live)
    elif row["signature_by"] is None:  # undecided: no count is reported as a fact
        assert sig == (None, None, None) and row["n_uncertain"] >= 1
        assert row["signature_margin"] <= 1
    else:  # decided: it must be right
        assert sig == tuple(ref), (name, mode, sig, tuple(ref))
    assert row["surjective"] in (None, rank_M == 2 * n)
    expected = ("thm3" if rank_M == 2 * n else
                "thm3-live" if m < n and rank_live == 2 * m else "none")
    assert row["prediction"] in (None, expected)
    if mode == "exact":
        assert row["prediction"] == expected
        assert row["prediction_met"] is (None if expected == "none" else True)
    if mode == "exact" and expected == "thm3-live":
        assert tuple(ref) == (m, m, N - 2 * m)  # Theorem 3 for the live part


def test_dead_dimensions_are_decided_in_float() -> None:
    """Zero gains are exact zeros: the live pair decides the signature without --exact."""
    for name in ("zero q gains", "zero k gain", "zero gains on both sides", "generic"):
        row = _survey(*FAMILIES[name])
        assert row["signature_by"] == "float", name
        assert row["prediction"] in ("thm3", "thm3-live") and row["prediction_met"] is True
    row = _survey(*FAMILIES["zero q gains"])
    assert (row["n_live"], row["surjective"], row["live_rank"]) == (2, False, 4)
    assert (row["n_pos"], row["n_neg"], row["n_zero"]) == (2, 2, 8)


def test_tied_heads_are_undecided_in_float_and_decided_exactly() -> None:
    for name, want in (("W_K = W_Q", (4, 0, 8)), ("W_K = -W_Q", (0, 4, 8))):
        row = _survey(*FAMILIES[name])
        assert row["signature_by"] is None and row["n_uncertain"] == 4
        assert row["prediction"] is None  # the ranks are not decided in float either
        ex = _survey(*FAMILIES[name], exact=True)
        assert (ex["n_pos"], ex["n_neg"], ex["n_zero"]) == want
        assert ex["prediction"] == "none" and ex["surjective"] is False
        # --certify isolates the exact zero eigenvalues: decided too, rigorously
        ce = _survey(*FAMILIES[name], certify=True)
        assert ce["signature_by"] == "certified"
        assert (ce["n_pos"], ce["n_neg"], ce["n_zero"]) == want


@pytest.mark.parametrize("seed", range(6))
def test_near_degenerate_family_is_never_reported_wrong(seed: int) -> None:
    """W_K = C W_Q + eps noise: a relative threshold of 1e-9 miscounts these heads."""
    rng = np.random.default_rng(seed)
    Q, C = rng.standard_normal((n, N)), rng.standard_normal((n, n))
    for eps, decided in ((1e-4, True), (1e-8, False)):
        K = C @ Q + eps * rng.standard_normal((n, N))
        truth = exact.head_signature(Q, K, method="dense")
        assert tuple(truth) == (n, n, N - 2 * n)  # onto: Theorem 3
        head = qk.Head(Q, K)
        d = head.signature_decision()
        assert d.decided is decided
        if d.decided:
            assert tuple(d.signature) == tuple(truth)
        assert head.signature() == truth  # the core: float if decided, exact otherwise
        row = _survey(Q, K)
        got = (row["n_pos"], row["n_neg"], row["n_zero"])
        assert got == (tuple(truth) if decided else (None, None, None))
        assert (row["signature_margin"] > 1) is decided


def test_antisymmetric_form_has_a_profile() -> None:
    """L != 0 with S = 0 (antisymmetric): profile (1, 0, 0, 0), no pairing, not failed."""
    e = np.eye(N)
    W_Q = np.vstack([e[1], -e[0], e[3], -e[2]])  # L = e0 e1^T - e1 e0^T + e2 e3^T - e3 e2^T
    W_K = np.vstack([e[0], e[1], e[2], e[3]])
    L = W_K.T @ W_Q
    assert np.allclose(L, -L.T) and L.any()
    row = _survey(W_Q, W_K, exact=True)
    assert row["status"] == "ok"
    assert (row["a"], row["b"], row["c"], row["d"]) == pytest.approx((1, 0, 0, 0))
    assert row["pairing"] is None and row["spectral_type"] is None
    assert (row["n_pos"], row["n_neg"], row["n_zero"]) == (0, 0, N)


def test_exact_handles_large_rank_deficient_heads_fast_enough() -> None:
    """n = 64, N = 160: tied and dead heads decided exactly (the issue: seconds at 256)."""
    import time

    rng = np.random.default_rng(5)
    Q = rng.standard_normal((64, 160)).astype(np.float32).astype(np.float64)
    K = rng.standard_normal((64, 160)).astype(np.float32).astype(np.float64)
    Qd = Q.copy()
    Qd[::5] = 0.0
    for W_Q, W_K, want in ((Q, Q, (64, 0, 96)), (Q, -Q, (0, 64, 96)),
                           (Qd, K, (51, 51, 58))):
        t = time.perf_counter()
        r = exact.head_inertia(W_Q, W_K)
        assert tuple(r.signature) == want
        assert time.perf_counter() - t < 60  # generous: a hang would be minutes
    # cross-check one against Descartes on the 2n x 2n characteristic polynomial
    assert exact.head_signature(Qd, K, method="charpoly") == (51, 51, 58)


def test_observation1_and_summary_tell_the_whole_story(tmp_path: Path) -> None:
    """A layer of the families: the counts separate surjective, live-part and other heads."""
    from qkforms.stats import observations
    from qkforms.survey.summary import write_summary

    names = list(FAMILIES)
    W_Q = np.stack([FAMILIES[k][0] for k in names])
    W_K = np.stack([FAMILIES[k][1] for k in names])
    lw = SimpleNamespace(layer=0, W_Q=W_Q, W_K=W_K, kv_index=np.arange(len(names)))
    res = process_layer(lw, SimpleNamespace(N=N, n=n), LayerInputs("fam"), LayerOptions(exact=True))
    entry = {"model": "fam", "architecture": "test", "n_layers": 1, "n_q": len(names),
             "n_kv": len(names), "N": N, "n": n, "positional": "none", "dtype": "float64",
             "layers": [0]}
    text = write_summary(tmp_path / "s.md", res.heads, {"models": [entry]})
    rows = res.heads.to_pylist()
    kinds = {r["prediction"] for r in rows}
    assert kinds == {"thm3", "thm3-live", "none"}
    n_live = sum(r["prediction"] == "thm3-live" for r in rows if r["status"] == "ok")
    n_none = sum(r["prediction"] == "none" for r in rows if r["status"] == "ok")
    assert f"met / not met | {n_live} / 0 |" in text
    assert f"| no prediction (neither onto) | {n_none} |" in text
    assert "| contradictions of Theorem 3 | 0 |" in text
    heads = {c: res.heads.column(c).to_pylist() for c in res.heads.column_names}
    spectra = {c: res.spectra.column(c).to_pylist() for c in res.spectra.column_names}
    t = observations(heads, spectra, n_boot=0, fits=False, baseline=False)
    row = t["observation1_balance"].row(0)
    assert row["thm3_live_met"] == n_live and row["no_prediction"] == n_none
    assert row["decided_exact"] == row["ok"] and row["contradictions"] == 0
    assert row["thm3_met"] == sum(r["prediction"] == "thm3" for r in rows)
    json.dumps(row, default=str)  # plain values


# ----------------------------------------------------------- checkpoints on disk


def test_hf_checkpoint_with_zero_norm_gains_torch_free(tmp_path: Path) -> None:
    """A safetensors checkpoint whose norm gains are partly zero, surveyed with --fold-norm:
    zero residual gains zero columns of every map (rank <= nonzero gains < 2n), and every
    head is measured; --exact gives the dense reference's signature."""
    import pyarrow.parquet as pq

    import qkforms.models as qm
    from qkforms.cli import main
    from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint

    d = write_llama_checkpoint(tmp_path / "ck", n_layers=2, N=24, n=4, n_q=2, n_kv=1,
                               dtype="F32", seed=3, norms=True)
    # zero all but 6 of the 24 gains of layer 1's input norm: rank <= 6 < 2n = 8
    path = d / "model.safetensors"
    raw = bytearray(path.read_bytes())
    size = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + size])
    info = header["model.layers.1.input_layernorm.weight"]
    start, end = (8 + size + o for o in info["data_offsets"])
    gains = np.frombuffer(bytes(raw[start:end]), dtype="<f4").copy()
    gains[6:] = 0.0
    raw[start:end] = gains.astype("<f4").tobytes()
    path.write_bytes(bytes(raw))
    out = tmp_path / "out"
    assert main(["survey", str(d), "--out", str(out), "--fold-norm", "--exact", "--no-stats",
                 "--no-progress"]) == 0
    rows = pq.read_table(out / "heads.parquet").to_pylist()
    assert all(r["status"] == "ok" for r in rows)
    model = qm.load(str(d), checksum=False)
    for r in rows:
        hw = model.layer(r["layer"]).head(r["head"])
        g = (np.asarray(model.norm_weight(0), dtype=np.float64) if r["layer"] == 0
             else gains.astype(np.float64))
        Q, K = hw.W_Q * g, hw.W_K * g
        ref = exact.head_signature(Q, K, method="dense")
        assert (r["n_pos"], r["n_neg"], r["n_zero"]) == tuple(ref)
        assert (r["a"], r["d"]) == pytest.approx(tuple(qk.profile(K.T @ Q))[::3], abs=1e-10)
        if r["layer"] == 1:
            assert r["surjective"] is False and r["prediction"] == "none"
            assert r["stacked_rank"] <= 6
    text = (out / "summary.md").read_text()
    assert "| no prediction (neither onto) | 2 |" in text
    # the report's introduction says what Theorem 3 says of these heads
    from qkforms.report.build import build_report

    page = build_report(out, pngs=False, n_boot=0, fits=False).read_text(encoding="utf-8")
    assert 'id="theorem3-heads"' in page and "2 outside the theorem" in page


def test_report_lists_heads_that_are_not_ok(tmp_path: Path) -> None:
    from qkforms.cli import main
    from qkforms.report.build import build_report
    from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint

    d = write_llama_checkpoint(tmp_path / "ck", n_layers=2, N=24, n=4, n_q=2, n_kv=1,
                               seed=4, nan_heads=[(1, 0)], degenerate_heads=[(0, 1)])
    out = tmp_path / "out"
    assert main(["survey", str(d), "--out", str(out), "--no-stats", "--no-progress"]) == 0
    page = build_report(out, pngs=False, n_boot=0, fits=False).read_text(encoding="utf-8")
    assert 'id="not-ok-heads"' in page
    assert "layer 1, head 0: failed — non-finite values" in page
    assert "1 signatures undecided" in page  # W_Q = W_K, decided only by --exact
