"""The history scanner agrees with the document model on every fixture and on generated documents."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowgit.continuity.document import Document
from flowgit.continuity.patterns import pattern_map
from flowgit.continuity.scan import scan_patterns
from tests.conftest import DATA


def same(text: str) -> None:
    expected = {n: (a.section, a.line, a.pattern.render()) for n, a in pattern_map(Document.parse(text)).items()}
    got = {n: (a.section, a.line, a.pattern.render()) for n, a in scan_patterns(text).items()}
    assert got == expected


@pytest.mark.parametrize("path", sorted(DATA.glob("*.md")), ids=lambda p: p.name)
def test_fixtures(path):
    same(path.read_text())


pieces = st.sampled_from([
    "## Developing", "## Proven Knowledge", "## State | x", "##", "### Hot", "# comment", "    ## indented",
    "\t## tabbed", "```", "```python", "~~~", "````", "``` `x`", "! a: b | 1x", "!! b: c | 2x [evidence: ep-1]",
    "- ! c: d | 1x", "text", "", "<activation>", "## Proven ##", "!! a: again | 3x",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(pieces, max_size=30), st.sampled_from(["\n", "\r\n"]))
def test_property_scanner_matches_document(lines, newline):
    same(newline.join(lines) + newline)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["## State", "! p: q | 1x", "!! r: s | 2x (C) [evidence: ep-1]", "```", "~~~",
                                 "x", "", " ## a", "#", "!", "|", "`", "~", "! a | 1x", "## Developing Knowledge",
                                 "text ! | y", "   ```", "## Proven", "! p: again | 1x"]), max_size=40),
       st.sampled_from(["", "\n"]))
def test_only_lines_holding_a_mark_are_read_and_nothing_else_matters(lines, end):
    """The scan reads the lines holding `!`, `#` (and fence characters when the text has a run of three):
    every line it skips is one the classifier calls OTHER, so the answer is the line-by-line walk's."""
    from flowgit.continuity.scan import OTHER, _lines_that_matter, classify

    text = "\n".join(lines) + end
    walked = [(i, line) for i, line in enumerate(text.split("\n")) if classify(line)[0] != OTHER]
    assert [(i, line) for i, line in _lines_that_matter(text) if classify(line)[0] != OTHER] == walked
