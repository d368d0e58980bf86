"""ascend on a corpus in the exact on-disk formats: every unit type, the loop, confirmation, safety, read-only."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.ascend.corpus import A, B, ISSUE, Session, resume_from, story, write_session, write_story
from tests.conftest import git

SID = {n: f"{n:08x}-5e55-4a1d-9c0f-{n:012x}" for n in range(1, 11)}


@pytest.fixture
def corpus(tmp_path) -> Path:
    config = tmp_path / "claude"
    write_story(config)
    return config


def ascend(run, cwd, config, *args, stdin=None):
    res = run(cwd, "ascend", "--claude-dir", str(config), "--partition", "claude", *args, "--json", stdin=stdin)
    assert res.code == 0, res.err
    return json.loads(res.out)


def follow(run, cwd, config, data, *answer):
    state = cwd / "state.json"
    state.write_text(json.dumps(data["state"]))
    res = run(cwd, "ascend", "--claude-dir", str(config), "--state", str(state), *answer, "--json")
    assert res.code == 0, res.err
    return json.loads(res.out)


def sids(unit) -> list[str]:
    return [d["session_id"] for d in unit["deposits"]]


# ------------------------------------------------------------------ unit types
def test_chain_of_four_sessions_across_two_partitions_in_order(run, tmp_path, corpus):
    data = ascend(run, tmp_path, corpus, "that whole line of work on the retry budget")
    assert data["status"] in ("inline", "gate")
    unit = data["unit"]
    assert unit["type"] == "chain" and unit["label"] == "#412"
    assert sids(unit) == [SID[1], SID[2], SID[3], SID[4]]
    assert {d["slug"] for d in unit["deposits"]} == {A, B}
    assert "Where it began" in data["text"] and "Where it arrived" in data["text"]
    assert "both refer to #412" in data["text"]
    assert data["caveat"] and "past trajectory" in data["text"]


def test_topic_cluster_from_keywords_alone(run, tmp_path, corpus):
    data = ascend(run, tmp_path, corpus, "everything we figured out about the cache")
    unit = data["unit"]
    assert unit["type"] == "cluster"
    assert sids(unit) == [SID[5], SID[6], SID[7]]
    assert not any(a for d in story() if d.sid in sids(unit) for a in d.cross_refs)  # no shared anchors at all
    assert "Where the topic last stood" in data["text"]


def test_coined_term_leads_to_its_concept_node(run, tmp_path, corpus):
    data = ascend(run, tmp_path, corpus, "the principle we ended up calling budget-first")
    unit = data["unit"]
    assert unit["type"] == "concept" and unit["label"] == "budget-first"
    assert unit["node"].endswith(SID[2])  # the deposit that coined it
    assert set(sids(unit)) == {SID[2], SID[3]}
    first = next(c for c in data["confirmations"] if c["kind"] == "first_use")
    assert first["verdict"] == "confirmed" and first["deposit"].endswith(SID[2])


def test_a_recall_one_session_answers_is_relayed_as_such(run, tmp_path, corpus):
    data = ascend(run, tmp_path, corpus, "the session where we fixed the flaky login test")
    assert data["status"] == "single_session" and data["converged"]
    single = data["single_session"]
    assert single["session_id"] == SID[8]
    assert single["resume"] == resume_from(corpus, "/home/dev/payments", SID[8])
    assert "One session answers this" in data["text"]


def test_type_override(run, tmp_path, corpus):
    data = ascend(run, tmp_path, corpus, "retry budget", "--type", "cluster")
    assert data["unit"]["type"] == "cluster"


# ---------------------------------------------------------------------- the loop
def test_empty_traversal_rescopes_and_three_empty_ones_end_in_no_match(run, tmp_path, corpus):
    first = ascend(run, tmp_path, corpus, "the kubernetes autoscaler saga")
    assert first["status"] == "rescope" and first["state"]["attempts"] == 1
    values = [c["value"] for c in first["options"][0]["choices"]]
    assert "widen" in values and any(v.startswith("type:") for v in values)
    second = follow(run, tmp_path, corpus, first, "--rescope", "widen")
    assert second["status"] == "rescope" and second["state"]["attempts"] == 2
    third = follow(run, tmp_path, corpus, second, "--rescope", "type:chain")
    assert third["status"] == "null_match" and third["state"]["attempts"] == 3 and third["converged"]
    assert third["state"]["presented"] == [] and third["state"]["rescopes"] == ["widen", "type:chain"]
    assert "No larger unit could be recognised in three tries" in third["text"]
    assert "closest single session" in third["text"] or "finding afresh" in third["text"]


def test_gate_recognize_refine_reorient_and_exhaustion(run, tmp_path, corpus):
    gate = ascend(run, tmp_path, corpus, "everything we figured out about the cache")
    assert gate["status"] == "gate"
    assert [o["answer"] for o in gate["options"]] == ["recognize", "refine", "reorient"]
    recognized = follow(run, tmp_path, corpus, gate, "--recognize")
    assert recognized["status"] == "recognized" and recognized["state"]["recognized"]
    assert "Recognised:" in recognized["text"]
    refined = follow(run, tmp_path, corpus, gate, "--refine", f"drop:{SID[7][:12]}")
    assert refined["state"]["attempts"] == 2
    assert SID[7] not in sids(refined["unit"]) and sids(refined["unit"]) == [SID[5], SID[6]]
    reoriented = follow(run, tmp_path, corpus, {**refined, "state": {**refined["state"], "status": "gate"}},
                        "--reorient", "that whole line of work on the retry budget")
    assert reoriented["state"]["attempts"] == 3 and reoriented["unit"]["type"] == "chain"
    exhausted = follow(run, tmp_path, corpus, {**reoriented, "state": {**reoriented["state"], "status": "gate"}},
                       "--refine", "widen")
    assert exhausted["status"] == "exhausted" and exhausted["unit"] is not None
    assert "best candidate found earlier" in exhausted["text"]


def test_interactive_loop_on_a_terminal(run, tmp_path, corpus):
    res = run(tmp_path, "ascend", "--claude-dir", str(corpus), "--partition", "claude", "--interactive",
              "the kubernetes autoscaler saga", stdin="1\n1\n1\n")
    assert res.code == 0, res.err
    assert res.out.count("Try another way") == 2 and "No larger unit could be recognised" in res.out
    res = run(tmp_path, "ascend", "--claude-dir", str(corpus), "--partition", "claude", "--interactive",
              "everything we figured out about the cache", stdin="2\nsideways\n1\n")
    assert "unknown refinement 'sideways'" in res.out and "Recognised:" in res.out


def test_bad_state_and_bad_answers_are_clear_errors(run, tmp_path, corpus):
    bad = tmp_path / "state.json"
    bad.write_text("{not json")
    res = run(tmp_path, "ascend", "--claude-dir", str(corpus), "--state", str(bad), "--recognize")
    assert res.code == 2 and "state" in res.err and "Traceback" not in res.err
    res = run(tmp_path, "ascend", "--claude-dir", str(corpus), "--from", "../../etc", "x")
    assert res.code == 2 and "not a session id" in res.err
    res = run(tmp_path, "ascend", "--claude-dir", str(corpus), "--partition", "nope", "x")
    assert res.code == 2 and "unknown partition" in res.err


@pytest.mark.parametrize("answer", [("--recognize",), ("--refine", "narrow"), ("--rescope", "widen"),
                                    ("--reorient", "cache")])
def test_an_answer_without_a_state_is_refused_not_dropped(run, tmp_path, corpus, answer):
    for mode in ((), ("--json",)):
        res = run(tmp_path, "ascend", "--claude-dir", str(corpus), "the whole line of work on the cache", *answer,
                  *mode)
        assert res.code == 2, res.out
        said = json.loads(res.out)["error"] if mode else res.err
        assert f"--{answer[0][2:]} answers a presented unit" in str(said) and "--state" in str(said)


@pytest.mark.parametrize("name, data, said, line", [
    ("utf16.json", '{"state": {"version": 1}}'.encode("utf-16"), "UTF-16", None),
    ("latin1.json", b'{"recall":\n "caf\xe9"}', "not UTF-8 (byte 0xe9)", 2),
    ("nested.json", b"[" * 100_000 + b"]" * 100_000, "nested too deeply", None),
], ids=["utf16", "latin1", "nested"])
def test_a_state_file_that_cannot_be_read_is_an_error_naming_it_and_the_fix(run, tmp_path, corpus, name, data,
                                                                            said, line):
    """A state saved as UTF-16 (PowerShell's `>`) or Latin-1, or JSON nested past the parser's stack."""
    bad = tmp_path / name
    bad.write_bytes(data)
    res = run(tmp_path, "ascend", "--claude-dir", str(corpus), "--state", str(bad), "--recognize")
    assert res.code == 2 and "Traceback" not in res.err
    assert f"{bad}{f':{line}' if line else ''}: the state" in res.err and said in res.err and "fix:" in res.err
    res = run(tmp_path, "ascend", "--claude-dir", str(corpus), "--state", str(bad), "--recognize", "--json")
    error = json.loads(res.out)["error"]
    assert res.code == 2 and said in error["message"] and error["file"] == str(bad) and error["line"] == line
    assert "UTF-8" in error["fix"] or "state" in error["fix"]


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_a_state_path_that_is_no_regular_file_is_refused_never_waited_on(run, tmp_path, corpus, kind):
    """A FIFO nobody writes would block the read forever, and /dev/zero never ends."""
    import os

    target = tmp_path / "state.fifo"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "directory":
        target.mkdir()
    else:
        target = Path("/dev/zero")
    res = run(tmp_path, "ascend", "--claude-dir", str(corpus), "--state", str(target), "--recognize")
    assert res.code == 2 and "Traceback" not in res.err
    assert f"{target}: cannot read the state (is" in res.err and "fix:" in res.err


def test_a_missing_state_file_is_named_with_a_fix_about_the_state(run, tmp_path, corpus):
    """"cannot read the state: it no such file (fix: … run `flowgit init`)": broken words, and a fix about a
    memory that is not missing. Now the file is named, the reason said, and the fix is about the state."""
    res = run(tmp_path, "ascend", "--claude-dir", str(corpus), "--state", "nosuch.json", "--recognize")
    assert res.code == 2 and "nosuch.json: cannot read the state (no such file)" in res.err, res.err
    assert "flowgit init" not in res.err and "previous --json answer" in res.err


def test_a_state_with_a_utf8_byte_order_mark_is_read(run, tmp_path, corpus):
    data = ascend(run, tmp_path, corpus, "everything we figured out about the cache")
    state = tmp_path / "state.json"
    state.write_bytes(b"\xef\xbb\xbf" + json.dumps(data["state"]).encode())
    res = run(tmp_path, "ascend", "--claude-dir", str(corpus), "--state", str(state), "--recognize", "--json")
    assert res.code == 0, res.out


# ------------------------------------------------------------------ confirmation
def test_contradicted_claim_is_corrected_and_missing_one_is_provisional(run, tmp_path, corpus):
    data = ascend(run, tmp_path, corpus, "everything we figured out about the cache")
    claims = {(c["deposit"].rsplit(":", 1)[-1], c["kind"]): c for c in data["confirmations"]}
    corrected = claims[(SID[5], "origin")]
    assert corrected["verdict"] == "corrected"
    assert corrected["shown"] == "How long can we cache account balances before they go stale?"
    assert "corrected from the session record" in data["text"]
    provisional = claims[(SID[6], "utterance")]
    assert provisional["verdict"] == "unattested"
    assert "cache invalidation is the real problem here” — 00000006 (not found in the session record: " \
           "provisional)" in data["text"]
    assert claims[(SID[6], "origin")]["verdict"] == "confirmed"


def test_every_quirk_is_read(run, tmp_path, corpus):
    data = ascend(run, tmp_path, corpus, "that whole line of work on the retry budget")
    scope = data["scope"]
    assert scope["skipped_entries"] == 3                 # .hyp-*, subagent/, .outcomes/
    assert scope["legacy_anchors"] >= 1                  # "  - #412" read as null by YAML, recovered
    assert scope["reindexed_narratives"] >= 1
    assert any("forks into" in b for b in scope["broken_links"])
    by_sid = {d["session_id"]: d for d in data["unit"]["deposits"]}
    assert by_sid[SID[3]]["resume"] is None and "not be resumed" in by_sid[SID[3]]["not_resumable"]
    cache = ascend(run, tmp_path, corpus, "everything we figured out about the cache")
    assert {d["session_id"]: d["resume"] for d in cache["unit"]["deposits"]}[SID[6]] is None   # cwd: ""
    assert cache["scope"]["missing_files"] >= 5          # the deposit with only clue.md


# ---------------------------------------------------------------------- safety
def test_hostile_cwd_and_traversal_session_id(run, tmp_path):
    config = tmp_path / "claude"
    evil = '/tmp/x"; rm -rf ~; "'
    hostile = evil.replace("/", "-").replace(".", "-")  # the slug of the directory it was started from
    write_session(config, Session(hostile, "aaaa0001", evil, "2026-11-01", "hostile start", ["hostile topic"],
                                  ["hostile", "quoting"], cross_refs=[ISSUE]))
    write_session(config, Session(A, "aaaa0002", "/tmp/ok", "2026-11-02", "hostile follow-up", ["hostile topic"],
                                  ["hostile", "quoting"], cross_refs=[ISSUE]))
    traversal = Session(A, "aaaa0003", "/tmp/ok", "2026-11-03", "hostile third", ["hostile topic"],
                        ["hostile", "quoting"], cross_refs=[ISSUE])
    deposit = write_session(config, traversal)
    clue = deposit / "clue.md"
    clue.write_text(clue.read_text().replace('session_id: "aaaa0003"', 'session_id: "../../../etc/passwd"'))
    data = ascend(run, tmp_path, config, "the whole line of work on hostile quoting #412")
    deposits = {d["session_id"]: d for d in data["unit"]["deposits"]}
    assert set(deposits) == {"aaaa0001", "aaaa0002"}           # the traversal id is refused
    assert any("../../../etc/passwd" in r for r in data["scope"]["refused"])
    command = deposits["aaaa0001"]["resume"]
    assert subprocess.run(["bash", "-n", "-c", command]).returncode == 0
    words = shlex.split(command)
    assert words[:2] == ["cd", evil] and words[2] == "&&" and words[3:] == [f"CLAUDE_CONFIG_DIR={config.absolute()}", "claude", "--resume", "aaaa0001"]


def test_the_resume_command_enters_the_directory_the_session_was_started_from(run, tmp_path):
    """The session is found by the directory it is resumed in: a deposit that recorded a directory the session
    moved into resumes from the parent the partition is named after; one from elsewhere prints no command."""
    config = tmp_path / "claude"
    slug = "-home-u-shop"
    for n, cwd in ((1, "/home/u/shop"), (2, "/home/u/shop/services/search"), (3, "/srv/other/place")):
        write_session(config, Session(slug, f"3d3d000{n}", cwd, f"2026-11-0{n}", f"search indexing lag part {n}",
                                      ["search indexing"], ["search", "indexing", "lag"], cross_refs=[ISSUE]))
    data = ascend(run, tmp_path, config, "the whole line of work on search indexing lag #412")
    deposits = {d["session_id"]: d for d in data["unit"]["deposits"]}
    assert deposits["3d3d0001"]["resume"] == resume_from(config, "/home/u/shop", "3d3d0001")
    assert deposits["3d3d0002"]["resume"] == resume_from(config, "/home/u/shop", "3d3d0002")
    assert deposits["3d3d0003"]["resume"] is None
    assert "not the one it was started from" in deposits["3d3d0003"]["not_resumable"]


# -------------------------------------------------------- the other partitions
def test_git_history_and_episodes_join_the_chain(run, repo, tmp_path, corpus):
    run(repo, "init", "--no-hooks")
    (repo / "CONTINUITY.md").write_text("## Current State\nretry budget rollout\n\n## Developing Knowledge\n"
                                        "! retry_budget: cap retries per request | 1x\n")
    run(repo, "episode", "add", "--type", "outcome", "--content", "the retry budget held in production",
        "--session", SID[4], "--tag", "retry")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"Session wrap Nov 9 — added retry_budget\n\nFlow-Session: {SID[4]}\n")
    sha = git(repo, "rev-parse", "HEAD").strip()
    res = run(repo, "ascend", "--claude-dir", str(corpus), "that whole line of work on the retry budget", "--json")
    data = json.loads(res.out)
    unit = data["unit"]
    assert sids(unit) == [SID[1], SID[2], SID[3], SID[4]]        # one session, one node: still four sessions
    node = next(d for d in unit["deposits"] if d["session_id"] == SID[4])
    assert [s["partition"] for s in node["sources"]] == ["claude", "git", "episodes"]
    assert next(s for s in node["sources"] if s["partition"] == "git")["ref"] == f"{sha}:CONTINUITY.md"
    assert node["resumes"][:2] == [resume_from(corpus, "/home/dev/infra", SID[4]),
                                   f"git -C {shlex.quote(str(repo))} show {sha}:CONTINUITY.md"]
    assert "A line of work across 4 sessions" in data["text"]
    assert "continuity file history" in data["text"]


def test_an_episode_session_that_is_no_plain_id_is_reported_not_dropped_unsaid(run, repo, tmp_path):
    """`episode add --session alice@laptop` is stored; ascend cannot carry such an id into a resume command or
    an answer's state, so its episodes are not read, and the answer says so (it said nothing)."""
    run(repo, "init", "--no-hooks")
    for session in ("alice@laptop", "carol 2", "bob-3"):
        assert run(repo, "episode", "add", "--type", "outcome", "--content", f"the retry budget held for {session}",
                   "--session", session, "--tag", "retry").code == 0
    (tmp_path / "none" / "projects").mkdir(parents=True)
    res = run(repo, "ascend", "--claude-dir", str(tmp_path / "none"), "--partition", "episodes",
              "the retry budget", "--json")
    data = json.loads(res.out)
    refused = data["scope"]["refused"]
    assert any("'alice@laptop'" in r and "1 episode(s) were not read" in r for r in refused), refused
    assert any("'carol 2'" in r for r in refused) and not any("bob-3" in r for r in refused)


# -------------------------------------------------------------------- read-only
def test_no_command_path_writes_anything(run, repo, tmp_path, corpus):
    run(repo, "init", "--no-hooks")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"start\n\nFlow-Session: {SID[4]}\n")

    def digest():
        out = {}
        for root in (corpus, repo):
            for p in sorted(root.rglob("*")):
                rel = f"{root.name}/{p.relative_to(root)}"
                out[rel] = p.read_bytes() if p.is_file() else "dir"
        return out

    before = digest()
    paths = [
        ("that whole line of work on the retry budget",),
        ("everything we figured out about the cache",),
        ("the principle we ended up calling budget-first",),
        ("the session where we fixed the flaky login test",),
        ("the kubernetes autoscaler saga",),
    ]
    for args in paths:
        res = run(repo, "ascend", "--claude-dir", str(corpus), *args, "--json")
        assert res.code == 0, res.err
    gate = json.loads(run(repo, "ascend", "--claude-dir", str(corpus), "everything we figured out about the cache",
                          "--json").out)
    state = tmp_path / "state.json"
    state.write_text(json.dumps(gate))
    for answer in (["--recognize"], ["--refine", "widen"], ["--reorient", "chain"], ["--reorient", "the cache"]):
        assert run(repo, "ascend", "--claude-dir", str(corpus), "--state", str(state), *answer, "--json").code == 0
    empty = json.loads(run(repo, "ascend", "--claude-dir", str(corpus), "nothing like this", "--json").out)
    state.write_text(json.dumps(empty))
    assert run(repo, "ascend", "--claude-dir", str(corpus), "--state", str(state), "--rescope", "widen").code == 0
    run(repo, "ascend", "--claude-dir", str(corpus), "--interactive", "everything we figured out about the cache",
        stdin="2\nwiden\n1\n")
    assert digest() == before


def test_claude_config_dir_comes_from_the_environment(run, tmp_path, corpus, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(corpus))
    res = run(tmp_path, "ascend", "--partition", "claude", "the session where we fixed the flaky login test", "--json")
    assert json.loads(res.out)["status"] == "single_session"


@pytest.mark.parametrize("recall, status", [("everything we figured out about the cache", "gate"),
                                            ("that whole line of work on the retry budget", None)])
def test_the_text_answer_gives_commands_ready_to_answer_it_without_a_terminal(run, tmp_path, corpus, recall, status):
    """The text said "rerun with --json, then pass its state back"; an inline unit said nothing. Now both give
    the commands, and they run as written (the same recall, type, partition and tree)."""
    import shlex

    from tests.ascend.hints import terminal_free_commands

    res = run(tmp_path, "ascend", "--claude-dir", str(corpus), "--partition", "claude", recall)
    assert res.code == 0, res.err
    first, answers = terminal_free_commands(res.out)
    assert first[:2] == ["flowgit", "ascend"] and first[-3:] == ["--json", "--", recall]
    again = run(tmp_path, *first[1:])
    assert again.code == 0, again.err
    data = json.loads(again.out)
    assert status is None or data["status"] == status
    (tmp_path / "ascend.json").write_text(again.out)
    refine = next(a for a in answers if a.startswith("--refine drop:"))
    answered = run(tmp_path, "ascend", "--state", "ascend.json", *shlex.split(refine), "--json")
    assert answered.code == 0, answered.err
    assert json.loads(answered.out)["state"]["attempts"] == 2


@pytest.mark.parametrize("recall", ["--claude-dir=/elsewhere the retry budget", "-h the retry budget"])
def test_the_command_to_answer_without_a_terminal_asks_a_recall_that_looks_like_an_option(run, tmp_path, corpus,
                                                                                          recall):
    """The printed command put the recall where options are read: `--claude-dir=/elsewhere …` named another
    tree when it ran, `-h …` printed the help. After `--` it is the recall again."""
    from tests.ascend.hints import terminal_free_commands

    res = run(tmp_path, "ascend", "--claude-dir", str(corpus), "--partition", "claude", "--no-interactive", "--",
              recall)
    assert res.code == 0, res.err
    first, _ = terminal_free_commands(res.out)
    assert first[-2:] == ["--", recall]
    again = run(tmp_path, *first[1:])
    assert again.code == 0, again.err
    assert json.loads(again.out)["state"]["recall"] == recall
