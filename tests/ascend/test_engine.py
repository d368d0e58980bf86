"""The protocol's loop on a real corpus: Phase 0 binding and scope, hand-offs, Refine, finality, ended states."""

from __future__ import annotations

import json

import pytest

from flowgit.ascend.assemble import fold_subsets
from flowgit.ascend.graph import abbreviations
from flowgit.ascend.model import CHAIN, CLUSTER, Deposit, Unit
from flowgit.ascend.trace import classify, extract, split_references
from tests.ascend.corpus import A, ISSUE, Session, resume_from, write_session, write_story

SID = {n: f"{n:08x}-5e55-4a1d-9c0f-{n:012x}" for n in range(1, 12)}


@pytest.fixture
def corpus(tmp_path):
    config = tmp_path / "claude"
    write_story(config)
    return config


def refused(res):
    """A refusal under --json: the error is JSON on stdout; its message and fix as one text."""
    assert "Traceback" not in res.err, res.err
    error = json.loads(res.out)["error"]
    return f"{error['message']}\n{error.get('fix') or ''}"


def ask(run, cwd, config, *args, code=0):
    res = run(cwd, "ascend", "--claude-dir", str(config), "--partition", "claude", *args, "--json")
    assert res.code == code, res.err
    return json.loads(res.out) if code == 0 else refused(res)


def answer(run, cwd, config, data, *args, code=0):
    state = cwd / "state.json"
    state.write_text(json.dumps(data["state"]))
    res = run(cwd, "ascend", "--claude-dir", str(config), "--state", str(state), *args, "--json")
    assert res.code == code, res.err
    return json.loads(res.out) if code == 0 else refused(res)


def sids(data) -> list[str]:
    return [d["session_id"] for d in data["unit"]["deposits"]]


def test_from_a_session_alone_assembles_its_line_with_the_origin(run, tmp_path, corpus):
    data = ask(run, tmp_path, corpus, "--from", SID[3])
    assert data["unit"]["type"] == "chain"
    assert sids(data) == [SID[1], SID[2], SID[3], SID[4]]
    prefixed = ask(run, tmp_path, corpus, "--from", SID[3][:8])
    assert sids(prefixed) == sids(data)
    res = ask(run, tmp_path, corpus, "--from", "0000000", code=2)
    assert "names 10 sessions" in res


def test_refine_add_puts_the_session_into_the_unit(run, tmp_path, corpus):
    gate = ask(run, tmp_path, corpus, "everything we figured out about the cache")
    assert SID[9] not in sids(gate)
    added = answer(run, tmp_path, corpus, gate, "--refine", f"add:{SID[9][:8]}")
    assert SID[9] in sids(added) and added["state"]["attempts"] == 2
    bad = answer(run, tmp_path, corpus, gate, "--refine", "add:ffffffff", code=2)
    assert "no session 'ffffffff'" in bad
    again = answer(run, tmp_path, corpus, gate, "--refine", "sideways", code=2)   # a typo spends no try
    assert "unknown refinement" in again


def test_a_turned_down_unit_is_never_presented_again(run, tmp_path, corpus):
    gate = ask(run, tmp_path, corpus, "everything we figured out about the cache")
    first = sorted(gate["unit"]["members"])
    widened = answer(run, tmp_path, corpus, gate, "--refine", "widen")
    assert sorted(widened["unit"]["members"]) != first if widened["unit"] else widened["status"] == "rescope"
    assert ["cluster", *first] in widened["state"]["rejected"]


@pytest.mark.parametrize("flag", [["--reorient", "chain"], ["--refine", "widen"], ["--recognize"],
                                  ["--rescope", "widen"]])
def test_an_ended_recall_answers_with_exit_2_and_a_message(run, tmp_path, corpus, flag):
    data = ask(run, tmp_path, corpus, "the kubernetes autoscaler saga")
    data = answer(run, tmp_path, corpus, data, "--rescope", "widen")
    data = answer(run, tmp_path, corpus, data, "--rescope", "type:chain")
    assert data["status"] == "null_match"
    res = answer(run, tmp_path, corpus, data, *flag, code=2)
    assert "this recall has already ended (nothing larger than a session was found)" in res
    assert "flowgit ascend" in res


def test_moderate_ambiguity_widens_the_scope(run, tmp_path, corpus):
    clear = ask(run, tmp_path, corpus, "that whole line of work on the retry budget")
    assert clear["state"]["ambiguity"] == "low" and clear["state"]["scope"]["hops"] == 3
    partial = ask(run, tmp_path, corpus, "retry budget gateway production rollout")
    assert partial["state"]["ambiguity"] == "moderate" and partial["state"]["scope"]["hops"] == 4


def test_trigger_signals_pick_the_unit_shape(corpus):
    from flowgit.ascend.graph import DepositIndex

    index = DepositIndex.build([])
    assert classify(extract("where did the retry budget work land?"), index) == CHAIN
    assert classify(extract("where did we end up with the gateway"), index) == CHAIN
    assert classify(extract("this is bigger than that one session about retries"), index) == CHAIN
    assert classify(extract("everything we figured out about webhooks"), index) == CLUSTER
    assert classify(extract("the principle we ended up calling budget-first"), index) == "concept"
    assert extract("where did the retry budget land").keywords == ["budget", "retry"]


def test_several_references_bind_to_the_first_and_note_the_rest(run, tmp_path, corpus):
    first, rest = split_references("that whole line of work on the retry budget, and everything we figured out "
                                   "about the cache")
    assert first == "that whole line of work on the retry budget"
    assert rest == ["everything we figured out about the cache"]
    assert split_references("the retry budget and timeouts work") == ("the retry budget and timeouts work", [])
    data = ask(run, tmp_path, corpus, "that whole line of work on the retry budget; also the flaky login test")
    assert data["unit"]["type"] == "chain" and sids(data) == [SID[1], SID[2], SID[3], SID[4]]
    assert data["state"]["noted"] == ["the flaky login test"]
    assert "You also mentioned “the flaky login test”" in data["text"]


def test_a_subset_of_the_top_unit_is_folded_into_it():
    ds = [Deposit("claude", A, f"s{i}") for i in range(4)]
    big = Unit(CHAIN, ds, [], "big", score=2.0)
    part = Unit(CHAIN, ds[:2], [], "part", score=1.0)
    other = Unit(CHAIN, [ds[0], Deposit("claude", A, "x")], [], "other", score=0.5)
    assert fold_subsets([big, part, other]) == [big, other]
    assert fold_subsets([part, big]) == [big]


def test_short_ids_are_unique_like_git_abbreviations(run, tmp_path):
    config = tmp_path / "claude"
    for n, day in ((1, "2026-11-01"), (2, "2026-11-02"), (3, "2026-11-03")):
        write_session(config, Session(A, f"11111111-aaa{n}-4000-8000-00000000000{n}", "/p", day,
                                      f"retry budget step {n}", ["retry budget"], ["retry", "budget"],
                                      cross_refs=[ISSUE], continuations=[] if n == 3 else
                                      [f"11111111-aaa{n + 1}-4000-8000-00000000000{n + 1}"]))
    assert abbreviations(["11111111-aaa1", "11111111-aaa2", "22"]) == {
        "11111111-aaa1": "11111111-aaa1", "11111111-aaa2": "11111111-aaa2", "22": "22"}
    data = ask(run, tmp_path, config, "that whole line of work on the retry budget")
    text = data["text"]
    for n in (1, 2, 3):
        assert f"· 11111111-aaa{n} —" in text
    assert "11111111-aaa2 continues 11111111-aaa1" in text                # the later session continues the earlier


def test_the_record_date_replaces_the_index_date_everywhere(run, tmp_path):
    config = tmp_path / "claude"
    s = Session(A, SID[1], "/p", "2026-11-02", "retry budget start", ["retry budget"], ["retry", "budget"],
                cross_refs=[ISSUE])
    write_session(config, s)
    clue = config / "projects" / A / "hypomnesis" / SID[1] / "clue.md"
    clue.write_text(clue.read_text().replace("date: 2026-11-02", "date: 2026-10-30"))
    write_session(config, Session(A, SID[2], "/p", "2026-11-04", "retry budget next", ["retry budget"],
                                  ["retry", "budget"], cross_refs=[ISSUE]))
    data = ask(run, tmp_path, config, "that whole line of work on the retry budget")
    sources = data["text"].split("Sources, and how to go back", 1)[1]
    assert f"{SID[1]} · 2026-11-02" in sources and "2026-10-30" not in sources
    node = data["unit"]["deposits"][0]
    assert node["date"] == "2026-11-02" and node["index_date"] == "2026-10-30"


def test_no_resume_command_for_a_session_without_a_transcript(run, tmp_path, corpus):
    (corpus / "projects" / "-home-dev-infra" / f"{SID[4]}.jsonl").unlink()
    data = ask(run, tmp_path, corpus, "that whole line of work on the retry budget")
    arrival = data["unit"]["deposits"][-1]
    assert arrival["session_id"] == SID[4] and arrival["resume"] is None
    assert "transcript is not on disk" in arrival["not_resumable"]
    assert f"claude --resume {SID[4]}" not in data["text"]


def test_the_no_match_fallback_offers_the_closest_session_with_its_resume_command(run, tmp_path, corpus):
    """Two sessions touched equally (neither resolves the recall alone) and nothing joins them: three tries,
    then the closest one with its way back in."""
    data = ask(run, tmp_path, corpus, "the whole saga of the pipeline docs")
    while data["status"] == "rescope":
        data = answer(run, tmp_path, corpus, data, "--rescope", "widen")
    assert data["status"] == "null_match"
    assert resume_from(corpus, "/home/dev/infra", SID[9]) in data["text"]
    assert data["closest_session"]["session_id"] == SID[9] and data["single_session"] is None
    assert "\n  Or" not in data["text"] and "Or the" not in data["text"]
    nothing = ask(run, tmp_path, corpus, "the zeppelin hangar saga")
    while nothing["status"] == "rescope":
        nothing = answer(run, tmp_path, corpus, nothing, "--rescope", "widen")
    assert "closest single session" not in nothing["text"]
    assert nothing["text"].rstrip().endswith("need finding afresh")


def test_an_answer_reads_the_deposit_tree_the_state_was_read_from(run, tmp_path, corpus):
    """The documented answer step names no --claude-dir: it read ~/.claude, and a refine went on in another
    tree. The state keeps its tree; an answer naming another one is refused."""
    gate = ask(run, tmp_path, corpus, "everything we figured out about the cache")
    assert gate["state"]["claude_dir"] == str(corpus.absolute())
    state = tmp_path / "state.json"
    state.write_text(json.dumps(gate["state"]))
    res = run(tmp_path, "ascend", "--state", str(state), "--recognize", "--json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["status"] == "recognized"
    other = tmp_path / "other"
    (other / "projects").mkdir(parents=True)
    res = run(tmp_path, "ascend", "--claude-dir", str(other), "--state", str(state), "--recognize", "--json")
    assert res.code == 2 and "the state was read from" in res.err + res.out


def test_a_unit_found_by_everyday_words_alone_is_put_to_the_person_not_shown_as_certain(run, tmp_path):
    """Three unrelated sessions whose only common ground is "problem" and "data", among others that name
    neither: never a high-confidence unit shown inline."""
    config = tmp_path / "claude"
    generic = (("/home/u/payments-api", "problem with the data export to the accountants", ["export", "data"]),
               ("/home/u/web-shop", "analytics data looks wrong, some problem with timezones", ["analytics", "data"]),
               ("/home/u/ops", "backup data problem: snapshots missing", ["backup", "snapshots", "data"]))
    others = ("retry budget for the payment gateway", "cache stampede on the product page",
              "login test flaking in CI", "kafka consumer lag alerts", "terraform state lock cleanup",
              "pdf invoice fonts")
    sessions = [(cwd, request, keywords) for cwd, request, keywords in generic]
    sessions += [("/home/u/misc", request, request.split()[:2]) for request in others]
    for n, (cwd, request, keywords) in enumerate(sessions, 1):
        write_session(config, Session(cwd.replace("/", "-"), SID[n], cwd, f"2026-11-{n:02d}", request, [request],
                                      keywords, transcript=[("user", request), ("assistant", "ok")]))
    data = ask(run, tmp_path, config, "everything we figured out about the problem with the data")
    unit = data["unit"]
    assert not (data["status"] == "inline" and unit and unit["confidence"] == "high"), unit


def test_a_copied_deposit_directory_does_not_count_its_session_twice(run, tmp_path):
    """`cp -r SID SID.bak`: the copy's clue.md still names SID; a deposit's directory is its session id."""
    import shutil

    config = tmp_path / "claude"
    for n in (1, 2, 3):
        deposit = write_session(config, Session(A, SID[n], "/home/dev/payments", f"2026-11-0{n}",
                                                f"search indexing lag, part {n}", ["search indexing"],
                                                ["search", "indexing", "lag"], cross_refs=[ISSUE]))
    shutil.copytree(deposit, deposit.with_name(SID[3] + ".bak"))
    data = ask(run, tmp_path, config, "the whole line of work on search indexing lag #412")
    assert sorted(sids(data)) == [SID[1], SID[2], SID[3]]
    assert any(f"{SID[3]}.bak" in r and "copied or moved" in r for r in data["scope"]["refused"])


def test_a_deposit_without_clue_or_narrative_leaves_its_session_to_the_transcript(run, tmp_path):
    """Any deposit file may be missing: a directory holding only vector.md and markers.md is not read as a
    deposit, so the session's transcript is, and the scope says why."""
    config = tmp_path / "claude"
    for n in (1, 2, 3):
        files = ("vector.md", "markers.md") if n == 2 else ("clue.md", "narrative.md")
        write_session(config, Session(A, SID[n], "/home/dev/payments", f"2026-11-0{n}",
                                      f"search indexing lag, part {n}, see #412", ["search indexing"],
                                      ["search", "indexing", "lag"], cross_refs=[ISSUE], files=files,
                                      transcript=[("user", f"search indexing lag, part {n}, see #412"),
                                                  ("assistant", "ok")]))
    res = run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", "claude", "--partition", "transcripts",
              "the whole line of work on search indexing lag #412", "--json")
    data = json.loads(res.out)
    assert sorted(sids(data)) == [SID[1], SID[2], SID[3]]
    assert any(SID[2] in r and "neither clue.md nor narrative.md" in r for r in data["scope"]["refused"])


def test_a_whole_line_of_work_that_one_session_resolves_is_handed_to_that_session(run, tmp_path):
    """"That whole line of work on the flaky login test": one session matches and nothing joins it. Phase 0's
    decisive test says defer to it, not spend a try on a rescope that names no session."""
    config = tmp_path / "claude"
    topics = ["the flaky login test in CI", "kafka consumer lag alerts", "terraform state lock cleanup",
              "pdf invoice fonts", "cache stampede on the product page"]
    for n, request in enumerate(topics, 1):
        write_session(config, Session(A, SID[n], "/home/dev/payments", f"2026-11-0{n}", request, [request],
                                      request.split()[1:4]))
    data = ask(run, tmp_path, config, "that whole line of work on the flaky login test")
    assert data["status"] == "single_session"
    assert data["single_session"]["session_id"] == SID[1]


def _gateway_line(config) -> None:
    """Four sessions on one issue, the third the only one that speaks of the gateway; one unrelated session."""
    steps = [("Why do payment retries storm the provider?", ["retry", "storm"]),
             ("Design a retry budget for the payment client", ["retry", "budget"]),
             ("Roll the retry budget out to the infra gateway", ["retry", "budget", "gateway"]),
             ("Did the retry budget hold in production?", ["retry", "budget", "production"])]
    for n, (request, words) in enumerate(steps, 1):
        write_session(config, Session(A, SID[n], "/home/dev/payments", f"2026-11-0{n}", request, [request], words,
                                      cross_refs=[ISSUE]))
    write_session(config, Session(A, SID[5], "/home/dev/payments", "2026-11-05", "Fix the flaky login test",
                                  ["flaky login test"], ["flaky", "login"]))


@pytest.mark.parametrize("recall", ["the gateway rollout", "the gateway rollout and what came before it"])
def test_a_session_that_leads_the_recall_but_shares_its_issue_with_others_is_not_the_answer_alone(
        run, tmp_path, recall):
    """Phase 0 hands a recall to one session only when nothing larger joins it: the session that alone names
    the gateway is one step of a line of work on issue #412, and the line is what comes back."""
    config = tmp_path / "claude"
    _gateway_line(config)
    data = ask(run, tmp_path, config, recall)
    assert data["status"] != "single_session" and data["single_session"] is None
    assert data["unit"]["type"] == "chain"
    assert [m.rsplit(":", 1)[1] for m in data["unit"]["members"]] == [SID[1], SID[2], SID[3], SID[4]]


def test_a_recall_that_asks_for_one_session_gets_it_though_a_line_joins_it(run, tmp_path):
    config = tmp_path / "claude"
    _gateway_line(config)
    data = ask(run, tmp_path, config, "the session where we rolled out the gateway")
    assert data["status"] == "single_session" and data["single_session"]["session_id"] == SID[3]


def test_a_date_the_session_record_does_not_attest_is_shown_provisional_in_text_and_graph(run, tmp_path):
    """A transcript without timestamps leaves the index's date unattested (`date_verdict` says so): the text's
    line and the graph's node showed it bare, as fact."""
    config = tmp_path / "claude"
    _gateway_line(config)
    transcript = config / "projects" / A / f"{SID[1]}.jsonl"
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    transcript.write_text("".join(json.dumps({k: v for k, v in line.items() if k != "timestamp"}) + "\n"
                                  for line in lines))
    data = ask(run, tmp_path, config, "the whole line of work on issue #412")
    first = next(d for d in data["unit"]["deposits"] if d["session_id"] == SID[1])
    assert first["date_verdict"] == "unattested"
    began = data["text"].split("Where it began", 1)[1].splitlines()[1]
    assert "2026-11-01 (provisional: the session record does not date it)" in began, began
    graph = run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", "claude", "--format", "mermaid",
                "the whole line of work on issue #412").out
    assert "2026-11-01 (provisional)" in graph and "2026-11-02 (provisional)" not in graph


def test_a_node_of_two_deposits_lists_each_with_its_own_id_and_date(run, tmp_path):
    """`a2` and `A2` are one session to ascend (a session's spellings are one), read from two projects: the
    source line named one id and one date, and the other deposit's never appeared (ascend.md Rule 19)."""
    from tests.ascend.corpus import B

    config = tmp_path / "claude"
    for slug, sid, day, request in ((A, "a1", "2026-03-02", "Why does the ledger export time out?"),
                                    (A, "a2", "2026-03-04", "Paginate the ledger export"),
                                    (B, "A2", "2026-05-20", "Ship the paginated ledger export")):
        write_session(config, Session(slug, sid, "/home/dev/x", day, request, ["ledger export"],
                                      ["ledger", "export"], cross_refs=[ISSUE]))
    text = ask(run, tmp_path, config, "the whole line of work on the ledger export")["text"]
    sources = text.split("Sources, and how to go back into each session", 1)[1]
    assert f"project {A} · a2 · 2026-03-04" in sources and f"project {B} · A2 · 2026-05-20" in sources, sources


def test_recognize_refuses_a_state_whose_unit_the_deposits_do_not_assemble(run, tmp_path, corpus):
    """The state travels through other hands: an edited candidate (two unrelated sessions, a borrowed label and
    confidence) is not recognised as a unit the deposits never implied."""
    gate = ask(run, tmp_path, corpus, "everything we figured out about the cache")
    assert gate["status"] in ("gate", "inline")
    state = gate["state"]
    keys = {d["session_id"]: d for d in gate["unit"]["deposits"]}
    assert keys  # the real candidate is recognised as it was presented
    assert answer(run, tmp_path, corpus, gate, "--recognize")["status"] == "recognized"
    state["presented"][-1].update(members=[f"claude:{A}:{SID[8]}", f"claude:{A}:{SID[10]}"],
                                  label="cache", confidence="high")
    said = answer(run, tmp_path, corpus, {"state": state}, "--recognize", code=2)
    assert "not a unit the deposits assemble" in said


def _refund_line(config, repo) -> None:
    """Three sessions on #950 in ``repo``; the third also has a wrap commit and an episode an agent added.
    An older session (no deposit, no transcript) once wrote "drop the legacy queue…" into the continuity file."""
    from tests.ascend.corpus import Wrap, continuity, write_wraps

    old = "- Decided: drop the legacy queue and page the on-call for every refund"
    write_wraps(repo, [Wrap("sess-old-0001", "2026-10-01", continuity("Focus: refunds.", [old]), "Session wrap Oct 1")])
    for n in (1, 2, 3):
        said = [("user", f"refund pipeline work for #950 part {n}"), ("assistant", "ok"),
                ("user", "let's keep the legacy queue for now"), ("assistant", "Agreed, the legacy queue stays.")]
        write_session(config, Session(
            "-refunds", SID[n], str(repo), f"2026-11-0{n}", f"refund pipeline work for #950 part {n}",
            ["refund pipeline"], ["refund", "pipeline", "queue"], transcript=said,
            cross_refs=[{"kind": "github_issue", "ref": "#950", "channel": "user"}], outcome="The legacy queue stays.",
            utterances=["we must refund every duplicate charge automatically"] if n == 3 else
            ["let's keep the legacy queue for now"],
            decisions=["drop the legacy queue and page the on-call for every refund"] if n == 3 else []))
    write_wraps(repo, [Wrap(SID[3], "2026-11-03", continuity("Focus: refunds.", [old, "- legacy queue kept"]),
                            "Session wrap Nov 3")])


def test_a_session_s_claims_are_checked_against_its_own_transcript_not_the_continuity_file_or_episodes(
        run, repo, tmp_path, monkeypatch):
    """Read with every partition, session 3 is one node of a deposit, a transcript, a wrap commit and an
    episode. Its decision is only in the continuity file (another session wrote it); its utterance only in
    an agent's episode ("proposal, not agreed"). Neither is confirmed — nor when its transcript is gone —
    while the other sessions' words, in their transcripts, are."""
    config = tmp_path / "claude"
    run(repo, "init", "--no-hooks")
    _refund_line(config, repo)
    monkeypatch.setenv("FLOWGIT_SESSION", SID[3])
    assert run(repo, "episode", "add", "--type", "observation", "--agent", "claude",
               "agent note: we must refund every duplicate charge automatically (proposal, not agreed)").code == 0

    def verdicts() -> dict[tuple[str, str], str]:
        res = run(repo, "ascend", "--claude-dir", str(config), "that whole line of work on #950", "--json")
        data = json.loads(res.out)
        third = next(d for d in data["unit"]["deposits"] if d["session_id"] == SID[3])
        assert sorted(s["partition"] for s in third["sources"]) == ["claude", "episodes", "git"]
        quoted = [c for c in data["confirmations"] if c["kind"] in ("utterance", "decision")]
        assert all(c["said_by"] == "person" for c in quoted if c["verdict"] == "confirmed")
        return {(c["deposit"][-1], c["kind"]): c["verdict"] for c in quoted}

    assert verdicts() == {("1", "utterance"): "confirmed", ("2", "utterance"): "confirmed",
                          ("3", "utterance"): "unattested", ("3", "decision"): "unattested"}
    (config / "projects" / "-refunds" / f"{SID[3]}.jsonl").unlink()   # cleaned up after 30 days
    assert verdicts()[("3", "decision")] == "unattested" and verdicts()[("3", "utterance")] == "unattested"


def test_a_wrap_commit_s_record_is_what_it_changed_not_the_whole_continuity_file(run, repo):
    """The file at a commit holds what every earlier session wrote: the commit's own record is its message
    and the lines it added, written down by an agent (never the person's words)."""
    from flowgit.ascend.engine import _wrap_record
    from tests.ascend.corpus import Wrap, continuity, write_wraps

    run(repo, "init", "--no-hooks")
    old, kept = "- Decided: drop the legacy queue", "- legacy queue kept"
    shas = write_wraps(repo, [Wrap("s-old", "2026-10-01", continuity("Focus.", [old]), "Session wrap Oct 1"),
                              Wrap("s-new", "2026-11-03", continuity("Focus.", [old, kept]), "Session wrap Nov 3")])
    record = _wrap_record(Deposit("git", "git:repo", "s-new", source=repo, source_ref=f"{shas[1]}:CONTINUITY.md",
                                  started_at="2026-11-03T12:00:00+00:00"))
    assert [t.role for t in record] == ["note", "note"]
    assert record[0].text.startswith("Session wrap Nov 3") and record[1].text == kept


def test_a_session_s_first_request_and_date_are_shown_as_its_record_has_them(run, tmp_path, corpus):
    """--json's deposits carried the index's first request beside the record's date, and the no-match's
    closest session the index's date: each now comes as the record has it, with its verdict."""
    from dataclasses import replace

    from tests.ascend.corpus import story, write_transcript

    said = "Why do payment retries multiply during a provider outage?"
    write_transcript(corpus, replace(story()[0], first_request=said))
    data = ask(run, tmp_path, corpus, "that whole line of work on the retry budget")
    first = data["unit"]["deposits"][0]
    assert first["session_id"] == SID[1]
    assert (first["initial_request"], first["initial_request_verdict"]) == (said, "corrected")
    assert first["index_initial_request"] == "Why do payment retries storm the provider?"
    assert all(d["initial_request_verdict"] == "confirmed" for d in data["unit"]["deposits"][1:])

    write_transcript(corpus, replace(story()[8], date="2026-10-01"))   # the index says 2026-11-16
    nothing = ask(run, tmp_path, corpus, "the whole saga of the pipeline docs")
    while nothing["status"] == "rescope":
        nothing = answer(run, tmp_path, corpus, nothing, "--rescope", "widen")
    closest = nothing["closest_session"]
    assert closest["session_id"] == SID[9]
    assert (closest["date"], closest["date_verdict"], closest["index_date"]) == ("2026-10-01", "corrected",
                                                                                  "2026-11-16")
    assert "(2026-10-01 (from the session record; the index said 2026-11-16), " in nothing["text"]


HOOK = {"kind": "github_issue", "ref": "#960", "channel": "user"}


@pytest.mark.parametrize("with_transcript", [True, False])
def test_time_order_compares_instants_across_time_zones(run, tmp_path, with_transcript):
    """09:00+09:00 is 00:00Z: it began before a session at 08:00Z that day, whether the record (its first
    stamped turn) or only the index (``started_at`` with its offset) dates it."""
    config = tmp_path / "claude"
    first = Session(A, SID[1], "/home/u/hooks", "2026-11-06", "first look at the webhook signature failures #960",
                    ["webhook signatures"], ["webhook", "signature"], cross_refs=[HOOK], start_hour=0)
    second = Session(A, SID[2], "/home/u/hooks", "2026-11-06", "fix the webhook signature clock skew #960",
                     ["webhook signatures"], ["webhook", "signature"], cross_refs=[HOOK], start_hour=8)
    third = Session(A, SID[3], "/home/u/hooks", "2026-11-07", "ship the webhook signature fix #960",
                    ["webhook signatures"], ["webhook", "signature"], cross_refs=[HOOK], start_hour=10)
    for s in (first, second, third):
        write_session(config, s, with_transcript=with_transcript)
    clue = config / "projects" / A / "hypomnesis" / SID[1] / "clue.md"
    clue.write_text(clue.read_text().replace('started_at: "2026-11-06T00:00:00Z"',
                                             'started_at: "2026-11-06T09:00:00+09:00"'))
    data = ask(run, tmp_path, config, "that whole line of work on #960")
    assert sids(data) == [SID[1], SID[2], SID[3]]
    began = data["text"].split("Where it began", 1)[1].split("\n")[1]
    assert SID[1][:8] in began and "first look at the webhook signature failures" in began


def _undated_line(config, *, record: bool) -> None:
    """Three sessions on #970; the first one's deposit has no date and no start time (an older deposit)."""
    ref = {"kind": "github_issue", "ref": "#970", "channel": "user"}
    sessions = [Session(A, SID[1], "/home/u/mail", "2026-10-01", "first report of the duplicate emails bug #970",
                        ["duplicate emails"], ["duplicate", "emails"], cross_refs=[ref], outcome="Open."),
                Session(A, SID[2], "/home/u/mail", "2026-11-02", "dedupe the outbound emails by message id #970",
                        ["duplicate emails"], ["duplicate", "emails"], cross_refs=[ref], outcome="Dedupe merged."),
                Session(A, SID[3], "/home/u/mail", "2026-11-05", "verify the duplicate emails fix in production #970",
                        ["duplicate emails"], ["duplicate", "emails"], cross_refs=[ref],
                        outcome="Verified fixed in production.")]
    for s in sessions:
        write_session(config, s, with_transcript=record or s is not sessions[0])
    entry = config / "projects" / A / "hypomnesis" / SID[1]
    for name in ("clue.md", "narrative.md"):
        text = (entry / name).read_text()
        lines = [x for x in text.splitlines(keepends=True) if not x.startswith(("date:", "started_at:"))]
        (entry / name).write_text("".join(lines))


def test_an_undated_session_takes_its_place_from_its_record(run, tmp_path):
    config = tmp_path / "claude"
    _undated_line(config, record=True)
    data = ask(run, tmp_path, config, "that whole line of work on #970")
    assert sids(data) == [SID[1], SID[2], SID[3]] and data["unit"]["undated"] == []
    arrived = data["text"].split("Where it arrived", 1)[1].split("\n")[1]
    assert SID[3][:8] in arrived and "Verified fixed in production." in arrived


def test_a_session_nothing_dates_is_never_where_the_line_arrived(run, tmp_path):
    """No date in its index and no record to date it: it belongs to the line, but has no place in time; text
    and graph show one order."""
    config = tmp_path / "claude"
    _undated_line(config, record=False)
    data = ask(run, tmp_path, config, "that whole line of work on #970")
    key = f"claude:{A}:{SID[1]}"
    assert sids(data) == [SID[2], SID[3], SID[1]] and data["unit"]["undated"] == [key]
    text = data["text"]
    assert SID[2][:8] in text.split("Where it began", 1)[1].split("\n")[1]
    arrived = text.split("Where it arrived", 1)[1].split("\n")[1]
    assert SID[3][:8] in arrived and "Verified fixed in production." in arrived
    unknown = text.split("When unknown (nothing dates these sessions, so they have no place in the order above)",
                         1)[1].split("\n")[1]
    assert unknown.startswith(f"  undated · project {A} · {SID[1][:8]}")
    standing = [c["deposit"] for c in data["confirmations"] if c["kind"] == "standing"]
    assert standing == [f"claude:{A}:{SID[3]}"]
    res = run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", "claude",
              "that whole line of work on #970", "--format", "mermaid")
    nodes = [line for line in res.out.splitlines() if '["' in line]
    assert [SID[2][:8] in nodes[0], SID[3][:8] in nodes[1], SID[1][:8] in nodes[2]] == [True, True, True]
