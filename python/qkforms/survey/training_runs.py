"""Training runs as survey sources: a series of checkpoints ordered by training step.

A *training run* is read from

* a run directory whose subdirectories are checkpoints named ``checkpoint-<step>``
  (Hugging Face ``Trainer``), ``step<step>`` / ``step-<step>`` / ``step_<step>``, or
  ``global_step<step>`` (DeepSpeed), or that hold a ``trainer_state.json``;
* an explicit list of checkpoint directories (``qkforms survey --series A B C``);
* a hub id with a list of revisions (``--revisions step1000 step2000``; the step is
  read from the revision name), resolved through the local Hugging Face cache (or
  fetched with ``--download`` where a network exists).

The step of a checkpoint comes from its ``trainer_state.json`` (``global_step``) when
there is one, otherwise from its name; when both exist they must agree. The tokens seen
come from ``trainer_state.json`` (``num_input_tokens_seen``, top level or the last
``log_history`` entry that has it) and are null otherwise. Checkpoints are ordered by
step; two checkpoints with the same step are refused.

Every checkpoint of a run becomes one survey *unit* (:class:`Unit`): its rows carry the
run's name in ``model`` and the checkpoint's ``step`` / ``tokens_seen``; its parts live
in ``DIR/parts/<run>.step-<step:09d>/`` so that ``--resume`` works per
(checkpoint, layer). :func:`survey_units` runs the units with the local executor
(each checkpoint through the survey's layer pipeline,
:func:`qkforms.survey.pipeline.survey_model`) or the dask executor
(:mod:`qkforms.survey.dask_executor`: every (checkpoint, layer) task at once), then merges
the parts in (unit, layer) order and writes one manifest describing the run.

Examples
--------
>>> from qkforms.survey.training_runs import step_from_name
>>> step_from_name("checkpoint-1200"), step_from_name("global_step30"), step_from_name("main")
(1200, 30, None)
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qkforms._fs import read_json
from qkforms.errors import CheckpointError, QKFormsError, UnsafePathError, format_value
from qkforms.models import load
from qkforms.models.sources import resolve_hub
from qkforms.survey.dask_executor import LayerTask, run_dask_layers
from qkforms.survey.options import SurveyOptions, parse_layers
from qkforms.survey.outdir import OutputLock, check_resume_models, open_output
from qkforms.survey.pipeline import (
    discard_factor_streams,
    finish_survey,
    prepare_model,
    survey_model,
    unique_labels,
)

if TYPE_CHECKING:
    from qkforms.models import Model
    from qkforms.survey.manifest import ModelRun

__all__ = [
    "Checkpoint",
    "Series",
    "Unit",
    "check_same_architecture",
    "discover_run",
    "is_run_directory",
    "read_trainer_state",
    "series_from_paths",
    "series_from_revisions",
    "step_from_name",
    "survey_units",
    "units_for",
]

#: largest step (and token count): the ``step`` and ``tokens_seen`` columns are int64
MAX_STEP = 2**63 - 1
#: checkpoint directory names of a run (the step is the number)
_STEP_NAME = re.compile(r"^(?:checkpoint|global_step|step|ckpt|iter)[-_]?(\d+)$", re.I)


def step_from_name(name: str) -> int | None:
    """The step written in a checkpoint's (or revision's) name, or None.

    Examples
    --------
    >>> from qkforms.survey.training_runs import step_from_name
    >>> [step_from_name(s) for s in ("step_40", "step-7", "ckpt5", "checkpoint-x")]
    [40, 7, 5, None]

    Raises
    ------
    CheckpointError
        For a step beyond :data:`MAX_STEP`.
    """
    m = _STEP_NAME.match(name.strip())
    if m is None:
        return None
    if len(m.group(1)) > 19 or int(m.group(1)) > MAX_STEP:
        raise CheckpointError(f"{name}: step {m.group(1)} is beyond the largest step a survey "
                              f"records ({MAX_STEP}, the int64 range of the step column)")
    return int(m.group(1))


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint of a run.

    Attributes
    ----------
    source : str
        What :func:`qkforms.models.load` opens (a directory, or a snapshot path).
    step : int
    tokens_seen : int or None
    name : str
        Directory or revision name.
    step_from : str
        ``"trainer_state"`` or ``"name"``.
    revision : str or None
        Hub revision, when the run came from a hub id.
    """

    source: str
    step: int
    tokens_seen: int | None
    name: str
    step_from: str
    revision: str | None = None


@dataclass
class Series:
    """A training run: its name, where it came from, and its checkpoints by step."""

    name: str
    root: str
    checkpoints: list[Checkpoint] = field(default_factory=list)

    @property
    def steps(self) -> list[int]:
        """The steps, increasing."""
        return [c.step for c in self.checkpoints]


def read_trainer_state(directory: str | os.PathLike[str]) -> tuple[int | None, int | None]:
    """``(global_step, tokens_seen)`` from ``DIR/trainer_state.json`` (None when absent).

    ``tokens_seen`` is ``num_input_tokens_seen`` at the top level, else in the last
    ``log_history`` entry that has it (at a step not after ``global_step``).

    Raises
    ------
    CheckpointError
        If the file exists but is not valid JSON or has non-integer fields.

    Examples
    --------
    >>> import tempfile, json, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "trainer_state.json").write_text(json.dumps(
    ...     {"global_step": 50, "log_history": [{"step": 50, "num_input_tokens_seen": 6400}]}))
    >>> read_trainer_state(d), read_trainer_state(d / "nowhere")
    ((50, 6400), (None, None))
    """
    path = Path(directory) / "trainer_state.json"
    if not os.path.lexists(path):  # a FIFO or device is refused below, never "absent"
        return None, None
    try:
        state = read_json(path, "trainer state")
    except UnsafePathError:
        raise
    except QKFormsError as exc:
        raise CheckpointError(str(exc)) from exc
    if not isinstance(state, dict):
        raise CheckpointError(f"{path}: expected a JSON object")

    def integer(value: Any, what: str) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                math.isfinite(value) and value == int(value) and 0 <= value <= MAX_STEP):
            raise CheckpointError(f"{path}: {what} must be an integer between 0 and "
                                  f"{MAX_STEP}, got {format_value(value)}")
        return int(value)

    step = integer(state.get("global_step"), "global_step")
    tokens = integer(state.get("num_input_tokens_seen"), "num_input_tokens_seen")
    if tokens is None:
        for entry in reversed(state.get("log_history") or []):
            if not isinstance(entry, dict) or "num_input_tokens_seen" not in entry:
                continue
            if step is not None and isinstance(entry.get("step"), int) and entry["step"] > step:
                continue
            tokens = integer(entry["num_input_tokens_seen"], "num_input_tokens_seen")
            break
    return step, tokens


def _checkpoint(path: Path, *, name: str | None = None,
                revision: str | None = None) -> Checkpoint | None:
    """A checkpoint from a directory, or None if neither its name nor a state gives a step."""
    label = name or path.name
    by_name = step_from_name(label)
    by_state, tokens = read_trainer_state(path)
    if by_state is not None and by_name is not None and by_state != by_name:
        raise CheckpointError(
            f"{path}: its name says step {by_name} but trainer_state.json says global_step "
            f"{by_state}; rename the directory or fix the state file")
    if by_state is not None:
        return Checkpoint(str(path), by_state, tokens, label, "trainer_state", revision)
    if by_name is not None:
        return Checkpoint(str(path), by_name, tokens, label, "name", revision)
    return None


def _ordered(checkpoints: list[Checkpoint], where: str) -> list[Checkpoint]:
    checkpoints = sorted(checkpoints, key=lambda c: c.step)
    for a, b in zip(checkpoints, checkpoints[1:], strict=False):
        if a.step == b.step:
            raise CheckpointError(f"{where}: two checkpoints have step {a.step} "
                                  f"({a.name!r} and {b.name!r})")
    return checkpoints


def is_run_directory(path: str | os.PathLike[str]) -> bool:
    """True for a directory that is not itself a model but holds checkpoints.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> (d / "checkpoint-10").mkdir()
    >>> is_run_directory(d), is_run_directory(d / "checkpoint-10")
    (True, False)
    """
    p = Path(path)
    if not p.is_dir() or (p / "config.json").is_file():
        return False
    if any(e.suffix.lower() == ".gguf" for e in p.iterdir()):
        return False
    return any(e.is_dir() and (step_from_name(e.name) is not None
                               or os.path.lexists(e / "trainer_state.json"))
               for e in p.iterdir())


def discover_run(root: str | os.PathLike[str], *, name: str | None = None) -> Series:
    """The checkpoints of a run directory, ordered by step.

    Raises
    ------
    CheckpointError
        If ``root`` holds no checkpoint directory, or two have the same step.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "run"
    >>> for s in ("checkpoint-20", "checkpoint-3", "logs"):
    ...     (d / s).mkdir(parents=True)
    >>> discover_run(d).steps
    [3, 20]
    """
    p = Path(root)
    if not p.is_dir():
        raise CheckpointError(f"{p}: not a directory")
    found = []
    for entry in sorted(p.iterdir()):
        if entry.is_dir():
            ck = _checkpoint(entry)
            if ck is not None:
                found.append(ck)
    if not found:
        raise CheckpointError(
            f"{p}: no checkpoints found (expected subdirectories checkpoint-<step>/, "
            "step<step>/ or global_step<step>/, or with a trainer_state.json)")
    return Series(name or p.resolve().name, str(p), _ordered(found, str(p)))


def series_from_paths(paths: Sequence[str | os.PathLike[str]], *,
                      name: str | None = None) -> Series:
    """A run given as an explicit list of checkpoint directories (ordered by step).

    Raises
    ------
    CheckpointError
        If a path is not a directory, a step cannot be told, or two steps coincide.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> a, b = d / "step200", d / "step100"
    >>> a.mkdir(); b.mkdir()
    >>> s = series_from_paths([a, b])
    >>> s.steps, s.name == d.resolve().name
    ([100, 200], True)
    """
    found = []
    for path in paths:
        p = Path(path)
        if not p.is_dir():
            raise CheckpointError(f"{p}: a checkpoint of a series must be a model directory")
        ck = _checkpoint(p)
        if ck is None:
            raise CheckpointError(
                f"{p}: cannot tell the training step (name it checkpoint-<step> or "
                "step<step>, or give it a trainer_state.json with global_step)")
        found.append(ck)
    if not found:
        raise QKFormsError("--series needs at least one checkpoint directory")
    parents = {Path(c.source).resolve().parent for c in found}
    default = parents.pop().name if len(parents) == 1 else "series"
    root = os.path.commonpath([str(Path(c.source).resolve()) for c in found])
    return Series(name or default, root, _ordered(found, "--series"))


def series_from_revisions(repo_id: str, revisions: Sequence[str], *, download: bool = False,
                          name: str | None = None) -> Series:
    """A run published as revisions of one hub repository (e.g. ``step1000``).

    Each revision is resolved to a local snapshot through ``huggingface_hub`` (from the
    local cache unless ``download``). The step is read from the snapshot's
    ``trainer_state.json`` or, failing that, from the revision's name.

    Raises
    ------
    ModelNotFoundError
        A revision is neither cached nor fetched.
    CheckpointError
        The step of a revision cannot be told, or two revisions share one.
    """
    found = []
    for rev in revisions:
        snap = Path(resolve_hub(repo_id, download, revision=rev))
        ck = _checkpoint(snap, name=rev, revision=rev)
        if ck is None:
            raise CheckpointError(
                f"{repo_id}@{rev}: cannot tell the training step of this revision (name "
                "revisions step<step>, or publish a trainer_state.json)")
        found.append(ck)
    if not found:
        raise QKFormsError("--revisions needs at least one revision")
    return Series(name or repo_id, repo_id, _ordered(found, repo_id))


# ------------------------------------------------------------------------------ units


@dataclass
class Unit:
    """One thing surveyed into its own parts: a model, or one checkpoint of a run.

    Attributes
    ----------
    source : str
        What :func:`qkforms.models.load` opens.
    label : str
        Its value in the ``model`` column.
    key : str
        Its parts directory under ``DIR/parts``.
    step, tokens_seen : int or None
        The checkpoint's place in its run (None for a model).
    run : str or None
        The run's key (None for a model).
    checkpoint : Checkpoint or None
    """

    source: str
    label: str
    key: str
    step: int | None = None
    tokens_seen: int | None = None
    run: str | None = None
    checkpoint: Checkpoint | None = None


def units_for(entries: Sequence[str | Series], *, names: Sequence[str] | None = None) -> list[Unit]:
    """Survey units of models (sources) and runs (:class:`Series`), with unique labels/keys.

    ``names`` are the display names of the plain sources (default: the source text);
    a run's label is its name. Labels and keys are made unique like the survey's.

    Examples
    --------
    >>> from qkforms.survey.training_runs import Checkpoint, Series, units_for
    >>> run = Series("tiny", "/r", [Checkpoint("/r/c-0", 0, None, "c-0", "name"),
    ...                             Checkpoint("/r/c-5", 5, 80, "c-5", "name")])
    >>> [(u.label, u.key, u.step) for u in units_for([run])]
    [('tiny', 'tiny.step-000000000', 0), ('tiny', 'tiny.step-000000005', 5)]
    """
    plain = iter(names or [])
    names_all = [e.name if isinstance(e, Series) else next(plain, str(e)) for e in entries]
    keys, labels = unique_labels(names_all)
    units: list[Unit] = []
    for e, label, key in zip(entries, labels, keys, strict=True):
        if isinstance(e, Series):
            for ck in e.checkpoints:
                units.append(Unit(ck.source, label, f"{key}.step-{ck.step:09d}", ck.step,
                                  ck.tokens_seen, key, ck))
        else:
            units.append(Unit(str(e), label, key))
    return units


def _run_entries(units: Sequence[Unit], series: Sequence[Series]) -> list[dict[str, Any]]:
    """The manifest's ``runs``: one entry per training run."""
    out = []
    by_run: dict[str, list[Unit]] = {}
    for u in units:
        if u.run is not None:
            by_run.setdefault(u.run, []).append(u)
    for s, (key, us) in zip(series, by_run.items(), strict=True):
        out.append({
            "model": us[0].label,
            "key": key,
            "source": s.root,
            "checkpoints": [{"step": u.step, "tokens_seen": u.tokens_seen,
                             "name": u.checkpoint.name if u.checkpoint else None,
                             "step_from": u.checkpoint.step_from if u.checkpoint else None,
                             "revision": u.checkpoint.revision if u.checkpoint else None,
                             "parts": u.key} for u in us],
            "steps": [u.step for u in us],
        })
    return out


def survey_units(
    units: Sequence[Unit],
    opts: SurveyOptions,
    *,
    argv: Sequence[str] | None = None,
    series: Sequence[Series] = (),
    client: Any = None,
) -> dict[str, Any]:
    """Survey models and checkpoints into ``opts.out``; return the manifest.

    With ``opts.executor == "local"`` each unit goes through the survey's layer pipeline
    in turn (read-ahead, compute threads, ``--workers`` processes); with ``"dask"``
    every (unit, layer) task not already done goes to a dask cluster at once
    (:func:`qkforms.survey.dask_executor.run_dask_layers`). Either way each layer is one
    atomic part, and the merge reads the parts in (unit, layer) order, so the tables
    do not depend on the executor.

    Parameters
    ----------
    units : sequence of Unit
        From :func:`units_for`.
    opts : SurveyOptions
    argv : sequence of str, optional
        Recorded in the manifest.
    series : sequence of Series
        The runs among the units (recorded in the manifest's ``runs``).
    client : dask.distributed.Client, optional
        For the dask executor: an existing client (else ``opts.scheduler`` or a
        ``LocalCluster``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from qkforms.survey.options import SurveyOptions
    >>> from qkforms.survey.training_runs import discover_run, survey_units, units_for
    >>> from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> for step in (0, 10):
    ...     _ = write_llama_checkpoint(tmp / "run" / f"checkpoint-{step}", n_layers=2, N=16,
    ...                                n=2, n_q=2, n_kv=1, seed=step)
    >>> run = discover_run(tmp / "run")
    >>> man = survey_units(units_for([run]), SurveyOptions(out=tmp / "out", progress=False),
    ...                    series=[run])
    >>> man["runs"][0]["steps"], [m["step"] for m in man["models"]]
    ([0, 10], [0, 10])
    """
    t_start = time.perf_counter()
    with open_output(opts.out) as lock:
        if opts.resume:
            check_resume_models(opts.out, [u.key for u in units], [u.label for u in units])
        return _survey_units(units, opts, lock, argv=argv, client=client, series=series,
                             t_start=t_start)


def _survey_units(units: Sequence[Unit], opts: SurveyOptions, lock: OutputLock, *,
                  argv: Sequence[str] | None, client: Any, series: Any,
                  t_start: float) -> dict[str, Any]:
    """:func:`survey_units` once the output directory is checked and locked."""
    out = Path(opts.out)
    if opts.executor == "local":
        infos, runs, _ = _load_each(units, opts, lambda u, model, layers: (survey_model(
            model, u.source, u.key, u.label, opts, layers, step=u.step,
            tokens_seen=u.tokens_seen, lock=lock), []))
    elif opts.executor == "dask":
        infos, runs, todos = _load_each(units, opts, lambda u, model, layers: prepare_model(
            model, u.source, u.key, u.label, opts, layers, step=u.step,
            tokens_seen=u.tokens_seen))
        tasks = [LayerTask(u.source, str(out), u.key, u.label, layer, run.keep_factors,
                           u.step, u.tokens_seen)
                 for u, run, todo in zip(units, runs, todos, strict=True) for layer in todo]
        t = time.perf_counter()
        timings = run_dask_layers(tasks, opts, client=client)
        wall = time.perf_counter() - t
        for run in runs:
            totals: dict[str, float] = {}
            for task, tim in zip(tasks, timings, strict=True):
                if task.key == run.key:
                    for k, v in tim.items():
                        totals[k] = totals.get(k, 0.0) + float(v)
            totals["wall_s"] = wall  # the tasks of all units ran together
            run.timings.update(totals)
            run.store.drop_temporaries()
    else:
        raise QKFormsError(f"unknown executor {opts.executor!r}; use 'local' or 'dask'")
    by_key = {u.key: u for u in units}
    extra_entries = [{"step": by_key[r.key].step, "tokens_seen": by_key[r.key].tokens_seen,
                      "run": by_key[r.key].run} for r in runs]
    extra = {"runs": _run_entries(units, series)} if series else {"runs": []}
    return finish_survey(infos, [u.source for u in units], runs, opts, argv=argv,
                         t_start=t_start, entry_extra=extra_entries, extra=extra)


def _load_each(units: Sequence[Unit], opts: SurveyOptions,
               start: Callable[[Unit, Model, list[int]], tuple[ModelRun, list[int]]]
               ) -> tuple[list[Model], list[ModelRun], list[list[int]]]:
    """Load each unit's model, ``start(unit, model, layers)`` on it, close it.

    Returns the models, the runs and the layers ``start`` left to do; each run's timings
    get the load time.
    """
    models, runs, todos = [], [], []
    first: dict[str, tuple[Unit, Model]] = {}  # the first checkpoint of each run
    try:
        for u in units:
            t = time.perf_counter()
            model = load(u.source, qk_norm=opts.qk_norm, checksum=opts.sha256)
            load_s = time.perf_counter() - t
            try:
                if u.run is not None:
                    check_same_architecture(*first.setdefault(u.run, (u, model)), u, model)
                run, todo = start(u, model, parse_layers(opts.layers, model.info.n_layers))
            finally:
                _close(model)
            run.timings["load_s"] = load_s
            models.append(model)
            runs.append(run)
            todos.append(todo)
    except BaseException:
        discard_factor_streams(runs)  # the earlier checkpoints' unfinished factors files
        raise
    return models, runs, todos


#: what every checkpoint of one training run shares (ArchSpec fields)
SHARED_FIELDS: tuple[str, ...] = ("architecture", "n_layers", "N", "n", "n_q", "n_kv",
                                  "positional")


def check_same_architecture(first: Unit, first_model: Model, unit: Unit, model: Model) -> None:
    """Refuse a checkpoint whose architecture or shapes differ from its run's first one.

    Raises
    ------
    CheckpointError
        Naming both checkpoints and the first differing field of :data:`SHARED_FIELDS`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from qkforms.models import load
    >>> from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> a = write_llama_checkpoint(tmp / "step10", n_layers=1, N=16, n=2, n_q=2, n_kv=1)
    >>> b = write_llama_checkpoint(tmp / "step20", n_layers=1, N=32, n=2, n_q=2, n_kv=1)
    >>> ua, ub = Unit(str(a), "r", "r.10", 10, run="r"), Unit(str(b), "r", "r.20", 20, run="r")
    >>> with load(a) as ma, load(b) as mb:
    ...     try:
    ...         check_same_architecture(ua, ma, ub, mb)
    ...     except CheckpointError as exc:
    ...         print(str(exc).split(";")[0].split(": ", 1)[1])
    the checkpoint of step 20 has N = 32, the run's first checkpoint (step 10) N = 16
    """
    for name in SHARED_FIELDS:
        mine, theirs = getattr(model.info, name), getattr(first_model.info, name)
        if mine != theirs:
            raise CheckpointError(
                f"{unit.source}: the checkpoint of step {unit.step} has {name} = "
                f"{format_value(mine)}, the run's first checkpoint (step {first.step}) "
                f"{name} = {format_value(theirs)}; the checkpoints of one training run must "
                "share one architecture and shape (survey them as separate models)")


def _close(model: Model) -> None:
    close = getattr(model, "close", None)
    if close is not None:
        close()
