"""Whatever bytes arrive, flowgit answers with its own error or a result — never a crash."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from flowgit.continuity.document import Document
from flowgit.continuity.flowscript import lint_text
from flowgit.continuity.patterns import iter_patterns
from flowgit.episodes import parse_store
from flowgit.errors import FlowgitError
from flowgit.fsio import decode_text


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_parse_or_fail_cleanly(data):
    try:
        text = decode_text(data, "f.md")
    except FlowgitError as exc:
        assert exc.path == "f.md" and exc.message
        return
    doc = Document.parse(text)
    assert doc.text == text
    list(iter_patterns(doc))
    lint_text(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=60), st.just(b'{"id": "ep-1", "type": "finding", "content": "x"}')),
                max_size=20))
def test_any_store_bytes_are_read_line_by_line(lines):
    data = b"\n".join(lines)
    episodes, problems = parse_store(data)
    physical = data.split(b"\n")
    assert len(episodes) + len(problems) <= sum(1 for ln in physical if ln.strip())
    assert all(1 <= p.line <= len(physical) and physical[p.line - 1].strip() for p in problems)
    if any(ln == b'{"id": "ep-1", "type": "finding", "content": "x"}' for ln in physical):
        assert "ep-1" in episodes
