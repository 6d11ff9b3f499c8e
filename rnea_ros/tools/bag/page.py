"""``report.html``: ``report.md`` as one self-contained page (plots embedded as PNG data,
no script, no network), like ``rnea-fleet``'s report.

The page is rendered from the report's own Markdown lines (one source for both), of
the subset :func:`rnea_ros.tools.bag.report.write_report` writes: ``#``/``##``
headings, ``- `` lists, ``|`` tables, ``![alt](file.png)`` images, paragraphs with
``code`` and **bold**. Table rows of a violation are shown in red.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

STYLE = """body{font-family:sans-serif;margin:1.5em;max-width:1300px}
table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;padding:2px 6px}
td{text-align:right}td:first-child,td:nth-child(2){text-align:left}
tr.violation td{color:#b00}img{max-width:100%}code{background:#f4f4f4}"""

_IMAGE = re.compile(r"^!\[(?P<alt>[^\]]*)\]\((?P<src>[^)]+)\)$")


def inline(text: str) -> str:
    """Escape, then ``code`` and **bold**."""
    out = html.escape(text)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", out)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def render(lines: list[str], out: Path, title: str) -> str:
    """The HTML page of ``lines`` (Markdown); images are read from ``out`` and embedded."""
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
             f"</title><style>{STYLE}</style></head><body>"]
    k = 0
    while k < len(lines):
        line = lines[k]
        image = _IMAGE.match(line.strip())
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            parts.append(f"<h{level}>{inline(line[level:].strip())}</h{level}>")
        elif line.startswith("- "):
            items = []
            while k < len(lines) and lines[k].startswith("- "):
                items.append(f"<li>{inline(lines[k][2:])}</li>")
                k += 1
            parts.append(f"<ul>{''.join(items)}</ul>")
            continue
        elif line.startswith("|"):
            rows = []
            while k < len(lines) and lines[k].startswith("|"):
                rows.append(_cells(lines[k]))
                k += 1
            head, body = rows[0], [r for r in rows[1:] if not set("".join(r)) <= set("-:")]
            violation = head[:2] == ["joint", "kind"]
            parts.append("<table><tr>" + "".join(f"<th>{inline(c)}</th>" for c in head)
                         + "</tr>" + "".join(
                             f"<tr{' class=violation' if violation else ''}>"
                             + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>"
                             for r in body) + "</table>")
            continue
        elif image:
            data = base64.b64encode((out / image["src"]).read_bytes()).decode()
            parts.append(f"<p><img alt='{html.escape(image['alt'])}' "
                         f"src='data:image/png;base64,{data}'></p>")
        elif line.strip():
            parts.append(f"<p>{inline(line)}</p>")
        k += 1
    parts.append("</body></html>")
    return "\n".join(parts)


def write_page(lines: list[str], out: Path, title: str) -> Path:
    """``out/report.html`` from the report's Markdown ``lines``."""
    path = out / "report.html"
    path.write_text(render(lines, out, title), encoding="utf-8")
    return path
