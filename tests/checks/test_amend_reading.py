"""Whether a `git commit` amends is read from its command line as git parses it, not word by word."""

from __future__ import annotations

import os

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
    ("/usr/lib/git-core/git-commit --amend --no-edit", True),
    ("/usr/lib/git-core/git-commit -m --amend", False),
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


@pytest.mark.parametrize("how", ["own-name", "link-named-g", "copy-named-g"])
def test_an_amend_run_by_the_commands_own_name_is_judged_against_the_parent(run, repo, how):
    """`$(git --exec-path)/git-commit --amend` runs as a process named git-commit, and git behind a link or
    a copy named `g` as one named g: turning a 1x -> 2x commit into 1x -> 3x by amending it is still a jump
    (G201), whatever git is called."""
    import shutil
    import subprocess

    from tests.checks.gate_fixtures import DEVELOPING, E_RETRY, base_text, developing_lines

    committed_base(repo)
    assert run(repo, "install-hook").code == 0
    (repo / "CONTINUITY.md").write_text(grounded_text())
    git(repo, "add", "-A")
    assert commit(repo, "raise p01").returncode == 0
    lines = developing_lines().splitlines()
    ids = ", ".join(e.id for e in E_RETRY[:3])
    proven = f"!! p01: {DEVELOPING[0][1]} | 3x (RELIABILITY — 2026-11-30) [evidence: {ids}]\n"
    (repo / "CONTINUITY.md").write_text(base_text(developing="\n".join(lines[1:]), proven_extra=proven))
    git(repo, "add", "-A")
    exec_path = git(repo, "--exec-path").strip()
    real_git = shutil.which("git")
    if how == "own-name":
        argv = [f"{exec_path}/git-commit", "--amend", "--no-edit"]
    else:
        renamed = repo.parent / "g"
        if how == "link-named-g":
            renamed.symlink_to(real_git)
        else:
            shutil.copy2(real_git, renamed)
        argv = [str(renamed), "commit", "--amend", "--no-edit"]
    res = subprocess.run(argv, cwd=repo, capture_output=True, text=True,
                         env={**os.environ, "GIT_EXEC_PATH": exec_path})  # (a copy finds git's commands)
    assert res.returncode != 0 and "G201" in res.stdout + res.stderr
