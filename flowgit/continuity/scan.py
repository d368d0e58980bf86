"""A fast pattern scanner for history walks.

Walking 10,000 commits cannot afford a full document parse per version, and
does not need one: history only asks "which pattern lines are there, and in
which section". Consecutive versions share almost every line, so each distinct
line is classified once (ATX ``##`` heading, code fence, pattern line, or
neither) and remembered; a version is then one pass over its lines with a
small state machine that assigns sections the way :class:`Document` does
(CommonMark's rules for ATX headings and fences). Tests hold the two to the
same answer on every fixture and on generated documents. A walk scans each
version after its neighbour, so the lines it shares with the text scanned
last keep that text's marks and only the lines between are read.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import Mapping

from flowgit.continuity.document import fence_step, has_fence_run, lines_holding
from flowgit.continuity.identity import canonical_section
from flowgit.continuity.patterns import Pattern, PatternAt, parse_pattern
from flowgit.continuity.sections import alias_table
from flowgit.continuity.textdiff import shared_lines

H2_RE = re.compile(r"^ {0,3}##(?:[ \t]+(.*?))?[ \t]*$")
FENCE_START_RE = re.compile(r"^ {0,3}(?:`{3}|~{3})")
OTHER, FENCE, HEADING, PATTERN = range(4)

_cache: dict[str, tuple[int, object]] = {}
_CACHE_LIMIT = 200_000


def classify(line: str) -> tuple[int, object]:
    """What one line can mean to the scanner (cached: history repeats its lines)."""
    hit = _cache.get(line)
    if hit is not None:
        return hit
    if FENCE_START_RE.match(line):
        result: tuple[int, object] = (FENCE, None)
    else:
        m = H2_RE.match(line)
        if m:
            title = re.sub(r"[ \t]+#+$", "", (m.group(1) or "").strip())
            result = (HEADING, title.partition("|")[0].strip().rstrip(":").strip())
        elif "|" in line and "!" in line:
            pattern = parse_pattern(line)
            result = (PATTERN, pattern) if pattern is not None else (OTHER, None)
        else:
            result = (OTHER, None)
    if len(_cache) >= _CACHE_LIMIT:
        _cache.clear()
    _cache[line] = result
    return result


def scan_patterns(text: str, aliases: Mapping[str, tuple[str, ...]] | None = None,
                  table: Mapping[str, str] | None = None) -> dict[str, PatternAt]:
    """Patterns by name (first occurrence wins), with their section label and line."""
    table = table if table is not None else alias_table(aliases)
    return _walk(_marks(_plain_newlines(text)), table)


def scan_pattern_bytes(data: bytes, aliases: Mapping[str, tuple[str, ...]] | None = None,
                       table: Mapping[str, str] | None = None) -> dict[str, PatternAt]:
    """:func:`scan_patterns` of ``data.decode("utf-8", "replace")``, decoding only what changed.

    For a walk that holds each version's bytes: the lines shared with the
    bytes scanned last keep their marks (compared as bytes, far cheaper than
    as text), and only the bytes between are decoded and read. A newline byte
    is never part of a multi-byte character, so decoding whole lines apart
    gives the characters decoding the whole gives, replacements included.
    """
    table = table if table is not None else alias_table(aliases)
    if not _last_bytes or data.startswith(BOM_BYTES) or _last_bytes[0].startswith(BOM_BYTES):
        text = _plain_newlines(data.decode("utf-8", "replace"))
        marks, count = _read_marks(text, 0), _line_count(text)
    else:
        old_data, old_count, old_marks = _last_bytes
        shared = shared_lines(old_data, data, old_count)
        start, end = shared.new_mid
        middle = _plain_newlines(data[start:end].decode("utf-8", "replace"))
        count = shared.top + _line_count(middle) + shared.bottom
        marks = _merged(old_marks, old_count, shared.top, shared.bottom, _read_marks(middle, shared.top), count)
    _last_bytes[:] = [data, count, marks]
    return _walk(marks, table)


def _plain_newlines(text: str) -> str:
    """``text`` with CRLF read as LF and a lone CR as a space, as the scanner reads lines."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", " ")
    return text


def _walk(marks: tuple, table: Mapping[str, str]) -> dict[str, PatternAt]:
    """Patterns by name (first occurrence wins) from a text's marks: sections and fences walked in order."""
    found: dict[str, PatternAt] = {}
    section: str | None = None
    fence: str | None = None
    for index, kind, payload, line in marks:
        if kind == FENCE:
            fence, _ = fence_step(line, fence)
            continue
        if fence is not None:
            continue
        if kind == HEADING:
            section = canonical_section(str(payload), table) or str(payload)
        elif section is not None:
            pattern: Pattern = payload  # type: ignore[assignment]
            if pattern.name not in found:
                found[pattern.name] = PatternAt(pattern, index, section)
    return found


Mark = tuple  # (line index, kind, payload, line): a line :func:`classify` does not call OTHER

# The text scanned last, its line count and its marks: a walk scans each version after its neighbour, and
# the lines both share are marked alike (a line's kind is its own), so only the lines between are read.
_last: list = []


_last_bytes: list = []  # the same for scan_pattern_bytes: the bytes scanned last, their line count, marks
# A byte order mark makes the first line read differently from the same line elsewhere (see _read_marks):
# a text that starts with one, or follows one that did, is read whole.
BOM_BYTES = "\ufeff".encode("utf-8")


def _marks(text: str) -> tuple[Mark, ...]:
    """The marks of ``text`` (its ``\\r`` already replaced), taken from the text scanned last where both
    share whole lines at the top and the bottom."""
    if _last and not text.startswith("\ufeff") and not _last[0].startswith("\ufeff"):
        old_text, old_count, old_marks = _last
        shared = shared_lines(old_text, text, old_count)
        start, end = shared.new_mid
        middle = text[start:end]
        count = shared.top + _line_count(middle) + shared.bottom
        marks = _merged(old_marks, old_count, shared.top, shared.bottom, _read_marks(middle, shared.top), count)
    else:
        marks, count = _read_marks(text, 0), _line_count(text)
    _last[:] = [text, count, marks]
    return marks


def _merged(old_marks: tuple, old_count: int, top: int, bottom: int, middle: tuple, count: int) -> tuple:
    """The earlier text's marks on its first ``top`` and last ``bottom`` lines (those moved to where
    they stand in a text of ``count`` lines) around the ``middle`` marks."""
    indices = [mark[0] for mark in old_marks]
    kept = bisect_left(indices, top)
    moved = bisect_left(indices, old_count - bottom)
    shift = count - old_count
    return old_marks[:kept] + middle + (
        tuple([(at + shift, kind, payload, line) for at, kind, payload, line in old_marks[moved:]])
        if shift else old_marks[moved:])


def _line_count(text: str) -> int:
    """How many lines :func:`flowgit.continuity.document.split_lines` cuts ``text`` into."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _read_marks(text: str, first: int) -> tuple[Mark, ...]:
    """The marks of ``text``'s lines, numbered from ``first``.

    Byte order marks open the file's first line only (the document model
    drops them there): anywhere else a mark is a character like any other, so
    a ``\ufeff## …`` line further down is not a heading.
    """
    if first == 0:
        text = text.lstrip("\ufeff")
    out = []
    for index, line in _lines_that_matter(text):
        kind, payload = classify(line)
        if kind != OTHER:
            out.append((first + index, kind, payload, line))
    return tuple(out)


def _lines_that_matter(text: str):
    """(index, line) of each line that can be a heading (holds ``#``), a pattern (holds ``!``) or, in a text
    with a run of three backticks or tildes, a fence; every other line :func:`classify` calls OTHER.

    Each character is found by a one-character search over the whole text, so a
    version costs its few dozen such lines instead of a lookup per line.
    """
    marks = ("!", "#", "`", "~") if has_fence_run(text) else ("!", "#")
    starts = sorted({start for mark in marks for start in lines_holding(text, mark)})
    index, counted = 0, 0
    for start in starts:
        index += text.count("\n", counted, start)
        counted = start
        end = text.find("\n", start)
        yield index, text[start:] if end == -1 else text[start:end]
