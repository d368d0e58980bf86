"""One verdict: with no hook installed, `flowgit wrap` refuses what the gate refuses, with the gate's codes."""

from __future__ import annotations

import json

import pytest

from tests.conftest import git
from tests.wrap.test_wrap import A1, B1, J, base_text, ep, snapshot, wrap, wrap_repo  # noqa: F401

C1 = ep("a per-request retry budget held provider load during the third outage", "sess-d", agent="agent-b")


@pytest.fixture
def rich_repo(run, wrap_repo):
    """retry_budget at 2x on three independent episodes (three sessions, two agents): enough for 3x."""
    text = base_text().replace(f"[evidence: {A1.id}, {B1.id}]", f"[evidence: {A1.id}, {B1.id}, {C1.id}]")
    (wrap_repo / "CONTINUITY.md").write_text(text)
    with (wrap_repo / ".flow" / "episodes.jsonl").open("a") as fh:
        fh.write(C1.to_json() + "\n")
    git(wrap_repo, "commit", "-qam", "a third source for retry_budget")
    assert not (wrap_repo / ".git" / "hooks" / "pre-commit").exists()
    return wrap_repo


def gate_codes(res) -> set[str]:
    data = json.loads(res.out)
    return {f["code"] for f in data["gate"] if f["severity"] == "error" and not f["overridden"]}


def hook_codes(run, repo) -> set[str]:
    """What `flowgit check` (the pre-commit hook) says about the same change, staged."""
    git(repo, "add", "-A")
    data = json.loads(run(repo, "check", "--json").out)
    git(repo, "reset", "-q")
    return {f["code"] for f in data["findings"] if f["severity"] == "error"}


# ----------------------------------------------------------------- plan mode
@pytest.mark.parametrize("plan, code", [
    ({"top_of_mind": ["provider storms", "breaker thresholds"]}, "G302"),
    ({"recent": "We chased two outages this week. Then a third one came."}, "G303"),
    ({"state": "Focus: breaker. Tradeoff: speed >< safety"}, "E001"),
    ({"state": "[decided] ship it"}, "E002"),
], ids=["G302-append-top", "G303-append-recent", "E001-flowscript", "E002-flowscript"])
def test_plan_mode_refused_with_the_gates_code(run, rich_repo, plan, code):
    before = snapshot(rich_repo)
    res = wrap(run, rich_repo, {"session": "sess-c", **plan}, "--json")
    assert res.code == 1, res.out
    assert code in gate_codes(res)
    data = json.loads(res.out)
    assert data["committed"] is None and data["gate_refused"]
    assert snapshot(rich_repo) == before  # file, store, index and HEAD untouched
    human = wrap(run, rich_repo, {"session": "sess-c", **plan})
    assert human.code == 1 and code in human.out and "the gate refuses this change" in human.out
    dry = wrap(run, rich_repo, {"session": "sess-c", **plan}, "--dry-run")
    assert dry.code == 1 and code in dry.out and "dry run" in dry.out
    assert snapshot(rich_repo) == before


# ------------------------------------------------------------ hand-edit mode
def _strip_proven_evidence(text: str) -> str:
    return text.replace(f"{J[1].id}, {J[2].id}]", f"{J[1].id}]")


def _drop_foundation(text: str) -> str:
    return text.replace("Write the episode before the pattern.\n", "")


def _graduate_without_new_evidence(text: str) -> str:
    line = next(ln for ln in text.splitlines() if ln.startswith("!! retry_budget:"))
    moved = line.replace("| 2x (RELIABILITY)", "| 3x (RELIABILITY — 2026-11-26)")
    return text.replace(line + "\n", "").replace("## Proven Knowledge\n", f"## Proven Knowledge\n{moved}\n")


def _tension_without_axis(text: str) -> str:
    return text.replace("Focus: outages.", "Focus: outages. cost >< latency")


@pytest.mark.parametrize("edit, code", [
    (_strip_proven_evidence, "G401"),
    (_drop_foundation, "G402"),
    (_tension_without_axis, "E001"),
], ids=["G401", "G402", "E001"])
def test_hand_edit_mode_refused_with_the_gates_code(run, rich_repo, edit, code):
    (rich_repo / "CONTINUITY.md").write_text(edit((rich_repo / "CONTINUITY.md").read_text()))
    before = snapshot(rich_repo)
    res = run(rich_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26", "--json")
    assert res.code == 1, res.out
    codes = gate_codes(res)
    assert code in codes
    assert snapshot(rich_repo) == before
    assert codes == hook_codes(run, rich_repo)  # the same findings the hook prints


def test_a_raise_on_no_new_evidence_is_refused_on_its_own_with_g202_in_either_mode(run, rich_repo):
    """G202 is a promotion's refusal, as G101 and G103 are: the pattern stays at its level, the wrap names the
    gate's code, and the rest of the session commits (a plan with nothing else commits nothing, exit 3)."""
    before = snapshot(rich_repo)
    res = wrap(run, rich_repo, {"session": "sess-c", "patterns": [
        {"op": "graduate", "name": "retry_budget", "evidence": []}]}, "--json")
    data = json.loads(res.out)
    assert res.code == 3 and data["committed"] is None, res.out
    assert [(r["name"], r["codes"], r["stays_at"]) for r in data["refused"]] == [("retry_budget", ["G202"], 2)]
    assert snapshot(rich_repo) == before
    path = rich_repo / "CONTINUITY.md"
    path.write_text(_graduate_without_new_evidence(path.read_text()).replace("Focus: outages.", "Focus: breakers."))
    res = run(rich_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26", "--json")
    data = json.loads(res.out)
    assert res.code == 0 and data["committed"], res.out
    assert [(r["name"], r["codes"]) for r in data["refused"]] == [("retry_budget", ["G202"])]
    committed = git(rich_repo, "show", "HEAD:CONTINUITY.md")
    assert "!! retry_budget:" in committed and "| 2x (RELIABILITY)" in committed and "Focus: breakers." in committed
    assert "graduate refused [G202]" in git(rich_repo, "log", "-1", "--format=%B")


def test_a_rewritten_store_line_is_refused_with_g701(run, rich_repo):
    store = rich_repo / ".flow" / "episodes.jsonl"
    store.write_text(store.read_text().replace("retry storm multiplied", "retry storm tripled"))
    (rich_repo / "CONTINUITY.md").write_text(base_text().replace("Focus: outages.", "Focus: the store."))
    before = snapshot(rich_repo)
    res = run(rich_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26", "--json")
    assert res.code == 1 and "G701" in gate_codes(res)
    assert snapshot(rich_repo) == before


def test_following_g701s_fix_keeps_the_episodes_recorded_since_head(run, rich_repo):
    """The fix G701 prints must not lose acknowledged work: the session's episodes, appended below the line
    edited by hand, survive doing what it says (put the line back, keep what is below)."""
    store = rich_repo / ".flow" / "episodes.jsonl"
    held = store.read_text()
    assert run(rich_repo, "episode", "add", "--type", "finding", "--session", "sess-c",
               "the session's own finding").code == 0
    store.write_text(store.read_text().replace("retry storm multiplied", "retry storm tripled"))
    res = run(rich_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26", "--json")
    fix = next(f["fix"] for f in json.loads(res.out)["gate"] if f["code"] == "G701")
    assert "checkout HEAD --" not in fix and "put that line back" in fix and "keep the lines appended" in fix
    store.write_text(store.read_text().replace("retry storm tripled", "retry storm multiplied"))  # as it says
    assert store.read_text().startswith(held) and "the session's own finding" in store.read_text()


@pytest.mark.parametrize("mode", ["plan", "hand"])
def test_the_immune_system_refusals_carry_the_gates_codes(run, rich_repo, mode):
    """Promotions the wrap itself refuses (and puts back) name the code the gate would have given."""
    if mode == "plan":
        res = wrap(run, rich_repo, {"session": "sess-c", "patterns": [
            {"op": "increment", "name": "cache_first", "evidence": ["ep-000000000000"]}]}, "--json")
        expected = "G102"
    else:
        text = base_text().replace("! cache_first: serve balances from cache before the provider | 1x",
                                   "!! cache_first: serve balances from cache before the provider | 2x (PERF)")
        (rich_repo / "CONTINUITY.md").write_text(text.replace(f"{B1.id}]", f"{B1.id}, {C1.id}]"))
        res = run(rich_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26", "--json")
        expected = "G101"
    data = json.loads(res.out)
    assert res.code == 3, res.out  # nothing committed because of the refusal
    assert data["refused"][0]["name"] == "cache_first" and expected in data["refused"][0]["codes"]
    if mode == "plan":  # the rehearsal answers with the code the wrap gives
        rehearsal = wrap(run, rich_repo, {"session": "sess-c", "patterns": [
            {"op": "increment", "name": "cache_first", "evidence": ["ep-000000000000"]}]}, "--json", "--dry-run")
        assert rehearsal.code == 3 and json.loads(rehearsal.out)["exit_code"] == 3, rehearsal.out
        partly = wrap(run, rich_repo, {"session": "sess-c", "state": "Focus: the store.", "patterns": [
            {"op": "increment", "name": "cache_first", "evidence": ["ep-000000000000"]}]}, "--json", "--dry-run")
        assert partly.code == 0 and json.loads(partly.out)["refused"], partly.out  # the rest would commit
    assert data["refused"][0]["op"] == "increment"  # named as the plan operation, whichever mode made it
    assert data["refused"][0]["fix"]
    if mode == "plan":  # what asked for it: the plan's operation (the hand edit's line: below)
        assert data["refused"][0]["where"].endswith(": patterns[0]")
    if mode == "hand":  # people see the same refusal and code, and the line as they wrote it (put back)
        assert data["refused"][0]["written"].startswith("!! cache_first: serve balances from cache")
        human = run(rich_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26")
        assert human.code == 3 and "[G101]" in human.out
        where = data["refused"][0]["where"]
        lineno = int(where.rpartition(":")[2])
        written = (rich_repo / "CONTINUITY.md").read_text().splitlines()[lineno - 1]
        assert where == f"CONTINUITY.md:{lineno}" and written.startswith("!! cache_first:")  # the line as written
        assert f"refused: {where}: `cache_first` stays at 1x" in human.out
        assert "\n  fix: cite the episodes that record it" in human.out  # and the way out
        assert "put back; your line was: !! cache_first: serve balances from cache before the provider | 2x " \
               "(PERF)\n" in human.out


def test_an_override_naming_other_codes_does_not_let_the_wrap_commit(run, rich_repo, monkeypatch):
    """The wrap reads FLOWGIT_OVERRIDE as the hook does: codes named first cover those codes alone."""
    before = snapshot(rich_repo)
    plan = {"session": "sess-c", "top_of_mind": ["provider storms", "breaker thresholds"]}
    monkeypatch.setenv("FLOWGIT_OVERRIDE", "G402: a foundation line")
    res = wrap(run, rich_repo, plan, "--json")
    assert res.code == 1 and "G302" in gate_codes(res) and snapshot(rich_repo) == before
    monkeypatch.setenv("FLOWGIT_OVERRIDE", "G302: two topics on purpose")
    res = wrap(run, rich_repo, plan, "--json")
    assert res.code == 0, res.out
    assert "Flow-Override: G302: two topics on purpose" in git(rich_repo, "log", "-1", "--format=%B")
