"""Helpers for the loader tests: tiny checkpoints written from scratch or by transformers.

* :func:`write_safetensors` writes a safetensors file with numpy only (independent of
  the reader under test), :func:`write_llama_dir` a synthetic Llama-style directory.
* :func:`tiny_hf_model` builds a small randomly initialised ``transformers`` model of a
  given architecture (every parameter, biases included, drawn from a seeded normal so
  that no term of the score vanishes), in float64.
* :func:`capture_attention` runs a model and records, per attention layer, the hidden
  states entering attention and the query/key tensors exactly as the model itself uses
  them in ``q . k`` (through a registered attention function, or BLOOM's own
  ``_reshape``), with the scale the model applies.
* :func:`llamacpp_permute` is llama.cpp's ``convert_hf_to_gguf`` q/k row permutation.
* :func:`projection_before_norm` and :func:`norm_factors` compute, from a model's own
  modules, the factors ``f, g`` of a q/k-normalized score; :func:`predicted_scores` is
  the score ``c f_i g_j (x_j, 1)^T L_hat(i - j) (x_i, 1)`` of loaded maps (the GGUF and
  the Hugging Face q/k-norm faithfulness tests compare it with the model's).
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

_CODES = {np.dtype("float64"): "F64", np.dtype("float32"): "F32", np.dtype("float16"): "F16"}


def write_safetensors(path: str, tensors: dict[str, np.ndarray],
                      metadata: dict[str, str] | None = None) -> None:
    """Write ``tensors`` (float64/32/16 numpy arrays) as a safetensors file."""
    header: dict[str, Any] = {}
    if metadata:
        header["__metadata__"] = metadata
    blobs, offset = [], 0
    for name, arr in tensors.items():
        arr = np.ascontiguousarray(arr)
        raw = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": _CODES[arr.dtype], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def llama_config(*, layers: int, N: int, n_q: int, n_kv: int, n: int,
                 bias: bool = False, model_type: str = "llama") -> dict[str, Any]:
    """A minimal Llama config dict."""
    return {"model_type": model_type, "hidden_size": N, "num_attention_heads": n_q,
            "num_key_value_heads": n_kv, "head_dim": n, "num_hidden_layers": layers,
            "attention_bias": bias, "rope_theta": 10000.0}


def llama_tensors(rng: np.random.Generator, *, layers: int, N: int, n_q: int, n_kv: int,
                  n: int, bias: bool = False, mlp: int = 0,
                  dtype: str = "float32") -> dict[str, np.ndarray]:
    """Random tensors named like a Hugging Face Llama checkpoint (q, k, v; optional MLP)."""
    out: dict[str, np.ndarray] = {}
    for i in range(layers):
        base = f"model.layers.{i}"
        out[f"{base}.self_attn.q_proj.weight"] = rng.standard_normal((n_q * n, N))
        out[f"{base}.self_attn.k_proj.weight"] = rng.standard_normal((n_kv * n, N))
        out[f"{base}.self_attn.v_proj.weight"] = rng.standard_normal((n_kv * n, N))
        if bias:
            out[f"{base}.self_attn.q_proj.bias"] = rng.standard_normal(n_q * n)
            out[f"{base}.self_attn.k_proj.bias"] = rng.standard_normal(n_kv * n)
        if mlp:
            out[f"{base}.mlp.up_proj.weight"] = rng.standard_normal((mlp, N))
    return {k: v.astype(dtype) for k, v in out.items()}


def write_llama_dir(directory: str, tensors: dict[str, np.ndarray],
                    config: dict[str, Any]) -> str:
    """Write ``config.json`` + ``model.safetensors`` into ``directory``."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f)
    write_safetensors(os.path.join(directory, "model.safetensors"), tensors)
    return directory


def llamacpp_permute(weights: np.ndarray, n_head: int, n_head_kv: int | None = None
                     ) -> np.ndarray:
    """llama.cpp ``convert_hf_to_gguf`` ``LlamaModel.permute`` (HF rows -> GGUF rows)."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
            .swapaxes(1, 2)
            .reshape(weights.shape))


# ----------------------------------------------------------------- transformers models

#: architecture -> (config class name, kwargs); tiny but with every feature under test
TINY_CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "gpt2": ("GPT2Config", dict(n_embd=24, n_head=4, n_layer=2, vocab_size=64,
                                n_positions=32)),
    "opt": ("OPTConfig", dict(hidden_size=24, num_attention_heads=4, num_hidden_layers=2,
                              ffn_dim=48, vocab_size=64, word_embed_proj_dim=24,
                              max_position_embeddings=32)),
    "bloom": ("BloomConfig", dict(hidden_size=24, n_head=4, n_layer=2, vocab_size=64)),
    "gpt_neox": ("GPTNeoXConfig", dict(hidden_size=32, num_attention_heads=4,
                                       num_hidden_layers=2, intermediate_size=48,
                                       vocab_size=64, rotary_pct=0.25,
                                       max_position_embeddings=32)),
    # GQA (6 query heads over 2 KV heads) and an explicit head_dim != N / n_q
    "llama": ("LlamaConfig", dict(hidden_size=48, num_attention_heads=6,
                                  num_key_value_heads=2, head_dim=16, num_hidden_layers=2,
                                  intermediate_size=48, vocab_size=64, attention_bias=True,
                                  max_position_embeddings=32)),
    "mistral": ("MistralConfig", dict(hidden_size=48, num_attention_heads=4,
                                      num_key_value_heads=2, head_dim=16,
                                      num_hidden_layers=2, intermediate_size=48,
                                      vocab_size=64, max_position_embeddings=32)),
    "qwen2": ("Qwen2Config", dict(hidden_size=32, num_attention_heads=4,
                                  num_key_value_heads=1, num_hidden_layers=2,
                                  intermediate_size=48, vocab_size=64,
                                  max_position_embeddings=32)),
    "bert": ("BertConfig", dict(hidden_size=24, num_attention_heads=4, num_hidden_layers=2,
                                intermediate_size=48, vocab_size=64,
                                max_position_embeddings=32)),
}

#: architectures with rotary position embeddings (positions matter for q, k)
ROPE_ARCHS = {"gpt_neox", "llama", "mistral", "qwen2"}

_SMALL = dict(num_hidden_layers=2, intermediate_size=48, vocab_size=64,
              max_position_embeddings=32)
#: "eager" experts: the grouped-matmul kernels have no float64 version
_MOE = dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
            experts_implementation="eager")

#: models converted to GGUF by llama.cpp's converter (tests/models/test_models_gguf_archs.py):
#: case -> (config class, kwargs, GGUF architecture the converter writes)
GGUF_CONFIGS: dict[str, tuple[str, dict[str, Any], str]] = {
    "llama": (*TINY_CONFIGS["llama"], "llama"),
    "mistral": (*TINY_CONFIGS["mistral"], "llama"),
    "qwen2": (*TINY_CONFIGS["qwen2"], "qwen2"),
    "qwen2moe": ("Qwen2MoeConfig", dict(hidden_size=32, num_attention_heads=4,
                                         num_key_value_heads=2, shared_expert_intermediate_size=16,
                                         **_MOE, **_SMALL), "qwen2moe"),
    "qwen3": ("Qwen3Config", dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                                  head_dim=16, **_SMALL), "qwen3"),
    "qwen3moe": ("Qwen3MoeConfig", dict(hidden_size=32, num_attention_heads=4,
                                         num_key_value_heads=2, head_dim=8, **_MOE, **_SMALL),
                 "qwen3moe"),
    "phi3": ("Phi3Config", dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                                partial_rotary_factor=0.5, original_max_position_embeddings=32,
                                pad_token_id=0, **_SMALL), "phi3"),
    "gemma": ("GemmaConfig", dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=1,
                                  head_dim=16, **_SMALL), "gemma"),
    "gemma2": ("Gemma2Config", dict(hidden_size=32, num_attention_heads=4,
                                    num_key_value_heads=2, head_dim=8, query_pre_attn_scalar=8,
                                    attn_logit_softcapping=5.0, final_logit_softcapping=30.0,
                                    sliding_window=16, **_SMALL), "gemma2"),
    "gemma3": ("Gemma3TextConfig", dict(
        hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=8,
        query_pre_attn_scalar=8, sliding_window=16,
        rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 10000.0},
                         "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
        **_SMALL), "gemma3"),
    "starcoder2": ("Starcoder2Config", dict(hidden_size=32, num_attention_heads=4,
                                            num_key_value_heads=2, use_bias=True, **_SMALL),
                   "starcoder2"),
    "stablelm": ("StableLmConfig", dict(hidden_size=32, num_attention_heads=4,
                                        num_key_value_heads=2, partial_rotary_factor=0.25,
                                        use_qkv_bias=True, **_SMALL), "stablelm"),
    "stablelm-qknorm": ("StableLmConfig", dict(hidden_size=32, num_attention_heads=4,
                                               num_key_value_heads=2, partial_rotary_factor=0.5,
                                               qk_layernorm=True, **_SMALL), "stablelm"),
    "olmo": ("OlmoConfig", dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                                **_SMALL), "olmo"),
    "olmo2": ("Olmo2Config", dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                                  **_SMALL), "olmo2"),
    # n_ctx: the converter reads GPT-2's old field name, which newer configs do not set
    "gpt2": (TINY_CONFIGS["gpt2"][0], dict(TINY_CONFIGS["gpt2"][1], n_ctx=32), "gpt2"),
    "falcon": ("FalconConfig", dict(hidden_size=32, num_attention_heads=4, num_hidden_layers=2,
                                    new_decoder_architecture=True, num_kv_heads=2, bias=False,
                                    alibi=False, vocab_size=64), "falcon"),
    "falcon-mqa": ("FalconConfig", dict(hidden_size=32, num_attention_heads=4,
                                        num_hidden_layers=2, new_decoder_architecture=True,
                                        num_kv_heads=1, bias=False, alibi=False,
                                        vocab_size=64), "falcon"),
    "granite": ("GraniteConfig", dict(hidden_size=48, num_attention_heads=6,
                                      num_key_value_heads=2, attention_multiplier=0.3,
                                      attention_bias=True, **_SMALL), "granite"),
    "command-r": ("CohereConfig", dict(hidden_size=32, num_attention_heads=4,
                                       num_key_value_heads=2, logit_scale=0.25, **_SMALL),
                  "command-r"),
    "command-r-plus": ("CohereConfig", dict(hidden_size=32, num_attention_heads=4,
                                            num_key_value_heads=2, logit_scale=0.25,
                                            use_qk_norm=True, **_SMALL), "command-r"),
}


#: Hugging Face models with q/k normalization (tests/models/test_models_qknorm.py): case ->
#: (config class, kwargs). Biases in qwen3 and olmo2; sliding-window and full-attention
#: layers with different RoPE (olmo3, gemma3); Gemma 3 with query_pre_attn_scalar != n
#: and soft-capping, and inside a multimodal checkpoint (a SigLIP tower beside it).
QK_NORM_CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "qwen3": ("Qwen3Config", dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                                  head_dim=16, attention_bias=True, rms_norm_eps=1e-5,
                                  **_SMALL)),
    "qwen3_moe": ("Qwen3MoeConfig", dict(hidden_size=32, num_attention_heads=4,
                                         num_key_value_heads=2, head_dim=8, **_MOE, **_SMALL)),
    "olmo2": ("Olmo2Config", dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                                  attention_bias=True, **_SMALL)),
    "olmo3": ("Olmo3Config", dict(
        hidden_size=32, num_attention_heads=4, num_key_value_heads=2, sliding_window=16,
        layer_types=["sliding_attention", "full_attention"],
        rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 5e5},
                         "sliding_attention": {"rope_type": "default", "rope_theta": 1e3}},
        **_SMALL)),
    "olmoe": ("OlmoeConfig", dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                                  num_experts=4, num_experts_per_tok=2,
                                  experts_implementation="eager", **_SMALL)),
    "gemma3_text": ("Gemma3TextConfig", dict(
        hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=8,
        query_pre_attn_scalar=12, attn_logit_softcapping=5.0, sliding_window=16,
        layer_types=["sliding_attention", "full_attention"],
        rope_parameters={"full_attention": {"rope_type": "linear", "factor": 2.0,
                                            "rope_theta": 1e6},
                         "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}},
        **_SMALL)),
    "gemma3": ("Gemma3Config", dict(
        text_config=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=1,
                         head_dim=8, query_pre_attn_scalar=8, sliding_window=16,
                         layer_types=["full_attention", "sliding_attention"], **_SMALL),
        vision_config=dict(hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                           num_attention_heads=2, image_size=28, patch_size=14),
        mm_tokens_per_image=4, image_token_index=63, boi_token_index=61,
        eoi_token_index=62)),
}


def projection_before_norm(mod: Any, x: np.ndarray, side: str, heads: int) -> np.ndarray:
    """The attention module's own projection (``q_proj``/``k_proj``) of ``x`` before its
    q/k norm, as ``(T, heads, n)``."""
    import torch

    with torch.no_grad():
        out = getattr(mod, f"{side}_proj")(torch.from_numpy(x)).numpy()
    return out.reshape(x.shape[0], heads, -1)


def norm_factors(u: np.ndarray, kind: str, scope: str, eps: float) -> np.ndarray:
    """``1 / (RMS or standard deviation)`` of projections ``u`` ``(T, H, n)`` per token and
    head: over each head's coordinates (``scope="head"``) or over all heads'."""
    axes = (2,) if scope == "head" else (1, 2)
    if kind == "layer":
        u = u - u.mean(axis=axes, keepdims=True)
    ms = (u ** 2).mean(axis=axes)
    ms = ms if scope == "head" else np.repeat(ms[:, None], u.shape[1], axis=1)
    return 1.0 / np.sqrt(ms + eps)


def predicted_scores(hw: Any, X: np.ndarray, scale: float, f: np.ndarray, g: np.ndarray,
                     rope_info: Any = None) -> np.ndarray:
    """``[query i, key j]``: ``scale f[i, h] g[j, kv] (x_j, 1)^T L_hat(i - j) (x_i, 1)`` of
    one loaded head (``L_hat(d)`` by :func:`qkforms.survey.rope.relative_form` with
    ``rope_info``; without RoPE ``W_hat_K^T W_hat_Q``), ``X`` the tokens with a 1
    appended, tokens at positions ``0 .. T-1``."""
    from qkforms.survey.rope import relative_form

    n = hw.W_Q.shape[0]
    WQ = np.hstack([hw.W_Q, (hw.b_Q if hw.b_Q is not None else np.zeros(n))[:, None]])
    WK = np.hstack([hw.W_K, (hw.b_K if hw.b_K is not None else np.zeros(n))[:, None]])
    T = X.shape[0]
    out = np.empty((T, T))
    for i in range(T):
        for j in range(T):
            L = (relative_form(WQ, WK, i - j, rope_info) if rope_info is not None
                 else WK.T @ WQ)
            out[i, j] = scale * f[i, hw.head] * g[j, hw.kv_head] * (X[j] @ L @ X[i])
    return out


def tiny_hf_model(arch: str, *, seed: int = 0, attn: str = "eager",
                  configs: dict[str, tuple[Any, ...]] | None = None) -> Any:
    """A tiny random ``transformers`` model of ``arch`` in float64 (eval mode)."""
    import torch
    import transformers

    cls_name, kwargs = (configs or TINY_CONFIGS)[arch][:2]
    config = getattr(transformers, cls_name)(**kwargs)
    torch.manual_seed(seed)
    auto = transformers.AutoModel if arch == "bert" else transformers.AutoModelForCausalLM
    model = auto.from_config(config, attn_implementation=attn)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * 0.5)
    return model.double().eval()


@dataclass
class Captured:
    """What one attention layer saw: input ``x`` (T, N), ``q`` (H, T, n), ``k`` (Hk, T, n)."""

    x: np.ndarray
    q: np.ndarray
    k: np.ndarray
    scaling: float


_REGISTERED = False
_ACTIVE: list[dict[str, Any]] = []


def _capture_fn(module: Any, query: Any, key: Any, value: Any, attention_mask: Any,
                scaling: float | None = None, dropout: float = 0.0, **kwargs: Any) -> Any:
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    kwargs.pop("softcap", None)  # sdpa has none; q and k are what is recorded
    if _ACTIVE:
        state = _ACTIVE[-1]
        s = query.size(-1) ** -0.5 if scaling is None else scaling
        state["qk"][id(module)] = (query.detach().clone(), key.detach().clone(), float(s))
    return ALL_ATTENTION_FUNCTIONS["sdpa"](module, query, key, value, attention_mask,
                                          scaling=scaling, dropout=dropout, **kwargs)


def _register() -> None:
    global _REGISTERED
    if not _REGISTERED:
        from transformers import AttentionInterface

        AttentionInterface.register("qkforms_capture", _capture_fn)
        _REGISTERED = True


def attention_modules(model: Any) -> list[Any]:
    """The per-layer attention modules whose input is the layer's hidden state."""
    children = ("c_attn", "q_proj", "query_key_value", "query", "qkv_proj")
    return [m for m in model.modules()
            if any(hasattr(m, c) for c in children) and type(m).__name__.endswith(
                ("Attention", "SelfAttention"))]


def capture_attention(model: Any, input_ids: Any, position: int | None = None
                      ) -> list[Captured]:
    """Run ``model`` once and record every attention layer's x, q, k and scale.

    ``position`` (RoPE models): give every token this same position id, so that the
    rotations of queries and keys coincide and ``q . k`` is the relative-position-0 score.
    """
    import torch

    _register()
    model.set_attn_implementation("qkforms_capture")
    modules = attention_modules(model)
    state: dict[str, Any] = {"x": {}, "qk": {}}
    handles = []

    def pre_hook(mod: Any, args: tuple, kwargs: dict) -> None:
        x = args[0] if args else kwargs["hidden_states"]
        state["x"][id(mod)] = x.detach().clone()

    for mod in modules:
        handles.append(mod.register_forward_pre_hook(pre_hook, with_kwargs=True))
        if hasattr(mod, "_reshape"):  # BLOOM computes its scores without the interface
            original = mod._reshape

            def reshaped(fused: Any, _orig: Any = original, _mod: Any = mod) -> Any:
                q, k, v = _orig(fused)
                state["qk"][id(_mod)] = (q.detach().clone(), k.detach().clone(),
                                         float(_mod.inv_norm_factor))
                return q, k, v

            mod._reshape = reshaped
    falcon_calls: list[tuple[Any, Any]] = []
    falcon = None
    if type(model).__module__.endswith("modeling_falcon"):  # no attention interface
        import transformers.models.falcon.modeling_falcon as falcon

        rotary = falcon.apply_rotary_pos_emb

        def recording(q: Any, k: Any, *args: Any, **kw: Any) -> Any:
            q, k = rotary(q, k, *args, **kw)
            falcon_calls.append((q.detach().clone(), k.detach().clone()))
            return q, k

        falcon.apply_rotary_pos_emb = recording
    kwargs: dict[str, Any] = {}
    if position is not None:
        kwargs["position_ids"] = torch.full_like(input_ids, position)
    _ACTIVE.append(state)
    try:
        with torch.no_grad():
            model(input_ids=input_ids, **kwargs)
    finally:
        _ACTIVE.pop()
        for h in handles:
            h.remove()
        for mod in modules:
            mod.__dict__.pop("_reshape", None)
        if falcon is not None:
            falcon.apply_rotary_pos_emb = rotary
    for mod, (q, k) in zip(modules, falcon_calls, strict=False):
        state["qk"][id(mod)] = (q, k, float(mod.inv_norm_factor))
    out = []
    for mod in modules:
        q, k, s = state["qk"][id(mod)]
        out.append(Captured(state["x"][id(mod)][0].numpy(), q[0].numpy(), k[0].numpy(), s))
    return out
