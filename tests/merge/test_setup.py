"""`flowgit init`'s `.gitattributes` lines: written once, found again however the path is written."""

from __future__ import annotations

import subprocess

import pytest

from flowgit.merge.setup import ensure_attributes
from tests.conftest import git


@pytest.mark.parametrize("path", ["CONTINUITY.md", "team notes/our memory.md", ".flow/episodes.jsonl", "mem[1].md",
                                  "team notes/mem*?[2].md", "#notes/memory.md", "back\\slash.md"])
def test_a_second_run_finds_its_own_line_and_changes_nothing(repo, path):
    """A path with a space is written quoted; the line was not recognised again, so every `flowgit init` (a
    second clone's set-up step) appended it once more and left the clone dirty."""
    assert ensure_attributes(repo, [path]) == [path]
    first = (repo / ".gitattributes").read_bytes()
    assert ensure_attributes(repo, [path]) == []
    assert (repo / ".gitattributes").read_bytes() == first
    said = git(repo, "check-attr", "merge", "--", path)
    assert said.strip().endswith("merge: flowgit"), said


def test_a_name_with_glob_characters_names_that_file_alone(repo):
    """`mem[1].md` as a pattern would name `mem1.md`: init escapes git's glob characters, so the driver is the
    memory's and the other file merges as git merges it."""
    assert ensure_attributes(repo, ["mem[1].md"]) == ["mem[1].md"]
    assert (repo / ".gitattributes").read_text() == "/mem\\[1].md merge=flowgit\n"
    said = git(repo, "check-attr", "merge", "--", "mem[1].md", "mem1.md")
    assert "mem[1].md: merge: flowgit" in said and "mem1.md: merge: unspecified" in said
    (repo / ".gitattributes").write_text("/mem[1].md merge=flowgit\n")  # as an older init wrote it: replaced
    assert ensure_attributes(repo, ["mem[1].md"]) == ["mem[1].md"]
    assert (repo / ".gitattributes").read_text() == "/mem\\[1].md merge=flowgit\n"


def test_an_old_union_line_for_a_quoted_path_is_replaced_not_kept_beside(repo):
    (repo / ".gitattributes").write_text('*.png binary\n"team notes/our memory.md" merge=union\n')
    assert ensure_attributes(repo, ["team notes/our memory.md"]) == ["team notes/our memory.md"]
    assert (repo / ".gitattributes").read_text() == '*.png binary\n"team notes/our memory.md" merge=flowgit\n'


def test_an_older_unanchored_line_is_anchored_in_place(repo):
    """`CONTINUITY.md merge=flowgit` (as an older init wrote it) matches that name in every directory: it is
    replaced by the anchored line, the other lines kept."""
    (repo / ".gitattributes").write_text("*.png binary\nCONTINUITY.md merge=flowgit\n")
    assert ensure_attributes(repo, ["CONTINUITY.md"]) == ["CONTINUITY.md"]
    assert (repo / ".gitattributes").read_text() == "*.png binary\n/CONTINUITY.md merge=flowgit\n"
    (repo / "pkg").mkdir()
    said = git(repo, "check-attr", "merge", "--", "CONTINUITY.md", "pkg/CONTINUITY.md")
    assert "CONTINUITY.md: merge: flowgit" in said and "pkg/CONTINUITY.md: merge: unspecified" in said


def _a_package_note_changed_two_ways(repo) -> subprocess.CompletedProcess:
    (repo / "pkg").mkdir()
    (repo / "pkg" / "CONTINUITY.md").write_text("# Package notes\n\n## Usage\nCall the API with timeout 5s.\n")
    git(repo, "add", "pkg")
    git(repo, "commit", "-qm", "package notes", "--no-verify")
    git(repo, "checkout", "-qb", "side")
    (repo / "pkg" / "CONTINUITY.md").write_text("# Package notes\n\n## Usage\nCall the API with timeout 10s.\n")
    git(repo, "commit", "-qam", "side: 10s", "--no-verify")
    git(repo, "checkout", "-q", "main")
    (repo / "pkg" / "CONTINUITY.md").write_text("# Package notes\n\n## Usage\nCall the API with timeout 2s.\n")
    git(repo, "commit", "-qam", "main: 2s", "--no-verify")
    return subprocess.run(["git", "merge", "--no-edit", "side"], cwd=repo, capture_output=True, text=True)


@pytest.mark.parametrize("attributes", ["as init writes them", "an older unanchored line"])
def test_another_file_of_the_memorys_name_merges_as_git_merges_it(team_repo, attributes):
    """A package's own `pkg/CONTINUITY.md` is not the memory: a line both sides changed is git's conflict.
    init's anchored line never sends it to the driver; an older unanchored line does, and the driver then merges
    it as text (before, it merged it by meaning: both lines kept, no conflict)."""
    if attributes != "as init writes them":
        text = (team_repo / ".gitattributes").read_text()
        (team_repo / ".gitattributes").write_text(text.replace("/CONTINUITY.md", "CONTINUITY.md"))
        git(team_repo, "commit", "-qam", "the old line", "--no-verify")
    merged = _a_package_note_changed_two_ways(team_repo)
    assert merged.returncode != 0, merged.stdout + merged.stderr
    assert "CONFLICT" in merged.stdout
    text = (team_repo / "pkg" / "CONTINUITY.md").read_text()
    assert "<<<<<<<" in text and "timeout 2s" in text and "timeout 10s" in text
    if attributes != "as init writes them":
        assert "not the continuity file or the store" in merged.stderr
