"""``summary.md``: one short table per surveyed model.

Per model: heads by status (ok, zero form, failed), the Observation 1 counts of
:func:`qkforms.survey.balance.balance_counts` (signatures decided and by whom, balanced
heads, Theorem 3's prediction for each head or its live part, met or not, and any
contradiction), heads with certified intervals and how many are certainly near Θ or
undecided (with ``--certify``), spectral type counts, medians (over ok heads) of the
main statistics, and every head that is not ``ok`` with its reason.

Examples
--------
>>> from qkforms.survey.summary import MEDIAN_COLUMNS
>>> MEDIAN_COLUMNS[:3]
('sym_energy', 'pairing', 'rho')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from qkforms.exact.enclosure import CERTIFIED_STATS, decide
from qkforms.survey.balance import balance_counts
from qkforms.survey.store import atomic_write_bytes
from qkforms.tolerances import NEAR_THETA

__all__ = ["MEDIAN_COLUMNS", "model_summary", "write_summary"]

MEDIAN_COLUMNS = (
    "sym_energy", "pairing", "rho", "pairing_gap", "lobe_departure", "a", "b", "c", "d",
    "b_S", "c_S", "d_S", "theta_dist", "theta_L_dist", "thm5_dist", "trace_ratio",
    "participation_ratio", "stable_rank", "leading_share", "b_minus_a",
)


def model_summary(heads: Any, model: str, step: int | None = None) -> dict[str, Any]:
    """Counts and medians for the rows of one model (and, for a run, one step).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from qkforms.survey.layer import LayerInputs, process_layer
    >>> from qkforms.survey.summary import model_summary
    >>> rng = np.random.default_rng(0)
    >>> lw = SimpleNamespace(layer=0, W_Q=rng.standard_normal((3, 2, 8)),
    ...                      W_K=rng.standard_normal((3, 2, 8)), kv_index=np.arange(3))
    >>> t = process_layer(lw, SimpleNamespace(N=8, n=2), LayerInputs("toy")).heads
    >>> s = model_summary(t, "toy")
    >>> s["heads"], s["ok"], s["failed"], s["balanced"], s["thm3_met"], s["decided_exact"]
    (3, 3, 0, 3, 3, 0)
    """
    rows = heads.filter(_eq(heads.column("model"), model))
    if step is not None:
        rows = rows.filter(_eq(rows.column("step"), step))
    return _summary_of(rows, model)


def _summary_of(rows: Any, model: str) -> dict[str, Any]:
    """:func:`model_summary` of rows already selected."""
    cols = {name: rows.column(name).to_pylist() for name in rows.column_names}
    status = cols["status"]
    ok = [i for i, s in enumerate(status) if s == "ok"]
    counts = balance_counts(cols)
    enclosed_rows = [i for i in ok if cols.get("theta_dist_lo", [None] * len(status))[i]
                     is not None]
    near = _near_theta(cols, enclosed_rows)
    types: dict[str, int] = {}
    for i in ok:
        t = cols["spectral_type"][i]
        types[t] = types.get(t, 0) + 1
    medians = {}
    for name in MEDIAN_COLUMNS:
        vals = np.array([cols[name][i] for i in ok], dtype=np.float64)
        vals = vals[np.isfinite(vals)]
        medians[name] = float(np.median(vals)) if vals.size else float("nan")
    return {
        "model": model,
        **counts,
        "enclosed": len(enclosed_rows) if enclosed_rows else None,
        "max_width": _max_width(cols, enclosed_rows),
        "near_theta": near[0],
        "near_theta_undecided": near[1],
        "types": types,
        "medians": medians,
        "N": cols["N"][0] if status else None,
        "n": cols["n"][0] if status else None,
        "failures": sorted({cols["error"][i] for i, s in enumerate(status) if s != "ok"}),
        "not_ok": [(cols["layer"][i], cols["head"][i], s, cols["error"][i])
                   for i, s in enumerate(status) if s != "ok"],
        "contradicting": [(cols["layer"][i], cols["head"][i], cols["signature_by"][i])
                          for i in ok if cols["prediction_met"][i] is False
                          and cols["signature_by"][i] is not None],
    }


def _near_theta(cols: dict[str, list[Any]], rows: list[int]) -> tuple[int | None, int | None]:
    """Heads certainly within NEAR_THETA of Θ, and heads undecided, among ``rows``."""
    if not rows:
        return None, None
    lo = np.array([cols["theta_dist_lo"][i] for i in rows], dtype=np.float64)
    hi = np.array([cols["theta_dist_hi"][i] for i in rows], dtype=np.float64)
    verdict = decide(lambda x: x <= NEAR_THETA, [lo], [hi]).tolist()
    return sum(v is True for v in verdict), sum(v is None for v in verdict)


def _max_width(cols: dict[str, list[Any]], rows: list[int]) -> float | None:
    """Largest interval width over the certified statistics of ``rows``."""
    widths = [cols[f"{s}_hi"][i] - cols[f"{s}_lo"][i] for s in CERTIFIED_STATS for i in rows
              if cols[f"{s}_lo"][i] is not None and cols[f"{s}_hi"][i] is not None]
    finite = [w for w in widths if np.isfinite(w)]
    return max(finite) if finite else None


def _eq(column: Any, value: str | int) -> Any:
    import pyarrow.compute as pc

    return pc.equal(column, value)


def _fmt(x: float) -> str:
    return "nan" if not np.isfinite(x) else f"{x:.4g}"


def write_summary(path: Path, heads: Any, manifest: dict[str, Any]) -> str:
    """Write ``summary.md`` for every model of the manifest; return its text.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from qkforms.survey.layer import LayerInputs, process_layer
    >>> from qkforms.survey.summary import write_summary
    >>> rng = np.random.default_rng(0)
    >>> lw = SimpleNamespace(layer=0, W_Q=rng.standard_normal((2, 2, 8)),
    ...                      W_K=rng.standard_normal((2, 2, 8)), kv_index=np.arange(2))
    >>> heads = process_layer(lw, SimpleNamespace(N=8, n=2), LayerInputs("toy")).heads
    >>> entry = {"model": "toy", "architecture": "gpt2", "n_layers": 1, "n_q": 2,
    ...          "n_kv": 2, "N": 8, "n": 2, "positional": "absolute", "dtype": "float32",
    ...          "layers": [0]}
    >>> text = write_summary(pathlib.Path(tempfile.mkdtemp()) / "s.md", heads,
    ...                      {"models": [entry]})
    >>> "| balanced (2, 2, 4) among surjective | 2 |" in text
    True
    """
    lines = ["# qkforms survey summary", ""]
    opts = manifest.get("options", {})
    lines.append(f"qkforms {manifest.get('version')}, {manifest.get('created')}; options: "
                 + ", ".join(f"{k}={v}" for k, v in opts.items()))
    lines.append("")
    qk = manifest.get("qk_norm")
    if qk:
        lines += [f"q/k-normalized heads (--qk-norm {qk['policy']}): {qk['meaning']}.", ""]
    for entry in manifest["models"]:
        if entry.get("run") is not None:
            continue  # checkpoints of a training run: one section per run below
        s = model_summary(heads, entry["model"])
        lines += [f"## {entry['model']}", ""]
        lines.append(f"{entry['architecture']}, {entry['n_layers']} layers, "
                     f"{entry['n_q']} query / {entry['n_kv']} key heads, N = {entry['N']}, "
                     f"n = {entry['n']}, {entry['positional']}, stored as {entry['dtype']}; "
                     f"layers surveyed: {len(entry['layers'])}")
        lines.append("")
        lines += ["| count | value |", "|---|---|"] + _balance_lines(s)
        if s["enclosed"] is not None:
            lines += [
                f"| certified intervals (max width {s['max_width']:.1e}) | {s['enclosed']} |",
                f"| certainly within {NEAR_THETA:g} of Θ | {s['near_theta']} |",
                f"| undecided whether within {NEAR_THETA:g} of Θ | "
                f"{s['near_theta_undecided']} |",
            ]
        for t in ("I+", "II", "I-"):
            lines.append(f"| spectral type {t} | {s['types'].get(t, 0)} |")
        lines += ["", "| statistic | median over ok heads |", "|---|---|"]
        lines += [f"| {k} | {_fmt(v)} |" for k, v in s["medians"].items()]
        if entry.get("notes"):
            lines += ["", "How the scores relate to the surveyed forms:", ""]
            lines += [f"- {note}" for note in entry["notes"]]
        lines += _not_ok_lines(s)
        lines.append("")
    for run in manifest.get("runs") or []:
        lines += _run_section(heads, manifest, run)
    text = "\n".join(lines)
    atomic_write_bytes(Path(path), text.encode("utf-8"))
    return text


def _balance_lines(s: dict[str, Any]) -> list[str]:
    """The Observation 1 rows of a model's ``summary.md`` table."""
    expected = (f"({s['n']}, {s['n']}, {s['N'] - 2 * s['n']})" if s["n"] is not None
                else "(n, n, N - 2n)")
    by = ", ".join(f"{s['decided_' + d]} {d}" for d in ("float", "certified", "exact")
                   if s["decided_" + d])
    lines = [
        f"| heads | {s['heads']} |",
        f"| ok | {s['ok']} |",
        f"| zero form (L = 0) | {s['zero_form']} |",
        f"| failed | {s['failed']} |",
        f"| signature decided | {s['decided']}" + (f" ({by})" if by else "") + " |",
        f"| signature undecided (run --exact) | {s['undecided']} |",
        f"| surjective (Theorem 3 applies) | {s['surjective']} |",
        f"| balanced {expected} among surjective | {s['thm3_met']} |",
        f"| dead dimensions, live part onto: (n′, n′, N − 2n′) met / not met | "
        f"{s['thm3_live_met']} / {s['thm3_live_not_met']} |",
        f"| no prediction (neither onto) | {s['no_prediction']} |",
        f"| contradictions of Theorem 3 | {s['contradictions']} |",
    ]
    if s["prediction_undecided"]:
        lines.append(f"| prediction undecided (run --exact) | {s['prediction_undecided']} |")
    return lines


def _not_ok_lines(s: dict[str, Any]) -> list[str]:
    """Every head that is not ``ok``, and every contradiction, with the reason."""
    lines: list[str] = []
    if s["not_ok"]:
        lines += ["", "Heads that are not ok:", ""]
        lines += [f"- layer {layer} head {head}: {status} — {error}"
                  for layer, head, status, error in s["not_ok"]]
    if s["contradicting"]:
        lines += ["", "Heads contradicting Theorem 3 (decided signature ≠ prediction):", ""]
        lines += [f"- layer {layer} head {head} (decided by {by}): "
                  + ("a numerical failure of the float error model" if by == "float"
                     else "a bug: please report it")
                  for layer, head, by in s["contradicting"]]
    return lines


def _run_section(heads: Any, manifest: dict[str, Any], run: dict[str, Any]) -> list[str]:
    """The ``summary.md`` section of a training run: one row per checkpoint."""
    entries = [e for e in manifest["models"] if e.get("run") == run["key"]]
    first = entries[0]
    lines = [f"## {run['model']} (training run, {len(entries)} checkpoints)", "",
             f"{first['architecture']}, {first['n_layers']} layers, {first['n_q']} query / "
             f"{first['n_kv']} key heads, N = {first['N']}, n = {first['n']}, "
             f"{first['positional']}, stored as {first['dtype']}; from {run['source']}", "",
             "| step | tokens seen | heads | ok | failed | balanced | undecided | "
             "contradictions | I+ | II | I- | median sym_energy | median pairing | "
             "median theta_dist |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    failures: set[str] = set()
    mine = heads.filter(_eq(heads.column("model"), run["model"]))
    steps = np.asarray(mine.column("step").to_pylist(), dtype=object)
    for e in entries:
        s = _summary_of(mine.take(np.flatnonzero(steps == e["step"])), run["model"])
        tokens = "–" if e.get("tokens_seen") is None else str(e["tokens_seen"])
        m = s["medians"]
        lines.append(
            f"| {e['step']} | {tokens} | {s['heads']} | {s['ok']} | "
            f"{s['failed'] + s['zero_form']} | {s['balanced']} | {s['undecided']} | "
            f"{s['contradictions']} | {s['types'].get('I+', 0)} | "
            f"{s['types'].get('II', 0)} | {s['types'].get('I-', 0)} | "
            f"{_fmt(m['sym_energy'])} | {_fmt(m['pairing'])} | {_fmt(m['theta_dist'])} |")
        failures.update(s["failures"])
    if failures:
        lines += ["", "Failure reasons:", ""] + [f"- {r}" for r in sorted(failures)]
    lines.append("")
    return lines
