"""``flowgit log``, ``flowgit audit`` and ``flowgit show-archived``: history for people and agents."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from flowgit.changes import ARCHIVED, DEMOTED, GRADUATED, INCREMENTED, LOWERED, PRESENT, RENAMED
from flowgit.config import Config
from flowgit.continuity.sections import PROVEN
from flowgit.dates import option_date
from flowgit.errors import FlowgitError
from flowgit.history.audit import AuditReport
from flowgit.history.walk import History, HistoryEvent, Lives, names_at_boundary, read_history, window_events


@dataclass
class Timeline:
    patterns: dict[str, list[HistoryEvent]] = field(default_factory=dict)
    commits: int = 0
    shallow: bool = False
    oldest_visible: str | None = None
    boundary: frozenset[str] = frozenset()  # a shallow clone's boundary: a pattern present there began before it

    def to_dict(self) -> dict:
        return {"commits_read": self.commits, "shallow": self.shallow, "oldest_visible": self.oldest_visible,
                "patterns": {name: [e.to_dict() for e in events] for name, events in self.patterns.items()}}


def _day(text: str | None, option: str) -> date | None:
    return option_date(text, option)


def build_timeline(cfg: Config, names: tuple[str, ...], since: str | None, until: str | None,
                   section: str | None, graduated_only: bool, limit: int | None = None) -> Timeline:
    if limit is not None and limit < 1:  # (the CLI's option refuses it too; an agent's call reaches here)
        raise FlowgitError(f"limit must be 1 or more (got {limit})", fix="leave it out for every event, or "
                           "give how many of the newest to show")
    history = read_history(cfg)
    start, end = _day(since, "--since"), _day(until, "--until")
    shown = window_events(cfg, history, lambda c: _within(c.date, start, end))  # what stood there first
    lives = Lives(history)
    wanted = lives.named(names) if names else None
    _known_names_and_section(cfg, history, names, section, names_at_boundary(cfg, history))
    if section:
        from flowgit.continuity.sections import alias_table

        section = alias_table(cfg.aliases).get(section.strip().lower(), section)
    timeline = Timeline(commits=len(history.commits), shallow=history.shallow,
                        oldest_visible=history.oldest_visible, boundary=history.boundary)
    ever_graduated = {lives.key(i) for i in shown + history.events  # (ever: before the window too)
                      if i.event.kind == GRADUATED or (i.event.kind == PRESENT and i.event.section == PROVEN)}
    kept: list[tuple[str, HistoryEvent]] = []
    for item in shown:
        key = lives.key(item)
        if wanted is not None and key not in wanted:
            continue
        if graduated_only and key not in ever_graduated:
            continue
        if section and section.lower() not in item.event.section.lower():
            continue
        kept.append((key, item))
    for key, item in kept[-limit:] if limit else kept:  # events are oldest first: --limit keeps the newest
        timeline.patterns.setdefault(key, []).append(item)
    if names and not timeline.patterns and not history.events:
        if history.commits:  # committed, and no version ever held a pattern: the name is no pattern of it
            raise FlowgitError(f"no pattern {names[0]!r}: no version of the continuity file holds a pattern yet",
                               path=cfg.continuity_rel, fix="a pattern enters by a wrap (a plan's `add`, or the "
                               "file edited by hand); `flowgit patterns` lists them once there are some")
        raise FlowgitError("the continuity file has no history yet", path=cfg.continuity_rel,
                           fix="commit it first (flowgit wrap)")
    return timeline


def _within(day: str, start: date | None, end: date | None) -> bool:
    when = date.fromisoformat(day)
    return not ((start and when < start) or (end and when > end))


def _known_names_and_section(cfg: Config, history: History, names: tuple[str, ...], section: str | None,
                             standing: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    """A name or section that never appears in the history is a typo until shown otherwise: say which."""
    from flowgit.continuity.sections import alias_table
    from flowgit.suggest import section_filter, unknown

    seen = ({i.event.name for i in history.events} | {i.event.old_name for i in history.events if i.event.old_name}
            | set(standing))
    for name in names:
        if seen and name not in seen:
            raise unknown("pattern", name, sorted(seen), path=cfg.continuity_rel, listing="flowgit patterns")
    if section:
        section_filter(section, alias_table(cfg.aliases), {i.event.section for i in history.events})


def describe(item: HistoryEvent, boundary: frozenset[str] = frozenset()) -> str:
    e = item.event
    ev = f" [evidence: {', '.join(e.evidence)}]" if e.evidence else ""
    if e.kind == PRESENT:
        where = "Proven" if e.section == PROVEN else e.section
        since = ("its history begins before this shallow clone's boundary (fetch more history to see it)"
                 if item.commit.sha in boundary else "its earlier events are before this range")
        return f"present at {e.level}x in {where}{ev}: {since}"
    if e.kind == "added":
        return f"appeared at {e.level}x in {e.section}{ev}"
    if e.kind == INCREMENTED:
        return f"incremented {e.old_level}x -> {e.level}x{ev}"
    if e.kind == GRADUATED:
        return f"graduated to Proven ({e.level}x){ev}"
    if e.kind == DEMOTED:
        why = next((n for n in e.notes if n.lower().startswith("demoted")), "")[len("demoted"):].strip()
        return f"demoted to {e.section} ({e.level}x)" + (f" on {why}" if why else "")  # "on Dec 2: why"
    if e.kind == LOWERED:
        return f"lowered {e.old_level}x -> {e.level}x in {e.section}"
    if e.kind == ARCHIVED:
        return f"archived; last text: {e.text}"
    if e.kind == RENAMED:
        return f"renamed from {e.old_name}{ev}"
    if e.kind == "evidence":
        return f"evidence changed{ev}"
    return f"{e.kind} in {e.section}"


def render_timeline(t: Timeline) -> str:
    if not t.patterns:
        return f"no pattern events in {t.commits} commit(s)" + _shallow_note(t.shallow, t.oldest_visible)
    out = []
    from flowgit.continuity.identity import name_as_shown

    for name, events in t.patterns.items():
        out.append(name_as_shown(name))
        for item in events:
            c = item.commit
            who = ", ".join(x for x in (c.author, c.session and f"session {c.session}") if x)
            out.append(f"  {c.date}  {c.sha[:10]}  {describe(item, t.boundary)}  ({who})")
            if c.override:
                out.append(f"    ! made under an override: {c.override}")
    out.append(f"{len(t.patterns)} pattern(s), {t.commits} commit(s) read" + _shallow_note(t.shallow, t.oldest_visible))
    return "\n".join(out)


def render_mermaid(t: Timeline) -> str:
    """``flowgit log --format mermaid``: each pattern's life as a mermaid gantt chart."""
    from flowgit.report.mermaid import log_gantt

    return log_gantt({name: [e.to_dict() for e in events] for name, events in t.patterns.items()},
                     title=f"Pattern lives, {t.commits} commit(s)")


def _shallow_note(shallow: bool, oldest: str | None) -> str:
    return (f"; shallow clone: history visible back to {oldest[:12]} only" if shallow and oldest else "")


def audit(cfg: Config, range_text: str | None, since_ref: str | None, exclude: tuple[str, ...],
          options: dict, *, jobs: int | None = None, root_base: str | None = None,
          replaces: bool = False, spec=None) -> AuditReport:
    """Run the audit; ``--file``/``--store`` given on the command line apply to every commit's configuration.
    ``spec``: the range already worked out (``--pushed``)."""
    from flowgit.history.audit import RangeSpec, run_audit

    overrides = {k: v for k, v in (("continuity", options.get("continuity")), ("store", options.get("store"))) if v}
    report = run_audit(cfg, spec or RangeSpec.parse(range_text, since_ref, exclude, root_base, replaces), overrides,
                       jobs=jobs)
    if report.errors and not report.range:  # the whole history: which commits can still be rewritten
        from flowgit.history.remote import not_pushed

        report.not_pushed = not_pushed(cfg.root, list(dict.fromkeys(f.commit for f in report.errors)))
    return report


def _live_line(cfg: Config, name: str) -> int | None:
    """The line of the pattern ``name`` in the working continuity file, when it is there (None otherwise)."""
    from flowgit.continuity.patterns import pattern_map
    from flowgit.repo import load_document

    try:
        at = pattern_map(load_document(cfg)).get(name)
    except FlowgitError:
        return None
    return at.lineno if at is not None else None


def pushed_spec(range_text: str | None, exclude: tuple[str, ...], root_base: str | None):
    """``audit --pushed``: the pre-commit framework's pre-push stage (:func:`flowgit.history.remote.pushed_spec`)."""
    from flowgit.history.remote import pushed_spec as spec_of

    if range_text:
        raise FlowgitError("--pushed reads the range from the pre-push stage; do not give --range too")
    return spec_of(Path.cwd(), exclude, root_base)


REWRITE = ("rewrite the commit before it leaves, e.g. `git rebase -i` from its parent, fix it as its fix says, "
           "`git rebase --continue`")
REPAIR = "repair the memory in a new commit, as its fix says; the commit itself stays on the record"


def _repair_advice(report: AuditReport) -> str:
    """How to mend the failing commits: one on its way out (a range, or a commit no remote has) is rewritten,
    as a later commit does not take it back; one others have is repaired on top and stays on the record."""
    lead = "  (each is in a commit already made; the audit judges every commit, so a repair on top fixes the memory " \
           "but not the record: "
    failing = list(dict.fromkeys(f.commit for f in report.errors))
    if report.range or (report.not_pushed is not None and set(failing) <= report.not_pushed):
        return lead + REWRITE + ")"
    if report.not_pushed:  # some are out already, some not
        local = ", ".join(c[:12] for c in failing if c in report.not_pushed)
        return (lead + f"{local} no remote has yet: {REWRITE}; the others are pushed: {REPAIR})")
    if report.not_pushed is None:  # no remote known: whether anyone else has them only the user knows
        return (f"  (each is in a commit already made: {REPAIR}; or, if no one else has the commit yet, "
                f"{REWRITE})")
    return f"  (each is in a commit already made and pushed: {REPAIR})"


def render_audit(report: AuditReport) -> str:
    lines = [f.format() + (f"\n    fix: {f.fix}" if f.fix else "") for f in report.findings]
    if report.errors:
        lines.append(_repair_advice(report))
    overrides = sum(1 for f in report.findings if f.code == "A301")
    let_through = sum(1 for f in report.findings if f.severity == "notice" and f.code != "A301")
    verdict = "clean" if report.ok else f"{len(report.errors)} finding(s)" if report.errors else "incomplete"
    if overrides:
        verdict += f", {overrides} override(s) recorded" + (
            f" ({let_through} finding(s) they let through, listed above)" if let_through else "")
    scope = f" in {report.range}" if report.range else ""
    if report.range and ".." not in report.range and " --not " not in report.range:  # git's meaning, which
        # `--range HEAD~1` may not be read as (with `--not`, as the push hooks pass, it is what was asked)
        scope += " and all the history before it (A..B judges only the commits B has that A does not)"
    lines.append(f"flowgit audit: {report.judged} commit(s) judged with every gate rule{scope} "
                 f"({report.commits} read) — {verdict}" + _shallow_note(report.shallow, report.oldest_visible))
    if report.unjudged:
        lines.append(f"  not judged: {len(report.unjudged)} commit(s) whose parent is beyond the shallow boundary "
                     f"({', '.join(c[:12] for c in report.unjudged[:3])}); fetch more history to judge them"
                     + (" (`git fetch --unshallow`; in CI, check out the whole history): the range is not passed "
                        "until every commit in it is judged" if report.incomplete else ""))
    return "\n".join(lines)


def show_archived(cfg: Config, name: str) -> dict:
    history = read_history(cfg)
    last = None
    for item in history.events:
        if item.event.kind == ARCHIVED and item.event.name == name:
            last = item
    if last is None:
        from flowgit.suggest import close_matches

        archived = {i.event.name for i in history.events if i.event.kind == ARCHIVED}
        near = close_matches(name, archived)
        live = _live_line(cfg, name)
        raise FlowgitError(f"no archival of `{name}` in the history of {cfg.continuity_rel}"
                           + (f": it is live, at line {live}" if live else ""),
                           fix=("did you mean " + " or ".join(f"`{n}`" for n in near) + "?") if near
                           else "`flowgit log` lists every pattern's events")
    from flowgit.wrap.message import archival_reason

    return {"name": name, "text": last.event.text, "commit": last.commit.sha, "date": last.commit.date,
            "level": last.event.level, "section": last.event.section, "subject": last.commit.subject,
            "reason": archival_reason(last.commit.message, name)}


def render_archived(data: dict) -> str:
    reason = f"\nwhy: {data['reason']}" if data.get("reason") else ""
    return (f"{data['text']}\n(archived from {data['section']} by {data['commit'][:12]} on {data['date']}: "
            f"{data['subject']}){reason}")
