"""Recovery acts on the repository it runs in, proven by content: copies, moves, finished wraps, stale locks."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import git
from tests.wrap.test_transaction import flowgit, kill9, start_paused, write_plan
from tests.wrap.test_wrap import wrap_repo  # noqa: F401  (fixture)

GIT_DIR_FILES = "flowgit-wrap*"


def state(repo: Path) -> dict:
    """What a wrap can touch, independent of where the repository lives: HEAD, the index, the bytes."""
    gdir = repo / ".git"
    return {"head": git(repo, "rev-parse", "HEAD").strip(), "index": git(repo, "ls-files", "-s"),
            "continuity": (repo / "CONTINUITY.md").read_bytes(),
            "store": (repo / ".flow" / "episodes.jsonl").read_bytes(),
            "refs": git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
            "wrap_files": {p.name: p.read_bytes() for p in sorted(gdir.glob(GIT_DIR_FILES))}}


def killed_at(repo: Path, tmp: Path, point: str) -> dict:
    """The pre-wrap state; the wrap is then killed -9 at ``point`` (its journal left behind)."""
    before = state(repo)
    kill9(start_paused(repo, tmp, point))
    assert (repo / ".git" / "flowgit-wrap.journal").exists()
    return before


# ------------------------------------------------------------------ finding 1: a copy recovers itself only
def test_recover_in_a_copy_rolls_back_the_copy_and_never_touches_the_original(wrap_repo, tmp_path):
    before = killed_at(wrap_repo, tmp_path, "6-stage")
    original_after_kill = state(wrap_repo)
    assert original_after_kill["index"] != before["index"]  # half-wrapped: staged, written
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(wrap_repo), str(copy)], check=True)

    res = flowgit(copy, "wrap", "--recover")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == ("rolled back an interrupted wrap: working tree, store and index are as they "
                                  "were before it")
    assert state(copy) == before  # the copy is exactly its pre-wrap self, its journal and backups gone
    assert state(wrap_repo) == original_after_kill  # the original: not one byte, journal and backups kept

    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 0 and "rolled back an interrupted wrap" in res.stdout, res.stderr
    assert state(wrap_repo) == before


def test_the_journal_names_paths_inside_its_repository_only(wrap_repo, tmp_path):
    killed_at(wrap_repo, tmp_path, "6-stage")
    journal = json.loads((wrap_repo / ".git" / "flowgit-wrap.journal").read_text())
    text = json.dumps(journal)
    assert str(wrap_repo) not in text and str(tmp_path) not in text
    assert journal["format"] == 3 and journal["continuity_rel"] == "CONTINUITY.md"
    assert journal["store_rel"] == ".flow/episodes.jsonl"
    assert journal["backups"] == {"continuity": "flowgit-wrap.continuity.bak", "index": "flowgit-wrap.index.bak",
                                  "payload": "flowgit-wrap.payload.bak"}


@pytest.mark.parametrize("field, value", [("continuity_rel", "../elsewhere/CONTINUITY.md"),
                                          ("store_rel", "/tmp/episodes.jsonl"),
                                          ("backups", {"continuity": "../../elsewhere.bak", "index": None,
                                                       "payload": "flowgit-wrap.payload.bak"})])
def test_a_journal_pointing_outside_its_repository_is_refused(wrap_repo, tmp_path, field, value):
    killed_at(wrap_repo, tmp_path, "6-stage")
    path = wrap_repo / ".git" / "flowgit-wrap.journal"
    journal = json.loads(path.read_text())
    journal[field] = value
    path.write_text(json.dumps(journal))
    after = state(wrap_repo)
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 2 and "the journal of an interrupted wrap cannot be read" in res.stderr
    assert "Traceback" not in res.stderr and state(wrap_repo) == after


def test_a_format_2_journal_with_another_repositorys_paths_recovers_this_one(wrap_repo, tmp_path):
    """An older flowgit's journal (absolute paths) is read relative to its root, then proven here."""
    before = killed_at(wrap_repo, tmp_path, "4-sections")
    path = wrap_repo / ".git" / "flowgit-wrap.journal"
    journal = json.loads(path.read_text())
    old = tmp_path / "where-it-was"
    journal.update(format=2, root=str(old), continuity=str(old / "CONTINUITY.md"),
                   store=str(old / ".flow" / "episodes.jsonl"), index=str(old / ".git" / "index"),
                   backups={k: (str(old / ".git" / v) if v else None) for k, v in journal["backups"].items()})
    del journal["store_rel"]
    path.write_text(json.dumps(journal))
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 0 and "rolled back" in res.stdout, res.stderr
    assert state(wrap_repo) == before


# ------------------------------------------------------------------ finding 2: a moved repository recovers
@pytest.mark.parametrize("how", ["--recover", "wrap"])
def test_a_moved_repository_recovers_where_it_now_is(wrap_repo, tmp_path, how):
    before = killed_at(wrap_repo, tmp_path, "6-stage")
    moved = tmp_path / "moved"
    shutil.move(str(wrap_repo), moved)
    if how == "--recover":
        res = flowgit(moved, "wrap", "--recover")
        assert res.returncode == 0, res.stderr
        assert "rolled back an interrupted wrap" in res.stdout and "not installed" not in res.stderr
        assert state(moved) == before
        return
    res = flowgit(moved, "wrap", "--plan", str(write_plan(tmp_path, "again.json")), "--date", "2026-11-26")
    assert res.returncode == 0, res.stderr
    assert "note: rolled back an interrupted wrap" in res.stdout and "committed" in res.stdout
    assert git(moved, "rev-parse", "HEAD~1").strip() == before["head"]
    assert git(moved, "status", "--porcelain") == "" and not list((moved / ".git").glob(GIT_DIR_FILES))


# ------------------------------------------------------------------ finding 3: a finished wrap, then more work
def _commit_other_work(repo: Path) -> str:
    (repo / "other.txt").write_text("ordinary work\n")
    git(repo, "add", "other.txt")
    git(repo, "commit", "-qm", "ordinary work")
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize("how", ["--recover", "wrap"])
def test_a_wrap_killed_after_its_commit_then_a_user_commit_is_recognised_as_finished(wrap_repo, tmp_path, how):
    before = killed_at(wrap_repo, tmp_path, "7-committed")
    wrap_commit = git(wrap_repo, "rev-parse", "HEAD").strip()
    assert git(wrap_repo, "rev-parse", "HEAD~1").strip() == before["head"]
    user_commit = _commit_other_work(wrap_repo)
    after_work = state(wrap_repo)
    if how == "--recover":
        res = flowgit(wrap_repo, "wrap", "--recover")
        assert res.returncode == 0, res.stderr
        assert res.stdout.strip() == (
            f"the interrupted wrap had already committed {wrap_commit[:12]}, which HEAD ({user_commit[:12]}) has "
            "in its history, so there was nothing to undo; cleared its journal and its backups (they serve only "
            "to undo a wrap that did not finish, and this one finished)")
        assert state(wrap_repo) == {**after_work, "wrap_files": {}}  # only the journal and its backups went
        return
    res = flowgit(wrap_repo, "wrap", "--plan", str(write_plan(tmp_path, "next.json", session="sess-d")),
                  "--date", "2026-11-27")
    assert res.returncode == 0, res.stderr
    assert f"note: the interrupted wrap had already committed {wrap_commit[:12]}" in res.stdout
    assert git(wrap_repo, "rev-parse", "HEAD~1").strip() == user_commit
    assert git(wrap_repo, "rev-parse", "HEAD~2").strip() == wrap_commit
    assert git(wrap_repo, "status", "--porcelain") == "" and not list((wrap_repo / ".git").glob(GIT_DIR_FILES))


def test_a_wrap_commit_outside_heads_history_is_still_refused(wrap_repo, tmp_path):
    before = killed_at(wrap_repo, tmp_path, "7-committed")
    git(wrap_repo, "switch", "-q", "-c", "elsewhere", before["head"])  # the wrap's commit is not behind HEAD
    git(wrap_repo, "commit", "-q", "--allow-empty", "-m", "work on another branch")
    after = state(wrap_repo)
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "cannot be undone safely, so nothing was changed: HEAD moved from" in res.stderr
    assert "no commit in its history is the one this wrap set out to make" in res.stderr
    assert state(wrap_repo) == after


def test_a_commit_that_only_looks_like_the_wraps_is_not_taken_for_it(wrap_repo, tmp_path):
    """Same parent and subject but another tree: not the wrap's commit, so the half-wrap is not cleared."""
    before = killed_at(wrap_repo, tmp_path, "6-stage")
    journal = json.loads((wrap_repo / ".git" / "flowgit-wrap.journal").read_text())
    assert journal["stage"] == "committing"
    (wrap_repo / "other.txt").write_text("x\n")
    git(wrap_repo, "add", "other.txt")
    git(wrap_repo, "commit", "-qm", journal["message_subject"])
    _commit_other_work(wrap_repo)
    after = state(wrap_repo)
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 2 and "HEAD moved from" in res.stderr and state(wrap_repo) == after
    assert git(wrap_repo, "rev-parse", "HEAD~2").strip() == before["head"]


# ------------------------------------------------------------------ finding 4: a stale index.lock
def test_a_stale_index_lock_is_named_with_gits_own_fix_and_left_in_place(wrap_repo, tmp_path):
    before = killed_at(wrap_repo, tmp_path, "6-stage")
    lock = wrap_repo / ".git" / "index.lock"
    lock.write_bytes(b"")  # what a git killed with its wrap leaves: no git process is running
    after_kill = state(wrap_repo)
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "a git process is still running here, or one was killed and left its lock behind (index.lock)" \
        in res.stderr
    assert ("fix: wait for the running git command to finish; if no git command is running, the lock is stale — "
            "remove .git/index.lock (as git itself advises) and run `flowgit wrap --recover` again") in res.stderr
    assert lock.exists() and state(wrap_repo) == after_kill  # never removed for the user
    lock.unlink()
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 0 and "rolled back" in res.stdout
    assert state(wrap_repo) == before


def test_a_wrap_meeting_a_stale_index_lock_names_the_same_fix_and_writes_nothing(wrap_repo, tmp_path):
    (wrap_repo / ".git" / "index.lock").write_bytes(b"")
    before = state(wrap_repo)
    res = flowgit(wrap_repo, "wrap", "--plan", str(write_plan(tmp_path)), "--date", "2026-11-26")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "a git process is running here, or one was killed and left its lock behind (index.lock); nothing " \
           "was written" in res.stderr
    assert ("if no git command is running, the lock is stale — remove .git/index.lock (as git itself advises) "
            "and run the wrap again") in res.stderr
    assert state(wrap_repo) == before and (wrap_repo / ".git" / "index.lock").exists()


def test_recover_sweeps_the_temporaries_a_kill_left_and_nothing_else(wrap_repo, tmp_path):
    """A kill inside a write (before its rename) or while the commit's tree was predicted leaves the wrap's
    own temporaries: the recovery takes them away with the journal; a user's look-alike file stays."""
    before = killed_at(wrap_repo, tmp_path, "6-stage")
    left = [wrap_repo / ".CONTINUITY.md.k3y9x2q1.tmp", wrap_repo / ".flow" / ".episodes.jsonl.a8b7c6d5.tmp",
            wrap_repo / ".git" / "flowgit-wrap.index.next"]
    for path in left:
        path.write_bytes(b"half written")
    mine = wrap_repo / ".CONTINUITY.md.tmp.notes"
    mine.write_text("a user's file\n")
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 0, res.stderr
    assert not any(path.exists() for path in left) and mine.read_text() == "a user's file\n"
    mine.unlink()
    assert state(wrap_repo) == before
