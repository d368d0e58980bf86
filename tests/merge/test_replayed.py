"""Which tip a rebase made, read from the branch's reflog (real git, a real rebase)."""

from __future__ import annotations

from pathlib import Path

from flowgit.merge.replayed import rebased_from
from tests.conftest import git


def _commit(repo: Path, name: str) -> str:
    (repo / name).write_text(name + "\n")
    git(repo, "add", name)
    git(repo, "commit", "-qm", name)
    return git(repo, "rev-parse", "HEAD").strip()


def test_the_tip_a_rebase_made_names_where_the_branch_stood_and_any_later_move_forgets_it(repo):
    git(repo, "config", "user.name", "t")
    git(repo, "config", "user.email", "t@example.com")
    _commit(repo, "base")
    assert rebased_from(repo) is None  # a commit made the tip
    git(repo, "checkout", "-q", "-b", "side")
    _commit(repo, "theirs")
    git(repo, "checkout", "-q", "-")
    mine = _commit(repo, "mine")
    git(repo, "rebase", "-q", "side")
    assert rebased_from(repo) == mine
    _commit(repo, "after")  # anything since: the advice would undo it too, so none is given
    assert rebased_from(repo) is None
    git(repo, "checkout", "-q", "--detach")
    assert rebased_from(repo) is None
