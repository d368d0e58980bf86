"""A wrap refuses up front while git is in the middle of a rebase, merge, cherry-pick, revert or bisect."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import git
from tests.wrap.test_recovery import state
from tests.wrap.test_transaction import flowgit, write_plan
from tests.wrap.test_wrap import wrap_repo  # noqa: F401  (fixture)


def _commits(repo: Path) -> None:
    for text in ("a", "b"):
        (repo / "f.txt").write_text(text + "\n")
        git(repo, "add", "f.txt")
        git(repo, "commit", "-qm", text)


def _git_may_fail(repo: Path, *args: str) -> None:
    """A git command that stops on a conflict (exit 1) on purpose."""
    subprocess.run(["git", *args], cwd=repo, capture_output=True)


def rebase(repo: Path) -> None:
    """An interactive rebase stopped at an `edit`: HEAD is detached in the middle of it."""
    _commits(repo)
    subprocess.run(["git", "rebase", "-q", "-i", "HEAD~2"], cwd=repo, capture_output=True,
                   env={**os.environ, "GIT_SEQUENCE_EDITOR": "sed -i s/^pick/edit/"}, check=True)


def resolved_merge(repo: Path) -> None:
    """A conflicted merge whose conflict is resolved and staged: no unmerged entries, MERGE_HEAD still there."""
    _commits(repo)
    git(repo, "switch", "-q", "-c", "other", "HEAD~1")
    (repo / "f.txt").write_text("other\n")
    git(repo, "commit", "-qam", "other")
    git(repo, "switch", "-q", "main")
    _git_may_fail(repo, "merge", "other")
    (repo / "f.txt").write_text("resolved\n")
    git(repo, "add", "f.txt")


def cherry_pick(repo: Path) -> None:
    _commits(repo)
    git(repo, "switch", "-q", "-c", "other", "HEAD~1")
    (repo / "f.txt").write_text("other\n")
    git(repo, "commit", "-qam", "other")
    _git_may_fail(repo, "cherry-pick", "main")  # conflicts on f.txt
    (repo / "f.txt").write_text("resolved\n")
    git(repo, "add", "f.txt")


def revert(repo: Path) -> None:
    _commits(repo)
    (repo / "f.txt").write_text("c\n")
    git(repo, "commit", "-qam", "c")
    _git_may_fail(repo, "revert", "--no-edit", "HEAD~1")  # conflicts on f.txt
    (repo / "f.txt").write_text("resolved\n")
    git(repo, "add", "f.txt")


def bisect(repo: Path) -> None:
    _commits(repo)
    git(repo, "bisect", "start", "HEAD", "HEAD~2")


CASES = {"rebase": (rebase, "a rebase is in progress", "finish it (`git rebase --continue`) or abort it "
                                                      "(`git rebase --abort`), then wrap"),
         "merge": (resolved_merge, "a merge is in progress", "finish it (`git commit`) or abort it "
                                                            "(`git merge --abort`), then wrap"),
         "cherry-pick": (cherry_pick, "a cherry-pick is in progress", "finish it (`git cherry-pick --continue`) or "
                                                                     "abort it (`git cherry-pick --abort`), then wrap"),
         "revert": (revert, "a revert is in progress", "finish it (`git revert --continue`) or abort it "
                                                      "(`git revert --abort`), then wrap"),
         "bisect": (bisect, "a bisect is in progress", "end it (`git bisect reset`), then wrap")}


@pytest.mark.parametrize("dry_run", [False, True], ids=["wrap", "dry-run"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_wrap_in_the_middle_of_a_git_operation_is_refused_before_anything_is_written(wrap_repo, tmp_path, case,
                                                                                       dry_run):
    setup, what, fix = CASES[case]
    setup(wrap_repo)
    plan = write_plan(tmp_path)
    before = {**state(wrap_repo), "status": git(wrap_repo, "status", "--porcelain"),
              "f": (wrap_repo / "f.txt").read_bytes()}
    res = flowgit(wrap_repo, "wrap", "--plan", str(plan), "--date", "2026-11-26", *(["--dry-run"] if dry_run else []))
    assert res.returncode == 2, res
    assert "Traceback" not in res.stderr and res.stdout == ""
    assert (f"{wrap_repo}: {what} in this repository; a wrap committed now would be part of it, so nothing was "
            f"written (fix: {fix})") in res.stderr
    after = {**state(wrap_repo), "status": git(wrap_repo, "status", "--porcelain"),
             "f": (wrap_repo / "f.txt").read_bytes()}
    assert after == before and after["wrap_files"] == {}


def test_the_json_refusal_names_the_fix(wrap_repo, tmp_path):
    rebase(wrap_repo)
    res = flowgit(wrap_repo, "--json", "wrap", "--plan", str(write_plan(tmp_path)), "--date", "2026-11-26")
    assert res.returncode == 2
    err = json.loads(res.stdout)["error"]
    assert err["message"].startswith("a rebase is in progress")
    assert err["fix"] == "finish it (`git rebase --continue`) or abort it (`git rebase --abort`), then wrap"
