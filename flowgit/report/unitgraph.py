"""An ascend answer as a graph: its sessions as nodes in time order, its connections as labelled edges.

Built from the JSON-shaped dict an ascend response gives (``Response.to_dict``),
so the mermaid, DOT and HTML renderings read one stable shape, whatever the
engine does inside.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class Node:
    id: str            # n0, n1, … in time order
    key: str           # the deposit key the edges name
    date: str
    partition: str
    slug: str
    session: str
    topic: str
    resume: str | None
    concept: bool = False
    shown: str = ""    # the session id as the graph labels it: unique among its nodes (see _shown_ids)

    @property
    def short(self) -> str:
        return self.shown or self.session[:12] + ("…" if len(self.session) > 12 else "")


SHOWN_MIN = 12  # characters of a session id a label shows at least


def _shown_ids(sessions: list[str]) -> dict[str, str]:
    """Each id's shortest prefix of at least :data:`SHOWN_MIN` characters that no other id of the graph
    shares (``alice-monday-am`` and ``alice-monday-pm`` both read `alice-monday…` when cut at twelve)."""
    out = {}
    for sid in sessions:
        others = [o for o in sessions if o != sid]
        need = SHOWN_MIN
        while need < len(sid) and any(o.startswith(sid[:need]) for o in others):
            need += 1
        out[sid] = sid if need >= len(sid) else sid[:need] + "…"
    return out


@dataclass(frozen=True)
class Edge:
    a: str
    b: str
    basis: str
    role: str
    weight: float


@dataclass
class UnitGraph:
    title: str
    status: str
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    empty_note: str = ""
    caveat: str = ""   # what the answer's text ends with (a past trajectory, to re-check): every format draws it


def _key(d: Mapping[str, Any]) -> str:
    return f"{d.get('partition', '')}:{d.get('slug', '')}:{d.get('session_id', '')}"


def unit_graph(response: Mapping[str, Any]) -> UnitGraph:
    """The unit (or the single session) an ascend response presents, as a graph."""
    status = str(response.get("status", ""))
    unit = response.get("unit") or None
    single = response.get("single_session") or None
    if unit:
        deposits = list(unit.get("deposits") or [])
        title = f"{unit.get('type', 'unit')}: {unit.get('label', '')} ({unit.get('confidence', '')} confidence)"
    elif single:
        deposits = [single]
        title = "one session answers this recall"
    else:
        return UnitGraph("ascend", status, empty_note=f"no unit to draw (status: {status or 'unknown'})")
    ordered = deposits   # in the response's own time order (ascend's, from the records): text and graph agree
    node_key = str(unit.get("node") or "") if unit else ""
    shown = _shown_ids(list(dict.fromkeys(str(d.get("session_id", "")) for d in ordered)))
    nodes = [Node(id=f"n{i}", key=_key(d), date=_date(d), partition=str(d.get("partition", "")),
                  slug=str(d.get("slug", "")), session=str(d.get("session_id", "")), topic=str(d.get("topic") or ""),
                  resume=d.get("resume"), concept=_key(d) == node_key,
                  shown=shown.get(str(d.get("session_id", "")), "")) for i, d in enumerate(ordered)]
    by_key = {n.key: n for n in nodes}
    order = {n.id: i for i, n in enumerate(nodes)}
    edges = []
    seen = set()
    for c in (unit.get("connections") or []) if unit else []:
        a, b = by_key.get(str(c.get("a"))), by_key.get(str(c.get("b")))
        if a is None or b is None or a is b:
            continue
        if order[a.id] > order[b.id]:
            a, b = b, a
        pair = (a.id, b.id, str(c.get("basis", "")))
        if pair in seen:
            continue
        seen.add(pair)
        edges.append(Edge(a.id, b.id, str(c.get("basis", "")), str(c.get("role", "")), float(c.get("weight") or 0)))
    return UnitGraph(title, status, nodes, edges, caveat=str(response.get("caveat") or ""))


def _date(deposit: dict) -> str:
    """A session's date as a node shows it: marked when its own record does not attest it (never drawn as
    fact: the text marks it so too)."""
    day = str(deposit.get("date") or "")
    return f"{day} (provisional)" if day and deposit.get("date_verdict") == "unattested" else day
