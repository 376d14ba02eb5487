"""Assembling the self-contained, offline ``report.html``.

The page inlines the plotly.js bundle shipped inside the ``plotly`` Python package
(``plotly/package_data/plotly.min.js``), so it needs no network. Figure
specifications are embedded as one JSON block; a small script plots them and, when
done, sets ``data-point-count`` on every figure (points of its per-head traces that are
visible) and ``data-rendered="1"`` on ``<body>`` (``data-render-error`` on failure).

Examples
--------
>>> from qkforms.report.html import json_for_script
>>> json_for_script({"x": [1.0, float("nan")], "s": "</script>"})
'{"x": [1.0, null], "s": "<\\\\/script>"}'
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from qkforms.errors import QKFormsError
from qkforms.stats.table import Table

__all__ = ["json_for_script", "plotly_bundle", "render_page"]


def plotly_bundle() -> tuple[str, str]:
    """The plotly.js source shipped with the ``plotly`` package and its version.

    Raises
    ------
    QKFormsError
        If plotly is not installed or the bundle is missing.

    Examples
    --------
    >>> src, version = plotly_bundle()
    >>> len(src) > 10**6
    True
    """
    try:
        import plotly
    except ImportError as exc:
        raise QKFormsError("the report needs plotly: pip install 'qkforms[plots]'") from exc
    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise QKFormsError(f"plotly.js bundle not found at {path}")
    src = path.read_text(encoding="utf-8")
    version = "unknown"
    head = src[:400]
    marker = "plotly.js v"
    if marker in head:
        version = head.split(marker, 1)[1].split()[0]
    return src.replace("</script", "<\\/script"), version


def _sanitize(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _sanitize(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_sanitize(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _sanitize(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def json_for_script(obj: Any) -> str:
    """JSON safe to embed in a ``<script>`` element (NaN → null, ``</`` escaped)."""
    text = json.dumps(_sanitize(obj), allow_nan=False, ensure_ascii=False)
    return text.replace("</", "<\\/")


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;
max-width:1200px;padding:0 1.2em 3em;color:#222;line-height:1.45}
h1{margin-top:1em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
nav a{margin-right:1em}.fig{width:100%;min-height:300px}
table.obs{border-collapse:collapse;font-size:.82em;margin:.6em 0 1.4em;display:block;
overflow-x:auto}table.obs th,table.obs td{border:1px solid #ccc;padding:2px 6px;
text-align:right;white-space:nowrap}table.obs th{background:#f3f3f3}
table.obs td:first-child,table.obs th:first-child{text-align:left}
.note{color:#555;font-size:.9em}code{background:#f5f5f5;padding:0 .2em}
"""

_JS = """
(function () {
  function countPoints(gd) {
    var n = 0;
    (gd.data || []).forEach(function (t) {
      if (t.meta !== 'heads' && t.meta !== 'rope' && t.meta !== 'series') { return; }
      if (t.visible === false || t.visible === 'legendonly') { return; }
      var arr = t.x || t.a || [];
      n += arr.length;
    });
    gd.setAttribute('data-point-count', String(n));
    var sl = (gd.layout && gd.layout.sliders) || [];
    if (sl.length) {
      gd.setAttribute('data-slider-steps', String(sl[0].steps.length));
    }
    return n;
  }
  var specs = JSON.parse(document.getElementById('qk-figures').textContent);
  var config = {responsive: true, displaylogo: false};
  var jobs = specs.map(function (s) {
    return Plotly.newPlot(s.id, s.data, s.layout, config).then(function (gd) {
      countPoints(gd);
      gd.on('plotly_restyle', function () { countPoints(gd); });
      return gd;
    });
  });
  Promise.all(jobs).then(function () {
    document.body.setAttribute('data-rendered', '1');
  }).catch(function (err) {
    document.body.setAttribute('data-render-error', String(err));
    console.error('qkforms report: ' + err);
  });
})();
"""


def _fmt_cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if not math.isfinite(v):
            return "–"
        if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e5):
            return f"{v:.3e}"
        return f"{v:.4f}"
    return html.escape(str(v))


def table_html(table: Table, columns: tuple[str, ...]) -> str:
    """An HTML table of the given columns.

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> from qkforms.report.html import table_html
    >>> table_html(Table({"model": ["m"], "x": [0.5]}), ("model", "x"))
    '<table class="obs"><tr><th>model</th><th>x</th></tr><tr><td>m</td><td>0.5000</td></tr></table>'
    """
    cols = [c for c in columns if c in table]
    out = ['<table class="obs"><tr>' + "".join(f"<th>{html.escape(c)}</th>" for c in cols)
           + "</tr>"]
    for row in table.rows():
        out.append("<tr>" + "".join(f"<td>{_fmt_cell(row[c])}</td>" for c in cols) + "</tr>")
    out.append("</table>")
    return "".join(out)


def render_page(
    *,
    title: str,
    intro: str,
    sections: list[tuple[str, str, str]],
    figures: list[dict[str, Any]],
) -> str:
    """The full HTML page.

    Parameters
    ----------
    title : str
    intro : str
        HTML shown under the title.
    sections : list of (anchor id, heading, inner HTML)
        Figure ``<div>``s appear in the inner HTML with the ids of ``figures``.
    figures : list of dict
        ``{"id", "data", "layout"}`` plotly specifications.

    Examples
    --------
    >>> page = render_page(title="t", intro="", sections=[("s", "S", "<p>x</p>")],
    ...                    figures=[])
    >>> page.startswith("<!DOCTYPE html>")
    True
    """
    bundle, version = plotly_bundle()
    nav = " ".join(f'<a href="#{sid}">{html.escape(h)}</a>' for sid, h, _ in sections)
    body = "\n".join(f'<section id="{sid}"><h2>{html.escape(h)}</h2>\n{inner}\n</section>'
                     for sid, h, inner in sections)
    specs = json_for_script([{"id": f["id"], "data": f["data"], "layout": f["layout"]}
                             for f in figures])
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta name=\"generator\" content=\"qkforms report; plotly.js {html.escape(version)}\">\n"
        f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n"
        f"<script>/* plotly.js {html.escape(version)} (MIT licence), inlined */\n{bundle}\n"
        "</script>\n</head>\n<body data-rendered=\"0\">\n"
        f"<h1>{html.escape(title)}</h1>\n{intro}\n<nav>{nav}</nav>\n{body}\n"
        f"<script type=\"application/json\" id=\"qk-figures\">{specs}</script>\n"
        f"<script>{_JS}</script>\n</body>\n</html>\n"
    )
