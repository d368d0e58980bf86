"""Which lines under a pattern a reader reads as part of it (:mod:`flowgit.continuity.attached`)."""

from __future__ import annotations

import pytest

from flowgit.continuity.attached import attached_span, attached_text
from flowgit.continuity.document import Document

HEAD = "# Continuity\n\n## Developing Knowledge\n"
RAISED = "!! retry_budget: cap retries per request | 2x (RELIABILITY) [evidence: ep-1, ep-2]"
BULLETED = f"- {RAISED}"
NEXT = "! cache_first: serve balances from cache | 1x"


def under(body: str, first: str = RAISED) -> str:
    doc = Document.parse(HEAD + body + "\n\n## Proven Knowledge\n")
    line = next(i for i, text in enumerate(doc.lines) if text.rstrip("\n") == first)
    return attached_text(doc, line)


@pytest.mark.parametrize("body, said", [
    (f"{RAISED}\n  - never in batch jobs", "never in batch jobs"),                 # a nested bullet
    (f"{RAISED}\n    wrapped: never in batch jobs", "wrapped: never in batch jobs"),  # an indented line
    (f"{RAISED}\nexcept in batch jobs", "except in batch jobs"),                   # joined to its paragraph
    (f"{RAISED}\n\n  - after a blank line, indented", "after a blank line, indented"),
    (f"{RAISED}\n# a guidance comment\n  - still under it", "still under it"),     # comments are skipped
    (f"{RAISED}\n  - one\n  - two", "one\ntwo"),
])
def test_lines_a_reader_reads_as_part_of_the_pattern(body, said):
    assert under(body) == said


@pytest.mark.parametrize("body", [
    f"{RAISED}\n{NEXT}",                          # another pattern
    f"{RAISED}\n\nA note of the file's own.",     # a blank line, then the pattern's indentation
    f"{RAISED}\n### Reliability\n  - grouped",    # a heading
    f"{RAISED}\n```\nnever\n```",                 # a code fence
    f"{RAISED}\n</reference>",                    # a wrapper tag
    f"{RAISED}\n# only a comment",                # guidance, not the item's
])
def test_lines_that_end_the_item_or_are_not_its_own(body):
    assert under(body) == ""


def test_a_sibling_bullet_is_no_part_of_a_bulleted_pattern():
    assert under(f"{BULLETED}\n- a sibling item\n  - its own sub-item", BULLETED) == ""
    assert under(f"{BULLETED}\n  - a sub-item", BULLETED) == "a sub-item"


def test_the_span_a_wrap_moves_reaches_the_last_line_under_the_pattern():
    doc = Document.parse(HEAD + f"{RAISED}\n  - one\n\n  - two\n{NEXT}\n")
    line = doc.lines.index(RAISED + "\n")
    assert attached_span(doc, line) == line + 4
    assert attached_span(doc, doc.lines.index(NEXT + "\n")) == doc.lines.index(NEXT + "\n") + 1
