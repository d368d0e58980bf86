"""The report as one self-contained HTML file: inline CSS, inline SVG, a small inline script.

The page needs no network (a Content-Security-Policy forbids it outright),
opens from disk, reads without its script (the script only adds paging, the
detail panel and the table search) and prints. Every string from the
repository is escaped; the data the script reads travels as JSON with ``<``,
``>`` and ``&`` escaped, and is only ever put on the page as text.
"""

from __future__ import annotations

import json
import re
from typing import Iterable

from flowgit.report.assets import CSS, JS
from flowgit.report.colors import Palette
from flowgit.report.model import (ARCHIVED, DEMOTED, DEVELOPING, GROUNDING_WORDS, GROUND_MISSING, GROUND_NONE_GIVEN,
                                  GROUND_WEAK, NAME_SHOWN, NOTE_SHOWN, PROVEN, WEAK_GROUNDINGS, Lane, Report, Step,
                                  shown)
from flowgit.report.svg import SHAPES, esc, graph_svg, lane_span, lane_svg, size_chart

LANE_LIMIT = 500        # lanes drawn; the rest are aggregated into the table
MARK_BUDGET = 6_000     # steps drawn over all lanes (a lane is drawn whole or not at all)
TIMELINE_BYTES = 2_500_000  # the drawn lanes' share of the page (which stays under 5 MB): lanes past it are tabled
LANES_PER_PAGE = 50
ROWS_PER_PAGE = 200
EVENT_ROWS_LIMIT = 2_000
PATTERN_ROWS_LIMIT = 1_000
PAGE_START = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"  # every page's first bytes
GENERATOR_META = '<meta name="generator" content="flowgit report">'  # how `report -o` knows its own pages
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


def _named(name: str) -> str:
    """A pattern's name as the page shows it: escaped, and cut (the grammar allows any length; --json has it all)."""
    return esc(shown(name, NAME_SHOWN))


SEPARATED = re.compile(r"[^_\-./:]*[_\-./:]?")  # a name's pieces, each ending at a separator
RUN = 24  # characters of a piece without a separator shown before a break is allowed inside it


def _named_cell(name: str) -> str:
    """:func:`_named` for a table cell: it wraps only after ``_ - . / :`` (or inside a run of 24 characters
    without one), never mid-word, so ``retry_budget`` breaks as ``retry_`` / ``budget`` in a narrow column."""
    parts = (piece[at:at + RUN] for piece in SEPARATED.findall(shown(name, NAME_SHOWN)) if piece
             for at in range(0, len(piece), RUN))
    return "<wbr>".join(esc(part) for part in parts)


def palette_of(report: Report) -> Palette:
    """Colours in the order sessions and agents first appear in the drawn lanes."""
    cited = [report.episodes[i] for ln in drawn_lanes(report) for s in ln.steps for i in s.evidence
             if i in report.episodes]
    return Palette((e.session for e in cited), (e.agent for e in cited))


def render_html(report: Report) -> str:
    palette = palette_of(report)
    body = _empty(report) if report.empty else "".join([
        _summary(report), _timeline(report, palette), _graph(report, palette), _sizes(report), _findings(report),
        _tables(report)])
    return "".join([
        PAGE_START,
        GENERATOR_META,
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>flowgit report — {esc(report.title)}</title><style>{CSS}</style></head><body>",
        _header(report), f"<main>{body}</main>",
        '<aside id="detail" role="dialog" aria-live="polite" hidden></aside>',
        f'<script type="application/json" id="report-data">{_script_json(report)}</script>',
        f"<script>{JS}</script></body></html>\n"])


def script_safe(data: object) -> str:
    """JSON that cannot close its ``<script>`` element or open a comment."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _script_json(report: Report) -> str:
    """The episodes the drawn lanes and the graph cite: what the detail panel shows on a click."""
    drawn = {i for ln in drawn_lanes(report) for s in ln.steps for i in s.evidence}
    drawn |= {i for ln in report.lanes if ln.status != ARCHIVED for i in ln.evidence}
    return script_safe({"episodes": {k: v.to_dict() for k, v in report.episodes.items() if k in drawn}})


def _header(report: Report) -> str:
    scope = []
    if report.since or report.until:
        scope.append(f"from {report.since or 'the start'} to {report.until or 'now'}")
    if report.patterns_filter:
        scope.append("patterns: " + ", ".join(report.patterns_filter))
    shallow = (f" · shallow clone: history visible back to {report.oldest_visible[:12]} only"
               if report.shallow and report.oldest_visible else "")
    nav = "" if report.empty else ('<nav><a href="#timeline">Timeline</a><a href="#graph">Evidence graph</a>'
                                   '<a href="#sizes">Size per wrap</a><a href="#findings">Audit</a>'
                                   '<a href="#tables">Table view</a></nav>')
    return (f"<header><h1>The life of {esc(report.continuity)} <span class=\"muted\">in {esc(report.title)}</span>"
            f"</h1><p class=\"meta\">{report.commits:,} of {report.commits_total:,} commit(s) that hold the file"
            + (" · " + esc("; ".join(scope)) if scope else "") + f"{esc(shallow)} · generated "
            f"{esc(report.generated)} by flowgit report</p>{nav}</header>")


def _empty(report: Report) -> str:
    if report.commits_total == 0:
        why = (f"There is no history of <code>{esc(report.continuity)}</code> yet: no commit holds it.")
        fix = ("<ol><li><code>flowgit init</code> writes the continuity file and the episodic store;</li>"
               "<li>record what happened with <code>flowgit episode add</code>;</li>"
               "<li><code>flowgit wrap</code> edits the file with the protocol's semantics and commits it;</li>"
               "<li>run <code>flowgit report</code> again: each wrap becomes a point on this page.</li></ol>")
    else:
        why = "No commit or pattern matches what you asked for."
        fix = ("<p>Widen <code>--since</code>/<code>--until</code>, or check the names given to "
               "<code>--pattern</code> with <code>flowgit log</code>.</p>")
    return f'<section id="empty" class="empty"><h2>Nothing to draw yet</h2><p>{why}</p>{fix}</section>'


def _summary(report: Report) -> str:
    counts = {s: sum(1 for ln in report.lanes if ln.status == s) for s in (PROVEN, DEVELOPING, DEMOTED, ARCHIVED)}
    graduations = sum(len(ln.graduations) for ln in report.lanes)
    weak = sum(1 for ln in report.lanes if ln.grounding in WEAK_GROUNDINGS and ln.status != ARCHIVED)
    overrides = sum(1 for f in report.findings if f.is_override)
    cards = [("patterns", len(report.lanes)), ("proven", counts[PROVEN]), ("developing", counts[DEVELOPING]),
             ("demoted", counts[DEMOTED]), ("archived", counts[ARCHIVED]), ("promotions", graduations),
             ("weakly grounded", weak), ("audit findings", sum(1 for f in report.findings if f.is_error)),
             ("overrides", overrides)]
    return ('<section id="summary" class="cards">' + "".join(
        f'<div class="card" data-card="{esc(k)}"><b>{v:,}</b>{esc(k)}</div>' for k, v in cards) + "</section>")


def _legend() -> str:
    marks = [("added", "appeared"), ("incremented", "level raised"), ("graduated", "graduated to Proven"),
             ("demoted", "demoted"), ("archived", "archived"),
             ("present", "already in the file where the range opens (its earlier events are outside it)")]
    items = [f'<span><svg width="16" height="16" viewBox="-8 -8 16 16"><g class="step {k}"><path d="{SHAPES[k]}"/>'
             f"</g></svg> {esc(label)}</span>" for k, label in marks]
    items.append('<span><svg width="16" height="16" viewBox="-8 -8 16 16"><g class="step flagged"><circle '
                 'class="ring" r="6"/></g></svg> audit finding / override</span>')
    items.append("<span>dots under a promotion: its evidence episodes, filled by session, ringed by agent "
                 "(hover or click for the text; a dashed ring: not in the store)</span>")
    return '<div class="legend">' + "".join(items) + "</div>"


def _lane_head(lane: Lane, report: Report) -> str:
    lo, hi = lane_span(lane, report.commits)
    first = lane.steps[0].date if lane.steps else ""
    if lane.steps and lane.steps[0].kind == "present":
        first = f"before {first}"
    last = next((p.date for p in report.sizes[hi:hi + 1]), lane.steps[-1].date if lane.steps else "")
    life = f'<span class="muted life-span">{esc(first)} → {esc(last)} · {hi - lo + 1:,} commit(s)</span>'
    badges = [f'<span class="badge {esc(lane.status)}">{esc(lane.status)}</span>',
              f'<span class="badge">{lane.level}x</span>']
    if lane.evidence:
        cls = lane.grounding if lane.grounding in (GROUND_WEAK, GROUND_MISSING) else ""
        words = {GROUND_WEAK: "weak: one session, one agent", GROUND_MISSING: "cites episodes not in the store"}
        badges.append(f'<span class="badge {cls}" data-grounding="{esc(lane.grounding)}">'
                      f"{len(lane.evidence)} episode(s) · {len(lane.sessions)} session(s) · "
                      f"{lane.agents_shown}" + (f" — {words[lane.grounding]}" if cls else "") + "</span>")
    if lane.grounding == GROUND_NONE_GIVEN:
        badges.append(f'<span class="badge missing" data-grounding="{GROUND_NONE_GIVEN}">no evidence — raised to '
                      f"{lane.level}x without any</span>")
    codes = sorted({c for s in lane.steps for c in s.findings})
    if codes:
        badges.append(f'<span class="badge finding">audit: {esc(", ".join(codes))}</span>')
    renamed = sorted({s.name for s in lane.steps if s.name != lane.name})
    if renamed:
        badges.append(f'<span class="badge">formerly {", ".join(map(_named, renamed))}</span>')
    return (f'<div class="lane-head"><span class="lane-name">{_named(lane.name)}</span>{"".join(badges)}{life}'
            "</div>")


CLAIM_SHOWN = 600  # characters of a pattern's claim the lane and tables show (--json has all of it)


def shown_claim(text: str) -> str:
    """A claim as the page shows it: a reader judges a lane by what it says, but one huge line must not
    swamp the page."""
    return text if len(text) <= CLAIM_SHOWN else text[:CLAIM_SHOWN - 1] + "… (all of it in --json)"


def _claim(lane: Lane) -> str:
    """What the pattern says now (as archived, for an archived one), under its name."""
    if not lane.text:
        return ""
    return f'<p class="claim"><span class="muted">{"said" if lane.status == ARCHIVED else "says"}:</span> ' \
           f"{esc(shown_claim(lane.text))}</p>"


def drawn_lanes(report: Report) -> list[Lane]:
    """The lanes the page draws: the first :data:`LANE_LIMIT`, while their marks stay within
    :data:`MARK_BUDGET` (a history of many short-lived names, or of a few with thousands of steps, would
    otherwise draw a page of many megabytes); the rest are in the table view."""
    out, marks = [], 0
    for lane in report.lanes[:LANE_LIMIT]:
        marks += len(lane.steps)
        if out and marks > MARK_BUDGET:
            break
        out.append(lane)
    return out


def _timeline(report: Report, palette: Palette) -> str:
    articles, size = [], 0
    for n, ln in enumerate(drawn_lanes(report)):
        article = (f'<article class="lane {esc(ln.status)}" id="lane-{n}" data-pattern="{_named(ln.name)}">'
                   f"{_lane_head(ln, report)}{_claim(ln)}{lane_svg(ln, report.commits, report.episodes, palette)}"
                   "</article>")
        size += len(article)
        if articles and size > TIMELINE_BYTES:
            break
        articles.append(article)
    lanes = report.lanes[:len(articles)]
    pages = [f'<div class="page"{" hidden" if start else ""}>{"".join(articles[start:start + LANES_PER_PAGE])}</div>'
             for start in range(0, len(articles), LANES_PER_PAGE)]
    if not lanes:
        asked = (" matching " + ", ".join(report.patterns_filter)) if report.patterns_filter else ""
        hint = ("<code>flowgit log</code> lists every pattern's name." if asked else
                "A pattern enters by a wrap: record what happened with <code>flowgit episode add</code>, then "
                "<code>flowgit wrap</code> (a plan's <code>add</code>, or the file edited by hand); each wrap "
                "becomes a point here.")
        pages.append(f'<p class="empty" id="no-lanes">No pattern event{esc(asked)} in these '
                     f"{report.commits:,} commit(s). {hint}</p>")
    rest = len(report.lanes) - len(lanes)
    note = (f'<p class="muted" id="lanes-aggregated">{rest:,} more pattern(s), the least recently active '
            f"(mostly archived), are summarised in the table view only; narrow the page with --pattern or "
            f"--since to draw them.</p>" if rest > 0 else "")
    return (f'<section id="timeline"><h2>Pattern timelines</h2><p class="muted">One lane per pattern: its level '
            f"(1x, 2x, 3x/Proven) from its first appearance to its archival or to the last of the "
            f"{report.commits:,} commit(s), each step linked to its commit in the table below; a pattern "
            f"already in the file where the range opens enters at the level it held there. Each lane spans "
            f"its own life, left edge to right, so a short life stays readable: lanes do not share a time "
            f"axis (compare dates in each lane's head, or the size chart's axis).</p>"
            f"{_legend()}{_session_legend(report, palette)}<div class=\"paged lanes\">{''.join(pages)}</div>"
            f"{note}</section>")


def _session_legend(report: Report, palette: Palette) -> str:
    cited = [report.episodes[i] for ln in drawn_lanes(report) for s in ln.steps for i in s.evidence
             if i in report.episodes and report.episodes[i].present]
    sessions = list(dict.fromkeys(e.session for e in cited))
    agents = list(dict.fromkeys(e.agent for e in cited))
    if not sessions:
        return ""

    def chips(names: list[str], color, rounded: str) -> str:  # noqa: ANN001
        drawn = "".join(f'<span><svg width="12" height="12"><rect width="12" height="12" {rounded} '
                        f'fill="{color(n)}"/></svg> {esc(shown(n, NAME_SHOWN) or "(none)")}</span>' for n in names[:24])
        return drawn + (f"<span>… {len(names) - 24} more</span>" if len(names) > 24 else "")

    rounded = 'rx="6"'
    return (f'<div class="legend"><strong>sessions:</strong>{chips(sessions, palette.session, "")}</div>'
            f'<div class="legend"><strong>agents:</strong>{chips(agents, palette.agent, rounded)}</div>')


def _graph(report: Report, palette: Palette) -> str:
    from flowgit.report.graph import evidence_graph

    graph = evidence_graph(report)
    svg, note = (graph_svg(graph, palette) if graph.patterns else ""), graph.note
    return (f'<section id="graph"><h2>Evidence graph</h2><p class="muted">Each live pattern with evidence, the '
            f"episodes it cites, the sessions they came from and the agents who wrote them. A pattern drawn in "
            f"amber rests on one session and one agent (one source, however many episodes); red cites episodes "
            f"the store does not hold; a hollow red node was raised without any evidence at all.</p>{svg}" + (f'<p class="muted">{esc(note)}</p>' if note else "")
            + "</section>")


def _sizes(report: Report) -> str:
    b = report.budgets
    overrides = [p.index for f in report.findings if f.is_override for p in report.sizes if p.commit == f.commit]
    charts = [
        size_chart(report.sizes, "chars", "the file", "characters", b.get("file_chars_target"),
                   b.get("file_chars_max"), report.commits, overrides),
        size_chart(report.sizes, "developing_lines", "Developing Knowledge", "lines",
                   b.get("developing_lines_target"), b.get("developing_lines_max"), report.commits),
        size_chart(report.sizes, "state_chars", "Current State", "characters", b.get("state_chars_target"),
                   b.get("state_chars_max"), report.commits),
    ]
    drops = sum(1 for p in report.sizes if p.archived)
    return (f'<section id="sizes"><h2>Size per wrap</h2><p class="muted">Each version against its budgets '
            f"(dashed: target, solid: limit). Grey triangles mark the {drops:,} commit(s) whose archival dropped "
            f"patterns; red ticks mark commits that overrode the gate.</p>{''.join(charts)}</section>")


def _findings(report: Report) -> str:
    if not report.findings:
        return ('<section id="findings"><h2>Audit findings and overrides</h2><p>Clean: every promotion in range '
                "was re-derived from the file's history and its evidence held as of its commit; no override.</p>"
                "</section>")
    ordered = sorted(report.findings, key=lambda f: (not f.is_override, f.date, f.code))
    items = "".join(
        f'<li class="{"override" if f.is_override else "finding"}"><span class="finding-code">{esc(f.code)}</span> '
        f'{esc(f.date)} <a href="#c-{esc(f.commit)}"><code>{esc(f.commit[:10])}</code></a>'
        + (f" <code>{esc(f.pattern)}</code>" if f.pattern else "") + f": {esc(f.message)}</li>"
        for f in ordered[:2000])
    more = f"<p class=\"muted\">… and {len(ordered) - 2000:,} more (see --json).</p>" if len(ordered) > 2000 else ""
    return (f'<section id="findings"><h2>Audit findings and overrides</h2><p class="muted">From '
            f"<code>flowgit audit</code>: overrides first, then each finding; the same steps carry a red ring on "
            f"the timeline.</p><ul class=\"findings\">{items}</ul>{more}</section>")


def _tables(report: Report) -> str:
    head = ("<tr><th>pattern</th><th>claim</th><th>status</th><th>level</th><th>first seen</th><th>last change</th><th>steps</th>"
            "<th>evidence</th><th>sessions</th><th>agents</th><th>grounding</th><th>audit</th></tr>")
    rows = []
    for ln in report.lanes[:PATTERN_ROWS_LIMIT]:
        codes = ", ".join(sorted({c for s in ln.steps for c in s.findings}))
        rows.append(f'<tr data-pattern="{_named(ln.name)}"{" class=flagged" if codes else ""}>'
                    f"<td><code>{_named_cell(ln.name)}</code></td><td>{esc(shown_claim(ln.text))}</td>"
                    f"<td>{esc(ln.status)}</td><td>{ln.level}x</td>"
                    f"<td>{esc(_first_seen(ln))}</td><td>{esc(ln.steps[-1].date)}</td><td>{len(ln.steps)}</td>"
                    f"<td>{esc(_listed(list(ln.evidence)))}</td><td>{len(ln.sessions)}</td><td>{len(ln.agents)}</td>"
                    f"<td>{esc(GROUNDING_WORDS.get(ln.grounding, ln.grounding))}</td><td>{esc(codes)}</td></tr>")
    patterns_table = _paged_table("patterns-table", head, rows)
    if len(report.lanes) > PATTERN_ROWS_LIMIT:
        patterns_table += (f'<p class="muted">{len(report.lanes) - PATTERN_ROWS_LIMIT:,} more pattern(s), the least '
                           f"recently active, are in <code>flowgit report --json</code>.</p>")
    events = sorted(((s, ln) for ln in report.lanes for s in ln.steps), key=lambda p: (p[0].index, p[1].name))
    listed = events[-EVENT_ROWS_LIMIT:]
    head = ("<tr><th>date</th><th>commit</th><th>pattern</th><th>event</th><th>level</th><th>section</th>"
            "<th>evidence</th><th>session</th><th>author</th><th>audit</th></tr>")
    anchored: set[str] = set()
    rows = []
    for step, ln in listed:
        anchor = "" if step.commit in anchored else f' id="c-{esc(step.commit)}"'
        anchored.add(step.commit)
        rows.append(_event_row(step, ln, anchor))
    rows.extend(_commit_only_rows(report, anchored))
    cut = (f'<p class="muted">The oldest {len(events) - len(listed):,} events are left out here; '
           f"<code>flowgit report --json</code> and <code>flowgit log</code> have them all.</p>"
           if len(events) > len(listed) else "")
    events_table = _paged_table("events-table", head, rows)
    return ('<section id="tables"><h2>Table view</h2><p class="search"><label>Search the tables: '
            '<input type="search" id="table-search" placeholder="pattern, commit, session, code…"></label></p>'
            f"<h3>Patterns</h3>{patterns_table}<h3>Events</h3>{cut}{events_table}</section>")


def _first_seen(lane: Lane) -> str:
    """A lane's first date; 'before' it when the pattern already stood there as the range opened."""
    first = lane.steps[0]
    return f"before {first.date}" if first.kind == "present" else first.date


def _note_cell(step: Step) -> str:
    """The step's note after its kind (``demoted: 2026-12-05: contradicted by …``): a demotion's note opens
    with the word the kind already shows, which the row would otherwise print twice."""
    note = step.note
    if note.lower().startswith(step.kind):
        note = note[len(step.kind):].lstrip(" :")
    return f": {esc(shown(note, NOTE_SHOWN))}" if note else ""


def _event_row(step: Step, lane: Lane, anchor: str) -> str:
    flag = " class=flagged" if step.findings else ""
    where = "Proven" if step.section.lower().startswith("proven") else step.section
    return (f"<tr{anchor}{flag} data-pattern=\"{_named(lane.name)}\">"
            f"<td>{esc(step.date)}</td><td><code>{esc(step.commit[:10])}</code></td><td>{_named_cell(step.name)}</td>"
            f"<td>{esc(step.kind)}{_note_cell(step)}{_said(step)}</td>"
            f"<td>{step.level}x</td><td>{esc(where)}</td><td>{esc(_evidence_cell(step))}</td>"
            f"<td>{esc(shown(step.session, NAME_SHOWN))}</td><td>{esc(shown(step.author, NAME_SHOWN))}</td>"
            f"<td>{esc(', '.join(step.findings))}</td></tr>")


EVIDENCE_LISTED = 60  # ids an event row lists (--json lists them all)


def _evidence_cell(step: Step) -> str:
    """An event row's evidence: what an evidence step added (a chain growing a wrap at a time would otherwise be
    listed whole in every row), else the chain, at most :data:`EVIDENCE_LISTED` ids."""
    ids = list(step.evidence)
    added = [i for i in ids if i in step.new_evidence]
    if step.kind == "evidence" and added and len(added) < len(ids):
        return "+ " + _listed(added) + f" ({len(ids):,} cited in all)"
    return _listed(ids)


def _listed(ids: list[str]) -> str:
    more = len(ids) - EVIDENCE_LISTED
    return ", ".join(ids[:EVIDENCE_LISTED]) + (f" and {more:,} more" if more > 0 else "")


def _said(step: Step) -> str:
    """The claim in an event row where it changed (its first step, a rewording): the text each step stood on."""
    if not step.text_changed or not step.text or step.kind == ARCHIVED:  # (an archival's note holds the text)
        return ""
    return f'<br><q class="claim">{esc(shown_claim(step.text))}</q>'


def _commit_only_rows(report: Report, anchored: set[str]) -> Iterable[str]:
    """Commits with a finding (an override, say) but no pattern event still get a row to link to."""
    for f in report.findings:
        if f.commit in anchored:
            continue
        anchored.add(f.commit)
        yield (f'<tr id="c-{esc(f.commit)}" class=flagged><td>{esc(f.date)}</td><td><code>{esc(f.commit[:10])}'
               f"</code></td><td>{esc(f.pattern)}</td><td>(no pattern event)</td><td></td><td></td><td></td><td></td>"
               f"<td></td><td>{esc(f.code)}</td></tr>")


def _paged_table(ident: str, head: str, rows: list[str]) -> str:
    if not rows:
        return '<p class="muted">Nothing here.</p>'
    pages = [f'<div class="page"{" hidden" if start else ""}><table class="data" id="{ident}-{start // ROWS_PER_PAGE}">'
             f"<thead>{head}</thead><tbody>{''.join(rows[start:start + ROWS_PER_PAGE])}</tbody></table></div>"
             for start in range(0, len(rows), ROWS_PER_PAGE)]
    return f'<div class="paged" id="{ident}">{"".join(pages)}</div>'
