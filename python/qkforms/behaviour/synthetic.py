"""A small survey directory with a behaviour table: inputs with known associations.

:func:`write_example` writes what ``qkforms survey`` and ``qkforms behaviour`` would
write for two toy models -- ``rope-toy`` (a RoPE model: its reduced factors are stored,
so the relative forms ``L(d)`` can be rebuilt) and ``abs-toy`` (absolute positions) --
from random heads through the survey's own computations
(:func:`qkforms.stats.synthetic_rows.survey_rows`, :func:`qkforms.reduce_heads`). The
behaviour scores are made up with known relations to the geometry: ``previous_token``
decreases with the distance to Θ (a perfect negative rank correlation),
``induction`` is a seeded draw independent of everything, ``sink`` is 0.9 on the
first head of every layer (a sink class) and 0.1 elsewhere. It is a test and
demonstration aid for the joins, not a behaviour run.

Examples
--------
>>> import tempfile
>>> from qkforms.behaviour.synthetic import write_example
>>> d = write_example(tempfile.mkdtemp())
>>> sorted(p.name for p in d.iterdir())  # doctest: +NORMALIZE_WHITESPACE
['behaviour.json', 'behaviour.parquet', 'factors', 'heads.parquet', 'manifest.json',
 'spectra.parquet']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from qkforms import Head, reduce_heads
from qkforms.behaviour.join import Joined, join_directory
from qkforms.behaviour.schema import BEHAVIOUR_COLUMNS, behaviour_schema
from qkforms.behaviour.scores import SCORES
from qkforms.stats.synthetic_rows import survey_rows
from qkforms.survey.schema import heads_schema, spectra_schema

__all__ = ["MODELS", "joined_example", "write_example"]

#: the toy models: name -> (layers, heads per layer, N, n, RoPE)
MODELS: dict[str, tuple[int, int, int, int, bool]] = {
    "rope-toy": (3, 4, 24, 4, True),
    "abs-toy": (2, 4, 20, 3, False),
}
#: the repeated probe's copy length recorded for the toy models
REPEAT = 8


def write_example(directory: str | Path, *, seed: int = 0) -> Path:
    """Write the toy survey and behaviour files into ``directory``; return it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = Path(directory)
    (d / "factors").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    heads_cols: dict[str, list[Any]] = {}
    spectra_cols: dict[str, list[Any]] = {}
    beh: dict[str, list[Any]] = {c: [] for c in BEHAVIOUR_COLUMNS}
    survey_models, behaviour_models = [], []
    for model, (layers, per, N, n, rope) in MODELS.items():
        pairs = [rng.standard_normal((2, n, N)) * rng.uniform(0.3, 3.0, size=(2, n, 1))
                 for _ in range(layers * per)]
        h, s = survey_rows(model, [Head(q, k) for q, k in pairs], heads_per_layer=per)
        for k, v in h.items():
            heads_cols.setdefault(k, []).extend(v)
        for k, v in s.items():
            spectra_cols.setdefault(k, []).extend(v)
        entry: dict[str, Any] = {"model": model, "key": model, "N": N, "n": n,
                                 "positional": "rope" if rope else "absolute",
                                 "factors": None, "files": []}
        if rope:
            arrays: dict[str, Any] = {}
            for layer in range(layers):
                red = reduce_heads(np.stack([q for q, _k in pairs[layer * per:(layer + 1) * per]]),
                                   np.stack([k for _q, k in pairs[layer * per:(layer + 1) * per]]))
                arrays[f"L{layer:04d}_Q_red"] = red.Q_red
                arrays[f"L{layer:04d}_K_red"] = red.K_red
            np.savez(str(d / "factors" / f"{model}.npz"), **arrays)
            entry.update(factors=f"factors/{model}.npz", rope_base=100.0, rotary_fraction=1.0,
                         rope_scaling=None, rope_layout="split-half")
        survey_models.append(entry)
        theta = np.asarray(h["theta_dist"], dtype=np.float64)
        order = np.argsort(np.argsort(theta))
        count = theta.size
        beh["model"] += [model] * count
        beh["step"] += [None] * count
        for key in ("layer", "head", "kv_head", "N", "n"):
            beh[key] += list(h[key])
        scores: dict[str, Any] = {
            "previous_token": 1.0 - (order + 0.5) / count,
            "induction": rng.uniform(0.0, 1.0, count),
            "duplicate_token": rng.uniform(0.0, 0.3, count),
            "sink": np.where(np.asarray(h["head"]) == 0, 0.9, 0.1),
            "mean_distance": rng.uniform(1.0, 10.0, count),
            "entropy": rng.uniform(0.0, 2.0, count),
            "entropy_norm": rng.uniform(0.0, 1.0, count),
            "bilinear_share": rng.uniform(-1.0, 1.0, count),
            "bilinear_share_row": rng.uniform(0.0, 1.0, count),
            "pattern_max_dev": np.full(count, 1e-7),
        }
        for k, v in scores.items():
            beh[k] += [float(x) for x in v]
        behaviour_models.append({"model": model, "files": [], "probes": {"repeated": {
            "repeat": REPEAT}}, "displacements": {s.name: s.displacement_for(REPEAT)
                                                  for s in SCORES.values()}})
    pq.write_table(pa.table(heads_cols, schema=heads_schema()), d / "heads.parquet")
    pq.write_table(pa.table(spectra_cols, schema=spectra_schema()), d / "spectra.parquet")
    pq.write_table(pa.table(beh, schema=behaviour_schema()), d / "behaviour.parquet")
    (d / "manifest.json").write_text(json.dumps({"models": survey_models}), encoding="utf-8")
    (d / "behaviour.json").write_text(json.dumps({"models": behaviour_models}),
                                      encoding="utf-8")
    return d


def joined_example(seed: int = 0) -> Joined:
    """The join of a fresh :func:`write_example` directory (a temporary one).

    Examples
    --------
    >>> j = joined_example()
    >>> len(j.heads), sorted(set(j.forms["model"]))
    (20, ['rope-toy'])
    """
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        joined = join_directory(write_example(tmp, seed=seed))
    assert joined is not None  # write_example wrote a behaviour table
    return joined
