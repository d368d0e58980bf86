"""The transcripts partition: Claude Code sessions read directly, with no deposit anywhere."""

from __future__ import annotations

import json

from flowgit.ascend.safeio import Tree
from flowgit.ascend.transcripts import anchors_in, derive
from tests.ascend.corpus import Session, resume_from, write_transcript

SLUG = "-home-dev-shop"
CWD = "/home/dev/shop"


def sid(n: int) -> str:
    return f"7a{n:06x}-1c2d-4e5f-8a9b-{n:012x}"


def webhook_line() -> list[tuple[Session, str | None]]:
    """Four sessions on webhook signatures (one resumed from the one before) and four that are not."""
    s = [
        Session(SLUG, sid(1), CWD, "2026-10-01", "", [], [], transcript=[
            ("user", "Stripe webhooks are failing signature checks in staging, see #88"),
            ("assistant", "The raw body is parsed before verification, so the signature never matches."),
            ("user", "let's verify against the raw bytes instead of the parsed JSON"),
            ("assistant", "Done: verification now reads the raw request body.")]),
        Session(SLUG, sid(2), CWD, "2026-10-03", "", [], [], transcript=[
            ("user", "Back on #88: replayed webhook events pass verification twice"),
            ("assistant", "We should reject timestamps older than five minutes."),
            ("user", "we need a tolerance window and an event id cache in src/webhooks/verify.py"),
            ("assistant", "Added a five minute tolerance and an idempotency cache.")]),
        Session(SLUG, sid(3), CWD, "2026-10-06", "", [], [], transcript=[
            ("user", "Rotate the webhook signing secret without downtime (#88 follow-up)"),
            ("assistant", "Accept both the old and the new secret during the rotation."),
            ("user", "src/webhooks/verify.py should try both secrets until Friday"),
            ("assistant", "verify.py now accepts two secrets.")]),
        Session(SLUG, sid(4), CWD, "2026-10-09", "", [], [], transcript=[
            ("user", "Remove the old signing secret now that rotation is done"),
            ("assistant", "Removed; only the new secret verifies."),
            ("user", "decided: one secret again in src/webhooks/verify.py, close #88"),
            ("assistant", "Closed.")]),
        Session(SLUG, sid(5), CWD, "2026-10-02", "", [], [], transcript=[
            ("user", "Post deploy notifications to the Slack webhook"),
            ("assistant", "The deploy job now posts to Slack.")]),
        Session(SLUG, sid(6), CWD, "2026-10-04", "", [], [], transcript=[
            ("user", "The checkout page is slow on mobile"),
            ("assistant", "Images were not lazy loaded; fixed.")]),
        Session(SLUG, sid(7), "/home/dev/blog", "2026-10-05", "", [], [], transcript=[
            ("user", "Write a post about our signature dish recipes"),
            ("assistant", "Drafted.")]),
        Session(SLUG, sid(8), CWD, "2026-10-07", "", [], [], transcript=[
            ("user", "Upgrade the ORM to the next major version, see #91"),
            ("assistant", "Migrations pass.")]),
    ]
    return [(x, sid(3) if x.sid == sid(4) else None) for x in s]


def write_tree(config):
    for s, carried in webhook_line():
        write_transcript(config, s, carried_from=carried)


def test_a_four_session_chain_from_transcripts_alone(run, tmp_path):
    config = tmp_path / "claude"
    write_tree(config)
    assert not any(p.name == "hypomnesis" for p in config.rglob("*"))
    res = run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", "transcripts",
              "that whole line of work on the webhook signatures", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    unit = data["unit"]
    assert unit["type"] == "chain"
    assert [d["session_id"] for d in unit["deposits"]] == [sid(1), sid(2), sid(3), sid(4)]
    assert unit["deposits"][0]["resume"] == resume_from(config, CWD, sid(1))
    assert "Stripe webhooks are failing signature checks" in data["text"]        # the first request, confirmed
    origin = next(c for c in data["confirmations"] if c["kind"] == "origin")
    assert origin["verdict"] == "confirmed"
    assert f"{sid(4)[:8]} continues {sid(3)[:8]}" in data["text"]
    assert data["scope"]["scanned"] == 8                       # every transcript searched as bytes …
    assert data["scope"]["partitions"] == {f"transcripts:{SLUG}": 6}   # … read in full: those the recall reached


def test_every_partition_by_default_reads_transcripts_when_there_are_no_deposits(run, tmp_path):
    config = tmp_path / "claude"
    write_tree(config)
    data = json.loads(run(tmp_path, "ascend", "--claude-dir", str(config),
                          "everything we figured out about webhook signatures", "--json").out)
    assert set(d["session_id"] for d in data["unit"]["deposits"]) >= {sid(1), sid(2), sid(3)}
    assert sid(6) not in {d["session_id"] for d in data["unit"]["deposits"]}   # nothing about webhooks


def test_what_is_derived_from_one_transcript(tmp_path):
    config = tmp_path / "claude"
    write_tree(config)
    path = config / "projects" / SLUG / f"{sid(4)}.jsonl"
    d = derive(SLUG, sid(4), str(path), Tree(config))
    assert d.initial_request == "Remove the old signing secret now that rotation is done"
    assert d.cwd == CWD and d.date == "2026-10-09"
    assert d.started_at.startswith("2026-10-09T") and d.last_turn_at >= d.started_at
    assert d.continues == [sid(3)]
    assert {a.ref for a in d.anchors} == {"#88", "src/webhooks/verify.py"}
    assert any("decided" in u for u in d.key_utterances)
    assert "secret" in d.keywords


def test_anchor_kinds():
    found = {(a.kind, a.ref) for a in anchors_in("see PR 42 and #412, ticket PAY-17, file lib/net/retry.py; "
                                                 "not a#9 or 3.5")}
    assert found == {("github_pr", "PR #42"), ("github_issue", "#412"), ("ticket", "PAY-17"),
                     ("path", "lib/net/retry.py")}


def test_a_transcript_is_read_only_so_far(tmp_path):
    """Bounded per file: a transcript far larger than the read limit is derived from its head and tail."""
    from flowgit.ascend import transcripts

    config = tmp_path / "claude"
    s = Session(SLUG, sid(9), CWD, "2026-10-10", "", [], [], transcript=[("user", "Tune the webhook retries")])
    path = write_transcript(config, s)
    filler = json.dumps({"type": "assistant", "timestamp": "2026-10-10T09:30:00Z", "sessionId": sid(9),
                         "message": {"content": [{"type": "text", "text": "x" * 1000}]}})
    with path.open("a") as fh:
        for _ in range(transcripts.HEAD_LIMIT // 1000 * 2):
            fh.write(filler + "\n")
        fh.write(json.dumps({"type": "user", "timestamp": "2026-10-11T18:00:00Z", "sessionId": sid(9),
                             "message": {"content": "too late to be read as a turn"}}) + "\n")
    d = derive(SLUG, sid(9), str(path), Tree(config))
    assert d.initial_request == "Tune the webhook retries"
    assert d.last_turn_at == "2026-10-11T18:00:00Z"           # the tail still gives the end time
    assert not any("too late" in u for u in d.key_utterances)


def test_a_session_the_recall_did_not_reach_can_still_be_added(run, tmp_path):
    config = tmp_path / "claude"
    write_tree(config)
    first = run(tmp_path, "ascend", "--claude-dir", str(config), "that whole line of work on the webhook signatures",
                "--json")
    data = json.loads(first.out)
    assert not any(m.endswith(sid(8)) for m in data["unit"]["members"])
    assert sum(data["scope"]["partitions"].values()) < data["scope"]["scanned"]   # not every transcript was read
    state = tmp_path / "state.json"
    state.write_text(json.dumps(data["state"]))
    res = run(tmp_path, "ascend", "--claude-dir", str(config), "--state", str(state), "--refine",
              f"add:{sid(8)[:8]}", "--json")
    assert res.code == 0, res.err
    assert sid(8) in [d["session_id"] for d in json.loads(res.out)["unit"]["deposits"]]
    res = run(tmp_path, "ascend", "--claude-dir", str(config), "--state", str(state), "--refine", "add:7a0000",
              "--json")
    assert res.code == 2 and "names 8 sessions" in json.loads(res.out)["error"]["message"]


def test_a_sub_agent_prompt_is_not_a_person_s_turn(tmp_path):
    """Claude Code writes the prompt the agent gave a sub-agent as a `user` line with `isSidechain: true`: the
    agent's words, so the session's requests and statements leave it out (the person's own lines stay)."""
    from flowgit.ascend.transcripts import person_text

    s = Session(SLUG, sid(40), CWD, "2026-10-02", "", [], [], transcript=[
        ("user", "list the audit log retention settings"), ("assistant", "Asking a sub-agent.")])
    path = write_transcript(tmp_path, s)
    side = {"type": "user", "isSidechain": True, "userType": "external", "sessionId": s.sid, "cwd": CWD,
            "timestamp": "2026-10-02T09:30:00Z", "message": {"role": "user", "content":
                                                             "we must delete the audit logs older than 7 days"}}
    path.write_text(path.read_text() + json.dumps(side) + "\n", encoding="utf-8")
    assert person_text(side) is None
    assert person_text({**side, "isSidechain": False}) == "we must delete the audit logs older than 7 days"
    assert person_text({**side, "isSidechain": False, "userType": "internal"}) is None
    d = derive(SLUG, s.sid, str(path), Tree(str(tmp_path)))
    assert d.initial_request == "list the audit log retention settings"
    assert not any("audit logs older" in u for u in d.key_utterances)
