"""The continuity file's size at one version, measured the way the gate's budget rules measure it.

A report over 10,000 wraps cannot afford a full :class:`Document` parse per
version, so this reads lines with the history scanner's cached line classes
(``##`` heading, fence, other) and applies the gate's definitions: the State
section counts the characters of its non-structural lines, Developing counts
its non-structural lines outside code fences. Tests hold these figures equal
to :mod:`flowgit.checks.size` on every fixture.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Mapping

from flowgit.continuity.document import fence_step, has_fence_run, is_structural, lines_holding
from flowgit.continuity.identity import canonical_section
from flowgit.continuity.scan import FENCE, HEADING, classify
from flowgit.continuity.sections import DEVELOPING, STATE


@dataclass(frozen=True)
class Size:
    """One version's measures (None: the section is not there)."""

    chars: int
    lines: int
    state_chars: int | None
    developing_lines: int | None

    def to_dict(self) -> dict:
        return {"chars": self.chars, "lines": self.lines, "state_chars": self.state_chars,
                "developing_lines": self.developing_lines}


def measure(text: str, table: Mapping[str, str]) -> Size:
    """Measure one version of the file; ``table`` maps lower-cased names and aliases to canonical names.

    Only the lines that can open a section or a fence are classified to find
    the two measured sections; their bodies (a few dozen lines) are then read
    line by line. The rest of the file costs a character search, not a loop.
    """
    state: int | None = None
    developing: int | None = None
    for name, body in _measured_bodies(text.lstrip("\ufeff"), table):  # marks open the first line only
        lines = body.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if name == STATE:
            state = _state_chars(lines)
        else:
            developing = _developing_lines(lines)
    return Size(chars=len(text), lines=_line_count(text), state_chars=state, developing_lines=developing)


def measure_document(doc) -> Size:
    """The same figures read from a parsed :class:`Document` (the gate's own size rules, cached on it):
    what the audit notes for the report of a version its rules have just parsed."""
    from flowgit.checks.size import developing_lines, state_chars

    return Size(chars=len(doc.text), lines=len(doc.lines), state_chars=state_chars(doc),
                developing_lines=developing_lines(doc))


def _line_count(text: str) -> int:
    """Lines as ``text.split("\n")`` gives them, less the empty piece after a final newline."""
    return text.count("\n") + (0 if not text or text.endswith("\n") else 1)


def _measured_bodies(text: str, table: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """(canonical name, body text) of the first State and the first Developing section.

    A section starts at a ``##`` heading outside a code fence and ends at the
    next one. Such a heading holds ``#`` and a fence line holds a run of three
    backticks or tildes, so only lines holding those characters are classified.
    """
    marks = ("#", "`", "~") if has_fence_run(text) else ("#",)
    starts = sorted({start for mark in marks for start in lines_holding(text, mark)})
    seen: set[str] = set()
    fence: str | None = None
    current: tuple[str, int] | None = None  # the measured section being read: its name and body's offset
    for start in starts:
        end = text.find("\n", start)
        line = (text[start:] if end == -1 else text[start:end]).rstrip("\r")
        kind, payload = classify(line)
        if kind == HEADING and fence is None:
            if current is not None:
                yield current[0], text[current[1]:start]
                current = None
            name = str(payload)
            canonical = canonical_section(name, table)  # as the parser names it (spacing, suffixes)
            if canonical in (STATE, DEVELOPING) and canonical not in seen:
                seen.add(canonical)
                current = (canonical, len(text) if end == -1 else end + 1)
            continue
        if kind == FENCE or fence is not None:
            fence, _ = fence_step(line, fence)
    if current is not None:
        yield current[0], text[current[1]:]


def _state_chars(lines: list[str]) -> int:
    """State's size: the characters of its non-structural lines, fenced or not."""
    return sum(len(line) for line in map(_no_cr, lines) if not is_structural(line))


def _developing_lines(lines: list[str]) -> int:
    """Developing's size: its non-structural lines outside code fences (fence lines included in neither)."""
    count = 0
    fence: str | None = None
    for line in map(_no_cr, lines):
        inside = fence is not None
        fence, is_fence = fence_step(line, fence)
        if not (inside or is_fence or is_structural(line)):
            count += 1
    return count


def _no_cr(line: str) -> str:
    return line.rstrip("\r")
