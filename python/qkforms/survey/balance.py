"""Observation 1 counts: how many heads are balanced, and what Theorem 3 says of each.

One function, :func:`balance_counts`, used by ``summary.md``
(:mod:`qkforms.survey.summary`), the ``observation1_balance`` table and the series
tables (:mod:`qkforms.stats`). It reads the signature and prediction columns of
``heads.parquet`` (docs/survey.md, "Heads outside Theorem 3's hypotheses") and counts:

* the heads by status (``ok``, ``zero_form``, ``failed``);
* among ``ok`` heads: signatures decided, by whom (``float``, ``certified``, ``exact``),
  and undecided; surjective, not surjective, undecided; balanced (``n_pos == n_neg``)
  and of full signature ``(n, n, N - 2n)``;
* the predictions: ``thm3`` (surjective heads) met / not met, ``thm3-live`` (heads with
  dead dimensions whose live pair is onto) met / not met, ``none``, undecided;
* contradictions of Theorem 3 (a decided signature that differs from its prediction),
  split by who decided it: a contradiction decided in float would be a numerical failure
  (the error model of ``qkforms.gram`` was wrong), one decided by ``--certify`` or
  ``--exact`` a bug.

Examples
--------
>>> from qkforms.survey.balance import balance_counts
>>> cols = {"status": ["ok", "ok", "zero_form"], "n_pos": [2, None, 0],
...         "n_neg": [2, None, 0], "n_zero": [4, None, 8], "N": [8, 8, 8], "n": [2, 2, 2],
...         "signature_by": ["float", None, "float"], "surjective": [True, None, False],
...         "prediction": ["thm3", None, "thm3-live"], "prediction_met": [True, None, True]}
>>> c = balance_counts(cols)
>>> c["ok"], c["zero_form"], c["decided"], c["undecided"], c["thm3_met"], c["contradictions"]
(2, 1, 1, 1, 1, 0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["BALANCE_COUNTS", "DECIDERS", "balance_counts"]

#: who may decide a signature (the ``signature_by`` values)
DECIDERS: tuple[str, ...] = ("float", "certified", "exact")

#: every count :func:`balance_counts` returns, in table order
BALANCE_COUNTS: tuple[str, ...] = (
    "heads", "ok", "zero_form", "failed",
    "decided", *(f"decided_{d}" for d in DECIDERS), "undecided",
    "surjective", "not_surjective", "surjective_undecided",
    "balanced", "full_signature",
    "thm3", "thm3_met", "thm3_not_met",
    "thm3_live", "thm3_live_met", "thm3_live_not_met",
    "no_prediction", "prediction_undecided",
    "contradictions", *(f"contradictions_{d}" for d in DECIDERS),
)


def balance_counts(cols: Mapping[str, Sequence[Any]]) -> dict[str, int]:
    """The Observation 1 counts of some ``heads.parquet`` rows (see the module docstring).

    Parameters
    ----------
    cols : mapping of column name to sequence
        At least ``status``, ``n_pos``, ``n_neg``, ``n_zero``, ``N``, ``n``,
        ``signature_by``, ``surjective``, ``prediction``, ``prediction_met`` (None or
        NaN for null).

    Returns
    -------
    dict
        Every name of :data:`BALANCE_COUNTS` with an int.
    """
    status = [str(s) for s in cols["status"]]
    out = dict.fromkeys(BALANCE_COUNTS, 0)
    out["heads"] = len(status)
    for i, s in enumerate(status):
        if s != "ok":
            out["zero_form" if s == "zero_form" else "failed"] += 1
            continue
        out["ok"] += 1
        by = _value(cols["signature_by"][i])
        if by is None:
            out["undecided"] += 1
        else:
            out["decided"] += 1
            out[f"decided_{by}"] += 1
            n_pos, n_neg, n_zero = (_value(cols[c][i]) for c in ("n_pos", "n_neg", "n_zero"))
            N, n = int(cols["N"][i]), int(cols["n"][i])
            out["balanced"] += int(n_pos == n_neg)
            out["full_signature"] += int((n_pos, n_neg, n_zero) == (n, n, N - 2 * n))
        onto = _value(cols["surjective"][i])
        key = {True: "surjective", False: "not_surjective", None: "surjective_undecided"}
        out[key[None if onto is None else bool(onto)]] += 1
        kind = _value(cols["prediction"][i])
        met = _value(cols["prediction_met"][i])
        if kind is None:
            out["prediction_undecided"] += 1
        elif kind == "none":
            out["no_prediction"] += 1
        else:
            name = "thm3" if kind == "thm3" else "thm3_live"
            out[name] += 1
            if met is not None:
                out[f"{name}_met" if met else f"{name}_not_met"] += 1
                if not met and by is not None:
                    out["contradictions"] += 1
                    out[f"contradictions_{by}"] += 1
    return out


def _value(v: Any) -> Any:
    """None for null (None or NaN), else the value (floats that are integers as int)."""
    if v is None:
        return None
    if isinstance(v, float):
        if v != v:  # NaN
            return None
        return int(v) if v.is_integer() else v
    return v
