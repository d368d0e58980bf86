"""Inline SVG for the report: a lane per pattern, the size charts, the evidence graph.

Everything drawn comes from the repository and is untrusted: every text and
attribute value goes through :func:`esc`. Large inputs are aggregated here
(size series bucketed to a fixed number of columns, the graph capped) so the
page stays small and quick to lay out.
"""

from __future__ import annotations

from html import escape
from typing import Iterable, Sequence

from flowgit.report.colors import Palette
from flowgit.report.graph import EvidenceGraph
from flowgit.report.model import (ARCHIVED, GROUND_MISSING, GROUND_NONE_GIVEN, GROUND_WEAK, NAME_SHOWN, NOTE_SHOWN,
                                  EpisodeInfo, Lane, SizePoint, Step, shown)

WIDTH = 960
LANE_H = 66
LEVEL_Y = {1: 44, 2: 28, 3: 12}
DOT_Y = 58
BUCKETS = 480


GRID = ('<path class="grid" d="' + "".join(f"M0,{y}H{WIDTH}" for y in LEVEL_Y.values()) + '"/>'
        + "".join(f'<text class="lvl" x="2" y="{y - 2}">{level}x</text>' for level, y in LEVEL_Y.items()))


def esc(text: object) -> str:
    """Escape for HTML/SVG text and double-quoted attributes."""
    return escape(str(text), quote=True)


def x_of(index: int, count: int, width: int = WIDTH, pad: int = 24) -> float:
    if count <= 1:
        return width / 2
    return round(pad + index * (width - 2 * pad) / (count - 1), 1)


def _y(step: Step) -> int:
    return LEVEL_Y[3] if step.section.lower().startswith("proven") else LEVEL_Y.get(min(max(step.level, 1), 3), 44)


SHAPES = {
    "added": "M-5,0a5,5 0 1,0 10,0a5,5 0 1,0 -10,0",
    "incremented": "M0,-6L6,5L-6,5Z",
    "graduated": "M0,-7L2,-2L7,-2L3,1L5,7L0,3L-5,7L-3,1L-7,-2L-2,-2Z",
    "demoted": "M0,6L6,-5L-6,-5Z",
    "lowered": "M0,5L5,-4L-5,-4Z",
    "archived": "M-5,-5L5,5M5,-5L-5,5",
    "present": "M-6,-5L4,0L-6,5Z",
}


def step_title(step: Step) -> str:
    where = "Proven" if step.section.lower().startswith("proven") else f"{step.level}x in {step.section}"
    parts = [f"{step.kind} — {where}", f"{step.date} · commit {step.commit[:10]} · {shown(step.author, NAME_SHOWN)}"]
    if step.session:
        parts.append(f"session {shown(step.session, NAME_SHOWN)}")
    if step.text_changed and step.text and step.kind != ARCHIVED:
        parts.append("says: " + (step.text if len(step.text) <= 300 else step.text[:299] + "…"))
    if step.evidence:
        listed = list(step.evidence[:DOTS_SHOWN])
        more = len(step.evidence) - len(listed)
        parts.append("evidence: " + ", ".join(listed) + (f" and {more:,} more (--json lists them all)" if more else ""))
    if step.note:
        parts.append(shown(step.note, NOTE_SHOWN))
    if step.findings:
        parts.append("audit: " + ", ".join(step.findings))
    parts.append(step.subject if len(step.subject) <= 100 else step.subject[:99] + "…")
    return "\n".join(parts)


def lane_span(lane: Lane, count: int) -> tuple[int, int]:
    """The commits a lane spans: its first step to its archival, or to the last commit in range.

    Each lane is drawn over its own life, so a pattern that lived for five of
    10,000 commits is still readable; the size chart keeps the global axis.
    """
    lo = lane.steps[0].index if lane.steps else 0
    hi = lane.steps[-1].index if lane.status == ARCHIVED and lane.steps else count - 1
    return lo, max(hi, lo)


def lane_svg(lane: Lane, count: int, episodes: dict[str, EpisodeInfo], palette: Palette) -> str:
    """One pattern's life: level over time, a mark per step, the evidence as dots under its promotions."""
    lo, hi = lane_span(lane, count)
    span = max(hi - lo + 1, 2)  # a life of one commit starts at the left edge like every other
    out = [f'<svg class="lane-svg" viewBox="0 0 {WIDTH} {LANE_H}" width="{WIDTH}" height="{LANE_H}" '
           f'role="img" aria-label="{esc(shown(lane.name, NAME_SHOWN))} timeline">']
    out.append(GRID)
    points: list[tuple[float, int]] = []
    if lane.steps and lane.steps[0].kind == "present":  # it stood there before the range: the line comes in
        points.append((0, _y(lane.steps[0])))
    for step in lane.steps:
        x, y = x_of(step.index - lo, span), _y(step)
        if points:
            points.append((x, points[-1][1]))
        points.append((x, y))
    if lane.status != ARCHIVED and points:
        points.append((WIDTH - 4, points[-1][1]))
    if len(points) > 1:
        path = " ".join(f"{x},{y}" for x, y in points)
        out.append(f'<polyline class="life {esc(lane.status)}" points="{path}"/>')
    graduations = {id(s) for s in lane.graduations}
    for step in lane.steps:
        out.append(_mark(step, lo, span))
        if id(step) in graduations or step.kind in ("evidence", "present"):
            out.append(_dots(step, lo, span, episodes, palette))
    out.append("</svg>")
    return "".join(out)


def _mark(step: Step, lo: int, span: int) -> str:
    x, y = x_of(step.index - lo, span), _y(step)
    shape = SHAPES.get(step.kind, "M-4,-4h8v8h-8Z")
    flagged = " flagged" if step.findings else ""
    override = " override" if "A301" in step.findings else ""
    return (f'<a href="#c-{esc(step.commit)}" class="step-link">'
            f'<g class="step {esc(step.kind)}{flagged}{override}" transform="translate({x},{y})" '
            f'data-kind="{esc(step.kind)}" data-commit="{esc(step.commit)}" tabindex="0">'
            f'<title>{esc(step_title(step))}</title>'
            + ('<circle class="ring" r="10"/>' if step.findings else "")
            + f'<path d="{shape}"/></g></a>')


DOTS_SHOWN = 16  # evidence dots under one step (and ids in its title); the table and --json hold them all


def _dots(step: Step, lo: int, span: int, episodes: dict[str, EpisodeInfo], palette: Palette) -> str:
    """The evidence under a step: all of it at a graduation and where the lane comes in, only what the step
    added at an evidence step (a pattern gaining one episode a wrap would otherwise redraw its whole chain
    each time), at most :data:`DOTS_SHOWN`, then how many more."""
    x = x_of(step.index - lo, span)
    every = [i for i in step.evidence if i in step.new_evidence] if step.kind == "evidence" else list(step.evidence)
    ids = every[:DOTS_SHOWN]
    start = x - (len(ids) - 1) * 4.5
    out = [f'<g class="dots" data-commit="{esc(step.commit)}">']
    if len(every) > len(ids):
        out.append(f'<text class="more" x="{round(start + len(ids) * 9 + 2, 1)}" y="{DOT_Y + 3}">'
                   f"+{len(every) - len(ids):,}</text>")
    for n, ident in enumerate(ids):
        ep = episodes.get(ident) or EpisodeInfo(ident, present=False)
        cls = "ev" + (" new" if ident in step.new_evidence else "") + ("" if ep.present else " missing")
        fill = palette.session(ep.session) if ep.present else "none"
        title = episode_title(ep)
        out.append(f'<circle class="{cls}" cx="{round(start + n * 9, 1)}" cy="{DOT_Y}" r="3.6" fill="{fill}" '
                   f'stroke="{palette.agent(ep.agent)}" data-ep="{esc(ident)}" tabindex="0">'
                   f'<title>{esc(title)}</title></circle>')
    out.append("</g>")
    return "".join(out)


def episode_title(ep: EpisodeInfo) -> str:
    if not ep.present:
        return f"{ep.id}: not in the store at HEAD (cited, never recorded or lost)"
    text = ep.content if len(ep.content) <= 200 else ep.content[:199] + "… (click for all of it)"
    return (f"{ep.id} · {ep.type} · session {shown(ep.session, NAME_SHOWN) or '?'} · "
            f"agent {shown(ep.agent, NAME_SHOWN) or '?'} · {ep.ts}\n{text}")


# ------------------------------------------------------------------ size charts

def size_chart(points: Sequence[SizePoint], measure: str, label: str, unit: str, target: int | None,
               hard: int | None, count: int, overrides: Iterable[int] = ()) -> str:
    """One measure per wrap against its budget lines; bucketed (peak per column) past ``BUCKETS`` points."""
    height, top, bottom = 150, 14, 22
    values = [(p.index, getattr(p.size, measure)) for p in points]
    present = [v for _, v in values if v is not None]
    if not present:
        return f'<p class="muted">No {esc(label)} in any version.</p>'
    highest = max(present)
    # budget lines far above the data would flatten it: draw only those within reach, name the others
    lines = [(v, c, n) for v, c, n in ((target, "target", "target"), (hard, "hard", "limit")) if v]
    near = [(v, c, n) for v, c, n in lines if v <= highest * 2.5]
    far = [f"{n} {v:,}" for v, c, n in lines if v > highest * 2.5]
    peak = max([highest] + [v for v, _, _ in near]) * 1.12 or 1

    def y(v: float) -> float:
        return round(height - bottom - (v / peak) * (height - top - bottom), 1)

    out = [f'<svg class="size-svg" data-measure="{esc(measure)}" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
           f'height="{height}" role="img" aria-label="{esc(label)} per wrap">']
    out.append(f'<text class="axis" x="4" y="11">{esc(label)} ({esc(unit)}), peak {highest:,}'
               + (f" — well under its {' and '.join(far)}" if far else "") + "</text>")
    out.append(f'<line class="baseline" x1="0" x2="{WIDTH}" y1="{y(0)}" y2="{y(0)}"/>'  # what the heights
               f'<text class="axis" x="{WIDTH - 4}" y="{y(0) - 3}" text-anchor="end">0</text>')  # are measured from
    for value, cls, name in near:
        if value:
            out.append(f'<line class="budget {cls}" x1="0" x2="{WIDTH}" y1="{y(value)}" y2="{y(value)}"/>'
                       f'<text class="budget-label {cls}" x="{WIDTH - 4}" y="{y(value) - 3}" '
                       f'text-anchor="end">{name} {value:,}</text>')
    series = _bucket(values, count)
    if series:
        pts = " ".join(f"{x_of(i, count)},{y(v)}" for i, v in series)
        if len(series) == 1:  # one version: a polyline of one point draws nothing, so draw the point itself
            (i, v), = series
            out.append(f'<circle class="series-point" cx="{x_of(i, count)}" cy="{y(v)}" r="3.5"><title>'
                       f'{v:,} {esc(unit)}</title></circle>')
        else:
            out.append(f'<polyline class="series" points="{pts}"/>')
        over = [(i, v) for i, v in series if hard and v > hard]
        for i, v in over[:200]:
            out.append(f'<circle class="over" cx="{x_of(i, count)}" cy="{y(v)}" r="3"><title>over the limit: '
                       f'{v:,} {esc(unit)}</title></circle>')
    if measure == "chars":
        out.extend(_archival_marks(points, count, height - bottom + 10))
        for i in sorted(set(overrides))[:200]:
            out.append(f'<line class="override-tick" x1="{x_of(i, count)}" x2="{x_of(i, count)}" y1="{top}" '
                       f'y2="{height - bottom}"><title>gate overridden in this commit</title></line>')
    first, last = points[0], points[-1]
    out.append(f'<text class="axis" x="4" y="{height - 2}">{esc(first.date)}</text>'
               f'<text class="axis" x="{WIDTH - 4}" y="{height - 2}" text-anchor="end">{esc(last.date)}</text>')
    out.append("</svg>")
    return "".join(out)


def _bucket(values: list[tuple[int, int | None]], count: int) -> list[tuple[int, int]]:
    known = [(i, v) for i, v in values if v is not None]
    if len(known) <= BUCKETS:
        return known
    width = count / BUCKETS
    out: dict[int, tuple[int, int]] = {}
    for i, v in known:
        b = int(i / width)
        if b not in out or v > out[b][1]:
            out[b] = (i, v)
    return [out[b] for b in sorted(out)]


def _archival_marks(points: Sequence[SizePoint], count: int, y: float) -> list[str]:
    """A mark where archival dropped patterns (grouped per column on long histories)."""
    width = max(count / BUCKETS, 1)
    groups: dict[int, list[SizePoint]] = {}
    for p in points:
        if p.archived:
            groups.setdefault(int(p.index / width), []).append(p)
    out = []
    for group in groups.values():
        names = [n for p in group for n in p.archived]
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        x = x_of(group[0].index, count)
        out.append(f'<path class="archival" d="M{x - 4},{y - 6}L{x + 4},{y - 6}L{x},{y}Z">'
                   f'<title>{esc(group[0].date)}: archived {esc(shown)}</title></path>')
    return out


# ------------------------------------------------------------------ evidence graph (data: graph.py)

def graph_svg(graph: EvidenceGraph, palette: Palette) -> str:
    """Four columns (patterns, episodes, sessions, agents), edges as curves; hovering a node lights its edges."""
    columns = {"p": [f"p:{ln.name}" for ln in graph.patterns], "e": [f"e:{e.id}" for e in graph.episodes],
               "s": [f"s:{s}" for s in graph.sessions], "a": [f"a:{a}" for a in graph.agents]}
    height = max(len(c) for c in columns.values()) * 20 + 30
    xs = {"p": 150, "e": 420, "s": 650, "a": 850}
    pos = {key: (xs[kind], round(20 + (n + 0.5) * (height - 30) / len(keys), 1))
           for kind, keys in columns.items() for n, key in enumerate(keys)}
    out = [f'<svg class="graph-svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" '
           f'aria-label="evidence graph">']
    out += [f'<text class="col-title" x="{xs[k]}" y="12" text-anchor="middle">{title}</text>'
            for k, title in (("p", "patterns"), ("e", "episodes"), ("s", "sessions"), ("a", "agents"))]
    for a, b in graph.edges:
        (x1, y1), (x2, y2) = pos[a], pos[b]
        mid = (x1 + x2) / 2
        out.append(f'<path class="edge" data-a="{esc(node_key(a))}" data-b="{esc(node_key(b))}" '
                   f'd="M{x1},{y1}C{mid},{y1} {mid},{y2} {x2},{y2}"/>')
    out += [_pattern_node(ln, pos[f"p:{ln.name}"]) for ln in graph.patterns]
    out += [_episode_node(e, pos[f"e:{e.id}"], palette) for e in graph.episodes]
    out += [_square("session", s, pos[f"s:{s}"], palette.session(s), "", 18) for s in graph.sessions]
    out += [_square("agent", a, pos[f"a:{a}"], palette.agent(a), ' rx="6"', 14) for a in graph.agents]
    out.append("</svg>")
    return "".join(out)


def _pattern_node(lane: Lane, at: tuple[float, float]) -> str:
    x, y = at
    weak = {GROUND_WEAK: " weak", GROUND_MISSING: " missing", GROUND_NONE_GIVEN: " missing none-given"}.get(
        lane.grounding, "")
    name = shown(lane.name, NAME_SHOWN)
    return (f'<g class="node pattern{weak}" data-node="{esc(node_key("p:" + lane.name))}" tabindex="0">'
            f"<title>{esc(name)}: {lane.level}x, {esc(_grounding_words(lane))}</title>"
            f'<circle cx="{x}" cy="{y}" r="5"/>'
            f'<text x="{x - 9}" y="{y + 4}" text-anchor="end">{esc(_clip(lane.name, 24))}</text></g>')


def _episode_node(ep: EpisodeInfo, at: tuple[float, float], palette: Palette) -> str:
    x, y = at
    fill = palette.session(ep.session) if ep.present else "none"
    return (f'<g class="node episode{"" if ep.present else " missing"}" data-node="e:{esc(ep.id)}" '
            f'data-ep="{esc(ep.id)}" tabindex="0"><title>{esc(episode_title(ep))}</title>'
            f'<circle cx="{x}" cy="{y}" r="4.5" fill="{fill}" stroke="{palette.agent(ep.agent)}"/>'
            f'<text x="{x + 8}" y="{y + 4}">{esc(ep.id)}</text></g>')


def node_key(key: str) -> str:
    """A graph node's key as the page carries it (``p:`` and a name cut as the page shows names): edges and
    nodes name it alike, so a hover still finds its edges, and a long name is not copied into each edge."""
    kind, _, name = key.partition(":")
    return f"{kind}:{shown(name, NAME_SHOWN)}"


def _square(kind: str, name: str, at: tuple[float, float], fill: str, extra: str, clip: int) -> str:
    x, y = at
    return (f'<g class="node {kind}" data-node="{esc(node_key(kind[0] + ":" + name))}" tabindex="0">'
            f'<title>{kind} {esc(shown(name, NAME_SHOWN))}</title>'
            f'<rect x="{x - 6}" y="{y - 6}" width="12" height="12"{extra} fill="{fill}"/>'
            f'<text x="{x + 10}" y="{y + 4}">{esc(_clip(name, clip))}</text></g>')


def _grounding_words(lane: Lane) -> str:
    if lane.grounding == GROUND_NONE_GIVEN:
        return "no evidence at all — raised without any, the weakest grounding"
    return (f"{len(lane.evidence)} episode(s) from {len(lane.sessions)} session(s) and "
            f"{lane.agents_shown} — {lane.grounding} grounding")


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def clip_words(text: str, n: int) -> str:
    """``text`` in at most ``n`` characters: whole, or cut after its last whole word that fits (mid-word only
    when one word is longer than half the room) and ended with "…", so a cut label never reads as whole."""
    if len(text) <= n:
        return text
    head = text[: n - 1]
    if not text[n - 1].isspace():
        space = head.rfind(" ")
        if space >= n // 2:
            head = head[:space]
    return head.rstrip(" ,;:.-—") + "…"
