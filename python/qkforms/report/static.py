"""Static PNG versions of the report's main figures (matplotlib, Agg backend).

Written to ``DIR/figures/``: ``simplex.png`` (the tetrahedron with Θ and the dashed
empty edge), ``face.png`` (the face Δ with the Theorem 5 limit), ``heatmaps.png``
(layer × head maps of the first model next to its baseline), ``histograms.png``.

Examples
--------
>>> from qkforms.report.static import FIGURES
>>> FIGURES
('simplex.png', 'face.png', 'heatmaps.png', 'histograms.png')
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from qkforms._fs import atomic_write, ensure_dir
from qkforms.report.geometry import EDGES, EMPTY_EDGE, VERTICES, limit_curve, theta_polyline, to_xyz
from qkforms.stats.table import Table

__all__ = ["FIGURES", "write_pngs"]

FIGURES = ("simplex.png", "face.png", "heatmaps.png", "histograms.png")


def _f(col) -> np.ndarray:
    return np.asarray([np.nan if v is None else float(v) for v in col], dtype=np.float64)


def _ternary_xy(b: np.ndarray, c: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Planar coordinates of (b, c, d): b at the top, c bottom left, d bottom right."""
    return d - c, np.sqrt(3.0) * b


def _save(fig: Any, path: Path, root: Path, **kwargs: Any) -> None:
    """Save a figure as PNG atomically (never through a link; no partial file)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", **kwargs)
    atomic_write(path, buf.getvalue(), root=root)


def _tetrahedron(plt: Any, heads: Table, layer: np.ndarray) -> Any:
    """Figure 1: the head profiles in the tetrahedron, Theta, the empty edge."""
    fig = plt.figure(figsize=(7, 6))
    ax = fig.add_subplot(projection="3d")
    for i, j in EDGES:
        p = VERTICES[[i, j]]
        ax.plot(p[:, 0], p[:, 1], p[:, 2], color="#444", lw=1.2)
    p = VERTICES[list(EMPTY_EDGE)]
    ax.plot(p[:, 0], p[:, 1], p[:, 2], color="#888", lw=1.5, ls="--", label="empty edge c–d")
    th = to_xyz(theta_polyline(41))
    ax.plot(th[:, 0], th[:, 1], th[:, 2], color="#e31a1c", lw=3, label="Θ")
    xyz = to_xyz(np.stack([_f(heads[k]) for k in "abcd"], axis=1))
    sc = ax.scatter(xyz[:, 0], xyz[:, 1], xyz[:, 2], c=layer, s=4, cmap="viridis")
    for v, lab in zip(VERTICES * 1.1, ("a", "b", "c", "d"), strict=True):
        ax.text(v[0], v[1], v[2], f"{lab} = 1", fontsize=10)
    ax.set_axis_off()
    ax.view_init(elev=20, azim=-50)
    fig.colorbar(sc, ax=ax, shrink=0.6, label="layer")
    ax.legend(loc="lower left")
    ax.set_title("Head profiles in Δ₃")
    return fig


def _face(plt: Any, heads: Table, layer: np.ndarray) -> Any:
    """Figure 2: the symmetric profiles on the face {a = 0}, the Theorem 5 limit."""
    fig, ax = plt.subplots(figsize=(6.5, 5.8))
    corners = np.array([[0.0, np.sqrt(3.0)], [-1.0, 0.0], [1.0, 0.0]])  # b, c, d
    ax.plot(corners[[1, 0, 2], 0], corners[[1, 0, 2], 1], color="#444", lw=1)
    ax.plot(corners[[1, 2], 0], corners[[1, 2], 1], color="#888", ls="--", lw=1.5,
            label="empty edge c–d")
    curve = limit_curve(301)
    cx, cy = _ternary_xy(curve[:, 0], curve[:, 1], curve[:, 2])
    ax.plot(cx, cy, color="#e31a1c", lw=3, label="Theorem 5 limit")
    x, y = _ternary_xy(_f(heads["b_S"]), _f(heads["c_S"]), _f(heads["d_S"]))
    sc = ax.scatter(x, y, c=layer, s=6, cmap="viridis")
    for (px, py), lab in zip(corners, ("b = 1", "c = 1", "d = 1"), strict=True):
        ax.annotate(lab, (px, py), textcoords="offset points", xytext=(0, 6), ha="center")
    ax.set_aspect("equal")
    ax.axis("off")
    fig.colorbar(sc, ax=ax, shrink=0.7, label="layer")
    ax.legend(loc="upper left")
    ax.set_title("Face Δ = {a = 0}: symmetric profiles")
    return fig


def _heat_maps(plt: Any, heads: Table, baseline: Table) -> Any:
    """Figure 3: heat maps (layer x head) of the first model, trained and baseline."""
    model = str(heads["model"][0])
    stats = ("sym_energy", "pairing", "theta_dist")
    fig, axes = plt.subplots(len(stats), 2, figsize=(9, 3.2 * len(stats)), squeeze=False)
    for r, stat in enumerate(stats):
        for c, (table, title) in enumerate(((heads, "trained"), (baseline, "Gaussian baseline"))):
            ax = axes[r][c]
            if not len(table):
                ax.axis("off")
                continue
            mask = np.asarray([str(m) == model for m in table["model"]])
            la = _f(table["layer"])[mask].astype(int)
            hd = _f(table["head"])[mask].astype(int)
            z = np.full((la.max() + 1, hd.max() + 1), np.nan)
            z[la, hd] = _f(table[stat])[mask]
            both = np.concatenate([_f(heads[stat]), _f(baseline[stat]) if len(baseline) else []])
            both = both[np.isfinite(both)]
            im = ax.imshow(z, aspect="auto", cmap="viridis",
                           vmin=np.quantile(both, 0.01), vmax=np.quantile(both, 0.99))
            ax.set_title(f"{model} {stat} ({title})", fontsize=9)
            ax.set_xlabel("head")
            ax.set_ylabel("layer")
            fig.colorbar(im, ax=ax)
    fig.tight_layout()
    return fig


def _histograms(plt: Any, heads: Table, baseline: Table) -> Any:
    """Figure 4: histograms, trained heads above, the baseline below, each on its
    own scale."""
    stats = ("sym_energy", "pairing", "theta_dist")
    fig, axes = plt.subplots(2, 3, figsize=(12, 5.2), sharex="col",
                             gridspec_kw={"height_ratios": [2, 1]})
    for k, stat in enumerate(stats):
        top, bottom = axes[0][k], axes[1][k]
        x = _f(heads[stat])
        top.hist(x[np.isfinite(x)], bins=50, density=True, color="#1f77b4", label="trained")
        top.set_title(stat, fontsize=10)
        top.set_ylabel("trained: density")
        if len(baseline):
            b = _f(baseline[stat])
            b = b[np.isfinite(b)]
            bottom.hist(b, bins=50, density=True, color="#ff7f0e", label="baseline")
            if b.size:
                for ax in (top, bottom):
                    ax.axvline(float(np.median(b)), color="#ff7f0e", ls="--", lw=1)
        bottom.set_ylabel("baseline: density")
        bottom.set_xlabel(stat)
    fig.tight_layout()
    return fig


def write_pngs(heads: Table, baseline: Table, out_dir: str | Path, *,
               root: str | Path | None = None) -> list[Path]:
    """Draw the four PNGs; return their paths.

    Below ``root`` (default: ``out_dir``'s parent) no symbolic link is followed.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import Head
    >>> from qkforms.stats import observations
    >>> from qkforms.stats.synthetic_rows import survey_rows
    >>> rng = np.random.default_rng(0)
    >>> h, s = survey_rows("toy", [Head(*rng.standard_normal((2, 2, 12))) for _ in range(4)],
    ...                    heads_per_layer=2)
    >>> t = observations(h, s, n_boot=0, fits=False)
    >>> import tempfile
    >>> paths = write_pngs(t["head_stats"], t["baseline_heads"], tempfile.mkdtemp())
    >>> [p.name for p in paths] == list(FIGURES)
    True
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    base_dir = out.parent if root is None else Path(root)
    ensure_dir(out, root=base_dir)
    layer = _f(heads["layer"])
    # each figure drawn, saved and closed before the next (one open figure at a time)
    steps: tuple[tuple[Callable[[], Any], dict[str, Any]], ...] = (
        (lambda: _tetrahedron(plt, heads, layer), {"dpi": 110, "bbox_inches": "tight"}),
        (lambda: _face(plt, heads, layer), {"dpi": 110, "bbox_inches": "tight"}),
        (lambda: _heat_maps(plt, heads, baseline), {"dpi": 100}),
        (lambda: _histograms(plt, heads, baseline), {"dpi": 100}),
    )
    paths = []
    for name, (draw, options) in zip(FIGURES, steps, strict=True):
        fig = draw()
        paths.append(out / name)
        _save(fig, paths[-1], base_dir, **options)
        plt.close(fig)
    return paths
