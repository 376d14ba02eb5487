"""Offline HTML report of a survey (``qkforms report DIR``).

:func:`~qkforms.report.build.build_report` writes ``DIR/report.html`` — plotly.js
inlined from the ``plotly`` package, no network — with the 3-simplex of head profiles,
the face Δ with the Theorem 5 limit, layer × head heat maps next to the Gaussian
baseline, spectra with fitted families, the RoPE L(d) slider and the observation tables,
plus static PNGs in ``DIR/figures/`` (matplotlib, Agg). Needs ``qkforms[plots]``.

Examples
--------
>>> from qkforms.report.geometry import VERTICES
>>> VERTICES.shape
(4, 3)
"""

from __future__ import annotations

__all__: list[str] = []
