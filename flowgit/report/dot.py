"""Graphviz DOT for an ascend unit: sessions left to right in time order, connections labelled."""

from __future__ import annotations

from flowgit.report.unitgraph import UnitGraph


def dot_string(text: str, limit: int = 120) -> str:
    """A double-quoted DOT string: backslashes and quotes escaped, line breaks as DOT's ``\\n``."""
    text = " ".join(text.split())
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def unit_dot(graph: UnitGraph) -> str:
    lines = ["digraph ascend {", "  rankdir=LR;", f"  label={dot_string(graph.title)};", "  labelloc=t;",
             '  node [shape=box, style="rounded,filled", fillcolor="#f6f8fa", fontname="Helvetica", fontsize=11];',
             '  edge [fontname="Helvetica", fontsize=9, color="#57606a"];']
    if not graph.nodes:
        lines.append(f"  empty [shape=plaintext, label={dot_string(graph.empty_note)}];")
    for n in graph.nodes:
        text = dot_string(f"{n.date or 'undated'} · {n.partition}") [:-1] + "\\n" + dot_string(n.short)[1:-1] \
            + "\\n" + dot_string(n.topic, 60)[1:]
        fill = ', fillcolor="#fff8c5"' if n.concept else ""
        lines.append(f"  {n.id} [label={text}{fill}];")
    for a, b in zip(graph.nodes, graph.nodes[1:]):  # keeps time order left to right
        lines.append(f"  {a.id} -> {b.id} [style=invis, weight=10];")
    for e in graph.edges:
        lines.append(f"  {e.a} -> {e.b} [label={dot_string(e.basis, 60)}];")
    if graph.caveat:
        lines.append(f"  caveat [shape=note, label={dot_string(graph.caveat, len(graph.caveat))}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
