"""The append-only episodic store: one JSON object a line.

Episodes are the facts a wrap writes *before* it touches the continuity file,
and the only thing a graduation may stand on. The store is append-only:
flowgit never rewrites or deletes a line. Ids are derived from the content, so
writing the same episode twice leaves one episode. Every append holds the
repository lock (:mod:`flowgit.lock`, the one a wrap holds for its whole
transaction), writes all new lines with one ``write`` and fsyncs; a failed or
short write is cut back to exactly the previous length (verified), so a line is
whole or absent. A torn or corrupt line left by another tool is reported with
its number and skipped. Searching streams the store through a memory map
(:mod:`flowgit.search`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, NamedTuple

from flowgit import bytesearch
from flowgit.record import Record
from flowgit.errors import FlowgitError
from flowgit.fsio import write_fix
from flowgit.session import unplain

if TYPE_CHECKING:
    from flowgit.search import Found, Query

EPISODE_TYPES = ("finding", "decision", "observation", "connection", "outcome", "tension")
ID_PREFIX = "ep-"
ID_HEX = 12
FIELDS = ("id", "ts", "type", "content", "session", "agent", "tags")


class Episode(Record):
    """One recorded fact, never changed in place (:meth:`replace` makes a changed copy).

    A :class:`~flowgit.record.Record` rather than a dataclass: the hook imports
    this module on every commit, and a search builds up to a million of these;
    not a named tuple, which JSON would write as a list.
    """

    __slots__ = FIELDS

    def __init__(self, id: str, ts: str, type: str, content: str, session: str = "", agent: str = "",
                 tags: tuple[str, ...] = ()) -> None:
        self.id = id
        self.ts = ts
        self.type = type
        self.content = content
        self.session = session
        self.agent = agent
        self.tags = tags

    @property
    def source(self) -> str:
        """Where an episode came from: its session, else its agent (unknown provenance is one source)."""
        return self.session or self.agent or "(unknown)"

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "ts": self.ts, "type": self.type, "content": self.content,
                "session": self.session, "agent": self.agent, "tags": list(self.tags)}


class Problem(NamedTuple):
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


OPTIONS = {"type": "--type", "content": "TEXT", "tags": "--tag", "session": "--session", "agent": "--agent",
           "ts": "--ts"}
OPTION_FIELD_RE = re.compile(r"field `(\w+)`")


def make_episode(data: Any, *, where: str = "episode", line: int | None = None,
                 default_session: str = "", default_agent: str = "", notes: list[str] | None = None) -> Episode:
    """Validate a mapping from the user (CLI options, stdin, a wrap plan) into an Episode.

    ``notes``, when given, is told what storing the episode changed in what was written (content of several
    lines joined into one), for the caller to say: the store is append-only, so a loss it does not hear of
    now cannot be undone."""
    def fail(msg: str, fix: str | None = None, field: str | None = None) -> FlowgitError:
        path: str | None = where
        if where == "options":  # from the command line: name the option the user typed, not the field
            msg = OPTION_FIELD_RE.sub(lambda m: f"option `{OPTIONS.get(m.group(1), m.group(1))}`", msg)
            path = OPTIONS.get(field, where) if field else where
        return FlowgitError(msg, path=path, line=line, fix=fix)

    def from_environment(key: str) -> bool:
        """Whether the episode's ``key`` (session or agent) is the environment's default, not given."""
        return key in ("session", "agent") and not data.get(key)

    if not isinstance(data, dict):
        raise fail(f"an episode must be a JSON object, got {type(data).__name__}",
                   '{"type": "finding", "content": "…", "session": "…", "tags": ["…"]}')
    unknown = set(data) - set(FIELDS)
    if unknown:
        raise fail(f"unknown episode field(s): {', '.join(sorted(unknown))}", "fields are " + ", ".join(FIELDS))
    type_ = data.get("type")
    if type_ not in EPISODE_TYPES:
        raise fail("field `type` is missing" if type_ is None else f"field `type` is {type_!r}",
                   "use one of " + ", ".join(EPISODE_TYPES), field="type")
    content = data.get("content")
    if not isinstance(content, str) or not content.strip():
        raise fail("field `content` must be a non-empty string", 'say what happened, e.g. "content": "the retry '
                   'budget held"', field="content")
    tags = data.get("tags", [])
    if isinstance(tags, str):
        tags = [t for t in re.split(r"[,\s]+", tags) if t]
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise fail("field `tags` must be a list of strings", 'e.g. "tags": ["retries", "outage"]', field="tags")
    for key in ("session", "agent", "ts"):
        if key in data and not isinstance(data[key], str):
            raise fail(f"field `{key}` must be a string", f'e.g. "{key}": "…" (or leave it out for the default)',
                       field=key)
    ts = data.get("ts") or now_iso()
    if parse_ts(ts) is None:
        raise fail(f"field `ts` is not an ISO-8601 time: {ts!r}", "e.g. 2026-11-30T17:00:00Z", field="ts")
    session = (data.get("session") or default_session).strip()
    agent = (data.get("agent") or default_agent).strip()
    if not session:
        raise fail("an episode needs the session it came from (independence of evidence is judged by "
                   "session and agent; an episode without one would never count)",
                   "pass --session ID, or set FLOWGIT_SESSION (Claude Code sets CLAUDE_CODE_SESSION_ID)",
                   field="session")
    for key, value in (("session", session), ("agent", agent)):
        if unplain(value) is not None:
            raise _from_environment(key) if from_environment(key) else fail(
                f"field `{key}` holds a control character ({unplain(value)}): an id is one line of "
                "plain text (a line break would start a new trailer in the wrap's commit)",
                f"give the {key} as plain text on one line", field=key)
    for key, value in (("content", content), ("session", session), ("agent", agent), ("tags", "".join(tags))):
        if not is_text(value):
            raise _from_environment(key) if from_environment(key) else fail(
                f"field `{key}` holds a character that is not text (a lone surrogate, `\\ud800`–"
                "`\\udfff`, or bytes that are not UTF-8)",
                "write it in UTF-8; a JSON `\\u` escape of a character beyond U+FFFF comes as a pair", field=key)
    computed = episode_id(type_, content, session)
    if data.get("id") and data["id"] != computed:
        raise fail(f"field `id` {data['id']!r} does not match its content (expected {computed})",
                   "leave `id` out: it is derived from type, content and session")
    if notes is not None and joined_lines(content):
        notes.append(joined_note(computed, joined_lines(content)))
    return Episode(id=computed, ts=ts, type=type_, content=" ".join(content.split()),
                   session=session, agent=agent, tags=tuple(dict.fromkeys(t.strip() for t in tags if t.strip())))


def joined_lines(content: str) -> int:
    """How many lines of ``content`` the store joins into one (0 when it is one line already).

    An episode's content is one line of words in the store (its id is the hash of those words, the gate's
    G107 recomputes it, every reader reads one line), so line breaks, indentation and blank lines go."""
    lines = content.strip().splitlines()
    return len(lines) if len(lines) > 1 else 0


def joined_note(episode_id: str, lines: int) -> str:
    return (f"{episode_id}: its content's {lines} lines were joined into one line (an episode's content is stored "
            "as one line of words: every word is kept, in order; line breaks, indentation and list or code "
            "layout are not) — to keep layout, put it in a file and cite the file in the episode")


def _from_environment(key: str) -> FlowgitError:
    """A session or agent taken from the environment that no episode may carry: the variable is named, not
    an option nobody typed."""
    import os

    from flowgit.session import AGENT_VARIABLES, SESSION_VARIABLES

    names = SESSION_VARIABLES if key == "session" else AGENT_VARIABLES
    name = next((n for n in names if os.environ.get(n, "").strip()), names[0])
    return FlowgitError(f"the {key} from the environment (${name}) is not one line of plain text (a control "
                        "character, or a character that is not text): it cannot name an episode's source",
                        fix=f"set {name} to a plain one-line id, or pass --{key}")


def is_text(value: str) -> bool:
    """Whether the string can be written as UTF-8: JSON's ``\\ud800`` escape and an argument of bytes that are
    not UTF-8 both give Python a lone surrogate, which every later write or print of it fails on."""
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


BOM = "\ufeff"


def read_line(raw: bytes | str) -> Episode:
    """One store line as an episode, read the one way every reader reads it: its UTF-8 text, a byte order mark
    before it (an editor on Windows saves one) skipped, then JSON. Raises ValueError (UnicodeDecodeError and
    JSONDecodeError among them) or RecursionError for a line that is no episode.

    (``json.loads`` given bytes would guess UTF-16 or UTF-32 from NUL bytes: a line is never read so.)"""
    return _episode_from_line(line_object(raw))


def line_end_of(data) -> bytes:
    """The line ending an append writes: the one the store's last line ends with (CRLF where git checked the
    store out with CRLF, ``core.autocrlf``), else LF. Lines ended otherwise than the rest make a store of
    mixed endings, which a formatter hook rewrites whole (and git records as LF either way)."""
    last = data.rfind(b"\n")
    return b"\r\n" if last > 0 and data[last - 1:last] == b"\r" else b"\n"


def line_object(raw: bytes | str) -> Any:
    """The JSON value of one store line, read as :func:`read_line` reads it (the gate's store rules and the
    store merge read a line's fields so too)."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    return json.loads(text[1:] if text.startswith(BOM) else text)


def _episode_from_line(obj: Any) -> Episode:
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
        raise ValueError("not an episode object")
    kind = obj.get("type")
    if kind is None:
        raise ValueError("no `type`")
    if kind not in EPISODE_TYPES:
        raise ValueError(f"`type` {_shown_value(kind)} is not one of {', '.join(EPISODE_TYPES)}")
    if not isinstance(obj.get("content"), str):
        raise ValueError("no `content` text" if "content" not in obj else "`content` is not a string")
    tags = obj.get("tags") or []
    ep = Episode(id=obj["id"], ts=recorded_ts(obj), type=obj["type"], content=obj["content"],
                 session=str(obj.get("session") or ""), agent=str(obj.get("agent") or ""),
                 tags=tuple(str(t) for t in tags) if isinstance(tags, list) else ())
    if not is_text("".join((ep.id, ep.ts, ep.content, ep.session, ep.agent, *ep.tags))):
        raise ValueError("a lone surrogate escape (`\\ud800`–`\\udfff`) where text should be")
    return ep


def recorded_ts(obj: dict) -> str:
    """An episode line's date as every reader reads it: its `ts` when that is text, else none.

    A `ts` written as a number (``20261202``) is no date the store's own lines
    carry, and Python would read its digits as one; read as a date it could pass
    an episode recorded before a demotion for one recorded after (the check of
    dates set ahead, G705, reads this same value). Undated, it counts as old.
    """
    value = obj.get("ts")
    return value if isinstance(value, str) else ""


def _shown_value(value: Any) -> str:
    """A JSON value as a short quoted token for a message (control characters escaped, long values cut)."""
    shown = json.dumps(value, ensure_ascii=True)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def parse_store(data: bytes, *, prefilter: Callable[[bytes], bool] | None = None
                ) -> tuple[dict[str, Episode], list[Problem]]:
    """Read every episode from the raw store bytes; duplicates keep the first line.

    ``prefilter`` sees each raw line first: a search skips the JSON decoding of
    lines that cannot match, which is most of the cost on a large store.
    """
    episodes: dict[str, Episode] = {}
    problems: list[Problem] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        if prefilter is not None and not prefilter(raw):
            continue
        try:
            ep = read_line(raw)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            problems.append(Problem(number, f"unreadable line skipped ({_describe(exc)})"))
            continue
        episodes.setdefault(ep.id, ep)
    return episodes, problems


def _describe(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply to decode"
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
    few = FEW_IDS_MEMMEM if len(data) >= bytesearch.LARGE and bytesearch.fast() else FEW_IDS
    if len(wanted) <= few and not any('"' in i for i in wanted):
        return {ident: hit for ident in wanted if (hit := _locate_one(data, ident)) is not None}
    if len(wanted) > MANY_IDS and not any('"' in i for i in wanted):  # (the index asks here for those)
        return StoreIndex(data).locate(wanted)  # one alternative per id: slower than listing every key once
    alternatives = b"|".join(re.escape(i.encode("utf-8")) for i in wanted)
    pattern = re.compile(rb'"id"\s*:\s*"(' + alternatives + rb')"')
    found: dict[str, tuple[Episode, int]] = {}
    for m in pattern.finditer(data):
        ident = m.group(1).decode("utf-8")
        if ident in found:
            continue
        hit = _episode_at(data, m.start(), m.end(), ident)
        if hit is not None:
            found[ident] = hit
    return found


def _episode_at(data: bytes, key: int, after: int, ident: str) -> tuple[Episode, int] | None:
    """The episode on the line holding ``key`` (its ``"id"`` key) and ``after`` (past its value), and the
    offset just past that line, if that line decodes to an episode with exactly this id."""
    start = data.rfind(b"\n", 0, key) + 1
    end = data.find(b"\n", after)
    end = len(data) if end == -1 else end
    try:
        ep = read_line(data[start:end])
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return (ep, end) if ep.id == ident else None


MANY_IDS = 160  # more ids than this: index every key of the store (a report's thousands of cited ids)
FEW_IDS = 3  # up to this many ids, a substring search each (stopping at the first hit) beats one regex pass
FEW_IDS_MEMMEM = 12  # the same with libc's memmem, about 15 times the speed of the regex pass on a large store
JSON_SPACE = b" \t\n\r\f\v"  # what ``\s`` matches in a bytes pattern


def _locate_one(data: bytes, ident: str) -> tuple[Episode, int] | None:
    """:func:`locate` for one id, by substring search for ``"<id>"``: the same first hit, line and offset.

    Each occurrence counts only where the pattern ``"id"\\s*:\\s*"<id>"`` would
    match, checked backwards from it; then the same line is decoded and must
    carry that id. A 15-byte needle skips through a 25 MB store several times
    faster than the regular expression's per-byte scan.
    """
    needle = b'"' + ident.encode("utf-8") + b'"'
    pos = bytesearch.find(data, needle)
    while pos != -1:
        key = _key_before(data, pos)
        hit = _episode_at(data, key, pos + len(needle), ident) if key != -1 else None
        if hit is not None:
            return hit
        pos = bytesearch.find(data, needle, pos + 1)
    return None


def _key_before(data: bytes, pos: int) -> int:
    """Where ``"id"\\s*:\\s*`` starts if it ends exactly at ``pos``, else -1."""
    at = pos
    while at > 0 and data[at - 1:at] in JSON_SPACE:
        at -= 1
    if data[at - 1:at] != b":":
        return -1
    at -= 1
    while at > 0 and data[at - 1:at] in JSON_SPACE:
        at -= 1
    return at - 4 if at >= 4 and data[at - 4:at] == b'"id"' else -1


def lookup(data: bytes, ids: Iterable[str]) -> dict[str, Episode]:
    """Find only the given ids in raw store bytes, without parsing the whole store."""
    return {ident: ep for ident, (ep, _) in locate(data, ids).items()}


# An ``"id"`` key and, without consuming it, the quoted value after it (``locate``'s candidates): the value is
# left to the next search, so a malformed ``"id": "id": "ep-…"`` still yields both candidates.
KEY_VALUE_RE = re.compile(rb'"id"\s*:\s*(?=("[^"]*"))')


class _Positions:
    """Candidate positions shared by a chain of indexes, each of a prefix of the next.

    The newest index appends its positions in place (a store of 10,000
    episodes is not copied per append); an older one reads only the positions
    its own scan found: those that start before its resume point.
    """

    __slots__ = ("at", "length", "hits")

    def __init__(self, at: dict[bytes, tuple[tuple[int, int], ...]], length: int,
                 hits: "dict[str, tuple[Episode, int]] | None" = None) -> None:
        self.at = at
        self.length = length  # the bytes of the longest store indexed: only an index of that length may grow
        # Episodes found so far, by id: each on a line ended by a newline (its offset), the first such line.
        # Every index of the chain holds the same bytes up to its own length, so a hit whose line ends
        # before an index's length is that index's answer too (see :meth:`StoreIndex.locate`).
        self.hits: dict[str, tuple[Episode, int]] = hits if hits is not None else {}


class StoreIndex:
    """Every place a store's bytes say ``"id": "<value>"``: :func:`locate` without a scan per id.

    A history walk looks up the ids each commit cites in a store of thousands
    of lines, and consecutive commits share the store or append to it. The
    index lists, per value, the candidate positions :func:`locate` would try,
    in order; each lookup still decodes the candidate's line and keeps it only
    if that episode carries the id, so it answers exactly as :func:`locate`.
    An index of a store's prefix is extended by the appended bytes alone (the
    search resumes where the last candidate's value starts, so a key cut by the
    old end is found whole). Every position an extension finds starts at or
    after that resume point, so the extension shares the prefix's table and the
    prefix keeps reading only what lies before it. A second, different
    extension of the same prefix copies the prefix's part instead.
    """

    __slots__ = ("data", "_shared", "_resume")

    def __init__(self, data: bytes, base: "StoreIndex | None" = None) -> None:
        self.data = data
        resume = base._resume if base is not None else 0
        if base is None:
            shared = _Positions({}, len(data))
        elif len(base.data) == base._shared.length:  # the newest of its chain (or the same bytes): grow it
            shared = base._shared
        else:  # a second, different extension of ``base``: only what lies within ``base`` is shared
            limit = len(base.data)
            shared = _Positions(base._own(), limit,
                                {i: hit for i, hit in base._shared.hits.items() if hit[1] < limit})
        at = shared.at
        for m in KEY_VALUE_RE.finditer(data, resume):
            value = m.group(1)[1:-1]
            at[value] = at.get(value, ()) + ((m.start(), m.end()),)
            resume = m.end()
        shared.length = len(data)
        self._shared = shared
        self._resume = resume

    def _own(self) -> dict[bytes, tuple[tuple[int, int], ...]]:
        """This index's positions alone, without those a later extension added to the shared table."""
        limit = self._resume
        out = {}
        for value, places in self._shared.at.items():
            mine = tuple(p for p in places if p[0] < limit)
            if mine:
                out[value] = mine
        return out

    def extends(self, data: bytes) -> bool:
        """Whether ``data`` is this index's store with bytes appended (or the very same bytes)."""
        return len(data) >= len(self.data) and data.startswith(self.data)

    def locate(self, ids: Iterable[str]) -> dict[str, tuple[Episode, int]]:
        """:func:`locate` over this index's store."""
        wanted = sorted({i for i in ids if i})
        odd = [i for i in wanted if '"' in i]  # never a candidate value: the plain search decides
        found = locate(self.data, odd) if odd else {}
        data, limit, table, hits = self.data, self._resume, self._shared.at, self._shared.hits
        size = len(data)
        for ident in wanted:
            if ident in found or '"' in ident:
                continue
            known = hits.get(ident)
            if known is not None and known[1] < size:  # a line this store holds whole, and the first one
                found[ident] = known
                continue
            value = ident.encode("utf-8")
            for key, pos in table.get(value, ()):
                if key >= limit:
                    break  # found by a later extension: beyond this store
                hit = _episode_at(data, key, pos + len(value) + 2, ident)
                if hit is not None:
                    found[ident] = hit
                    if hit[1] < size:  # its line ends here with a newline: no extension can change it
                        hits[ident] = hit
                    break
        return found


_INDEXES: "dict[str, StoreIndex]" = {}
_INDEXES_KEEP = 2  # the store judged and the one before it (an append extends it): stores can be large


def store_index(data: bytes, oid: str, *, prefix: "tuple[str, bytes] | None" = None) -> StoreIndex:
    """The index of the store blob ``oid`` (its bytes ``data``), built from a remembered prefix when one fits.

    Remembered by blob id, and used only if the remembered bytes are ``data``
    itself: a wrong id costs a rebuild, never a wrong answer. ``prefix`` is
    ``(blob id, bytes)`` of a store the caller has already compared ``data``
    against and found to be its prefix: when the index remembered under that
    id holds those very bytes (the same object), it is extended without
    comparing them a second time.
    """
    found = _INDEXES.get(oid)
    if found is not None and (found.data is data or found.data == data):
        return found
    base = None
    if prefix is not None:
        known = _INDEXES.get(prefix[0])
        if known is not None and known.data is prefix[1] and len(data) >= len(known.data):
            base = known
    if base is None:
        base = next((ix for ix in reversed(_INDEXES.values()) if ix.extends(data)), None)
    index = StoreIndex(data, base)
    _INDEXES.pop(oid, None)
    _INDEXES[oid] = index
    while len(_INDEXES) > _INDEXES_KEEP:
        del _INDEXES[next(iter(_INDEXES))]
    return index


SHORTEST_START = 4  # characters after ``ep-`` that a start of an id must give (``ep-3ef9``)


def whole_ids(data, starts: Iterable[str], *, path=None) -> dict[str, str]:
    """{start: the one stored id it begins} for each of ``starts`` that begins exactly one id in the store's
    bytes (``ep-3ef9``, or ``3ef9`` without its ``ep-``), as a person copies an id from a listing; a start
    that begins several is an error naming them, one that begins none is left out."""
    out: dict[str, str] = {}
    for given in starts:
        start = given if given.startswith("ep-") else f"ep-{given}"
        if len(start) < len("ep-") + SHORTEST_START:
            continue
        pattern = rb'"id"\s*:\s*"(' + re.escape(start.encode()) + rb'[^"]*)"'
        matches = sorted({m.group(1).decode("utf-8", "replace") for m in re.finditer(pattern, data)})
        if len(matches) > 1:
            shown = ", ".join(matches[:5]) + (" …" if len(matches) > 5 else "")
            raise FlowgitError(f"`{given}` starts {len(matches)} episode ids: {shown}", path=path,
                               fix="give more of the id")
        if matches:
            out[given] = matches[0]
    return out


class EpisodeStore:
    """The store file on disk."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)


    def _require_regular(self, st: os.stat_result) -> None:
        """A store is a regular file: a directory, FIFO or device is refused before it is read or mapped."""
        if stat.S_ISDIR(st.st_mode):
            raise FlowgitError("is a directory, not an episode store", path=self.path,
                               fix="point --store (or `store` in config) at a .jsonl file")
        if not stat.S_ISREG(st.st_mode):
            raise FlowgitError("is not a regular file (a FIFO or a device?)", path=self.path,
                               fix="point --store (or `store` in config) at a .jsonl file")
    def raw(self) -> bytes:
        """The store's bytes (``b""`` when absent); only a regular file is read."""
        data = self.mapped()
        try:
            return data[:]
        finally:
            if hasattr(data, "close"):
                data.close()

    def read(self) -> tuple[dict[str, Episode], list[Problem]]:
        return parse_store(self.raw())

    def get(self, ids: Iterable[str]) -> dict[str, Episode]:
        data = self.mapped()
        try:
            return lookup(data, ids)
        finally:
            if hasattr(data, "close"):
                data.close()

    def show(self, ids: Iterable[str]) -> list[Episode]:
        """The episodes named by ``ids``, in the order given (repeats once): each a full id or an unambiguous
        start of one (``ep-3ef9``, or ``3ef9`` without its ``ep-``, at least four characters after it), as a
        person copies it from a listing. A missing or ambiguous id is an error naming what it could be."""
        wanted = list(dict.fromkeys(ids))
        data = self.mapped()
        try:
            found = lookup(data, wanted)
            full = {ident: ident for ident in wanted if ident in found}
            short = [ident for ident in wanted if ident not in found]
            if short:
                full.update(self._expand(data, short))
                found.update(lookup(data, set(full.values()) - found.keys()))
        finally:
            if hasattr(data, "close"):
                data.close()
        ids = list(dict.fromkeys(full[given] for given in wanted))
        unreadable = [ident for ident in ids if ident not in found]
        if unreadable:  # the id is in the store's bytes, but on no line that reads as an episode
            raise FlowgitError(f"episode {', '.join(unreadable)} is named in the store on a line that does not read "
                               "as an episode (torn or edited)", path=self.path,
                               fix="the line is kept as it is; `flowgit episode list` shows the readable ones")
        return [found[ident] for ident in ids]

    def _expand(self, data, starts: list[str]) -> dict[str, str]:
        """{given start: the one full id it begins}, or an error naming the missing and the ambiguous."""
        out = whole_ids(data, starts, path=self.path)
        missing = [given for given in starts if given not in out]
        if missing:
            raise FlowgitError(f"no episode {', '.join(missing)}", path=self.path,
                               fix="list ids with `flowgit episode list` (a start of an id is enough: "
                                   "`ep-3ef9`, four characters or more after `ep-`)")
        return out

    def payload(self, episodes: Iterable[Episode], existing=None) -> tuple[bytes, list[Episode], list[Episode]]:
        """The exact bytes an append of ``episodes`` would write now, and (added, already present: as the
        store holds them, which may differ from the given ones in what the id is not made of, agent and tags).

        The wrap records these bytes in its journal before appending, so that a
        recovery can prove which bytes of the store it wrote.
        """
        batch = list(dict((e.id, e) for e in episodes).values())
        data = self.mapped() if existing is None else existing
        present = lookup(data, [e.id for e in batch]) if batch else {}
        added = [e for e in batch if e.id not in present]
        already = [present[e.id] for e in batch if e.id in present]  # (as stored, not as given again)
        if not added:
            return b"", added, already
        end = line_end_of(data)
        prefix = end if len(data) and data[len(data) - 1:] != b"\n" else b""
        return prefix + b"".join(e.to_json().encode("utf-8") + end for e in added), added, already

    def append(self, episodes: Iterable[Episode], *, lock_wait: float | None = None,
               guard: Callable[[], None] | None = None) -> tuple[list[Episode], list[Episode]]:
        """Append episodes not already stored; returns (added, already_present).

        Holds the repository lock for the duplicate check and the write, writes
        all new lines with one ``write`` and fsyncs. If the write fails or is
        short (disk full, a file-size limit), the store is cut back to its
        previous length, verified, and a FlowgitError (exit 2) says so.
        ``guard`` runs under the lock before anything is written, and refuses
        by raising (a repository state in which git would drop the line).
        """
        from flowgit.git import refuse_git_internals
        from flowgit.lock import RepoLock

        batch = list(dict((e.id, e) for e in episodes).values())
        if not batch:
            return [], []
        refuse_git_internals(self.path)
        self._refuse_non_regular()  # before the lock: a refused input leaves no trace, not even a lock file
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise FlowgitError(f"cannot create its directory ({exc.strerror})", path=self.path) from None
        with RepoLock(self.lock_dir(), "episode append", wait=lock_wait):
            if guard is not None:
                guard()
            fd = self._open_for_append()
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise FlowgitError("is not a regular file (a FIFO or a device?)", path=self.path,
                                       fix="point --store (or `store` in config) at a .jsonl file")
                pre_len = os.fstat(fd).st_size
                mapped = _map_fd(fd, pre_len)
                try:
                    payload, added, already = self.payload(batch, mapped)
                finally:
                    if hasattr(mapped, "close"):
                        mapped.close()
                if payload:
                    self._write_whole(fd, pre_len, payload)
                return added, already
            finally:
                os.close(fd)

    def _refuse_non_regular(self) -> None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise FlowgitError(f"cannot be read ({exc.strerror})", path=self.path) from None
        self._require_regular(st)

    def lock_dir(self) -> Path:
        """Where the lock lives: the git directory of the repository holding the store, else beside it."""
        from flowgit.git import enclosing_git_dir

        return enclosing_git_dir(self.path.parent) or self.path.parent

    def _open_for_append(self) -> int:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_BINARY", 0), 0o644)
        except IsADirectoryError:
            raise FlowgitError("is a directory, not an episode store", path=self.path,
                               fix="point --store (or `store` in config) at a .jsonl file") from None
        except OSError as exc:
            raise FlowgitError(f"cannot be written ({exc.strerror})", path=self.path) from None

    def _write_whole(self, fd: int, pre_len: int, payload: bytes) -> None:
        """One write of every new line, then fsync; on any failure cut back to ``pre_len`` and say so."""
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file")
            written = os.write(fd, payload)
            if written != len(payload):
                raise OSError(errno.ENOSPC, f"short write ({written} of {len(payload)} bytes)")
            os.fsync(fd)
        except OSError as exc:
            self._cut_back(fd, pre_len, exc)

    def _cut_back(self, fd: int, pre_len: int, exc: OSError) -> None:
        why = exc.strerror or str(exc)
        try:
            os.ftruncate(fd, pre_len)
            os.fsync(fd)
            size = os.fstat(fd).st_size
        except OSError as again:
            size, why = -1, f"{why}; cutting back failed too ({again.strerror})"
        if size != pre_len:
            raise FlowgitError(f"could not append ({why}) and could not cut the store back to its previous "
                               f"{pre_len:,} bytes: bytes after offset {pre_len:,} are a torn write",
                               path=self.path, fix=f"free space, then truncate the file to {pre_len} bytes "
                                                   "(e.g. `truncate -s {0} FILE`)".format(pre_len)) from None
        raise FlowgitError(f"could not append ({why}); nothing was added: the store is back to exactly its "
                           f"previous {pre_len:,} bytes", path=self.path, fix=write_fix(exc)) from None

    def mapped(self):
        """The store's bytes as a read-only memory map (``b""`` when absent or empty)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        except FileNotFoundError:
            return b""
        except PermissionError:
            raise FlowgitError("cannot be read (permission denied)", path=self.path) from None
        except IsADirectoryError:
            raise FlowgitError("is a directory, not an episode store", path=self.path,
                               fix="point --store (or `store` in config) at a .jsonl file") from None
        except OSError as exc:
            raise FlowgitError(f"cannot be read ({exc.strerror})", path=self.path) from None
        try:
            st = os.fstat(fd)
            self._require_regular(st)
            return _map_fd(fd, st.st_size)
        finally:
            os.close(fd)

    def search(self, *, type_: str | None = None, tags: Iterable[str] = (), session: str | None = None,
               since: datetime | None = None, until: datetime | None = None,
               text: str | None = None) -> tuple[list[Episode], list[Problem]]:
        problems: list[Problem] = []
        found = list(self.iter_search(type_=type_, tags=tags, session=session, since=since, until=until,
                                      text=text, on_problem=problems.append))
        return found, problems

    def iter_search(self, *, type_: str | None = None, tags: Iterable[str] = (), session: str | None = None,
                    since: datetime | None = None, until: datetime | None = None, text: str | None = None,
                    on_problem: Callable[[Problem], None] | None = None) -> Iterator[Episode]:
        """Matching episodes in store order (first matching line of each id), streamed from a memory map."""
        from flowgit.search import Query

        query = Query(type_=type_, tags=tags, session=session, since=since, until=until, text=text)
        yield from _episodes_of(self.scan(query, on_problem))

    def scan(self, query: Query, on_problem: Callable[[Problem], None] | None = None) -> Iterator[Found]:
        """:func:`flowgit.search.scan` over this store's memory map (batches of rows, or single episodes)."""
        from flowgit.search import scan

        data = self.mapped()
        try:
            yield from scan(data, query, on_problem)
        finally:
            if hasattr(data, "close"):
                data.close()


def search_bytes(data: bytes, *, session: str | None = None,
                 on_problem: Callable[[Problem], None] | None = None) -> list[Episode]:
    """:meth:`EpisodeStore.search` over store bytes already read (the wrap's, as git records them)."""
    from flowgit.search import Query, scan

    return list(_episodes_of(scan(data, Query(session=session), on_problem)))


def _episodes_of(found: Iterable[Any]) -> Iterator[Episode]:
    from flowgit.search import Rows

    for item in found:
        if isinstance(item, Rows):
            yield from item.episodes()
        else:
            yield item


def filter_episodes(episodes: Iterable[Episode], *, type_: str | None = None, tags: Iterable[str] = (),
                    session: str | None = None, since: datetime | None = None,
                    until: datetime | None = None, text: str | None = None) -> Iterator[Episode]:
    matches = matcher(type_=type_, tags=tags, session=session, since=since, until=until, text=text)
    return (ep for ep in episodes if matches(ep))


def matcher(*, type_: str | None = None, tags: Iterable[str] = (), session: str | None = None,
            since: datetime | None = None, until: datetime | None = None,
            text: str | None = None) -> Callable[[Episode], bool]:
    """The search's one definition of a match, as a predicate (see :class:`flowgit.search.Query`)."""
    from flowgit.search import Query

    return Query(type_=type_, tags=tags, session=session, since=since, until=until, text=text).matches


def _map_fd(fd: int, size: int):
    import mmap

    if size == 0:
        return b""
    return mmap.mmap(fd, size, access=mmap.ACCESS_READ)
