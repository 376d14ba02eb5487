"""The lazy GGUF header: refusals and opening without reading the tokenizer arrays (#23)."""

from __future__ import annotations

import gguf
import numpy as np
import pytest

import qkforms.models as qm
from qkforms.errors import CheckpointError, UnsupportedArchitectureError
from qkforms.models import ggufio
from qkforms.survey.synthetic_checkpoints import write_gguf_checkpoint

VOCAB = 150_000


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Qwen3-style GGUF (q/k RMSNorm) with a 150k-token vocabulary."""
    return str(write_gguf_checkpoint(tmp_path_factory.mktemp("gguf") / "big.gguf",
                                     vocab=VOCAB))


def _counting_strings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    decoded = [0]
    original = ggufio._Header._string

    def counted(self: ggufio._Header) -> str:
        decoded[0] += 1
        return original(self)

    monkeypatch.setattr(ggufio._Header, "_string", counted)
    return decoded


def test_refusal_does_not_decode_the_tokenizer_arrays(big, monkeypatch) -> None:
    decoded = _counting_strings(monkeypatch)
    with pytest.raises(UnsupportedArchitectureError, match="normalizes its projected"):
        qm.load(big)
    # keys and tensor names only: a few dozen strings, not the 300k of the tokenizer
    assert 0 < decoded[0] < 100


def test_opening_skips_the_tokenizer_and_reads_the_tensors(big, tmp_path, monkeypatch) -> None:
    decoded = _counting_strings(monkeypatch)
    store = ggufio.GGUFStore(big)
    assert decoded[0] < 100
    assert {"tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.scores",
            "tokenizer.ggml.token_type"} <= set(store.skipped)
    assert not any(k.startswith("tokenizer.") for k in store.metadata)
    assert store.metadata["qwen3.attention.head_count"] == 4
    # the same weights written with a 10-token vocabulary (same seed): the tensors found
    # by offset behind 150k tokens are those
    small = write_gguf_checkpoint(tmp_path / "small.gguf", vocab=10)
    with qm.load(big, qk_norm="fold") as m_big, qm.load(str(small), qk_norm="fold") as m_small:
        a, b = m_big.layer(1), m_small.layer(1)
        assert np.array_equal(a.W_Q, b.W_Q) and np.array_equal(a.W_K, b.W_K)
        assert a.W_Q.shape == (4, 16, 64)


def test_lazy_header_agrees_with_gguf_reader(tmp_path) -> None:
    """Metadata (tokenizer aside), tensor names, shapes, types and stored values are those
    of ``gguf.GGUFReader`` (on a file small enough for the reader to parse quickly)."""
    path = str(write_gguf_checkpoint(tmp_path / "m.gguf", vocab=300))
    reader = gguf.GGUFReader(path)
    store = ggufio.GGUFStore(path)
    meta = {k: f.contents() for k, f in reader.fields.items()
            if not k.startswith(("tokenizer.", "GGUF."))}
    assert store.metadata == meta
    assert store.names == [t.name for t in reader.tensors]
    for t in reader.tensors:
        raw = store.raw(t.name)
        assert raw.dtype == t.data.dtype and raw.shape == t.data.shape
        assert np.array_equal(raw, t.data)
        assert store.dtype(t.name) == t.tensor_type.name


def test_corrupt_counts_are_refused_quickly(tmp_path) -> None:
    """A string-array length pointing past the end of the file is a clear error."""
    path = write_gguf_checkpoint(tmp_path / "m.gguf", vocab=1000)
    data = bytearray(path.read_bytes())
    at = data.index(b"tok000500") - 8  # the length field of token 500
    data[at:at + 8] = (2**40).to_bytes(8, "little")
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="not a readable GGUF file"):
        ggufio.GGUFStore(str(bad))
