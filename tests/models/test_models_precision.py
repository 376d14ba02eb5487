"""Storage precision: every weight a checkpoint could have held lies in the box.

* float dtypes: the half-width is the larger half-gap to the neighbouring representable
  values (checked against ``numpy.nextafter`` / the 8-bit value tables), so every real
  that rounds to the stored value lies within it;
* GGUF types that ``gguf.quants`` can quantize: every weight it quantizes (random
  weights of several shapes of blocks) lies within the half-width of its stored value;
* K-quants (no quantizer in ``gguf``): flipping the lowest bit of the codes moves the
  decoded weights by exactly one step, twice the half-width;
* non-uniform grids: the half-width is half the larger gap of the published grid;
* the loaders: the half-widths follow the layout's cut into heads (llama.cpp's
  permutation undone), and vector codebooks and computing layouts are refused.
"""

from __future__ import annotations

import numpy as np
import pytest
import tiny

import qkforms.models as qm
from qkforms.errors import PrecisionUnavailableError
from qkforms.models.precision import (
    float_half_widths,
    folded_half_widths,
    gguf_half_widths,
    split_half_widths,
)

gguf = pytest.importorskip("gguf")
ml_dtypes = pytest.importorskip("ml_dtypes")

FLOATS = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16,
          "float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}


def _values(dtype: type, rng: np.random.Generator) -> np.ndarray:
    x = np.concatenate([rng.standard_normal(400) * 10.0 ** rng.integers(-6, 3, 400),
                        [0.0, 1.0, -2.0, 0.5, 2.0**-20]])
    with np.errstate(over="ignore"):
        v = x.astype(dtype).astype(np.float64)
    return v[np.isfinite(v)]


@pytest.mark.parametrize("name", list(FLOATS))
def test_float_half_width_is_the_larger_half_gap(name: str) -> None:
    rng = np.random.default_rng(0)
    v = _values(FLOATS[name], rng)
    h = float_half_widths(v, name)
    # neighbours of |v| in the dtype
    wide = name in ("float16", "bfloat16")
    bits = np.arange(2**16 if wide else 256, dtype=np.uint16 if wide else np.uint8)
    with np.errstate(invalid="ignore"):  # NaN bit patterns
        finite = np.unique(np.abs(bits.view(FLOATS[name]).astype(np.float64)))
    finite = finite[np.isfinite(finite)]
    if name == "float32":
        up = np.nextafter(np.abs(v).astype(np.float32), np.float32(np.inf)).astype(np.float64)
        down = np.nextafter(np.abs(v).astype(np.float32), np.float32(0)).astype(np.float64)
        gap = np.maximum(up - np.abs(v), np.abs(v) - down)
    else:
        i = np.searchsorted(finite, np.abs(v))
        assert np.array_equal(finite[i], np.abs(v))
        up = finite[np.minimum(i + 1, finite.size - 1)] - finite[i]
        down = finite[i] - finite[np.maximum(i - 1, 0)]
        gap = np.maximum(up, down)
    gap = np.where(np.abs(v) == 0, up - np.abs(v), gap)
    assert np.array_equal(h, gap / 2)
    # every real that rounds to v (the midpoints towards both neighbours) is within h
    assert np.all((up - np.abs(v)) / 2 <= h)


def test_unknown_float_dtype_refused() -> None:
    with pytest.raises(PrecisionUnavailableError, match="no storage precision for dtype 'I8'"):
        float_half_widths(np.zeros(2), "I8")


QUANTIZABLE = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "TQ1_0", "TQ2_0", "MXFP4"]


@pytest.mark.parametrize("kind", QUANTIZABLE)
def test_every_quantized_weight_lies_in_its_box(kind: str) -> None:
    """The library's quantizer, on weights of mixed signs, offsets and scales."""
    qtype = gguf.GGMLQuantizationType[kind]
    rng = np.random.default_rng(1)
    rows = [rng.standard_normal(512), rng.uniform(0.5, 2.0, 512),     # one sign only
            rng.standard_normal(512) * 1e-4, rng.standard_t(3, 512) + 3.0,
            -rng.exponential(1.0, 512)]
    w = np.stack(rows).astype(np.float32)
    raw = gguf.quants.quantize(w, qtype)
    v = np.asarray(gguf.quants.dequantize(raw, qtype), dtype=np.float64).reshape(-1)
    h = gguf_half_widths(raw, kind, v)
    err = np.abs(w.reshape(-1).astype(np.float64) - v)
    assert np.all(err <= h), float(np.max(err / h))
    # and the box is not gratuitously wide: some weight comes within 10 % of its edge
    assert float(np.max(err / h)) > 0.9


K_QUANTS = ["Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"]
#: byte ranges of the codes whose bit 0 is the lowest bit of a code
CODE_BYTES = {"Q2_K": (16, 80), "Q3_K": (32, 96), "Q4_K": (16, 144), "Q5_K": (48, 176),
              "Q6_K": (0, 128)}


def _finite_blocks(rng: np.random.Generator, qtype: object, count: int) -> np.ndarray:
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    data = rng.integers(0, 256, (count, size), dtype=np.uint8)
    for _ in range(200):
        with np.errstate(all="ignore"):
            v = gguf.quants.dequantize(data, qtype).reshape(count, block)
        bad = ~np.isfinite(v).all(axis=1) | (np.abs(v).max(axis=1) > 1e4)
        if not bad.any():
            return data
        data[bad] = rng.integers(0, 256, (int(bad.sum()), size), dtype=np.uint8)
    raise AssertionError("no finite blocks")


@pytest.mark.parametrize("kind", K_QUANTS)
def test_k_quant_step_is_twice_the_half_width(kind: str) -> None:
    qtype = gguf.GGMLQuantizationType[kind]
    rng = np.random.default_rng(2)
    blocks = _finite_blocks(rng, qtype, 16)
    v = np.asarray(gguf.quants.dequantize(blocks, qtype), dtype=np.float64).reshape(-1)
    h = gguf_half_widths(blocks, kind, v)
    flipped = blocks.copy()
    lo, hi = CODE_BYTES[kind]
    flipped[:, lo:hi] ^= 1
    v2 = np.asarray(gguf.quants.dequantize(flipped, qtype), dtype=np.float64).reshape(-1)
    moved = v2 != v
    assert moved.sum() >= v.size // 8
    scale = np.abs(v).max()
    # one code step exactly (up to float32 rounding of d q - m)
    assert np.allclose(np.abs(v2 - v)[moved], 2 * h[moved], rtol=1e-5, atol=1e-6 * scale)


def test_nonuniform_grid_half_gaps() -> None:
    """IQ4_NL with scale 1 and codes 0..15: half the larger gap of the published grid."""
    grid = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89,
                     113], dtype=np.float64)
    codes = np.arange(16, dtype=np.uint8)
    qs = (codes[:16] & 0x0F).reshape(1, 16)
    block = np.zeros((1, 18), dtype=np.uint8)
    block[0, :2] = np.array([1.0], dtype=np.float16).view(np.uint8)
    block[0, 2:] = qs[0, :16] | (qs[0, :16] << 4)  # weight j and j + 16 both get code j
    qtype = gguf.GGMLQuantizationType.IQ4_NL
    v = np.asarray(gguf.quants.dequantize(block, qtype), dtype=np.float64).reshape(-1)
    assert np.array_equal(v[:16], grid)
    h = gguf_half_widths(block, "IQ4_NL", v)
    gaps = np.diff(grid)
    want = np.maximum(np.r_[gaps[0], gaps], np.r_[gaps, gaps[-1]]) / 2
    assert np.array_equal(h[:16], want)


@pytest.mark.parametrize("kind", ["IQ2_XXS", "IQ1_S", "IQ3_S"])
def test_vector_codebooks_refused(kind: str) -> None:
    qtype = gguf.GGMLQuantizationType[kind]
    _, size = gguf.GGML_QUANT_SIZES[qtype]
    with pytest.raises(PrecisionUnavailableError, match="lattice codebook"):
        gguf_half_widths(np.zeros((1, size), dtype=np.uint8), kind, np.zeros(256))


def test_folded_half_widths_bound_every_product() -> None:
    rng = np.random.default_rng(3)
    W, H = rng.standard_normal((3, 5)), rng.uniform(0, 0.1, (3, 5))
    g, hg = rng.standard_normal(5), rng.uniform(0, 0.05, 5)
    box = folded_half_widths(W, H, g, hg)
    for _ in range(200):
        W2 = W + rng.uniform(-1, 1, W.shape) * H
        g2 = g + rng.uniform(-1, 1, g.shape) * hg
        assert np.all(np.abs(W2 * g2 - W * g) <= box)


# ------------------------------------------------------------------- through the loaders


def _write_gguf(path: str, q: np.ndarray, k: np.ndarray, *, N: int, n_q: int, n_kv: int,
                n: int, q_type: str, k_type: str) -> None:
    w = gguf.GGUFWriter(path, "llama")
    w.add_block_count(1)
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
    for name, arr, kind, heads in (("attn_q", q, q_type, n_q), ("attn_k", k, k_type, n_kv)):
        stored = tiny.llamacpp_permute(arr, n_q, heads).astype(np.float32)
        qtype = gguf.GGMLQuantizationType[kind]
        w.add_tensor(f"blk.0.{name}.weight", gguf.quants.quantize(stored, qtype),
                     raw_dtype=qtype)
    w.add_tensor("blk.0.attn_v.weight", np.zeros((n_kv * n, N), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def test_gguf_layer_precision_contains_the_true_weights(tmp_path) -> None:
    """The true (pre-quantization) weights lie in the box of the loader's heads."""
    rng = np.random.default_rng(4)
    N, n_q, n_kv, n = 64, 4, 2, 8
    q = rng.standard_normal((n_q * n, N)).astype(np.float32)
    k = rng.standard_normal((n_kv * n, N)).astype(np.float32)
    path = str(tmp_path / "q.gguf")
    _write_gguf(path, q, k, N=N, n_q=n_q, n_kv=n_kv, n=n, q_type="Q4_1", k_type="Q8_0")
    with qm.load(path) as model:
        lw = model.layer(0)
        H_Q, H_K = model.layer_precision(0)
    assert H_Q.shape == lw.W_Q.shape and H_K.shape == lw.W_K.shape
    true_q, true_k = q.reshape(n_q, n, N), k.reshape(n_kv, n, N)
    assert np.all(np.abs(true_q - lw.W_Q) <= H_Q)
    assert np.all(np.abs(true_k - lw.W_K) <= H_K)
    # Q8_0 keys: about half a step of max|row block|/127; Q4_1 queries: (max - min)/30
    assert 0.3 < float(np.median(H_K / (np.abs(true_k).max() / 254))) < 1.1
    assert float(np.median(H_Q)) > 10 * float(np.median(H_K))


def test_bf16_safetensors_precision_is_half_an_ulp(tmp_path) -> None:
    from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint

    d = write_llama_checkpoint(tmp_path / "ck", n_layers=1, N=16, n=2, n_q=2, n_kv=1)
    with qm.load(d) as model:
        lw = model.layer(0)
        H_Q, H_K = model.layer_precision(0)
    assert np.array_equal(H_Q, float_half_widths(lw.W_Q, "bfloat16"))
    assert np.array_equal(H_K, float_half_widths(lw.W_K, "bfloat16"))


def test_a_layout_that_computes_is_refused() -> None:
    from qkforms.models.config import ArchSpec
    from qkforms.models.layouts import QKArrays
    from qkforms.models.layouts.opt import OPTLayout, separate_projections

    class Scaling(OPTLayout):
        def split(self, spec, arrays):  # type: ignore[no-untyped-def]
            qk = separate_projections(spec, arrays)
            return QKArrays(qk.W_Q * 0.5, qk.W_K, None, None)

    spec = ArchSpec("opt", "opt", 1, 3, 1, 2, 2, "absolute", None, None)
    arrays = {"q": np.zeros((2, 3)), "k": np.zeros((2, 3))}
    with pytest.raises(PrecisionUnavailableError, match="computes W_Q"):
        split_half_widths(Scaling(), spec, arrays, arrays)


@pytest.mark.parametrize("q_type,k_type", [("Q8_0", "Q8_0"), ("Q4_1", "Q8_0"), ("Q4_0", "Q5_1")])
def test_bands_contain_the_statistics_of_the_true_weights(tmp_path, q_type: str,
                                                          k_type: str) -> None:
    """A GGUF quantized here from known weights: their statistics are in the bands."""
    from qkforms.bands import BAND_STATS, layer_bands
    from qkforms.gram import layer_spectra
    from qkforms.survey.head_statistics import head_columns

    rng = np.random.default_rng(7)
    N, n_q, n_kv, n = 96, 4, 2, 8
    # trained-like weights: a few strong input directions
    mix = rng.standard_normal((N, N)) * np.exp(-np.arange(N) / 20.0)
    q = (rng.standard_normal((n_q * n, N)) @ mix).astype(np.float32)
    k = (rng.standard_normal((n_kv * n, N)) @ mix).astype(np.float32)
    path = str(tmp_path / "q.gguf")
    _write_gguf(path, q, k, N=N, n_q=n_q, n_kv=n_kv, n=n, q_type=q_type, k_type=k_type)
    with qm.load(path) as model:
        lw = model.layer(0)
        H_Q, H_K = model.layer_precision(0)
    bands = layer_bands(lw.W_Q, lw.W_K, H_Q, H_K, lw.kv_index)
    true_q = q.reshape(n_q, n, N).astype(np.float64)
    true_k = k.reshape(n_kv, n, N).astype(np.float64)
    true = head_columns(layer_spectra(true_q, true_k, np.asarray(lw.kv_index)), N=N, n=n)
    for h, band in enumerate(bands):
        assert band is not None
        for s in BAND_STATS:
            iv = band.rigorous[s]
            assert iv is not None and iv.lo <= true[s][h] <= iv.hi, (h, s)
        if band.kind != "first-order":
            assert all(band.interval(s).lo <= true[s][h] <= band.interval(s).hi
                       for s in BAND_STATS)
    if q_type == k_type == "Q8_0":  # 8-bit blocks: useful rigorous bands
        assert all(b is not None and b.kind == "rigorous-float" for b in bands)
        assert max(b.interval("a").width for b in bands if b is not None) < 0.25
