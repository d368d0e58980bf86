"""What recognition remembers of a body is what the body's own lines decide.

A body read as an edit of an earlier one is called plain (nothing in it can
hide a line) from the earlier body's answer and the lines between the shared
ends. A wrong answer would skip the lines that moved into or out of hiding, so
every chain of edits here is held to a reading of the whole body.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from flowgit.checks.recognition import _hidden_in, _hides, _plain, _plain_lines
from flowgit.continuity.document import Document, SectionFacts
from tests.support.edits import edit_lists, edited_versions

LINES = ["! p01: retries multiply load | 1x\n", "- a list item\n", "thought: a -> b ><\n", "> quoted line\n",
         "  > indented quote\n", "    > code, not a quote\n", "<!-- ! hidden: x | 1x -->\n", "<!--\n", "-->\n",
         "```\n", "~~~\n", "text with a > sign\n", "\n", "plain prose\n"]
bodies = st.lists(st.sampled_from(LINES), max_size=12)


def _hides_fresh(body: tuple[str, ...]) -> bool:
    return next(_hidden_in(body), None) is not None


@settings(max_examples=300, deadline=None)
@given(bodies, edit_lists(st.sampled_from(LINES), 12))
def test_a_body_read_as_an_edit_is_plain_and_hides_exactly_as_the_whole_body(lines, edits):
    earlier = None
    for body in edited_versions(lines, edits, tuple):
        facts = SectionFacts(body, earlier)
        assert facts.derived("recognition.plain", _plain) == _plain_lines(body)
        if facts.derived("recognition.plain", _plain):
            assert not _hides_fresh(body)  # plain: nothing can hide
        earlier = facts


def test_a_quote_typed_into_a_plain_body_makes_it_hide():
    text = "## Developing Knowledge\n! p01: retries multiply load | 1x\n- item\n"
    doc = Document.parse(text)
    assert _hides(doc, doc.sections[0]) is False
    edited = Document.parse_against(doc, 2, 1, "> ! p02: quoted | 1x\n")
    assert edited is not None and edited.lines[2].startswith(">")
    assert _hides(edited, edited.sections[0]) is True
