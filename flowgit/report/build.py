"""Building the report from the history walk that ``flowgit log`` and ``flowgit audit`` read.

One walk serves everything: the pattern events become lanes, the same
:class:`History` goes to the audit's core function (its findings are pinned
on the steps they concern), and each version's blob is measured once for the
size chart. Cited episodes are looked up in the store as HEAD has it.
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Iterable

from flowgit.changes import ARCHIVED, DEMOTED, GRADUATED, PRESENT, RENAMED
from flowgit.config import Config
from flowgit.continuity.sections import PROVEN, alias_table
from flowgit.dates import option_date
from flowgit.history.walk import (CommitInfo, History, HistoryEvent, Lives, iter_pattern_events, names_at_boundary,
                                  open_repo, read_history, window_events)
from flowgit.report.model import (ARCHIVED as LANE_ARCHIVED, DEMOTED as LANE_DEMOTED, DEVELOPING, GROUND_BROAD,
                                  GROUND_MISSING, GROUND_NARROW, GROUND_NONE, GROUND_NONE_GIVEN, GROUND_WEAK,
                                  PROVEN as LANE_PROVEN, STATUS_ORDER, EpisodeInfo, Finding, Lane, Report, SizePoint,
                                  Step)
from flowgit.report.sizes import Size, measure


def _day(text: str | None, option: str) -> date | None:
    return option_date(text, option)


def build_report(cfg: Config, *, since: str | None = None, until: str | None = None,
                 patterns: Iterable[str] = (), title: str | None = None) -> Report:
    """The whole report for the repository ``cfg`` names (reads git; writes nothing)."""
    from flowgit.history.audit import PendingAudit
    from flowgit.history.walk import collect_commits, small_object_cache

    start, end = _day(since, "--since"), _day(until, "--until")
    # Every gate rule on every commit, judged by workers while this process walks the commits; the audit
    # notes each version's events and size from the documents its rules parse, so the walk reads again
    # only what the audit could not note for it (see flowgit.history.notes).
    with PendingAudit(cfg, notes=cfg.aliases) as pending:
        with small_object_cache():
            walked = collect_commits(cfg, open_repo(cfg.root))
        for commit in walked[0]:  # read now, while the workers judge, rather than after them on one core
            commit.date, commit.session  # noqa: B018 (remembered by each commit)
        audit = pending.report()  # the same verdict `flowgit audit` gives
    table = alias_table(cfg.aliases)
    history = read_history(cfg, measure=lambda text: measure(text, table), known=audit.notes, walked=walked)
    lives = Lives(history)
    wanted = lives.named(patterns) or None
    in_range = [c for c in history.commits if _within(c, start, end)]
    shown = window_events(cfg, history, lambda c: _within(c, start, end))  # what stood there as it opens first
    if wanted is not None:
        known = {lives.key(i) for i in iter_pattern_events(history)}
        _require_known(wanted, known | {i.event.name for i in shown} | names_at_boundary(cfg, history),
                       cfg.continuity_rel)
    index = {c.sha: i for i, c in enumerate(in_range)}
    held = {c.sha for c in history.commits}  # (a commit that took the file away holds none, and is judged too)
    findings = [Finding(f.code, f.commit, f.date, lives.at(f.commit, f.pattern) if f.pattern else f.pattern,
                        f.message, f.severity)
                for f in audit.findings
                if (f.commit in index or f.commit not in held and _day_within(f.date, start, end))
                and (wanted is None or not f.pattern or lives.at(f.commit, f.pattern) in wanted)]
    archived_at: dict[str, list[str]] = {}
    lanes = _lanes(shown, lives, wanted, index, findings, archived_at)
    episodes = _episodes(cfg, lanes)
    for lane in lanes:
        _ground(lane, episodes)
    lanes.sort(key=lambda ln: (STATUS_ORDER.index(ln.status), -ln.level, -ln.last_index, ln.name))
    b = cfg.budgets
    return Report(
        title=title or cfg.root.name, continuity=cfg.continuity_rel, lanes=lanes, episodes=episodes,
        sizes=_sizes(cfg, history, in_range, index, archived_at), findings=findings,
        budgets={"file_chars_target": b.file_chars_target, "file_chars_max": b.file_chars_max,
                 "state_chars_target": b.state_chars_target, "state_chars_max": b.state_chars_max,
                 "developing_lines_target": b.developing_lines_target,
                 "developing_lines_max": b.developing_lines_max, "file_lines_target": b.file_lines_target},
        commits=len(in_range), commits_total=len(history.commits), since=since, until=until,
        patterns_filter=tuple(patterns), shallow=history.shallow, oldest_visible=history.oldest_visible,
        generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))


def _require_known(wanted: set[str], known: set[str], path: str) -> None:
    """A ``--pattern`` no version of the file ever held is a typo: refused with the nearest names."""
    from flowgit.suggest import unknown

    for name in sorted(wanted - known):
        raise unknown("pattern", name, sorted(known), path=path, listing="flowgit log")


def _within(commit: CommitInfo, start: date | None, end: date | None) -> bool:
    return _day_within(commit.date, start, end)


def _day_within(day: str, start: date | None, end: date | None) -> bool:
    when = date.fromisoformat(day)
    return not ((start and when < start) or (end and when > end))


def _lanes(events: list[HistoryEvent], lives: Lives, wanted: set[str] | None, index: dict[str, int],
           findings: list[Finding], archived_at: dict[str, list[str]]) -> list[Lane]:
    """One pass over the pattern events (``present`` seeds first): the lanes, and (for the size chart) what each
    commit archived."""
    by_step: dict[tuple[str, str], list[str]] = {}
    by_commit: dict[str, list[str]] = {}
    for f in findings:
        if f.pattern:
            by_step.setdefault((f.commit, f.pattern), []).append(f.code)
        else:
            by_commit.setdefault(f.commit, []).append(f.code)
    lanes: dict[str, Lane] = {}
    for item in events:
        if item.event.kind == ARCHIVED and item.commit.sha in index:
            archived_at.setdefault(item.commit.sha, []).append(item.event.name)
        key = lives.key(item)
        if (wanted is not None and key not in wanted) or item.commit.sha not in index:
            continue
        lane = lanes.setdefault(key, Lane(name=key))
        codes = tuple(dict.fromkeys(by_step.get((item.commit.sha, key), []) + by_commit.get(item.commit.sha, [])))
        lane.steps.append(_step(item, index[item.commit.sha], lane, codes))
    for lane in lanes.values():
        _settle(lane)
    return list(lanes.values())


def _step(item: HistoryEvent, at: int, lane: Lane, codes: tuple[str, ...]) -> Step:
    e, c = item.event, item.commit
    before = set(lane.steps[-1].evidence) if lane.steps else set()
    said = lane.steps[-1].text if lane.steps else None
    note = ""
    if e.kind == DEMOTED:
        note = next((n for n in e.notes if n.lower().startswith("demoted")), "")
    elif e.kind == RENAMED:
        note = f"renamed from {e.old_name}"
    elif e.kind == ARCHIVED:
        note = e.text
    return Step(kind=e.kind, level=e.level, section=e.section, commit=c.sha, index=at, date=c.date,
                author=c.author, session=c.session, subject=c.subject, evidence=tuple(e.evidence),
                new_evidence=() if e.kind == PRESENT else tuple(i for i in e.evidence if i not in before),
                name=e.name, note=note,
                findings=codes, text=e.claim, text_changed=e.claim != said)


def _settle(lane: Lane) -> None:
    """The lane's state after its last step."""
    last = lane.steps[-1]
    lane.level, lane.evidence, lane.text = last.level, last.evidence, last.text
    if last.kind == ARCHIVED:
        lane.status = LANE_ARCHIVED
    elif last.section == PROVEN:
        lane.status = LANE_PROVEN
    else:
        graduated = [i for i, s in enumerate(lane.steps) if s.kind == GRADUATED]
        demoted = [i for i, s in enumerate(lane.steps) if s.kind == DEMOTED]
        lane.status = LANE_DEMOTED if demoted and (not graduated or demoted[-1] > graduated[-1]) else DEVELOPING


def _episodes(cfg: Config, lanes: list[Lane]) -> dict[str, EpisodeInfo]:
    from flowgit.episodes import lookup

    cited = {i for lane in lanes for s in lane.steps for i in s.evidence}
    if not cited:
        return {}
    repo = open_repo(cfg.root)
    data = b""
    if not repo.head_is_unborn:
        try:
            data = repo[repo.head.peel().tree[cfg.store_rel].id].data
        except KeyError:
            data = b""
    found = lookup(data, cited)
    out: dict[str, EpisodeInfo] = {}
    for ident in sorted(cited):
        ep = found.get(ident)
        out[ident] = (EpisodeInfo(ep.id, ep.ts, ep.type, shown_content(ep.content), ep.session, ep.agent) if ep
                      else EpisodeInfo(ident, present=False))
    return out


EPISODE_SHOWN = 4000  # characters of an episode the page carries: a dozen 1 MB episodes kept it no page to open


def shown_content(content: str) -> str:
    """An episode's text as the page carries it: whole up to :data:`EPISODE_SHOWN` characters, then cut with
    a note of how much more the store holds (the page stays small whatever an episode holds)."""
    if len(content) <= EPISODE_SHOWN:
        return content
    return content[:EPISODE_SHOWN] + f" … ({len(content) - EPISODE_SHOWN:,} more characters in the store)"


def _ground(lane: Lane, episodes: dict[str, EpisodeInfo]) -> None:
    """How independent the lane's current evidence is: one session and one agent is one source (weak)."""
    cited = [episodes[i] for i in lane.evidence if i in episodes]
    known = [e for e in cited if e.present]
    lane.sessions = _sources(e.session for e in known)
    lane.agents = _sources(e.agent for e in known)
    lane.unattributed = sum(1 for e in known if not e.agent)
    if not lane.evidence:  # a 1x pattern needs none; one raised or Proven without any stands on nothing
        lane.grounding = GROUND_NONE_GIVEN if lane.level >= 2 or lane.status == LANE_PROVEN else GROUND_NONE
    elif len(known) < len(lane.evidence):
        lane.grounding = GROUND_MISSING
    elif len(lane.sessions) <= 1 and len(lane.agents) <= 1:
        lane.grounding = GROUND_WEAK
    elif len(lane.sessions) <= 1 or len(lane.agents) <= 1:
        lane.grounding = GROUND_NARROW
    else:
        lane.grounding = GROUND_BROAD


def _sources(names) -> tuple[str, ...]:
    """The distinct sources among ``names`` as the gate counts them (:func:`flowgit.evidence.source_name`:
    ``sess-sat`` and ``SESS_SAT`` are one session), each shown as first spelt."""
    from flowgit.evidence import source_name

    first: dict[str, str] = {}
    for name in names:
        if name:
            first.setdefault(source_name(name) or name, name)
    return tuple(sorted(first.values()))


def _sizes(cfg: Config, history: History, in_range: list[CommitInfo], index: dict[str, int],
           archived: dict[str, list[str]]) -> list[SizePoint]:
    """Each version's size: measured by the history walk as it read the text, else read here (a version
    the walk never needed, such as a shallow clone's boundary whose child left the file alone)."""
    if not in_range:
        return []
    measured: dict[object, Size] = dict(history.measures)  # type: ignore[arg-type]
    missing = [c.blob for c in in_range if c.blob not in measured]
    if missing:
        odb = open_repo(cfg.root).odb
        table = alias_table(cfg.aliases)
        for blob in dict.fromkeys(missing):
            measured[blob] = measure(odb.read(blob)[1].decode("utf-8", "replace"), table)
    points = []
    for commit in reversed(in_range):
        points.append(SizePoint(commit.sha, index[commit.sha], commit.date, measured[commit.blob],
                                tuple(archived.get(commit.sha, ()))))
    return points[::-1]
