"""What the report shows, as plain data: lanes of steps, the episodes behind them, sizes, findings.

Every renderer (HTML, JSON, mermaid) reads this model and nothing else, so the
page, ``--json`` and the text graphs always tell the same story.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flowgit.report.sizes import Size

# Lane states, in the order the page lists them.
PROVEN, DEVELOPING, DEMOTED, ARCHIVED = "proven", "developing", "demoted", "archived"
STATUS_ORDER = (PROVEN, DEVELOPING, DEMOTED, ARCHIVED)

# How well a pattern's current evidence is grounded. "none": a 1x pattern, which needs none; "none-given": a
# raised or Proven pattern that cites none, the weakest grounding there is (weaker than one source).
GROUND_NONE, GROUND_NONE_GIVEN, GROUND_MISSING, GROUND_WEAK, GROUND_NARROW, GROUND_BROAD = (
    "none", "none-given", "missing", "weak", "narrow", "broad")
WEAK_GROUNDINGS = (GROUND_NONE_GIVEN, GROUND_MISSING, GROUND_WEAK)  # counted as "weakly grounded"
GROUNDING_WORDS = {GROUND_NONE: "none needed (1x)", GROUND_NONE_GIVEN: "none given: raised without evidence"}



NAME_SHOWN = 120  # characters of a session id, an agent or an author the page shows (--json has all of it)
NOTE_SHOWN = 600  # characters of a step's note (a demotion's reason, an archived pattern's last text)


def shown(text: str, limit: int) -> str:
    """``text`` as the page carries it: whole up to ``limit`` characters, then cut. A page repeats a step's
    session and author in every mark and row, so one hostile trailer must not multiply into megabytes."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


@dataclass(frozen=True)
class Step:
    """One event in a pattern's life, at one commit."""

    kind: str            # added, incremented, graduated, demoted, archived, renamed, evidence, …
    level: int
    section: str
    commit: str
    index: int           # the commit's position among the commits in range (oldest 0)
    date: str
    author: str
    session: str
    subject: str
    evidence: tuple[str, ...] = ()
    new_evidence: tuple[str, ...] = ()   # ids cited here that the previous step did not cite
    name: str = ""                       # the name the pattern had at this step
    note: str = ""                       # a demotion's reason, a rename's old name, an archival's last text
    findings: tuple[str, ...] = ()       # audit codes raised on this step (or on its commit: overrides)
    text: str = ""                       # what the pattern said at this step (its claim)
    text_changed: bool = False           # the claim differs from the previous step's (or this is the first)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "level": self.level, "section": self.section, "commit": self.commit,
                "index": self.index, "date": self.date, "author": self.author, "session": self.session,
                "subject": self.subject, "evidence": list(self.evidence), "new_evidence": list(self.new_evidence),
                "name": self.name, "note": self.note, "findings": list(self.findings), "text": self.text,
                "text_changed": self.text_changed}


@dataclass
class Lane:
    """One pattern's life (under its final name, renames followed)."""

    name: str
    steps: list[Step] = field(default_factory=list)
    status: str = DEVELOPING
    level: int = 1
    evidence: tuple[str, ...] = ()   # the evidence of its latest state
    grounding: str = GROUND_NONE
    sessions: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    unattributed: int = 0            # cited episodes in the store that name no agent (counted as none)
    text: str = ""                   # what it says now (as archived, for an archived pattern)

    @property
    def graduations(self) -> list[Step]:
        """Steps that raised the pattern's level (or put it in Proven): each must show its evidence."""
        return [s for s in self.steps if s.kind in ("incremented", "graduated")
                or (s.kind == "added" and s.level >= 2)]

    @property
    def agents_shown(self) -> str:
        """``2 agent(s)``, and how many of its episodes name none: the evidence graph draws those under
        "(no agent)", which the gate does not count as an agent of its own."""
        extra = f" (+{self.unattributed} episode(s) naming none)" if self.unattributed else ""
        return f"{len(self.agents)} agent(s){extra}"

    @property
    def last_index(self) -> int:
        return self.steps[-1].index if self.steps else -1

    def to_dict(self) -> dict:
        return {"name": self.name, "text": self.text, "status": self.status, "level": self.level,
                "evidence": list(self.evidence),
                "grounding": self.grounding, "sessions": list(self.sessions), "agents": list(self.agents),
                "unattributed": self.unattributed, "steps": [s.to_dict() for s in self.steps]}


@dataclass(frozen=True)
class EpisodeInfo:
    id: str
    ts: str = ""
    type: str = ""
    content: str = ""
    session: str = ""
    agent: str = ""
    present: bool = True   # False: cited but not in the store at HEAD

    def to_dict(self) -> dict:
        return {"id": self.id, "ts": self.ts, "type": self.type, "content": self.content, "session": self.session,
                "agent": self.agent, "present": self.present}


@dataclass(frozen=True)
class SizePoint:
    commit: str
    index: int
    date: str
    size: Size
    archived: tuple[str, ...] = ()   # patterns archived by this commit (a drop worth marking)

    def to_dict(self) -> dict:
        return {"commit": self.commit, "index": self.index, "date": self.date, **self.size.to_dict(),
                "archived": list(self.archived)}


@dataclass(frozen=True)
class Finding:
    code: str
    commit: str
    date: str
    pattern: str
    message: str
    severity: str = "error"  # "notice": an override, or what one let through (on record, no failure)

    @property
    def is_override(self) -> bool:
        return self.code == "A301"

    @property
    def is_error(self) -> bool:
        """A finding that fails the audit (what `flowgit audit` counts), not one an override put on record."""
        return self.severity == "error"

    def to_dict(self) -> dict:
        return {"code": self.code, "commit": self.commit, "date": self.date, "pattern": self.pattern,
                "message": self.message, "severity": self.severity}


@dataclass
class Report:
    """Everything the page draws."""

    title: str
    continuity: str
    lanes: list[Lane] = field(default_factory=list)
    episodes: dict[str, EpisodeInfo] = field(default_factory=dict)
    sizes: list[SizePoint] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    budgets: dict[str, int] = field(default_factory=dict)
    commits: int = 0                 # commits in range that hold the file
    commits_total: int = 0           # commits that hold the file, whole history
    since: str | None = None
    until: str | None = None
    patterns_filter: tuple[str, ...] = ()
    shallow: bool = False
    oldest_visible: str | None = None
    generated: str = ""

    @property
    def empty(self) -> bool:
        return not self.lanes and not self.sizes

    def to_dict(self) -> dict:
        return {"title": self.title, "continuity": self.continuity, "generated": self.generated,
                "commits_read": self.commits_total, "commits_in_range": self.commits, "since": self.since,
                "until": self.until, "patterns_filter": list(self.patterns_filter), "shallow": self.shallow,
                "oldest_visible": self.oldest_visible, "budgets": self.budgets,
                "patterns": [lane.to_dict() for lane in self.lanes],
                "episodes": {k: v.to_dict() for k, v in self.episodes.items()},
                "sizes": [p.to_dict() for p in self.sizes],
                "findings": [f.to_dict() for f in self.findings]}
