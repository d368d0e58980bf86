"""``flowgit wrap`` and ``flowgit candidates`` as commands: the options and environment they read, the exit
codes they give, in real repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.commands.test_sync import remote  # noqa: F401 (fixture)
from tests.conftest import git


@pytest.fixture
def wrapped(repo: Path, run, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with one wrap by session s1 (a 1x pattern) and, from session s2, an episode that fires
    the pattern again, committed mid-session (so it is no longer "added since HEAD")."""
    run(repo, "init", "--no-hooks")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    monkeypatch.setenv("FLOWGIT_SESSION", "s1")
    run(repo, "episode", "add", "--type", "finding", "retries multiplied provider load during the outage")
    plan = {"state": "Focus: retries.",
            "patterns": [{"op": "add", "name": "retry_budget", "text": "cap retries per provider request"}]}
    assert run(repo, "wrap", "--plan", "-", stdin=json.dumps(plan)).code == 0
    monkeypatch.setenv("FLOWGIT_SESSION", "s2")
    run(repo, "episode", "add", "--type", "outcome", "capping retries per provider request kept load flat")
    git(repo, "add", ".flow/episodes.jsonl")
    git(repo, "commit", "-qm", "checkpoint: record today's facts")
    return repo


@pytest.mark.parametrize("variable", ["FLOWGIT_SESSION", "CLAUDE_CODE_SESSION_ID"])
def test_candidates_reads_the_session_from_the_environment(run, wrapped, monkeypatch, variable):
    monkeypatch.delenv("FLOWGIT_SESSION")
    monkeypatch.setenv(variable, "s2")
    data = json.loads(run(wrapped, "candidates", "--json").out)
    assert data["session"] == "s2" and len(data["session_episodes"]) == 1
    assert [x["name"] for x in data["fired_again"]] == ["retry_budget"]
    human = run(wrapped, "candidates").out
    assert human.startswith("1 episode(s) from session s2") and "no session given" not in human


def test_candidates_option_wins_over_the_environment(run, wrapped):
    mine = json.loads(run(wrapped, "candidates", "--json").out)["session_episodes"]  # FLOWGIT_SESSION=s2
    data = json.loads(run(wrapped, "candidates", "--session", "s1", "--json").out)
    assert data["session"] == "s1" and len(data["session_episodes"]) == 1 and data["session_episodes"] != mine


def test_candidates_without_any_session_says_how_to_name_one(run, wrapped, monkeypatch):
    monkeypatch.delenv("FLOWGIT_SESSION")
    data = json.loads(run(wrapped, "candidates", "--json").out)
    assert data["session"] is None and data["session_episodes"] == []
    assert "FLOWGIT_SESSION or CLAUDE_CODE_SESSION_ID names one" in run(wrapped, "candidates").out


def test_wrap_push_whose_sync_fails_says_the_wrap_is_committed(tmp_path, remote, run):
    """The sync starts and its gate refuses an earlier commit: sync's own exit code (1), the wrap stands."""
    from tests.commands.test_sync import clone, commit, head

    a = clone(tmp_path, remote, "a", run, "--no-hooks")
    text = (a / "CONTINUITY.md").read_text()
    (a / "CONTINUITY.md").write_text(text.replace("## Developing Knowledge\n", "## Developing Knowledge\n"
                                                  "!! fresh_claim: caches never go stale | 2x (CORE)\n", 1))
    commit(a, "an ungrounded 2x", "--no-verify")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"session": "s-push", "state": "Focus: pushing a refused history.",
                                "episodes": [{"type": "finding", "content": "the remote refuses ungrounded raises"}]}))
    res = run(a, "wrap", "--plan", str(plan), "--push")
    assert res.code == 1, (res.out, res.err)
    assert f"the wrap is committed ({head(a)[:12]}) and stands; the sync failed" in res.out
    assert git(a, "log", "-1", "--format=%s").startswith("Session wrap")


def test_a_candidate_s_evidence_is_said_as_suggested_and_counted_by_independence():
    """The ids listed for a 2x ready to graduate are the ones flowgit suggests citing; the file cites fewer. It
    read "4 episodes cited", which the file contradicted."""
    from flowgit.commands.wrap import _counted_evidence

    entry = {"evidence": ["ep-1", "ep-2", "ep-3", "ep-4"], "independent": 3, "sources": 2}
    assert _counted_evidence(entry) == "4 episodes suggested, 3 independent episodes from 2 sources"
    assert _counted_evidence({**entry, "independent": 4}) == "4 independent episodes from 2 sources"
