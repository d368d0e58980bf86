"""flowgit wrap in real repositories: the immune system, the sections, cleanup, the commit, rollback."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import pytest

from flowgit.dates import today
from flowgit.episodes import make_episode
from tests.conftest import git

SESSION_A, SESSION_B = "sess-a", "sess-b"


def ep(content, session, type_="finding", ts="2026-11-20T10:00:00Z", agent="agent-a", tags=("retries",)):
    return make_episode({"type": type_, "content": content, "session": session, "ts": ts, "agent": agent,
                         "tags": list(tags)})


A1 = ep("retry storm multiplied provider load during the outage", SESSION_A)
A2 = ep("retry budget per request kept the queue stable under load", SESSION_A, "outcome", agent="agent-b")
B1 = ep("budget on retries held provider load flat in the second outage", SESSION_B, "observation")
ONE = [ep("retry cap stopped the storm", "solo"), ep("retry budget limited request fan-out", "solo", "outcome"),
       ep("retries per request bounded by a budget", "solo", "observation")]
UNRELATED = ep("the coffee machine on floor two was repaired", SESSION_B, tags=("office",))

BASE = """# Continuity

## Current State
Focus: outages. Critical path: retry budget.

## Top of Mind
- provider storms

## Action Items
- write the retry budget — seen: Nov 20, next: Nov 25
- ask the provider for their status page

## Recent Context
We chased two outages this week.

## Developing Knowledge
!! retry_budget: cap retries per request so outages cannot multiply load | 2x (RELIABILITY) [evidence: {a1}, {b1}]
! cache_first: serve balances from cache before the provider | 1x

## Proven Knowledge
!! backoff_jitter: jittered backoff spreads retry waves over time | 3x (RELIABILITY — 2026-11-25) [evidence: {j1}, {j2}, {j3}]

## Foundation
Write the episode before the pattern.
"""

J = [ep("jittered backoff spread the retry wave", "j1", tags=("backoff",)),
     ep("backoff jitter avoided a thundering herd of retries", "j2", tags=("backoff",)),
     ep("jitter on backoff waves halved the peak", "j3", agent="reviewer", tags=("backoff",))]


def base_text() -> str:
    return BASE.format(a1=A1.id, b1=B1.id, j1=J[0].id, j2=J[1].id, j3=J[2].id)


@pytest.fixture
def wrap_repo(repo: Path, run) -> Path:
    run(repo, "init", "--no-hooks")
    (repo / "CONTINUITY.md").write_text(base_text())
    store = repo / ".flow" / "episodes.jsonl"
    store.write_text("".join(e.to_json() + "\n" for e in [A1, A2, B1, *ONE, UNRELATED, *J]))
    git(repo, "add", "-A")
    env = {**os.environ, "GIT_COMMITTER_DATE": "2026-11-24T12:00:00Z", "GIT_AUTHOR_DATE": "2026-11-24T12:00:00Z"}
    subprocess.run(["git", "commit", "-qm", "base"], cwd=repo, check=True, env=env)
    return repo


def snapshot(repo: Path) -> dict:
    """Everything a wrap could touch: working files, the index, HEAD."""
    files = {p.relative_to(repo).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in repo.rglob("*") if p.is_file() and ".git" not in p.relative_to(repo).parts}
    return {"files": files, "index": hashlib.sha256((repo / ".git" / "index").read_bytes()).hexdigest(),
            "head": git(repo, "rev-parse", "HEAD").strip(), "status": git(repo, "status", "--porcelain")}


def wrap(run, repo, plan: dict | str, *args: str):
    is_yaml = isinstance(plan, str) and not plan.lstrip().startswith("{")
    path = repo.parent / ("plan.yaml" if is_yaml else "plan.json")
    path.write_text(plan if isinstance(plan, str) else json.dumps(plan))
    return run(repo, "wrap", "--plan", str(path), "--date", "2026-11-26", *args)


def graduate_plan(evidence, **extra):
    return {"session": "sess-c", "patterns": [{"op": "graduate", "name": "retry_budget", "evidence": evidence}],
            **extra}


# --------------------------------------------------------------- the immune system
def test_graduation_with_three_independent_episodes_from_two_sessions_commits(run, wrap_repo):
    res = wrap(run, wrap_repo, graduate_plan([A2.id]), "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["committed"] and not data["refused"]
    trailers = git(wrap_repo, "log", "--format=%(trailers:key=Graduated,valueonly)")
    assert f"retry_budget [evidence: {A1.id}, {B1.id}, {A2.id}]" in trailers
    text = (wrap_repo / "CONTINUITY.md").read_text()
    proven = text.split("## Proven Knowledge")[1]
    assert "!! retry_budget:" in proven and "| 3x (RELIABILITY — 2026-11-26)" in proven
    assert "retry_budget" not in text.split("## Proven Knowledge")[0]
    subject = git(wrap_repo, "log", "-1", "--format=%s").strip()
    assert subject == "Session wrap Nov 26 — graduated retry_budget to Proven"


def test_three_episodes_from_one_session_are_refused_and_nothing_changes(run, wrap_repo):
    before = snapshot(wrap_repo)
    plan = {"session": "sess-c", "patterns": [{"op": "increment", "name": "cache_first",
                                               "evidence": [e.id for e in ONE]}]}
    plan["patterns"].append({"op": "graduate", "name": "retry_budget", "evidence": [e.id for e in ONE]})
    (wrap_repo / "CONTINUITY.md").write_text(base_text().replace(A1.id + ", " + B1.id, ONE[0].id + ", " + ONE[1].id))
    git(wrap_repo, "commit", "-qam", "evidence from one session only", "--no-verify")
    before = snapshot(wrap_repo)
    res = wrap(run, wrap_repo, {"session": "sess-c", "patterns": [
        {"op": "graduate", "name": "retry_budget", "evidence": [ONE[2].id]}]}, "--json")
    data = json.loads(res.out)
    assert res.code == 3 and data["nothing_to_do"]  # nothing committed because of the refusal
    assert data["refused"][0]["name"] == "retry_budget"
    assert "from 2 different sessions or agents; has 1 from 1 source" in data["refused"][0]["reasons"][0]
    assert snapshot(wrap_repo) == before
    strict = wrap(run, wrap_repo, {"session": "sess-c", "state": "new focus", "patterns": [
        {"op": "graduate", "name": "retry_budget", "evidence": [ONE[2].id]}]}, "--strict")
    assert strict.code == 1 and "--strict" in strict.err
    assert snapshot(wrap_repo) == before


RICH_2X = f"!! retry_budget: cap retries per request so outages cannot multiply load | 2x (RELIABILITY) " \
          f"[evidence: {A1.id}, {B1.id}, {A2.id}]"  # enough for 3x: what it lacks is evidence since the raise


def _rich_2x(repo: Path) -> str:
    text = base_text().replace(f"[evidence: {A1.id}, {B1.id}]", f"[evidence: {A1.id}, {B1.id}, {A2.id}]")
    (repo / "CONTINUITY.md").write_text(text)
    git(repo, "commit", "-qam", "2x on three episodes")
    return text


def test_a_graduation_on_no_new_evidence_is_refused_alone_and_the_rest_commits(run, wrap_repo):
    """G202 is refused like any promotion (the pattern stays at 2x), not by the gate for the whole wrap."""
    _rich_2x(wrap_repo)
    res = wrap(run, wrap_repo, {**graduate_plan([]), "state": "Focus: css."}, "--json")
    data = json.loads(res.out)
    assert res.code == 0 and data["committed"] and not data["gate_refused"], res.out
    refusal = data["refused"][0]
    assert (refusal["name"], refusal["stays_at"], refusal["codes"]) == ("retry_budget", 2, ["G202"])
    assert refusal["reasons"] == ["cites no new evidence: every episode it names is already on the line (a level "
                                  "is raised on episodes recorded since the last raise: cite this session's)"]
    text = (wrap_repo / "CONTINUITY.md").read_text()
    assert RICH_2X in text.split("## Proven Knowledge")[0] and "Focus: css." in text


def test_a_hand_graduation_on_no_new_evidence_is_put_back_and_the_rest_commits(run, wrap_repo):
    text = _rich_2x(wrap_repo).replace(RICH_2X + "\n", "").replace("Focus: outages. Critical path: retry budget.",
                                                                    "Focus: css.")
    text = text.replace("## Foundation", RICH_2X.replace("| 2x (RELIABILITY)", "| 3x (RELIABILITY — 2026-11-26)")
                        + "\n\n## Foundation")
    (wrap_repo / "CONTINUITY.md").write_text(text)
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26", "--json")
    data = json.loads(res.out)
    assert res.code == 0 and data["committed"] and not data["gate_refused"], res.out
    assert [(r["name"], r["op"], r["codes"]) for r in data["refused"]] == [("retry_budget", "graduate", ["G202"])]
    committed = git(wrap_repo, "show", "HEAD:CONTINUITY.md")
    assert RICH_2X in committed.split("## Proven Knowledge")[0] and "Focus: css." in committed
    developing = committed.split("## Developing Knowledge\n")[1].split("\n\n")[0].splitlines()
    assert developing[0] == RICH_2X and developing[1].startswith("! cache_first:"), developing  # in its place


def test_a_strict_refusal_under_json_is_one_json_error_on_stdout_with_exit_1(run, wrap_repo):
    """--json makes every error JSON on stdout, the --strict refusal too (same exit code, nothing written)."""
    before = snapshot(wrap_repo)
    res = wrap(run, wrap_repo, {"session": "sess-c", "state": "new focus", "patterns": [
        {"op": "increment", "name": "cache_first", "evidence": [ONE[0].id]}]}, "--strict", "--json")
    assert res.code == 1 and res.err == ""
    error = json.loads(res.out)["error"]
    assert error["message"].startswith("--strict: ") and ": patterns[0]: `cache_first` stays at 1x (increment " \
        "refused [G103" in error["message"]
    assert error["fix"] == "record the missing episodes, or drop the promotion from the plan"
    assert snapshot(wrap_repo) == before


def test_episodes_one_agent_appends_in_this_commit_count_once_and_the_rest_of_the_wrap_commits(run, wrap_repo):
    """Two episodes one agent records in two sessions and commits with the wrap are one source to the gate
    (G103); the wrap judges the same, so the increment is refused and the State it replaces still commits."""
    ids = []
    for session, text in (("q1", "serving balances from cache before the provider cut its calls in half"),
                          ("q2", "balances served from cache first kept the provider quiet again")):
        episode = {"type": "outcome", "content": text, "session": session, "agent": "agent-q"}
        assert run(wrap_repo, "episode", "add", stdin=json.dumps(episode) + "\n").code == 0
        ids.append(next(json.loads(ln)["id"] for ln in (wrap_repo / ".flow" / "episodes.jsonl").read_text()
                        .splitlines() if text in ln))
    res = wrap(run, wrap_repo, {"session": "q2", "agent": "agent-q", "state": "Focus: the cache in staging.",
                                "patterns": [{"op": "increment", "name": "cache_first", "evidence": ids}]},
               "--json")
    data = json.loads(res.out)
    assert res.code == 0 and data["committed"], res.out + res.err
    assert data["refused"][0]["name"] == "cache_first" and "G103" in data["refused"][0]["codes"]
    text = (wrap_repo / "CONTINUITY.md").read_text()
    assert "! cache_first: serve balances from cache before the provider | 1x" in text
    assert "Focus: the cache in staging." in text


def test_unknown_and_unrelated_evidence_are_refused(run, wrap_repo):
    before = snapshot(wrap_repo)
    res = wrap(run, wrap_repo, graduate_plan(["ep-000000000000"]), "--json")
    data = json.loads(res.out)
    assert "not in the store: ep-000000000000" in data["refused"][0]["reasons"][0]
    res = wrap(run, wrap_repo, graduate_plan([UNRELATED.id]), "--json")
    data = json.loads(res.out)
    assert any("not about `retry_budget`" in r for r in data["refused"][0]["reasons"])
    assert snapshot(wrap_repo) == before


def test_demotion_moves_the_pattern_back_with_its_reason(run, wrap_repo):
    plan = {"session": "sess-c", "episodes": [
        {"type": "tension", "content": "jittered backoff made retry waves worse for batch jobs", "tags": ["backoff"],
         "ts": "2026-11-26T08:00:00Z"}],
        "patterns": [{"op": "demote", "name": "backoff_jitter", "reason": "batch jobs got worse", "evidence": ["#0"]}]}
    res = wrap(run, wrap_repo, plan)
    assert res.code == 0, res.err
    text = (wrap_repo / "CONTINUITY.md").read_text()
    developing = text.split("## Developing Knowledge")[1].split("## Proven Knowledge")[0]
    assert "!! backoff_jitter:" in developing and "| 2x (RELIABILITY)" in developing
    assert "[demoted 2026-11-26: batch jobs got worse (ep-" in developing
    assert J[0].id in developing  # the evidence trail is kept
    assert "Demoted: backoff_jitter" in git(wrap_repo, "log", "-1", "--format=%B")


def test_a_demotion_is_never_dated_before_the_episode_that_caused_it(run, wrap_repo):
    """A wrap dated earlier than the contradicting episode's recording dates its note on that recording: the
    gate refuses a demotion before its own cause (G206), so the wrap never writes one."""
    plan = {"session": "sess-c", "episodes": [
        {"type": "tension", "content": "jittered backoff made retry waves worse for batch jobs", "tags": ["backoff"],
         "ts": "2026-11-28T08:00:00Z"}],
        "patterns": [{"op": "demote", "name": "backoff_jitter", "reason": "batch jobs got worse", "evidence": ["#0"]}]}
    res = wrap(run, wrap_repo, plan)  # dated 2026-11-26
    assert res.code == 0, res.out + res.err
    assert "[demoted 2026-11-28: batch jobs got worse (ep-" in (wrap_repo / "CONTINUITY.md").read_text()


def test_sections_semantics(run, wrap_repo):
    plan = {"session": "sess-c", "state": "Focus: breaker.", "top_of_mind": ["breaker thresholds"],
            "recent": "The outages taught us to budget retries.",
            "actions": {"done": ["write the retry budget"], "remove": ["status page"],
                        "next": {"write the retry": "Dec 3"}, "add": ["measure the breaker"]}}
    assert wrap(run, wrap_repo, plan).code == 0
    text = (wrap_repo / "CONTINUITY.md").read_text()
    assert "## Current State\nFocus: breaker.\n" in text and "Critical path: retry budget" not in text
    assert "## Top of Mind\n- breaker thresholds\n" in text
    assert "- ✓ write the retry budget — seen: Nov 20, next: Dec 3" in text
    assert "status page" not in text and "- measure the breaker" in text
    assert "We chased two outages" not in text and "The outages taught us to budget retries." in text


def test_a_plan_dates_an_item_it_adds_and_keeps_seen_before_next(run, wrap_repo):
    plan = {"session": "sess-c", "actions": {"add": ["ship the breaker — next: Dec 10"],
                                             "seen": {"ship the breaker": "Dec 3"}}}
    res = wrap(run, wrap_repo, plan)
    assert res.code == 0, res.err
    assert "- ship the breaker — seen: Dec 3, next: Dec 10" in (wrap_repo / "CONTINUITY.md").read_text()


def test_an_action_entry_naming_no_item_says_what_the_items_are(run, wrap_repo):
    res = wrap(run, wrap_repo, {"session": "sess-c", "actions": {"next": {"nothing like it": "Dec 9"}}})
    assert res.code == 2 and "matches no action item" in res.err
    assert "(items now: \"write the retry budget\"" in res.err


# ------------------------------------------------------------------- cleanup
def test_cleanup_archives_ten_day_stale_developing_and_keeps_three_day(run, wrap_repo):
    text = base_text().replace("! cache_first: serve balances from cache before the provider | 1x",
                               "! cache_first: serve balances from cache before the provider | 1x\n"
                               "! fresh_idea: measure before tuning the pool | 1x")
    (wrap_repo / "CONTINUITY.md").write_text(text)
    git(wrap_repo, "add", "-A")
    env = {**os.environ, "GIT_COMMITTER_DATE": "2026-12-01T12:00:00Z", "GIT_AUTHOR_DATE": "2026-12-01T12:00:00Z"}
    subprocess.run(["git", "commit", "-qm", "fresh idea", "--no-verify"], cwd=wrap_repo, check=True, env=env)
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-12-04", "--json")
    data = json.loads(res.out)
    assert res.code == 0, res.err
    archived = {a["name"]: a["days"] for a in data["archived"]}
    # last changed Nov 24 (evidence Nov 20): 10 days by Dec 4 (counted up to today at the latest: a wrap dated
    # ahead does not age the memory); fresh_idea changed Dec 1: 3 days, kept;
    # backoff_jitter is Proven (dated Nov 25): 9 days is well inside its 30-day window
    days = (min(date(2026, 12, 4), today()) - date(2026, 11, 24)).days
    assert archived == {"cache_first": days, "retry_budget": days}
    after = (wrap_repo / "CONTINUITY.md").read_text()
    assert "cache_first" not in after and "fresh_idea" in after and "backoff_jitter" in after
    body = git(wrap_repo, "log", "-1", "--format=%B")
    assert "Archived: cache_first" in body and "Archived: retry_budget" in body
    nothing = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-12-04", "--no-cleanup")
    assert "nothing to wrap" in nothing.out


# ----------------------------------------------------------------- rollback
@pytest.mark.parametrize("point", ["2-candidates", "3-validate", "5-demotion", "1-episodes", "4-sections", "6-stage"])
def test_failure_at_each_step_leaves_everything_as_it_was(run, wrap_repo, monkeypatch, point):
    before = snapshot(wrap_repo)
    monkeypatch.setenv("FLOWGIT_FAULT", point)
    plan = graduate_plan([A2.id], episodes=[{"type": "finding", "content": "retry budget held again"}],
                         state="Focus: something new")
    with pytest.raises(Exception, match="injected failure"):
        wrap(run, wrap_repo, plan)
    assert snapshot(wrap_repo) == before
    assert not (wrap_repo / ".git" / "flowgit-wrap.journal").exists()


def test_a_rejecting_hook_rolls_everything_back(run, wrap_repo):
    hook = wrap_repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'policy: no commits today' >&2\nexit 1\n")
    hook.chmod(0o755)
    before = snapshot(wrap_repo)
    res = wrap(run, wrap_repo, graduate_plan([A2.id], episodes=[{"type": "finding", "content": "retry again"}]))
    assert res.code == 1 and "policy: no commits today" in res.err
    assert snapshot(wrap_repo) == before


def test_a_killed_wrap_is_rolled_back(wrap_repo, tmp_path):
    before = snapshot(wrap_repo)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(graduate_plan([A2.id], episodes=[{"type": "finding", "content": "retry x"}],
                                             state="Focus: killed")))
    marker = tmp_path / "paused"
    env = {**os.environ, "FLOWGIT_PAUSE": "4-sections", "FLOWGIT_PAUSE_FILE": str(marker)}
    proc = subprocess.Popen([sys.executable, "-m", "flowgit", "wrap", "--plan", str(plan), "--date", "2026-11-26"],
                            cwd=wrap_repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(300):
        if marker.exists() and marker.read_text():
            break
        time.sleep(0.05)
    assert "Focus: killed" in (wrap_repo / "CONTINUITY.md").read_text()  # it was mid-write
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    res = subprocess.run([sys.executable, "-m", "flowgit", "wrap", "--recover"], cwd=wrap_repo,
                         capture_output=True, text=True)
    assert res.returncode == 0 and "rolled back" in res.stdout
    assert snapshot(wrap_repo) == before


# --------------------------------------------------------------- bad plans
@pytest.mark.parametrize("plan, field", [
    ({"session": "s", "state": 3}, "plan.state"),
    ({"session": "s", "patterns": [{"op": "graduate", "name": "nope", "evidence": []}]}, "plan.patterns[0].name"),
    ({"session": "s", "patterns": [{"op": "promote", "name": "retry_budget"}]}, "plan.patterns[0].op"),
    ({"session": "s", "sections": {"Mood": "x"}}, "plan.sections"),
    ({"session": "s", "episodes": [{"type": "rumour", "content": "x"}]}, "plan.episodes[0].type"),
    ({"session": "s", "patterns": [{"op": "increment", "name": "retry_budget", "evidence": ["#4"]}]},
     "plan.patterns[0].evidence[0]"),
    ({"session": "s", "actions": {"done": ["no such item"]}}, "plan.actions.done"),
    ({"session": "s", "state": "focus\u0000here"}, "plan.state` holds a NUL"),  # not "CONTINUITY.md is binary"
    ('{"session": "s", "state": }', "malformed JSON"),
    ("session: s\nstate: [unclosed\n", "malformed YAML"),
])
def test_bad_plans_name_the_field_and_change_nothing(run, wrap_repo, plan, field):
    before = snapshot(wrap_repo)
    res = wrap(run, wrap_repo, plan)
    assert res.code == 2, (res.out, res.err)
    assert field in res.err and "Traceback" not in res.err
    assert snapshot(wrap_repo) == before


def test_yaml_plan_and_schema(run, wrap_repo):
    schema = json.loads(run(wrap_repo, "wrap", "--schema").out)
    assert schema["properties"]["patterns"]["items"]["oneOf"][0]["properties"]["op"] == {"const": "add"}
    res = wrap(run, wrap_repo, "session: sess-y\nstate: |\n  Focus: yaml works.\n")
    assert res.code == 0, res.err
    assert "Focus: yaml works." in (wrap_repo / "CONTINUITY.md").read_text()


# ------------------------------------------------------- both modes, idempotence
def test_plan_and_working_tree_modes_make_the_same_commit(run, wrap_repo, tmp_path):
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(wrap_repo), str(clone))
    plan = graduate_plan([A2.id, "#0"], episodes=[{"type": "outcome", "content": "retry budget held in outage three",
                                                    "ts": "2026-11-26T09:00:00Z", "tags": ["retries"]}],
                         state="Focus: breaker next.")
    assert wrap(run, wrap_repo, plan).code == 0
    text = (wrap_repo / "CONTINUITY.md").read_text()
    new_line = (wrap_repo / ".flow" / "episodes.jsonl").read_text().splitlines()[-1]
    # the agent's way: edit the file, record the episode, then wrap without a plan
    (clone / "CONTINUITY.md").write_text(text)
    run(clone, "episode", "add", stdin=new_line + "\n")
    res = run(clone, "wrap", "--session", "sess-c", "--date", "2026-11-26")
    assert res.code == 0, res.err
    assert git(clone, "rev-parse", "HEAD^{tree}") == git(wrap_repo, "rev-parse", "HEAD^{tree}")
    assert git(clone, "log", "-1", "--format=%B") == git(wrap_repo, "log", "-1", "--format=%B")


def test_working_tree_mode_reverts_a_refused_promotion(run, wrap_repo):
    text = base_text().replace("! cache_first: serve balances from cache before the provider | 1x",
                               f"!! cache_first: serve balances from cache before the provider | 2x (PERF) "
                               f"[evidence: {UNRELATED.id}]")
    (wrap_repo / "CONTINUITY.md").write_text(text.replace("Focus: outages.", "Focus: caching."))
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26", "--json")
    data = json.loads(res.out)
    assert res.code == 0 and data["refused"][0]["name"] == "cache_first"
    after = git(wrap_repo, "show", "HEAD:CONTINUITY.md")  # committed: put back, the rest of the edit kept
    assert "! cache_first: serve balances from cache before the provider | 1x" in after
    assert "Focus: caching." in after
    working = (wrap_repo / "CONTINUITY.md").read_text()  # the working file: the refused line as typed, alone
    assert working == after.replace("! cache_first: serve balances from cache before the provider | 1x",
                                    f"!! cache_first: serve balances from cache before the provider | 2x (PERF) "
                                    f"[evidence: {UNRELATED.id}]")
    human = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26")  # judged again, still refused
    assert human.code == 3 and "left in the working tree as you wrote them" in human.out
    assert (wrap_repo / "CONTINUITY.md").read_text() == working


def test_a_refused_line_is_not_written_back_over_an_editors_save(wrap_repo, tmp_path):
    """Between the commit and the write-back of the refused line, an editor saves the file: the save stands
    (the write-back goes only over the bytes the wrap wrote), the commit stands, and the line is shown."""
    import subprocess
    import sys
    import time

    text = base_text().replace("! cache_first: serve balances from cache before the provider | 1x",
                               f"!! cache_first: serve balances from cache before the provider | 2x (PERF) "
                               f"[evidence: {UNRELATED.id}]")
    path = wrap_repo / "CONTINUITY.md"
    path.write_text(text.replace("Focus: outages.", "Focus: caching."))
    marker, release = tmp_path / "paused", tmp_path / "release"
    env = {**os.environ, "FLOWGIT_PAUSE": "8-working-file", "FLOWGIT_PAUSE_FILE": str(marker),
           "FLOWGIT_PAUSE_RELEASE": str(release)}
    proc = subprocess.Popen([sys.executable, "-m", "flowgit", "wrap", "--session", "sess-c", "--date", "2026-11-26"],
                            cwd=wrap_repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(1500):
        if marker.exists() and marker.read_text():
            break
        time.sleep(0.02)
    saved = path.read_text() + "\nA note the editor saved.\n"
    path.write_text(saved)
    release.touch()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, out + err
    assert path.read_text() == saved  # the editor's bytes, untouched
    assert "put back; your line was: !! cache_first:" in out and "committed" in out


def test_a_refused_graduation_by_hand_is_not_left_where_it_was_never_typed(run, wrap_repo):
    """A refused move between sections (a graduation typed into Proven) goes back to Developing in the commit;
    the line as typed belongs in Proven, where the commit does not hold it: it is shown, not written into
    Developing, and the working file is the commit's."""
    line = "! cache_first: serve balances from cache before the provider | 1x"
    typed = (f"!! cache_first: serve balances from cache before the provider | 3x (PERF — 2026-11-26) "
             f"[evidence: {UNRELATED.id}]")
    text = base_text().replace(line + "\n", "").replace("## Proven Knowledge\n", f"## Proven Knowledge\n{typed}\n")
    (wrap_repo / "CONTINUITY.md").write_text(text.replace("Focus: outages.", "Focus: caching."))
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26", "--json")
    data = json.loads(res.out)
    assert res.code == 0 and data["refused"][0]["name"] == "cache_first", res.out
    assert data["left_in_working_tree"] == []
    assert (wrap_repo / "CONTINUITY.md").read_text() == git(wrap_repo, "show", "HEAD:CONTINUITY.md")
    assert data["refused"][0]["written"] == typed


def test_the_same_plan_twice_changes_nothing_the_second_time(run, wrap_repo):
    plan = graduate_plan([A2.id], episodes=[{"type": "finding", "content": "retry budget again"}],
                         state="Focus: twice", actions={"done": ["write the retry budget"], "add": ["new thing"]},
                         top_of_mind=["a", "b"], recent="Prose.")
    plan["patterns"] += [{"op": "add", "name": "pool_sizing", "text": "size pools from measurements"},
                         {"op": "archive", "name": "cache_first"}]
    assert wrap(run, wrap_repo, plan).code == 0
    head = git(wrap_repo, "rev-parse", "HEAD")
    before = snapshot(wrap_repo)
    again = wrap(run, wrap_repo, plan)
    assert again.code == 3 and "nothing to wrap" in again.out  # every operation ignored, printed
    assert "ignored: add `pool_sizing`" in again.out
    assert git(wrap_repo, "rev-parse", "HEAD") == head and snapshot(wrap_repo) == before


def test_dry_run_writes_nothing(run, wrap_repo):
    before = snapshot(wrap_repo)
    res = wrap(run, wrap_repo, graduate_plan([A2.id]), "--dry-run")
    assert res.code == 0 and "Graduated: retry_budget" in res.out and "+!! retry_budget" in res.out
    assert snapshot(wrap_repo) == before


def test_dry_run_diff_shows_every_store_line_the_commit_adds(run, wrap_repo):
    """Episodes recorded with `episode add` since HEAD are committed by the wrap: its diff shows them too."""
    added = run(wrap_repo, "episode", "add", "--json", "--type", "finding", "--session", "sess-c",
                "the retry budget held again in the fifth outage")
    recorded = json.loads(added.out)["added"][0]["id"]
    plan = graduate_plan([A2.id], episodes=[{"type": "finding", "content": "the plan's own episode"}])
    res = wrap(run, wrap_repo, plan, "--dry-run", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    store_diff = data["diff"].split("+++ b/.flow/episodes.jsonl\n", 1)[1]
    lines = [json.loads(line[1:])["id"] for line in store_diff.splitlines()]
    assert lines[0] == recorded and len(lines) == 2 and set(lines) == set(data["episodes_recorded"])
    bare = wrap(run, wrap_repo, {"session": "sess-c"}, "--dry-run", "--json")
    assert recorded in json.loads(bare.out)["diff"]  # a plan with no episodes of its own: still not empty


def test_candidates(run, wrap_repo):
    run(wrap_repo, "episode", "add", stdin=json.dumps(
        {"type": "tension", "content": "jittered backoff delayed retries for batch jobs", "session": "sess-z",
         "tags": ["backoff"]}) + "\n" + json.dumps(
        {"type": "finding", "content": "serving balances from cache cut provider calls", "session": "sess-z"}) + "\n")
    res = run(wrap_repo, "candidates", "--date", "2026-11-26", "--json")
    data = json.loads(res.out)
    assert [x["name"] for x in data["fired_again"]] == ["cache_first"]
    # the tension says "retries", rare in this store: G104 accepts it as about retry_budget, so it is new
    # evidence from a third session (Step 2 reads "fired" as the gate reads evidence, by what an episode says)
    assert [x["name"] for x in data["ready_to_graduate"]] == ["retry_budget"] and not data["not_yet"]
    assert [x["name"] for x in data["demotion"]] == ["backoff_jitter"]
    human = run(wrap_repo, "candidates", "--date", "2026-11-26")
    assert "1x patterns that fired again" in human.out and "cache_first" in human.out


def test_candidates_find_near_duplicates(run, wrap_repo):
    text = base_text().replace("! cache_first: serve balances from cache before the provider | 1x",
                               "! cache_first: serve balances from cache before the provider | 1x\n"
                               "! balance_cache: serve balances from the cache before asking the provider | 1x")
    (wrap_repo / "CONTINUITY.md").write_text(text)
    data = json.loads(run(wrap_repo, "candidates", "--date", "2026-11-26", "--json").out)
    pairs = [set(x["patterns"]) for x in data["near_duplicates"]]
    assert {"cache_first", "balance_cache"} in pairs


def test_working_tree_mode_puts_a_refused_new_pattern_at_1x(run, wrap_repo):
    text = base_text().replace("## Proven Knowledge",
                               f"!! pool_sizing: size pools from measured load | 2x (PERF) [evidence: {UNRELATED.id}]\n"
                               "\n## Proven Knowledge")
    (wrap_repo / "CONTINUITY.md").write_text(text)
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert [r["name"] for r in data["refused"]] == ["pool_sizing"]
    after = git(wrap_repo, "show", "HEAD:CONTINUITY.md")
    assert "! pool_sizing: size pools from measured load | 1x\n" in after
    assert f"!! pool_sizing: size pools from measured load | 2x (PERF) [evidence: {UNRELATED.id}]\n" in \
        (wrap_repo / "CONTINUITY.md").read_text()  # what was typed stays in the working file
    assert data["left_in_working_tree"] == ["pool_sizing"]


def test_the_commit_message_file_lives_in_the_git_directory(wrap_repo, tmp_path):
    """The message (its trailers name the session's patterns) is written where the repository lives, so a wrap
    killed mid-commit leaves it there, not in the temporary directory other users share."""
    shared_tmp = tmp_path / "tmp"
    shared_tmp.mkdir()
    in_git, in_tmp = tmp_path / "in-git", tmp_path / "in-tmp"
    hook = wrap_repo / ".git" / "hooks" / "pre-commit"  # runs while git commits: the message file exists then
    hook.write_text(f"#!/bin/sh\nls \"$(git rev-parse --git-dir)\" > '{in_git}'\nls -A '{shared_tmp}' > '{in_tmp}'\n")
    hook.chmod(0o755)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(graduate_plan([A2.id])))
    res = subprocess.run([sys.executable, "-m", "flowgit", "wrap", "--plan", str(plan), "--date", "2026-11-26"],
                         cwd=wrap_repo, env={**os.environ, "TMPDIR": str(shared_tmp)}, capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr
    assert "flowgit-wrap.message" in in_git.read_text().split()  # there while git commits
    assert in_tmp.read_text().split() == []
    assert not list((wrap_repo / ".git").glob("flowgit-wrap*"))  # then gone, with the journal


def test_a_link_planted_at_the_message_file_is_replaced_not_written_through(run, wrap_repo, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (wrap_repo / ".git" / "flowgit-wrap.message").symlink_to(victim)
    res = wrap(run, wrap_repo, graduate_plan([A2.id]))
    assert res.code == 0, res.err
    assert victim.read_text() == "keep me\n"
    assert "Graduated: retry_budget" in git(wrap_repo, "log", "-1", "--format=%B")
    assert not list((wrap_repo / ".git").glob("flowgit-wrap*"))


def test_a_session_or_agent_with_a_line_break_is_refused_before_it_can_forge_a_trailer(run, wrap_repo):
    """In the `Flow-Session:` trailer a line break would start a trailer of its own: `Flow-Override:`."""
    before = snapshot(wrap_repo)
    forged = "a\nFlow-Override: forged by a session name"
    res = wrap(run, wrap_repo, {"session": forged, "state": "Focus: now."})
    assert res.code == 2 and "holds a control character (\\n)" in res.err and "Traceback" not in res.err
    res = wrap(run, wrap_repo, {"state": "Focus: now."}, "--session", forged)
    assert res.code == 2 and "control character" in res.err
    res = wrap(run, wrap_repo, {"session": "s", "agent": "x\ry", "state": "Focus: now."})
    assert res.code == 2 and "the agent" in res.err
    res = run(wrap_repo, "episode", "add", "--type", "finding", "--session", forged, "something happened")
    assert res.code == 2 and "option `--session` holds a control character" in res.err
    assert snapshot(wrap_repo) == before and "Flow-Override" not in git(wrap_repo, "log", "--format=%B")


def test_an_id_with_a_bidirectional_control_is_refused(run, wrap_repo):
    """U+202E in a `Flow-Session:` trailer makes one id display as another."""
    res = wrap(run, wrap_repo, {"session": "sess-\u202e1-noitcudorp", "state": "Focus: now."})
    assert res.code == 2 and "control character (\\u202e)" in res.err


def test_a_continuity_file_behind_a_symbolic_link_is_refused_up_front(run, wrap_repo):
    """git records the link's text: HEAD's "file" is a path, so every section looked new (three bogus G402s);
    the gate refuses to commit a link (G806) anyway, so the wrap says so before reading anything."""
    (wrap_repo / "notes").mkdir()
    git(wrap_repo, "mv", "CONTINUITY.md", "notes/cont.md")
    (wrap_repo / "CONTINUITY.md").symlink_to("notes/cont.md")
    git(wrap_repo, "add", "CONTINUITY.md")
    git(wrap_repo, "commit", "-qm", "linked", "--no-verify")
    before = snapshot(wrap_repo)
    res = wrap(run, wrap_repo, {"session": "sess-c", "state": "Focus: the link."})
    assert res.code == 2 and "symbolic link (to notes/cont.md)" in res.err and "G806" in res.err
    assert snapshot(wrap_repo) == before


def test_a_plan_does_not_replace_a_section_edited_by_hand_since_head(run, wrap_repo):
    """The plan's `state` would have thrown the hand-written line away, in the commit and on disk."""
    path = wrap_repo / "CONTINUITY.md"
    path.write_text(path.read_text().replace("Critical path: retry budget.",
                                             "Critical path: retry budget, then the hand-written breaker work."))
    before = snapshot(wrap_repo)
    res = wrap(run, wrap_repo, {"session": "sess-h", "state": "Focus: the plan's focus.",
                                "episodes": [{"type": "finding", "content": "the breaker opened in staging"}]})
    assert res.code == 2 and "`Current State` in the working tree holds an uncommitted edit" in res.err
    assert "CONTINUITY.md:" in res.err and "Traceback" not in res.err
    assert snapshot(wrap_repo) == before  # nothing written: the store, the file, the index, HEAD


def test_a_plan_whose_text_is_the_hand_edit_or_that_leaves_the_section_alone_goes_on(run, wrap_repo):
    path = wrap_repo / "CONTINUITY.md"
    edited = "Focus: outages. Critical path: retry budget, then the breaker."
    path.write_text(path.read_text().replace("Focus: outages. Critical path: retry budget.", edited))
    assert wrap(run, wrap_repo, {"session": "sess-h", "state": edited}).code == 0
    path.write_text(path.read_text().replace(edited, "Focus: the breaker, by hand."))
    res = wrap(run, wrap_repo, {"session": "sess-i", "recent": "The breaker work started this week."})
    assert res.code == 0, res.err
    assert "Focus: the breaker, by hand." in path.read_text()


def test_a_comment_line_written_by_hand_under_state_is_a_hand_edit_too(run, wrap_repo):
    """The replace keeps only the guidance comments above the content: a `# ` note below it was lost."""
    path = wrap_repo / "CONTINUITY.md"
    path.write_text(path.read_text().replace("Critical path: retry budget.\n",
                                             "Critical path: retry budget.\n# note to self: rotate the deploy key\n"))
    before = snapshot(wrap_repo)
    res = wrap(run, wrap_repo, {"session": "sess-h", "state": "Focus: the plan's focus."})
    assert res.code == 2 and "holds an uncommitted edit" in res.err and snapshot(wrap_repo) == before


def test_spacing_an_editor_trims_is_no_hand_edit(run, wrap_repo):
    path = wrap_repo / "CONTINUITY.md"
    path.write_text(path.read_text().replace("Critical path: retry budget.\n", "Critical path: retry budget.   \n\n"))
    res = wrap(run, wrap_repo, {"session": "sess-h", "state": "Focus: the plan's focus."})
    assert res.code == 0, res.err


def test_a_hand_edit_of_a_file_never_committed_is_kept_from_a_plan(run, repo):
    """Without a committed file (`flowgit init` without --commit) the guard had nothing to compare against."""
    run(repo, "init", "--no-hooks")
    path = repo / "CONTINUITY.md"
    lines = path.read_text().split("\n")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("## Current State"))
    while at + 1 < len(lines) and lines[at + 1].startswith("# "):
        at += 1
    lines.insert(at + 1, "Focus: rotate the deploy key first.")
    path.write_text("\n".join(lines))
    res = wrap(run, repo, {"session": "s1", "state": "Focus: the plan's focus."})
    assert res.code == 2 and "holds an uncommitted edit" in res.err
    assert "rotate the deploy key first" in path.read_text()


def test_a_crlf_resave_is_not_reported_as_sections_replaced(run, wrap_repo):
    """An editor re-saving the file with CRLF changes no section's text: the subject names only State, which
    the edit replaced."""
    text = base_text().replace("Focus: outages. Critical path: retry budget.", "Focus: a windows laptop.")
    (wrap_repo / "CONTINUITY.md").write_bytes(text.replace("\n", "\r\n").encode())
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26", "--json")
    data = json.loads(res.out)
    assert res.code == 0 and data["committed"], res.out
    assert data["summary"]["sections_changed"] == {"Current State": "replaced"}
    assert git(wrap_repo, "log", "-1", "--format=%s").strip() == "Session wrap Nov 26 — Current State replaced"


def test_a_thai_pattern_is_incremented_on_thai_episodes_that_say_it(run, repo):
    """Thai writes no spaces between words: read as pairs of letter clusters, an episode saying the pattern
    again is about it (not G104), and the pattern rises as a Chinese one does."""
    assert run(repo, "init", "--commit", "--no-hooks").code == 0
    said = ["เราอุ่นแคชก่อนดีพลอยแล้วดีพลอยเร็วขึ้นมาก", "หลังจากอุ่นแคชก่อนดีพลอย การดีพลอยเร็วขึ้นอีกครั้ง"]
    ids = []
    for n, text in enumerate(said):
        res = run(repo, "--json", "episode", "add", "--session", f"s{n}", "--agent", f"a{n}", "--type", "finding",
                  text)
        ids.append(json.loads(res.out)["added"][0]["id"])
        plan = {"session": f"s{n}", "state": f"Focus: cache {n}.", "patterns": [
            {"op": "add", "name": "อุ่น_แคช", "text": "อุ่นแคชก่อนดีพลอยเพื่อให้ดีพลอยเร็วขึ้น"} if n == 0 else
            {"op": "increment", "name": "อุ่น_แคช", "evidence": ids}]}
        res = wrap(run, repo, plan, "--json")
        assert res.code == 0 and not json.loads(res.out)["refused"], res.out
    line = next(ln for ln in (repo / "CONTINUITY.md").read_text().splitlines() if "อุ่น_แคช" in ln)
    assert line == f"!! อุ่น_แคช: อุ่นแคชก่อนดีพลอยเพื่อให้ดีพลอยเร็วขึ้น | 2x (GENERAL) [evidence: {ids[0]}, {ids[1]}]"


def test_archiving_a_pattern_a_proven_line_links_to_takes_the_name_off_the_link(run, wrap_repo):
    """A link naming a pattern the file no longer holds reads as words of the proven claim (G404): the wrap's
    archival takes the archived name off Proven links, so archiving is never refused for a link."""
    text = (wrap_repo / "CONTINUITY.md").read_text()
    proven = next(ln for ln in text.splitlines() if ln.startswith("!! backoff_jitter:"))
    (wrap_repo / "CONTINUITY.md").write_text(text.replace(proven, proven + " [-> cache_first, retry_budget]"))
    git(wrap_repo, "commit", "-qam", "link the proven line to two patterns")
    res = wrap(run, wrap_repo, {"session": "sess-c", "state": "Focus: cleanup.",
                                "patterns": [{"op": "archive", "name": "cache_first"}]}, "--json")
    assert res.code == 0 and json.loads(res.out)["committed"], res.out + res.err
    committed = git(wrap_repo, "show", "HEAD:CONTINUITY.md")
    assert proven + " [-> retry_budget]" in committed and "cache_first" not in committed, committed


def test_a_configured_name_with_glob_characters_commits_that_file_alone(run, repo):
    """git reads a plain pathspec as a glob: with `continuity = "mem[1].md"` the wrap's `git add`/`git commit`
    would also take up `mem1.md`, someone's unfinished edit included. The wrap names its files letter for letter."""
    for key, value in (("user.name", "t"), ("user.email", "t@example.com")):
        git(repo, "config", key, value)
    (repo / ".flowgit.toml").write_text('continuity = "mem[1].md"\n')
    git(repo, "add", ".flowgit.toml")
    git(repo, "commit", "-qm", "config")
    assert run(repo, "init", "--commit").code == 0
    (repo / "mem1.md").write_text("draft v1\n")
    git(repo, "add", "mem1.md")
    git(repo, "commit", "-qm", "a notes file", "--no-verify")
    (repo / "mem1.md").write_text("draft v1\nUNFINISHED\n")
    assert run(repo, "episode", "add", "--session", "s1", "--type", "finding", "brackets are legal in names").code == 0
    plan = repo.parent / "plan.json"
    plan.write_text(json.dumps({"session": "s1", "state": "Focus: naming."}))
    assert run(repo, "wrap", "--plan", str(plan)).code == 0
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [".flow/episodes.jsonl", "mem[1].md"]
    assert git(repo, "status", "--porcelain", "--", "mem1.md").strip() == "M mem1.md"
    assert (repo / "mem1.md").read_text() == "draft v1\nUNFINISHED\n"
