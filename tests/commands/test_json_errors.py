"""Every command under --json, on a failing input: stdout is one JSON error, the exit code is unchanged."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.commands.agent_fixtures import BIN, hook_env

# (where: "repo" | "bare", args, expected exit code, a word the message or fix must hold)
CASES = [
    ("bare", ["init"], 2, "git repository"),
    ("repo", ["lint", "missing.md"], 2, "no such file"),
    ("repo", ["patterns", "missing.md"], 2, "no such file"),
    ("repo", ["patterns", "--section", "Provn"], 2, "Proven"),
    ("repo", ["episode", "add", "what happened"], 2, "--type"),
    ("repo", ["episode", "add", "--type", "findng", "x"], 2, "finding"),
    ("repo", ["episode", "list", "--type", "nope"], 2, "episode type"),
    ("repo", ["episode", "search", "x", "--since", "someday"], 2, "--since"),
    ("repo", ["episode", "show", "ep-000000000000"], 2, "episode list"),
    ("bare", ["check"], 2, "git repository"),
    ("repo", ["check-msg", "no-such-message"], 2, "no-such-message"),
    ("bare", ["install-hook"], 2, "git repository"),
    ("repo", ["wrap", "--plan", "no-such-plan.json"], 2, "plan"),
    ("repo", ["candidates", "--date", "soon"], 2, "--date"),
    ("repo", ["log", "--since", "yesterday-ish"], 2, "--since"),
    ("bare", ["audit"], 2, "git repository"),
    ("repo", ["show-archived", "nothing_like_it"], 2, "archival"),
    ("repo", ["ascend", "retries", "--claude-dir", "no-such-dir"], 2, "no such directory"),
    ("repo", ["demo", "--no-such-option"], 2, "--no-such-option"),
    ("repo", ["setup", "claude", "--exe", "/bin/true"], 2, "is not flowgit"),
    ("repo", ["prime", "--date", "someday"], 2, "--date"),
    ("bare", ["status"], 2, "git repository"),
    ("bare", ["remind"], 2, "git repository"),
    ("repo", ["mcp", "--no-such-option"], 2, "--no-such-option"),
    ("repo", ["no-such-command"], 2, "no-such-command"),
]


@pytest.fixture
def places(repo: Path, tmp_path: Path, run) -> dict[str, Path]:
    assert run(repo, "init").code == 0
    bare = tmp_path / "not-a-repo"
    bare.mkdir()
    return {"repo": repo, "bare": bare}


def assert_json_error(out: str, err: str, word: str) -> dict:
    body = json.loads(out)
    assert set(body) == {"error"} and set(body["error"]) == {"message", "fix", "file", "line", "option"}
    assert body["error"]["message"]  # (a few errors raised outside these modules carry no fix yet)
    assert word.lower() in json.dumps(body).lower(), body
    assert "Traceback" not in err
    return body["error"]


@pytest.mark.parametrize("where,args,code,word", CASES, ids=[" ".join(c[1]) for c in CASES])
def test_json_error_after_the_command(run, places, where, args, code, word):
    res = run(places[where], *args, "--json")
    assert res.code == code, (res.out, res.err)
    assert_json_error(res.out, res.err, word)


@pytest.mark.parametrize("where,args,code,word", CASES[:8], ids=[" ".join(c[1]) for c in CASES[:8]])
def test_json_error_before_the_command(run, places, where, args, code, word):
    res = run(places[where], "--json", *args)
    assert res.code == code, (res.out, res.err)
    assert_json_error(res.out, res.err, word)


def test_the_installed_script_too_including_the_gates_fast_path(places):
    for where, args in (("bare", ["check", "--json"]), ("repo", ["patterns", "--json", "--file", "nope.md"])):
        res = subprocess.run([str(BIN / "flowgit"), *args], cwd=places[where], env=hook_env(), capture_output=True,
                             text=True, timeout=60)
        assert res.returncode == 2
        assert_json_error(res.stdout, res.stderr, "git repository" if where == "bare" else "no such file")


def test_global_options_after_the_command(run, places, tmp_path):
    other = tmp_path / "other.md"
    other.write_text("## Developing Knowledge\n! late_pattern: found after the command | 1x\n")
    for args in (["patterns", "--file", str(other), "--json"], ["--file", str(other), "patterns", "--json"],
                 ["--json", "patterns", "--file", str(other)]):
        res = run(places["repo"], *args)
        assert res.code == 0, res.err
        assert [p["name"] for p in json.loads(res.out)] == ["late_pattern"]
    store = tmp_path / "elsewhere.jsonl"
    res = run(places["repo"], "episode", "add", "--type", "finding", "kept elsewhere", "--session", "s1",
              "--store", str(store))
    assert res.code == 0 and "kept elsewhere" in store.read_text()


def test_episode_add_takes_its_text_as_an_argument(run, places):
    res = run(places["repo"], "episode", "add", "--type", "decision", "we cap retries at three", "--session", "s1",
              "--json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["added"][0]["content"] == "we cap retries at three"
    twice = run(places["repo"], "episode", "add", "--type", "decision", "x", "--content", "y", "--json")
    assert twice.code == 2 and "given twice" in json.loads(twice.out)["error"]["message"]
    res = run(places["repo"], "episode", "add", "--type", "finding")
    assert res.code == 2 and 'flowgit episode add --type finding "what happened"' in res.err


def test_human_errors_stay_one_line_on_stderr(run, places):
    res = run(places["repo"], "episode", "add", "what happened")
    assert res.code == 2 and res.out == ""
    assert res.err.startswith("flowgit: error: --type is required (fix: add --type with one of: finding")


def test_an_error_in_an_option_names_the_option_not_a_file(run, repo):
    """`file` is something to open: an option is named under `option`, with `file` null."""
    run(repo, "init", "--no-hooks")
    res = run(repo, "--json", "episode", "add", "--type", "findng", "--session", "s1", "a fact")
    error = json.loads(res.out)["error"]
    assert res.code == 2 and error["file"] is None and error["option"] == "--type" and "finding" in error["fix"]



@pytest.mark.parametrize("argv, option", [(["log", "--since", "notadate"], "--since"),
                                          (["log", "--limit", "abc"], "--limit"),
                                          (["patterns", "--section", "Nope"], "--section"),
                                          (["audit", "--jobs", "0"], "--jobs"),
                                          (["episode", "list", "--since", "2026-13-45"], "--since"),
                                          (["episode", "search", "x", "--until", "notadate"], "--until"),
                                          (["candidates", "--date", "2026-13-45"], "--date"),
                                          (["wrap", "--plan", "-", "--date", "2026-13-45"], "--date")])
def test_every_option_error_names_its_option(run, places, argv, option):
    res = run(places["repo"], "--json", *argv, stdin='{"session": "s1", "state": "Focus: x."}')
    error = json.loads(res.out)["error"]
    assert res.code == 2 and error["option"] == option and error["file"] is None, error


def test_a_bad_date_in_the_plan_names_the_plan(run, places, tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text('{"session": "s1", "date": "2026-13-45", "state": "Focus: x."}')
    error = json.loads(run(places["repo"], "--json", "wrap", "--plan", str(plan)).out)["error"]
    assert error["file"] == str(plan) and error["option"] is None and "2026-13-45" in error["message"], error


def test_an_episode_without_its_text_names_the_argument_not_a_file(run, places):
    error = json.loads(run(places["repo"], "--json", "episode", "add", "--type", "finding").out)["error"]
    assert error["option"] == "TEXT" and error["file"] is None, error
