"""``flowgit status`` says when an interrupted wrap awaits recovery, and sends the person to ``--recover``."""

from __future__ import annotations

import json

from tests.wrap.test_recovery import killed_at, state
from tests.wrap.test_transaction import flowgit, kill9, start_paused, write_plan
from tests.wrap.test_wrap import wrap_repo  # noqa: F401  (fixture)


def test_status_names_the_interrupted_wrap_and_the_recovery(wrap_repo, tmp_path):
    killed_at(wrap_repo, tmp_path, "6-stage")
    after_kill = state(wrap_repo)
    res = flowgit(wrap_repo, "status", env={"NO_COLOR": "1"})
    assert res.returncode == 0, res.stderr
    journal = wrap_repo / ".git" / "flowgit-wrap.journal"
    assert (f"An interrupted wrap awaits recovery:\n  {journal}  (run `flowgit wrap --recover`: the continuity file "
            "and the store may hold its half-written changes)") in res.stdout
    assert "modified: CONTINUITY.md  (run `flowgit wrap --recover` first)" in res.stdout
    assert "finish with `flowgit wrap`" not in res.stdout and "nothing to wrap" not in res.stdout
    assert state(wrap_repo) == after_kill


def test_status_without_a_pending_wrap_says_nothing_of_one(wrap_repo):
    res = flowgit(wrap_repo, "status", env={"NO_COLOR": "1"})
    assert res.returncode == 0 and "interrupted wrap" not in res.stdout


def test_status_from_a_subdirectory_finds_the_pending_wrap(wrap_repo, tmp_path):
    killed_at(wrap_repo, tmp_path, "4-sections")
    res = flowgit(wrap_repo / ".flow", "status", env={"NO_COLOR": "1"})
    assert res.returncode == 0 and "An interrupted wrap awaits recovery" in res.stdout


def test_status_json_names_the_interrupted_wrap(wrap_repo, tmp_path):
    killed_at(wrap_repo, tmp_path, "6-stage")
    res = flowgit(wrap_repo, "--json", "status")
    data = json.loads(res.stdout)
    assert data["interrupted_wrap"] == {"journal": str(wrap_repo / ".git" / "flowgit-wrap.journal"),
                                        "running": False, "fix": "run `flowgit wrap --recover`"}


def test_prime_puts_the_interrupted_wrap_before_the_unwrapped_edit(wrap_repo, tmp_path):
    """The agent reads prime first: it must learn of the pending journal before it writes anything."""
    killed_at(wrap_repo, tmp_path, "6-stage")
    res = flowgit(wrap_repo, "prime")
    assert res.returncode == 0, res.stderr
    assert "- an interrupted wrap awaits recovery (" in res.stdout and "flowgit wrap --recover" in res.stdout
    assert "has uncommitted edits: finish them with `flowgit wrap`" not in res.stdout


def test_a_wrap_running_now_is_named_as_running_not_as_interrupted(wrap_repo, tmp_path):
    """Its journal is there while it runs; it holds the repository lock, which an interrupted one does not."""
    proc = start_paused(wrap_repo, tmp_path, "6-stage")
    try:
        res = flowgit(wrap_repo, "status", env={"NO_COLOR": "1"})
        assert res.returncode == 0, res.stderr
        assert "A wrap is running now:" in res.stdout and "wait for it to finish" in res.stdout
        assert "interrupted" not in res.stdout and "--recover" not in res.stdout
        data = json.loads(flowgit(wrap_repo, "--json", "status").stdout)
        assert data["interrupted_wrap"]["running"] is True
        assert "a wrap is running now" in flowgit(wrap_repo, "prime").stdout
        dry = flowgit(wrap_repo, "wrap", "--dry-run", "--plan", str(write_plan(tmp_path, "other.json")))
        assert dry.returncode == 2 and "a wrap is running now" in dry.stderr and "wait for it" in dry.stderr
    finally:
        kill9(proc)
    res = flowgit(wrap_repo, "status", env={"NO_COLOR": "1"})  # killed: now it is interrupted
    assert "An interrupted wrap awaits recovery:" in res.stdout
