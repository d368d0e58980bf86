"""Temporal cleanup: archive Developing patterns stale for 7+ days and Proven ones for 30+.

A pattern's freshness is the newest of: the date of its newest cited episode,
the date written on it (``3x (CAT — 2026-11-30)``), and the last commit that
changed its line (``git blame``). A line this wrap changed is fresh today.
Archived patterns leave the file and are named in the commit's trailers, so
history can bring their text back (``flowgit show-archived``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Mapping

from flowgit.config import Thresholds
from flowgit.continuity.attached import attached_span
from flowgit.continuity.document import Document
from flowgit.continuity.identity import name_key
from flowgit.continuity.patterns import PatternAt, iter_patterns
from flowgit.continuity.sections import DEVELOPING, PROVEN
from flowgit.dates import today as utc_today, utc_from_timestamp
from flowgit.episodes import Episode
from flowgit.evidence import last_recorded
from flowgit.git import git


@dataclass(frozen=True)
class Stale:
    name: str
    section: str
    last_seen: date
    days: int
    line: int

    def to_dict(self) -> dict:
        return {"name": self.name, "section": self.section, "last_seen": self.last_seen.isoformat(),
                "days": self.days, "line": self.line}


def blame_dates(root: Path, rel: str) -> dict[str, date]:
    """Committer date of the last change to each line of HEAD's file, keyed by the line's text."""
    out = git(root, "blame", "--porcelain", "HEAD", "--", rel, check=False).decode("utf-8", "replace")
    times: dict[str, int] = {}
    dates: dict[str, date] = {}
    current = ""
    for line in out.splitlines():
        if line.startswith("\t"):
            text = line[1:]
            when = times.get(current)
            if when is not None:
                day = utc_from_timestamp(when).date()
                dates[text] = max(day, dates.get(text, day))
        elif line.startswith("committer-time "):
            times[current] = int(line.split()[1])
        else:
            head = line.split(" ", 1)[0]
            if len(head) in (40, 64) and all(c in "0123456789abcdef" for c in head):
                current = head
    return dates


def last_seen(at: PatternAt, episodes: Mapping[str, Episode], blamed: Mapping[str, date], today: date) -> date:
    changed = blamed.get(at.pattern.render(), today)  # a line HEAD does not have was changed by this wrap
    recorded = last_recorded(at.pattern, episodes, reference=today, until=today)  # what the gate's G205 reads too
    return changed if recorded is None else max(changed, recorded)


def find_stale(doc: Document, episodes: Mapping[str, Episode], blamed: Mapping[str, date], today: date,
               thresholds: Thresholds, keep: set[str] | frozenset[str] = frozenset()) -> list[Stale]:
    """Patterns past their staleness window; never one named in ``keep`` (it fired this session).

    Staleness is time that has passed, and the commit is made now: a wrap dated
    later (``today``: a plan's ``date``, ``--date``) must not archive what is
    still fresh now (a pattern recorded minutes earlier, a Proven one the gate's
    G205 would find fresh), so every window is measured up to today at the latest.
    """
    limits = {DEVELOPING: thresholds.stale_developing_days, PROVEN: thresholds.stale_proven_days}
    day = min(today, utc_today())
    kept = {name_key(name) for name in keep}  # (a name as the plan wrote it: by identity)
    out = []
    for at in iter_patterns(doc):
        limit = limits.get(at.section)
        if limit is None or name_key(at.pattern.name) in kept:
            continue
        seen = last_seen(at, episodes, blamed, day)
        days = (day - seen).days
        if days > limit:
            out.append(Stale(at.pattern.name, at.section, seen, days, at.lineno))
    return out


def archive(doc: Document, stale: list[Stale]) -> Document:
    from flowgit.continuity.derivation import unlink_archived

    names = {s.name for s in stale}
    for at in reversed(list(iter_patterns(doc))):
        if at.pattern.name in names:
            doc = doc.splice(at.line, attached_span(doc, at.line), [])  # (with the lines under it)
    return unlink_archived(doc, names) if names else doc
