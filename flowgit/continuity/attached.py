"""The lines a reader reads as part of a pattern: those under its line that continue it.

To the grammar a pattern is one line. A reader of the raw file, or of the
rendered page, also reads the lines under it that continue its item: a line
right below it with no blank line between (markdown joins it to the pattern's
paragraph), and a line indented deeper than the pattern (a nested bullet, a
wrapped line), blank lines between or not. What those lines say is said of the
pattern, so a raised pattern's claim is judged with them (G209), and the wrap
moves or archives them with their pattern rather than leave them to be read
as part of the pattern above.

A line stops the item when it is another pattern, a heading, a code fence, a
wrapper tag (``</reference>``), a bullet no deeper than the pattern (a sibling
item), or any line no deeper than the pattern after a blank line. Comment lines
(``# …``) are the file's guidance: they neither belong to the item nor end it.
"""

from __future__ import annotations

import re
from typing import Mapping

from flowgit.continuity.document import BULLET_RE, COMMENT_RE, FENCE_RE, WRAPPER_RE

HEADING_RE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")


def attachments(facts) -> Mapping[int, tuple[int, ...]]:
    """Offset of each pattern line in a section body -> offsets of the lines that continue it (patterns with
    none are left out). Remembered with the body: most bodies have no such line, and most changes share
    their bodies with the version before."""
    return facts.derived("attached.lines", _attachments_of)


def _attachments_of(facts) -> dict[int, tuple[int, ...]]:
    body, found = facts.body, {}
    starts = {offset for offset, _ in facts.patterns}
    for offset in sorted(starts):
        lines = _continuing(body, offset, starts)
        if lines:
            found[offset] = lines
    return found


def _continuing(body, offset: int, starts: set[int]) -> tuple[int, ...]:
    own, blank, out = _indent(body[offset]), False, []
    for at in range(offset + 1, len(body)):
        line = body[at]
        if at in starts:
            break
        if not line.strip():
            blank = True
            continue
        if COMMENT_RE.match(line):
            continue  # (guidance: not the item's, and no end of it)
        if FENCE_RE.match(line) or WRAPPER_RE.match(line) or _a_heading(line):
            break
        deeper = _indent(line) > own
        if deeper or (not blank and not BULLET_RE.match(line)):
            out.append(at)
            continue
        break
    return tuple(out)


def _a_heading(line: str) -> bool:
    """A markdown heading (``### State log``), not a comment (``# note``: one mark, then a space)."""
    return bool(HEADING_RE.match(line)) and not COMMENT_RE.match(line)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def attached_span(doc, line: int) -> int:
    """The index one past the last line that continues the pattern at ``line`` of ``doc`` (``line + 1`` when
    none does): the lines a wrap moves or archives with the pattern."""
    section = doc.section_at(line)
    if section is None:
        return line + 1
    offset = line - section.body_start
    lines = attachments(doc.facts(section)).get(offset)
    return section.body_start + lines[-1] + 1 if lines else line + 1


def attached_text(doc, line: int) -> str:
    """The text of the lines that continue the pattern at ``line`` of ``doc``, one line each, bullets off."""
    section = doc.section_at(line)
    if section is None:
        return ""
    body = doc.facts(section).body
    lines = attachments(doc.facts(section)).get(line - section.body_start, ())
    return "\n".join(BULLET_RE.sub("", body[at].strip(), count=1) for at in lines)
