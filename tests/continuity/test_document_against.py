"""A version read as an edit of the version before it is the document a fresh parse gives.

The history audit reads each version against the one it read last
(:meth:`Document.parse_against`, through ``document_from_bytes``): shared
lines, headings, tags and section facts are taken from the earlier version.
A wrong reuse would let a gate judge text that is not the committed text, so
every tricky edit here is held to a fresh parse of the whole file, in every
reading a rule can ask for.
"""

from __future__ import annotations

from collections import OrderedDict
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowgit.continuity.document import Document
from flowgit.continuity.patterns import document_identity_map, document_patterns
from flowgit.repo import document_from_bytes, reusing_documents
from tests.support.edits import edit_lists, edited_versions


class _Cfg:
    def __init__(self, aliases=None):
        self.aliases = aliases or {}


def assert_same_reading(doc: Document, fresh: Document) -> None:
    """Every reading the rules make of a document: lines, sections, facts, patterns, line set."""
    assert doc == fresh
    assert doc.text == fresh.text
    assert doc._marks == fresh._marks
    assert doc.spans() == fresh.spans()
    assert doc.line_set == fresh.line_set
    for mine, theirs in zip(doc.sections, fresh.sections):
        a, b = doc.facts(mine), fresh.facts(theirs)
        assert a.body == b.body
        assert a.content == b.content
        assert a.patterns == b.patterns
        assert [p.raw for _, p in a.patterns] == [p.raw for _, p in b.patterns]
        assert a.items == b.items
        assert doc.items(mine) == fresh.items(theirs)
        assert list(doc.content_indices(mine)) == list(fresh.content_indices(theirs))
    assert document_patterns(doc) == document_patterns(fresh)
    assert [(k, v) for k, v in document_identity_map(doc).items()] == \
        [(k, v) for k, v in document_identity_map(fresh).items()]


@contextmanager
def fresh_memos():
    """The reference reading: section facts built from scratch, none found again from another document."""
    from flowgit.continuity import document

    saved = document._FACTS
    document._FACTS = OrderedDict()
    try:
        yield
    finally:
        document._FACTS = saved


def fresh_reading(text: str, aliases=None) -> Document:
    with fresh_memos():
        doc = Document.parse(text, aliases=aliases or {}, path="C")
        document_identity_map(doc)
        doc.line_set
        for section in doc.sections:
            doc.facts(section).items
    return doc


def read_in_order(versions: list[str], aliases=None) -> list[Document]:
    """Each version as the history audit reads it: bytes, each against the one read before, each read
    whole (its patterns, line set, items) before the next, as a judgement reads it."""
    cfg = _Cfg(aliases)
    docs = []
    with reusing_documents():
        for text in versions:
            doc = document_from_bytes(cfg, text.encode("utf-8"), "C")
            document_identity_map(doc)
            doc.line_set
            for section in doc.sections:
                doc.facts(section).items
            docs.append(doc)
    return docs


def check_versions(versions: list[str], aliases=None) -> None:
    for doc, text in zip(read_in_order(versions, aliases), versions):
        assert_same_reading(doc, fresh_reading(text, aliases))


BASE = """# Continuity
<activation>
## Current State
Focus: wrap 1.

## Top of Mind
- first thing
</activation>

## Developing Knowledge
! retry_budget: cap retries | 1x
! backoff: back off | 1x

## Proven Knowledge
!! cache_key: key by tenant | 2x (PERF) [evidence: ep-1, ep-2]
- fact 1
- fact 2
  continued
### Sub
- fact 3

## Foundation
Write the episode first.
"""


def _edit(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


CASES = {
    "renamed section": _edit(BASE, "## Developing Knowledge", "## Emerging Knowledge"),
    "renamed to an alias": _edit(BASE, "## Top of Mind", "## Now"),
    "moved section": _edit(BASE, "## Foundation\nWrite the episode first.\n", "").replace(
        "## Current State", "## Foundation\nWrite the episode first.\n\n## Current State"),
    "duplicated heading": _edit(BASE, "## Foundation", "## Proven Knowledge\n!! cache_key: again | 2x\n\n## Foundation"),
    "line moved between sections": _edit(_edit(BASE, "! backoff: back off | 1x\n", ""),
                                         "- fact 1\n", "- fact 1\n! backoff: back off | 1x\n"),
    "pattern renamed": _edit(BASE, "cache_key", "cache_keys"),
    "duplicate pattern name appears first": _edit(BASE, "! retry_budget", "! cache_key: shadow | 1x\n! retry_budget"),
    "fence opened": _edit(BASE, "- fact 2\n", "```\n- fact 2\n## not a heading\n"),
    "fence-like run mid-line": _edit(BASE, "- fact 2\n", "- fact ``` 2\n"),
    "crlf line": _edit(BASE, "- fact 1\n", "- fact 1\r\n"),
    "lone cr joins a heading": _edit(BASE, "- fact 2\n", "- fact 2\r## Hidden\n"),
    "no final newline": BASE.rstrip("\n"),
    "unicode": _edit(BASE, "Focus: wrap 1.", "Focus: ünïcødé — wrap 2 \u2028 ok"),
    "cyrillic look-alike name": _edit(BASE, "! backoff", "! bаckoff"),
    "bom added": "\ufeff" + BASE,
    "bom heading": "\ufeff## Current State\n" + BASE,
    "wrapper closed earlier": _edit(_edit(BASE, "</activation>\n", ""), "## Top of Mind", "</activation>\n## Top of Mind"),
    "wrapper removed": _edit(BASE, "<activation>\n", ""),
    "subsection added": _edit(BASE, "- fact 1\n", "- fact 1\n### Early\n"),
    "heading demoted": _edit(BASE, "## Foundation", "### Foundation"),
    "heading indented to code": _edit(BASE, "## Foundation", "    ## Foundation"),
    "everything deleted": "",
    "blank lines only": "\n\n\n",
    "only the first line changed": _edit(BASE, "# Continuity", "# Continuity!"),
    "only the last line changed": _edit(BASE, "Write the episode first.\n", "Write the episode first!\n"),
    "trailing blank lines grow": BASE + "\n\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_edit_read_against_its_parent_equals_a_fresh_parse(name):
    edited = CASES[name]
    check_versions([BASE, edited])
    check_versions([edited, BASE])  # and back again
    check_versions([BASE, edited, edited + "- appended\n", BASE])


def test_crlf_file_edited_in_the_middle():
    crlf = BASE.replace("\n", "\r\n")
    check_versions([crlf, crlf.replace("- fact 2", "- fact two"), crlf.replace("\r\n", "\n")])


def test_aliases_decide_the_sections_of_a_version_read_against_another():
    aliases = {"Current State": ("Where We Are",)}
    renamed = _edit(BASE, "## Current State", "## Where We Are")
    check_versions([BASE, renamed], aliases)
    # the same bytes under other aliases are read afresh, not taken from the kept version
    with reusing_documents():
        plain = document_from_bytes(_Cfg(), renamed.encode(), "C")
        aliased = document_from_bytes(_Cfg(aliases), renamed.encode(), "C")
    assert plain.sections[0].canonical is None
    assert aliased.sections[0].canonical == "Current State"


def test_shared_lines_are_the_earlier_versions_own_objects():
    edited = _edit(BASE, "- fact 2\n", "- fact two\n")
    first, second = read_in_order([BASE, edited])
    assert all(a is b for a, b in zip(first.lines[:5], second.lines[:5]))
    assert first.lines[-1] is second.lines[-1]
    assert second._base is first and first._base is None
    # the changed body's facts were derived from the earlier body's, the unchanged ones are the same objects
    proven = second.facts(second.get("Proven Knowledge"))
    assert proven._shared is not None and proven._shared[0] is first.facts(first.get("Proven Knowledge"))
    assert second.facts(second.get("Foundation")) is first.facts(first.get("Foundation"))


def test_invalid_utf8_in_the_changed_lines_is_refused_as_a_fresh_read_refuses_it():
    from flowgit.errors import FlowgitError

    with reusing_documents():
        document_from_bytes(_Cfg(), BASE.encode(), "C")
        with pytest.raises(FlowgitError, match="not valid UTF-8") as caught:
            document_from_bytes(_Cfg(), BASE.encode().replace(b"fact 2", b"fact \xff"), "C")
    assert caught.value.line == BASE.splitlines().index("- fact 2") + 1


def test_a_walk_keeps_no_chain_of_old_versions():
    versions = [BASE + "".join(f"- extra {j}\n" for j in range(i)) for i in range(6)]
    docs = read_in_order(versions)
    assert all(doc._base is None for doc in docs[:-1])


LINES = ["## Current State", "## Proven Knowledge", "## Proven Knowledge |x", "## Recent", "### Sub", "##",
         "   ## Indented", "    ## code", "# comment", "<activation>", "</activation>", "```", "~~~", "- item",
         "  continued", "", "text é", "! retry: a | 1x", "!! retry: b | 2x [evidence: ep-1]", "! other: c | 1x",
         "!! pat: d | 3x (CAT — 2026-01-01) [evidence: ep-2]", "{", "}", "\u00a0## nbsp", "line\r", "✓ done"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=40), edit_lists(st.sampled_from(LINES), 40),
       st.booleans(), st.booleans())
def test_a_chain_of_random_edits_reads_as_fresh_parses(lines, edits, final_newline, crlf):
    nl = "\r\n" if crlf else "\n"

    def text(ls):
        return nl.join(ls) + (nl if final_newline and ls else "")

    check_versions(edited_versions(lines, edits, text))
