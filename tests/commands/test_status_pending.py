"""``flowgit status`` says when an interrupted wrap awaits recovery, and sends the person to ``--recover``."""

from __future__ import annotations

import json

from tests.wrap.test_recovery import killed_at, state
from tests.wrap.test_transaction import flowgit
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
                                        "fix": "run `flowgit wrap --recover`"}


def test_prime_puts_the_interrupted_wrap_before_the_unwrapped_edit(wrap_repo, tmp_path):
    """The agent reads prime first: it must learn of the pending journal before it writes anything."""
    killed_at(wrap_repo, tmp_path, "6-stage")
    res = flowgit(wrap_repo, "prime")
    assert res.returncode == 0, res.stderr
    assert "- an interrupted wrap awaits recovery (" in res.stdout and "flowgit wrap --recover" in res.stdout
    assert "has uncommitted edits: finish them with `flowgit wrap`" not in res.stdout
