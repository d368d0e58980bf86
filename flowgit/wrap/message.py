"""The generated wrap commit message: a FLOW-style subject and queryable git trailers.

Both wrap modes derive the message from the same facts (the pattern events
between HEAD and the new file, and the episodes the store gained), so the same
change gives the same message however it was made.
"""

from __future__ import annotations

from datetime import date

from flowgit.changes import ADDED, ARCHIVED, DEMOTED, GRADUATED, INCREMENTED, LOWERED, RENAMED, PatternEvent
from flowgit.dates import short


SECTION_VERBS = {"replaced": "replaced", "rewritten": "rewritten", "updated": "updated", "added": "added"}


def subject(events: list[PatternEvent], day: date, sections: dict[str, str] | None = None,
            episodes: int = 0) -> str:
    """What really changed: pattern events first; else the sections that changed; else the episodes."""
    parts = []
    graduated = [e.name for e in events if e.kind == GRADUATED]
    demoted = [e.name for e in events if e.kind == DEMOTED]
    incremented = [e.name for e in events if e.kind == INCREMENTED]
    added = [e.name for e in events if e.kind == ADDED]
    archived = [e.name for e in events if e.kind == ARCHIVED]
    lowered = [e.name for e in events if e.kind == LOWERED]
    renamed = [f"{e.old_name} to {e.name}" for e in events if e.kind == RENAMED]
    if graduated:
        parts.append(f"graduated {_names(graduated)} to Proven")
    if demoted:
        parts.append(f"demoted {_names(demoted)}")
    if incremented:
        parts.append(f"incremented {_names(incremented)}")
    if added:
        parts.append(f"added {_names(added)}")
    if archived:
        parts.append(f"archived {_names(archived)}")
    if lowered:
        parts.append(f"lowered {_names(lowered)}")
    if renamed:
        parts.append(f"renamed {_names(renamed)}")
    if not parts and sections:
        parts = [f"{name} {change}" for name, change in sections.items()][:3]
        if len(sections) > 3:
            parts.append(f"{len(sections) - 3} more section(s) updated")
    if not parts and episodes:
        parts.append(f"{episodes} episode(s) recorded")
    tail = ", ".join(parts) if parts else "no change"
    return f"Session wrap {short(day)} — {tail}"


ARCHIVAL_REASON = "Archived {name} because: {reason}"  # a body line: `flowgit show-archived` reads it back


def archival_reasons(plan, events: list[PatternEvent]) -> list[str]:
    """A body line for each archival the plan gave a reason for and the wrap made: the reason is the one thing
    about an archival that its line (kept by git) does not say. (Plan text is one line: see freetext.)"""
    from flowgit.continuity.identity import name_key

    made = {name_key(e.name): e.name for e in events if e.kind == ARCHIVED}  # (named as the file spelled it)
    return [ARCHIVAL_REASON.format(name=made[name_key(op.name)], reason=" ".join(op.reason.split()))
            for op in (plan.patterns if plan else [])
            if op.op == "archive" and op.reason.strip() and name_key(op.name) in made]


def archival_reason(message: str, name: str) -> str | None:
    """The reason a wrap's message gives for archiving ``name`` (:func:`archival_reasons`), or None."""
    head = ARCHIVAL_REASON.format(name=name, reason="")
    return next((line[len(head):].strip() for line in message.splitlines() if line.startswith(head)), None)


def _names(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def trailers(events: list[PatternEvent], session: str, episode_ids: list[str],
             override: str | None = None) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = [("Flow-Session", session or "unknown")]
    for e in events:
        if e.kind == GRADUATED:
            out.append(("Graduated", f"{e.name} [evidence: {', '.join(e.evidence)}]"))
        elif e.kind == INCREMENTED:
            out.append(("Incremented", f"{e.name} {e.old_level}x->{e.level}x [evidence: {', '.join(e.evidence)}]"))
        elif e.kind == DEMOTED:
            out.append(("Demoted", e.name))
        elif e.kind == ARCHIVED:
            out.append(("Archived", e.name))
        elif e.kind == RENAMED:
            out.append(("Renamed", f"{e.old_name} -> {e.name}"))
        elif e.kind == LOWERED:  # (its evidence annotation goes with the level: the record says so)
            out.append(("Lowered", f"{e.name} {e.old_level}x->{e.level}x"))
    if episode_ids:
        out.append(("Episodes", ", ".join(episode_ids)))
    if override:
        out.append(("Flow-Override", override))
    return out


def message(events: list[PatternEvent], day: date, session: str, episode_ids: list[str],
            body: list[str] | None = None, override: str | None = None,
            sections: dict[str, str] | None = None) -> str:
    lines = [subject(events, day, sections, len(episode_ids)), ""]
    if body:
        lines += body + [""]
    lines += [f"{k}: {v}" for k, v in trailers(events, session, episode_ids, override)]
    return "\n".join(lines) + "\n"
