"""The evidence graph as data: live patterns -> the episodes they cite -> sessions -> agents.

It makes weak grounding visible: a pattern whose episodes all funnel into one
session and one agent rests on one source, however many episodes it cites.
Capped so that a large memory still draws (the tables list everything).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flowgit.report.model import ARCHIVED, GROUND_NONE_GIVEN, EpisodeInfo, Lane, Report

GRAPH_PATTERNS = 60
GRAPH_EPISODES = 240
NO_SESSION, NO_AGENT = "(no session)", "(no agent)"


@dataclass
class EvidenceGraph:
    patterns: list[Lane] = field(default_factory=list)
    episodes: list[EpisodeInfo] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)  # node keys: p:NAME, e:ID, s:SESSION, a:AGENT
    note: str = ""


def evidence_graph(report: Report) -> EvidenceGraph:
    # a raised pattern with no evidence is drawn too, with no edge: it is the weakest grounding, not an absent one
    lanes = [ln for ln in report.lanes if (ln.evidence or ln.grounding == GROUND_NONE_GIVEN) and ln.status != ARCHIVED]
    notes = []
    if not lanes:
        return EvidenceGraph(note="No live pattern cites evidence yet: the graph appears once a pattern reaches 2x.")
    if len(lanes) > GRAPH_PATTERNS:
        notes.append(f"Showing {GRAPH_PATTERNS} of {len(lanes)} patterns with evidence (the table lists all).")
        lanes = lanes[:GRAPH_PATTERNS]
    ids = list(dict.fromkeys(i for ln in lanes for i in ln.evidence))
    if len(ids) > GRAPH_EPISODES:
        notes.append(f"Showing {GRAPH_EPISODES} of {len(ids)} episodes.")
        ids = ids[:GRAPH_EPISODES]
    episodes = [report.episodes.get(i) or EpisodeInfo(i, present=False) for i in ids]
    known = [e for e in episodes if e.present]
    graph = EvidenceGraph(lanes, episodes, list(dict.fromkeys(e.session or NO_SESSION for e in known)),
                          list(dict.fromkeys(e.agent or NO_AGENT for e in known)), note=" ".join(notes))
    kept = set(ids)
    graph.edges = [(f"p:{ln.name}", f"e:{i}") for ln in lanes for i in ln.evidence if i in kept]
    graph.edges += [(f"e:{e.id}", f"s:{e.session or NO_SESSION}") for e in known]
    graph.edges += list(dict.fromkeys((f"s:{e.session or NO_SESSION}", f"a:{e.agent or NO_AGENT}") for e in known))
    return graph
