"""The document model: lossless round trip, structure, and edits confined to their section."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from flowgit.continuity.document import Document
from tests.conftest import DATA

FILES = sorted(DATA.glob("*.md"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_fixture_round_trips_byte_identical(path):
    raw = path.read_bytes()
    doc = Document.parse(raw.decode("utf-8"))
    assert doc.text.encode("utf-8") == raw


def test_flow_template_structure():
    doc = Document.parse((DATA / "flow_template.md").read_text())
    names = [s.name for s in doc.sections]
    assert names == ["State", "Top of Mind", "Actions", "Recent", "Developing Knowledge",
                     "Proven Knowledge", "Cross-Domain Discoveries", "Foundation", "Partnership"]
    state = doc.get("Current State")
    assert state.canonical == "Current State"
    assert state.suffix == "2026-11-30 evening (shipping the gate)"
    assert state.wrapper == "activation"
    assert [s.title for s in state.subsections] == ["Hot", "Warm"]
    assert doc.get("recent").canonical == "Recent Context"
    assert doc.get("Actions").canonical == "Action Items"
    # the fenced "## not a section" stays inside Proven Knowledge
    assert "## not a section" in doc.section_text("Proven")
    # a "# " comment inside a section is not a heading
    assert "# REPLACE entirely each wrap." in doc.body_text("State")
    # the closing wrapper tag is not part of the section's body
    assert "</activation>" not in doc.body_text("Top of Mind")


def test_setext_underline_and_h1_are_not_sections():
    doc = Document.parse((DATA / "setext_and_h1.md").read_text())
    assert [s.canonical for s in doc.sections] == ["Current State", "Action Items"]
    assert "# a comment" in doc.body_text("State")


def _outside(doc: Document, name: str) -> tuple[list[str], list[str]]:
    sec = doc.get(name)
    return doc.lines[:sec.heading + 1], doc.lines[sec.end:]


@pytest.mark.parametrize("section", ["State", "Recent", "Top of Mind", "Developing", "Partnership"])
def test_replace_body_changes_nothing_outside_the_section(section):
    doc = Document.parse((DATA / "flow_template.md").read_text())
    before_head, before_tail = _outside(doc, section)
    new = doc.replace_body(section, "Completely new content.\n- with an item")
    after_head, after_tail = _outside(new, section)
    assert after_head == before_head
    assert after_tail == before_tail
    diff = [ln for ln in difflib.unified_diff(doc.lines, new.lines, n=0) if ln.startswith(("+", "-"))]
    changed = [ln for ln in diff if not ln.startswith(("+++", "---"))]
    assert all(ln[1:] in doc.section_text(section) or ln[1:] in new.section_text(section) for ln in changed)
    assert "Completely new content." in new.body_text(section)


def test_replace_keeps_guidance_comments_and_crlf():
    doc = Document.parse((DATA / "flow_template.md").read_text())
    new = doc.replace_body("State", "Focus: tests.")
    body = new.body_text("State")
    assert body.startswith("# REPLACE entirely each wrap.\n")
    assert "Focus: tests." in body and "Hot" not in body
    crlf = Document.parse((DATA / "crlf.md").read_bytes().decode())
    edited = crlf.replace_body("State", "focus: still crlf")
    assert "focus: still crlf\r\n" in edited.text
    assert "\n" not in edited.text.replace("\r\n", "")


def test_missing_final_newline_survives_an_edit_elsewhere():
    doc = Document.parse((DATA / "no_final_newline.md").read_text())
    edited = doc.replace_body("State", "new state")
    assert edited.text.endswith("! x: y | 1x")
    appended = doc.append_lines("Developing", ["! z: w | 1x"])
    assert appended.text.endswith("! x: y | 1x\n! z: w | 1x")


def test_add_section_in_canonical_order():
    doc = Document.parse("## Current State\nnow\n\n## Developing Knowledge\n! a: b | 1x\n")
    new = doc.add_section("Recent Context", "We did things.")
    assert [s.canonical for s in new.sections] == ["Current State", "Recent Context", "Developing Knowledge"]
    assert new.text.startswith("## Current State\nnow\n")
    assert new.text.endswith("## Developing Knowledge\n! a: b | 1x\n")
    assert new.add_section("Recent Context") is new


def test_items_are_list_items_patterns_and_paragraphs():
    doc = Document.parse((DATA / "flow_template.md").read_text())
    kinds = [(i.kind, i.text[:20]) for i in doc.items("Developing")]
    assert [k for k, _ in kinds] == ["pattern", "pattern", "pattern"]
    recent = doc.items("Recent")
    assert len(recent) == 1 and recent[0].kind == "prose" and recent[0].end - recent[0].start == 3
    actions = doc.items("Actions")
    assert [i.kind for i in actions] == ["list", "list", "list"]


# --- property: any document built from these pieces round-trips, and edits stay local
line_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), max_size=40)
piece = st.one_of(
    line_text,
    st.sampled_from(["## State", "## Recent | x", "### Hot", "# comment", "<activation>", "</activation>",
                     "{", "}", "```", "! p: q | 1x", "!! r: s | 2x (C) [evidence: ep-1, ep-2]", "", "   ", "\t-"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(piece, st.sampled_from(["\n", "\r\n"])), max_size=30), st.booleans())
def test_property_round_trip(pieces, final_newline):
    text = "".join(p + e for p, e in pieces)
    if not final_newline:
        text = text.rstrip("\r\n")
    assert Document.parse(text).text == text


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(piece, st.just("\n")), max_size=25), line_text)
def test_property_edit_is_local(pieces, new_body):
    text = "## State\nold state\n\n" + "".join(p + e for p, e in pieces) + "\n## Partnership\nkeep me\n"
    doc = Document.parse(text)
    assume(doc.find("Partnership") is not None)  # an unclosed ``` fence swallows it, as CommonMark says
    target = doc.sections[-1]
    edited = doc.replace_body("Partnership", new_body or "x")
    assert edited.lines[:target.heading + 1] == doc.lines[:target.heading + 1]


def _changed_outside(before: Document, after: Document, section: str) -> bool:
    """Whether any byte outside ``section`` differs (compared on both sides of the edit)."""
    b, a = before.get(section), after.get(section)
    return before.lines[:b.body_start] != after.lines[:a.body_start] or before.lines[b.end:] != after.lines[a.end:]


def test_item_edits_touch_only_their_section():
    doc = Document.parse((DATA / "flow_template.md").read_text())
    inserted = doc.insert_item("Actions", "- review the audit output — next: Dec 4")
    assert not _changed_outside(doc, inserted, "Actions")
    assert inserted.find_item("Actions", "review the audit").kind == "list"
    updated = doc.update_item("Actions", "write gate", "- ✓ write gate — seen: Nov 30")
    assert not _changed_outside(doc, updated, "Actions")
    assert "- ✓ write gate — seen: Nov 30\n" in updated.text and "next: Dec 1" not in updated.text
    removed = doc.remove_item("Actions", "signing support")
    assert not _changed_outside(doc, removed, "Actions") and "signing support" not in removed.text
    with pytest.raises(Exception, match="no item"):
        doc.remove_item("Actions", "nothing like this")


def test_move_line_between_sections():
    doc = Document.parse((DATA / "flow_template.md").read_text())
    line = next(i for i, ln in enumerate(doc.lines) if ln.startswith("! small_functions"))
    moved = doc.move_line(line, "Proven")
    assert "small_functions" not in moved.section_text("Developing")
    assert "! small_functions" in moved.section_text("Proven")
    untouched = [s for s in ("State", "Top of Mind", "Recent", "Foundation", "Partnership")]
    for name in untouched:
        assert moved.section_text(name) == doc.section_text(name)


# ------------------------------------------------------------ piecewise parse
# Documents are parsed a piece at a time (cut before lines where the block state starts afresh) and the
# pieces remembered; the answer must be markdown-it's on the whole text, whatever the fences and indents.
TRICKY_LINES = ["## A", "## B |x", "   ## C", "    ## indented", "\t## tab", " \t## mixed", "##", "## ", "###",
                "### sub", "#### deep", "# comment", "```", "```py", "``` a`b", "````", "~~~", "~~~ x", "   ```",
                "    ```", "text", "more text", "", "   ", "\t", "- item", "  continued", "<!-- c -->", "> ## q",
                "!! p: x | 2x [evidence: ep-1]", "```\u00a0", "\u00a0## nbsp", "##\tx", "\f## ff", "`` ## x"]


def _whole_parse(source: str) -> list[tuple[int, str]]:
    from flowgit.continuity.document import _parser

    return [(tok.map[0], tok.tag) for tok in _parser().parse(source)
            if tok.type == "heading_open" and tok.map and tok.tag in ("h2", "h3")]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TRICKY_LINES), max_size=60), st.booleans())
def test_piecewise_headings_equal_a_whole_document_parse(lines, trailing_newline):
    from flowgit.continuity.document import _headings

    source = "\n".join(lines) + ("\n" if trailing_newline else "")
    assert list(_headings(source)) == _whole_parse(source)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(TRICKY_LINES), min_size=1, max_size=40), st.integers(0, 39),
       st.sampled_from(TRICKY_LINES))
def test_piecewise_headings_after_an_edit_equal_a_fresh_parse(lines, at, replacement):
    """Remembered pieces of one version never leak into the next version's answer."""
    from flowgit.continuity.document import _headings

    before = "\n".join(lines) + "\n"
    _headings(before)
    edited = list(lines)
    edited[at % len(edited)] = replacement
    after = "\n".join(edited) + "\n"
    assert list(_headings(after)) == _whole_parse(after)


def test_a_long_fence_hides_its_headings_and_costs_no_quadratic_reparse():
    from flowgit.continuity.document import _headings

    body = "\n".join(["```"] + [f"## inside {i}" for i in range(3000)] + ["```", "## after", "### sub"]) + "\n"
    source = "## Before\n" + body
    assert list(_headings(source)) == _whole_parse(source) == [(0, "h2"), (3003, "h2"), (3004, "h3")]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TRICKY_LINES + ["##x", "# ##", "  ###", "a ## b", "###  ## c"]), max_size=40))
def test_heading_candidates_are_found_as_the_expression_finds_them(lines):
    from flowgit.continuity.document import H2_CANDIDATE_RE, _h2_starts

    source = "\n".join(lines)
    assert _h2_starts(source) == [m.start() + 1 for m in H2_CANDIDATE_RE.finditer(source)]


# --- the items of an edited body, derived from the body it edits, equal a fresh reading
ITEM_LINES = ["! p: q | 1x", "!! r: s | 2x (C) [evidence: ep-1, ep-2]", "- a list item", "  - nested item",
              "   continued text", "plain prose", "more prose", "", "   ", "# comment", "{", "}", "<activation>",
              "-> a flow", "[decided(rationale: \"x\", on: \"Nov 30\")] d", "1. numbered", "\tindented", "✓ done",
              "* star item", "      deep continuation", "```", "~~~"]


def _fresh_items(body):
    from flowgit.continuity.document import SectionFacts

    return SectionFacts(body).items


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(ITEM_LINES), max_size=30), st.integers(0, 30), st.integers(0, 4),
       st.lists(st.sampled_from(ITEM_LINES), max_size=4))
def test_items_derived_from_the_edited_body_equal_a_fresh_reading(lines, at, cut, inserted):
    from flowgit.continuity.document import SectionFacts

    old = tuple(line + "\n" for line in lines)
    at = min(at, len(old))
    new = old[:at] + tuple(line + "\n" for line in inserted) + old[at + cut:]
    before = SectionFacts(old)
    before.items  # the old body was read first, as when it was the previous change's new side
    def value(text, kind):
        return f"{kind}:{text.upper()}"

    before.per_item("upper", value)
    after = SectionFacts(new)
    after.items_after(before)
    fresh = _fresh_items(new)
    assert after.per_item("upper", value) == tuple(value(i.text, i.kind) for i in fresh)
    assert [after.item(k) for k in range(len(fresh))] == list(fresh)
    assert after.items == fresh


def test_facts_shared_by_one_body_in_two_documents_give_each_its_own_places():
    """Section facts are remembered by the body's lines alone: the same body at another line, under another
    heading, yields patterns and items at that document's lines and section, never the first one's."""
    from flowgit.continuity.patterns import document_patterns

    body = "! shared_one: a pattern | 1x\n- an item\n"
    first = Document.parse("## Developing Knowledge\n" + body)
    second = Document.parse("## Current State\nnow\n\n## Notes\nx\n\n## Proven Knowledge\n" + body)
    one, two = document_patterns(first), document_patterns(second)
    assert [(at.line, at.section) for at in one] == [(1, "Developing Knowledge")]
    assert [(at.line, at.section) for at in two] == [(7, "Proven Knowledge")]
    assert first.facts(first.sections[0]) is second.facts(second.sections[-1])  # one memo, two placements
    assert [(i.start, i.text) for i in second.items("Proven")] == [(7, "! shared_one: a pattern | 1x"),
                                                                  (8, "- an item")]
    assert [(i.start, i.text) for i in first.items("Developing")] == [(1, "! shared_one: a pattern | 1x"),
                                                                    (2, "- an item")]


def test_a_body_placed_at_many_lines_gives_each_document_its_own():
    """Patterns placed at a body's lines are remembered for a couple of placements only, and always under the
    line and label they were placed at: the same body moving down a file, or changing section, never yields
    another version's lines."""
    from flowgit.continuity.patterns import document_patterns

    body = "! moving: a pattern | 1x\n!! other: b | 2x (C) [evidence: ep-1, ep-2]\n"
    for pad in (0, 3, 1, 3, 0, 5):
        for heading in ("Developing Knowledge", "Proven Knowledge"):
            doc = Document.parse("## Current State\n" + "x\n" * pad + f"## {heading}\n" + body)
            assert [(at.line, at.section, at.pattern.name) for at in document_patterns(doc)] == [
                (pad + 2, heading, "moving"), (pad + 3, heading, "other")]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["## A", "### b", "<activation>", "</activation>", "<reference>", "</reference>",
                                 "  <knowledge>  ", "</knowledge>", "x < y", "<b>", "", "   ## C", "\t## no",
                                 "</reference> x", "<", "#"]), max_size=30), st.booleans())
def test_each_heading_wrapper_is_the_full_line_walks_answer(lines, crlf):
    """Wrappers are read from the lines holding `<` only; every section's wrapper equals the walk over all
    lines."""
    from flowgit.continuity.document import _wrapper_stack

    doc = Document.parse(("\r\n" if crlf else "\n").join(lines) + "\n")
    walked = _wrapper_stack(doc.lines)
    assert [s.wrapper for s in doc.sections] == [walked.get(s.heading) for s in doc.sections]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(piece, st.sampled_from(["\n", "\r\n"])), max_size=30))
def test_line_set_is_every_line_without_its_ending(pieces):
    """Built from the sections' remembered bodies plus the lines around them, it is still every line."""
    doc = Document.parse("".join(text + end for text, end in pieces))
    assert doc.line_set == frozenset(ln.rstrip("\r\n") for ln in doc.lines)
