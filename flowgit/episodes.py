"""The append-only episodic store: one JSON object a line.

Episodes are the facts a wrap writes *before* it touches the continuity file,
and the only thing a graduation may stand on. The store is append-only:
flowgit never rewrites or deletes a line. Ids are derived from the content, so
writing the same episode twice leaves one episode. Concurrent writers are
serialised with an exclusive ``flock`` and each episode is one ``write`` call.
A torn or corrupt line is reported with its number and skipped.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from flowgit.errors import FlowgitError

EPISODE_TYPES = ("finding", "decision", "observation", "connection", "outcome", "tension")
ID_PREFIX = "ep-"
ID_HEX = 12
FIELDS = ("id", "ts", "type", "content", "session", "agent", "tags")


@dataclass(frozen=True)
class Episode:
    """One recorded fact."""

    id: str
    ts: str
    type: str
    content: str
    session: str = ""
    agent: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)

    @property
    def source(self) -> str:
        """Where an episode came from: its session, else its agent (unknown provenance is one source)."""
        return self.session or self.agent or "(unknown)"

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "ts": self.ts, "type": self.type, "content": self.content,
                "session": self.session, "agent": self.agent, "tags": list(self.tags)}


@dataclass(frozen=True)
class Problem:
    """A line of the store that could not be read (reported, skipped, left in place)."""

    line: int
    message: str


def episode_id(type_: str, content: str, session: str) -> str:
    """Content-derived id: same type, content and session give the same id."""
    norm = " ".join(content.split())
    digest = hashlib.sha256(json.dumps([type_, norm, session]).encode("utf-8")).hexdigest()
    return ID_PREFIX + digest[:ID_HEX]


def now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def parse_ts(ts: str) -> datetime | None:
    try:
        value = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def make_episode(data: Any, *, where: str = "episode", line: int | None = None,
                 default_session: str = "", default_agent: str = "") -> Episode:
    """Validate a mapping from the user (CLI options, stdin, a wrap plan) into an Episode."""
    def fail(msg: str, fix: str | None = None) -> FlowgitError:
        return FlowgitError(msg, path=where, line=line, fix=fix)

    if not isinstance(data, dict):
        raise fail(f"an episode must be a JSON object, got {type(data).__name__}")
    unknown = set(data) - set(FIELDS)
    if unknown:
        raise fail(f"unknown episode field(s): {', '.join(sorted(unknown))}", "fields are " + ", ".join(FIELDS))
    type_ = data.get("type")
    if type_ not in EPISODE_TYPES:
        raise fail(f"field `type` is {type_!r}", "use one of " + ", ".join(EPISODE_TYPES))
    content = data.get("content")
    if not isinstance(content, str) or not content.strip():
        raise fail("field `content` must be a non-empty string")
    tags = data.get("tags", [])
    if isinstance(tags, str):
        tags = [t for t in re.split(r"[,\s]+", tags) if t]
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise fail("field `tags` must be a list of strings")
    for key in ("session", "agent", "ts"):
        if key in data and not isinstance(data[key], str):
            raise fail(f"field `{key}` must be a string")
    ts = data.get("ts") or now_iso()
    if parse_ts(ts) is None:
        raise fail(f"field `ts` is not an ISO-8601 time: {ts!r}", "e.g. 2026-11-30T17:00:00Z")
    session = (data.get("session") or default_session).strip()
    agent = (data.get("agent") or default_agent).strip()
    if not session:
        raise fail("an episode needs the session it came from (independence of evidence is judged by "
                   "session and agent; an episode without one would never count)",
                   "pass --session ID, or set FLOWGIT_SESSION (Claude Code sets CLAUDE_CODE_SESSION_ID)")
    computed = episode_id(type_, content, session)
    if data.get("id") and data["id"] != computed:
        raise fail(f"field `id` {data['id']!r} does not match its content (expected {computed})",
                   "leave `id` out: it is derived from type, content and session")
    return Episode(id=computed, ts=ts, type=type_, content=" ".join(content.split()),
                   session=session, agent=agent, tags=tuple(dict.fromkeys(t.strip() for t in tags if t.strip())))


def _episode_from_line(obj: Any) -> Episode:
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
        raise ValueError("not an episode object")
    if obj.get("type") not in EPISODE_TYPES or not isinstance(obj.get("content"), str):
        raise ValueError("missing type or content")
    tags = obj.get("tags") or []
    return Episode(id=obj["id"], ts=str(obj.get("ts", "")), type=obj["type"], content=obj["content"],
                   session=str(obj.get("session") or ""), agent=str(obj.get("agent") or ""),
                   tags=tuple(str(t) for t in tags) if isinstance(tags, list) else ())


def parse_store(data: bytes, *, prefilter: Callable[[bytes], bool] | None = None
                ) -> tuple[dict[str, Episode], list[Problem]]:
    """Read every episode from the raw store bytes; duplicates keep the first line.

    ``prefilter`` sees each raw line first: a search skips the JSON decoding of
    lines that cannot match, which is most of the cost on a large store.
    """
    episodes: dict[str, Episode] = {}
    problems: list[Problem] = []
    loads = json.loads
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        if prefilter is not None and not prefilter(raw):
            continue
        try:
            ep = _episode_from_line(loads(raw))
        except (ValueError, UnicodeDecodeError) as exc:
            problems.append(Problem(number, f"unreadable line skipped ({_describe(exc)})"))
            continue
        episodes.setdefault(ep.id, ep)
    return episodes, problems


def _describe(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON at column {exc.colno}: {exc.msg}; a torn write?"
    return str(exc)


def locate(data: bytes, ids: Iterable[str]) -> dict[str, tuple[Episode, int]]:
    """Find the given ids in raw store bytes: each episode and the offset just past its line.

    The gate needs a handful of cited episodes out of a store that may hold
    100,000: one regular-expression pass for all wanted ``"id"`` fields and a
    ``json.loads`` per hit is far cheaper than decoding every line, or than one
    scan per id. The offsets let the audit answer "was it there at commit C?"
    from the store's size at C (see :mod:`flowgit.history.audit`).
    """
    wanted = sorted({i for i in ids if i})
    if not wanted or not data:
        return {}
    alternatives = b"|".join(re.escape(i.encode("utf-8")) for i in wanted)
    pattern = re.compile(rb'"id"\s*:\s*"(' + alternatives + rb')"')
    found: dict[str, tuple[Episode, int]] = {}
    for m in pattern.finditer(data):
        ident = m.group(1).decode("utf-8")
        if ident in found:
            continue
        start = data.rfind(b"\n", 0, m.start()) + 1
        end = data.find(b"\n", m.end())
        end = len(data) if end == -1 else end
        try:
            ep = _episode_from_line(json.loads(data[start:end]))
        except (ValueError, UnicodeDecodeError):
            continue
        if ep.id == ident:
            found[ident] = (ep, end)
    return found


def lookup(data: bytes, ids: Iterable[str]) -> dict[str, Episode]:
    """Find only the given ids in raw store bytes, without parsing the whole store."""
    return {ident: ep for ident, (ep, _) in locate(data, ids).items()}


class EpisodeStore:
    """The store file on disk."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def raw(self) -> bytes:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return b""
        except PermissionError:
            raise FlowgitError("cannot be read (permission denied)", path=self.path) from None
        except IsADirectoryError:
            raise FlowgitError("is a directory, not an episode store", path=self.path) from None

    def read(self) -> tuple[dict[str, Episode], list[Problem]]:
        return parse_store(self.raw())

    def get(self, ids: Iterable[str]) -> dict[str, Episode]:
        return lookup(self.raw(), ids)

    def append(self, episodes: Iterable[Episode]) -> tuple[list[Episode], list[Episode]]:
        """Append episodes not already stored; returns (added, already_present).

        Holds an exclusive lock for the duplicate check and the write, and writes
        all new lines with one ``write`` so no other writer can interleave.
        """
        batch = list(dict((e.id, e) for e in episodes).values())
        if not batch:
            return [], []
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        except IsADirectoryError:
            raise FlowgitError("is a directory, not an episode store", path=self.path,
                               fix="point --store (or `store` in config) at a .jsonl file") from None
        except OSError as exc:
            raise FlowgitError(f"cannot be written ({exc.strerror})", path=self.path) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            existing = _read_fd(fd)
            present = lookup(existing, [e.id for e in batch])
            added = [e for e in batch if e.id not in present]
            already = [e for e in batch if e.id in present]
            if added:
                prefix = b"\n" if existing and not existing.endswith(b"\n") else b""
                payload = prefix + b"".join(e.to_json().encode("utf-8") + b"\n" for e in added)
                _write_all(fd, payload)
                os.fsync(fd)
            return added, already
        finally:
            os.close(fd)  # closing releases the lock

    def search(self, *, type_: str | None = None, tags: Iterable[str] = (), session: str | None = None,
               since: datetime | None = None, until: datetime | None = None,
               text: str | None = None) -> tuple[list[Episode], list[Problem]]:
        needles = [n.encode("utf-8") for n in (session, type_) if n]
        lowered = text.lower().encode("utf-8") if text else None
        tag_needles = [t.lower().encode("utf-8") for t in tags]

        def prefilter(raw: bytes) -> bool:
            if any(n not in raw for n in needles):
                return False
            if lowered is not None or tag_needles:
                low = raw.lower()
                if lowered is not None and lowered not in low:
                    return False
                if any(t not in low for t in tag_needles):
                    return False
            return True

        episodes, problems = parse_store(self.raw(), prefilter=prefilter if (needles or lowered or tag_needles) else None)
        return list(filter_episodes(episodes.values(), type_=type_, tags=tags, session=session,
                                    since=since, until=until, text=text)), problems


def filter_episodes(episodes: Iterable[Episode], *, type_: str | None = None, tags: Iterable[str] = (),
                    session: str | None = None, since: datetime | None = None,
                    until: datetime | None = None, text: str | None = None) -> Iterator[Episode]:
    wanted_tags = {t.lower() for t in tags}
    needle = text.lower() if text else None
    for ep in episodes:
        if type_ and ep.type != type_:
            continue
        if session and ep.session != session:
            continue
        if wanted_tags and not wanted_tags <= {t.lower() for t in ep.tags}:
            continue
        if since or until:
            when = parse_ts(ep.ts)
            if when is None or (since and when < since) or (until and when > until):
                continue
        if needle and needle not in ep.content.lower() and not any(needle in t.lower() for t in ep.tags):
            continue
        yield ep


def _read_fd(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]
