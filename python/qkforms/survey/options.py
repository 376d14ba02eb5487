"""The options of a survey run (the ``qkforms survey`` flags) and the layer selection.

:class:`SurveyOptions` is what :func:`qkforms.survey.survey` takes; its
:meth:`~SurveyOptions.fingerprint` is what a resumed run must match
(:mod:`qkforms.survey.manifest`). :func:`parse_layers` reads ``--layers``.

Examples
--------
>>> from qkforms.survey.options import SurveyOptions, parse_layers
>>> parse_layers(["0-2", "7,9"], 12)
[0, 1, 2, 7, 9]
>>> SurveyOptions(exact=True).fingerprint()["exact_method"]
'auto'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from qkforms.errors import QKFormsError
from qkforms.threads import compute_threads

__all__ = ["ExactMethod", "SurveyOptions", "parse_layers"]

#: the exact signature of ``--exact`` (:func:`qkforms.exact.head_signature` methods)
ExactMethod = Literal["auto", "charpoly"]


@dataclass(frozen=True)
class SurveyOptions:
    """Options of a survey run (the command-line flags).

    Attributes
    ----------
    out : Path
        Output directory.
    exact : bool
        Decide every head exactly (:func:`qkforms.exact.head_inertia`): signature, live
        dimension, ranks and Theorem 3 prediction, for heads of any rank.
    exact_method : {"auto", "charpoly"}
        How the exact signature is computed: ``"auto"`` by a certified rank of the live
        pair (Theorem 3's certificate when it is onto) and otherwise the exact inertia
        of the restricted form (Sylvester's law of inertia); ``"charpoly"`` by
        Descartes' rule on the exact characteristic polynomial of ``J G`` (independent
        of the theorem, about 1 s per head at ``(576, 64)``, slow for large degenerate
        heads).
    certify : bool
        Certified enclosures of every ok head's profile, ``1 - a``, pairing score, ``rho``
        and distance to Θ (:func:`qkforms.exact.enclose_layer`; the ``<stat>_lo``,
        ``<stat>_hi`` columns; docs/certified.md).
    certify_method : {"auto", "charpoly"}
        Eigenvalue certificate: ``"auto"`` (verified float eigenvectors with Weyl and
        Ostrowski bounds, exact root isolation as fallback) or ``"charpoly"`` (always
        root isolation of the exact characteristic polynomial; about ten times slower).
    precision_bands : bool
        Storage-precision bands of every ok head's certified statistics and signature
        (:func:`qkforms.bands.layer_bands`; the ``<stat>_band_lo``, ``<stat>_band_hi``,
        ``band_*`` and ``signature_band_*`` columns; docs/certified.md). With
        ``certify``, the rigorous bands are centred on the certified spectra.
    resume : bool
        Keep the complete parts of an earlier (interrupted) run with the same options.
    sha256 : bool
        The models were opened with the sha256 of every whole file (``load(...,
        checksum=True)``, a full read); by default sizes and mtimes identify the files
        and the sha256 of every tensor read is recorded as it streams.
    fold_norm : bool
        Fold the gain of the norm before each attention block into ``W_Q, W_K``.
    qk_norm : {"refuse", "fold"}
        Policy for models that normalize their projected queries/keys
        (:mod:`qkforms.models.scoremap`); the models must have been loaded with it.
    workers : int
        Worker processes (layers are distributed over them).
    layers : list of str or None
        Layer selection (``"3"``, ``"0-5"``, ``"1,4"``); all layers when None.
    progress : bool
        Show a progress bar (only when stderr is a terminal).
    threads : int or None
        Threads computing slices of a layer's heads in parallel (single-threaded BLAS
        each); default: the number of cores divided by ``workers``.
    executor : {"local", "dask"}
        Where the (model or checkpoint, layer) tasks run: this machine, or a dask
        cluster (:mod:`qkforms.survey.dask_executor`); the tables are identical.
    scheduler : str or None
        Dask scheduler address (``tcp://host:8786``); None starts a ``LocalCluster`` of
        ``workers`` processes.
    """

    out: Path = Path("survey-out")
    exact: bool = False
    exact_method: ExactMethod = "auto"
    certify: bool = False
    certify_method: str = "auto"
    precision_bands: bool = False
    resume: bool = False
    sha256: bool = False
    fold_norm: bool = False
    qk_norm: str = "refuse"
    workers: int = 1
    layers: list[str] | None = None
    progress: bool = True
    threads: int | None = None
    executor: str = "local"
    scheduler: str | None = None

    def compute_threads(self) -> int:
        """The number of compute threads per process (:func:`qkforms.threads.compute_threads`)."""
        return compute_threads(workers=self.workers, requested=self.threads)

    def fingerprint(self) -> dict[str, object]:
        """The options that change the numbers (must match to resume)."""
        return {"exact": self.exact, "exact_method": self.exact_method if self.exact else None,
                "certify": self.certify,
                "certify_method": self.certify_method if self.certify else None,
                "fold_norm": self.fold_norm, "qk_norm": self.qk_norm,
                # recorded only when asked, so that runs without bands resume as before
                **({"precision_bands": True} if self.precision_bands else {})}


def parse_layers(spec: Sequence[str] | None, n_layers: int) -> list[int]:
    """Parse a layer selection (items like ``"3"``, ``"0-5"``, ``"1,4"``).

    Raises
    ------
    QKFormsError
        For malformed items, empty ranges (``5-2``), an empty selection, or layers
        outside ``[0, n_layers)``.

    Examples
    --------
    >>> from qkforms.survey.options import parse_layers
    >>> parse_layers(None, 3), parse_layers(["2", "0"], 3)
    ([0, 1, 2], [0, 2])
    """
    if not spec:
        return list(range(n_layers))
    chosen: set[int] = set()
    for item in spec:
        for tok in str(item).split(","):
            tok = tok.strip()
            if not tok:
                continue
            try:
                if "-" in tok[1:]:
                    lo, hi = tok.split("-", 1) if not tok.startswith("-") else ("", tok)
                    rng = range(int(lo), int(hi) + 1)
                else:
                    rng = range(int(tok), int(tok) + 1)
            except ValueError:
                raise QKFormsError(f"bad layer selection {tok!r} (use e.g. 3, 0-5, 1,4)") from None
            if not rng:
                raise QKFormsError(f"layer range {tok!r} is empty (its start is above its "
                                   f"end; did you mean {rng.stop - 1}-{rng.start}?)")
            for layer in rng:
                if not 0 <= layer < n_layers:
                    raise QKFormsError(f"layer {layer} out of range: the model has "
                                       f"{n_layers} layers (0-{n_layers - 1})")
                chosen.add(layer)
    if not chosen:
        raise QKFormsError(f"--layers {' '.join(map(str, spec))} selects no layer "
                           "(use e.g. 3, 0-5, 1,4)")
    return sorted(chosen)
