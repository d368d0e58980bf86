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
