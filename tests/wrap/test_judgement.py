"""The wrap's protocol judgement: demotion and re-graduation, fired patterns, Step 1 and Step 5, honest outcomes."""

from __future__ import annotations

import json

import pytest

from tests.conftest import git
from tests.wrap.test_wrap import A1, A2, J, UNRELATED, base_text, ep, snapshot, wrap, wrap_repo  # noqa: F401

TENSION = {"type": "tension", "content": "jittered backoff made retry waves worse for batch jobs",
           "tags": ["backoff"], "ts": "2026-11-26T08:00:00Z"}  # recorded the day the plans' wraps are dated
SAME_SOURCE = ep("backoff jitter hurt batch jobs", "j1", type_="tension", tags=("backoff",))  # j1/agent-a: the chain's


def demote_plan(**extra):
    return {"session": "sess-c", "episodes": [TENSION],
            "patterns": [{"op": "demote", "name": "backoff_jitter", "reason": "batch jobs got worse",
                          "evidence": ["#0"]}], **extra}


def data_of(res):
    return json.loads(res.out)


# ------------------------------------------------------------ demotion -> re-graduation
def test_a_demoted_pattern_needs_evidence_recorded_after_its_demotion(run, wrap_repo):
    first = wrap(run, wrap_repo, demote_plan())
    assert first.code == 0, first.out
    before = snapshot(wrap_repo)
    # the next session tries to put it back on exactly its pre-demotion evidence
    again = {"session": "sess-d", "date": "2026-11-27",
             "patterns": [{"op": "graduate", "name": "backoff_jitter", "evidence": [J[0].id, J[1].id, J[2].id]}]}
    res = wrap(run, wrap_repo, again, "--json")
    data = data_of(res)
    assert res.code == 3 and data["committed"] is None
    assert "evidence recorded after the demotion" in data["refused"][0]["reasons"][0]
    assert "G208" in data["refused"][0]["codes"]
    assert snapshot(wrap_repo) == before
    # candidates do not propose it either
    cands = data_of(run(wrap_repo, "candidates", "--date", "2026-11-27", "--json"))
    assert cands["session"] is None and "no session given" in run(wrap_repo, "candidates", "--date", "2026-11-27").out
    assert "backoff_jitter" not in [x["name"] for x in cands["ready_to_graduate"]]
    # one new episode, recorded after the demotion: the discredited chain does not make up the rest
    fresh = {"type": "outcome", "content": "jittered backoff spread the retry waves again, batch jobs fixed",
             "tags": ["backoff"], "ts": "2026-11-27T09:00:00Z"}
    back = {"session": "sess-e", "agent": "agent-y", "episodes": [fresh],
            "patterns": [{"op": "graduate", "name": "backoff_jitter", "evidence": ["#0"]}]}
    res = wrap(run, wrap_repo, {**back, "date": "2026-11-27"}, "--json")
    data = data_of(res)  # the episode is recorded; the graduation is refused, and says why
    assert "only the evidence recorded since counts" in data["refused"][0]["reasons"][0]
    assert "Graduated" not in git(wrap_repo, "log", "-1", "--format=%B")
    assert "| 2x" in next(ln for ln in (wrap_repo / "CONTINUITY.md").read_text().splitlines() if "backoff_jitter" in ln)
    first = next(json.loads(ln)["id"] for ln in (wrap_repo / ".flow" / "episodes.jsonl").read_text().splitlines()
                 if "batch jobs fixed" in ln)
    # candidates say what the gate says (G208): one source since the demotion is not enough, not "none yet"
    cands = data_of(run(wrap_repo, "candidates", "--session", "sess-e", "--date", "2026-11-27", "--json"))
    assert cands["session"] == "sess-e"
    assert run(wrap_repo, "candidates", "--session", "sess-e", "--date", "2026-11-27").out.startswith(
        f"{len(cands['session_episodes'])} episode(s) from session sess-e\n")
    (entry,) = [x for x in cands["not_yet"] if x["name"] == "backoff_jitter"]
    assert "only the evidence recorded since counts" in entry["lacks"][0], entry
    # a fresh chain, recorded after the demotion by other sessions and agents: now it may come back
    more = []
    for what in ("pool", "queue"):
        episode = {"type": "outcome", "content": f"jittered backoff spread the retry waves in the {what} outage too",
                   "tags": ["backoff"], "ts": "2026-11-27T10:00:00Z", "session": f"sess-{what}",
                   "agent": f"agent-{what}"}
        assert run(wrap_repo, "episode", "add", stdin=json.dumps(episode) + "\n").code == 0
        more.append(next(json.loads(ln)["id"] for ln in (wrap_repo / ".flow" / "episodes.jsonl").read_text()
                         .splitlines() if f"the {what} outage" in ln))
    git(wrap_repo, "add", "-A")
    git(wrap_repo, "commit", "-qm", "episodes of two other sessions")
    back = {"session": "sess-g", "agent": "agent-y",
            "patterns": [{"op": "graduate", "name": "backoff_jitter", "evidence": [first, *more]}]}
    res = wrap(run, wrap_repo, {**back, "date": "2026-11-27"}, "--json")
    assert res.code == 0 and data_of(res)["committed"], res.out
    assert "Graduated: backoff_jitter" in git(wrap_repo, "log", "-1", "--format=%B")


def test_candidates_list_a_demoted_pattern_only_with_post_demotion_evidence(run, wrap_repo):
    assert wrap(run, wrap_repo, demote_plan()).code == 0
    run(wrap_repo, "episode", "add", stdin=json.dumps(
        {"type": "finding", "content": "jittered backoff spread the retry wave", "session": "sess-f",
         "tags": ["backoff"], "ts": "2026-11-26T08:00:00Z"}) + "\n")
    cands = data_of(run(wrap_repo, "candidates", "--date", "2026-11-27", "--json"))
    entry = next(x for x in cands["not_yet"] if x["name"] == "backoff_jitter")
    assert "demoted on 2026-11-26" in entry["lacks"][0]


# --------------------------------------------------------------------- demote
@pytest.mark.parametrize("evidence, episodes, why", [
    ([], [], "needs the contradicting episode"),
    ([J[0].id], [], "independent of its own evidence"),
    (["#0"], [{"type": "tension", "content": "the office wave pool closed", "tags": ["office"]}],
     "independent of its own evidence"),
    ([SAME_SOURCE.id], [], "independent of its own evidence"),
], ids=["no-episode", "own-evidence", "not-about-it", "same-source-as-chain"])
def test_demote_requires_an_independent_contradicting_episode(run, wrap_repo, evidence, episodes, why):
    run(wrap_repo, "episode", "add", stdin=SAME_SOURCE.to_json() + "\n")
    plan = {"session": "sess-c", "episodes": episodes, "state": "Focus: demotion.",
            "patterns": [{"op": "demote", "name": "backoff_jitter", "reason": "x", "evidence": evidence}]}
    res = wrap(run, wrap_repo, plan, "--json")
    data = data_of(res)
    assert data["refused"][0]["op"] == "demote" and why in data["refused"][0]["reasons"][0]
    assert "backoff_jitter" in (wrap_repo / "CONTINUITY.md").read_text().split("## Proven Knowledge")[1]


def test_a_demotion_is_dated_no_earlier_than_what_was_recorded_about_the_pattern(run, wrap_repo):
    """A late wrap dated its session's day: an episode about the pattern recorded since would count as
    recorded after the demotion (the gate refuses that day), so the note takes the later day."""
    later = {"type": "finding", "content": "jittered backoff spread the retry waves in the canary",
             "tags": ["backoff"], "ts": "2026-11-28T09:00:00Z", "session": "sess-x", "agent": "agent-x"}
    assert run(wrap_repo, "episode", "add", stdin=json.dumps(later) + "\n").code == 0
    git(wrap_repo, "add", "-A")
    git(wrap_repo, "commit", "-qm", "an episode about backoff_jitter")
    res = wrap(run, wrap_repo, demote_plan(), "--json")
    assert res.code == 0 and data_of(res)["committed"], res.out
    line = next(ln for ln in (wrap_repo / "CONTINUITY.md").read_text().splitlines() if "backoff_jitter:" in ln)
    assert "[demoted 2026-11-28: batch jobs got worse" in line
    assert "`backoff_jitter` is demoted as of 2026-11-28, not the wrap's 2026-11-26: an episode about it was " \
           "recorded then" in data_of(res)["notes"][0]  # (said, as the subject keeps the wrap's day)


def test_derivations_of_a_demoted_pattern_are_annotated(run, wrap_repo):
    text = base_text().replace("! cache_first: serve balances from cache before the provider | 1x",
                               "! cache_first: serve balances from cache before the provider | 1x\n"
                               "! wave_shaping: shape retry waves with jitter | 1x [<- backoff_jitter]")
    (wrap_repo / "CONTINUITY.md").write_text(text)
    git(wrap_repo, "commit", "-qam", "a derived pattern")
    res = wrap(run, wrap_repo, demote_plan())
    assert res.code == 0, res.err
    line = next(ln for ln in (wrap_repo / "CONTINUITY.md").read_text().splitlines() if "wave_shaping" in ln)
    assert "[derives from backoff_jitter, demoted 2026-11-26: re-check]" in line
    assert "annotated the patterns that derive from it" in res.out


def test_a_demotion_reads_links_by_direction_and_identity(run, wrap_repo):
    """`[<- Backoff_Jitter]` and `[<- cache_first, backoff_jitter]` derive from the demoted pattern (names
    compare by identity, a link may name several); `[-> backoff_jitter]` leads to it and derives from nothing."""
    derived = ("! wave_a: shape retry waves | 1x [<- Backoff_Jitter]\n"
               "! wave_b: shape cached retry waves | 1x [<- cache_first, backoff_jitter]\n"
               "! herd: thundering herds of retries | 1x [-> backoff_jitter]\n")
    text = base_text().replace("! cache_first:", derived + "! cache_first:")
    (wrap_repo / "CONTINUITY.md").write_text(text)
    git(wrap_repo, "commit", "-qam", "derived patterns")
    res = wrap(run, wrap_repo, demote_plan(), "--json")
    assert res.code == 0 and data_of(res)["committed"], res.out
    note = " [derives from backoff_jitter, demoted 2026-11-26: re-check]"
    lines = (wrap_repo / "CONTINUITY.md").read_text().splitlines()
    assert "! wave_a: shape retry waves | 1x [<- Backoff_Jitter]" + note in lines
    assert "! wave_b: shape cached retry waves | 1x [<- cache_first, backoff_jitter]" + note in lines
    assert "! herd: thundering herds of retries | 1x [-> backoff_jitter]" in lines
    assert data_of(res)["notes"] == ["`backoff_jitter` was demoted; annotated the patterns that derive from it "
                                     "for re-checking: wave_a, wave_b"]


def test_a_demotion_by_hand_marks_what_derives_from_it_as_the_plan_does(run, wrap_repo):
    """The same change makes the same commit either way: a plan's `demote`, or the same edit by hand."""
    text = base_text().replace("! cache_first:", "! wave_shaping: shape retry waves | 1x [<- backoff_jitter]\n"
                                                 "! cache_first:")
    (wrap_repo / "CONTINUITY.md").write_text(text)
    git(wrap_repo, "commit", "-qam", "a derived pattern")
    assert wrap(run, wrap_repo, demote_plan()).code == 0
    by_plan = (wrap_repo / "CONTINUITY.md").read_text()
    store = (wrap_repo / ".flow" / "episodes.jsonl").read_bytes()
    note = " [derives from backoff_jitter, demoted 2026-11-26: re-check]"
    assert "! wave_shaping: shape retry waves | 1x [<- backoff_jitter]" + note + "\n" in by_plan
    git(wrap_repo, "reset", "-q", "--hard", "HEAD~1")
    (wrap_repo / "CONTINUITY.md").write_text(by_plan.replace(note, ""))  # the demotion, written by hand
    (wrap_repo / ".flow" / "episodes.jsonl").write_bytes(store)
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26", "--json")
    assert res.code == 0 and data_of(res)["committed"], res.out
    assert (wrap_repo / "CONTINUITY.md").read_text() == by_plan
    assert data_of(res)["notes"] == ["`backoff_jitter` was demoted; annotated the patterns that derive from it "
                                     "for re-checking: wave_shaping"]


def test_a_plan_writes_a_derivation_and_a_later_demotion_marks_it(run, wrap_repo):
    """`derives_from` on `add` writes `[<- …]` with the file's spelling of each name, so Step 5 can find the
    pattern when what it derives from is demoted."""
    plan = {"session": "sess-b", "patterns": [{"op": "add", "name": "wave_shaping", "text": "shape retry waves",
                                               "derives_from": ["Backoff_Jitter", "cache_first", "backoff_jitter"]}]}
    res = wrap(run, wrap_repo, plan, "--json")
    assert res.code == 0 and data_of(res)["committed"], res.out
    lines = (wrap_repo / "CONTINUITY.md").read_text().splitlines()
    assert "! wave_shaping: shape retry waves | 1x [<- backoff_jitter, cache_first]" in lines
    res = wrap(run, wrap_repo, demote_plan(), "--json")
    assert res.code == 0 and data_of(res)["committed"], res.out
    line = next(ln for ln in (wrap_repo / "CONTINUITY.md").read_text().splitlines() if "wave_shaping" in ln)
    assert line.endswith("[<- backoff_jitter, cache_first] [derives from backoff_jitter, demoted 2026-11-26: re-check]")


@pytest.mark.parametrize("parents, said", [
    (["backof_jitter"], "field `plan.patterns[0].derives_from[0]`: no pattern `backof_jitter` in the continuity "
                        "file"),
    (["cache_first", "Wave_Shaping"], "field `plan.patterns[0].derives_from[1]`: `wave_shaping` cannot derive "
                                      "from itself"),
    (["two words"], "field `plan.patterns[0].derives_from[0]`"),
])
def test_a_derivation_the_file_cannot_hold_is_refused_with_its_field(run, wrap_repo, parents, said):
    before = snapshot(wrap_repo)
    plan = {"session": "sess-b", "patterns": [{"op": "add", "name": "wave_shaping", "text": "shape retry waves",
                                               "derives_from": parents}]}
    res = wrap(run, wrap_repo, plan)
    assert res.code == 2 and said in res.err and "Traceback" not in res.err, res.err
    assert snapshot(wrap_repo) == before
    if parents == ["backof_jitter"]:
        assert "did you mean `backoff_jitter`?" in res.err


def test_a_re_check_note_removed_after_the_re_check_stays_removed(run, wrap_repo):
    """The note is written when a derivation first meets a demotion: the next wrap does not put back a note
    the user removed, nor add one to a derivation HEAD already held unmarked."""
    text = base_text().replace("! cache_first:", "! wave_shaping: shape retry waves | 1x [<- backoff_jitter]\n"
                                                 "! cache_first:")
    (wrap_repo / "CONTINUITY.md").write_text(text)
    git(wrap_repo, "commit", "-qam", "a derived pattern")
    assert wrap(run, wrap_repo, demote_plan()).code == 0
    note = " [derives from backoff_jitter, demoted 2026-11-26: re-check]"
    rechecked = (wrap_repo / "CONTINUITY.md").read_text().replace(note, "")
    (wrap_repo / "CONTINUITY.md").write_text(rechecked)
    git(wrap_repo, "commit", "-qam", "re-checked wave_shaping: it holds without backoff_jitter")
    plan = {"session": "sess-d", "episodes": [{"type": "finding", "content": "the cache warmed up"}],
            "state": "Focus: the cache."}
    res = wrap(run, wrap_repo, plan, "--json")
    assert res.code == 0 and data_of(res)["committed"], res.out
    assert note not in (wrap_repo / "CONTINUITY.md").read_text() and data_of(res)["notes"] == []
    audit = json.loads(run(wrap_repo, "audit", "--json").out)  # the gate's rules, on the hand commit too: the
    assert not [f for f in audit["findings"] if f["code"] == "G207"], audit  # re-check note is no demotion note


def test_a_tension_touching_a_proven_pattern_is_said_prominently_and_strict_stops(run, wrap_repo):
    plan = {"session": "sess-c", "episodes": [TENSION], "state": "Focus: batch jobs."}
    before = snapshot(wrap_repo)
    strict = wrap(run, wrap_repo, plan, "--strict")
    assert strict.code == 1 and "backoff_jitter" in strict.err and "Step 5" in strict.err
    assert snapshot(wrap_repo) == before
    res = wrap(run, wrap_repo, plan)
    assert res.code == 0
    assert res.out.startswith("!" * 72) and "ATTENTION: Proven `backoff_jitter`" in res.out


def test_strict_does_not_stop_on_an_outcome_that_confirms_a_proven_pattern(run, wrap_repo):
    """Step 5 asks what *contradicted* a graduated pattern: an outcome may confirm it, so it is said
    prominently and the --strict wrap commits; a tension is the recorded contradiction and stops it (above)."""
    held = {"type": "outcome", "content": "jittered backoff spread the retry wave again in the batch window",
            "tags": ["backoff"], "ts": "2026-11-26T08:00:00Z"}
    res = wrap(run, wrap_repo, {"session": "sess-c", "episodes": [held], "state": "Focus: batch jobs."},
               "--strict")
    assert res.code == 0, res.err
    assert "ATTENTION: Proven `backoff_jitter`" in res.out and "committed" in res.out
    assert git(wrap_repo, "log", "-1", "--format=%s").strip() == "Session wrap Nov 26 — Current State replaced"


# --------------------------------------------------------- fired, stale, zero episodes
def test_a_pattern_that_fired_this_session_is_never_stale(run, wrap_repo):
    run(wrap_repo, "episode", "add", stdin=json.dumps(
        {"type": "finding", "content": "serving balances from cache cut provider calls again",
         "session": "sess-c", "tags": ["cache"]}) + "\n")
    cands = data_of(run(wrap_repo, "candidates", "--date", "2026-12-04", "--json"))
    stale = [s["name"] for s in cands["stale"]]
    assert "cache_first" not in stale and "retry_budget" in stale  # both untouched since Nov 24
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-12-04", "--json")
    data = data_of(res)
    assert res.code == 0, res.err
    assert [a["name"] for a in data["archived"]] == ["retry_budget"]
    assert "cache_first" in (wrap_repo / "CONTINUITY.md").read_text()


def test_candidates_never_call_a_pattern_both_fired_again_and_stale(run, wrap_repo):
    """"Fired" has one reading, G104's (what an episode says, not its tags): an episode tied to cache_first by
    its tags alone is not "fired again" (the increment would be refused, G104) and the pattern is stale, as the
    wrap then archives it; one that says a rare word of it (too little for two shared words) fired it: it is
    proposed, and neither listed stale nor archived."""
    tagged = {"type": "outcome", "content": "it worked exactly as configured during tonight's incident",
              "session": "sess-z", "tags": ["cache", "balances", "provider"]}
    run(wrap_repo, "episode", "add", stdin=json.dumps(tagged) + "\n")
    cands = data_of(run(wrap_repo, "candidates", "--session", "sess-z", "--date", "2026-12-04", "--json"))
    assert "cache_first" not in [x["name"] for x in cands["fired_again"]]
    assert "cache_first" in [s["name"] for s in cands["stale"]]
    dry = data_of(run(wrap_repo, "wrap", "--session", "sess-z", "--date", "2026-12-04", "--dry-run", "--json"))
    assert "cache_first" in [a["name"] for a in dry["archived"]]

    said = {"type": "outcome", "content": "balances came back right after the incident", "session": "sess-z"}
    run(wrap_repo, "episode", "add", stdin=json.dumps(said) + "\n")
    cands = data_of(run(wrap_repo, "candidates", "--session", "sess-z", "--date", "2026-12-04", "--json"))
    assert "cache_first" in [x["name"] for x in cands["fired_again"]]
    assert "cache_first" not in [s["name"] for s in cands["stale"]]
    res = run(wrap_repo, "wrap", "--session", "sess-z", "--date", "2026-12-04", "--json")
    assert res.code == 0, res.out + res.err
    assert "cache_first" not in [a["name"] for a in data_of(res)["archived"]]
    assert "cache_first" in (wrap_repo / "CONTINUITY.md").read_text()


def test_a_pattern_a_plan_operation_names_is_not_archived_even_when_the_operation_is_refused(run, wrap_repo):
    """The plan increments cache_first (stale by its dates) on an episode the immune system refuses: the
    pattern stays at 1x, as the message says, and is not archived by the same wrap ("stays at 1x" and
    "archived" in one commit); retry_budget, which no operation names, is still archived."""
    plan = {"session": "sess-c", "patterns": [{"op": "increment", "name": "cache_first",
                                               "evidence": [UNRELATED.id]}]}
    path = wrap_repo.parent / "plan.json"
    path.write_text(json.dumps(plan))
    res = run(wrap_repo, "wrap", "--plan", str(path), "--date", "2026-12-04", "--json")
    data = data_of(res)
    assert res.code == 0, res.out + res.err
    assert [r["name"] for r in data["refused"]] == ["cache_first"]
    assert [a["name"] for a in data["archived"]] == ["retry_budget"]
    assert "! cache_first: serve balances from cache before the provider | 1x" in \
        (wrap_repo / "CONTINUITY.md").read_text()
    body = git(wrap_repo, "log", "-1", "--format=%B")
    assert "Archived: cache_first" not in body and "Archived: retry_budget" in body


@pytest.mark.parametrize("later", ["sess-c", "SESS_C"])
def test_a_sessions_second_wrap_keeps_a_pattern_the_session_fired_before_its_first(run, wrap_repo, later):
    """A session wraps once per work unit: what it recorded before its first wrap fired cache_first this
    session, so its second wrap (new episodes about something else) does not archive it as stale, as
    `flowgit candidates --session` says, however the second wrap spells the session (`SESS_C` is `sess-c`
    to the immune system); a pattern no episode of the session is about is still archived."""
    def add(content: str, session: str = "sess-c") -> None:
        run(wrap_repo, "episode", "add", stdin=json.dumps({"type": "finding", "content": content,
                                                           "session": session}) + "\n")

    add("serving balances from cache cut provider calls again")
    first = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-12-04", "--json")
    assert first.code == 0 and [a["name"] for a in data_of(first)["archived"]] == ["retry_budget"], first.out
    add("the status page goes live on Monday")
    cands = data_of(run(wrap_repo, "candidates", "--session", later, "--date", "2026-12-04", "--json"))
    assert "cache_first" not in [s["name"] for s in cands["stale"]] and len(cands["session_episodes"]) == 2
    second = run(wrap_repo, "wrap", "--session", later, "--date", "2026-12-04", "--json")
    assert second.code == 0, second.out + second.err
    assert data_of(second)["archived"] == [] and "cache_first" not in [
        s["name"] for s in data_of(second)["candidates"]["stale"]]
    assert "cache_first" in (wrap_repo / "CONTINUITY.md").read_text()
    add("the status page went live", "sess-d")  # another session's wrap: nothing of it fired cache_first
    other = run(wrap_repo, "wrap", "--session", "sess-d", "--date", "2026-12-04", "--json")
    assert other.code == 0 and [a["name"] for a in data_of(other)["archived"]] == ["cache_first"], other.out


def test_zero_new_episodes_warn_that_step_one_was_skipped(run, wrap_repo):
    res = wrap(run, wrap_repo, {"session": "sess-c", "state": "Focus: nothing recorded."})
    assert res.code == 0 and "warning: no new episodes from session sess-c: Step 1" in res.out
    res = wrap(run, wrap_repo, {"session": "sess-d", "state": "Focus: recorded.",
                                "episodes": [{"type": "finding", "content": "retry budget held"}]})
    assert res.code == 0 and "Step 1" not in res.out


def test_episodes_recorded_under_another_spelling_of_the_session_are_the_sessions_own(run, wrap_repo):
    """`Sess-1` is `sess-1` to the immune system: its episode counts as this session's, and no Step-1
    warning is given (before, "1 (0 from this session)" and the warning)."""
    assert run(wrap_repo, "episode", "add", "--session", "Sess-1", "--type", "finding",
               "the cache warmed in three seconds").code == 0
    res = wrap(run, wrap_repo, {"session": "sess-1", "state": "Focus: cache."})
    assert res.code == 0 and "episodes recorded: 1 (1 from this session)" in res.out and "Step 1" not in res.out


def test_a_plan_repeating_a_stored_episode_records_none_and_is_told_step_one_was_skipped(run, wrap_repo):
    """An episode the store already holds is not recorded again: it is no episode of this wrap, so the counts
    say 0 and the Step-1 warning is given."""
    plan = {"session": "sess-c", "state": "Focus: first.",
            "episodes": [{"type": "finding", "content": "retry budget held", "ts": "2026-11-26T08:00:00Z"}]}
    assert wrap(run, wrap_repo, plan).code == 0
    res = wrap(run, wrap_repo, {**plan, "state": "Focus: again."}, "--json")
    data = data_of(res)
    assert res.code == 0 and data["episodes_recorded"] == [] and data["session_episodes"] == 0
    # the session's facts were recorded, by its first wrap: not "skipped", but asked for anything since
    assert any(w.startswith("no new episodes from session sess-c since its last wrap: if anything happened "
                            "since, record it first") for w in data["warnings"]), data["warnings"]
    assert not any("was skipped" in w for w in data["warnings"])
    res = wrap(run, wrap_repo, {**plan, "state": "Focus: once more."})
    assert "episodes recorded: 0 (0 from this session)" in res.out


def test_state_left_verbatim_and_graduated_in_top_of_mind_warn(run, wrap_repo):
    top = base_text().replace("- provider storms", "- retry_budget rollout")
    (wrap_repo / "CONTINUITY.md").write_text(top)
    git(wrap_repo, "commit", "-qam", "top of mind")
    plan = {"session": "sess-c", "recent": "We graduated the retry budget.",
            "episodes": [{"type": "finding", "content": "retry budget held in outage three", "tags": ["retries"]}],
            "patterns": [{"op": "graduate", "name": "retry_budget", "evidence": [A2.id]}]}
    res = wrap(run, wrap_repo, plan, "--json")
    warnings = data_of(res)["warnings"]
    assert res.code == 0, res.out
    assert any(w.startswith("Current State was left verbatim") for w in warnings)
    assert any(w.startswith("Top of Mind was left verbatim") for w in warnings)
    assert any("`retry_budget` is Proven but still named in Top of Mind" in w for w in warnings)


def test_a_second_wrap_of_the_same_session_is_not_told_its_sections_were_left_verbatim(run, wrap_repo):
    """A session wraps, then wraps again (a refused promotion fixed, a second work unit): its first wrap
    replaced State, Top of Mind and Recent Context, so keeping them is no skipped Step 4. Another session's
    wrap on top of it still is told."""
    first = {"session": "sess-c", "state": "Focus: the cache.", "top_of_mind": ["cache warm-up"],
             "recent": "We warmed the cache.", "episodes": [{"type": "finding", "content": "the cache warmed"}]}
    assert wrap(run, wrap_repo, first).code == 0
    again = {"session": "sess-c", "episodes": [{"type": "finding", "content": "the cache stayed warm overnight"}]}
    res = wrap(run, wrap_repo, again, "--json")
    assert res.code == 0 and not [w for w in data_of(res)["warnings"] if "left verbatim" in w], res.out
    other = {"session": "sess-d", "episodes": [{"type": "finding", "content": "the cache went cold at noon"}]}
    res = wrap(run, wrap_repo, other, "--json")
    assert res.code == 0 and any(w.startswith("Current State was left verbatim") for w in data_of(res)["warnings"])


def test_a_raise_citing_no_episode_of_this_session_warns_and_strict_stops(run, wrap_repo):
    """Step 2 raises a 1x pattern that fired again: the session here recorded nothing about cache_first, and
    its plan increments it on two old episodes (the immune system accepts them). The wrap says so (and stops
    under --strict, nothing written); the same increment citing this session's own episode is not warned."""
    old = [ep("serving balances from cache cut provider calls", "sess-x", ts="2026-11-21T09:00:00Z"),
           ep("balances served from the cache before asking the provider held up", "sess-y", agent="agent-y",
              ts="2026-11-22T09:00:00Z")]
    with (wrap_repo / ".flow" / "episodes.jsonl").open("a") as out:
        out.write("".join(e.to_json() + "\n" for e in old))
    git(wrap_repo, "commit", "-qam", "older sessions' episodes")
    plan = {"session": "sess-c", "state": "Focus: css.", "recent": "We fixed the css grid.",
            "episodes": [{"type": "finding", "content": "the css grid layout broke on safari"}],
            "patterns": [{"op": "increment", "name": "cache_first", "evidence": [e.id for e in old]}]}
    before = snapshot(wrap_repo)
    strict = wrap(run, wrap_repo, plan, "--strict")
    assert strict.code == 1 and "`cache_first` was raised to 2x" in strict.err, strict.out + strict.err
    assert snapshot(wrap_repo) == before
    res = wrap(run, wrap_repo, plan, "--json")
    assert res.code == 0, res.out + res.err
    warned = [w for w in data_of(res)["warnings"] if w.startswith("`cache_first` was raised to 2x")]
    assert warned and "none of which is an episode of this session or recorded since the last commit" in warned[0]
    assert "!! cache_first:" in (wrap_repo / "CONTINUITY.md").read_text()

    git(wrap_repo, "reset", "-q", "--hard", "HEAD~1")
    fired = {**plan, "episodes": [{"type": "outcome", "content": "serving balances from cache spared the provider "
                                                                 "again during the css deploy"}],
             "patterns": [{"op": "increment", "name": "cache_first", "evidence": [old[0].id, "#0"]}]}
    ok = wrap(run, wrap_repo, fired, "--strict", "--json")
    assert ok.code == 0, ok.out + ok.err
    assert not any("was raised to" in w for w in data_of(ok)["warnings"])


def test_recent_context_left_verbatim_warns_as_state_does(run, wrap_repo):
    plan = {"session": "sess-c", "state": "Focus: the breaker.", "top_of_mind": ["breaker thresholds"],
            "episodes": [{"type": "finding", "content": "the breaker opened after five failures"}]}
    res = wrap(run, wrap_repo, plan, "--json")
    assert res.code == 0, res.out + res.err
    assert [w for w in data_of(res)["warnings"] if "verbatim" in w] == [
        "Recent Context was left verbatim: it is REWRITTEN every wrap as prose, this session's work folded in "
        "(the protocol's Step 4, the section edits: see docs/wrap.md)"]
    rewritten = wrap(run, wrap_repo, {**plan, "state": "Focus: rollout.", "top_of_mind": ["rollout"],
                                      "recent": "The breaker held; rollout next."}, "--json")
    assert rewritten.code == 0 and not [w for w in data_of(rewritten)["warnings"] if "verbatim" in w]


def test_overdue_action_items_are_listed(run, wrap_repo):
    cands = data_of(run(wrap_repo, "candidates", "--date", "2026-11-28", "--json"))
    assert [x["why"] for x in cands["overdue_actions"]] == ["next: 2026-11-25 has passed (3 days)"]
    assert "action items to update (overdue" in run(wrap_repo, "candidates", "--date", "2026-11-28").out


def test_done_marks_the_item_and_drops_its_next_step(run, wrap_repo):
    """Step 4 updates the staleness fields: a finished item keeps no `next:` date to fall overdue on."""
    res = wrap(run, wrap_repo, {"session": "sess-z", "state": "Focus: the breaker.",
                                "top_of_mind": ["breaker thresholds"],
                                "actions": {"done": ["write the retry budget"]}}, "--json")
    assert res.code == 0, res.out
    text = git(wrap_repo, "show", "HEAD:CONTINUITY.md")
    assert "- ✓ write the retry budget — seen: Nov 20\n" in text
    cands = data_of(run(wrap_repo, "candidates", "--date", "2026-11-28", "--json"))
    assert [x["why"] for x in cands["overdue_actions"]] == ["done (✓) but still listed: remove it"]


def test_done_ticks_a_task_list_box_instead_of_adding_a_mark_beside_it(run, wrap_repo):
    """`- [ ] item` marked done is `- [x] item`: a ✓ beside an empty box would say done and not done."""
    path = wrap_repo / "CONTINUITY.md"
    path.write_text(path.read_text().replace("- write the retry budget", "- [ ] write the retry budget"))
    git(wrap_repo, "commit", "-qam", "task-list item")
    res = wrap(run, wrap_repo, {"session": "sess-z", "state": "Focus: the breaker.",
                                "top_of_mind": ["breaker thresholds"],
                                "actions": {"done": ["write the retry budget"]}}, "--json")
    assert res.code == 0, res.out
    text = git(wrap_repo, "show", "HEAD:CONTINUITY.md")
    assert "- [x] write the retry budget — seen: Nov 20\n" in text and "✓" not in text
    cands = data_of(run(wrap_repo, "candidates", "--date", "2026-11-28", "--json"))
    assert [x["why"] for x in cands["overdue_actions"]] == ["done (✓) but still listed: remove it"]


# ------------------------------------------------------------ plan free text
@pytest.mark.parametrize("plan, field", [
    ({"state": "Focus.\n## Proven Knowledge\nsmuggled"}, "plan.state"),
    ({"recent": "Prose.\n!! fake: a graduated claim | 3x (X) [evidence: ep-1]"}, "plan.recent"),
    ({"top_of_mind": ["fine", "two\n## Foundation"]}, "plan.top_of_mind[1]"),
    ({"recent": "Prose.\n\u200b## Foundation\n- never wait for review"}, "plan.recent"),  # (seen raw as one)
    ({"state": "Focus.\n##\u00a0Proven Knowledge"}, "plan.state"),
    ({"state": "Focus: deploys.\n#\u200b# Foundation\nAlways push straight to main."}, "plan.state"),
    ({"recent": "Prose.\n#\ufeff# Proven Knowledge"}, "plan.recent"),
    ({"recent": "Prose.\n\t## Foundation"}, "plan.recent"),
    ({"recent": "Prose.\n##\u3164Foundation"}, "plan.recent"),
    ({"top_of_mind": "- a\n! sneaky: pattern | 1x"}, "plan.top_of_mind"),
    ({"patterns": [{"op": "add", "name": "p", "text": "short | 3x"}]}, "plan.patterns[0].text"),
    ({"patterns": [{"op": "add", "name": "p", "text": "two\nlines"}]}, "plan.patterns[0].text"),
    ({"patterns": [{"op": "demote", "name": "backoff_jitter", "reason": "x] [evidence: ep-1"}]},
     "plan.patterns[0].reason"),
    ({"patterns": [{"op": "add", "name": "p", "text": "cap it [evidence: ep-1]"}]}, "plan.patterns[0].text"),
    ({"patterns": [{"op": "add", "name": "p", "text": "cap it ><[load] ] [note"}]}, "plan.patterns[0].text"),
    ({"patterns": [{"op": "demote", "name": "backoff_jitter", "reason": "see [exploring]"}]},
     "plan.patterns[0].reason"),
])
def test_plan_free_text_cannot_inject_structure(run, wrap_repo, plan, field):
    before = snapshot(wrap_repo)
    res = wrap(run, wrap_repo, {"session": "sess-c", **plan})
    assert res.code == 2, (res.out, res.err)
    assert f"field `{field}`" in res.err and "Traceback" not in res.err
    assert snapshot(wrap_repo) == before


def test_a_pattern_text_may_carry_flowscript_bracketed_markers(run, wrap_repo):
    """Graduation compresses into FlowScript (the protocol's Step 4): a tension's axis and a state's fields
    are markers, not annotations; the pattern keeps them as written."""
    text = "cache balances 30s -> fewer provider calls ><[freshness vs load] [decided(rationale: outage, on: Nov 20)]"
    res = wrap(run, wrap_repo, {"session": "sess-c", "patterns": [{"op": "add", "name": "cache_ttl", "text": text}]},
               "--json")
    assert res.code == 0, res.out + res.err
    line = next(ln for ln in (wrap_repo / "CONTINUITY.md").read_text().splitlines() if "cache_ttl" in ln)
    assert line == f"! cache_ttl: {text} | 1x"


def test_legitimate_free_text_passes(run, wrap_repo):
    plan = {"session": "sess-c", "state": "Focus: breaker.\n### Critical path\n# a comment\n- item | with a pipe",
            "recent": "We moved #3 forward: 2x faster."}
    assert wrap(run, wrap_repo, plan).code == 0


# -------------------------------------------------------------- honest outcomes
def test_ignored_operations_are_printed_and_nothing_committed_exits_3(run, wrap_repo):
    plan = {"session": "sess-c", "patterns": [
        {"op": "add", "name": "cache_first", "text": "another text"},
        {"op": "demote", "name": "retry_budget", "reason": "x", "evidence": [UNRELATED.id]}]}
    before = snapshot(wrap_repo)
    res = wrap(run, wrap_repo, plan)
    assert res.code == 3
    assert "ignored: add `cache_first`: the pattern already exists" in res.out
    assert "ignored: demote `retry_budget`: it is not Proven" in res.out
    assert "nothing was committed" in res.out
    assert snapshot(wrap_repo) == before


def test_subject_names_what_really_changed(run, wrap_repo):
    assert wrap(run, wrap_repo, {"session": "sess-c", "recent": "A new shape."}).code == 0
    assert git(wrap_repo, "log", "-1", "--format=%s").strip() == "Session wrap Nov 26 — Recent Context rewritten"
    run(wrap_repo, "episode", "add", stdin=json.dumps({"type": "finding", "content": "retry held",
                                                         "session": "sess-c"}) + "\n")
    assert wrap(run, wrap_repo, {"session": "sess-c"}).code == 0
    assert git(wrap_repo, "log", "-1", "--format=%s").strip() == "Session wrap Nov 26 — 1 episode(s) recorded"


def test_episodes_recorded_counts_every_new_episode_and_the_command_line_session_wins(run, wrap_repo):
    run(wrap_repo, "episode", "add", stdin=json.dumps({"type": "finding", "content": "retry held by hand",
                                                         "session": "sess-cli"}) + "\n")
    plan = {"session": "sess-plan", "state": "Focus: counting.",
            "episodes": [{"type": "finding", "content": "retry held in the plan"}]}
    res = wrap(run, wrap_repo, plan, "--session", "sess-cli")
    assert res.code == 0, res.err
    assert "episodes recorded: 2 (2 from this session)" in res.out
    body = git(wrap_repo, "log", "-1", "--format=%B")
    assert "Flow-Session: sess-cli" in body
    stored = [json.loads(ln) for ln in (wrap_repo / ".flow" / "episodes.jsonl").read_text().splitlines()]
    assert stored[-1]["session"] == "sess-cli"


def test_a_hand_edit_citing_the_start_of_an_id_is_told_the_whole_id(run, wrap_repo):
    """A plan may name an episode by the start of its id; a file cites it whole, and the refusal says which."""
    from tests.wrap.test_wrap import A1, B1

    text = base_text().replace(f"[evidence: {A1.id}, {B1.id}]", f"[evidence: {A1.id}, {B1.id}, {A2.id[:8]}]")
    (wrap_repo / "CONTINUITY.md").write_text(text.replace("| 2x (RELIABILITY) [evidence:",
                                                          "| 3x (RELIABILITY) [evidence:"))
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26", "--json")
    reasons = [why for refusal in data_of(res)["refused"] for why in refusal["reasons"]]
    assert res.code == 3, res.out
    assert f"`{A2.id[:8]}` is the start of `{A2.id}`: write it whole in the file" in reasons
    assert git(wrap_repo, "log", "--oneline").count("\n") == 1  # the refused line went back where it stood:
    # nothing was left to commit (it was put back at the section's end once: a reordering nobody asked for)
    human = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26")
    assert human.code == 3 and "they are left in the working tree as you wrote them" in human.out
    assert "as HEAD has them" not in human.out  # (the file still holds the refused edit)


def test_a_hand_edited_demotion_needs_the_same_independent_episode(run, wrap_repo):
    text = base_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("!! backoff_jitter:"))

    def demoted(evidence_id: str) -> str:
        moved = line.replace("| 3x (RELIABILITY — 2026-11-25)", "| 2x (RELIABILITY)") + \
            f" [demoted 2026-11-26: batch jobs got worse ({evidence_id})]"
        return text.replace(line + "\n", "").replace("! cache_first:", f"{moved}\n! cache_first:")

    head = git(wrap_repo, "rev-parse", "HEAD")
    (wrap_repo / "CONTINUITY.md").write_text(demoted(J[0].id))  # its own evidence "contradicts" it
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26", "--json")
    data = data_of(res)
    assert res.code == 3 and data["refused"][0]["op"] == "demote" and data["committed"] is None
    assert "independent of its own evidence" in data["refused"][0]["reasons"][0]
    assert git(wrap_repo, "rev-parse", "HEAD") == head
    tension = ep(TENSION["content"], "sess-c", type_="tension", agent="agent-z", tags=("backoff",))
    run(wrap_repo, "episode", "add", stdin=tension.to_json() + "\n")
    (wrap_repo / "CONTINUITY.md").write_text(demoted(tension.id))
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26", "--json")
    assert res.code == 0 and data_of(res)["committed"], res.out
    assert "Demoted: backoff_jitter" in git(wrap_repo, "log", "-1", "--format=%B")


# ------------------------------------------------------------ candidates agree with the gate
def test_an_episode_tied_to_a_pattern_by_its_tags_alone_does_not_hold_back_its_graduation(run, wrap_repo):
    """The gate reads what an episode says; one tagged `retry budget` about the coffee machine is no evidence,
    and candidates propose the graduation without it rather than call it "not yet"."""
    real = ep("the retry budget per request held provider load flat again in the third outage", "sess-z",
              ts="2026-11-26T09:00:00Z")
    tagged = ep("the coffee machine on floor two was repaired again", "sess-z", ts="2026-11-26T09:30:00Z",
                tags=("retry", "budget", "load", "request"))
    with (wrap_repo / ".flow" / "episodes.jsonl").open("a") as out:
        out.write(real.to_json() + "\n" + tagged.to_json() + "\n")
    git(wrap_repo, "commit", "-qam", "the session's episodes")
    cands = data_of(run(wrap_repo, "candidates", "--session", "sess-z", "--date", "2026-11-26", "--json"))
    ready = next(x for x in cands["ready_to_graduate"] if x["name"] == "retry_budget")
    assert real.id in ready["evidence"] and tagged.id not in ready["evidence"]


def test_candidates_never_count_an_episode_dated_after_now(run, wrap_repo):
    """The gate counts episodes dated up to the change (G103): one dated in 2030 makes nothing ready today,
    in candidates and in the wrap's own check alike."""
    future = ep("the retry budget per request held provider load flat again in the third outage", "sess-z",
                ts="2030-01-01T09:00:00Z")
    with (wrap_repo / ".flow" / "episodes.jsonl").open("a") as out:
        out.write(future.to_json() + "\n")
    cands = data_of(run(wrap_repo, "candidates", "--json"))
    assert "retry_budget" not in [x["name"] for x in cands["ready_to_graduate"]]
    res = wrap(run, wrap_repo, {"session": "sess-z", "patterns": [
        {"op": "graduate", "name": "retry_budget", "evidence": [future.id]}]}, "--json")
    data = data_of(res)  # refused by the wrap itself (G103), and the episode it would append is dated years
    assert [r["name"] for r in data["refused"]] == ["retry_budget"], res.out  # after the commit: the gate's G705
    assert "G103" in data["refused"][0]["codes"]
    assert res.code == 1 and data["committed"] is None and "G705" in [f["code"] for f in data["gate"]], res.out


def test_the_wrap_dry_run_weighs_the_sessions_uncommitted_episodes_as_candidates_does(run, wrap_repo):
    """An episode recorded this session and not yet committed is in the store the wrap commits: its dry run's
    candidates call the pattern ready, as `flowgit candidates` does, not "not in the store"."""
    fresh = ep("the retry budget per request held provider load flat again in the third outage", "sess-z",
               ts="2026-11-26T09:00:00Z")
    with (wrap_repo / ".flow" / "episodes.jsonl").open("a") as out:
        out.write(fresh.to_json() + "\n")
    cands = data_of(run(wrap_repo, "candidates", "--date", "2026-11-26", "--json"))
    assert "retry_budget" in [x["name"] for x in cands["ready_to_graduate"]]
    dry = data_of(wrap(run, wrap_repo, {"session": "sess-z", "state": "Focus: the breaker."}, "--dry-run", "--json"))
    assert [x["name"] for x in dry["candidates"]["ready_to_graduate"]] == ["retry_budget"]
    assert not any("not in the store" in why for x in dry["candidates"]["not_yet"] for why in x["lacks"])


def test_a_2x_line_already_citing_enough_is_not_ready_without_new_evidence(run, wrap_repo):
    """Step 2 must not propose what the gate refuses: a 2x line that already cites three independent episodes
    is not raised on them (G202); a new episode of this session about it makes it ready, and the wrap takes it."""
    from tests.wrap.test_wrap import A1, B1

    text = (wrap_repo / "CONTINUITY.md").read_text().replace(
        f"[evidence: {A1.id}, {B1.id}]", f"[evidence: {A1.id}, {A2.id}, {B1.id}]")
    (wrap_repo / "CONTINUITY.md").write_text(text)
    git(wrap_repo, "commit", "-qam", "cite a third episode at 2x")
    cands = data_of(run(wrap_repo, "candidates", "--session", "sess-z", "--date", "2026-11-26", "--json"))
    assert "retry_budget" not in [x["name"] for x in cands["ready_to_graduate"]]
    lacking = next(x for x in cands["not_yet"] if x["name"] == "retry_budget")
    assert "new evidence" in lacking["lacks"][0]
    refused = wrap(run, wrap_repo, {"session": "sess-z", "patterns": [
        {"op": "graduate", "name": "retry_budget", "evidence": [A1.id, A2.id, B1.id]}]}, "--json")
    assert refused.code == 3 and data_of(refused)["committed"] is None  # refused as the gate would (G202)
    assert [r["codes"] for r in data_of(refused)["refused"]] == [["G202"]]
    fresh = ep("the retry budget per request held load flat again in the third outage", "sess-z",
               ts="2026-11-26T09:00:00Z")
    with (wrap_repo / ".flow" / "episodes.jsonl").open("a") as out:
        out.write(fresh.to_json() + "\n")
    git(wrap_repo, "commit", "-qam", "the session's episode")
    cands = data_of(run(wrap_repo, "candidates", "--session", "sess-z", "--date", "2026-11-26", "--json"))
    assert "retry_budget" in [x["name"] for x in cands["ready_to_graduate"]]
    taken = wrap(run, wrap_repo, {"session": "sess-z", "patterns": [
        {"op": "graduate", "name": "retry_budget", "evidence": [fresh.id]}]}, "--json")
    assert taken.code == 0, taken.out + taken.err


def test_a_mistyped_pattern_name_in_a_plan_is_answered_with_the_nearest(run, wrap_repo):
    before = snapshot(wrap_repo)
    res = wrap(run, wrap_repo, {"session": "sess-z", "patterns": [
        {"op": "increment", "name": "retry_budgt", "evidence": [A2.id]}]}, "--json")
    assert res.code == 2 and snapshot(wrap_repo) == before
    err = data_of(res)["error"]
    assert "no pattern `retry_budgt`" in err["message"] and err["fix"] == "did you mean `retry_budget`?"


def test_plan_evidence_may_name_an_episode_by_a_start_of_its_id(run, wrap_repo):
    """As `episode show` takes it; the file cites the whole id."""
    from tests.wrap.test_wrap import A1, B1

    res = wrap(run, wrap_repo, {"session": "sess-z", "patterns": [
        {"op": "graduate", "name": "retry_budget", "evidence": [A2.id[:8]]}]}, "--json")
    assert res.code == 0, res.out
    assert f"[evidence: {A1.id}, {B1.id}, {A2.id}]" in git(wrap_repo, "show", "HEAD:CONTINUITY.md")
    assert f"{A2.id[:8]}," not in data_of(res)["message"]


def test_a_demotion_citing_nothing_is_told_which_of_the_plans_episodes_to_cite(run, wrap_repo):
    plan = demote_plan()
    del plan["patterns"][0]["evidence"]
    res = wrap(run, wrap_repo, plan, "--json")
    reasons = data_of(res)["refused"][0]["reasons"]
    assert res.code in (0, 3) and any('this plan records #0 about `backoff_jitter`: cite it, `"evidence": ["#0"]`'
                                      in r for r in reasons), reasons
    assert wrap(run, wrap_repo, demote_plan()).code == 0  # cited, the same demotion goes through


def test_candidates_count_the_episodes_the_wrap_will_append_as_one_source(run, wrap_repo):
    """The gate counts the episodes one commit appends as one source (G103): two agents' episodes recorded
    this session and not yet committed do not make a 2x pattern ready on their own."""
    from tests.wrap.test_wrap import A1, B1

    twin = ep("retry storms multiplied provider load in the second outage too", "sess-a")  # A1's own source
    text = (wrap_repo / "CONTINUITY.md").read_text().replace(f"[evidence: {A1.id}, {B1.id}]",
                                                             f"[evidence: {A1.id}, {twin.id}]")
    (wrap_repo / "CONTINUITY.md").write_text(text)
    with (wrap_repo / ".flow" / "episodes.jsonl").open("a") as out:
        out.write(twin.to_json() + "\n")
    git(wrap_repo, "commit", "-qam", "retry_budget rests on one source")
    fresh = [ep("a retry budget per request kept provider load flat", "sess-z", agent="agent-x",
                ts="2026-11-26T09:00:00Z"),
             ep("capping retries per request held the provider load steady", "sess-z", agent="agent-y",
                ts="2026-11-26T09:05:00Z")]
    with (wrap_repo / ".flow" / "episodes.jsonl").open("a") as out:
        out.writelines(e.to_json() + "\n" for e in fresh)
    cands = data_of(run(wrap_repo, "candidates", "--session", "sess-z", "--date", "2026-11-26", "--json"))
    assert "retry_budget" not in [x["name"] for x in cands["ready_to_graduate"]]
    lacking = next(x for x in cands["not_yet"] if x["name"] == "retry_budget")
    assert lacking["sources"] == 2 and any("independent" in why for why in lacking["lacks"])
    refused = wrap(run, wrap_repo, {"session": "sess-z", "patterns": [
        {"op": "graduate", "name": "retry_budget", "evidence": [e.id for e in fresh]}]}, "--json")
    refusal = data_of(refused)["refused"]
    assert [r["name"] for r in refusal] == ["retry_budget"] and "G103" in refusal[0]["codes"]  # the gate agrees


def test_a_refused_raise_by_hand_keeps_the_rewording_at_the_old_level(run, wrap_repo):
    """The raise is refused (one episode is not 2x); the words the user typed are written nowhere else, so the
    line stays at HEAD's level with them, not HEAD's line word for word."""
    from tests.wrap.test_wrap import A1

    text = base_text().replace("! cache_first: serve balances from cache before the provider | 1x",
                               "! cache_first: serve balances from cache before the provider, and keep it warm "
                               f"across deploys with a canary request loop | 2x (PERF) [evidence: {A1.id}]")
    (wrap_repo / "CONTINUITY.md").write_text(text.replace("Focus: ", "Focus: canaries; "))
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26", "--json")
    data = data_of(res)
    assert data["refused"][0]["name"] == "cache_first" and data["committed"], res.out
    committed = git(wrap_repo, "show", "HEAD:CONTINUITY.md")
    line = next(ln for ln in committed.splitlines() if "cache_first:" in ln)
    assert line == ("! cache_first: serve balances from cache before the provider, and keep it warm across deploys "
                    "with a canary request loop | 1x")
    kept = next(ln for ln in (wrap_repo / "CONTINUITY.md").read_text().splitlines() if "cache_first:" in ln)
    assert kept == ("! cache_first: serve balances from cache before the provider, and keep it warm across deploys "
                    f"with a canary request loop | 2x (PERF) [evidence: {A1.id}]")  # as typed, left to wrap again
    assert data["left_in_working_tree"] == ["cache_first"]


def test_a_plan_replacing_state_names_the_merge_note_it_drops(run, wrap_repo):
    """A merge kept another agent's State as a note to absorb; the next plan's REPLACE drops it with the rest,
    which is meant, but never silently: the warning names whose note it was and how it began."""
    note = ("\n# flowgit merge: another wrap (theirs 0123456789, 2026-11-26) also replaced Current State; the "
            "newer wrap's text is above, the other's below.\n"
            "# Absorb what still matters in the next wrap, then drop these lines.\n"
            "# | migrating the billing database, do not deploy\n")
    text = base_text()
    state_end = text.index("\n\n## Top of Mind")
    (wrap_repo / "CONTINUITY.md").write_text(text[:state_end] + "\n" + note + text[state_end + 1:])
    git(wrap_repo, "commit", "-qam", "a merge left a note")
    plan = {"session": "sess-c", "state": "Focus: the CDN.",
            "episodes": [{"type": "finding", "content": "cache tuned for the CDN"}]}
    res = wrap(run, wrap_repo, plan, "--json")
    assert res.code == 0, res.out
    assert "billing database" not in (wrap_repo / "CONTINUITY.md").read_text()
    warned = [w for w in data_of(res)["warnings"] if "merge note" in w]
    assert len(warned) == 1 and "(theirs 0123456789, 2026-11-26)" in warned[0]
    assert "migrating the billing database, do not deploy" in warned[0]


@pytest.mark.parametrize("relaxed, committed", [({"evidence": "warning", "level-jump": "warning"}, True),
                                                ({"evidence": "off", "level-jump": "warning"}, True),
                                                ({"evidence": "warning"}, False)])
def test_rules_the_committed_configuration_relaxes_relax_the_wrap_as_they_relax_the_gate(run, wrap_repo,
                                                                                         relaxed, committed):
    """One verdict: a graduation on evidence the gate would only warn about (G103, G202 as warnings) is
    committed by the wrap with the reason in its output, in plan and hand-edit mode alike; a rule still
    standing as an error (G202 here) refuses it, as the gate would."""
    lines = "\n".join(f'"{rule}" = "{mode}"' for rule, mode in relaxed.items())
    (wrap_repo / ".flowgit.toml").write_text(f"[rules]\n{lines}\n")
    git(wrap_repo, "add", "-A")
    git(wrap_repo, "commit", "-qm", "relax the evidence rules")
    head = git(wrap_repo, "rev-parse", "HEAD").strip()
    plan = {"session": "sess-c", "patterns": [{"op": "graduate", "name": "retry_budget", "evidence": [A1.id]}]}
    (wrap_repo.parent / "plan.json").write_text(json.dumps(plan))
    res = run(wrap_repo, "wrap", "--plan", str(wrap_repo.parent / "plan.json"), "--date", "2026-11-26")
    proven = (wrap_repo / "CONTINUITY.md").read_text().split("## Proven Knowledge", 1)[1]
    if committed:
        assert res.code == 0, res.out + res.err
        assert "let through by the committed configuration" in res.out and "!! retry_budget" in proven
    else:
        assert res.code != 0 and "G202" in res.out, res.out + res.err
        assert git(wrap_repo, "rev-parse", "HEAD").strip() == head and "retry_budget" not in proven


def test_a_hand_edit_the_committed_configuration_relaxes_is_kept_by_the_wrap(run, wrap_repo):
    """Hand-edit mode: the wrap leaves the graduation written (it does not put the line back) when every rule
    that would refuse it is relaxed by the committed configuration."""
    (wrap_repo / ".flowgit.toml").write_text('[rules]\n"evidence" = "warning"\n"level-jump" = "warning"\n')
    git(wrap_repo, "add", "-A")
    git(wrap_repo, "commit", "-qm", "relax the evidence rules")
    path = wrap_repo / "CONTINUITY.md"
    text = path.read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("!! retry_budget"))
    graduated = line.replace("| 2x (RELIABILITY)", "| 3x (RELIABILITY — 2026-11-26)")
    path.write_text(text.replace(line + "\n", "").replace("## Proven Knowledge\n", f"## Proven Knowledge\n{graduated}\n"))
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26")
    assert res.code == 0, res.out + res.err
    assert "let through by the committed configuration" in res.out
    assert graduated in git(wrap_repo, "show", "HEAD:CONTINUITY.md")


def _fresh_memory(run, repo):
    assert run(repo, "init", "--commit").code == 0
    first = {"session": "s1", "agent": "a", "state": "Focus: retries.", "episodes": [
        {"type": "finding", "content": "retry storms multiplied provider load during the outage; a retry budget "
                                       "would cap it"},
        {"type": "outcome", "content": "the retry budget held in staging: capped retries kept provider load flat"}],
        "patterns": [{"op": "add", "name": "retry_cap", "text": "cap retries per request with a retry budget"}]}
    assert wrap(run, repo, first).code == 0
    return [json.loads(ln) for ln in (repo / ".flow" / "episodes.jsonl").read_text().splitlines()]


def test_a_plan_repeating_a_stored_episode_under_another_agent_is_judged_as_the_store_records_it(run, repo):
    """The store's line is the episode's record: a plan that lists a stored episode again (one id) naming
    another agent lends it no independence. The raise is refused by the wrap with G103 and the rest of the
    wrap commits (before, the wrap let the raise through and the gate refused the whole wrap, exit 1)."""
    stored = _fresh_memory(run, repo)
    store_before = (repo / ".flow" / "episodes.jsonl").read_bytes()
    plan = {"session": "s1", "agent": "b", "state": "Focus: dashboards.", "episodes": [
        {"type": "outcome", "content": stored[1]["content"]}],
        "patterns": [{"op": "increment", "name": "retry_cap", "evidence": [stored[0]["id"], "#0"]}]}
    res = wrap(run, repo, plan, "--json")
    data = data_of(res)
    assert res.code == 0 and data["committed"], res.out + res.err
    assert data["refused"][0]["name"] == "retry_cap" and "G103" in data["refused"][0]["codes"]
    text = (repo / "CONTINUITY.md").read_text()
    assert "Focus: dashboards." in text and "! retry_cap:" in text and "!! retry_cap" not in text
    assert (repo / ".flow" / "episodes.jsonl").read_bytes() == store_before  # nothing recorded twice


def test_a_plan_listing_one_episode_twice_records_it_once(run, repo):
    """Two plan episodes with one id (the same text, other tags) are one episode, as `episode add` records
    them: written once, and the wrap commits (before, its own gate refused the store with G703)."""
    _fresh_memory(run, repo)
    plan = {"session": "s2", "agent": "a", "state": "Focus: cache warm-up.", "episodes": [
        {"type": "finding", "content": "the cache warmed in 3s"},
        {"type": "finding", "content": "the cache warmed in 3s", "tags": ["cache"]}]}
    res = wrap(run, repo, plan, "--json")
    assert res.code == 0 and data_of(res)["committed"], res.out + res.err
    lines = [json.loads(ln) for ln in (repo / ".flow" / "episodes.jsonl").read_text().splitlines()]
    warmed = [e for e in lines if e["content"] == "the cache warmed in 3s"]
    assert len(warmed) == 1 and warmed[0]["tags"] == [] and data_of(res)["episodes_recorded"] == [warmed[0]["id"]]


def test_the_confirmation_names_a_lowered_pattern_as_the_json_and_the_message_do(run, wrap_repo):
    """Every event the JSON summary names is a line of the human confirmation (before, a pattern lowered by
    hand was in the subject, the `Lowered:` trailer and the JSON, and missing from the confirmation)."""
    path = wrap_repo / "CONTINUITY.md"
    lines = path.read_text().splitlines(keepends=True)
    (at,) = [i for i, ln in enumerate(lines) if ln.startswith("!! retry_budget:")]
    lines[at] = "! retry_budget: cap retries per request so outages cannot multiply load | 1x\n"
    path.write_text("".join(lines))
    assert run(wrap_repo, "episode", "add", "--session", "sess-c", "--type", "observation",
               "the retry budget needs another look after the queue change").code == 0
    dry = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26", "--json", "--dry-run")
    assert dry.code == 0 and data_of(dry)["summary"]["patterns"] == {"lowered": ["retry_budget"]}, dry.out
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--date", "2026-11-26")
    assert res.code == 0, res.out + res.err
    assert "  patterns lowered: retry_budget" in res.out
    assert "Lowered: retry_budget 2x->1x" in git(wrap_repo, "log", "-1", "--format=%B")


def test_the_claim_of_a_demoted_pattern_under_another_name_is_refused_by_the_wrap_not_the_gate(run, repo):
    """G208 binds a demoted claim under any name: the wrap refuses raising the copy on the discredited chain
    (that promotion alone, with G208) and commits the rest, as the gate would judge it (before, the wrap let
    the raise through and the gate refused the whole wrap, exit 1)."""
    assert run(repo, "init", "--commit").code == 0
    claim = "use a short timeout on every call to the payment gateway"

    def plan_wrap(plan: dict) -> dict:
        path = repo.parent / "plan.json"
        path.write_text(json.dumps(plan))
        res = run(repo, "wrap", "--plan", str(path), "--json")
        assert res.code == 0, res.out + res.err
        return data_of(res)

    def last_id() -> str:
        return json.loads((repo / ".flow" / "episodes.jsonl").read_text().splitlines()[-1])["id"]

    plan_wrap({"session": "s1", "agent": "a", "state": "Focus: timeouts.", "episodes": [
        {"type": "finding", "content": "payment gateway hung for 90s; a short timeout on the payment call would "
                                       "have failed fast"}], "patterns": [{"op": "add", "name": "short_timeouts",
                                                                           "text": claim}]})
    e1 = last_id()
    plan_wrap({"session": "s2", "agent": "a", "state": "Focus: timeouts again.", "episodes": [
        {"type": "outcome", "content": "a 2s timeout on the payment gateway call kept checkout responsive when "
                                       "the gateway stalled"}],
        "patterns": [{"op": "increment", "name": "short_timeouts", "evidence": [e1, "#0"]}]})
    e2 = last_id()
    plan_wrap({"session": "s3", "agent": "b", "state": "Focus: graduation.", "episodes": [
        {"type": "outcome", "content": "short payment gateway timeout again failed fast in the Tuesday stall; "
                                       "checkout stayed up"}],
        "patterns": [{"op": "graduate", "name": "short_timeouts", "evidence": ["#0"]}]})
    plan_wrap({"session": "s4", "agent": "c", "state": "Focus: demote.", "episodes": [
        {"type": "tension", "content": "a short payment gateway timeout aborted valid slow 3-D Secure checks; the "
                                       "timeout call failed good payments"}],
        "patterns": [{"op": "demote", "name": "short_timeouts", "reason": "short timeout broke 3DS",
                      "evidence": ["#0"]}]})
    plan_wrap({"session": "s5", "agent": "c", "state": "Focus: re-add.", "episodes": [
        {"type": "finding", "content": "dashboards need a legend"}],
        "patterns": [{"op": "add", "name": "gateway_timeouts", "text": claim}]})
    data = plan_wrap({"session": "s6", "agent": "d", "state": "Focus: logging.", "episodes": [
        {"type": "finding", "content": "log lines lack request ids"}],
        "patterns": [{"op": "increment", "name": "gateway_timeouts", "evidence": [e1, e2]}]})
    assert data["committed"] and data["refused"][0]["name"] == "gateway_timeouts"
    assert "G208" in data["refused"][0]["codes"] and "is the claim of `short_timeouts`" in \
        data["refused"][0]["reasons"][0]
    text = (repo / "CONTINUITY.md").read_text()
    assert "Focus: logging." in text and "! gateway_timeouts:" in text and "!! gateway_timeouts" not in text


def test_a_pattern_added_beside_one_that_says_the_same_is_warned_before_the_commit(run, wrap_repo):
    """`candidates` named the pair only at the next wrap; the wrap that adds it says so, and names the one to
    increment instead. A pattern saying something else is added without a word."""
    plan = {"session": "sess-c", "state": "Focus: balances.",
            "episodes": [{"type": "finding", "content": "balances came from the cache, not the provider"}],
            "patterns": [{"op": "add", "name": "balance_cache", "text": "serve the balances from the cache "
                          "before asking the provider"}]}
    res = wrap(run, wrap_repo, plan, "--json")
    assert res.code == 0, res.out
    warned = [w for w in data_of(res)["warnings"] if "balance_cache" in w]
    assert len(warned) == 1 and warned[0].startswith("`balance_cache`, added now, is close to `cache_first`")
    assert "increment `cache_first` instead" in warned[0]
    plan = {"session": "sess-d", "state": "Focus: pools.",
            "episodes": [{"type": "finding", "content": "dashboards render in the browser time zone"}],
            "patterns": [{"op": "add", "name": "local_time", "text": "render dashboards in the viewer's zone"}]}
    res = wrap(run, wrap_repo, plan, "--json")
    assert res.code == 0 and not any("added now" in w for w in data_of(res)["warnings"]), res.out


def test_a_name_mistyped_in_a_hand_edit_is_warned_as_a_rename(run, wrap_repo):
    """Retyping a line to edit it renamed `cache_first` to `cache_frist` with nothing said but the subject."""
    path = wrap_repo / "CONTINUITY.md"
    path.write_text(path.read_text().replace("! cache_first:", "! cache_frist:")
                    .replace("Focus: outages.", "Focus: caching."))
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--json")
    assert res.code == 0, res.out + res.err
    data = data_of(res)
    assert [e["name"] for e in data["events"] if e["kind"] == "renamed"] == ["cache_frist"]
    assert any(w.startswith("`cache_first` was renamed `cache_frist`, a letter or two apart: if that is a "
                            "slip, restore the name `cache_first`") for w in data["warnings"]), data["warnings"]


@pytest.mark.parametrize("old, new, apart", [("cache_first", "cache_frist", 1), ("cache_first", "cache_fist", 1),
                                             ("cache_first", "cahce_firts", 2), ("retry_budget", "backoff", 3),
                                             ("cache_first", "balance_cache", 3)])
def test_names_a_slip_apart_are_counted_by_letters_and_swaps(old, new, apart):
    from flowgit.wrap.judgement import TYPO_EDITS, edits_apart

    assert min(edits_apart(old, new), TYPO_EDITS + 1) == apart


def test_an_action_items_next_date_that_cannot_be_read_or_has_passed_is_warned(run, wrap_repo):
    """`next: tomorrow` was never listed as overdue, and a `next:` already past was overdue as committed, both
    without a word. A date ahead, and an item the wrap leaves as it was, are not warned."""
    plan = {"session": "sess-c", "state": "Focus: actions.",
            "episodes": [{"type": "finding", "content": "three follow-ups came out of the review"}],
            "actions": {"add": ["call the provider — next: tomorrow", "rotate the keys — next: Nov 20",
                                "write the runbook — next: 2026-12-20"]}}
    res = wrap(run, wrap_repo, plan, "--date", "2026-11-26", "--json")
    assert res.code == 0, res.out + res.err
    warned = [w for w in data_of(res)["warnings"] if w.startswith("Action Items line")]
    assert len(warned) == 2, warned
    assert "`next: tomorrow` is not a date flowgit reads, so it is never listed as overdue: write it as a " \
           "date (`next: 2026-11-26` or `next: Nov 26`)" in warned[0]
    assert "`next: Nov 20` is 2026-11-20, already past (6 days): it is overdue as committed" in warned[1]
    again = {"session": "sess-d", "state": "Focus: other.",
             "episodes": [{"type": "finding", "content": "the review found nothing else"}]}
    res = wrap(run, wrap_repo, again, "--date", "2026-11-27", "--json")
    assert res.code == 0 and not any(w.startswith("Action Items line") for w in data_of(res)["warnings"])


@pytest.mark.parametrize("given, said", [
    ("2025-01-01", "the wrap is dated 2025-01-01 (`2025-01-01`), before HEAD's commit of 2026-11-24: the dates it "
                   "writes (graduations, the subject; a demotion is dated no earlier than the episodes about it) "
                   "read as older than the history before them"),
    ("2099-01-01", "the wrap is dated 2099-01-01 (`2099-01-01`), after today"),
    ("2026-11-25", None)])
def test_a_wrap_date_before_heads_commit_or_after_today_is_warned(run, wrap_repo, given, said):
    """`--date 2025-01-01` was taken without a word: every date the wrap writes read as older than its history."""
    plan = {"session": "sess-c", "state": "Focus: dates.",
            "episodes": [{"type": "finding", "content": "the dates were checked"}]}
    res = wrap(run, wrap_repo, plan, "--date", given, "--json")
    assert res.code == 0, res.out + res.err
    dated = [w for w in data_of(res)["warnings"] if w.startswith("the wrap is dated")]
    assert (dated[0].startswith(said) if said else dated == []), dated


def test_a_first_wrap_after_a_plain_init_says_the_merge_attributes_are_still_staged(run, repo):
    """`flowgit init` stages the set-up; a wrap commits only the memory and left `.gitattributes` staged without
    a word (sync then refused). It says so until the attributes are committed."""
    assert run(repo, "init", "--no-hooks").code == 0
    assert run(repo, "episode", "add", "--session", "s1", "--type", "finding", "the first fact").code == 0
    path = repo / "CONTINUITY.md"
    path.write_text(path.read_text().replace("## Current State\n", "## Current State\nFocus: starting.\n", 1))
    res = run(repo, "wrap", "--session", "s1", "--json")
    assert res.code == 0, res.out + res.err
    assert any(w.startswith("`.gitattributes`, which names flowgit's merge driver, is staged but not committed")
               for w in data_of(res)["warnings"])
    assert git(repo, "diff", "--cached", "--name-only").split() == [".gitattributes"]
    git(repo, "commit", "-qm", "flowgit: merge attributes", "--", ".gitattributes")
    path.write_text(path.read_text().replace("Focus: starting.", "Focus: going on."))
    res = run(repo, "wrap", "--session", "s1", "--json")
    assert res.code == 0 and not any("gitattributes" in w for w in data_of(res)["warnings"]), res.out
