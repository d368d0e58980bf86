"""flowgit sync passes on git's whole message (not its last line) when a fetch or a push fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowgit.git import MAX_SAID_LINES, git_said
from tests.conftest import git, tree_digest


@pytest.fixture
def wrapped(repo: Path, run) -> Path:
    """A repository set up by `flowgit init --commit`, with nothing uncommitted."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    assert run(repo, "init", "--commit", "--no-hooks").code == 0
    return repo


def _state(repo: Path) -> tuple[str, str, dict[str, str]]:
    return git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain"), tree_digest(repo)


def test_a_missing_remote_is_named_with_gits_own_words(wrapped: Path, tmp_path: Path, run) -> None:
    missing = tmp_path / "does-not-exist.git"
    git(wrapped, "remote", "add", "origin", str(missing))
    before = _state(wrapped)
    res = run(wrapped, "sync")
    assert res.code == 1 and res.out == ""
    assert res.err.splitlines() == [
        "flowgit: sync failed: git fetch origin failed:",
        f"    fatal: '{missing}' does not appear to be a git repository",
        "    fatal: Could not read from remote repository.",
        "    Please make sure you have the correct access rights",
        "    and the repository exists.",
        "  fix: check the remote and the network, then sync again"]
    assert _state(wrapped) == before and not missing.exists()
    res = run(wrapped, "sync", "--json")
    data = json.loads(res.out)
    assert res.code == 1 and data["ok"] is False
    error = data["error"]
    assert set(error) == {"message", "fix", "file", "line", "option"}  # the one error shape every command gives
    assert "does not appear to be a git repository" in error["message"]
    assert "and the repository exists." in error["message"] and error["fix"] == "check the remote and the network, then sync again"


def test_a_push_a_server_hook_refuses_keeps_the_servers_reason(wrapped: Path, tmp_path: Path, run) -> None:
    bare = tmp_path / "b.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    hook = bare / "hooks" / "pre-receive"
    hook.write_text('#!/bin/sh\necho "policy says no: tickets must be linked" >&2\nexit 1\n')
    hook.chmod(0o755)
    git(wrapped, "remote", "add", "origin", str(bare))
    before = _state(wrapped)
    res = run(wrapped, "sync")
    assert res.code == 1 and res.out == ""
    assert res.err.splitlines() == [
        "flowgit: sync failed: git push failed:",
        "    remote: policy says no: tickets must be linked",
        f"    error: failed to push some refs to '{bare}'",
        "    ! refs/heads/main:refs/heads/main [remote rejected] (pre-receive hook declined)",
        "  fix: nothing was pushed; the branch holds the integrated commits: fix and sync again"]
    assert _state(wrapped) == before
    assert git(bare, "for-each-ref") == ""  # nothing reached the server
    data = json.loads(run(wrapped, "sync", "--json").out)
    assert "remote: policy says no: tickets must be linked" in data["error"]["message"]
    assert "[remote rejected] (pre-receive hook declined)" in data["error"]["message"]


def test_what_git_said_drops_blank_lines_and_padding_and_is_bounded() -> None:
    assert git_said("remote: why        \n\n  \nerror: failed\n") == "    remote: why\n    error: failed"
    assert git_said("", "") == "    (git printed no message)"
    many = "".join(f"line {i}\n" for i in range(MAX_SAID_LINES + 5))
    said = git_said(many).splitlines()
    assert said[0] == "    line 0" and said[MAX_SAID_LINES - 1] == f"    line {MAX_SAID_LINES - 1}"
    assert said[-1] == "    … and 5 more line(s)" and len(said) == MAX_SAID_LINES + 1
    assert len(git_said("x" * 100_000)) < 2100
