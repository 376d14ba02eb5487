"""Running a model on the probes and scoring every head (``docs/behaviour.md``).

The model runs in ``transformers`` on the CPU with eager attention and
``output_attentions=True``: the patterns scored are exactly the tensors the model
returns. The heads are keyed by the survey's own loader (:func:`qkforms.models.load`,
the maps that ``heads.parquet`` was computed from): for every layer,

1. the module of the ``transformers`` model that holds the layer's query map is found
   by its weights (the survey's ``W_Q`` of query head 0 is a block of its rows), and a
   hook records the vectors ``x`` entering it -- the input of the attention's
   projections;
2. the pre-softmax scores of every head are rebuilt from ``x`` and the survey's maps of
   that (layer, head, kv_head) (:mod:`qkforms.behaviour.reconstruct`), and their softmax
   must equal the model's pattern of the same head (largest difference
   ``pattern_max_dev``, at most :data:`PATTERN_TOL` for float32 models): this checks
   that head ``h`` of the table is head ``h`` of the model, with the key head the
   survey assigns to it;
3. on the random probe, the share of the variance of these scores explained by their
   bilinear part ``c x_j^T L x_i`` is accumulated (:class:`~.reconstruct.ShareSums`).

Step 2 and 3 need a score of the form the survey describes (no q/k normalization,
no soft-capping, no ALiBi, RoPE with linear or no scaling); for other models the
patterns are still scored, the keying is checked by the weights alone (every head's
maps found in the model) and the shares are null (the reason is in the manifest).

``torch`` and ``transformers`` are imported only when a function here runs
(the ``behaviour`` extra).

Examples
--------
>>> from qkforms.behaviour.probe_run import BehaviourOptions
>>> BehaviourOptions().sequences, BehaviourOptions().repeat
(16, 64)
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from qkforms.behaviour.probes import (
    Framing,
    Probe,
    TokenPool,
    make_probes,
    token_pool,
    tokenizer_framing,
)
from qkforms.behaviour.reconstruct import (
    ShareSums,
    layer_scores,
    pattern_deviation,
    softmax_pattern,
)
from qkforms.behaviour.scores import SCORES
from qkforms.behaviour.transformers_model import (
    forward_kwargs,
    import_torch,
    load_transformers,
    maps_present,
    projection_index,
    query_modules,
)
from qkforms.errors import (
    ParameterError,
    UnsupportedArchitectureError,
    VerificationError,
    format_value,
)
from qkforms.models import load
from qkforms.survey.rope import rope_settings

if TYPE_CHECKING:
    from qkforms.models import Model, ModelInfo

__all__ = [
    "PATTERN_TOL",
    "BehaviourOptions",
    "ModelScores",
    "rebuild_support",
    "score_model",
    "score_source",
]

#: largest difference allowed between a rebuilt pattern and the model's (per dtype of the
#: model; transformers' eager attention takes the softmax in float32 even for float64
#: models, so float64 runs agree to about 1e-7, float32 runs to about 1e-5)
PATTERN_TOL: dict[str, float] = {"float32": 1e-3, "float64": 1e-6}
#: the dtypes the model may run in
DTYPES: tuple[str, ...] = tuple(PATTERN_TOL)


@dataclass(frozen=True)
class BehaviourOptions:
    """Sizes, seed and resources of a behaviour run (all recorded in the manifest).

    Attributes
    ----------
    seed : int
        Seed of the probes.
    sequences : int
        Sequences per probe.
    length : int
        Random tokens per sequence of the random probe.
    repeat : int
        ``T``: tokens per copy of the repeated probe (bodies of ``2T``).
    rebuild : int
        Sequences of each probe whose scores are rebuilt from the survey's maps (the
        keying check and the bilinear shares; the first ones of each probe).
    batch : int or None
        Sequences per forward pass; default: as many as fit in ``memory_mb``.
    memory_mb : int
        Budget for the attention patterns of one forward pass (all layers, float32).
    dtype : str
        ``"float32"`` (default) or ``"float64"`` (slower; tests).
    threads : int or None
        torch threads (default 1: on the shared 2-core machine one thread ran the
        SmolLM2 forward pass in 7-8 s and two in 13 s; raise it on an idle machine).
    qk_norm : str
        The survey's q/k-norm policy for loading the maps (``"refuse"`` or ``"fold"``).
    progress : bool
        Progress lines on stderr.

    Examples
    --------
    >>> BehaviourOptions(sequences=4).batch_for(layers=30, heads=9, length=130)
    4
    """

    seed: int = 0
    sequences: int = 16
    length: int = 128
    repeat: int = 64
    rebuild: int = 4
    batch: int | None = None
    memory_mb: int = 128
    dtype: str = "float32"
    threads: int | None = None
    qk_norm: str = "refuse"
    progress: bool = True

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ParameterError(f"dtype must be one of {', '.join(DTYPES)}, got "
                                 f"{format_value(self.dtype)}")
        for name, low in (("sequences", 1), ("length", 2), ("repeat", 2), ("rebuild", 1),
                           ("memory_mb", 1)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ParameterError(f"{name} must be an integer >= {low}, got "
                                     f"{format_value(value)}")
        if self.batch is not None and (not isinstance(self.batch, int) or self.batch < 1):
            raise ParameterError(f"batch must be an integer >= 1, got "
                                 f"{format_value(self.batch)}")

    def batch_for(self, *, layers: int, heads: int, length: int) -> int:
        """Sequences per forward pass: ``batch``, or as many whose patterns (``layers x
        heads x length^2`` float32 values each) fit in ``memory_mb``; at least 1."""
        if self.batch is not None:
            return min(self.batch, self.sequences)
        per_sequence = layers * heads * length * length * 4
        return max(1, min(self.sequences, (self.memory_mb << 20) // max(1, per_sequence)))

    def recorded(self) -> dict[str, Any]:
        """The options as the manifest records them."""
        return asdict(self)


@dataclass
class ModelScores:
    """The behaviour rows of one model and its manifest entry.

    ``columns`` maps every column of :data:`qkforms.behaviour.schema.BEHAVIOUR` to a
    list (one value per (layer, query head), in layer and head order).
    """

    columns: dict[str, list[Any]]
    entry: dict[str, Any] = field(default_factory=dict)


def rebuild_support(info: ModelInfo) -> str | None:
    """Why the scores of this model cannot be rebuilt from its maps (None: they can).

    Examples
    --------
    >>> from qkforms.models.config import ArchSpec
    >>> from qkforms.models.records import ModelInfo
    >>> spec = ArchSpec("bloom", "bloom", 1, 8, 2, 2, 2, "alibi")
    >>> rebuild_support(ModelInfo("m", spec, "float32", ()))
    'ALiBi position biases are not rebuilt'
    """
    if info.qk_norm is not None:
        return "q/k-normalized heads: the score is not bilinear in the attention input"
    if info.attn_softcap is not None:
        return "soft-capped scores are not rebuilt"
    if info.positional == "alibi":
        return "ALiBi position biases are not rebuilt"
    if info.positional == "rope":
        try:
            rope_settings(info)
        except UnsupportedArchitectureError as exc:
            return str(exc)
    return None


def _say(opts: BehaviourOptions, text: str) -> None:
    if opts.progress:
        print(f"qkforms behaviour: {text}", file=sys.stderr, flush=True)


def _batches(probe: Probe, size: int) -> Iterator[tuple[int, NDArray[np.int64]]]:
    for start in range(0, probe.ids.shape[0], size):
        yield start, probe.ids[start:start + size]


@dataclass(frozen=True)
class _Setup:
    """What every step of :func:`score_model` reads: the model, its survey maps, probes."""

    torch_model: Any
    info: ModelInfo
    label: str
    opts: BehaviourOptions
    layers: list[Any]
    modules: list[tuple[str, Any]]
    reason: str | None
    probes: dict[str, Probe]
    rope: Any
    scale: float
    t0: float


@dataclass
class _Sums:
    """What the forward passes accumulate: score sums, sequence counts, pattern
    deviations, bilinear-share sums, batch sizes and timings."""

    scores: dict[str, NDArray[np.float64]]
    counts: dict[str, int]
    dev: NDArray[np.float64]
    shares: list[ShareSums]
    batches: dict[str, int] = field(default_factory=dict)
    forward_s: float = 0.0
    analysis_s: float = 0.0


def _model_probes(torch_model: Any, tokenizer: Any, info: ModelInfo,
                  opts: BehaviourOptions) -> tuple[TokenPool, Framing | None, dict[str, Probe]]:
    """The token pool (vocabulary of the model, its special ids excluded), the tokenizer's
    framing and the probes."""
    cfg = getattr(torch_model, "config", None)
    vocab = int(getattr(cfg, "vocab_size", 0) or 0)
    emb = torch_model.get_input_embeddings() if hasattr(torch_model,
                                                        "get_input_embeddings") else None
    if emb is not None:
        vocab = int(emb.weight.shape[0]) if not vocab else min(vocab,
                                                                int(emb.weight.shape[0]))
    special = [getattr(cfg, k, None) for k in ("bos_token_id", "eos_token_id",
                                               "pad_token_id", "unk_token_id")]
    pool: TokenPool = token_pool(tokenizer, vocab, special_ids=[
        s for s in special if isinstance(s, int)])
    framing = tokenizer_framing(tokenizer) if tokenizer is not None else None
    probes = make_probes(pool.ids, framing or Framing(), seed=opts.seed,
                         sequences=opts.sequences, length=opts.length,
                         repeat=opts.repeat, causal=info.causal)
    return pool, framing, probes


def _score_layer(run: _Setup, sums: _Sums, pname: str, probe: Probe, layer: int, A: Any,
                 captured: dict[int, Any], batch: tuple[int, int]) -> None:
    """Add one layer's patterns ``A`` of a batch of ``batch = (n, rb)`` sequences to the
    score sums; on the first ``rb``, rebuild the scores from the survey's maps and compare
    the patterns."""
    torch = import_torch()
    n, rb = batch
    if A.shape != (n, run.info.n_q, probe.layout.length, probe.layout.length):
        raise UnsupportedArchitectureError(
            f"{run.label}: layer {layer} returned patterns of shape "
            f"{tuple(A.shape)}, expected {(n, run.info.n_q)} x "
            f"{probe.layout.length}^2")
    for sname, score in SCORES.items():
        if score.probe == pname:
            sums.scores[sname][layer] += score.compute(A, probe.layout).sum(axis=0)
    if run.reason is None and rb:
        if layer not in captured:
            raise UnsupportedArchitectureError(
                f"{run.label}: layer {layer}: the module holding the query map "
                f"({run.modules[layer][0]}) was not called in the forward pass")
        x = captured[layer][:rb].to(torch.float64).numpy()
        s, b = layer_scores(x, run.layers[layer], rope=run.rope, scale=run.scale)
        rebuilt = softmax_pattern(s, causal=run.info.causal)
        sums.dev[layer] = np.maximum(sums.dev[layer], pattern_deviation(rebuilt, A[:rb]))
        if pname == "random":
            sums.shares[layer].add(s, b, probe.layout)


def _run_probes(run: _Setup) -> _Sums:
    """Run every probe through the model in batches, a hook recording the input of each
    layer's query module; score the patterns as they come."""
    torch = import_torch()
    n_layers, n_q = run.info.n_layers, run.info.n_q
    sums = _Sums(scores={s: np.zeros((n_layers, n_q)) for s in SCORES},
                 counts={p: 0 for p in run.probes}, dev=np.zeros((n_layers, n_q)),
                 shares=[ShareSums(n_q) for _ in range(n_layers)])
    captured: dict[int, Any] = {}

    def hook_for(layer: int) -> Any:
        def hook(_module: Any, args: tuple[Any, ...]) -> None:
            captured[layer] = args[0].detach()
        return hook

    handles = [m.register_forward_pre_hook(hook_for(i)) for i, (_n, m) in
               enumerate(run.modules)]
    kwargs = forward_kwargs(run.torch_model)
    try:
        for pname, probe in run.probes.items():
            size = run.opts.batch_for(layers=n_layers, heads=n_q, length=probe.layout.length)
            sums.batches[pname] = size
            total = -(-probe.ids.shape[0] // size)
            for k, (start, ids) in enumerate(_batches(probe, size)):
                rb = max(0, min(ids.shape[0], run.opts.rebuild - start))
                captured.clear()
                t = time.perf_counter()
                ids_t = torch.from_numpy(np.ascontiguousarray(ids))
                with torch.no_grad():
                    out = run.torch_model(input_ids=ids_t,
                                          attention_mask=torch.ones_like(ids_t), **kwargs)
                sums.forward_s += time.perf_counter() - t
                t = time.perf_counter()
                att = getattr(out, "attentions", None)
                if att is None or len(att) != n_layers or any(a is None for a in att):
                    raise UnsupportedArchitectureError(
                        f"{run.label}: the model returned no attention pattern per layer with "
                        "output_attentions=True (eager attention is needed)")
                for layer in range(n_layers):
                    A = att[layer].detach().to(torch.float64).numpy()
                    _score_layer(run, sums, pname, probe, layer, A, captured,
                                 (ids.shape[0], rb))
                sums.counts[pname] += ids.shape[0]
                sums.analysis_s += time.perf_counter() - t
                _say(run.opts, f"{run.label}: {pname} probe, batch {k + 1}/{total} "
                     f"({time.perf_counter() - run.t0:.1f} s)")
    finally:
        for h in handles:
            h.remove()
    return sums


def _check_keying(run: _Setup, dev: NDArray[np.float64]) -> str:
    """``"patterns"`` when every rebuilt pattern equals the model's within
    :data:`PATTERN_TOL`, ``"weights"`` when the scores are not rebuilt but every head's
    maps are held by the model; else a :class:`~qkforms.errors.VerificationError`."""
    tol = PATTERN_TOL[run.opts.dtype]
    if run.reason is None:
        worst = np.unravel_index(int(np.argmax(dev)), dev.shape)
        if dev[worst] > tol:
            raise VerificationError(
                f"{run.label}: layer {int(worst[0])}, head {int(worst[1])}: the attention "
                f"pattern rebuilt from the survey's maps differs from the model's by "
                f"{float(dev[worst]):.3g} (tolerance {tol:g}); the heads cannot be keyed "
                "like heads.parquet (docs/behaviour.md, \"Keying\")")
        return "patterns"
    index = projection_index(run.torch_model, run.info.N)
    if not all(maps_present(index, lw, run.info.N) for lw in run.layers):
        raise VerificationError(
            f"{run.label}: not every head's W_Q and W_K of the survey is held by the "
            "transformers model; the heads cannot be keyed like heads.parquet")
    return "weights"


def _columns(run: _Setup, sums: _Sums) -> dict[str, list[Any]]:
    """The behaviour rows: one per (layer, query head), in layer and head order."""
    # the behaviour schema sits on the survey schema, which loads python-flint: loaded
    # when a model is scored, not with ``import qkforms.behaviour.probe_run``
    # lazy: keeps python-flint out of this module's import
    from qkforms.behaviour.schema import BEHAVIOUR_COLUMNS

    info, reason = run.info, run.reason
    columns: dict[str, list[Any]] = {c: [] for c in BEHAVIOUR_COLUMNS}
    for layer, lw in enumerate(run.layers):
        full, row = sums.shares[layer].shares() if reason is None else (None, None)
        for h in range(info.n_q):
            columns["model"].append(run.label)
            columns["step"].append(None)
            columns["layer"].append(lw.layer)
            columns["head"].append(h)
            columns["kv_head"].append(int(lw.kv_index[h]))
            columns["N"].append(info.N)
            columns["n"].append(info.n)
            for sname, score in SCORES.items():
                columns[sname].append(float(sums.scores[sname][layer, h]
                                            / sums.counts[score.probe]))
            columns["bilinear_share"].append(None if full is None else float(full[h]))
            columns["bilinear_share_row"].append(None if row is None else float(row[h]))
            columns["pattern_max_dev"].append(None if reason is not None
                                              else float(sums.dev[layer, h]))
    return columns


def _manifest_entry(run: _Setup, sums: _Sums, key_check: str, pool: TokenPool,
                    framing: Framing | None, read_s: float) -> dict[str, Any]:
    """The model's manifest entry: keying, probes, token pool and timings."""
    reason, opts, dev = run.reason, run.opts, sums.dev
    tol = PATTERN_TOL[opts.dtype]
    return {
        "model": run.label,
        **run.info.as_dict(),
        "key_check": {
            "method": key_check,
            "meaning": ("softmax of the scores rebuilt from the survey's maps equals the "
                        "model's pattern of every head" if key_check == "patterns" else
                        "every head's survey maps are held by the model's weights "
                        "(head order not checked)"),
            "max_pattern_dev": float(dev.max()) if reason is None else None,
            "tolerance": tol if reason is None else None,
            "query_modules": [n for n, _m in run.modules],
        },
        "rebuilt": reason is None,
        "not_rebuilt_reason": reason,
        "score_scale": run.scale,
        "token_pool": {"size": pool.size, "excluded": pool.excluded, "rule": pool.rule,
                       "sha256": pool.digest()},
        "framing": None if framing is None else {"prefix": list(framing.prefix),
                                                 "suffix": list(framing.suffix)},
        "probes": {p.name: {"sequences": int(p.ids.shape[0]),
                            "tokens_per_sequence": int(p.layout.length),
                            "body_start": int(p.layout.body_start),
                            "body_length": int(p.layout.body_length),
                            "repeat": p.layout.repeat, "batch": sums.batches[p.name],
                            "rebuilt_sequences": (min(opts.rebuild, int(p.ids.shape[0]))
                                                  if reason is None else 0),
                            "ids_sha256": p.digest()} for p in run.probes.values()},
        "displacements": {s.name: s.displacement_for(opts.repeat) for s in SCORES.values()},
        "timings": {"read_s": read_s, "forward_s": sums.forward_s,
                    "analysis_s": sums.analysis_s, "wall_s": time.perf_counter() - run.t0},
    }


def score_model(torch_model: Any, heads: Model, *, tokenizer: Any = None,
                name: str | None = None,
                options: BehaviourOptions | None = None) -> ModelScores:
    """Score every head of a loaded ``transformers`` model, keyed by the survey's maps.

    Parameters
    ----------
    torch_model : transformers.PreTrainedModel
        The model to run (its base model or a model with a head; attention must be
        eager so that it returns patterns).
    heads : qkforms.models.Model
        The survey's loader of the same checkpoint: its layers give the head keys and the
        maps of the keying check (:func:`qkforms.models.load`).
    tokenizer : transformers tokenizer, optional
        Source of the token pool and framing (without one: the embedding's ids).
    name : str, optional
        The ``model`` column (default ``heads.info.name``).
    options : BehaviourOptions, optional

    Returns
    -------
    ModelScores
    """
    torch = import_torch()
    opts = options or BehaviourOptions()
    info = heads.info
    t0 = time.perf_counter()
    threads_before = torch.get_num_threads()
    torch.set_num_threads(opts.threads or 1)
    try:
        layers = list(heads.layers())
        read_s = time.perf_counter() - t0
        modules = query_modules(torch_model, layers, info.N)
        reason = rebuild_support(info)
        pool, framing, probes = _model_probes(torch_model, tokenizer, info, opts)
        run = _Setup(torch_model=torch_model, info=info, label=name or info.name, opts=opts,
                     layers=layers, modules=modules, reason=reason, probes=probes,
                     rope=info if (reason is None and info.positional == "rope") else None,
                     scale=info.attention_scale or 1.0 / math.sqrt(info.n), t0=t0)
        sums = _run_probes(run)
        key_check = _check_keying(run, sums.dev)
        return ModelScores(_columns(run, sums),
                           _manifest_entry(run, sums, key_check, pool, framing, read_s))
    finally:
        torch.set_num_threads(threads_before)


def score_source(source: str, *, options: BehaviourOptions | None = None,
                 name: str | None = None, download: bool = False) -> ModelScores:
    """Open a checkpoint with the survey's loader and ``transformers``; score its heads.

    Parameters
    ----------
    source : str
        What :func:`qkforms.models.load` accepts: a short name (``smollm2``, ``minilm``),
        a Hugging Face directory, a ``.gguf`` file, ...
    name : str, optional
        The ``model`` column (default: the loader's name, as in ``heads.parquet``).
    """
    opts = options or BehaviourOptions()
    import_torch()
    t = time.perf_counter()
    with load(source, download=download, qk_norm=opts.qk_norm, checksum=False) as heads:
        load_s = time.perf_counter() - t
        _say(opts, f"{heads.info.name}: opened with the survey's loader ({load_s:.1f} s); "
             "loading it in transformers")
        torch_model, tokenizer, loaded = load_transformers(heads.info, dtype=opts.dtype)
        _say(opts, f"{heads.info.name}: transformers model and tokenizer loaded "
             f"({loaded['torch_load_s'] + loaded['tokenizer_s']:.1f} s)")
        result = score_model(torch_model, heads, tokenizer=tokenizer, name=name, options=opts)
    result.entry["source"] = str(source)
    result.entry["transformers"] = loaded
    result.entry["timings"]["load_s"] = load_s
    return result
