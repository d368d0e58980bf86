"""The store read early while the gate starts: used only for the very file judged, and still proved."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from flowgit import config, storeread
from tests.conftest import git


def test_the_early_path_is_the_configured_default() -> None:
    assert storeread.DEFAULT_STORE == config.DEFAULT_STORE
    assert storeread.JUDGED == (config.DEFAULT_CONTINUITY, config.DEFAULT_STORE, *config.CONFIG_FILES)


def test_nothing_is_read_early_when_nothing_judged_is_staged(repo: Path) -> None:
    (repo / ".flow").mkdir()
    (repo / ".flow" / "episodes.jsonl").write_text('{"id": "x"}\n')
    (repo / "other.txt").write_text("a\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "other.txt").write_text("b\n")
    git(repo, "add", "-A")
    storeread.start(str(repo))
    assert storeread.take(repo / ".flow" / "episodes.jsonl") is None  # an unrelated commit
    (repo / ".flow" / "episodes.jsonl").write_text('{"id": "x"}\n{"id": "y"}\n')
    git(repo, "add", "-A")
    storeread.start(str(repo))
    assert storeread.take(repo / ".flow" / "episodes.jsonl").data.endswith(b'"y"}\n')


def test_a_reading_is_taken_only_for_the_same_file(tmp_path: Path) -> None:
    store = tmp_path / ".flow" / "episodes.jsonl"
    store.parent.mkdir()
    store.write_bytes(b'{"id": "x"}\n')
    storeread.start(str(tmp_path))
    other = tmp_path / "other.jsonl"
    other.write_bytes(b'{"id": "x"}\n')
    assert storeread.take(other) is None  # same bytes, another file: not taken
    storeread.start(str(tmp_path))
    reading = storeread.take(store)
    assert reading is not None and reading.data == b'{"id": "x"}\n'
    assert reading.wait().sha1 == subprocess.run(["git", "hash-object", str(store)], capture_output=True,
                                          text=True, check=True).stdout.strip()
    assert storeread.take(store) is None  # taken once


def test_a_fifo_or_a_directory_at_the_default_path_is_never_waited_for(tmp_path: Path) -> None:
    (tmp_path / ".flow").mkdir()
    os.mkfifo(tmp_path / ".flow" / "episodes.jsonl")
    storeread.start(str(tmp_path))
    assert storeread.take(tmp_path / ".flow" / "episodes.jsonl") is None


def test_an_early_reading_that_is_not_the_staged_blob_is_not_judged(repo: Path) -> None:
    """The working-tree store read at start-up differs from the index: the gate judges git's blob."""
    (repo / "CONTINUITY.md").write_text("## Current State\nnow\n")
    (repo / ".flow").mkdir()
    (repo / ".flow" / "episodes.jsonl").write_text("")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    staged = '{"id": "ep-000000000000", "type": "finding", "content": "x"}\n'
    (repo / ".flow" / "episodes.jsonl").write_text(staged)
    git(repo, "add", "-A")
    (repo / ".flow" / "episodes.jsonl").write_text(staged + "<<<<<<< HEAD\n")  # only in the working tree
    out = subprocess.run([sys.executable, "-m", "flowgit", "check", "--json"], cwd=repo, capture_output=True,
                         text=True)
    assert "G601" not in out.stdout, out.stdout  # the working tree's marker is not what git records
    (repo / ".flow" / "episodes.jsonl").write_text(staged + "<<<<<<< HEAD\n")
    git(repo, "add", "-A")
    (repo / ".flow" / "episodes.jsonl").write_text(staged)  # clean working tree, conflicted index
    out = subprocess.run([sys.executable, "-m", "flowgit", "check", "--json"], cwd=repo, capture_output=True,
                         text=True)
    assert "G601" in out.stdout, out.stdout
