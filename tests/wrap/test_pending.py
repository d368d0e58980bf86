"""While an interrupted wrap's journal is pending, nothing computes from or writes over its half-written state."""

from __future__ import annotations

import json
import os
import subprocess

from tests.conftest import git
from tests.wrap.test_recovery import killed_at, state
from tests.wrap.test_transaction import flowgit, kill9, start_paused, write_plan
from tests.wrap.test_wrap import wrap_repo  # noqa: F401  (fixture)

PENDING = ("an interrupted wrap awaits recovery: the continuity file, the store and the index may still hold its "
           "half-written changes; nothing was written")
FIX = ("run `flowgit wrap --recover` first (it undoes the interrupted wrap only when it can prove the repository "
       "holds nothing else), then run this command again")


def test_a_dry_run_refuses_instead_of_diffing_the_half_applied_file(wrap_repo, tmp_path):
    before = killed_at(wrap_repo, tmp_path, "6-stage")
    after_kill = state(wrap_repo)
    res = flowgit(wrap_repo, "wrap", "--dry-run", "--plan", str(write_plan(tmp_path, "same.json")),
                  "--date", "2026-11-26")
    assert res.returncode == 2 and res.stdout == "" and "Traceback" not in res.stderr
    journal = wrap_repo / ".git" / "flowgit-wrap.journal"
    assert res.stderr.strip() == f"flowgit: error: {journal}: {PENDING} (fix: {FIX})"
    assert state(wrap_repo) == after_kill
    assert flowgit(wrap_repo, "wrap", "--recover").returncode == 0 and state(wrap_repo) == before


def test_a_dry_run_under_json_gives_the_fix(wrap_repo, tmp_path):
    killed_at(wrap_repo, tmp_path, "4-sections")
    res = flowgit(wrap_repo, "--json", "wrap", "--dry-run")
    assert res.returncode == 2
    assert json.loads(res.stdout)["error"] == {"message": PENDING, "fix": FIX, "line": None, "option": None,
                                               "file": str(wrap_repo / ".git" / "flowgit-wrap.journal")}


def test_episode_add_is_refused_so_the_wrap_stays_recoverable(wrap_repo, tmp_path):
    before = killed_at(wrap_repo, tmp_path, "6-stage")
    after_kill = state(wrap_repo)
    res = flowgit(wrap_repo, "episode", "add", "--type", "finding", "--session", "s9",
                  "ordinary work after the crash")
    assert res.returncode == 2 and res.stdout == "" and "Traceback" not in res.stderr
    assert f"{PENDING} (fix: {FIX})" in res.stderr
    assert state(wrap_repo) == after_kill  # not one byte appended
    res = flowgit(wrap_repo, "episode", "add", "--session", "s9", input='{"type": "finding", "content": "x"}\n')
    assert res.returncode == 2 and state(wrap_repo) == after_kill
    # so the recovery still proves its state and undoes the wrap exactly; then the episode goes in
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 0 and "rolled back" in res.stdout and state(wrap_repo) == before
    res = flowgit(wrap_repo, "episode", "add", "--type", "finding", "--session", "s9",
                  "ordinary work after the crash")
    assert res.returncode == 0 and "added" in res.stdout


# ------------------------------------------------------------------ G807: no commit past a pending wrap
G807_FIX = ("run `flowgit wrap --recover` (it undoes the interrupted wrap when it can prove nothing else changed, "
            "or explains what did), then stage and commit again")


def _commit(repo, *args: str, env: dict | None = None):
    return subprocess.run(["git", "commit", "-q", *args], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def test_a_plain_commit_of_the_half_wrapped_files_is_refused_until_the_wrap_is_recovered(wrap_repo, tmp_path):
    assert flowgit(wrap_repo, "install-hook").returncode == 0
    before = killed_at(wrap_repo, tmp_path, "6-stage")
    after_kill = state(wrap_repo)
    res = _commit(wrap_repo, "-m", "save my work")
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert "G807 error [wrap-pending] an interrupted wrap awaits recovery" in res.stderr
    assert G807_FIX in res.stderr
    assert state(wrap_repo) == after_kill  # HEAD did not move: the recovery can still prove its state
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 0 and state(wrap_repo) == before


def test_a_commit_of_other_files_is_refused_too_since_it_moves_head(wrap_repo, tmp_path):
    """The hook's shell fast path (nothing the gate judges is staged) must not wave it through."""
    assert flowgit(wrap_repo, "install-hook").returncode == 0
    killed_at(wrap_repo, tmp_path, "6-stage")
    (wrap_repo / "notes.txt").write_text("code, not memory\n")
    git(wrap_repo, "add", "notes.txt")
    head = git(wrap_repo, "rev-parse", "HEAD")
    res = _commit(wrap_repo, "-m", "code only", "--", "notes.txt")
    assert res.returncode != 0 and "G807" in res.stderr
    assert git(wrap_repo, "rev-parse", "HEAD") == head


def test_check_names_the_pending_wrap_even_with_nothing_staged(wrap_repo, tmp_path):
    killed_at(wrap_repo, tmp_path, "6-stage")
    git(wrap_repo, "reset", "-q")  # nothing staged at all
    res = flowgit(wrap_repo, "check", "--json")
    assert res.returncode == 1
    report = json.loads(res.stdout)
    assert report["checked"] is False and report["ok"] is False
    assert [(f["code"], f["rule"], f["fix"]) for f in report["findings"]] == [("G807", "wrap-pending", G807_FIX)]
    res = flowgit(wrap_repo, "check")
    assert res.returncode == 1 and "G807" in res.stderr and "commit rejected" in res.stderr


def test_a_commit_from_another_terminal_while_a_wrap_runs_is_refused_as_running_not_interrupted(wrap_repo,
                                                                                                 tmp_path):
    """The wrap holds the lock while it runs: only its own commit (marked for the gate) passes; a `git commit
    -a` from a second terminal would take in its uncommitted edits and leave it unable to finish or undo."""
    assert flowgit(wrap_repo, "install-hook").returncode == 0
    proc = start_paused(wrap_repo, tmp_path, "6-stage")  # journal written, files staged, the lock held
    try:
        head = git(wrap_repo, "rev-parse", "HEAD")
        res = _commit(wrap_repo, "-a", "-m", "second terminal")
        assert res.returncode != 0 and "G807" in res.stderr and "a wrap is running now" in res.stderr
        assert "wait for the wrap to finish" in res.stderr and git(wrap_repo, "rev-parse", "HEAD") == head
        report = json.loads(flowgit(wrap_repo, "check", "--json").stdout)
        assert [f["fix"] for f in report["findings"]] == ["wait for the wrap to finish, then commit"]
        spoofed = flowgit(wrap_repo, "check", "--json", env={"FLOWGIT_WRAP_COMMIT": "1"})
        assert "G807" in spoofed.stdout  # the mark must name the wrap that holds the lock
    finally:
        kill9(proc)
    res = flowgit(wrap_repo, "check", "--json")  # the kernel dropped the lock with the wrap: now it is pending
    assert res.returncode == 1 and [f["code"] for f in json.loads(res.stdout)["findings"]] == ["G807"]
    assert "flowgit wrap --recover" in res.stdout


def test_a_wrap_commits_through_the_installed_hooks_while_its_journal_exists(wrap_repo, tmp_path):
    assert flowgit(wrap_repo, "install-hook").returncode == 0
    head = git(wrap_repo, "rev-parse", "HEAD")
    res = flowgit(wrap_repo, "wrap", "--plan", str(write_plan(tmp_path)), "--date", "2026-11-26")
    assert res.returncode == 0, res.stderr
    assert git(wrap_repo, "rev-parse", "HEAD~1") == head
    assert not (wrap_repo / ".git" / "flowgit-wrap.journal").exists()


def test_recover_under_json_says_whether_it_recovered_as_a_boolean(wrap_repo, tmp_path):
    res = flowgit(wrap_repo, "--json", "wrap", "--recover")
    assert res.returncode == 0 and json.loads(res.stdout) == {"recovered": False, "message": "no interrupted wrap"}
    killed_at(wrap_repo, tmp_path, "6-stage")
    data = json.loads(flowgit(wrap_repo, "--json", "wrap", "--recover").stdout)
    assert data["recovered"] is True and data["message"].startswith("rolled back an interrupted wrap")
