"""``flowgit episode add|list|search|show``: the episodic store from the command line."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from typing import TextIO

from flowgit.dates import parse_date
from flowgit.episodes import Episode, EpisodeStore, Problem, make_episode, parse_ts
from flowgit.errors import FlowgitError


def default_session() -> str:
    from flowgit.session import resolve_session

    return resolve_session()


def default_agent() -> str:
    from flowgit.session import resolve_agent

    return resolve_agent()


def episode_text(text: str | None, content: str | None, type_: str | None) -> str | None:
    """The episode's text from the argument or ``--content``; names what is missing when only half is given."""
    from flowgit.episodes import EPISODE_TYPES

    if text is not None and content is not None:
        raise FlowgitError("the text is given twice (as the argument and with --content)",
                           fix="give it once: flowgit episode add --type finding \"what happened\"")
    content = text if text is not None else content
    if content is not None and type_ is None:
        raise FlowgitError("--type is required", fix="add --type with one of: " + ", ".join(EPISODE_TYPES))
    if type_ is not None and type_ not in EPISODE_TYPES:
        from flowgit.suggest import unknown

        raise unknown("episode type", type_, EPISODE_TYPES)
    if type_ is not None and (content is None or not content.strip()):
        raise FlowgitError("the episode has no text",
                           fix=f'give it as the argument: flowgit episode add --type {type_} "what happened"')
    return content


def episodes_from_stdin(stream: TextIO) -> list[Episode]:
    """Parse JSON lines from stdin; one bad line rejects the whole batch (nothing is written)."""
    out: list[Episode] = []
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FlowgitError(f"invalid JSON at column {exc.colno}: {exc.msg}", path="<stdin>", line=number,
                               fix="one JSON object per line, e.g. "
                                   '{"type": "finding", "content": "…", "tags": ["…"]}') from None
        out.append(make_episode(data, where="<stdin>", line=number,
                                default_session=default_session(), default_agent=default_agent()))
    if not out:
        raise FlowgitError("no episodes given", path="<stdin>",
                           fix="pass --type and --content, or JSON lines on stdin")
    return out


def parse_when(text: str | None, option: str) -> datetime | None:
    if not text:
        return None
    when = parse_ts(text)
    if when is None:
        day = parse_date(text)
        if day is None:
            raise FlowgitError(f"{option} {text!r} is not a date", fix="use 2026-11-30 or 2026-11-30T17:00:00Z")
        when = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
        if option == "--until":
            when = when.replace(hour=23, minute=59, second=59)
    return when


def warn_problems(store: EpisodeStore, problems: list[Problem]) -> None:
    for p in problems:
        sys.stderr.write(f"flowgit: warning: {store.path}:{p.line}: {p.message}\n")


def render_list(episodes: list[Episode]) -> str:
    if not episodes:
        return "no episodes"
    lines = []
    for ep in episodes:
        tags = f"  #{' #'.join(ep.tags)}" if ep.tags else ""
        who = " ".join(x for x in (ep.session and f"session {ep.session}", ep.agent and f"by {ep.agent}") if x)
        lines.append(f"{ep.id}  {ep.ts}  {ep.type:<11} {ep.content}{tags}" + (f"  ({who})" if who else ""))
    lines.append(f"{len(episodes)} episode(s)")
    return "\n".join(lines)


def render_added(added: list[Episode], already: list[Episode]) -> str:
    lines = [f"added   {e.id}  {e.type}: {e.content}" for e in added]
    lines += [f"present {e.id}  (already in the store)" for e in already]
    return "\n".join(lines)
