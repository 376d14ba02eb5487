"""Faithfulness of the GGUF loader, architecture by architecture.

For every case of ``tiny.GGUF_CONFIGS`` a tiny random-initialised ``transformers`` model
is saved and converted to GGUF by **llama.cpp's own converter** (``convert_hf_to_gguf``'s
model classes, fetched from the ``llama-cpp-python`` sdist by
``scripts/fetch_llamacpp_converter.py``; see ``tests/models/llamacpp.py``; the only
change: no vocabulary is written). qkforms loads the GGUF file, and the model is run in
float64 with its tokens at positions ``0 .. T-1``. For every layer, query head, query
token ``i`` and key token ``j`` the model's own pre-softmax score must equal

    ``cap( c * f_i g_j * (x_j, 1)^T L_hat(i - j) (x_i, 1) )``

where ``L_hat(d) = W_hat_K^T Rot(d) W_hat_Q`` is built from the loaded maps (biases
included) by :func:`qkforms.survey.rope.relative_form` with the loaded RoPE facts
(``tiny.predicted_scores``), ``c``
is the loaded attention scale (``1/sqrt(n)`` unless the file says otherwise), ``f, g``
are 1 except for q/k-normalized models read with ``qk_norm="fold"`` (then the inverse
RMS / standard deviation of the model's own projections, computed here from the
``transformers`` modules), and ``cap`` is the identity except for soft-capped models.
Displacements ``i - j != 0`` make the RoPE pairing (and so the undoing of llama.cpp's
row permutation) visible; the tolerance reflects ``transformers``' float32 cos/sin
tables.
"""

from __future__ import annotations

import json

import llamacpp
import numpy as np
import pytest
import tiny

import qkforms.models as qm
from qkforms.errors import UnsupportedArchitectureError
from qkforms.models.layouts.llama import unpermute_llamacpp

pytestmark = [
    pytest.mark.torch,
    pytest.mark.skipif(llamacpp.converter_dir() is None,
                       reason="llama.cpp's converter is not fetched: run "
                              "python scripts/fetch_llamacpp_converter.py"),
]
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

CASES = list(tiny.GGUF_CONFIGS)
#: q/k-normalized cases: (kind, scope) the loader must read from the file
QK_NORM = {"qwen3": ("rms", "head"), "qwen3moe": ("rms", "head"), "gemma3": ("rms", "head"),
           "olmo2": ("rms", "all"), "stablelm-qknorm": ("layer", "head"),
           "command-r-plus": ("layer", "head")}
#: architectures whose q/k rows llama.cpp's converter permutes
PERMUTED = {"llama", "granite", "olmo"}
T = 7


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> dict:
    cache: dict[str, tuple[object, str]] = {}

    def get(case: str) -> tuple[object, str]:
        if case not in cache:
            model = tiny.tiny_hf_model(case, seed=CASES.index(case),
                                       configs=tiny.GGUF_CONFIGS)
            d = tmp_path_factory.mktemp(case)
            model.save_pretrained(str(d))
            # Gemma 3's converter sizes the embedding by the tokenizer's vocabulary
            vocab = {f"t{i}": i for i in range(model.config.vocab_size)}
            (d / "tokenizer.json").write_text(json.dumps(
                {"model": {"vocab": vocab}, "added_tokens": []}))
            out = llamacpp.convert(d, d / "model.gguf")
            cache[case] = (model, str(out))
        return cache[case]

    return get  # type: ignore[return-value]


def _hf_heads(cfg: object) -> tuple[int, int, int, int]:
    """(n_q, n_kv, n, N) from the Hugging Face config (independent of the GGUF metadata)."""
    N = getattr(cfg, "hidden_size", None) or cfg.n_embd
    n_q = getattr(cfg, "num_attention_heads", None) or cfg.n_head
    n_kv = (getattr(cfg, "num_key_value_heads", None) or getattr(cfg, "num_kv_heads", None)
            or n_q)
    n = getattr(cfg, "head_dim", None) or N // n_q
    return n_q, n_kv, n, N


@pytest.mark.parametrize("case", CASES)
def test_gguf_scores_reproduce_model(case: str, converted) -> None:
    model, path = converted(case)
    cfg = model.config
    policy = "fold" if case in QK_NORM else "refuse"
    loaded = qm.load(path, qk_norm=policy)
    info = loaded.info
    n_q, n_kv, n, N = _hf_heads(cfg)
    assert (info.architecture, info.format) == (tiny.GGUF_CONFIGS[case][2], "gguf")
    assert (info.n_layers, info.n_q, info.n_kv, info.n, info.N) == (2, n_q, n_kv, n, N)
    assert info.positional == ("absolute" if case == "gpt2" else "rope")
    if case in QK_NORM:
        assert (info.qk_norm["kind"], info.qk_norm["scope"]) == QK_NORM[case]
        assert info.qk_norm_policy == "fold"
    else:
        assert info.qk_norm is None and info.qk_norm_policy is None
    assert (info.attn_softcap is not None) == (case == "gemma2")
    ids = torch.randint(0, 64, (1, T), generator=torch.Generator().manual_seed(11))
    captured = tiny.capture_attention(model, ids)
    modules = tiny.attention_modules(model)
    softcap = info.attn_softcap
    tol = 2e-6
    checked = 0
    for lw, cap, mod in zip(loaded.layers(), captured, modules, strict=True):
        scale = info.attention_scale if info.attention_scale is not None else n ** -0.5
        assert scale == pytest.approx(cap.scaling, rel=1e-6)
        X = np.hstack([cap.x, np.ones((T, 1))])
        f = g = np.ones((T, n_q))
        if case in QK_NORM:
            kind, scope = QK_NORM[case]
            eps = getattr(cfg, "rms_norm_eps", None) if kind == "rms" else (
                getattr(cfg, "layer_norm_eps", None) or cfg.layer_norm_eps)
            assert info.qk_norm["eps"] == pytest.approx(eps, rel=1e-6)
            f = tiny.norm_factors(tiny.projection_before_norm(mod, cap.x, "q", n_q), kind,
                                  scope, eps)
            g = tiny.norm_factors(tiny.projection_before_norm(mod, cap.x, "k", n_kv), kind,
                                  scope, eps)
        for hw in lw.heads():
            # the model's keys per key head, or already expanded to the query heads (Falcon)
            k = cap.k[hw.head if cap.k.shape[0] == n_q else hw.kv_head]
            model_scores = cap.scaling * cap.q[hw.head] @ k.T          # [query, key]
            if softcap is not None:
                model_scores = softcap * np.tanh(model_scores / softcap)
            ours = tiny.predicted_scores(hw, X, scale, f, g,
                                         info if info.positional == "rope" else None)
            if softcap is not None:
                ours = softcap * np.tanh(ours / softcap)
            size = np.abs(model_scores).max()
            assert size > 0.01  # a real, non-degenerate score
            np.testing.assert_allclose(ours, model_scores, rtol=0, atol=tol * size,
                                       err_msg=f"{case} layer {lw.layer} head {hw.head}")
            if case in QK_NORM:  # L' fixes the sign of every score
                big = np.abs(model_scores) > 1e-6 * size
                assert np.array_equal(np.sign(ours[big]), np.sign(model_scores[big]))
            checked += 1
    assert checked == 2 * n_q


@pytest.mark.parametrize("case", ["llama", "granite", "olmo", "qwen2", "gemma", "command-r"])
def test_permutation_undone_exactly_where_applied(case: str, converted) -> None:
    """Rows differ from the file's exactly for the architectures the converter permutes."""
    import gguf

    _, path = converted(case)
    stored = {t.name: t for t in gguf.GGUFReader(path).tensors}
    loaded = qm.load(path)
    lw = loaded.layer(1)
    raw = gguf.quants.dequantize(np.asarray(stored["blk.1.attn_q.weight"].data),
                                 stored["blk.1.attn_q.weight"].tensor_type)
    flat = lw.W_Q.reshape(raw.shape)
    if case in PERMUTED:
        assert not np.array_equal(flat, raw)
        assert np.array_equal(flat, unpermute_llamacpp(raw, loaded.info.n_q))
    else:
        assert np.array_equal(flat, raw)
    assert loaded.info.rope_layout == ("interleaved" if case == "command-r" else "split-half")


@pytest.mark.parametrize("case", sorted(QK_NORM))
def test_qk_norm_refused_by_default(case: str, converted) -> None:
    _, path = converted(case)
    with pytest.raises(UnsupportedArchitectureError, match=r"--qk-norm fold"):
        qm.load(path)


def test_softcap_and_scale_facts(converted) -> None:
    """Gemma 2's cap and Granite's attention multiplier come from the file's metadata."""
    assert qm.load(converted("gemma2")[1]).info.attn_softcap == pytest.approx(5.0)
    assert qm.load(converted("granite")[1]).info.attention_scale == pytest.approx(0.3)
    assert qm.load(converted("phi3")[1]).info.rotary_fraction == 0.5
    assert qm.load(converted("stablelm")[1]).info.rotary_fraction == 0.25


def test_survey_records_policy_and_notes(converted, tmp_path) -> None:
    """``qkforms survey --qk-norm fold`` on a Qwen3 and a Gemma 2 GGUF: the rows are the
    statistics of L', and manifest, summary and report say what was done."""
    import argparse
    import contextlib
    import io

    import pyarrow.parquet as pq

    from qkforms.main_command import configure, run
    from qkforms.report.build import build_report

    qwen3, gemma2 = converted("qwen3")[1], converted("gemma2")[1]
    parser = argparse.ArgumentParser()
    configure(parser)
    out = tmp_path / "out"
    with contextlib.redirect_stdout(io.StringIO()):
        assert run(parser.parse_args([qwen3, gemma2, "--out", str(out), "--qk-norm", "fold",
                                      "--no-stats", "--no-progress"])) == 0
    man = json.loads((out / "manifest.json").read_text())
    assert man["options"]["qk_norm"] == "fold" and man["qk_norm"]["policy"] == "fold"
    assert "fixes the sign of every score" in man["qk_norm"]["meaning"]
    q_entry, g_entry = man["models"]
    assert q_entry["qk_norm_policy"] == "fold" and q_entry["qk_norm"]["kind"] == "rms"
    assert any("L' = (C W_K)^T" in note for note in q_entry["notes"])
    assert g_entry["attn_softcap"] == pytest.approx(5.0) and g_entry["qk_norm"] is None
    assert len(g_entry["notes"]) == 1 and g_entry["notes"][0].startswith("logit soft-capping")
    assert "--qk-norm fold" in " ".join(man["argv"])
    summary = (out / "summary.md").read_text()
    assert "q/k-normalized heads (--qk-norm fold)" in summary
    assert "strictly increasing odd map" in summary and "(cap = 5)" in summary
    # the surveyed forms are L' (folded maps), not W_K^T W_Q of the stored maps
    heads = pq.read_table(out / "heads.parquet").to_pandas()
    rows = heads[heads.model == q_entry["model"]].set_index(["layer", "head"])
    for hw in qm.load(qwen3, qk_norm="fold").heads():
        want = np.linalg.norm(hw.W_K.T @ hw.W_Q) ** 2
        assert rows.loc[(hw.layer, hw.head), "norm_sq"] == pytest.approx(want, rel=1e-9)
    page = build_report(out, pngs=False, n_boot=0, fits=False).read_text(encoding="utf-8")
    assert 'id="score-notes"' in page and "strictly increasing odd map" in page
    # the default policy refuses the Qwen3 file before any work
    with pytest.raises(UnsupportedArchitectureError, match="--qk-norm fold"):
        run(parser.parse_args([qwen3, "--out", str(tmp_path / "o2"), "--no-stats"]))
