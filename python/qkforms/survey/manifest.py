"""What a survey run records about itself: the resume fingerprint and ``manifest.json``.

:func:`run_fingerprint` is written next to the per-layer parts (``run.json``) and must
match for ``--resume`` to reuse them (:func:`check_resume`); :func:`manifest` is the
``manifest.json`` of the whole run (``docs/survey.md``).

Examples
--------
>>> from qkforms.survey.manifest import certification_text
>>> certification_text(False, "auto") is None
True
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from qkforms import __version__
from qkforms.errors import QKFormsError
from qkforms.models.records import ModelInfo
from qkforms.models.scoremap import QK_NORM_POLICY_MEANINGS, score_notes
from qkforms.survey.store import FactorsStream, PartStore
from qkforms.tolerances import BAND_FLOAT_ALLOWANCE, BAND_RIGOR_FACTOR, BAND_RIGOR_FLOOR, thresholds

if TYPE_CHECKING:
    from qkforms.models import Model
    from qkforms.survey.options import SurveyOptions

__all__ = [
    "ModelRun",
    "bands_text",
    "certification_text",
    "certify_text",
    "check_resume",
    "factors_path",
    "manifest",
    "run_fingerprint",
]

@dataclass
class ModelRun:
    """How one model's layers were surveyed (what the manifest reports per model)."""

    key: str
    label: str
    store: PartStore
    layers: list[int]
    resumed_layers: int
    keep_factors: bool
    timings: dict[str, float] = field(default_factory=dict)
    #: the merged factors file, when it is written while the layers are (pipeline)
    factors: FactorsStream | None = None


def run_fingerprint(info: ModelInfo, opts: SurveyOptions, source: str) -> dict[str, Any]:
    """What the parts of a model were computed from (``run.json``)."""
    return {
        "source": source,
        "name": info.name,
        # size and mtime detect changed files without reading them (the sha256 of whole
        # files only with --sha256; compared when both runs have it)
        "files": [[f.path, f.size, f.mtime_ns] for f in info.files],
        "sha256": [f.sha256 for f in info.files],
        "options": opts.fingerprint(),
        "thresholds": thresholds(),
        "version": __version__,
    }


def check_resume(store: PartStore, run: dict[str, Any]) -> None:
    """Refuse to resume parts computed from other files, options, thresholds or version.

    Raises
    ------
    QKFormsError
        Naming what differs.
    """
    old = store.read_run()
    if old is None:
        if store.has_parts():
            raise QKFormsError(
                f"cannot resume {run['name']!r} in {store.dir}: it holds layer parts but no "
                "run.json saying what they were computed with; rerun without --resume to "
                "start over")
        return
    keys = ("files", "options", "thresholds", "version", "ids")
    diff = [k for k in keys if old.get(k) != run.get(k)]
    old_sha, new_sha = old.get("sha256") or [], run.get("sha256") or []
    if len(old_sha) == len(new_sha) and any(
            a is not None and b is not None and a != b
            for a, b in zip(old_sha, new_sha, strict=True)):
        diff.append("sha256")
    if diff:
        raise QKFormsError(
            f"cannot resume {run['name']!r} in {store.dir}: the earlier run differs in "
            f"{', '.join(diff)} (earlier: {', '.join(f'{k}={old.get(k)!r}' for k in diff)}); "
            "rerun without --resume to start over")


def certification_text(exact: bool, method: str) -> str | None:
    """What ``signature_by == "exact"`` means for this run (None without ``--exact``)."""
    if not exact:
        return None
    how = ("method auto: dead dimensions dropped, a certified rank of the live pair (modular "
           "rank and, below full rank, an exact kernel), then (n', n', N - 2n') by Theorem 3 "
           "when the live pair is onto, else the exact inertia of the form J restricted to "
           "its image (Sylvester's law of inertia)"
           if method == "auto" else
           "method charpoly: Descartes' rule of signs on the exact characteristic "
           "polynomial of J G (Lemma 10); ranks and prediction as for method auto")
    return ("signature_by = exact: the signature, ranks and Theorem 3 prediction of every "
            "head computed exactly (python-flint, no floating point) from the stored weights "
            "as decoded by the loader to float64; " + how)


def certify_text(certify: bool, method: str) -> str | None:
    """What the ``<stat>_lo``/``<stat>_hi`` columns mean for this run (None without ``--certify``).

    Examples
    --------
    >>> certify_text(False, "auto") is None, certify_text(True, "auto").startswith("<stat>_lo")
    (True, True)
    """
    if not certify:
        return None
    how = ("method auto: float64 generalized eigenvectors of (G J G / 2, G) certified in Arb "
           "ball arithmetic (Weyl and Ostrowski bounds), root isolation of the exact "
           "characteristic polynomial as fallback" if method == "auto" else
           "method charpoly: root isolation (Arb) of the exact characteristic polynomial "
           "of J G (Lemma 10)")
    return ("<stat>_lo <= true value <= <stat>_hi for a, b, c, d, sym_energy, pairing, rho "
            "and theta_dist of the stored weights as decoded by the loader to float64 "
            "(exact Gram blocks and energies, certified eigenvalues of S, the float "
            "formulas evaluated in ball arithmetic; docs/certified.md); " + how)


def bands_text(bands: bool, certify: bool) -> str | None:
    """What the ``<stat>_band_*`` columns mean for this run (None without ``--precision-bands``).

    Examples
    --------
    >>> bands_text(False, False) is None, "first-order" in bands_text(True, False)
    (True, True)
    """
    if not bands:
        return None
    centre = ("centred on the certified spectra (--certify): band_kind 'rigorous'" if certify
              else f"centred on the float64 spectra, taken as exact up to "
              f"{BAND_FLOAT_ALLOWANCE:g} |L| (band_kind 'rigorous-float'; add --certify "
              "to prove them)")
    return ("<stat>_band_lo <= value <= <stat>_band_hi for every weight within its storage "
            "precision (half an ulp of a float dtype, half a quantization step of a GGUF "
            "block) of the stored one: rigorous bands (perturbation bound, Hoffman-Wielandt "
            "and Weyl inequalities, mean-value interval arithmetic on the shared formulas) "
            f"{centre}; where the rigorous band is wider than {BAND_RIGOR_FACTOR:g} times "
            f"the first-order one (and than {BAND_RIGOR_FLOOR:g}), the first-order estimate "
            "of the worst case (band_kind 'first-order'; not a guarantee); docs/certified.md")


def manifest(models: Sequence[Model], srcs: Sequence[str | None], runs: Sequence[ModelRun],
             opts: SurveyOptions, heads: Any, argv: Sequence[str] | None,
             version: str) -> dict[str, Any]:
    """The ``manifest.json`` of a survey (``heads``: the merged heads table)."""
    import pyarrow as pa

    entries = []
    model_col = heads.column("model").to_pylist()
    status = heads.column("status").to_pylist()
    for model, src, run in zip(models, srcs, runs, strict=True):
        info = model.info
        facts = {k: getattr(info, k, None) for k in ModelInfo.fact_names()}
        rows = [i for i, m in enumerate(model_col) if m == run.label]
        entries.append({
            "model": run.label,
            "key": run.key,
            "source": src,
            **facts,
            "files": [{"path": f.path, "size": f.size, "mtime_ns": getattr(f, "mtime_ns", None),
                       "sha256": f.sha256} for f in info.files],
            # sha256 of the stored bytes of every tensor this run read (hashed as read)
            "tensor_sha256": dict(sorted(getattr(model, "tensor_sha256", {}).items())),
            "notes": score_notes(info) if hasattr(info, "spec") else [],
            "layers": run.layers,
            "heads": len(rows),
            "failed": sum(status[i] == "failed" for i in rows),
            "zero_form": sum(status[i] == "zero_form" for i in rows),
            "resumed_layers": run.resumed_layers,
            "factors": (run.store.factors_path.relative_to(run.store.root).as_posix()
                        if run.keep_factors else None),
            "timings": run.timings,
        })
    return {
        "tool": "qkforms survey",
        "version": version,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "argv": list(argv) if argv is not None else None,
        "options": {"exact": opts.exact, "exact_method": opts.exact_method,
                    "certify": opts.certify, "certify_method": opts.certify_method,
                    "precision_bands": opts.precision_bands,
                    "resume": opts.resume, "fold_norm": opts.fold_norm,
                    "qk_norm": opts.qk_norm,
                    "workers": opts.workers, "threads": opts.compute_threads(),
                    "layers": opts.layers},
        "thresholds": thresholds(),
        "environment": {"python": platform.python_version(), "numpy": np.__version__,
                        "pyarrow": pa.__version__, "platform": platform.platform()},
        "certification": certification_text(opts.exact, opts.exact_method),
        "certified_enclosures": certify_text(opts.certify, opts.certify_method),
        "precision_bands": bands_text(opts.precision_bands, opts.certify),
        "qk_norm": {"policy": opts.qk_norm, "meaning": QK_NORM_POLICY_MEANINGS[opts.qk_norm]},
        "models": entries,
    }


def factors_path(entry: dict[str, Any], directory: str | Path) -> Path | None:
    """The RoPE factors file a survey manifest entry names, if it exists (else None).

    Raises
    ------
    QKFormsError
        If the entry names a path outside the survey's ``factors/`` directory.

    Examples
    --------
    >>> factors_path({"factors": None}, ".") is None
    True
    >>> try:
    ...     factors_path({"factors": "../x.npz"}, ".")
    ... except QKFormsError as exc:
    ...     print("not inside" in str(exc))
    True
    """
    rel = entry.get("factors")
    if not rel:
        return None
    rel_path = Path(str(rel))
    if rel_path.is_absolute() or rel_path.parts[:1] != ("factors",) or ".." in rel_path.parts:
        raise QKFormsError(f"{Path(directory) / 'manifest.json'}: factors path {rel!r} is "
                           "not inside the survey's factors/ directory")
    path = Path(directory) / rel_path
    # absent: no slider; anything else (a FIFO, a device) is refused by its reader
    return path if os.path.lexists(path) else None
