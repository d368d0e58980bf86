"""Size rules' readings that a history's versions take from the version before them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from flowgit.checks.size import holds_merge_notes
from flowgit.merge.notes import NOTE_ABSORB, NOTE_HEAD, QUOTE
from flowgit.repo import document_from_bytes, reusing_documents
from tests.support.edits import edit_lists, edited_versions

LINES = ["## Recent Context\n", "The migration went on.\n", f"{NOTE_HEAD} another wrap also rewrote it\n",
         f"{NOTE_ABSORB}\n", f"{QUOTE}Step 1 moved the client.\n", "# a plain comment\n", "text # | not a note\n",
         "\n", "## Current State\n", "Focus: the migration.\n"]


class _Cfg:
    aliases: dict = {}


def _fresh(text: str) -> bool:
    return any(line.startswith((NOTE_HEAD, NOTE_ABSORB, QUOTE)) for line in text.splitlines(keepends=True))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(LINES), min_size=1, max_size=10), edit_lists(st.sampled_from(LINES), 12))
def test_each_version_read_against_the_last_holds_merge_notes_exactly_when_a_fresh_read_finds_them(lines, edits):
    """The answer is remembered per document and, for a version read as an edit of one without notes, taken
    from the lines between what the two share: a history read in order must give each version's own answer."""
    texts = edited_versions(["## Current State\n", *lines], edits, "".join)
    with reusing_documents():
        for text in texts:
            doc = document_from_bytes(_Cfg(), text.encode("utf-8"), "C")
            assert holds_merge_notes(doc) == _fresh(text), text


def test_a_note_written_into_a_version_without_any_is_found():
    base = "## Current State\nFocus: a.\n\n## Recent Context\nThe migration went on.\n"
    with reusing_documents():
        first = document_from_bytes(_Cfg(), base.encode(), "C")
        assert holds_merge_notes(first) is False
        edited = base.replace("went on.\n", f"went on.\n{QUOTE}the other wrap's line\n")
        second = document_from_bytes(_Cfg(), edited.encode(), "C")
        assert second.earlier("size.merge_notes") is not None  # (read as an edit: only the middle is looked at)
        assert holds_merge_notes(second) is True
