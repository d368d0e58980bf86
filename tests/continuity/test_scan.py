"""The history scanner agrees with the document model on every fixture and on generated documents."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowgit.continuity.document import Document
from flowgit.continuity.patterns import pattern_map
from flowgit.continuity.scan import scan_patterns
from tests.conftest import DATA
from tests.support.edits import edit_lists, edited_versions


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
    "\ufeff## Developing", "\ufeff```", "\ufeff\ufeff## Proven Knowledge", "\ufeff! e: f | 1x",
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


# --- a version scanned after another takes the other's marks for the lines both share
def _fresh_scan(text: str, table=None) -> list:
    """The scan of ``text`` with nothing remembered from an earlier text, as comparable values."""
    from flowgit.continuity import scan

    saved = list(scan._last)
    scan._last.clear()
    try:
        return _values(scan_patterns(text, table=table))
    finally:
        scan._last[:] = saved


def _values(found: dict) -> list:
    return [(name, at.section, at.line, at.pattern, at.pattern.raw) for name, at in found.items()]


EDIT_LINES = ["## Developing", "## Proven Knowledge", "## Proven", "##", "### Hot", "# comment", "```", "~~~",
              "``` `x`", "! a: b | 1x", "!! b: c | 2x [evidence: ep-1]", "!! a: again | 3x", "- ! c: d | 1x",
              "text é — x", "", "<activation>", "\ufeff## Proven", "## Proven\r", "line\r", "    ## code"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(EDIT_LINES), max_size=30), edit_lists(st.sampled_from(EDIT_LINES), 30),
       st.booleans(), st.sampled_from(["\n", "\r\n"]))
def test_a_chain_of_edits_scans_as_fresh_scans(lines, edits, final_newline, newline):
    from flowgit.continuity import scan

    scan._last.clear()  # each example is its own walk

    def text(ls):
        return newline.join(ls) + (newline if final_newline and ls else "")

    versions = edited_versions(lines, edits, text)
    for version in versions + versions[::-1]:
        assert _values(scan_patterns(version)) == _fresh_scan(version)


def test_a_walk_between_unrelated_texts_and_back_scans_each_afresh():
    first = "## Proven Knowledge\n!! a: x | 2x\n## Developing\n! b: y | 1x\n"
    second = "## Developing\n! a: z | 1x\n```\n## Proven Knowledge\n```\n!! b: w | 2x\n"
    for text in (first, second, first, second[:-1], "", first):
        assert _values(scan_patterns(text)) == _fresh_scan(text)


def test_moving_a_fence_line_changes_the_shared_lines_meaning_and_is_seen():
    body = ["## Proven Knowledge", "!! a: x | 2x", "```", "!! b: y | 2x", "```", "!! c: z | 2x"]
    opened = body[:2] + ["```"] + body[2:]  # a third fence: b is now outside, c inside
    for lines in (body, opened, body):
        text = "\n".join(lines) + "\n"
        found = scan_patterns(text)
        assert _values(found) == _fresh_scan(text)
    assert set(scan_patterns("\n".join(opened) + "\n")) == {"a", "b"}


# --- the bytes scanner: the text scanner's answer on the decoded bytes, whatever was scanned before
BYTE_LINES = [line.encode() for line in EDIT_LINES] + [b"\xe2\x80", b"caf\xc3", b"\xff## Proven", b"! x: \xe9 | 1x",
                                                       b"\xf0\x9f\x98\x80 emoji", b"\xc3\xa9\xcc\x81"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(BYTE_LINES), max_size=30), edit_lists(st.sampled_from(BYTE_LINES), 30),
       st.booleans(), st.sampled_from([b"\n", b"\r\n"]))
def test_bytes_scanned_in_a_chain_equal_the_text_scan_of_their_decoding(lines, edits, final_newline, newline):
    from flowgit.continuity import scan

    scan._last_bytes.clear()  # each example is its own walk

    def data(ls):
        return newline.join(ls) + (newline if final_newline and ls else b"")

    versions = edited_versions(lines, edits, data)
    for version in versions + versions[::-1]:
        assert _values(scan.scan_pattern_bytes(version)) == _fresh_scan(version.decode("utf-8", "replace"))


def test_bytes_scan_reads_the_fixtures_as_the_text_scan():
    from flowgit.continuity.scan import scan_pattern_bytes

    paths = sorted(DATA.glob("*.md"))
    for path in paths + paths[::-1]:
        raw = path.read_bytes()
        assert _values(scan_pattern_bytes(raw)) == _fresh_scan(raw.decode("utf-8", "replace"))


def test_a_byte_order_mark_opens_only_the_first_line_in_a_chain_of_versions():
    """A file that starts with a byte order mark reads its first line without it; the same line pushed down
    by an edit is no heading any more (nor is one pulled up to the top read with the mark), in the text and
    the bytes scan alike, whatever was scanned before: both agree with the document model."""
    from flowgit.continuity import scan

    versions = ["\ufeff## Proven Knowledge\n!! a: b | 3x\n",
                "## Developing Knowledge\n\ufeff## Proven Knowledge\n!! a: b | 3x\n",
                "\ufeff## Proven Knowledge\n!! a: b | 3x\n",
                "## Developing Knowledge\n\ufeff## Proven Knowledge\n!! a: b | 3x\n"]
    scan._last.clear()
    scan._last_bytes.clear()
    for text in versions:
        expected = {n: (a.section, a.line) for n, a in pattern_map(Document.parse(text)).items()}
        assert {n: (a.section, a.line) for n, a in scan_patterns(text).items()} == expected
        assert {n: (a.section, a.line) for n, a in scan.scan_pattern_bytes(text.encode()).items()} == expected
    assert expected == {"a": ("Developing Knowledge", 2)}
