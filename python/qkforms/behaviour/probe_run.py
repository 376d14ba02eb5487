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
>>> from qkforms.behaviour.runner import BehaviourOptions
>>> BehaviourOptions().sequences, BehaviourOptions().repeat
(16, 64)
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from qkforms.behaviour.probes import Probe, TokenPool
from qkforms.errors import (
    CheckpointError,
    ParameterError,
    QKFormsError,
    UnsupportedArchitectureError,
    VerificationError,
    format_value,
)

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
#: files of a Hugging Face directory that hold a tokenizer's vocabulary (without one,
#: transformers 5 builds an empty tokenizer)
TOKENIZER_FILES: tuple[str, ...] = ("tokenizer.json", "tokenizer.model", "vocab.txt",
                                    "vocab.json", "spiece.model", "sentencepiece.bpe.model")
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
    from qkforms.survey.rope import rope_settings

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


# --------------------------------------------------------------------------- loading


def _import_torch() -> Any:
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError as exc:
        raise QKFormsError(
            f"qkforms behaviour runs the model with torch and transformers ({exc.name} is "
            "not installed): pip install 'qkforms[behaviour]' (torch==2.13.0 is the CPU "
            "wheel; install it first where the default index serves a CUDA build)") from None
    return torch


def load_transformers(info: ModelInfo, *, dtype: str) -> tuple[Any, Any, dict[str, Any]]:
    """The ``transformers`` model (eager attention, eval mode) and tokenizer of a checkpoint
    the survey's loader opened, and what was loaded (for the manifest).

    GGUF files go through ``transformers``' GGUF loading
    (``from_pretrained(directory, gguf_file=...)``, which dequantizes with the ``gguf``
    package and builds the tokenizer from the file's metadata); Hugging Face directories
    through ``from_pretrained(directory)``. Without tokenizer files the probes draw from
    the embedding's ids (recorded).
    """
    torch = _import_torch()
    import transformers

    files = [f.path for f in info.files]
    kwargs: dict[str, Any] = {"attn_implementation": "eager", "dtype": getattr(torch, dtype)}
    if info.format == "gguf":
        path = files[-1]
        where: dict[str, Any] = {"pretrained_model_name_or_path": os.path.dirname(path),
                                 "gguf_file": os.path.basename(path)}
    elif info.format == "safetensors":
        where = {"pretrained_model_name_or_path": os.path.dirname(files[0])}
    else:
        raise UnsupportedArchitectureError(
            f"{info.name}: qkforms behaviour runs safetensors directories and GGUF files "
            f"(this checkpoint is {info.format})")
    t = time.perf_counter()
    try:
        model = transformers.AutoModel.from_pretrained(**where, **kwargs)
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise CheckpointError(f"{info.name}: transformers cannot load "
                              f"{where['pretrained_model_name_or_path']} "
                              f"({type(exc).__name__}: {exc})") from exc
    model.eval()
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    tokenizer = None
    note = "the model's tokenizer"
    directory = str(where["pretrained_model_name_or_path"])
    if info.format != "gguf" and not any(os.path.isfile(os.path.join(directory, f))
                                         for f in TOKENIZER_FILES):
        note = ("no tokenizer files next to the checkpoint; tokens drawn from the embedding's "
                "ids")
    else:
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(**where)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            note = (f"no tokenizer ({type(exc).__name__}: {str(exc).splitlines()[0][:200]}); "
                    "tokens drawn from the embedding's ids")
    return model, tokenizer, {"loader": "transformers.AutoModel.from_pretrained",
                              **{k: str(v) for k, v in where.items()},
                              "class": type(model).__name__, "torch_load_s": load_s,
                              "tokenizer_s": time.perf_counter() - t, "tokenizer": note,
                              "tokenizer_class": type(tokenizer).__name__
                              if tokenizer is not None else None}


# --------------------------------------------------------------------------- keying


def _linear_rows(module: Any, N: int) -> Any:
    """The weight of a projection module as (out, N) rows (Linear, or GPT-2's Conv1D)."""
    w = getattr(module, "weight", None)
    if w is None or getattr(w, "ndim", 0) != 2:
        return None
    if type(module).__name__ == "Conv1D" and w.shape[0] == N:
        return w.detach().T
    if w.shape[1] == N:
        return w.detach()
    return None


def _projection_index(torch_model: Any, N: int) -> list[tuple[str, Any, NDArray[np.float64],
                                                               NDArray[np.float64]]]:
    """(name, module, row fingerprints, probe vector) of every projection from R^N."""
    torch = _import_torch()
    v = np.random.default_rng(0).standard_normal(N)
    out = []
    for name, module in torch_model.named_modules():
        rows = _linear_rows(module, N)
        if rows is None or isinstance(module, torch.nn.Embedding):
            continue
        fp = (rows.to(torch.float64) @ torch.from_numpy(v)).numpy()
        out.append((name, module, fp, v))
    return out


def _find_block(index: list[Any], block: NDArray[np.float64], taken: set[str],
                N: int) -> tuple[str, Any, int] | None:
    """The first module (not in ``taken``) whose rows hold ``block`` (n x N) contiguously."""
    target = float(block[0] @ index[0][3]) if index else 0.0
    scale = float(np.abs(block).max()) or 1.0
    tol = 1e-5 * scale * math.sqrt(N)
    for name, module, fp, _v in index:
        if name in taken:
            continue
        for r in np.flatnonzero(np.abs(fp - target) <= tol):
            if r + block.shape[0] > fp.size:
                continue
            rows = _linear_rows(module, N)[int(r): int(r) + block.shape[0]]
            cand = rows.double().numpy()
            if np.allclose(cand, block, rtol=1e-5, atol=1e-6 * scale):
                return name, module, int(r)
    return None


def query_modules(torch_model: Any, layers: Sequence[Any], N: int) -> list[tuple[str, Any]]:
    """For each layer, the module holding the survey's query map (found by its weights).

    Raises
    ------
    VerificationError
        When a layer's ``W_Q`` of query head 0 is not a block of rows of any module:
        the ``transformers`` model does not hold the maps the survey read.
    """
    index = _projection_index(torch_model, N)
    taken: set[str] = set()
    found = []
    for lw in layers:
        hit = _find_block(index, np.asarray(lw.W_Q[0]), taken, N)
        if hit is None:
            raise VerificationError(
                f"layer {lw.layer}: no module of the transformers model holds the survey's "
                "query map of head 0 (W_Q); the model run is not the checkpoint the survey "
                "reads, or it stores its projections in a layout qkforms does not know")
        taken.add(hit[0])
        found.append((hit[0], hit[1]))
    return found


def _maps_present(index: list[Any], lw: Any, N: int) -> bool:
    """Whether every head's W_Q and every key head's W_K is a row block of some module."""
    blocks = [np.asarray(b) for b in (*lw.W_Q, *lw.W_K)]
    return all(_find_block(index, b, set(), N) is not None for b in blocks)


# --------------------------------------------------------------------------- running


def _forward_kwargs(torch_model: Any) -> dict[str, Any]:
    import inspect

    params = inspect.signature(torch_model.forward).parameters
    extra: dict[str, Any] = {"output_attentions": True}
    if "use_cache" in params:
        extra["use_cache"] = False
    return extra


def _batches(probe: Probe, size: int) -> Iterator[tuple[int, NDArray[np.int64]]]:
    for start in range(0, probe.ids.shape[0], size):
        yield start, probe.ids[start:start + size]


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
    from qkforms.behaviour.probes import make_probes, token_pool, tokenizer_framing
    from qkforms.behaviour.reconstruct import (
        ShareSums,
        layer_scores,
        pattern_deviation,
        softmax_pattern,
    )
    from qkforms.behaviour.schema import BEHAVIOUR_COLUMNS
    from qkforms.behaviour.scores import SCORES

    torch = _import_torch()
    opts = options or BehaviourOptions()
    info = heads.info
    label = name or info.name
    t0 = time.perf_counter()
    threads_before = torch.get_num_threads()
    torch.set_num_threads(opts.threads or 1)
    try:
        layers = list(heads.layers())
        read_s = time.perf_counter() - t0
        modules = query_modules(torch_model, layers, info.N)
        reason = rebuild_support(info)
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
        from qkforms.behaviour.probes import Framing

        probes = make_probes(pool.ids, framing or Framing(), seed=opts.seed,
                             sequences=opts.sequences, length=opts.length,
                             repeat=opts.repeat, causal=info.causal)
        scale = info.attention_scale or 1.0 / math.sqrt(info.n)
        rope = info if (reason is None and info.positional == "rope") else None
        n_layers, n_q = info.n_layers, info.n_q
        sums = {s: np.zeros((n_layers, n_q)) for s in SCORES}
        counts = {p: 0 for p in probes}
        dev = np.zeros((n_layers, n_q))
        shares = [ShareSums(n_q) for _ in range(n_layers)]
        captured: dict[int, Any] = {}

        def hook_for(layer: int) -> Any:
            def hook(_module: Any, args: tuple[Any, ...]) -> None:
                captured[layer] = args[0].detach()
            return hook

        handles = [m.register_forward_pre_hook(hook_for(i)) for i, (_n, m) in
                   enumerate(modules)]
        kwargs = _forward_kwargs(torch_model)
        forward_s = analysis_s = 0.0
        batches: dict[str, int] = {}
        try:
            for pname, probe in probes.items():
                size = opts.batch_for(layers=n_layers, heads=n_q, length=probe.layout.length)
                batches[pname] = size
                total = -(-probe.ids.shape[0] // size)
                for k, (start, ids) in enumerate(_batches(probe, size)):
                    rb = max(0, min(ids.shape[0], opts.rebuild - start))
                    captured.clear()
                    t = time.perf_counter()
                    ids_t = torch.from_numpy(np.ascontiguousarray(ids))
                    with torch.no_grad():
                        out = torch_model(input_ids=ids_t, attention_mask=torch.ones_like(ids_t),
                                          **kwargs)
                    forward_s += time.perf_counter() - t
                    t = time.perf_counter()
                    att = getattr(out, "attentions", None)
                    if att is None or len(att) != n_layers or any(a is None for a in att):
                        raise UnsupportedArchitectureError(
                            f"{label}: the model returned no attention pattern per layer with "
                            "output_attentions=True (eager attention is needed)")
                    for layer in range(n_layers):
                        A = att[layer].detach().to(torch.float64).numpy()
                        if A.shape != (ids.shape[0], n_q, probe.layout.length,
                                       probe.layout.length):
                            raise UnsupportedArchitectureError(
                                f"{label}: layer {layer} returned patterns of shape "
                                f"{tuple(A.shape)}, expected {(ids.shape[0], n_q)} x "
                                f"{probe.layout.length}^2")
                        for sname, score in SCORES.items():
                            if score.probe == pname:
                                sums[sname][layer] += score.compute(A, probe.layout).sum(axis=0)
                        if reason is None and rb:
                            if layer not in captured:
                                raise UnsupportedArchitectureError(
                                    f"{label}: layer {layer}: the module holding the query map "
                                    f"({modules[layer][0]}) was not called in the forward pass")
                            x = captured[layer][:rb].to(torch.float64).numpy()
                            s, b = layer_scores(x, layers[layer], rope=rope, scale=scale)
                            rebuilt = softmax_pattern(s, causal=info.causal)
                            dev[layer] = np.maximum(dev[layer],
                                                    pattern_deviation(rebuilt, A[:rb]))
                            if pname == "random":
                                shares[layer].add(s, b, probe.layout)
                    counts[pname] += ids.shape[0]
                    analysis_s += time.perf_counter() - t
                    _say(opts, f"{label}: {pname} probe, batch {k + 1}/{total} "
                         f"({time.perf_counter() - t0:.1f} s)")
        finally:
            for h in handles:
                h.remove()
        tol = PATTERN_TOL[opts.dtype]
        if reason is None:
            worst = np.unravel_index(int(np.argmax(dev)), dev.shape)
            if dev[worst] > tol:
                raise VerificationError(
                    f"{label}: layer {int(worst[0])}, head {int(worst[1])}: the attention "
                    f"pattern rebuilt from the survey's maps differs from the model's by "
                    f"{float(dev[worst]):.3g} (tolerance {tol:g}); the heads cannot be keyed "
                    "like heads.parquet (docs/behaviour.md, \"Keying\")")
            key_check = "patterns"
        else:
            index = _projection_index(torch_model, info.N)
            if not all(_maps_present(index, lw, info.N) for lw in layers):
                raise VerificationError(
                    f"{label}: not every head's W_Q and W_K of the survey is held by the "
                    "transformers model; the heads cannot be keyed like heads.parquet")
            key_check = "weights"
        columns: dict[str, list[Any]] = {c: [] for c in BEHAVIOUR_COLUMNS}
        for layer, lw in enumerate(layers):
            full, row = shares[layer].shares() if reason is None else (None, None)
            for h in range(n_q):
                columns["model"].append(label)
                columns["step"].append(None)
                columns["layer"].append(lw.layer)
                columns["head"].append(h)
                columns["kv_head"].append(int(lw.kv_index[h]))
                columns["N"].append(info.N)
                columns["n"].append(info.n)
                for sname, score in SCORES.items():
                    columns[sname].append(float(sums[sname][layer, h] / counts[score.probe]))
                columns["bilinear_share"].append(None if full is None else float(full[h]))
                columns["bilinear_share_row"].append(None if row is None else float(row[h]))
                columns["pattern_max_dev"].append(None if reason is not None
                                                  else float(dev[layer, h]))
        entry = {
            "model": label,
            **info.as_dict(),
            "key_check": {
                "method": key_check,
                "meaning": ("softmax of the scores rebuilt from the survey's maps equals the "
                            "model's pattern of every head" if key_check == "patterns" else
                            "every head's survey maps are held by the model's weights "
                            "(head order not checked)"),
                "max_pattern_dev": float(dev.max()) if reason is None else None,
                "tolerance": tol if reason is None else None,
                "query_modules": [n for n, _m in modules],
            },
            "rebuilt": reason is None,
            "not_rebuilt_reason": reason,
            "score_scale": scale,
            "token_pool": {"size": pool.size, "excluded": pool.excluded, "rule": pool.rule,
                           "sha256": pool.digest()},
            "framing": None if framing is None else {"prefix": list(framing.prefix),
                                                     "suffix": list(framing.suffix)},
            "probes": {p.name: {"sequences": int(p.ids.shape[0]),
                                "tokens_per_sequence": int(p.layout.length),
                                "body_start": int(p.layout.body_start),
                                "body_length": int(p.layout.body_length),
                                "repeat": p.layout.repeat, "batch": batches[p.name],
                                "rebuilt_sequences": (min(opts.rebuild, int(p.ids.shape[0]))
                                                      if reason is None else 0),
                                "ids_sha256": p.digest()} for p in probes.values()},
            "displacements": {s.name: s.displacement_for(opts.repeat) for s in SCORES.values()},
            "timings": {"read_s": read_s, "forward_s": forward_s, "analysis_s": analysis_s,
                        "wall_s": time.perf_counter() - t0},
        }
        return ModelScores(columns, entry)
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
    from qkforms.models import load

    opts = options or BehaviourOptions()
    _import_torch()
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
