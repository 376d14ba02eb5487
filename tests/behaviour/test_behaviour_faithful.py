"""Faithfulness of ``qkforms behaviour`` on tiny random ``transformers`` models (torch).

For every Hugging Face layout of the survey, a tiny random model (tests/models/tiny.py,
float64) is saved and scored from disk. Then, independently of the pipeline:

* the same probes are run through the in-memory model with ``output_attentions=True``
  in one batch, the score functions applied to the returned patterns, and every score
  of every head must equal the table's (the patterns the pipeline scored are the ones
  the model returns);
* where the scores are rebuilt, the rebuilt patterns match the model's to the rounding
  of its float32 softmax (``pattern_max_dev`` < 1e-6), i.e. head ``h`` of the table is
  head ``h`` of the model with the survey's key head;
* a model whose query heads are swapped is refused by the keying check.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tiny

import qkforms.models as qm
from qkforms.behaviour.probe_run import BehaviourOptions, score_model, score_source
from qkforms.behaviour.probes import Framing, make_probes, token_pool
from qkforms.behaviour.scores import SCORES
from qkforms.errors import VerificationError

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

ARCHS = list(tiny.TINY_CONFIGS)
OPTS = BehaviourOptions(sequences=3, length=12, repeat=6, rebuild=3, dtype="float64",
                        batch=2, progress=False)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[object, str]]:
    out = {}
    for arch in ARCHS:
        model = tiny.tiny_hf_model(arch, seed=ARCHS.index(arch) + 11)
        path = str(tmp_path_factory.mktemp(arch))
        model.save_pretrained(path, safe_serialization=True)
        out[arch] = (model, path)
    return out


def _probes(model: object, causal: bool) -> dict:
    cfg = model.config
    special = [getattr(cfg, k, None) for k in ("bos_token_id", "eos_token_id", "pad_token_id",
                                               "unk_token_id")]
    vocab = model.get_input_embeddings().weight.shape[0]
    pool = token_pool(None, vocab, special_ids=[s for s in special if isinstance(s, int)])
    return make_probes(pool.ids, Framing(), seed=OPTS.seed, sequences=OPTS.sequences,
                       length=OPTS.length, repeat=OPTS.repeat, causal=causal)


@pytest.mark.parametrize("arch", ARCHS)
def test_scores_are_those_of_the_models_own_patterns(arch: str, saved: dict) -> None:
    model, path = saved[arch]
    result = score_source(path, options=OPTS)
    cols = result.columns
    info = qm.load(path).info
    n_layers, n_q = info.n_layers, info.n_q
    assert len(cols["head"]) == n_layers * n_q
    assert cols["layer"] == [la for la in range(n_layers) for _ in range(n_q)]
    assert cols["head"] == list(range(n_q)) * n_layers
    assert cols["kv_head"] == [h // (n_q // info.n_kv) for h in range(n_q)] * n_layers
    probes = _probes(model, info.causal)
    assert {p: v["ids_sha256"] for p, v in result.entry["probes"].items()} == \
        {p: probes[p].digest() for p in probes}
    for name, probe in probes.items():
        ids = torch.from_numpy(probe.ids)
        with torch.no_grad():
            att = model(input_ids=ids, attention_mask=torch.ones_like(ids),
                        output_attentions=True).attentions
        for sname, score in SCORES.items():
            if score.probe != name:
                continue
            want = np.stack([score.compute(a.numpy(), probe.layout).mean(axis=0) for a in att])
            np.testing.assert_allclose(np.asarray(cols[sname]).reshape(n_layers, n_q), want,
                                       rtol=1e-10, atol=1e-12, err_msg=f"{arch} {sname}")
    if arch == "bloom":  # ALiBi: patterns scored, scores not rebuilt, keyed by weights
        assert result.entry["key_check"]["method"] == "weights"
        assert all(v is None for v in cols["pattern_max_dev"] + cols["bilinear_share"])
        assert "ALiBi" in result.entry["not_rebuilt_reason"]
    else:
        assert result.entry["key_check"]["method"] == "patterns"
        # transformers takes the softmax in float32 even for float64 models
        assert max(cols["pattern_max_dev"]) < 1e-6
        shares = np.asarray(cols["bilinear_share_row"], dtype=float)
        assert np.all(np.isfinite(shares)) and np.all(shares <= 1.0 + 1e-12)


def test_bilinear_share_is_one_for_a_head_without_biases_or_positions(saved: dict) -> None:
    """GPT-2 with its q/k biases zeroed: the score is exactly the bilinear part."""
    model, path = saved["gpt2"]
    heads = qm.load(path)
    with torch.no_grad():
        for block in model.transformer.h:
            block.attn.c_attn.bias[: 2 * heads.info.N].zero_()
    # the survey's maps come from the zeroed weights too: save and reload
    zeroed = Path(path).parent / "gpt2-zeroed"
    model.save_pretrained(str(zeroed), safe_serialization=True)
    result = score_model(model, qm.load(str(zeroed)), options=OPTS)
    np.testing.assert_allclose(result.columns["bilinear_share"], 1.0, atol=1e-10)
    np.testing.assert_allclose(result.columns["bilinear_share_row"], 1.0, atol=1e-10)


def test_swapped_query_heads_are_refused_by_the_keying_check(saved: dict) -> None:
    _model, path = saved["llama"]
    model = tiny.tiny_hf_model("llama", seed=ARCHS.index("llama") + 11)
    n = model.config.head_dim
    with torch.no_grad():
        w = model.model.layers[1].self_attn.q_proj.weight
        first, second = w[:n].clone(), w[n:2 * n].clone()
        w[:n], w[n:2 * n] = second, first
    with pytest.raises(VerificationError, match="layer 1, head 0"):
        score_model(model, qm.load(path), options=OPTS)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qkforms", *args], capture_output=True,
                          text=True, cwd=ROOT, check=False)


def test_survey_behaviour_stats_report_end_to_end(saved: dict, tmp_path: Path) -> None:
    _model, path = saved["llama"]
    out = tmp_path / "out"
    assert _run("survey", path, "--out", str(out), "--no-stats", "--no-progress").returncode == 0
    proc = _run("behaviour", path, "--out", str(out), "--dtype", "float64", "--sequences", "3",
                "--length", "12", "--repeat", "6", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "12 heads scored; keyed like heads.parquet (checked by patterns" in proc.stdout
    man = json.loads((out / "behaviour.json").read_text())
    entry = man["models"][0]
    assert entry["probes"]["repeated"]["repeat"] == 6 and man["options"]["seed"] == 0
    assert entry["files"] == json.loads((out / "manifest.json").read_text())["models"][0]["files"]
    proc = _run("stats", str(out), "--no-fits", "--bootstrap", "50")
    assert proc.returncode == 0, proc.stderr
    join = (out / "stats" / "behaviour_join.csv").read_text().splitlines()
    assert join[1].endswith(",12,12,12,")
    rope = (out / "stats" / "behaviour_rope.csv").read_text()
    assert rope.count("\n") > 1
    proc = _run("report", str(out), "--no-png")
    assert proc.returncode == 0, proc.stderr
    assert 'data-expected-count="12"' in (out / "report.html").read_text(encoding="utf-8")
    # a second run keeps nothing stale: same rows, replaced
    proc = _run("behaviour", path, "--out", str(out), "--dtype", "float64", "--sequences", "3",
                "--length", "12", "--repeat", "6", "--no-progress", "--seed", "1")
    assert proc.returncode == 0, proc.stderr
    import pyarrow.parquet as pq

    assert pq.read_table(out / "behaviour.parquet").num_rows == 12
    assert json.loads((out / "behaviour.json").read_text())["options"]["seed"] == 1
