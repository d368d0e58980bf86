"""A fast pattern scanner for history walks.

Walking 10,000 commits cannot afford a full document parse per version, and
does not need one: history only asks "which pattern lines are there, and in
which section". One regular-expression pass over the text finds the three
kinds of line that decide it — ATX ``##`` headings, code fences, pattern lines
— and a small state machine assigns sections the way :class:`Document` does
(CommonMark's rules for ATX headings and fences). Tests hold the two to the
same answer on every fixture and on generated documents.
"""

from __future__ import annotations

import re
from typing import Mapping

from flowgit.continuity.document import fence_step
from flowgit.continuity.patterns import PatternAt, parse_pattern
from flowgit.continuity.sections import alias_table

LINE_RE = re.compile(
    r"^(?P<fence> {0,3}(?:`{3,}|~{3,}).*)$"
    r"|^ {0,3}(?P<h2>##)(?:[ \t]+(?P<title>.*?))?[ \t]*$"
    r"|^(?P<pattern>[^\n]*![^\n]*\|[ \t]*[1-9]x\b.*)$",
    re.M,
)


def scan_patterns(text: str, aliases: Mapping[str, tuple[str, ...]] | None = None,
                  table: Mapping[str, str] | None = None) -> dict[str, PatternAt]:
    """Patterns by name (first occurrence wins), with their section label and line."""
    table = table if table is not None else alias_table(aliases)
    found: dict[str, PatternAt] = {}
    section: str | None = None
    fence: str | None = None
    normalized = text.replace("\r\n", "\n").replace("\r", " ") if "\r" in text else text
    line_starts: list[int] | None = None
    for m in LINE_RE.finditer(normalized):
        if m.group("fence") is not None:
            fence, is_fence = fence_step(m.group("fence"), fence)
            if fence is not None or is_fence:
                continue
            # an opening-looking line that cannot open a fence is ordinary text
            continue
        if fence is not None:
            continue
        if m.group("h2") is not None:
            title = re.sub(r"[ \t]+#+$", "", (m.group("title") or "").strip())
            name = title.partition("|")[0].strip().rstrip(":").strip()
            section = table.get(name.lower(), name)
            continue
        if section is None:
            continue
        pattern = parse_pattern(m.group("pattern"))
        if pattern is None or pattern.name in found:
            continue
        if line_starts is None:
            line_starts = [0] + [i + 1 for i, ch in enumerate(normalized) if ch == "\n"]
        line = _line_of(line_starts, m.start())
        found[pattern.name] = PatternAt(pattern, line, section)
    return found


def _line_of(starts: list[int], offset: int) -> int:
    from bisect import bisect_right

    return bisect_right(starts, offset) - 1
