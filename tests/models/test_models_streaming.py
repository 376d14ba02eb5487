"""Streaming: one layer's q/k bytes at a time, memory independent of depth.

A synthetic 40-layer Llama-style checkpoint (with value and MLP tensors that must
never be read) is opened through a counting wrapper around the file handles of
:mod:`qkforms.models.safetensors`.
"""

from __future__ import annotations

import inspect
import os
import tracemalloc

import numpy as np
import pytest
import tiny

import qkforms.models as qm
import qkforms.models.safetensors as st_mod

LAYERS = 40
SHAPE = dict(layers=LAYERS, N=64, n_q=8, n_kv=2, n=8)


class CountingFile:
    """File wrapper recording the absolute byte ranges read."""

    def __init__(self, path: str, log: list) -> None:
        self._f = open(path, "rb")  # noqa: SIM115
        self._log = log

    def seek(self, pos: int, whence: int = 0) -> int:
        return self._f.seek(pos, whence)

    def read(self, size: int = -1) -> bytes:
        start = self._f.tell()
        data = self._f.read(size)
        self._log.append((start, len(data)))
        return data

    def readinto(self, buf) -> int:
        start = self._f.tell()
        got = self._f.readinto(buf)
        self._log.append((start, got))
        return got

    def close(self) -> None:
        self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@pytest.fixture
def deep_checkpoint(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    tensors = tiny.llama_tensors(rng, mlp=512, **SHAPE)
    path = tiny.write_llama_dir(str(tmp_path / "deep"), tensors, tiny.llama_config(**SHAPE))
    log: list[tuple[int, int]] = []
    monkeypatch.setattr(st_mod, "_open", lambda p: CountingFile(p, log))
    return path, tensors, log


def _ranges(path: str, names: list[str]) -> set[tuple[int, int]]:
    with st_mod.SafetensorsFile(os.path.join(path, "model.safetensors")) as f:
        return {f.byte_range(name) for name in names}


def test_load_reads_only_the_header(deep_checkpoint) -> None:
    path, _, log = deep_checkpoint
    model = qm.load(path, checksum=False)
    size = os.path.getsize(os.path.join(path, "model.safetensors"))
    header_bytes = sum(n for _, n in log)
    assert header_bytes < 0.05 * size
    assert all(start < 8 + header_bytes for start, _ in log)
    log.clear()
    gen = model.layers()
    assert inspect.isgenerator(gen)
    assert log == []  # creating the generator reads nothing


def test_each_step_reads_exactly_one_layers_q_and_k(deep_checkpoint) -> None:
    path, tensors, log = deep_checkpoint
    want = [_ranges(path, [f"model.layers.{i}.self_attn.q_proj.weight",
                           f"model.layers.{i}.self_attn.k_proj.weight"])
            for i in range(LAYERS)]
    never = _ranges(path, [f"model.layers.{i}.{t}" for i in range(LAYERS)
                           for t in ("self_attn.v_proj.weight", "mlp.up_proj.weight")])
    model = qm.load(path, checksum=False)
    log.clear()
    everything: set[tuple[int, int]] = set()
    for i, lw in enumerate(model.layers()):
        assert lw.layer == i
        assert set(log) == want[i] and len(log) == 2, f"layer {i}"
        everything |= set(log)
        log.clear()
    # nothing else was ever touched: value and MLP bytes stay on disk
    assert len(never) == 2 * LAYERS and not (never & everything)


def test_heads_is_lazy_and_partial_iteration_reads_one_layer(deep_checkpoint) -> None:
    path, _, log = deep_checkpoint
    model = qm.load(path, checksum=False)
    log.clear()
    heads = model.heads()
    first = next(heads)
    assert (first.layer, first.head, first.kv_head) == (0, 0, 0)
    assert len(log) == 2  # q and k of layer 0
    for _ in range(7):
        next(heads)  # the rest of layer 0: no new reads
    assert len(log) == 2


def test_peak_memory_independent_of_depth(deep_checkpoint) -> None:
    path, _, _ = deep_checkpoint
    model = qm.load(path, checksum=False)
    one_layer = (8 + 2) * 8 * 64 * 8  # float64 bytes of W_Q and W_K of one layer
    total_qk = LAYERS * one_layer
    tracemalloc.start()
    try:
        count = 0
        for lw in model.layers():
            count += lw.W_Q.shape[0]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == LAYERS * 8
    assert peak < 6 * one_layer < total_qk / 5
