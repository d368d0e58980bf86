"""One session, one node: a session seen in several partitions is counted, ranked and narrated once."""

from __future__ import annotations

import json

from flowgit.ascend.merge import merge_sessions
from flowgit.ascend.model import Anchor, Deposit
from tests.ascend.corpus import A, Session, Wrap, continuity, story, write_session, write_transcript, write_wraps
from tests.conftest import git

SID = {n: f"{n:08x}-5e55-4a1d-9c0f-{n:012x}" for n in range(1, 12)}


def test_a_mixed_corpus_counts_each_session_once(run, repo, tmp_path):
    config = tmp_path / "claude"
    for s in story():
        write_session(config, s)
    # a fifth session on the line with no deposit: only its transcript
    write_transcript(config, Session(A, SID[11], "/home/dev/payments", "2026-11-11", "", [], [], transcript=[
        ("user", "Retry budget follow-up for #412: alert when the budget is spent"),
        ("assistant", "Added an alert on the retry budget.")]))
    run(repo, "init", "--no-hooks")
    # wraps of two of the sessions, and the episodes one of them recorded
    write_wraps(repo, [
        Wrap(SID[2], "2026-11-04", continuity("x", ["! retry_budget: cap retries per request | 1x"]),
             "Session wrap Nov 4 — added retry_budget"),
        Wrap(SID[4], "2026-11-09", continuity("y", ["! retry_budget: cap retries per request | 1x",
                                                     "! budget_alerts: alert on a spent budget | 1x"]),
             "Session wrap Nov 9 — added budget_alerts"),
    ])
    run(repo, "episode", "add", "--type", "outcome", "--content", "the retry budget held in production",
        "--session", SID[4], "--tag", "retry")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"episode\n\nFlow-Session: {SID[4]}\n")
    data = json.loads(run(repo, "ascend", "--claude-dir", str(config), "that whole line of work on the retry budget",
                          "--json").out)
    ids = [d["session_id"] for d in data["unit"]["deposits"]]
    assert ids == [SID[1], SID[2], SID[3], SID[4], SID[11]]
    assert len(ids) == len(set(ids))
    assert "A line of work across 5 sessions" in data["text"]
    node = data["unit"]["deposits"][3]
    assert [s["partition"] for s in node["sources"]] == ["claude", "git", "episodes"]
    text = data["text"].split("Sources, and how to go back into each session", 1)[1].split("\n\nScope")[0]
    assert sum(1 for line in text.splitlines() if line.lstrip()[:2] in {f"{n}." for n in range(1, 10)}) == 5


def test_merging_keeps_the_deposit_as_the_face_and_unions_what_the_others_know():
    claude = Deposit("claude", A, "s1", cwd="/p", date="2026-11-02", started_at="2026-11-02T09:00:00Z",
                     topics=["retry budget"], anchors=[Anchor("github_issue", "#412")])
    wrap1 = Deposit("git", "git:repo", "s1", cwd="/repo", date="2026-11-02", started_at="2026-11-02T18:00:00Z",
                    topics=["Session wrap"], anchors=[Anchor("pattern", "retry_budget")], source_ref="a:C.md")
    wrap2 = Deposit("git", "git:repo", "s1", cwd="/repo", date="2026-11-03", started_at="2026-11-03T18:00:00Z",
                    last_turn_at="2026-11-03T18:00:00Z",
                    anchors=[Anchor("pattern", "retry_budget"), Anchor("evidence", "ep-1")], source_ref="b:C.md")
    other = Deposit("git", "git:repo", "s2")
    merged = merge_sessions([wrap1, other, claude, wrap2])
    assert [d.sid for d in merged] == ["s1", "s2"]
    face = merged[0]
    assert face is claude and face.also == [wrap1, wrap2]
    assert {a.key for a in face.anchors} == {"ref:#412", "pattern:retry_budget", "evidence:ep-1"}
    assert face.date == "2026-11-02" and face.started_at == "2026-11-02T09:00:00Z"
    assert face.last_turn_at == "2026-11-03T18:00:00Z"


def test_an_episodes_words_quoted_beside_its_sessions_wrap_are_confirmed_by_the_store(run, repo):
    """A node made of a wrap commit and the same session's episodes: a decision quoted from an episode is
    checked against the store, which confirms an agent wrote it down (it was shown as provisional) — listed
    apart from the people's own words, which no agent's note can confirm."""
    run(repo, "init", "--no-hooks")

    def episode(session: str, kind: str, words: str) -> str:
        res = run(repo, "episode", "add", "--json", "--type", kind, "--session", session, "--agent", session, words)
        return json.loads(res.out)["added"][0]["id"]

    def wrap(plan: dict) -> None:
        res = run(repo, "wrap", "--plan", "-", stdin=json.dumps(plan))
        assert res.code == 0, res.out + res.err

    episode("s1", "decision", "cap retries per request with a retry budget of 3")
    first = episode("s1", "outcome", "capping retries per request at a budget of 3 kept provider load flat")
    wrap({"session": "s1", "patterns": [{"op": "add", "name": "retry_budget",
                                         "text": "cap retries per request so an outage cannot multiply load"}]})
    second = episode("s2", "outcome", "the retry budget of 3 per request held provider load flat in the outage")
    wrap({"session": "s2", "patterns": [{"op": "increment", "name": "retry_budget", "evidence": [first, second]}]})
    data = json.loads(run(repo, "ascend", "that whole line of work on the retry budget", "--partition", "git",
                          "--partition", "episodes", "--no-interactive", "--json").out)
    assert "“cap retries per request with a retry budget of 3” — s1 (written down by an agent on " in data["text"]
    assert "As agents wrote them down (not the people's own words)" in data["text"]
    assert "In their own words" not in data["text"]
    quoted = next(c for c in data["confirmations"] if c["kind"] == "utterance")
    assert quoted["verdict"] == "confirmed" and quoted["said_by"] == "agent"
    assert "not found in the session record" not in data["text"]
    sources = data["text"].split("Sources, and how to go back into each session", 1)[1]
    assert f"continuity file history of {repo.name} + episodic store · s1" in sources


def _episodes(run, repo, *added: tuple[str, str, str]) -> None:
    assert run(repo, "init", "--commit").code == 0
    for kind, session, text in added:
        assert run(repo, "episode", "add", "--type", kind, "--session", session, text).code == 0
    for n in range(6):
        assert run(repo, "episode", "add", "--type", "finding", "--session", f"other-{n}",
                   f"unrelated note number {n} about the billing ledger export cron").code == 0


def test_one_session_spelled_three_ways_is_one_session_not_a_cluster(run, repo):
    """`Sess-1`, `sess-1` and `SESS_1` are one session to the gate (G103) and to `episode list --session`: the
    store's episodes of it are one deposit, and a git wrap under another spelling joins it."""
    _episodes(run, repo, ("finding", "Sess-1", "the zorblax gateway drops retries under load"),
              ("decision", "sess-1", "cap zorblax gateway retries at three per request"),
              ("outcome", "SESS_1", "zorblax gateway retry cap shipped to staging"))
    res = run(repo, "ascend", "--partition", "episodes", "--no-interactive", "--json",
              "everything we figured out about the zorblax gateway")
    data = json.loads(res.out)
    assert res.code == 0 and data["unit"] is None and data["status"] == "single_session", res.out
    assert data["single_session"]["session_id"] == "Sess-1"
    folded = merge_sessions([Deposit(partition="git", slug="git:r", sid="SESS-1"),
                             Deposit(partition="episodes", slug="episodes", sid="sess_1")])
    assert len(folded) == 1 and folded[0].partitions == ["git", "episodes"]


def test_a_quote_names_the_session_that_said_it_even_when_its_id_holds_a_colon(run, repo):
    """A session id may hold `:` (`dev:alpha`); the quote's line named what follows the key's last colon, so
    another member of the unit (`alpha`) was shown saying it."""
    _episodes(run, repo, ("decision", "dev:alpha", "cap zorblax gateway retries at three per request"),
              ("finding", "alpha", "the zorblax gateway drops retries under load"),
              ("outcome", "beta", "zorblax gateway retry cap shipped to staging"))
    res = run(repo, "ascend", "--partition", "episodes", "--no-interactive",
              "everything we figured out about the zorblax gateway")
    line = next(ln for ln in res.out.splitlines() if "“cap zorblax gateway retries at three per request”" in ln)
    assert "— dev:alpha (" in line, line
