"""``flowgit episode add|list|search|show``: the episodic store from the command line.

Stored content is untrusted (any agent, any tool can append a line): human
output escapes control characters, so an episode cannot move the cursor, retitle
the terminal or hide text. JSON output carries the exact strings.
"""

from __future__ import annotations

import collections
import itertools
import json
import re
import sys
from datetime import date, datetime, timezone
from typing import IO, TYPE_CHECKING, Callable, Iterable, Iterator, TextIO, Union

from flowgit.dates import parse_date
from flowgit.episodes import EPISODE_TYPES, Episode, EpisodeStore, Problem, make_episode, parse_ts
from flowgit.errors import FlowgitError
from flowgit.jsonkeys import RepeatedKey, unique_object

if TYPE_CHECKING:
    from flowgit.search import Query, Rows

    Found = Union[Rows, Episode]


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

        raise unknown("episode type", type_, EPISODE_TYPES, path="--type")
    if type_ is not None and (content is None or not content.strip()):
        raise FlowgitError("the episode has no text", path="TEXT",
                           fix=f'give it as the argument: flowgit episode add --type {type_} "what happened"')
    return content


MAX_STDIN_LINE = 1 << 20
MAX_STDIN_BYTES = 64 << 20  # a batch of episodes; more is a runaway producer, not a session
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def safe(text: str) -> str:
    """``text`` with control, C1 and bidi-override characters shown as escapes (for a terminal)."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                         else f"\\u{ord(m.group()):04x}", text)


def _stdin_lines(stream: TextIO) -> Iterator[tuple[int, str]]:
    """Lines of stdin as text; bytes that are not UTF-8 are an error naming the line."""
    binary = getattr(stream, "buffer", None)
    if binary is None:
        yield from enumerate(stream, start=1)
        return
    line_cap = MAX_STDIN_LINE * 4  # bytes: a character is at most four (and /dev/zero has no line end)
    total = 0
    for number in itertools.count(1):
        raw = binary.readline(line_cap + 1)
        if not raw:
            return
        total += len(raw)
        if len(raw) > line_cap:
            raise FlowgitError(f"the line goes on past {line_cap:,} bytes", path="<stdin>", line=number,
                               fix="one episode per line, a few sentences each")
        if total > MAX_STDIN_BYTES:
            raise FlowgitError(f"the input goes on past {MAX_STDIN_BYTES:,} bytes", path="<stdin>", line=number,
                               fix="send a large batch in parts")
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FlowgitError(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})",
                               path="<stdin>", line=number, fix="send UTF-8 text") from None


def episodes_from_stdin(stream: TextIO, *, session: str | None = None, agent: str | None = None,
                        notes: list[str] | None = None) -> list[Episode]:
    """Parse JSON lines from stdin; one bad line rejects the whole batch (nothing is written).

    ``session`` / ``agent`` (the command's options) are given to the lines that name none, before the
    environment's defaults; ``notes`` as :func:`flowgit.episodes.make_episode` takes them.
    """
    out: list[Episode] = []
    fallback_session = session or default_session()
    fallback_agent = agent or default_agent()
    for number, line in _stdin_lines(stream):
        if number == 1:
            line = line.removeprefix("\ufeff")  # a byte order mark, as a Windows pipe writes one: no part of the JSON
        if not line.strip():
            continue
        if len(line) > MAX_STDIN_LINE:
            raise FlowgitError(f"line is {len(line):,} characters, over the {MAX_STDIN_LINE:,} limit",
                               path="<stdin>", line=number, fix="one episode per line, a few sentences each")
        try:
            data = json.loads(line.rstrip("\r\n"), object_pairs_hook=unique_object)  # (with its line ending, a
        except RepeatedKey as exc:                                                 # cut-off line errs at column 1)
            raise FlowgitError(f"the key `{exc.key}` is given twice in one object", path="<stdin>", line=number,
                               fix="give each field once (JSON keeps only the last, silently)") from None
        except json.JSONDecodeError as exc:
            raise FlowgitError(f"invalid JSON at column {exc.colno}: {exc.msg}", path="<stdin>", line=number,
                               fix="one JSON object per line, e.g. "
                                   '{"type": "finding", "content": "…", "tags": ["…"]}') from None
        except RecursionError:
            raise FlowgitError("JSON nested too deeply", path="<stdin>", line=number,
                               fix="one flat JSON object per line") from None
        out.append(make_episode(data, where="<stdin>", line=number,
                                default_session=fallback_session, default_agent=fallback_agent, notes=notes))
    if not out:
        raise FlowgitError("no episodes given", path="<stdin>",
                           fix="pass --type and --content, or JSON lines on stdin")
    return out


def parse_when(text: str | None, option: str) -> datetime | None:
    """``--since``/``--until`` as a moment; a day given without a time of day is the whole day.

    ``2026-11-30`` would parse as a timestamp (midnight), so it is read as a day first: ``--until 2026-11-30``
    then includes that day's episodes, as ``--until "Nov 30"`` always did and the help says.
    """
    if not text:
        return None
    day = _bare_day(text)
    when = None if day else parse_ts(text)
    if when is None:
        day = day or parse_date(text)
        if day is None:
            raise FlowgitError(f"{text!r} is not a date", path=option,
                               fix="use 2026-11-30 or 2026-11-30T17:00:00Z")
        when = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
        if option == "--until":  # the last moment of the day, fractions of a second included
            when = when.replace(hour=23, minute=59, second=59, microsecond=999999)
    return when


def _bare_day(text: str) -> date | None:
    """The day ``text`` names when it is an ISO date with no time of day (``2026-11-30``), else None."""
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        return None


def warn_problems(store: EpisodeStore, problems: list[Problem]) -> None:
    for p in problems:
        sys.stderr.write(f"flowgit: warning: {store.path}:{p.line}: {p.message}\n")


def render_episode(ep: Episode) -> str:
    """One episode on one line, every stored string escaped for the terminal."""
    return _human(ep.id, ep.ts, ep.type, ep.content, ep.session, ep.agent, ep.tags, safe)


def _human(id_: str, ts: str, type_: str, content: str, session: str, agent: str, tags: tuple[str, ...],
           esc: Callable[[str], str]) -> str:
    tag_text = f"  #{' #'.join(esc(t) for t in tags)}" if tags else ""
    who = " ".join(x for x in (session and f"session {esc(session)}", agent and f"by {esc(agent)}") if x)
    return (f"{esc(id_)}  {esc(ts)}  {type_:<11} {esc(content)}{tag_text}"
            + (f"  ({who})" if who else ""))


def _unchanged(text: str) -> str:
    return text


def render_list(episodes: list[Episode]) -> str:
    if not episodes:
        return "no episodes"
    return "\n".join([*(render_episode(ep) for ep in episodes), f"{len(episodes)} episode(s)"])


def render_added(added: list[Episode], already: list[Episode], warnings: list[str] = ()) -> str:
    lines = [f"added   {e.id}  {e.type}: {safe(e.content)}" for e in added]
    lines += [f"present {e.id}  (already in the store)" for e in already]
    lines += [f"warning: {w}" for w in warnings]
    return "\n".join(lines)


def json_element(ep: Episode) -> str:
    """``ep`` exactly as ``json.dumps([..], indent=2, ensure_ascii=False)`` lays out a list element.

    ``json.dumps`` with ``indent`` runs the pure-Python encoder; an episode's
    shape is fixed, so the layout is written here and only the strings go
    through the C string encoder — about five times faster on a large result.
    """
    from json.encoder import encode_basestring as enc

    items = []
    for key, value in ep.to_dict().items():
        if isinstance(value, list):
            text = ("[\n" + ",\n".join(f"      {enc(str(v))}" for v in value) + "\n    ]") if value else "[]"
        else:
            text = enc(value)
        items.append(f'    "{key}": {text}')
    return "{\n" + ",\n".join(items) + "\n  }"


_JSON_ROW = (b'{\n    "id": "%s",\n    "ts": "%s",\n    "type": "%s",\n    "content": "%s",\n    "session": "%s",'
             b'\n    "agent": "%s",\n    "tags": %s\n  }')


class _Memo(dict):
    """Layouts of values a store repeats (tags arrays, session and agent), each worked out once.

    Bounded: past ``LIMIT`` distinct values it starts again, so its memory
    stays small whatever the store holds.
    """

    LIMIT = 1 << 14

    def __init__(self, lay: Callable) -> None:
        super().__init__()
        self.lay = lay

    def __missing__(self, key):
        if len(self) >= self.LIMIT:
            self.clear()
        value = self[key] = self.lay(key)
        return value


def _json_tags(inner: bytes) -> bytes:
    return b"[\n      " + inner.replace(b'", "', b'",\n      "') + b"\n    ]" if inner else b"[]"


def _human_tags(inner: bytes) -> bytes:
    from flowgit.search import split_tags_bytes

    return b"  #" + b" #".join(split_tags_bytes(inner)) if inner else b""


def _who(people: tuple[bytes, bytes]) -> bytes:
    session, agent = people
    who = b" ".join(x for x in (session and b"session " + session, agent and b"by " + agent) if x)
    return b"  (" + who + b")" if who else b""


_JSON_TAGS, _HUMAN_TAGS, _WHO = _Memo(_json_tags), _Memo(_human_tags), _Memo(_who)


def json_rows(rows: Rows) -> bytes:
    """The rows as :func:`json_element` lays each out (in UTF-8), joined as list elements, a batch at a time.

    The fields of :class:`~flowgit.search.Rows` hold nothing JSON escapes, so
    each goes into the layout as the bytes it is: nothing is decoded, and no
    Python code runs per row but for a tags array not laid out before. The tags
    arrive as the stored array's inside (``"a", "b"``, where ``", "`` can only
    be a separator).
    """
    ids, ts, types, contents, sessions, agents, tags = zip(*rows.rows)
    return b",\n  ".join(map(_JSON_ROW.__mod__, zip(ids, ts, types, contents, sessions, agents,
                                                     map(_JSON_TAGS.__getitem__, tags))))


_HUMAN_ROW = b"%s  %s  %s %s%s%s"
_PADDED_TYPES = {t.encode(): f"{t:<11}".encode() for t in EPISODE_TYPES}


def human_rows(rows: Rows) -> bytes:
    """The rows as :func:`render_episode` prints each (in UTF-8), one a line.

    When nothing in the batch needs escaping for a terminal, the rows go into
    the layout as bytes, as :func:`json_rows` does; otherwise each row is
    decoded and escaped.
    """
    from flowgit.search import split_tags

    if not _plain(rows.text):
        return "\n".join(_human(*(f.decode() for f in row[:6]), split_tags(row[6].decode()), safe)
                         for row in rows.rows).encode()
    ids, ts, types, contents, sessions, agents, tags = zip(*rows.rows)
    return b"\n".join(map(_HUMAN_ROW.__mod__, zip(ids, ts, map(_PADDED_TYPES.__getitem__, types), contents,
                                                    map(_HUMAN_TAGS.__getitem__, tags),
                                                    map(_WHO.__getitem__, zip(sessions, agents)))))


def _plain(text: bytes) -> bool:
    """Whether ``text`` (the fields of rows, which hold no character below U+0020) has nothing to escape."""
    if text.isascii():
        return b"\x7f" not in text
    return not _CONTROLS.search(text.decode("utf-8").replace("\n", " "))  # (the rows' separators)


def _last(found: Iterable[Found], limit: int) -> list[Found]:
    """The batches holding the last ``limit`` episodes, the first one cut to fit (nothing else is kept)."""
    kept: collections.deque[Found] = collections.deque()
    held = 0
    for item in found:
        kept.append(item)
        held += _size(item)
        while kept and held - _size(kept[0]) >= limit:
            held -= _size(kept.popleft())
    if held > limit:
        kept[0] = kept[0].last(_size(kept[0]) - (held - limit))
    return list(kept)


def _size(found: Found) -> int:
    from flowgit.search import Rows

    return len(found) if isinstance(found, Rows) else 1


FLUSH_BYTES = 64 << 10  # a batch of rows is written at once, single episodes gather up to this


def stream_search(store: EpisodeStore, *, limit: int, as_json: bool, out: TextIO | None = None,
                  **filters) -> int:
    """Print matching episodes as the store is scanned (the last ``limit`` only, if given); returns the count.

    Nothing but the matches (or the last ``limit`` of them) is held in memory:
    JSON is written in the same layout as ``--json`` everywhere else, a batch
    at a time; problems go to stderr as they are met. A large store is
    searched on two cores (:mod:`flowgit.search_split`), printed the same.
    """
    from flowgit.search import Query

    refuse_bare_store(store)
    query = Query(**filters)
    write, encode, fileno = _byte_sink(out or sys.stdout, as_json=as_json)
    printer = _Printer(write, encode, as_json, fileno=fileno)

    def on_problem(problem: Problem) -> None:
        warn_problems(store, [problem])

    if limit:
        for item in _last(store.scan(query, on_problem=on_problem), limit):
            printer.add(item)
    else:
        _print_all(store, query, printer, on_problem)
    return printer.close()


def refuse_bare_store(store: EpisodeStore) -> None:
    """Refuse a store inside a git directory, as every command refuses a bare repository.

    In a bare repository the store's path lands in git's own storage, where no
    store lives: "no episodes" would hide the ones HEAD's store holds.
    """
    from flowgit.git import inside_git_dir, require_repo

    found = inside_git_dir(store.path.parent)
    if found is not None:
        require_repo(found)  # a git directory, not a working tree: the bare-repository error


def _print_all(store: EpisodeStore, query: Query, printer: _Printer, on_problem: Callable[[Problem], None]) -> None:
    """Every match in store order: the second half of a large store rendered by a worker meanwhile."""
    from flowgit import search_split
    from flowgit.search import scan

    data = store.mapped()
    try:
        split = search_split.split_point(data)
        worker = None if split is None else search_split.start(
            lambda out: _render_half(data, query, split, out, printer))
        if worker is None:
            for item in scan(data, query, on_problem):
                printer.add(item)
            return
        try:
            seen: set[bytes] = set()
            for item in scan(data, query, on_problem, end=split, seen=seen):
                printer.add(item)
            half = worker.result()
            if half is not None and not half.overlaps(seen):
                for problem in half.problems:
                    on_problem(problem)
                printer.splice(half.count, worker.copy_to)
            else:  # an id matched in both halves (or the worker failed): the first half's ids decide
                for item in scan(data, query, on_problem, start=split, seen=seen):
                    printer.add(item)
        finally:
            worker.close()
    finally:
        if hasattr(data, "close"):
            data.close()


def _render_half(data, query: Query, start: int, out: IO[bytes],
                 like: _Printer) -> tuple[int, set[bytes], list[Problem]]:
    """In the worker: the matches from ``start`` on, rendered as ``like`` renders them, to continue its output."""
    from flowgit.search import scan

    seen: set[bytes] = set()
    problems: list[Problem] = []
    printer = _Printer(out.write, like.encode, like.as_json, opening=b"")
    for item in scan(data, query, problems.append, start=start, seen=seen):
        printer.add(item)
    printer.flush()
    return printer.count, seen, problems


class _Printer:
    """Found episodes written as they come: JSON list elements or human lines, a batch (or 64 KB) at a time."""

    def __init__(self, write: Callable[[bytes], object], encode: Callable[[str], bytes], as_json: bool,
                 opening: bytes = b"[\n  ", fileno: int | None = None) -> None:
        self.write, self.encode, self.as_json, self.opening = write, encode, as_json, opening
        self.fileno = fileno
        self.count, self.pending, self.size = 0, [], 0

    def lead(self) -> bytes:
        """What goes before the next episode."""
        if not self.as_json:
            return b""
        return b",\n  " if self.count else self.opening

    def add(self, item: Found) -> None:
        from flowgit.search import Rows

        if isinstance(item, Rows):
            text = json_rows(item) if self.as_json else human_rows(item)
        else:
            text = self.encode(json_element(item) if self.as_json else render_episode(item))
        self.pending += [self.lead(), text] if self.as_json else [text, b"\n"]
        self.count += _size(item)
        self.size += len(text)
        if self.size >= FLUSH_BYTES:  # print as it goes
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.write(b"".join(self.pending))
            self.pending, self.size = [], 0

    def splice(self, count: int, copy: Callable[[Callable[[bytes], object], int | None], None]) -> None:
        """``count`` episodes another printer wrote (begun with an empty opening), as if printed here.

        ``copy`` gets this printer's ``write`` and, where everything written
        so far has reached it, the file descriptor behind it.
        """
        if count:
            self.flush()
            self.write(self.lead())
            copy(self.write, self.fileno)
            self.count += count

    def close(self) -> int:
        """The closing line; returns how many episodes were printed."""
        if self.as_json:
            self.pending.append(b"\n]\n" if self.count else b"[]\n")
        else:
            self.pending.append(self.encode(f"{self.count} episode(s)\n" if self.count else "no episodes\n"))
        self.flush()
        return self.count


def _byte_sink(out: TextIO, *, as_json: bool = False
               ) -> tuple[Callable[[bytes], None], Callable[[str], bytes], int | None]:
    """(write, encode, fileno): rendered bytes straight to the stream's buffer when it writes UTF-8 text
    unchanged (each write flushed, so that the file descriptor, when there is one, has it all).

    Rows are rendered as UTF-8 bytes; decoding them only for the text layer to
    encode them again would cost as much as rendering. Any other stream (one
    with another encoding, or a text-only one such as ``io.StringIO``) is
    handed text, exactly as before.
    """
    import codecs
    import os

    buffer = getattr(out, "buffer", None)
    encoding = getattr(out, "encoding", None)
    if buffer is not None and encoding and codecs.lookup(encoding).name == "utf-8" and os.linesep == "\n":
        errors = getattr(out, "errors", None) or "strict"
        out.flush()  # what the text layer holds goes first

        def write(data: bytes) -> None:
            buffer.write(data)
            buffer.flush()

        try:
            fileno = buffer.fileno()
        except (AttributeError, OSError, ValueError):  # (a buffer in memory)
            fileno = None
        return write, lambda text: text.encode("utf-8", errors), fileno

    narrow = as_json and bool(encoding) and codecs.lookup(encoding).name not in ("utf-8", "utf-8-sig")

    decoder = codecs.getincrementaldecoder("utf-8")("surrogatepass")  # (a block may end inside a character)

    def write_text(data: bytes) -> None:
        text = decoder.decode(data)
        out.write(json_in_ascii(text) if narrow else text)  # (JSON a Latin-1 stream cannot spell, escaped)

    return write_text, lambda text: text.encode("utf-8", "surrogatepass"), None


NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")


def json_in_ascii(text: str) -> str:
    """JSON text with every non-ASCII character as its ``\\u`` escape (a pair past the BMP): the same
    document, spelled in any encoding. (Outside strings JSON holds only ASCII, so each one is inside one.)"""
    return NON_ASCII_RE.sub(lambda m: json.dumps(m[0]).strip('"'), text)
