"""Mermaid text for a pattern's life (a gantt chart) and for an ascend unit (a flowchart).

Mermaid's grammar gives free text few safe characters: a gantt task name ends
at ``:``, ``#`` starts an entity, ``;`` ends a statement. Every name from the
repository goes through :func:`gantt_text` or :func:`label` first.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Mapping, Sequence

from flowgit.report.unitgraph import UnitGraph

UNSAFE_GANTT = re.compile(r"[:#;\r\n\t%\"`]+")


SECTION_SHOWN = 60  # characters of a pattern's name a gantt section shows


def gantt_text(text: str, limit: int = 60) -> str:
    """Text a gantt line can hold: no ``:``, ``#``, ``;``, quotes or line breaks."""
    out = UNSAFE_GANTT.sub(" ", text).strip() or "(unnamed)"
    out = re.sub(r"\s+", " ", out)
    return out if len(out) <= limit else out[: limit - 1] + "…"


def label(text: str, limit: int = 80) -> str:
    """Text for a quoted flowchart label, entities for the characters mermaid would read as syntax."""
    text = re.sub(r"[\s\x00-\x1f\x7f]+", " ", text).strip()  # (a NUL would pass for the `#` placeholder below)
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    for ch, entity in (("#", "#35;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"), ("|", "#124;"),
                       ("[", "#91;"), ("]", "#93;"), ("{", "#123;"), ("}", "#125;"), ("`", "#96;")):
        text = text.replace(ch, entity) if ch != "#" else text.replace("#", "\0")
    return text.replace("\0", "#35;")


def _state(event: Mapping) -> str:
    section = str(event.get("section", ""))
    if section.lower().startswith("proven"):
        return "Proven 3x"
    if event.get("kind") == "archived":
        return "archived"
    return f"{event.get('level', 1)}x"


def log_gantt(patterns: Mapping[str, Sequence[Mapping]], title: str = "Pattern lives") -> str:
    """Each pattern a section; each level it held a bar from its event to the next; archival a milestone (and
    a pattern added again after it starts a new bar there, as ``flowgit log`` shows it live again).

    ``patterns`` maps a name to its events as ``flowgit log --json`` gives them
    (``date``, ``kind``, ``level``, ``section``), oldest first.
    """
    lines = ["gantt", f"    title {gantt_text(title)}", "    dateFormat YYYY-MM-DD", "    axisFormat %Y-%m-%d"]
    dates = [date.fromisoformat(str(e["date"])) for evs in patterns.values() for e in evs]
    if not dates:
        lines += ["    section (no pattern events yet)", f"    nothing recorded :milestone, none, "
                  f"{date.today().isoformat()}, 0d"]
        return "\n".join(lines) + "\n"
    last = max(dates)
    titles: dict[str, int] = {}  # two names cut or cleaned to one title stay two sections a reader tells apart
    for p, (name, events) in enumerate(patterns.items()):
        title = gantt_text(name, SECTION_SHOWN)
        titles[title] = count = titles.get(title, 0) + 1
        lines.append(f"    section {title}" + (f" ({count})" if count > 1 else ""))
        for s, event in enumerate(events):
            start = date.fromisoformat(str(event["date"]))
            tid = f"p{p}s{s}"
            if event.get("kind") == "archived":  # a milestone; a later event is a new life (added again)
                lines.append(f"    archived :crit, milestone, {tid}, {start.isoformat()}, 0d")
                continue
            nxt = date.fromisoformat(str(events[s + 1]["date"])) if s + 1 < len(events) else last + timedelta(days=1)
            end = max(nxt, start + timedelta(days=1))
            final = s + 1 == len(events)
            tags = ["crit"] if event.get("kind") == "demoted" else (["active"] if final else ["done"])
            lines.append(f"    {gantt_text(_state(event) + ' ' + str(event.get('kind', '')))} :{', '.join(tags)}, "
                         f"{tid}, {start.isoformat()}, {end.isoformat()}")
            if event.get("kind") == "graduated":
                lines.append(f"    graduated :milestone, {tid}m, {start.isoformat()}, 0d")
    return "\n".join(lines) + "\n"


def unit_flowchart(graph: UnitGraph) -> str:
    """Sessions as nodes in time order (left to right), each connection labelled with its basis."""
    lines = ["flowchart LR", "    %% " + " ".join(graph.title.replace("%", " ").split())]
    if not graph.nodes:
        lines.append(f'    empty["{label(graph.empty_note)}"]')
        return "\n".join(lines) + "\n"
    for n in graph.nodes:
        lines.append(f'    {n.id}["{label(n.date or "undated")} · {label(n.short)}<br/>{label(n.topic, 60)}"]')
    for e in graph.edges:
        lines.append(f'    {e.a} -->|"{label(e.basis, 60)}"| {e.b}')
    lines.append("    classDef concept fill:#fff8c5,stroke:#bf8700")
    concept = [n.id for n in graph.nodes if n.concept]
    if concept:
        lines.append(f"    class {','.join(concept)} concept")
    if graph.caveat:
        lines += [f'    caveat["{label(graph.caveat, len(graph.caveat))}"]', "    style caveat stroke-dasharray: 4 2"]
    return "\n".join(lines) + "\n"
