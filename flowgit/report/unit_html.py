"""An ascend unit as a self-contained HTML page: sessions in time order, connections as labelled arcs."""

from __future__ import annotations

import re

from flowgit.report.assets import CSS
from flowgit.report.html import CSP
from flowgit.report.svg import clip_words, esc
from flowgit.report.unitgraph import UnitGraph

STEP = 170


def unit_html(graph: UnitGraph) -> str:
    if not graph.nodes:
        body = f'<section class="empty"><p>{esc(graph.empty_note)}</p></section>'
    else:
        body = _svg(graph) + _tables(graph)
    if graph.caveat:
        body += f'<p class="meta caveat">{esc(graph.caveat)}</p>'
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f"<title>flowgit ascend — {esc(graph.title)}</title><style>{CSS}</style></head><body>"
            f"<header><h1>{esc(graph.title)}</h1><p class=\"meta\">status {esc(graph.status)} · "
            f"{len(graph.nodes)} session(s) in time order, {len(graph.edges)} connection(s) · flowgit ascend</p>"
            f"</header><main>{body}</main></body></html>\n")


def _svg(graph: UnitGraph) -> str:
    width = max(len(graph.nodes) * STEP + 40, 400)
    base = 60 + 24 * min(len(graph.edges), 12)
    height = base + 80
    x = {n.id: 20 + i * STEP + STEP / 2 for i, n in enumerate(graph.nodes)}
    out = [f'<svg class="unit-svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
           'aria-label="sessions in time order">']
    for k, e in enumerate(graph.edges):
        x1, x2 = x[e.a], x[e.b]
        lift = 30 + 22 * (k % 12)
        mid = (x1 + x2) / 2
        out.append(f'<path class="edge" d="M{x1},{base}Q{mid},{base - 2 * lift} {x2},{base}"/>'
                   f'<text class="axis" x="{mid}" y="{base - lift - 2}" text-anchor="middle">{esc(clip_words(e.basis, 48))}'
                   f"<title>{esc(e.basis)} ({esc(e.role)}, weight {e.weight:.2f})</title></text>")
    for n in graph.nodes:
        cx = x[n.id]
        cls = "node session" + (" concept" if n.concept else "")
        out.append(f'<g class="{cls}" data-session="{esc(n.session)}"><title>{esc(n.partition)} · {esc(n.slug)} · '
                   f'{esc(n.session)}</title><rect x="{cx - STEP / 2 + 8}" y="{base}" width="{STEP - 16}" height="56" '
                   f'rx="6" fill="#f6f8fa" stroke="#8c959f"/><text x="{cx}" y="{base + 16}" text-anchor="middle">'
                   f'{esc(n.date or "undated")}</text><text x="{cx}" y="{base + 32}" text-anchor="middle">'
                   f'{esc(n.short)}</text><text x="{cx}" y="{base + 48}" text-anchor="middle">{esc(clip_words(n.topic, 24))}'
                   "</text></g>")
    out.append("</svg>")
    return "".join(out)


def _tables(graph: UnitGraph) -> str:
    names = {n.id: n for n in graph.nodes}
    sessions = "".join(
        f"<tr><td>{esc(n.date)}</td><td>{esc(n.partition)}</td><td>{esc(n.slug)}</td><td><code>{esc(n.session)}</code>"
        f"</td><td>{esc(n.topic)}</td><td><code>{esc(n.resume or 'not resumable')}</code></td></tr>"
        for n in graph.nodes)
    edges = "".join(
        f"<tr><td><code>{esc(names[e.a].short)}</code></td><td><code>{esc(names[e.b].short)}</code></td>"
        f"<td>{esc(e.basis)}</td><td>{esc(e.role)}</td><td>{e.weight:.2f}</td></tr>" for e in graph.edges)
    return ("<h2>Sessions</h2><table><thead><tr><th>date</th><th>partition</th><th>project</th><th>session</th>"
            f"<th>topic</th><th>resume</th></tr></thead><tbody>{sessions}</tbody></table>"
            "<h2>Connections</h2><table><thead><tr><th>from</th><th>to</th><th>basis</th><th>role</th><th>weight</th>"
            f"</tr></thead><tbody>{edges}</tbody></table>")


def render_unit(response: dict, fmt: str) -> str:
    """One entry point for ``flowgit ascend --format``: html, mermaid or dot from the response dict."""
    from flowgit.report.dot import unit_dot
    from flowgit.report.mermaid import unit_flowchart
    from flowgit.report.unitgraph import unit_graph

    graph = unit_graph(response)
    return without_controls({"html": unit_html, "mermaid": unit_flowchart, "dot": unit_dot}[fmt](graph))


# What a terminal acts on rather than shows (C0 controls but the line break and tab, DEL, C1 controls) and the
# marks that reorder a line: a deposit's text must not set a title or write a clipboard when the graph is
# printed or `cat` later, nor change what a viewer shows
_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def without_controls(text: str) -> str:
    """``text`` with each control character drawn as its Unicode control picture (``␛`` for ESC; ``�`` where
    there is none): visible, and no escape that HTML, mermaid or DOT would read."""
    return _CONTROL_RE.sub(_picture, text)


def _picture(match: "re.Match[str]") -> str:
    code = ord(match.group())
    return chr(0x2400 + code) if code < 0x20 else ("\u2421" if code == 0x7f else "\ufffd")
