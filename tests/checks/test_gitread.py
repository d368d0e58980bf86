"""The gate's git questions: the one batch process answers exactly as a process per question does."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from flowgit.checks.gitread import BatchReads, ProcessReads, Reads
from flowgit.checks.staged import staged_change
from tests.conftest import git

PATHS = ["CONTINUITY.md", "my notes.md", " lead.md", "dir", "missing.md", ".flow/episodes.jsonl", "link.md"]


def _repo(root: Path, *args: str) -> Path:
    root.mkdir()
    git(root, "init", "-q", *args)
    (root / "CONTINUITY.md").write_text("## Current State\nnow\n")
    (root / "my notes.md").write_text("spaces\n")
    (root / " lead.md").write_text("leading blank\n")
    (root / "dir").mkdir()
    (root / "dir" / "x.md").write_text("a tree, not a blob\n")
    (root / ".flow").mkdir()
    (root / ".flow" / "episodes.jsonl").write_bytes(b"")
    os.symlink("CONTINUITY.md", root / "link.md")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    (root / "CONTINUITY.md").write_text("## Current State\nlater\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "second")
    return root


def _answers(reads) -> tuple:
    head = reads.commit("HEAD")
    entries = reads.entries(head, PATHS)
    return (head, reads.commit("HEAD^"), reads.commit("HEAD^^"), reads.commit("nope"), entries,
            reads.specs([f"{head}:{p}" for p in PATHS] + ["HEAD^:CONTINUITY.md"]),
            reads.objects([entries.get(p, "") for p in PATHS] + ["0" * len(head)]))


@pytest.mark.parametrize("fmt", [(), ("--object-format=sha256",)])
def test_batch_and_process_answers_are_the_same(tmp_path: Path, fmt: tuple[str, ...]) -> None:
    root = _repo(tmp_path / "r", *fmt)
    batch = BatchReads(root)
    try:
        fast = _answers(batch)
    finally:
        batch.close()
    slow = _answers(ProcessReads(root))
    assert fast == slow
    head, parent, grandparent, nope, entries, specs, objects = fast
    assert parent and grandparent is None and nope is None
    assert "dir" not in entries and "missing.md" not in entries and entries[" lead.md"]
    assert specs[0] == b"## Current State\nlater\n" and specs[-1] == b"## Current State\nnow\n"
    assert specs[PATHS.index("dir")] is None and specs[PATHS.index("link.md")] == b"CONTINUITY.md"


def test_a_path_the_batch_cannot_be_asked_about_is_asked_one_process_each(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r")
    (root / "odd\nname.md").write_text("a line break in a name\n")
    (root / "trailing.md ").write_text("a blank at the end\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "odd names")
    with Reads(root) as reads:
        head = reads.commit("HEAD")
        got = reads.entries(head, ["odd\nname.md", "trailing.md ", "CONTINUITY.md"])
        assert reads._fast is None  # handed over, and stays handed over
    assert set(got) >= {"odd\nname.md", "trailing.md ", "CONTINUITY.md"}
    assert got == ProcessReads(root).entries(head, ["odd\nname.md", "trailing.md ", "CONTINUITY.md"])


def test_a_git_without_batch_command_still_gets_the_gate(tmp_path: Path, monkeypatch) -> None:
    """A git older than 2.36 refuses --batch-command: a wrapper that refuses it stands in for one."""
    root = _repo(tmp_path / "r")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    real = shutil.which("git")
    wrapper = bin_dir / "git"
    wrapper.write_text("#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = --batch-command ] && "
                       "{ echo \"error: unknown option\" >&2; exit 129; }; done\n"
                       f"exec '{real}' \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    (root / "CONTINUITY.md").write_text("## Current State\nstaged\n")
    git(root, "add", "CONTINUITY.md")
    expected = staged_change(root)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    with Reads(root) as reads:
        assert reads.commit("HEAD") == expected.base and reads._fast is None
    old = staged_change(root)
    assert (old.base, old.new.continuity, old.old.continuity, old.old.store_ref) == \
        (expected.base, expected.new.continuity, expected.old.continuity, expected.old.store_ref)
