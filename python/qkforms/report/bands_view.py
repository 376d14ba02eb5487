"""The report's storage-precision section: the heads whose reading the bands change.

A *reading* of a head is what the report says about it from its float statistics: near
Θ or not (distance to Θ within :data:`qkforms.tolerances.NEAR_THETA`), its spectral type
(radius rule), its signature ``(n, n, N - 2n)``. With ``--precision-bands`` the
statistics tables decide each reading on the box of the head's bands
(``head_stats``: ``near_theta_band``, ``type_radius_band``, ``signature_band_stable``;
docs/statistics.md); a reading the storage precision cannot decide is listed here with
its band, so that no figure is read more precisely than the file allows.

Examples
--------
>>> from qkforms.stats.table import Table
>>> from qkforms.report.bands_view import bands_section
>>> bands_section(Table({"model": ["m"], "theta_dist": [0.1]})) is None
True
"""

from __future__ import annotations

import html
import math
from typing import Any

from qkforms.tolerances import NEAR_THETA, SPECTRAL_TYPE_RADIUS

__all__ = ["MAX_ROWS", "bands_section", "changed_readings"]

#: heads listed at most (the counts cover all of them)
MAX_ROWS = 200


def _num(v: Any) -> float:
    return math.nan if v is None else float(v)


def changed_readings(heads: Any) -> list[dict[str, Any]]:
    """Per head whose band changes a reading: the head, its band and what changes.

    Parameters
    ----------
    heads
        The ``head_stats`` table of a ``--precision-bands`` survey.

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> t = Table({"model": ["m", "m"], "layer": [0, 0], "head": [0, 1],
    ...            "theta_dist": [0.049, 0.2], "theta_dist_band_lo": [0.04, 0.19],
    ...            "theta_dist_band_hi": [0.06, 0.21], "near_theta_band": [None, False],
    ...            "type_radius": ["I+", "I+"], "type_radius_band": ["undecided", "I+"],
    ...            "signature_band_stable": [True, True], "band_kind": ["rigorous"] * 2})
    >>> [(r["head"], r["changes"]) for r in changed_readings(t)]
    [(0, 'near Θ, type')]
    """
    out = []
    for r in heads.rows():
        changes = []
        if "near_theta_band" in r and r.get("near_theta_band") is None:
            changes.append("near Θ")
        if r.get("type_radius_band") == "undecided":
            changes.append("type")
        if r.get("signature_band_stable") is not None and not bool(r["signature_band_stable"]):
            changes.append("signature")
        if changes:
            out.append({**r, "changes": ", ".join(changes)})
    return out


def bands_section(heads: Any) -> tuple[str, str, str] | None:
    """The ``bands`` section of the report (None for a survey without bands).

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> t = Table({"model": ["m"], "layer": [0], "head": [0], "theta_dist": [0.049],
    ...            "theta_dist_band_lo": [0.04], "theta_dist_band_hi": [0.06],
    ...            "near_theta_band": [None], "type_radius": ["I+"],
    ...            "type_radius_band": ["I+"], "signature_band_stable": [True],
    ...            "band_kind": ["rigorous"]})
    >>> sid, title, body = bands_section(t)
    >>> sid, "1 of 1 heads" in body, "[0.0400, 0.0600]" in body
    ('bands', True, True)
    """
    if "near_theta_band" not in heads or "theta_dist_band_lo" not in heads:
        return None
    rows = changed_readings(heads)
    total = len(heads)
    counts = {k: sum(k in r["changes"] for r in rows) for k in ("near Θ", "type", "signature")}
    kinds: dict[str, int] = {}
    for k in heads["band_kind"]:
        kinds[str(k)] = kinds.get(str(k), 0) + 1
    intro = (
        "<p>Each head's statistics are known only to the precision its weights were stored "
        "in (half an ulp of a float dtype, half a quantization step of a GGUF block). The "
        "bands contain each statistic for every weight within that precision "
        "(<code>docs/certified.md</code>, \"Storage-precision bands\"; kinds: "
        + html.escape(", ".join(f"{v} {k}" for k, v in sorted(kinds.items())))
        + "; first-order bands are estimates). A reading changes when the band straddles "
        f"its threshold: near Θ (distance ≤ {NEAR_THETA:g}), the spectral type (radius "
        f"rule, r = {SPECTRAL_TYPE_RADIUS:g}), the signature (n, n, N − 2n). "
        f"<b>{len(rows)} of {total} heads</b> have a reading the storage precision cannot "
        f"decide: near Θ {counts['near Θ']}, type {counts['type']}, signature "
        f"{counts['signature']}.</p>")
    if not rows:
        return ("bands", "Storage precision: readings the bands change", intro)
    head = ("<table class=\"obs\"><tr><th>model</th><th>layer</th><th>head</th>"
            "<th>band</th><th>changes</th><th>distance to Θ</th><th>its band</th>"
            "<th>type</th><th>type on the band</th><th>signature stable</th></tr>")
    body = []
    for r in rows[:MAX_ROWS]:
        lo, hi = _num(r.get("theta_dist_band_lo")), _num(r.get("theta_dist_band_hi"))
        cells = [r.get("model"), r.get("layer"), r.get("head"), r.get("band_kind"),
                 r["changes"], f"{_num(r.get('theta_dist')):.4f}", f"[{lo:.4f}, {hi:.4f}]",
                 r.get("type_radius"), r.get("type_radius_band"),
                 r.get("signature_band_stable")]
        body.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells)
                    + "</tr>")
    more = (f"<p class=\"note\">First {MAX_ROWS} of {len(rows)} heads shown "
            "(<a href=\"stats/head_stats.csv\">all heads</a>).</p>"
            if len(rows) > MAX_ROWS else "")
    return ("bands", "Storage precision: readings the bands change",
            intro + head + "".join(body) + "</table>" + more)
