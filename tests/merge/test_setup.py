"""`flowgit init`'s `.gitattributes` lines: written once, found again however the path is written."""

from __future__ import annotations

import pytest

from flowgit.merge.setup import ensure_attributes
from tests.conftest import git


@pytest.mark.parametrize("path", ["CONTINUITY.md", "team notes/our memory.md", ".flow/episodes.jsonl"])
def test_a_second_run_finds_its_own_line_and_changes_nothing(repo, path):
    """A path with a space is written quoted; the line was not recognised again, so every `flowgit init` (a
    second clone's set-up step) appended it once more and left the clone dirty."""
    assert ensure_attributes(repo, [path]) == [path]
    first = (repo / ".gitattributes").read_bytes()
    assert ensure_attributes(repo, [path]) == []
    assert (repo / ".gitattributes").read_bytes() == first
    said = git(repo, "check-attr", "merge", "--", path)
    assert said.strip().endswith("merge: flowgit"), said


def test_an_old_union_line_for_a_quoted_path_is_replaced_not_kept_beside(repo):
    (repo / ".gitattributes").write_text('*.png binary\n"team notes/our memory.md" merge=union\n')
    assert ensure_attributes(repo, ["team notes/our memory.md"]) == ["team notes/our memory.md"]
    assert (repo / ".gitattributes").read_text() == '*.png binary\n"team notes/our memory.md" merge=flowgit\n'
