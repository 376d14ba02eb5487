"""Faithfulness: the loaded heads reproduce the model's own attention scores.

For every Hugging Face layout a tiny random ``transformers`` model is saved with
``save_pretrained(safe_serialization=True)`` and loaded with :func:`qkforms.models.load`.
The model is then run in float64 and the queries/keys it actually multiplies are
captured (tests/models/tiny.py). Per (layer, query head) the homogenized form of
Proposition 3,

    L_hat = [[W_K^T W_Q, W_K^T b_Q], [b_K^T W_Q, b_K^T b_Q]],

must give ``(x_j, 1)^T L_hat (x_k, 1) / sqrt(n)`` equal to the model's pre-softmax score
``scale * <q_k, k_j>`` for every query ``k`` and key ``j``, to float64 rounding (RoPE
models: all tokens at the same position, i.e. relative displacement 0).
"""

from __future__ import annotations

import numpy as np
import pytest
import tiny

import qkforms.models as qm
from qkforms.errors import UnsafeFormatError

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ARCHS = list(tiny.TINY_CONFIGS)

EXPECTED = {  # (n_q, n_kv, n, N, positional, has_qk_bias) from the configs in tiny.py
    "gpt2": (4, 4, 6, 24, "absolute", True),
    "opt": (4, 4, 6, 24, "absolute", True),
    "bloom": (4, 4, 6, 24, "alibi", True),
    "gpt_neox": (4, 4, 8, 32, "rope", True),
    "llama": (6, 2, 16, 48, "rope", True),
    "mistral": (4, 2, 16, 48, "rope", False),
    "qwen2": (4, 1, 8, 32, "rope", True),
    "bert": (4, 4, 6, 24, "absolute", True),
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[object, str]]:
    out = {}
    for arch in ARCHS:
        model = tiny.tiny_hf_model(arch, seed=ARCHS.index(arch))
        path = str(tmp_path_factory.mktemp(arch))
        model.save_pretrained(path, safe_serialization=True)
        out[arch] = (model, path)
    return out


def _input_ids(seed: int) -> object:
    return torch.randint(0, 64, (1, 9), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("arch", ARCHS)
def test_info_matches_config(arch: str, saved: dict) -> None:
    _, path = saved[arch]
    info = qm.load(path).info
    n_q, n_kv, n, N, positional, bias = EXPECTED[arch]
    assert (info.architecture, info.n_layers) == (arch, 2)
    assert (info.n_q, info.n_kv, info.n, info.N) == (n_q, n_kv, n, N)
    assert (info.positional, info.has_qk_bias) == (positional, bias)
    assert info.causal == (arch != "bert")
    assert info.dtype == "float64"
    if arch == "gpt_neox":
        assert info.rotary_fraction == 0.25
    assert all(len(f.sha256) == 64 for f in info.files)


CASES = [(a, None) for a in ARCHS if a not in tiny.ROPE_ARCHS]
CASES += [(a, p) for a in ARCHS if a in tiny.ROPE_ARCHS for p in (0, 3)]


@pytest.mark.parametrize(("arch", "position"), CASES)
def test_scores_reproduce_model(arch: str, position: int | None, saved: dict) -> None:
    """Pre-softmax scores; RoPE models with every token at the same ``position``.

    At position 0 the rotation is the identity and agreement is to float64 rounding.
    At an equal nonzero position the rotations of q and k cancel mathematically, but
    transformers computes its cos/sin tables in float32, so the rotation is orthogonal
    only to ~1e-7; the tolerance there reflects the model's own table, not the loader.
    """
    model, path = saved[arch]
    tol = 1e-12 if not position else 1e-6
    captured = tiny.capture_attention(model, _input_ids(7), position=position)
    loaded = qm.load(path)
    layers = list(loaded.layers())
    assert len(layers) == len(captured) == 2
    from transformers.models.llama.modeling_llama import repeat_kv

    checked = 0
    for lw, cap in zip(layers, captured, strict=True):
        n = lw.W_Q.shape[1]
        # the model's own expansion of key heads to query heads
        keys = repeat_kv(torch.from_numpy(cap.k)[None], cap.q.shape[0] // cap.k.shape[0])[0]
        X_hat = np.hstack([cap.x, np.ones((cap.x.shape[0], 1))])
        for hw in lw.heads():
            model_scores = cap.scaling * cap.q[hw.head] @ keys[hw.head].numpy().T
            ours = (X_hat @ hw.homogenized() @ X_hat.T).T / np.sqrt(n)  # [query, key]
            scale = np.abs(model_scores).max()
            assert scale > 1.0  # a real, non-degenerate score
            np.testing.assert_allclose(ours, model_scores, rtol=0, atol=tol * scale)
            checked += 1
    assert checked == 2 * EXPECTED[arch][0]


@pytest.mark.parametrize("arch", ARCHS)
def test_projections_reproduce_model(arch: str, saved: dict) -> None:
    """At position 0 (no rotation) each head's q and k are the affine maps themselves."""
    model, path = saved[arch]
    position = 0 if arch in tiny.ROPE_ARCHS else None
    captured = tiny.capture_attention(model, _input_ids(8), position=position)
    for lw, cap in zip(qm.load(path).layers(), captured, strict=True):
        n = lw.W_Q.shape[1]
        # OPT scales q inside the module and passes scale 1; others pass 1/sqrt(n)
        q_unscaled = cap.q * cap.scaling * np.sqrt(n)
        for h in range(lw.n_q):
            hw = lw.head(h)
            b_Q = 0 if hw.b_Q is None else hw.b_Q
            np.testing.assert_allclose(cap.x @ hw.W_Q.T + b_Q, q_unscaled[h], rtol=0,
                                       atol=1e-12 * np.abs(q_unscaled[h]).max())
        for g in range(lw.W_K.shape[0]):
            b_K = 0 if lw.b_K is None else lw.b_K[g]
            np.testing.assert_allclose(cap.x @ lw.W_K[g].T + b_K, cap.k[g], rtol=0,
                                       atol=1e-12 * np.abs(cap.k[g]).max())
        assert lw.kv_index.tolist() == [h // (lw.n_q // lw.W_K.shape[0])
                                        for h in range(lw.n_q)]


@pytest.mark.parametrize("arch", ["llama", "bert"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_decodes_exactly(arch: str, dtype: str, tmp_path) -> None:
    model = tiny.tiny_hf_model(arch, seed=3).to(getattr(torch, dtype))
    model.save_pretrained(str(tmp_path), safe_serialization=True)
    loaded = qm.load(str(tmp_path))
    assert loaded.info.dtype == dtype
    state = model.state_dict()
    for layer in loaded.layers():
        names = loaded.tensor_names(layer.layer)
        want_q = state[names["q"]].double().numpy()
        want_k = state[names["k"]].double().numpy()
        assert np.array_equal(layer.W_Q.reshape(want_q.shape), want_q)
        assert np.array_equal(layer.W_K.reshape(want_k.shape), want_k)
        want_b = state[names["q_bias"]].double().numpy()
        assert np.array_equal(layer.b_Q.reshape(-1), want_b)
        # the half-precision values are genuinely not float32-only values
        assert np.unique(want_q).size > 100


def test_sharded_checkpoint_equals_single(tmp_path, saved: dict) -> None:
    model, single = saved["llama"]
    sharded = tmp_path / "sharded"
    model.save_pretrained(str(sharded), safe_serialization=True, max_shard_size="20KB")
    assert (sharded / "model.safetensors.index.json").exists()
    a, b = qm.load(single), qm.load(str(sharded))
    assert len(b.info.files) > 3
    for la, lb in zip(a.layers(), b.layers(), strict=True):
        assert np.array_equal(la.W_Q, lb.W_Q) and np.array_equal(la.W_K, lb.W_K)
        assert np.array_equal(la.b_Q, lb.b_Q) and np.array_equal(la.b_K, lb.b_K)


def test_pickle_opt_in_matches_safetensors(tmp_path, saved: dict) -> None:
    model, path = saved["gpt2"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    model.config.to_json_file(str(bin_dir / "config.json"))
    torch.save(model.state_dict(), str(bin_dir / "pytorch_model.bin"))
    with pytest.raises(UnsafeFormatError, match="allow_pickle=True"):
        qm.load(str(bin_dir))
    with pytest.raises(UnsafeFormatError):
        qm.load(str(bin_dir / "pytorch_model.bin"))
    got = qm.load(str(bin_dir), allow_pickle=True)
    assert got.info.format == "pickle"
    for la, lb in zip(qm.load(path).layers(), got.layers(), strict=True):
        assert np.array_equal(la.W_Q, lb.W_Q) and np.array_equal(la.b_K, lb.b_K)
