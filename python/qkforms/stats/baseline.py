"""Seeded Gaussian baseline survey of the same shape (``docs/theory.md`` §12.3,
Cor. 1–2, Prop. 5: §9).

For a layer of ``h`` heads of shape ``(N, n)`` the baseline draws ``h`` heads with iid
N(0, 1) entries in ``W_Q, W_K`` (n × N) and computes the same per-head scores as the
survey, by the same code: the Gram engine (:func:`qkforms.gram.head_spectra`, asked
only for the spectrum of S and the singular values of L) and the per-head statistics
function (:func:`qkforms.survey.head_statistics.head_statistics`). The random
stream is seeded by ``(seed, model, layer)`` so every layer is reproducible on its
own (and identical under any executor).

By Proposition 5, ``E[sym_energy] = (N+1)/(2N)`` for every n.

The baseline depends only on its arguments, not on the survey's results, so ``qkforms
survey`` (with the statistics) computes it *ahead*, in a background thread while the
survey runs (:func:`compute_ahead`); :func:`baseline_heads` then hands out those rows
(identical: the same function on the same arguments) or, for a layer not reached yet,
computes it itself.

Examples
--------
>>> from qkforms.stats.baseline import baseline_heads
>>> rows = baseline_heads(3, N=64, n=8, seed=0, key=("demo", 0))
>>> len(rows["sym_energy"]), bool(abs(rows["sym_energy"].mean() - 65 / 128) < 0.05)
(3, True)
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms.gram import head_spectra
from qkforms.stats.bootstrap import rng_for
from qkforms.survey.head_statistics import head_statistics
from qkforms.threads import single_threaded_libraries

__all__ = ["AHEAD_MAX_BYTES", "BASELINE_COLUMNS", "baseline_heads", "compute_ahead",
           "expected_sym_energy"]

#: per-head columns of the baseline (same meaning as in heads.parquet)
BASELINE_COLUMNS: tuple[str, ...] = (
    "sym_energy",
    "pairing",
    "rho",
    "pairing_gap",
    "lobe_departure",
    "a",
    "b",
    "c",
    "d",
    "b_S",
    "c_S",
    "d_S",
    "theta_dist",
    "b_minus_a",
    "participation_ratio",
)

#: heads drawn at once (bounds memory: 2 * CHUNK * n * N floats)
CHUNK = 8
#: largest draw (2 * CHUNK * n * N float64 bytes) that :func:`compute_ahead` takes on: it
#: runs beside the survey, whose memory it must not add much to
AHEAD_MAX_BYTES = 32 * 2**20

#: one baseline request: ``(count, N, n, seed, key)``
Job = tuple[int, int, int, int, tuple[Hashable, ...]]


class _Ahead:
    """A baseline computed (or being computed) by :func:`compute_ahead`."""

    def __init__(self) -> None:
        self.claimed = False  # someone computes it (the background thread)
        self.done = threading.Event()
        self.rows: dict[str, NDArray[np.float64]] | None = None  # None: failed


#: the baselines of compute_ahead, by job (the key by its reprs: the stream's seed, see
#: rng_for, depends on them, so 3 and numpy.int64(3) are different keys)
_AHEAD: dict[tuple[int, int, int, int, tuple[str, ...]], _Ahead] = {}
_AHEAD_LOCK = threading.Lock()


def _job_id(job: Job) -> tuple[int, int, int, int, tuple[str, ...]]:
    count, N, n, seed, key = job
    return (int(count), int(N), int(n), int(seed), tuple(repr(k) for k in key))


def expected_sym_energy(N: int | NDArray[Any]) -> float | NDArray[np.float64]:
    """``(N + 1)/(2N)``: expected symmetric energy of a Gaussian head (Prop. 5).

    Examples
    --------
    >>> from qkforms.stats.baseline import expected_sym_energy
    >>> round(expected_sym_energy(768), 6)
    0.500651
    """
    n_arr = np.asarray(N, dtype=np.float64)
    out = (n_arr + 1.0) / (2.0 * n_arr)
    return float(out) if out.ndim == 0 else out


def baseline_heads(
    count: int, *, N: int, n: int, seed: int, key: tuple[Hashable, ...]
) -> dict[str, NDArray[np.float64]]:
    """Scores of ``count`` Gaussian heads of shape ``(N, n)``.

    Parameters
    ----------
    count : int
        Number of heads.
    N, n : int
        Model and head dimensions.
    seed : int
        User seed.
    key : tuple
        Names that make the stream unique, e.g. ``(model, layer)``.

    Returns
    -------
    dict of column name -> array of length ``count`` (:data:`BASELINE_COLUMNS`)

    Examples
    --------
    >>> from qkforms.stats.baseline import baseline_heads
    >>> a = baseline_heads(2, N=32, n=4, seed=0, key=("m", 0))
    >>> b = baseline_heads(2, N=32, n=4, seed=0, key=("m", 0))
    >>> bool((a["pairing"] == b["pairing"]).all()), sorted(a)[:3]
    (True, ['a', 'b', 'b_S'])
    """
    job: Job = (int(count), int(N), int(n), int(seed), tuple(key))
    with _AHEAD_LOCK:
        ahead = _AHEAD.pop(_job_id(job), None)
    if ahead is not None and ahead.claimed:
        ahead.done.wait()  # in progress in the background thread: wait for it
        if ahead.rows is not None:
            return {c: v.copy() for c, v in ahead.rows.items()}
    return _draw(*job)


def compute_ahead(jobs: Sequence[Job]) -> threading.Thread:
    """Compute the baselines ``jobs`` in a background thread, for :func:`baseline_heads`.

    Each job is ``(count, N, n, seed, key)``, the arguments of :func:`baseline_heads`;
    a job whose draw exceeds :data:`AHEAD_MAX_BYTES` is left to the caller. A job that
    :func:`baseline_heads` asks for before the thread started it is computed by the
    caller (and skipped here); one in progress is waited for. BLAS runs single-threaded
    (:func:`qkforms.threads.single_threaded_libraries`). A failure here is silent: the
    caller computes the job again and sees the error.

    Examples
    --------
    >>> from qkforms.stats.baseline import baseline_heads, compute_ahead
    >>> job = (2, 16, 2, 0, ("ahead-demo", 0))
    >>> compute_ahead([job]).join()
    >>> ahead = baseline_heads(2, N=16, n=2, seed=0, key=("ahead-demo", 0))
    >>> again = baseline_heads(2, N=16, n=2, seed=0, key=("ahead-demo", 0))
    >>> all((ahead[c] == again[c]).all() for c in ahead)
    True
    """
    todo: list[tuple[Job, _Ahead]] = []
    with _AHEAD_LOCK:
        for job in jobs:
            count, N, n = job[:3]
            if 2 * min(CHUNK, count) * n * N * 8 > AHEAD_MAX_BYTES or _job_id(job) in _AHEAD:
                continue
            _AHEAD[_job_id(job)] = entry = _Ahead()
            todo.append((job, entry))

    def run() -> None:
        with single_threaded_libraries():
            for job, entry in todo:
                with _AHEAD_LOCK:
                    if _AHEAD.get(_job_id(job)) is not entry:  # taken by baseline_heads
                        continue
                    entry.claimed = True
                try:
                    entry.rows = _draw(*job)
                except Exception:  # noqa: BLE001 - the caller recomputes and reports
                    entry.rows = None
                finally:
                    entry.done.set()

    thread = threading.Thread(target=run, name="qkforms-baseline-ahead", daemon=True)
    thread.start()
    return thread


def _draw(count: int, N: int, n: int, seed: int, key: tuple[Hashable, ...]
          ) -> dict[str, NDArray[np.float64]]:
    """The baseline rows of :func:`baseline_heads`, computed."""
    rng = rng_for(seed, "gaussian-baseline", *key)
    parts: dict[str, list[NDArray[np.float64]]] = {c: [] for c in BASELINE_COLUMNS}
    done = 0
    while done < count:
        h = min(CHUNK, count - done)
        W_Q = rng.standard_normal((h, n, N))
        W_K = rng.standard_normal((h, n, N))
        sp = head_spectra(W_Q, W_K, want=("eig_S", "sv_L_sq"))
        st = head_statistics(sp.eig_S, sp.norm_sq, np.maximum(sp.skew_sq, 0.0), sp.trace,
                             sp.sv_L_sq, N=N, n=n)
        for name in BASELINE_COLUMNS:
            parts[name].append(np.asarray(st[name], dtype=np.float64))
        done += h
    if count == 0:
        return {c: np.zeros(0) for c in BASELINE_COLUMNS}
    return {c: np.concatenate(v) for c, v in parts.items()}
