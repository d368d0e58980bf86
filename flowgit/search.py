"""Searching the episodic store at the speed of its bytes.

A search over a million episodes cannot afford to decode a million JSON lines
(a few microseconds each is seconds), nor to hold the store in memory. So:

- the store is read through a memory map in small newline-aligned chunks, small
  enough to stay in the CPU cache while a chunk is copied, lowered and searched;
  pages already read are handed back to the kernel, so resident memory stays at
  a chunk or two whatever the store's size;
- only lines holding the query's literal bytes (its *needles*, each a necessary
  condition of a match) go further;
- of those, lines in exactly the form flowgit writes (``Episode.to_json``: the
  seven fields in order, strings with nothing escaped, tags a list of strings)
  are recognised by one regular expression over the whole batch, which also
  splits them into fields; that form is strict enough that the fields' bytes
  *are* the UTF-8 of the decoded values, so they stay bytes from the store to the
  output. Any other line is read as every store reader reads one (``read_line``), and
  reported with its line number when it cannot be read.

Both kinds of line are judged by the one definition of a match,
:meth:`Query.accepts` (for a query of text alone, by shortcuts that give its
answer for a whole batch at once: see :func:`_select`). Matching lines from the
fast path come out as
:class:`Rows` (a batch's rows, for renderers that work a batch at a time),
the others as :class:`~flowgit.episodes.Episode`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from itertools import accumulate, chain, compress, repeat
from operator import itemgetter, not_
from typing import Callable, Iterable, Iterator, Union

from flowgit.episodes import EPISODE_TYPES, Episode, Problem, _describe, parse_ts, read_line

# Bytes per chunk: a quarter of a megabyte stays in cache while it is copied, lowered and searched
# (8 MB chunks made the same scan twice as slow); a line longer than this is one chunk of its own.
CHUNK = 256 << 10


def source_name_of(name: str) -> str:
    """:func:`flowgit.evidence.source_name`, imported when a session is asked for."""
    from flowgit.evidence import source_name

    return source_name(name)


class Query:
    """What a search asks for, and the one definition of a match (the byte scan only narrows it)."""

    def __init__(self, *, type_: str | None = None, tags: Iterable[str] = (), session: str | None = None,
                 since: datetime | None = None, until: datetime | None = None, text: str | None = None) -> None:
        self.type_, self.session, self.since, self.until, self.text = type_, session, since, until, text
        # one session however it is spelled, as the immune system reads it (`Sess-1` is `sess-1`)
        self.session_key = source_name_of(session) if session else ""
        self.tags = tuple(tags)
        self._tags = {t.lower() for t in self.tags}
        self.needle = text.lower() if text else None
        self.needle_bytes = self.needle.encode("utf-8", "surrogatepass") if self.needle else None
        # Only text asked for: an episode whose content holds it matches, whatever its tags.
        self.text_only = bool(self.needle) and not (type_ or session or self._tags or since or until)
        self.anything = not (self.needle or type_ or session or self._tags or since or until)

    def accepts(self, type_: str, session: str, tags: tuple[str, ...], ts: str, content: str) -> bool:
        if self.type_ and type_ != self.type_:
            return False
        if self.session and session != self.session and source_name_of(session) != self.session_key:
            return False
        if self._tags and not self._tags <= {t.lower() for t in tags}:
            return False
        if self.since or self.until:
            when = parse_ts(ts)
            if when is None or (self.since and when < self.since) or (self.until and when > self.until):
                return False
        needle = self.needle
        if needle and needle not in content.lower() and not any(needle in t.lower() for t in tags):
            return False
        return True

    def matches(self, ep: Episode) -> bool:
        return self.accepts(ep.type, ep.session, ep.tags, ep.ts, ep.content)


class Rows:
    """Matching episodes from consecutive lines in flowgit's own form, one tuple a line.

    Each tuple is ``(id, ts, type, content, session, agent, tags_json)`` as
    bytes: every field is exactly the UTF-8 of the decoded value and holds no
    byte JSON would escape (no quote, backslash or control character below
    U+0020), and ``tags_json`` is the inside of the tags array as stored
    (``"a", "b"``, or empty), so the tags split at ``", "`` unambiguously.
    ``text`` holds at least every field of the rows, for a renderer that checks
    once whether any needs escaping for a terminal.
    """

    __slots__ = ("rows", "text")

    def __init__(self, rows: list[tuple[bytes, ...]], text: bytes) -> None:
        self.rows, self.text = rows, text

    def __len__(self) -> int:
        return len(self.rows)

    def last(self, n: int) -> Rows:
        return Rows(self.rows[len(self.rows) - n:], self.text)

    def episodes(self) -> Iterator[Episode]:
        for row in self.rows:
            id_, ts, type_, content, session, agent, tags = (f.decode("utf-8") for f in row)
            yield Episode(id=id_, ts=ts, type=type_, content=content, session=session, agent=agent,
                          tags=split_tags(tags))


Found = Union[Rows, Episode]


def split_tags(inner: str) -> tuple[str, ...]:
    """The tags of a row, from the inside of its stored array (``"a", "b"`` -> ``("a", "b")``)."""
    return tuple(inner[1:-1].split('", "')) if inner else ()


def split_tags_bytes(inner: bytes) -> tuple[bytes, ...]:
    """:func:`split_tags` for a row's bytes."""
    return tuple(inner[1:-1].split(b'", "')) if inner else ()


# --- recognising flowgit's own line form -------------------------------------------------------

_TYPES = b"|".join(t.encode("ascii") for t in EPISODE_TYPES)


def _row_form(plain: bytes) -> re.Pattern[bytes]:
    """One line as Episode.to_json writes it, with ``plain`` as the inside of every string.

    The look-behind pins a match to the start of a line (a '{' preceded by
    nothing or a newline), the look-ahead to its end. The possessive repeats
    never give back what they took: a string's inside ends at its closing quote.
    """
    return re.compile(
        rb'\{(?<![^\n]\{)"id": "(' + plain + rb')", "ts": "(' + plain + rb')", "type": "(' + _TYPES
        + rb')", "content": "(' + plain + rb')", "session": "(' + plain + rb')", "agent": "(' + plain
        + rb')", "tags": \[((?:"' + plain + rb'"(?:, "' + plain + rb'")*+)?+)\]\}(?![^\n])')


# A JSON string's inside with nothing escaped (exactly its value's UTF-8, once the line decodes):
# no part can cross a newline, so a batch of N lines holds N matches only if every line is wholly
# in this form.
ROW = _row_form(rb'[^"\\\x00-\x1f]*+')

# The same form over a batch in which every backslash and control byte but the newline has been
# made a quote (_SANITISE): a string's inside is then simply "no quote", which the regular
# expression engine skips several times faster than a class of excluded bytes. A line holding
# one of those bytes inside a string gains a quote and so cannot match; a match that ran across
# a newline would cover two line starts, leaving fewer matches than lines.
_ROW_SANITISED = _row_form(rb'[^"]*+')
_SANITISE = bytes.maketrans(bytes(range(0x0A)) + bytes(range(0x0B, 0x20)) + b"\\", b'"' * 32)


def recognise(batch: bytes, lines: int) -> list[tuple[bytes, ...]] | None:
    """The fields of every line of ``batch`` (``lines`` of them), or None unless every one is in flowgit's form."""
    if not batch.isascii():
        try:
            batch.decode("utf-8")
        except UnicodeDecodeError:
            return None
    rows = _ROW_SANITISED.findall(batch.translate(_SANITISE))
    return rows if len(rows) == lines else None


# --- the byte prefilter -------------------------------------------------------------------------

# Characters a JSON writer may escape (so their raw bytes need not appear in the line),
# and non-ASCII characters whose lower case contains an ASCII letter (KELVIN SIGN -> k,
# LATIN CAPITAL I WITH DOT -> i̇): a case-insensitive scan must let such lines through.
_UNSAFE = set('"\\/')
# (the full list, computed over every code point; tests/test_search.py re-derives it)
_FOLDS_TO_ASCII = ["\u0130", "\u212a"]


def _fragment(text: str) -> str:
    """The longest run of the text whose bytes must appear literally in any JSON line holding it."""
    best, run = "", []
    for ch in text + "\0":
        if 0x20 <= ord(ch) < 0x7F and ch not in _UNSAFE:
            run.append(ch)
            continue
        if len(run) > len(best):
            best = "".join(run)
        run = []
    return best


@dataclass(frozen=True)
class Needle:
    """Bytes a line must contain: ``frag`` (ASCII-case-folded when ``fold``) or one of ``escapes``.

    The escapes are byte sequences whose presence means the line could hold the
    text in a form the fragment does not show (a JSON ``\\u`` escape, a
    non-ASCII letter whose lower case is ASCII): such lines go on to the parser.
    """

    frag: bytes
    fold: bool
    escapes: tuple[bytes, ...]

    def in_line(self, line: bytes) -> bool:
        # (find, not ``in``: a bytes ``in`` first tries its operand as an integer, at an exception's cost)
        return ((line.lower() if self.fold else line).find(self.frag) != -1
                or any(line.find(e) != -1 for e in self.escapes))


def needles(query: Query) -> list[Needle]:
    """What each candidate line must contain (every one a necessary condition of a match)."""
    out = []
    # (no fragment of the session: its spellings share no bytes a line must hold, `sess-1` and `SESS_1`)
    for value, fold in [(query.text, True), *((t, True) for t in query.tags), (query.type_, False)]:
        frag = _fragment(value.lower() if (value and fold) else (value or ""))
        if not frag:
            continue
        escapes = [b"\\u"]
        if fold:
            escapes += [c.encode("utf-8") for c in _FOLDS_TO_ASCII if any(x in frag for x in c.lower())]
        fold = fold and any(c.isalpha() for c in frag)  # no letters: case cannot matter, skip lowering
        out.append(Needle(frag.encode("ascii"), fold, tuple(escapes)))
    out.sort(key=lambda n: -len(n.frag))  # the longest fragment is usually the rarest: it drives the scan
    return out


class SessionLines:
    """The lines of a chunk that may name one session, however it is spelled (the immune system's
    :func:`~flowgit.evidence.source_name`: ``Sess-1``, ``SESS_1`` and ``ѕess 1`` are ``sess-1``).

    Spellings of one name need not share a byte, so no fragment of the name is
    a needle. But a session is written where the form puts it: a line whose
    session is a plain JSON string (nothing escaped) holds the bytes
    ``"session": "<value>"`` as they are. Each chunk's distinct values are
    collected in one pass of a regular expression and folded (a store holds
    few sessions), and only the lines holding a value that folds to the name
    asked for go on, together with every line the pass cannot speak for: one
    holding a backslash (an escaped key or value) and one whose session is not
    a string (``17``, a list: readers take its text). Each of those is then
    judged as every line is (:meth:`Query.accepts`), so the pass only narrows.
    """

    # (the colon and the spaces around it, a plain string value, the first byte of a value that is no plain
    # string); one literal start, which the engine finds at the speed of a byte search
    VALUE_RE = re.compile(rb'"session"([ \t\r]*:[ \t\r]*)(?:"([^"\\\n]*)"|([^"\s]))')

    def __init__(self, key: str) -> None:
        self.key = key
        self._verdicts: dict[bytes, bool] = {}

    def _names_it(self, value: bytes) -> bool:
        """Whether a plain session value folds to the name asked for (a value that is not UTF-8 may: the line
        goes on, and is then reported as unreadable as any search reports it)."""
        known = self._verdicts.get(value)
        if known is None:
            try:
                known = source_name_of(value.decode("utf-8")) == self.key
            except UnicodeDecodeError:
                known = True
            if len(self._verdicts) < 65536:
                self._verdicts[value] = known
        return known

    def lines(self, data, base: int, end: int, wanted: list[Needle]) -> _Batch | None:
        """The chunk's lines that may name the session and hold every needle, or None when none can."""
        src = _source(data, base, end)
        probes: list[bytes] = [b"\\"] if src.find(b"\\") != -1 else []
        starts: set[int] = set()
        found = set(self.VALUE_RE.findall(src))
        probes += [b'"session"%s"%s"' % (colon, value) for colon, value, other in found
                   if not other and self._names_it(value)]
        if any(other for _, _, other in found):  # rare: found again, by where they stand
            starts.update(src.rfind(b"\n", 0, m.start()) + 1 for m in self.VALUE_RE.finditer(src) if m.group(3))
        for probe in probes:
            i = src.find(probe)
            while i != -1:
                starts.add(src.rfind(b"\n", 0, i) + 1)
                i = src.find(probe, src.find(b"\n", i) + 1)
        if not starts:
            return None
        ordered = sorted(starts)
        lines = [src[s:src.find(b"\n", s)] for s in ordered]
        if wanted:
            kept = [(s, line) for s, line in zip(ordered, lines) if all(n.in_line(line) for n in wanted)]
            ordered, lines = [s for s, _ in kept], [line for _, line in kept]
        return _Batch(lines, lambda i: base + ordered[i]) if lines else None


# --- the scan -----------------------------------------------------------------------------------

def scan(data, query: Query, on_problem: Callable[[Problem], None] | None = None, *, start: int = 0,
         end: int | None = None, seen: set[bytes] | None = None) -> Iterator[Found]:
    """Matching episodes of ``data`` (raw store bytes or a map of them) in store order, first line of each id.

    Only the ids of matches are remembered, in ``seen`` (to keep the first line
    of each id); an id whose first line does not match may match on a later
    line. ``start`` and ``end`` (line boundaries) scan part of the store, with
    line numbers still counted from its beginning.
    """
    wanted = needles(query)
    lines_of = _all_lines if not wanted else _lines_with
    if query.session and query.session_key:
        lines_of = SessionLines(query.session_key).lines
    seen = set() if seen is None else seen
    numbers = _LineNumbers(data)
    for base, stop in _chunks(data, start, len(data) if end is None else end):
        batch = lines_of(data, base, stop, wanted)
        if batch is not None:
            yield from _judge(batch, query, seen, numbers, on_problem)
        _drop_pages(data, max(0, base - _FAULT_AROUND), stop)


def _chunks(data, base: int, size: int) -> Iterator[tuple[int, int]]:
    """Newline-aligned (start, end) spans of about CHUNK bytes (longer when one line is) from ``base`` to ``size``."""
    while base < size:
        end = min(base + CHUNK, size)
        if end < size:
            nl = data.rfind(b"\n", base, end)
            if nl == -1:
                nl = data.find(b"\n", end, size)
            end = size if nl == -1 else nl + 1
        yield base, end
        base = end


@dataclass
class _Batch:
    """Candidate lines of one chunk; ``start(i)`` is line i's offset in the store, worked out only when needed."""

    lines: list[bytes]
    start: Callable[[int], int]
    holding: bytes | None = None  # lowered bytes every line is known to hold (the needle the lines were found by)


def _source(data, base: int, end: int) -> bytes:
    """The chunk's bytes, always ending in a newline (the store's last line may not have one)."""
    chunk = data[base:end]
    return chunk if chunk.endswith(b"\n") else chunk + b"\n"


def _all_lines(data, base: int, end: int, wanted: list[Needle]) -> _Batch:
    lines = _source(data, base, end).split(b"\n")[:-1]
    offsets: list[int] = []

    def start(i: int) -> int:
        if not offsets:
            offsets.extend(accumulate(map(len, lines), initial=0))
        return base + offsets[i] + i

    return _Batch(lines, start)


def _lines_with(data, base: int, end: int, wanted: list[Needle]) -> _Batch | None:
    """The chunk's lines that hold every needle, or None when none can.

    The first needle is found with ``bytes.find`` (in the ASCII-lowered chunk when
    case does not matter), so only candidate lines cost any Python; a chunk
    without it is skipped without even being copied when no lowering is needed.
    """
    first, rest = wanted[0], wanted[1:]
    if not first.fold and data.find(first.frag, base, end) == -1 and not _holds_escape(data, base, end, first):
        return None
    src = _source(data, base, end)
    hay = src.lower() if first.fold else src
    holding = None
    if _holds_escape(src, 0, len(src), first):
        starts = _starts_with_escapes(src, hay, first)
        lines = [src[s:src.find(b"\n", s)] for s in starts]
    else:
        starts, lines = _find_lines(src, hay, first.frag)
        holding = first.frag
    if rest:
        kept = [(s, line) for s, line in zip(starts, lines) if all(n.in_line(line) for n in rest)]
        starts, lines = [s for s, _ in kept], [line for _, line in kept]
    return _Batch(lines, lambda i: base + starts[i], holding) if lines else None


def _holds_escape(data, base: int, end: int, needle: Needle) -> bool:
    """Whether ``data[base:end]`` holds one of the needle's escapes.

    A backslash is looked for first (``memchr`` speed, where a two-byte ``\\u``
    is not), and a chunk of plain ASCII cannot hold the non-ASCII ones: most
    chunks of most stores have neither.
    """
    backslash = data.find(b"\\", base, end) != -1
    plain = isinstance(data, bytes) and base == 0 and end == len(data) and data.isascii()
    return any(data.find(e, base, end) != -1 for e in needle.escapes
               if (backslash if e.startswith(b"\\") else not plain))


def _find_lines(src: bytes, hay: bytes, frag: bytes) -> tuple[list[int], list[bytes]]:
    """(start, line) of each line of ``src`` whose counterpart in ``hay`` holds ``frag`` (the hot loop)."""
    starts: list[int] = []
    lines: list[bytes] = []
    find, rfind = hay.find, hay.rfind
    i = find(frag)
    while i != -1:
        s = rfind(b"\n", 0, i) + 1
        e = find(b"\n", i)
        starts.append(s)
        lines.append(src[s:e])
        i = find(frag, e)
    return starts, lines


def _starts_with_escapes(src: bytes, hay: bytes, needle: Needle) -> list[int]:
    """Line starts holding the fragment or one of the escapes, in order (the slower, general case)."""
    starts: set[int] = set()
    for probe, where in ((needle.frag, hay), *((e, src) for e in needle.escapes)):
        i = where.find(probe)
        while i != -1:
            starts.add(src.rfind(b"\n", 0, i) + 1)
            i = where.find(probe, src.find(b"\n", i) + 1)
    return sorted(starts)


# --- judging candidate lines --------------------------------------------------------------------

def _judge(batch: _Batch, query: Query, seen: set[bytes], numbers: _LineNumbers,
           on_problem: Callable[[Problem], None] | None) -> Iterator[Found]:
    """The batch's matches in order: the whole batch at once when every line is in flowgit's form."""
    text = b"\n".join(batch.lines)
    rows = recognise(text, len(batch.lines))
    if rows is not None:
        yield from _nonempty(_select(rows, query, seen, text, batch.holding))
        return
    yield from _judge_each(batch, query, seen, numbers, on_problem)


def _judge_each(batch: _Batch, query: Query, seen: set[bytes], numbers: _LineNumbers,
                on_problem: Callable[[Problem], None] | None) -> Iterator[Found]:
    """Line by line: runs in flowgit's form still go together, anything else through
    :func:`flowgit.episodes.read_line` (as every store reader reads a line)."""
    run: list[tuple[bytes, ...]] = []
    run_text: list[bytes] = []
    for i, raw in enumerate(batch.lines):
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            line = None
        m = ROW.fullmatch(raw) if line is not None else None
        if m is not None:
            run.append(m.groups())
            run_text.append(raw)
            continue
        if run:
            yield from _nonempty(_select(run, query, seen, b"\n".join(run_text), batch.holding))
            run, run_text = [], []
        try:
            ep = read_line(line if line is not None else raw)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            if on_problem is not None:
                on_problem(Problem(numbers.at(batch.start(i)), f"unreadable line skipped ({_describe(exc)})"))
            continue
        key = ep.id.encode("utf-8", "surrogatepass")  # as a row's id: its value's UTF-8, one key per string
        if key in seen or not query.matches(ep):
            continue
        seen.add(key)
        yield ep
    if run:
        yield from _nonempty(_select(run, query, seen, b"\n".join(run_text), batch.holding))


def _nonempty(rows: Rows | None) -> Iterator[Rows]:
    if rows is not None:
        yield rows


def _select(rows: list[tuple[bytes, ...]], query: Query, seen: set[bytes], text: bytes,
            holding: bytes | None = None) -> Rows | None:
    """The rows that match and whose id has not matched before (None when none).

    ``holding``: lowered bytes each row's line is known to hold. When that is
    the whole text asked for, and it occurs in no other field of the rows nor
    in the form's keys and punctuation, it is in each row's content or tags:
    every row matches, and none is looked at alone.
    """
    everything = range(len(rows))
    if query.anything:
        mask = [True] * len(rows)
    elif query.text_only and holding and holding == query.needle_bytes and not _elsewhere(rows, holding):
        mask = [True] * len(rows)
    elif query.text_only:
        mask = _holding_text(rows, query.needle, text.isascii())
    else:
        mask = [query.accepts(*_fields(row)) for row in rows]
    chosen = list(map(_ID, compress(rows, mask)))
    fresh = seen.isdisjoint(chosen)
    if fresh:
        held = len(seen)
        seen.update(chosen)
        if len(seen) - held != len(chosen):  # an id twice in this batch: none of them was in seen before
            seen.difference_update(chosen)
            fresh = False
    if not fresh:  # an id that matched before, or twice here: the first one stands
        for i in compress(everything, mask):
            mask[i] = rows[i][0] not in seen
            seen.add(rows[i][0])
    if all(mask):
        return Rows(rows, text)
    kept = list(compress(rows, mask))
    return Rows(kept, text) if kept else None


def _holding_text(rows: list[tuple[bytes, ...]], needle: str, ascii_: bool) -> list[bool]:
    """:meth:`Query.accepts` for a query of text alone, most rows decided by their content.

    (A bytes ``in`` would first try the needle as an integer and fail, at the
    cost of an exception a row: the contents are decoded, and compared as text.)
    A row whose content does not hold the text matches when one of its tags
    does; in ASCII rows a tags array without it anywhere has no tag with it.
    """
    contents = map(str.lower, map(bytes.decode, map(_CONTENT, rows)))
    mask = list(map(str.__contains__, contents, repeat(needle)))
    others = compress(range(len(rows)), map(not_, mask))
    if ascii_:
        others = list(others)
        arrays = map(str.lower, map(bytes.decode, map(_TAGS, map(rows.__getitem__, others))))
        others = compress(others, map(str.__contains__, arrays, repeat(needle)))
    for i in others:
        mask[i] = any(needle in t.lower() for t in split_tags(rows[i][6].decode("utf-8")))
    return mask


# Every key and all the punctuation of the form (a needle, holding no quote, cannot span a string's edge).
_FORM = Episode("", "", "", "", "", "", ()).to_json().encode()
_NOT_CONTENT_OR_TAGS = itemgetter(0, 1, 2, 4, 5)


def _elsewhere(rows: list[tuple[bytes, ...]], needle: bytes) -> bool:
    """Whether ``needle`` (lowered, no quote) may be in a row's line outside its content and tags."""
    if _FORM.find(needle) != -1:
        return True
    others = b'"'.join(chain.from_iterable(map(_NOT_CONTENT_OR_TAGS, rows)))
    return others.lower().find(needle) != -1


def _fields(row: tuple[bytes, ...]) -> tuple:
    """A row's fields as :meth:`Query.accepts` takes them."""
    id_, ts, type_, content, session, agent, tags = (f.decode("utf-8") for f in row)
    return type_, session, split_tags(tags), ts, content


_ID, _CONTENT, _TAGS = itemgetter(0), itemgetter(3), itemgetter(6)


class _LineNumbers:
    """Line numbers for problem reports, counted forward (a chunk at a time) only when one is asked for."""

    def __init__(self, data) -> None:
        self.data, self.offset, self.line = data, 0, 1

    def at(self, offset: int) -> int:
        for start in range(self.offset, offset, CHUNK):
            self.line += self.data[start:min(start + CHUNK, offset)].count(b"\n")
        self.offset = max(self.offset, offset)
        return self.line


# A page fault maps neighbouring pages too (64 KB of them on Linux, a whole large folio of the page
# cache, up to 2 MB, where the file system keeps them), some behind the chunk: each drop reaches this
# far back, or those pages would stay mapped, a few more with every chunk.
_FAULT_AROUND = 4 << 20


def _drop_pages(data, start: int, end: int) -> None:
    """Hand pages already scanned back to the kernel (it keeps them cached): resident memory stays flat."""
    import mmap

    if isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        start -= start % mmap.PAGESIZE
        try:
            data.madvise(mmap.MADV_DONTNEED, start, min(end, len(data)) - start)
        except (OSError, ValueError):
            pass
