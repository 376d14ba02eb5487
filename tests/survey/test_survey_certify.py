"""``qkforms survey --certify``: interval columns, manifest, summary, certified tables."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pq = pytest.importorskip("pyarrow.parquet")

from qkforms.cli import main  # noqa: E402
from qkforms.exact import CERTIFIED_STATS, enclose  # noqa: E402
from qkforms.survey.schema import CERTIFY_COLUMNS, HEADS_COLUMNS  # noqa: E402
from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint  # noqa: E402
from qkforms.tolerances import NEAR_THETA  # noqa: E402


def test_smollm2_and_minilm_certified_with_tables(tmp_path: Path) -> None:
    """The issue's command on one layer of each model: columns, widths, tables."""
    import qkforms.models as qm

    out = tmp_path / "out"
    assert main(["survey", "smollm2", "minilm", "--certify", "--layers", "0",
                 "--out", str(out)]) == 0
    heads = pq.read_table(out / "heads.parquet")
    assert tuple(heads.column_names) == HEADS_COLUMNS
    rows = heads.to_pylist()
    assert len(rows) == 9 + 12
    for r in rows:
        assert r["certify_method"] == "rump"
        for stat in CERTIFIED_STATS:
            lo, hi = r[f"{stat}_lo"], r[f"{stat}_hi"]
            assert lo <= hi and hi - lo <= 1e-10
            # the float survey value is within rounding of the certified interval
            assert lo - 1e-12 <= r[stat] <= hi + 1e-12
    # the intervals are those of qkforms.exact.enclose on the decoded weights
    lw = next(iter(qm.load("minilm").layers()))
    enc = enclose(lw.W_Q[3], lw.W_K[lw.kv_index[3]])
    r = [r for r in rows if r["model"].startswith("sentence") and r["head"] == 3][0]
    assert (r["b_lo"], r["b_hi"]) == (enc.b.lo, enc.b.hi)
    man = json.loads((out / "manifest.json").read_text())
    assert man["options"]["certify"] is True and man["options"]["certify_method"] == "auto"
    assert man["certified_enclosures"].startswith("<stat>_lo <= true value <= <stat>_hi")
    assert all(m["timings"]["certify_s"] > 0 for m in man["models"])
    summary = (out / "summary.md").read_text()
    assert f"| certainly within {NEAR_THETA:g} of Θ |" in summary
    cert = list(csv_rows(out / "stats" / "certified.csv"))
    assert [c["model"] for c in cert][-1] == "ALL"
    pooled = cert[-1]
    assert int(pooled["heads_certified"]) == 21
    near = sum(r["theta_dist_hi"] <= NEAR_THETA for r in rows)
    undecided = sum(r["theta_dist_lo"] <= NEAR_THETA < r["theta_dist_hi"] for r in rows)
    assert int(pooled["near_theta_yes"]) == near
    assert int(pooled["near_theta_undecided"]) == undecided
    assert "Certified decisions" in (out / "stats" / "observations.md").read_text()


def csv_rows(path: Path):
    import csv

    with open(path, newline="") as fh:
        yield from csv.DictReader(fh)


def test_without_certify_the_columns_are_null(tmp_path: Path) -> None:
    ckpt = write_llama_checkpoint(tmp_path / "ckpt", n_layers=1, N=24, n=3, n_q=2, n_kv=1)
    out = tmp_path / "out"
    assert main(["survey", str(ckpt), "--out", str(out), "--no-stats"]) == 0
    heads = pq.read_table(out / "heads.parquet").to_pylist()
    assert all(r[c] is None for r in heads for c in CERTIFY_COLUMNS)


def test_certify_fold_norm_and_resume_fingerprint(tmp_path: Path, capsys) -> None:
    """--fold-norm certifies the folded weights; resuming needs the same --certify."""
    ckpt = write_llama_checkpoint(tmp_path / "ckpt", n_layers=2, N=24, n=3, n_q=2, n_kv=1,
                                  norms=True)
    out = tmp_path / "out"
    assert main(["survey", str(ckpt), "--out", str(out), "--fold-norm", "--certify",
                 "--no-stats"]) == 0
    heads = pq.read_table(out / "heads.parquet").to_pylist()
    for r in heads:
        assert all(r[f"{s}_lo"] - 1e-12 <= r[s] <= r[f"{s}_hi"] + 1e-12
                   for s in ("a", "b", "c", "d", "theta_dist"))
    assert main(["survey", str(ckpt), "--out", str(out), "--fold-norm", "--resume",
                 "--no-stats"]) != 0
    assert "differs in options" in capsys.readouterr().err


def test_certify_method_charpoly(tmp_path: Path) -> None:
    ckpt = write_llama_checkpoint(tmp_path / "ckpt", n_layers=1, N=16, n=2, n_q=2, n_kv=1)
    out = tmp_path / "out"
    assert main(["survey", str(ckpt), "--out", str(out), "--certify", "--certify-method",
                 "charpoly", "--no-stats"]) == 0
    heads = pq.read_table(out / "heads.parquet").to_pylist()
    assert [r["certify_method"] for r in heads] == ["charpoly", "charpoly"]
    widths = np.array([r["pairing_hi"] - r["pairing_lo"] for r in heads])
    assert np.all(widths < 1e-14)
