"""Spectra of all heads of one layer at once: the survey's view of the Gram engine.

The computation lives in :mod:`qkforms.gram` (one factorization per head, every
spectrum read off it, grouped-query attention batched per layer); this module names
what the survey uses of it.

Examples
--------
>>> import numpy as np
>>> from qkforms.survey.spectra import layer_spectra
>>> rng = np.random.default_rng(0)
>>> W_Q, W_K = rng.standard_normal((2, 4, 16)), rng.standard_normal((1, 4, 16))
>>> sp = layer_spectra(W_Q, W_K, np.array([0, 0]))
>>> sp.eig_S.shape, bool(sp.ok.all())
((2, 8), True)
"""

from __future__ import annotations

from qkforms.gram import LayerSpectra, layer_gram, layer_spectra, spectra_from_factor
from qkforms.tolerances import PIVOT_LIMIT

__all__ = ["PIVOT_LIMIT", "LayerSpectra", "layer_gram", "layer_spectra", "spectra_from_factor"]
