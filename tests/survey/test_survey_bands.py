"""``qkforms survey --precision-bands``: band columns, manifest, stable-decision tables, report.

The issue's command on SmolLM2 (Q4_1) and MiniLM (float32) writes a band for every
statistic of every head; a bfloat16 checkpoint gets rigorous bands that contain the float
values; ``--fold-norm`` and ``--certify`` combine with it; a storage without a per-weight
precision is refused before any layer is computed.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

pq = pytest.importorskip("pyarrow.parquet")

from qkforms.bands import BAND_KINDS, BAND_STATS  # noqa: E402
from qkforms.cli import main  # noqa: E402
from qkforms.errors import PrecisionUnavailableError  # noqa: E402
from qkforms.survey import SurveyOptions, survey  # noqa: E402
from qkforms.survey.schema import BAND_COLUMNS, HEADS_COLUMNS  # noqa: E402
from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint  # noqa: E402
from qkforms.tolerances import NEAR_THETA  # noqa: E402


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_smollm2_and_minilm_banded(tmp_path: Path) -> None:
    """One layer of each shipped model: every head and statistic has a band."""
    out = tmp_path / "out"
    assert main(["survey", "smollm2", "minilm", "--precision-bands", "--layers", "0",
                 "--out", str(out)]) == 0
    heads = pq.read_table(out / "heads.parquet")
    assert tuple(heads.column_names) == HEADS_COLUMNS
    rows = heads.to_pylist()
    assert len(rows) == 9 + 12
    for r in rows:
        assert r["band_kind"] in BAND_KINDS
        for stat in BAND_STATS:
            lo, hi = r[f"{stat}_band_lo"], r[f"{stat}_band_hi"]
            assert lo is not None and lo <= r[stat] + 1e-12 and r[stat] - 1e-12 <= hi
    smol = [r for r in rows if "SmolLM2" in r["model"]]
    mini = [r for r in rows if "SmolLM2" not in r["model"]]
    # 4-bit blocks: half a step is ~15 % of a weight, the rigorous radius is of order 1
    assert all(r["band_kind"] == "first-order" and r["band_radius"] > 0.3 for r in smol)
    # float32: rigorous, about 1e-7 wide
    assert all(r["band_kind"] == "rigorous-float" for r in mini)
    assert max(r["a_band_hi"] - r["a_band_lo"] for r in mini) < 1e-5
    assert all(r["signature_band_stable"] for r in mini)
    man = json.loads((out / "manifest.json").read_text())
    assert man["options"]["precision_bands"] is True
    assert "first-order" in man["precision_bands"]
    assert all(m["timings"]["bands_s"] > 0 for m in man["models"])
    table = _csv(out / "stats" / "bands.csv")
    pooled = table[-1]
    assert pooled["model"] == "ALL" and int(pooled["heads_banded"]) == 21
    assert int(pooled["kind_first_order"]) == 9 and int(pooled["kind_rigorous_float"]) == 12
    stable_yes = sum(r["theta_dist_band_hi"] <= NEAR_THETA for r in rows)
    unstable = sum(r["theta_dist_band_lo"] <= NEAR_THETA < r["theta_dist_band_hi"]
                   for r in rows)
    assert int(pooled["near_theta_stable_yes"]) == stable_yes
    assert int(pooled["near_theta_unstable"]) == unstable
    assert int(pooled["signature_stable"]) == sum(bool(r["signature_band_stable"])
                                                 for r in rows)
    assert "storage-precision bands" in (out / "stats" / "observations.md").read_text()


def test_bf16_bands_with_certify_and_fold_norm(tmp_path: Path) -> None:
    import qkforms.models as qm

    d = write_llama_checkpoint(tmp_path / "ck", n_layers=2, N=24, n=3, n_q=2, n_kv=1,
                               norms=True)
    for extra in ({}, {"certify": True}, {"fold_norm": True}):
        out = tmp_path / ("out" + "".join(extra))
        survey([qm.load(d)], SurveyOptions(out=out, progress=False, precision_bands=True,
                                           **extra))  # type: ignore[arg-type]
        rows = pq.read_table(out / "heads.parquet").to_pylist()
        want = "rigorous" if extra.get("certify") else "rigorous-float"
        assert [r["band_kind"] for r in rows] == [want] * 4
        for r in rows:
            for stat in BAND_STATS:
                assert r[f"{stat}_band_lo"] <= r[stat] <= r[f"{stat}_band_hi"]
            assert 0 < r["band_radius"] < 0.05  # bfloat16: a few 2^-9 relative


def test_without_the_option_the_band_columns_are_null(tmp_path: Path) -> None:
    import qkforms.models as qm

    d = write_llama_checkpoint(tmp_path / "ck", n_layers=1, N=16, n=2, n_q=2, n_kv=1)
    out = tmp_path / "out"
    man = survey([qm.load(d)], SurveyOptions(out=out, progress=False))
    rows = pq.read_table(out / "heads.parquet").to_pylist()
    assert all(r[c] is None for r in rows for c in BAND_COLUMNS)
    assert man["precision_bands"] is None
    assert "precision_bands" not in man["options"] or not man["options"]["precision_bands"]


def test_resume_needs_the_same_band_option(tmp_path: Path) -> None:
    import qkforms.models as qm
    from qkforms.errors import QKFormsError

    d = write_llama_checkpoint(tmp_path / "ck", n_layers=2, N=16, n=2, n_q=2, n_kv=1)
    out = tmp_path / "out"
    survey([qm.load(d)], SurveyOptions(out=out, progress=False, precision_bands=True))
    with pytest.raises(QKFormsError, match="differs in options"):
        survey([qm.load(d)], SurveyOptions(out=out, progress=False, resume=True))
    survey([qm.load(d)], SurveyOptions(out=out, progress=False, resume=True,
                                       precision_bands=True))


def test_vector_codebook_refused(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    import qkforms.models as qm

    N, n = 256, 8
    path = str(tmp_path / "iq.gguf")
    w = gguf.GGUFWriter(path, "llama")
    w.add_block_count(1)
    w.add_context_length(32)
    w.add_embedding_length(N)
    w.add_feed_forward_length(2 * N)
    w.add_head_count(2)
    w.add_head_count_kv(2)
    w.add_key_length(n)
    w.add_value_length(n)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-6)
    qtype = gguf.GGMLQuantizationType.IQ2_XXS
    _, size = gguf.GGML_QUANT_SIZES[qtype]
    raw = np.zeros((2 * n, size), dtype=np.uint8)
    raw[:, 0:2] = np.array([0.01], dtype=np.float16).view(np.uint8)
    w.add_tensor("blk.0.attn_q.weight", raw, raw_dtype=qtype)
    rng = np.random.default_rng(0)
    w.add_tensor("blk.0.attn_k.weight", rng.standard_normal((2 * n, N)).astype(np.float32))
    w.add_tensor("blk.0.attn_v.weight", np.zeros((2 * n, N), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(PrecisionUnavailableError, match="IQ2_XXS"):
        survey([qm.load(path)], SurveyOptions(out=tmp_path / "out", progress=False,
                                              precision_bands=True))


def test_report_lists_the_heads_whose_reading_changes() -> None:
    from qkforms import Head
    from qkforms.report.bands_view import bands_section, changed_readings
    from qkforms.stats import observations
    from qkforms.stats.synthetic_rows import survey_rows

    ml = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(0)
    heads = []
    for i in range(8):
        Q = rng.standard_normal((2, 10))
        K = Q * 0.9 + 0.3 * rng.standard_normal((2, 10)) if i % 2 else rng.standard_normal((2, 10))
        heads.append(Head(Q.astype(ml.bfloat16).astype(np.float64),
                          K.astype(ml.bfloat16).astype(np.float64)))
    h, s = survey_rows("toy", heads, heads_per_layer=4, band_dtype="bfloat16")
    t = observations(h, s, n_boot=10, fits=False, baseline=False)
    hs = t["head_stats"]
    changed = changed_readings(hs)
    near = [v for v in hs["near_theta_band"]]
    assert sum(v is None for v in near) == sum("near Θ" in r["changes"] for r in changed)
    lo, hi = np.array(h["theta_dist_band_lo"]), np.array(h["theta_dist_band_hi"])
    assert sum(v is None for v in near) == int(np.sum((lo <= NEAR_THETA) & (NEAR_THETA < hi)))
    sid, _, body = bands_section(hs)
    assert sid == "bands" and f"{len(changed)} of 8 heads" in body
    row = t["bands"].row(len(t["bands"]) - 1)
    assert row["heads_banded"] == 8
    assert row["types_stable"] + row["types_unstable"] == 8
