"""The CLI an agent cannot misread: did-you-mean for names and sections, log --limit, patterns filters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.commands.agent_fixtures import A2, committed_project


@pytest.fixture
def history(repo: Path, run) -> Path:
    """The committed base, then one wrap that graduates retry_budget (two commits of pattern events)."""
    committed_project(repo, run)
    plan = repo.parent / "plan.json"
    plan.write_text(json.dumps({"session": "sess-c", "patterns": [
        {"op": "graduate", "name": "retry_budget", "evidence": [A2.id]}]}))
    assert run(repo, "wrap", "--plan", str(plan), "--date", "2026-11-26").code == 0
    return repo


def events(data: dict) -> list[tuple[str, str]]:
    return [(name, e["kind"]) for name, items in data["patterns"].items() for e in items]


def test_log_limit_keeps_the_newest_events(run, history):
    everything = json.loads(run(history, "log", "--json").out)
    assert len(events(everything)) >= 4
    newest = json.loads(run(history, "log", "--limit", "1", "--json").out)
    assert events(newest) == [("retry_budget", "graduated")]
    assert len(events(json.loads(run(history, "log", "--limit", "2", "--json").out))) == 2
    res = run(history, "log", "--limit", "0")
    assert res.code == 2 and "--limit" in res.err


def test_log_names_and_sections_suggest_the_nearest(run, history):
    res = run(history, "log", "retry_budgt", "--json")
    assert res.code == 2
    err = json.loads(res.out)["error"]
    assert err["message"] == "no pattern 'retry_budgt'" and "`retry_budget`" in err["fix"]
    res = run(history, "log", "--section", "Provn")
    assert res.code == 2 and "did you mean" in res.err and "Proven" in res.err
    proven = json.loads(run(history, "log", "--section", "Proven", "--json").out)
    assert set(events(proven)) == {("retry_budget", "graduated"), ("backoff_jitter", "graduated")}
    assert json.loads(run(history, "log", "--section", "developing", "--json").out)["patterns"]


def test_log_of_a_name_in_a_memory_with_no_pattern_yet_says_so_not_that_it_has_no_history(run, repo):
    """Committed, no pattern in any version: "no history yet … commit it first" was false, and an agent
    following the fix wrapped for nothing."""
    assert run(repo, "init", "--commit", "--no-hooks").code == 0
    res = run(repo, "log", "retry_budget", "--json")
    err = json.loads(res.out)["error"]
    assert res.code == 2 and err["message"].startswith("no pattern 'retry_budget'"), err
    assert "no history" not in err["message"] and "wrap" in err["fix"]


def test_patterns_by_section_and_level(run, history):
    one = json.loads(run(history, "patterns", "--section", "Developing", "--level", "1", "--json").out)
    assert [p["name"] for p in one] == ["cache_first"]
    three = json.loads(run(history, "patterns", "--level", "3", "--json").out)
    assert {p["name"] for p in three} == {"backoff_jitter", "retry_budget"}
    res = run(history, "patterns", "--section", "Develping")
    assert res.code == 2 and "`Developing Knowledge`" in res.err


def test_show_archived_suggests_an_archived_name(run, history):
    plan = history.parent / "archive.json"
    plan.write_text(json.dumps({"session": "sess-d", "patterns": [{"op": "archive", "name": "cache_first"}]}))
    assert run(history, "wrap", "--plan", str(plan), "--date", "2026-11-27").code == 0
    assert run(history, "show-archived", "cache_first").code == 0
    res = run(history, "show-archived", "cache-first", "--json")
    assert res.code == 2 and json.loads(res.out)["error"]["fix"] == "did you mean `cache_first`?"
