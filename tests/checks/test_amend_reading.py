"""Whether a `git commit` amends is read from its command line as git parses it, not word by word."""

from __future__ import annotations

import pytest

from flowgit.checks.staged import amends
from tests.checks.gate_fixtures import committed_base
from tests.commands.test_hooks import commit, grounded_text
from tests.conftest import git


@pytest.mark.parametrize("argv,amending", [
    ("git commit --amend", True),
    ("git commit --am", True),
    ("git commit -q --amend -m msg", True),
    ("git -c core.editor=true commit --amend", True),
    ("git -C repo commit --amend --no-edit", True),
    ("git commit -m --amend", False),
    ("git commit -m --am", False),
    ("git commit --message --amend", False),
    ("git commit --mess --amend", False),
    ("git commit --message=--amend", False),
    ("git commit -am --amend", False),
    ("git commit -qm --amend", False),
    ("git commit -F --amend", False),
    ("git commit -- --amend", False),
    ("git commit -mtext --amend", True),
    ("git commit --author --amend", False),
    ("git ci --amend", True),  # an alias: its options cannot be told apart, the stricter reading
    ("git ci -m x", False),
])
def test_amend_is_read_as_git_parses_the_command_line(argv, amending):
    assert amends([a.encode() for a in argv.split(" ")]) is amending


def test_a_new_commit_whose_message_is_the_word_amend_is_judged_against_head(run, repo):
    """`git commit -m --amend` makes a new commit: judged against HEAD's parent, a legitimate raise read as
    a 1x -> 2x jump of a pattern the parent did not hold (G204)."""
    committed_base(repo)
    assert run(repo, "install-hook").code == 0
    (repo / "CONTINUITY.md").write_text(grounded_text())
    git(repo, "add", "-A")
    res = commit(repo, "--amend")
    assert res.returncode == 0, res.stdout + res.stderr
    assert git(repo, "log", "-1", "--format=%s").strip() == "--amend"
