"""What happened to the patterns between two versions of the continuity file.

One derivation serves the wrap (which commits it as trailers), the commit-msg
check (which compares trailers with it), ``flowgit log`` (a timeline per
pattern) and ``flowgit audit`` (which re-derives every graduation rather than
trusting trailers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from flowgit.continuity.document import Document
from flowgit.continuity.identity import is_rename
from flowgit.continuity.patterns import Pattern, PatternAt, pattern_map
from flowgit.continuity.sections import PROVEN

ADDED, INCREMENTED, GRADUATED, DEMOTED, ARCHIVED, RENAMED, EVIDENCE, REWORDED, MOVED = (
    "added", "incremented", "graduated", "demoted", "archived", "renamed", "evidence", "reworded", "moved")
LOWERED = "lowered"  # a level taken down inside Developing (a claim reworded at 1x): not the protocol's demotion
# Not a change: the pattern already stood in the file where a range of history opens (a window's first commit,
# a shallow clone's boundary), so its earlier events are outside what was read. Readers seed timelines with it.
PRESENT = "present"


@dataclass(frozen=True)
class PatternEvent:
    kind: str
    name: str
    level: int
    section: str
    evidence: tuple[str, ...] = ()
    old_level: int | None = None
    old_name: str | None = None
    text: str = ""
    line: int | None = None
    notes: tuple[str, ...] = field(default=())
    claim: str = ""  # what the pattern says (its description), without name, level and annotations

    def to_dict(self) -> dict:
        return {"kind": self.kind, "name": self.name, "level": self.level, "section": self.section,
                "evidence": list(self.evidence), "old_level": self.old_level, "old_name": self.old_name,
                "text": self.text, "claim": self.claim, "line": self.line, "notes": list(self.notes)}


def _event(kind: str, at: PatternAt, **kw: object) -> PatternEvent:
    p = at.pattern
    return PatternEvent(kind=kind, name=p.name, level=p.level, section=at.section, evidence=p.evidence,
                        text=p.render().strip(), line=at.lineno, notes=p.notes, claim=p.text,
                        **kw)  # type: ignore[arg-type]


def standing(at: PatternAt) -> PatternEvent:
    """A pattern as it stands in a version, as a :data:`PRESENT` event (the start of a timeline cut short)."""
    return _event(PRESENT, at, old_level=None)


def is_graduated(at: PatternAt) -> bool:
    return at.section == PROVEN


def diff_patterns(old: Document | None, new: Document | None) -> list[PatternEvent]:
    """Events between two documents (see :func:`diff_pattern_maps`)."""
    return diff_pattern_maps(pattern_map(old) if old else {}, pattern_map(new) if new else {})


def diff_pattern_maps(before: Mapping[str, PatternAt], after: Mapping[str, PatternAt]) -> list[PatternEvent]:
    """Events in the order they matter: renames first, then per-pattern changes, then archivals."""
    events: list[PatternEvent] = []
    if before.keys() == after.keys():  # (compared in C) the same names: no rename, addition or archival
        for name, at in after.items():
            old_at = before[name]
            if old_at.pattern is not at.pattern or old_at.section != at.section:
                events.extend(_compare(old_at, at))
        return events
    gone = {n: at for n, at in before.items() if n not in after}
    fresh = {n: at for n, at in after.items() if n not in before}
    for name, at in list(fresh.items()):
        match = _rename_source(at.pattern, gone)
        if match is not None:
            old_at = gone.pop(match)
            fresh.pop(name)
            events.append(_event(RENAMED, at, old_name=match, old_level=old_at.pattern.level))
            events.extend(_compare(old_at, at))
    for name, at in after.items():
        if name in fresh:
            kind = GRADUATED if is_graduated(at) else ADDED
            events.append(_event(kind, at, old_level=None))
        elif name in before:
            old_at = before[name]
            if old_at.pattern is at.pattern and old_at.section == at.section:
                continue  # the same parsed line in the same section (a walk meets mostly these): nothing changed
            events.extend(_compare(old_at, at))
    for at in gone.values():
        events.append(_event(ARCHIVED, at, old_level=at.pattern.level))
    return events


def events_against(parents: list[Mapping[str, PatternAt]], after: Mapping[str, PatternAt]) -> list[PatternEvent]:
    """What a commit introduced: its events against its first parent's patterns (none: a first version) and,
    for a merge, only those it shows against every parent (one side's own history is not the merge's)."""
    events = diff_pattern_maps(parents[0] if parents else {}, after)
    if len(parents) > 1:
        others = [{(e.kind, e.name) for e in diff_pattern_maps(before, after)} for before in parents[1:]]
        events = [e for e in events if all((e.kind, e.name) in o for o in others)]
    return events


def _rename_source(p: Pattern, gone: dict[str, PatternAt]) -> str | None:
    """The vanished pattern a new name renames, by the gate's identity rule (:func:`is_rename`)."""
    return next((name for name, at in gone.items() if is_rename(at.pattern, p)), None)


def _compare(old: PatternAt, new: PatternAt) -> list[PatternEvent]:
    o, n = old.pattern, new.pattern
    out: list[PatternEvent] = []
    if is_graduated(new) and not is_graduated(old):
        out.append(_event(GRADUATED, new, old_level=o.level))
    elif is_graduated(old) and not is_graduated(new):
        out.append(_event(DEMOTED, new, old_level=o.level))
    elif n.level > o.level:
        out.append(_event(INCREMENTED, new, old_level=o.level))
    elif n.level < o.level:
        out.append(_event(LOWERED, new, old_level=o.level))
    elif set(n.evidence) != set(o.evidence):
        out.append(_event(EVIDENCE, new, old_level=o.level))
    elif old.section != new.section:
        out.append(_event(MOVED, new, old_level=o.level))
    elif n.text != o.text:
        out.append(_event(REWORDED, new, old_level=o.level))
    return out
