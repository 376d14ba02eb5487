"""Bad input: every failure is a specific qkforms error, raised before anything is yielded.

All checkpoints here are written with numpy only (tests/models/tiny.py).
"""

from __future__ import annotations

import json
import os
import struct

import numpy as np
import pytest
import tiny

import qkforms.models as qm
from qkforms.errors import (
    CheckpointError,
    MissingTensorError,
    NonFiniteError,
    QKFormsError,
    UnsafeFormatError,
    UnsupportedArchitectureError,
)
from qkforms.models.safetensors import decode, read_header

SHAPE = dict(layers=3, N=16, n_q=4, n_kv=2, n=4)


def _llama_dir(tmp_path, *, seed: int = 0, bias: bool = True, mutate=None,
               config_changes: dict | None = None) -> str:
    rng = np.random.default_rng(seed)
    tensors = tiny.llama_tensors(rng, bias=bias, **SHAPE)
    if mutate is not None:
        mutate(tensors)
    config = tiny.llama_config(bias=bias, **SHAPE)
    config.update(config_changes or {})
    return tiny.write_llama_dir(str(tmp_path / "m"), tensors, config)


def test_good_synthetic_checkpoint_loads(tmp_path) -> None:
    rng = np.random.default_rng(0)
    tensors = tiny.llama_tensors(rng, bias=True, **SHAPE)
    path = tiny.write_llama_dir(str(tmp_path / "m"), tensors, tiny.llama_config(bias=True,
                                                                                **SHAPE))
    model = qm.load(path)
    lw = model.layer(2)
    want = tensors["model.layers.2.self_attn.k_proj.weight"].astype(np.float64)
    assert np.array_equal(lw.W_K.reshape(8, 16), want)
    assert np.array_equal(lw.W_Q[3], tensors["model.layers.2.self_attn.q_proj.weight"][12:16])
    assert lw.kv_index.tolist() == [0, 0, 1, 1]
    with pytest.raises(ValueError):
        lw.W_Q[0, 0, 0] = 1.0  # records are read-only
    # loading via config.json or the safetensors file itself is the same model
    for alt in ("config.json", "model.safetensors"):
        assert np.array_equal(qm.load(os.path.join(path, alt)).layer(2).W_K, lw.W_K)


def test_nonexistent_path(tmp_path) -> None:
    for source in (str(tmp_path / "nope"), "/definitely/not/here", "./missing.gguf"):
        with pytest.raises(qm.ModelNotFoundError, match="no such file") as info:
            qm.load(source)
        assert isinstance(info.value, CheckpointError)
        assert isinstance(info.value, FileNotFoundError)


@pytest.mark.torch  # huggingface_hub: only test-torch installs it
def test_hub_id_not_cached_is_a_clear_error(tmp_path, monkeypatch) -> None:
    pytest.importorskip("huggingface_hub")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(qm.ModelNotFoundError, match="download=True"):
        qm.load("some-org/some-model-that-is-not-cached")


def test_truncated_safetensors(tmp_path) -> None:
    path = _llama_dir(tmp_path)
    st = os.path.join(path, "model.safetensors")
    data = open(st, "rb").read()
    for cut in (len(data) - 5, 100, 4):
        with open(st, "wb") as f:
            f.write(data[:cut])
        with pytest.raises(CheckpointError, match="truncated"):
            qm.load(path)


def test_corrupt_safetensors_header(tmp_path) -> None:
    path = _llama_dir(tmp_path)
    st = os.path.join(path, "model.safetensors")
    data = bytearray(open(st, "rb").read())
    (n,) = struct.unpack("<Q", data[:8])
    garbled = data[:8] + b"{not json" + data[17:]
    with open(st, "wb") as f:
        f.write(garbled)
    with pytest.raises(CheckpointError, match="not JSON"):
        qm.load(path)
    huge = struct.pack("<Q", 2**62) + data[8:]
    with open(st, "wb") as f:
        f.write(huge)
    with pytest.raises(CheckpointError, match="header length"):
        qm.load(path)
    # an entry whose offsets disagree with its shape
    header = json.loads(bytes(data[8:8 + n]))
    name = "model.layers.0.self_attn.q_proj.weight"
    header[name]["shape"] = [16, 17]
    text = json.dumps(header).encode()
    with open(st, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + bytes(data[8 + n:]))
    with pytest.raises(CheckpointError, match="needs .* bytes"):
        qm.load(path)


def test_overlapping_tensors_rejected(tmp_path) -> None:
    header = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
              "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}
    text = json.dumps(header).encode()
    p = tmp_path / "x.safetensors"
    p.write_bytes(struct.pack("<Q", len(text)) + text + bytes(12))
    with pytest.raises(CheckpointError, match="overlap"):
        read_header(str(p))


def test_missing_tensor(tmp_path) -> None:
    def drop(t: dict) -> None:
        del t["model.layers.1.self_attn.k_proj.weight"]

    path = _llama_dir(tmp_path, mutate=drop)
    with pytest.raises(MissingTensorError,
                       match=r"model\.layers\.1\.self_attn\.k_proj\.weight.*model\.safetensors"):
        qm.load(path)


def test_missing_bias_when_config_says_bias(tmp_path) -> None:
    def drop(t: dict) -> None:
        del t["model.layers.2.self_attn.q_proj.bias"]

    with pytest.raises(MissingTensorError, match=r"layers\.2\.self_attn\.q_proj\.bias"):
        qm.load(_llama_dir(tmp_path, mutate=drop))


def test_no_layer_tensors_at_all(tmp_path) -> None:
    path = _llama_dir(tmp_path, config_changes={"model_type": "gpt2", "n_embd": 16,
                                                "n_head": 4, "n_layer": 3})
    with pytest.raises(MissingTensorError, match=r"h\.0\.attn\.c_attn\.weight"):
        qm.load(path)


def test_shape_inconsistent_with_config(tmp_path) -> None:
    path = _llama_dir(tmp_path, config_changes={"num_key_value_heads": 4})
    with pytest.raises(CheckpointError, match=r"k_proj\.weight.*\(8, 16\).*implies \(16, 16\)"):
        qm.load(path)
    path2 = _llama_dir(tmp_path / "b", config_changes={"head_dim": 2})
    with pytest.raises(CheckpointError, match="implies"):
        qm.load(path2)


def test_gqa_groups_must_divide(tmp_path) -> None:
    path = _llama_dir(tmp_path, config_changes={"num_key_value_heads": 3})
    with pytest.raises(CheckpointError, match="cannot be grouped"):
        qm.load(path)


@pytest.mark.parametrize(("tensor", "row", "value", "expect"), [
    ("q_proj.weight", 9, np.nan, r"layer 1, query head 2 \(key head 1\): W_Q"),
    ("k_proj.weight", 5, np.inf, r"layer 1, key head 1 \(used by query heads \[2, 3\]\): W_K"),
    ("q_proj.bias", 0, -np.inf, r"layer 1, query head 0 \(key head 0\): b_Q"),
])
def test_non_finite_weights(tmp_path, tensor: str, row: int, value: float,
                            expect: str) -> None:
    def poison(t: dict) -> None:
        t[f"model.layers.1.self_attn.{tensor}"][row] = value

    model = qm.load(_llama_dir(tmp_path, mutate=poison))  # headers are fine
    layers = model.layers()
    first = next(layers)  # layer 0 is clean
    assert first.layer == 0
    with pytest.raises(NonFiniteError, match=expect):
        next(layers)
    heads = list(model.heads(layers=[0, 2]))  # the other layers stay readable
    assert len(heads) == 8


def test_unknown_architecture(tmp_path) -> None:
    path = _llama_dir(tmp_path, config_changes={"model_type": "mamba"})
    with pytest.raises(UnsupportedArchitectureError,
                       match=r"unknown architecture 'mamba'.*bert, bloom, gemma3, gemma3_text, "
                             r"gpt2, gpt_neox, llama, mistral, olmo2, olmo3, olmoe, opt, qwen2, "
                             r"qwen3, qwen3_moe"):
        qm.load(path)
    os.remove(os.path.join(path, "config.json"))
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump({"architectures": ["Foo"]}, f)
    with pytest.raises(UnsupportedArchitectureError, match="no 'model_type'"):
        qm.load(path)


@pytest.mark.parametrize(("model_type", "what"), [
    ("qwen3", "RMSNorm over each head, gains 'layers.0.self_attn.q_norm.weight' and "
              "'layers.0.self_attn.k_norm.weight'"),
    ("olmo2", "RMSNorm over all heads at once")])
def test_qk_norm_architectures_refused_by_default(tmp_path, model_type: str,
                                                  what: str) -> None:
    """Policy refuse names the norm and --qk-norm fold before reading any tensor; policy
    fold then wants the gains where the layout says they are."""
    path = _llama_dir(tmp_path, bias=False, config_changes={"model_type": model_type})
    with pytest.raises(UnsupportedArchitectureError,
                       match=rf"'{model_type}' normalizes its projected queries and keys "
                             rf"\({what}.*not a fixed bilinear form.*Use --qk-norm fold"):
        qm.load(path)
    with pytest.raises(MissingTensorError,
                       match=r"model.layers.0.self_attn.q_norm.weight' \(layer 0 q_norm\)"):
        qm.load(path, qk_norm="fold")


@pytest.mark.parametrize(("model_type", "match"), [
    ("qwen3_next", "linear-attention layers"), ("gemma3n", "AltUp"),
    ("chameleon", "LayerNorm has a bias")])
def test_unfoldable_qk_norm_architectures_refused(tmp_path, model_type: str,
                                                  match: str) -> None:
    path = _llama_dir(tmp_path, config_changes={"model_type": model_type})
    for policy in ("refuse", "fold"):
        with pytest.raises(UnsupportedArchitectureError,
                           match=f"'{model_type}' is not supported: .*{match}"):
            qm.load(path, qk_norm=policy)


def test_qk_norm_gain_of_wrong_shape(tmp_path) -> None:
    """A per-head gain where OLMo 2 has one over all heads: the shapes are checked."""
    def add_norms(t: dict) -> None:
        for i in range(SHAPE["layers"]):
            for side in "qk":
                t[f"model.layers.{i}.self_attn.{side}_norm.weight"] = np.ones(
                    SHAPE["n"], dtype=np.float32)

    path = _llama_dir(tmp_path, bias=False, mutate=add_norms,
                      config_changes={"model_type": "olmo2"})
    with pytest.raises(CheckpointError, match=r"q_norm.weight' .* has shape \(4,\), but "
                                              r"the config .* implies \(16,\)"):
        qm.load(path, qk_norm="fold")


def test_clamped_qkv_refused(tmp_path) -> None:
    path = _llama_dir(tmp_path, bias=False,
                      config_changes={"model_type": "olmoe", "clip_qkv": 8.0})
    with pytest.raises(UnsupportedArchitectureError, match=r"clamps queries.*\+-8.0"):
        qm.load(path, qk_norm="fold")


def test_qk_norm_tensors_refused_even_for_llama(tmp_path) -> None:
    def add_norm(t: dict) -> None:
        t["model.layers.0.self_attn.q_norm.weight"] = np.ones(4, dtype=np.float32)

    with pytest.raises(UnsupportedArchitectureError, match="q_norm"):
        qm.load(_llama_dir(tmp_path, mutate=add_norm))
    path = _llama_dir(tmp_path / "flag", config_changes={"use_qk_norm": True})
    with pytest.raises(UnsupportedArchitectureError, match="use_qk_norm"):
        qm.load(path)


def test_pickle_only_checkpoint_refused(tmp_path) -> None:
    path = _llama_dir(tmp_path)
    os.remove(os.path.join(path, "model.safetensors"))
    marker = tmp_path / "executed"
    # a pickle that would run code if it were ever unpickled
    payload = (b"cos\nsystem\n(S'touch " + str(marker).encode() + b"'\ntR.")
    with open(os.path.join(path, "pytorch_model.bin"), "wb") as f:
        f.write(payload)
    with pytest.raises(UnsafeFormatError, match="pytorch_model.bin.*allow_pickle=True"):
        qm.load(path)
    with pytest.raises(UnsafeFormatError):
        qm.load(os.path.join(path, "pytorch_model.bin"))
    assert not marker.exists()


@pytest.mark.torch
def test_pickle_opt_in_still_refuses_code(tmp_path) -> None:
    pytest.importorskip("torch")
    path = _llama_dir(tmp_path)
    os.remove(os.path.join(path, "model.safetensors"))
    marker = tmp_path / "executed"
    payload = (b"cos\nsystem\n(S'touch " + str(marker).encode() + b"'\ntR.")
    with open(os.path.join(path, "pytorch_model.bin"), "wb") as f:
        f.write(payload)
    with pytest.raises(CheckpointError, match="weights_only=True"):
        qm.load(path, allow_pickle=True)
    assert not marker.exists()


def test_no_weights_and_no_config(tmp_path) -> None:
    d = tmp_path / "empty"
    d.mkdir()
    with pytest.raises(CheckpointError, match="no config.json"):
        qm.load(str(d))
    (d / "config.json").write_text(json.dumps(tiny.llama_config(**SHAPE)))
    with pytest.raises(CheckpointError, match="no weights"):
        qm.load(str(d))
    (d / "config.json").write_text("[1, 2")
    with pytest.raises(CheckpointError, match="not a valid JSON"):
        qm.load(str(d))


def test_all_errors_are_qkforms_errors() -> None:
    for cls in (CheckpointError, MissingTensorError, NonFiniteError, UnsafeFormatError,
                UnsupportedArchitectureError, qm.ModelNotFoundError):
        assert issubclass(cls, QKFormsError)


def test_decode_half_precision_bit_patterns() -> None:
    """F16 and BF16 decode bit-exactly, including subnormals, signed zero and inf."""
    bits = np.array([0x0001, 0x8000, 0x3C00, 0x7BFF, 0xFC00, 0x0400], dtype="<u2")
    f16 = decode(bits.tobytes(), "F16", (6,))
    assert f16.tolist() == [2.0**-24, -0.0, 1.0, 65504.0, -np.inf, 2.0**-14]
    assert np.signbit(f16[1])
    bf = np.array([0x0001, 0x3F80, 0x4049, 0xFF80, 0x7F7F], dtype="<u2")
    got = decode(bf.tobytes(), "BF16", (5,))
    want = [2.0**-133, 1.0, 3.140625, -np.inf, (2 - 2.0**-7) * 2.0**127]
    assert got.tolist() == want
    with pytest.raises(CheckpointError, match="unsupported tensor dtype"):
        decode(b"\x00" * 8, "I64", (1,))


def test_decode_bf16_every_bit_pattern_across_steps() -> None:
    """BF16 decodes in steps through a small scratch buffer: every one of the 65536 bit
    patterns, laid out to straddle step boundaries, equals its float32 widening."""
    from qkforms.models import safetensors as st

    bits = np.arange(2**16, dtype=np.uint32).astype("<u2")
    bits = np.concatenate([bits, bits[::-1], bits[:12345]])  # > one step, odd remainder
    assert bits.size > st._BF16_STEP and bits.size % st._BF16_STEP
    with np.errstate(invalid="ignore"):  # widening a signalling NaN flags "invalid"
        want = (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
        got = decode(bits.tobytes(), "BF16", (bits.size,))
    assert got.dtype == np.float64
    assert np.array_equal(got.view(np.uint64), want.view(np.uint64))  # NaN payloads too


def test_read_results_do_not_share_the_reused_read_buffer(tmp_path) -> None:
    """Reads reuse one buffer per thread; the arrays they return are copies of it."""
    from qkforms.models.safetensors import SafetensorsFile

    a = np.arange(6, dtype=np.float64).reshape(2, 3)  # F64: decoding needs no cast
    c = 10 + a  # the same size: read into the very buffer that held a
    b = -np.ones((4, 3), dtype=np.float64)
    path = str(tmp_path / "m.safetensors")
    tiny.write_safetensors(path, {"a": a, "c": c, "b": b})
    f = SafetensorsFile(path)
    first = f.read("a")
    same_size = f.read("c")
    larger = f.read("b")
    again = f.read("a")
    f.close()
    assert first.tolist() == a.tolist() and again.tolist() == a.tolist()
    assert same_size.tolist() == c.tolist() and larger.tolist() == b.tolist()


@pytest.mark.torch  # huggingface_hub: only test-torch installs it
def test_hub_id_resolves_from_local_cache(tmp_path, monkeypatch) -> None:
    """A hub id already in the Hugging Face cache loads offline (no network touched)."""
    pytest.importorskip("huggingface_hub")
    cache = tmp_path / "hub"
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = cache / "models--some-org--tiny-llama"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    rng = np.random.default_rng(7)
    tensors = tiny.llama_tensors(rng, **SHAPE)
    tiny.write_llama_dir(str(repo / "snapshots" / commit), tensors, tiny.llama_config(**SHAPE))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", True)
    monkeypatch.chdir(tmp_path)
    model = qm.load("some-org/tiny-llama", checksum=False)
    assert model.info.name == "some-org/tiny-llama"
    want = tensors["model.layers.1.self_attn.q_proj.weight"].astype(np.float64)
    assert np.array_equal(model.layer(1).W_Q.reshape(want.shape), want)


@pytest.mark.parametrize("text_prefix", ["language_model.model.", "model.language_model."])
def test_gemma3_multimodal_layers_found_by_prefix(tmp_path, text_prefix: str) -> None:
    """Both key layouts of multimodal Gemma 3 checkpoints (the hub's original one and the
    one transformers 4.5x saves) hold a vision tower whose layers are named like the
    decoder's, under a prefix as short: the language model's are read; without them the
    error says where they were looked for."""
    rng = np.random.default_rng(5)
    N, n, n_q, n_kv = 16, 4, 4, 2
    tensors = {}
    for i in range(2):
        base = f"{text_prefix}layers.{i}.self_attn"
        tensors[f"{base}.q_proj.weight"] = rng.standard_normal((n_q * n, N))
        tensors[f"{base}.k_proj.weight"] = rng.standard_normal((n_kv * n, N))
        for side in "qk":
            tensors[f"{base}.{side}_norm.weight"] = rng.standard_normal(n)
    vision = "vision_tower.encoder." if text_prefix.startswith("language") else (
        "model.vision_tower.")
    tensors[f"{vision}layers.0.self_attn.q_proj.weight"] = rng.standard_normal((6, 6))
    assert len(vision) <= len(text_prefix)
    config = {"model_type": "gemma3", "text_config": {
        "hidden_size": N, "num_attention_heads": n_q, "num_key_value_heads": n_kv,
        "head_dim": n, "num_hidden_layers": 2, "query_pre_attn_scalar": n}}
    path = tiny.write_llama_dir(str(tmp_path / "mm"), tensors, config)
    model = qm.load(path, qk_norm="fold")
    assert model.tensor_names(1)["q"] == f"{text_prefix}layers.1.self_attn.q_proj.weight"
    gain = 1.0 + tensors[f"{text_prefix}layers.1.self_attn.q_norm.weight"]  # Gemma's 1 + w
    want = np.tile(gain, n_q)[:, None] * tensors[f"{text_prefix}layers.1.self_attn.q_proj.weight"]
    np.testing.assert_array_equal(model.layer(1).W_Q.reshape(n_q * n, N), want)
    for name in [t for t in tensors if t.startswith(text_prefix)]:
        del tensors[name]
    path = tiny.write_llama_dir(str(tmp_path / "vision-only"), tensors, config)
    with pytest.raises(MissingTensorError, match="under a prefix containing 'language_model'"):
        qm.load(path, qk_norm="fold")
