"""flowgit sync against what happens beside it: commits, staged edits, branch switches and git's own lock
landing while it runs. Real clones of a real bare remote; each race is made deterministic by a pause point
(flowgit/faults.py, armed by tests/support) at which the test acts, never by sleeping and hoping."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.commands.test_sync import bare_of, clone, commit, head, seeded
from tests.conftest import git


@pytest.fixture
def remote(tmp_path: Path, run) -> Path:
    return bare_of(tmp_path, seeded(tmp_path, run))


def paused_sync(repo: Path, point: str, tmp_path: Path, *, release: Path | None = None,
                seconds: float = 60) -> subprocess.Popen:
    """`flowgit sync` in its own process, returned once it stands at the pause point ``point`` (it goes on when
    ``release`` exists, or after ``seconds``)."""
    marker = tmp_path / f"paused-at-{point}"
    env = {**os.environ, "FLOWGIT_PAUSE": point, "FLOWGIT_PAUSE_FILE": str(marker),
           "FLOWGIT_PAUSE_SECONDS": str(seconds)}
    if release is not None:
        env["FLOWGIT_PAUSE_RELEASE"] = str(release)
    proc = subprocess.Popen([sys.executable, "-m", "flowgit", "sync"], cwd=repo, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "sync never reached " + point
        time.sleep(0.02)
    return proc


def diverged(tmp_path: Path, remote: Path, run) -> tuple[Path, Path]:
    """Clones a and b of ``remote``: b's commit pushed, a's own commit not, so a's sync merges."""
    a, b = clone(tmp_path, remote, "a", run), clone(tmp_path, remote, "b", run)
    (b / "b.txt").write_text("b\n")
    git(b, "add", "b.txt")
    commit(b, "b work")
    assert run(b, "sync").code == 0
    (a / "notes.txt").write_text("v1\n")
    git(a, "add", "notes.txt")
    commit(a, "a work")
    return a, b


def test_an_interrupted_sync_keeps_a_commit_made_on_top_of_its_merge(tmp_path, remote, run):
    """`git commit` takes no flowgit lock: a commit landing on sync's merge before a SIGTERM is never reset
    away with it (finding 01): sync refuses the rollback, says so, and the branch keeps the commit."""
    a, _ = diverged(tmp_path, remote, run)
    pushed = git(remote, "rev-parse", "main")
    proc = paused_sync(a, "sync-integrated", tmp_path)
    (a / "mine.txt").write_text("important user work\n")
    git(a, "add", "mine.txt")
    commit(a, "user: own commit made while sync ran")
    mine = head(a)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert "not the commit sync made" in err and "nothing was undone" in err
    assert head(a) == mine and (a / "mine.txt").read_text() == "important user work\n"
    assert git(a, "status", "--porcelain", "--untracked-files=no") == ""
    assert git(remote, "rev-parse", "main") == pushed
    assert run(a, "sync").code == 0 and git(remote, "rev-parse", "main").strip() == mine  # and it goes on


def test_an_interrupted_sync_keeps_an_edit_staged_while_it_ran(tmp_path, remote, run):
    """An edit added to the index while sync ran is not put back with sync's merge (finding 06): the
    rollback refuses, names the file, and the index and the file keep the edit."""
    a, _ = diverged(tmp_path, remote, run)
    proc = paused_sync(a, "sync-integrated", tmp_path)
    merged = head(a)
    (a / "notes.txt").write_text("v2: staged while sync ran\n")
    git(a, "add", "notes.txt")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert "notes.txt" in err and "staged while it ran" in err
    assert head(a) == merged
    assert git(a, "show", ":notes.txt") == "v2: staged while sync ran\n"
    assert (a / "notes.txt").read_text() == "v2: staged while sync ran\n"


def test_a_sync_stopped_in_gits_post_merge_hook_keeps_an_edit_staged_meanwhile(tmp_path, remote, run):
    """Stopped while git runs the post-merge hook, the merge is committed but MERGE_HEAD is left: `git merge
    --abort` there would reset the index to the merge (losing the staged edit); only git's state is dropped."""
    a, _ = diverged(tmp_path, remote, run)
    merged, release = tmp_path / "merged-now", tmp_path / "release"
    hook = a / ".git" / "hooks" / "post-merge"
    hook.write_text(f"#!/bin/sh\ntouch {merged}\nfor i in $(seq 600); do [ -e {release} ] && exit 0; sleep 0.1; done\n")
    hook.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-m", "flowgit", "sync"], cwd=a, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not merged.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    (a / "notes.txt").write_text("v2: staged while git merged\n")
    git(a, "add", "notes.txt")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    release.touch()
    assert proc.returncode == 2 and "staged while it ran" in err, err
    assert git(a, "show", ":notes.txt") == (a / "notes.txt").read_text() == "v2: staged while git merged\n"
    assert not (a / ".git" / "MERGE_HEAD").exists()


def test_a_branch_switched_to_during_the_fetch_is_neither_merged_nor_pushed(tmp_path, remote, run):
    """The fetch runs outside the lock: a `git checkout` meanwhile must not make sync merge the remote into the
    other branch and push that branch's commits to the remote's main (finding 13): refused, exit 2."""
    a, _ = diverged(tmp_path, remote, run)
    git(a, "checkout", "-qb", "experiment")
    (a / "exp.txt").write_text("half-baked\n")
    git(a, "add", "exp.txt")
    commit(a, "WIP: experiment, not for main")
    wip = head(a)
    git(a, "checkout", "-q", "main")
    pushed, release = git(remote, "rev-parse", "main"), tmp_path / "release"
    proc = paused_sync(a, "sync-fetched", tmp_path, release=release)
    git(a, "checkout", "-q", "experiment")
    release.touch()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "HEAD moved from main to experiment while sync fetched" in err, err
    assert git(remote, "rev-parse", "main") == pushed and head(a) == wip
    assert git(a, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_merge_that_meets_gits_lock_is_aborted_for_good_and_said_as_a_lock(tmp_path, remote, run):
    """An editor's `git status` holds index.lock as sync merges: git writes MERGE_HEAD, fails, and the abort
    meets the lock too (finding 10). Sync aborts again once the lock is gone, leaves no merge in progress, and
    says it was git's lock, not a conflict."""
    a, _ = diverged(tmp_path, remote, run)
    original, release = head(a), tmp_path / "release"
    lock, merge_head = a / ".git" / "index.lock", a / ".git" / "MERGE_HEAD"
    proc = paused_sync(a, "sync-merging", tmp_path, release=release)
    lock.touch()
    release.touch()
    deadline = time.monotonic() + 60
    while not merge_head.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(1)  # the abort meets the lock meanwhile
    lock.unlink()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "index.lock" in err and "no conflict" in err, err
    assert "conflicted" not in err
    assert not merge_head.exists() and head(a) == original
    assert git(a, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_merge_git_refuses_names_the_untracked_file_in_the_way(tmp_path, remote, run):
    """git refuses to merge over an untracked file: sync says so, with the file and what to do (finding 17),
    not "conflicted in the tree"; the file is untouched."""
    a, b = diverged(tmp_path, remote, run)
    (b / "draft.md").write_text("b's draft\n")
    git(b, "add", "draft.md")
    commit(b, "b adds draft.md")
    assert run(b, "sync").code == 0
    (a / "draft.md").write_text("my untracked draft\n")
    before = head(a)
    res = run(a, "sync")
    assert res.code == 1 and "untracked file(s) draft.md would be overwritten" in res.err, res.err
    assert "move or remove draft.md" in res.err and "conflicted" not in res.err
    assert head(a) == before and (a / "draft.md").read_text() == "my untracked draft\n"


def test_a_push_flowgits_pre_push_hook_refuses_because_someone_pushed_first_is_retried(tmp_path, remote, run):
    """Between sync's fetch and its push another clone pushes: flowgit's own pre-push hook refuses first
    ("which this clone has never seen"), so git never says `[rejected]`. The hook's stable marker line makes
    sync integrate again, as for git's own rejection (finding 02), and the refusal never blames the audit."""
    a, b = diverged(tmp_path, remote, run)
    release = tmp_path / "release"
    proc = paused_sync(a, "sync-fetched", tmp_path, release=release)
    (b / "b2.txt").write_text("b, pushed first\n")
    git(b, "add", "b2.txt")
    commit(b, "b pushes first")
    assert run(b, "sync").code == 0
    first = head(b)
    release.touch()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "after 2 attempts" in out, out + err
    assert git(remote, "merge-base", "--is-ancestor", first, "main") == ""
    assert git(remote, "rev-parse", "main").strip() == head(a)


def test_the_pre_push_hooks_refusal_of_a_moved_remote_is_marked_and_not_blamed_on_the_audit(tmp_path, remote, run):
    from flowgit.merge.sync import REMOTE_MOVED

    a, b = diverged(tmp_path, remote, run)
    (b / "b2.txt").write_text("b, pushed first\n")
    git(b, "add", "b2.txt")
    commit(b, "b pushes first")
    assert run(b, "sync").code == 0
    refused = subprocess.run(["git", "push", "-f", "origin", "main"], cwd=a, capture_output=True, text=True)
    assert refused.returncode != 0 and REMOTE_MOVED + " refs/heads/main" in refused.stderr.splitlines()
    assert "has never seen" in refused.stderr and "fail the audit" not in refused.stderr


def test_git_merge_temporaries_a_killed_sync_left_are_removed_and_nothing_else(tmp_path, remote, run):
    """kill -9 while git runs the merge driver leaves git's `.merge_file_XXXXXX` copies of the memory untracked
    in the tree (finding 12). The next sync, settling the killed sync's mark, removes exactly those made since
    the mark and says so; a file of another name, or older than the mark, is the user's and stays."""
    from flowgit.merge.sync import PENDING

    a, _ = diverged(tmp_path, remote, run)
    older = a / ".merge_file_Old123"
    older.write_text("older than the killed sync: not its\n")
    os.utime(older, (time.time() - 3600, time.time() - 3600))
    (a / ".git" / PENDING).write_text(head(a) + "\n")
    left = a / ".merge_file_Ab12Cd"
    left.write_text("# Continuity\n(git's copy of a side)\n")
    mine = [a / ".merge_file_notes", a / "merge_file_Ab12Cd"]
    for path in mine:
        path.write_text("the user's\n")
    res = run(a, "sync")
    assert res.code == 0, res.err
    assert "removed git's merge temporaries a killed sync left: .merge_file_Ab12Cd" in res.out
    assert not left.exists() and older.exists() and all(path.exists() for path in mine)
    assert not (a / ".git" / PENDING).exists()


def _two_commits(repo: Path) -> tuple[str, str]:
    (repo / "notes.txt").write_text("notes\n")
    (repo / "code.txt").write_text("v1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first", "--no-verify")
    original = head(repo)
    (repo / "code.txt").write_text("v2 (what the integration brought)\n")
    git(repo, "commit", "-qam", "integrated", "--no-verify")
    return original, head(repo)


def test_putting_the_branch_back_refuses_over_a_staged_edit_or_a_commit_on_top(repo):
    """The gate's rollback too moves the branch only from the commit the integration made, and only while
    the index holds nothing else (a compare-and-swap, never a reset over someone's work)."""
    from flowgit.merge.sync import RollbackRefused, _back_to

    original, integrated = _two_commits(repo)
    (repo / "notes.txt").write_text("notes, staged meanwhile\n")
    git(repo, "add", "notes.txt")
    with pytest.raises(RollbackRefused) as staged:
        _back_to(repo, original, integrated)
    assert "notes.txt" in staged.value.message and head(repo) == integrated
    assert git(repo, "show", ":notes.txt") == "notes, staged meanwhile\n"
    git(repo, "commit", "-qm", "someone's commit", "--no-verify")
    on_top = head(repo)
    with pytest.raises(RollbackRefused) as moved:
        _back_to(repo, original, integrated)
    assert "a commit landed on top" in moved.value.message and head(repo) == on_top
    assert (repo / "notes.txt").read_text() == "notes, staged meanwhile\n"
