"""While an interrupted wrap's journal is pending, nothing computes from or writes over its half-written state."""

from __future__ import annotations

import json

from tests.wrap.test_recovery import killed_at, state
from tests.wrap.test_transaction import flowgit, write_plan
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
    assert json.loads(res.stdout)["error"] == {"message": PENDING, "fix": FIX, "line": None,
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
