"""The continuity file's history as a partition: wrap commits joined by pattern names, evidence and derivations."""

from __future__ import annotations

import json
import shlex

import pytest

from tests.ascend.corpus import A, Session, Wrap, continuity, resume_from, write_session, write_wraps
from tests.conftest import git

RETRY_1 = "! retry_budget: cap retries per request, shared across calls | 1x"
RETRY_2 = "!! retry_budget: cap retries per request, shared across calls | 2x (RELIABILITY) [evidence: ep-aa01, ep-aa02]"
RETRY_3 = ("!! retry_budget: cap retries per request, shared across calls | 3x (RELIABILITY — 2026-11-06) "
           "[evidence: ep-aa01, ep-aa02, ep-aa03]")
CACHE_1 = "! cache_warmup: warm the balance cache before the morning peak | 1x"
CACHE_2 = "!! cache_warmup: warm the balance cache before the morning peak | 2x (PERF) [evidence: ep-bb01, ep-bb02]"
LOGIN_1 = "! login_wait: wait for the session cookie in login tests | 1x"
ALERTS = "! retry_alerts: page someone when a request spends its whole allowance | 1x [<- retry_budget]"


def seven_wraps() -> list[Wrap]:
    """Seven wraps in one repository, a day apart; the 1st, 3rd, 5th and 7th are on retry_budget."""
    return [
        Wrap("sess-a", "2026-11-02", continuity("Focus: payment retries.", [RETRY_1]),
             "Session wrap Nov 2 — added retry_budget"),
        Wrap("sess-b", "2026-11-03", continuity("Focus: balance cache.", [RETRY_1, CACHE_1]),
             "Session wrap Nov 3 — added cache_warmup"),
        Wrap("sess-c", "2026-11-04", continuity("Focus: measuring retries.", [RETRY_2, CACHE_1]),
             "Session wrap Nov 4 — incremented retry_budget",
             ["Incremented: retry_budget 1x->2x [evidence: ep-aa01, ep-aa02]"]),
        Wrap("sess-d", "2026-11-05", continuity("Focus: flaky login test.", [RETRY_2, CACHE_1, LOGIN_1]),
             "Session wrap Nov 5 — added login_wait"),
        Wrap("sess-e", "2026-11-06", continuity("Focus: production review.", [CACHE_1, LOGIN_1], [RETRY_3]),
             "Session wrap Nov 6 — graduated retry_budget to Proven",
             ["Graduated: retry_budget [evidence: ep-aa01, ep-aa02, ep-aa03]"]),
        Wrap("sess-f", "2026-11-07", continuity("Focus: cache again.", [CACHE_2, LOGIN_1], [RETRY_3]),
             "Session wrap Nov 7 — incremented cache_warmup",
             ["Incremented: cache_warmup 1x->2x [evidence: ep-bb01, ep-bb02]"]),
        Wrap("sess-g", "2026-11-08", continuity("Focus: alerting.", [CACHE_2, LOGIN_1, ALERTS], [RETRY_3]),
             "Session wrap Nov 8 — added retry_alerts"),
    ]


@pytest.fixture
def wrapped(run, repo, tmp_path):
    run(repo, "init", "--no-hooks")
    shas = write_wraps(repo, seven_wraps())
    empty = tmp_path / "no-claude"
    empty.mkdir()
    return repo, empty, shas


@pytest.mark.parametrize("recall", [
    "that whole line of work on the retry budget",
    "that whole line of work on retry_budget",
    "where did the retry budget work land",
    "the whole arc of the retry budget, from the start",
])
def test_four_wraps_on_one_pattern_are_one_line_in_order(run, wrapped, recall):
    repo, empty, shas = wrapped
    res = run(repo, "ascend", "--claude-dir", str(empty), recall, "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    unit = data["unit"]
    assert unit["type"] == "chain"
    assert [d["session_id"] for d in unit["deposits"]] == ["sess-a", "sess-c", "sess-e", "sess-g"]
    assert "A line of work across 4 sessions" in data["text"]
    began = data["text"].split("Where it began", 1)[1].split("\n")[1]
    assert "sess-a" in began and "added retry_budget" in began
    assert "both changed the pattern retry_budget" in data["text"]
    assert "a new pattern derived from retry_budget" in data["text"]      # sess-g's [<- retry_budget]
    origin = unit["deposits"][0]
    assert origin["resume"] == f"git -C {shlex.quote(str(repo))} show {shas[0]}:CONTINUITY.md"
    assert "same project directory" not in data["text"]     # the directory is no evidence inside one repository


def test_shared_evidence_ids_join_wraps_that_name_no_common_pattern(run, repo, tmp_path):
    run(repo, "init", "--no-hooks")
    write_wraps(repo, [
        Wrap("s1", "2026-11-02", continuity("a", ["!! queue_depth: alert on depth, not age | 2x (OPS) "
                                                  "[evidence: ep-cc01, ep-cc02]"]), "wrap one"),
        Wrap("s2", "2026-11-20", continuity("b", ["!! queue_depth: alert on depth, not age | 2x (OPS) "
                                                  "[evidence: ep-cc01, ep-cc02]",
                                                  "!! worker_backoff: back off workers when the queue is deep | 2x "
                                                  "(OPS) [evidence: ep-cc02, ep-dd01]"]), "wrap two"),
        Wrap("s3", "2026-11-21", continuity("c", ["!! queue_depth: alert on depth, not age | 2x (OPS) "
                                                  "[evidence: ep-cc01, ep-cc02]",
                                                  "!! worker_backoff: back off workers when the queue is deep | 2x "
                                                  "(OPS) [evidence: ep-cc02, ep-dd01]",
                                                  "! login_wait: wait for the cookie | 1x"]), "wrap three"),
    ])
    empty = tmp_path / "none"
    empty.mkdir()
    data = json.loads(run(repo, "ascend", "--claude-dir", str(empty), "the whole line of work on the queue",
                          "--json").out)
    assert [d["session_id"] for d in data["unit"]["deposits"]] == ["s1", "s2"]
    assert "both rest on the episode ep-cc02" in data["text"]
    headline = data["text"].splitlines()[0]
    assert headline == "A line of work across 2 sessions: queue"  # the recall's word as written, not an episode id


def test_a_topic_headline_and_its_shared_words_are_written_as_the_deposits_write_them(run, wrapped):
    repo, empty, _ = wrapped
    data = json.loads(run(repo, "ascend", "--claude-dir", str(empty), "the balance cache work", "--json").out)
    assert data["unit"]["type"] == "cluster"
    headline, connects = data["text"].splitlines()[0], data["text"].split("What connects them", 1)[1]
    assert headline == "Everything on one topic, in 2 sessions: balance"
    assert "balance, cache, cache_warmup, morning" in connects and "balanc," not in connects


def test_a_wrap_of_a_claude_session_is_that_session_with_both_ways_back(run, repo, tmp_path):
    config = tmp_path / "claude"
    sid = "5e551011-aaaa-4bbb-8ccc-000000000001"
    write_session(config, Session(A, sid, "/home/dev/payments", "2026-11-02", "Design a retry budget",
                                  ["retry budget"], ["retry", "budget"]))
    run(repo, "init", "--no-hooks")
    shas = write_wraps(repo, [Wrap(sid, "2026-11-02", continuity("x", [RETRY_1]), "Session wrap — added retry_budget"),
                              Wrap("sess-z", "2026-11-04", continuity("y", [RETRY_2]), "Session wrap — incremented",
                                   ["Incremented: retry_budget 1x->2x [evidence: ep-aa01, ep-aa02]"])])
    data = json.loads(run(repo, "ascend", "--claude-dir", str(config), "that whole line of work on the retry budget",
                          "--json").out)
    first = data["unit"]["deposits"][0]
    assert first["session_id"] == sid
    assert first["resumes"] == [resume_from(config, "/home/dev/payments", sid),
                                f"git -C {shlex.quote(str(repo))} show {shas[0]}:CONTINUITY.md"]
    assert {s["partition"] for s in first["sources"]} == {"claude", "git"}


def test_a_pattern_named_once_is_that_one_session_not_a_neighbouring_concept(run, wrapped):
    repo, empty, shas = wrapped
    data = json.loads(run(repo, "ascend", "--claude-dir", str(empty), "the principle we ended up calling retry_alerts",
                          "--json").out)
    assert data["status"] == "single_session"
    assert data["single_session"]["session_id"] == "sess-g"
    concept = json.loads(run(repo, "ascend", "--claude-dir", str(empty),
                             "the principle we ended up calling retry_budget", "--json").out)
    assert concept["unit"]["type"] == "concept" and concept["unit"]["label"] == "retry_budget"
    assert concept["unit"]["node"].endswith("sess-a")


def test_the_line_is_followed_through_a_rename_of_the_continuity_file(run, repo, tmp_path):
    wraps = seven_wraps()
    write_wraps(repo, wraps[:3], path="NOTES.md")                 # the file had another name at first
    git(repo, "mv", "NOTES.md", "CONTINUITY.md")
    git(repo, "commit", "-qm", "rename the continuity file")
    write_wraps(repo, wraps[3:])
    empty = tmp_path / "none"
    empty.mkdir()
    data = json.loads(run(repo, "ascend", "--claude-dir", str(empty), "that whole line of work on the retry budget",
                          "--json").out)
    assert [d["session_id"] for d in data["unit"]["deposits"]] == ["sess-a", "sess-c", "sess-e", "sess-g"]
    assert data["unit"]["deposits"][0]["sources"][0]["ref"].endswith(":NOTES.md")


def test_a_merge_is_no_session_and_names_people_chose_are_shown_whole(run, repo, tmp_path):
    """A merge joins two sessions' deposits: it is not a third. A session name like `alice-monday` is not cut
    to eight characters as a generated id is."""
    run(repo, "init", "--no-hooks")
    write_wraps(repo, [Wrap("alice-monday", "2026-11-02", continuity("a", [RETRY_1]), "wrap: added retry_budget")])
    git(repo, "checkout", "-q", "-b", "bob")
    write_wraps(repo, [Wrap("bob-tuesday", "2026-11-03", continuity("a", [RETRY_1, CACHE_1]),
                            "wrap: added cache_warmup")])
    git(repo, "checkout", "-q", "-")
    write_wraps(repo, [Wrap("alice-wednesday", "2026-11-04", continuity("b", [RETRY_2]),
                            "wrap: incremented retry_budget",
                            ["Incremented: retry_budget 1x->2x [evidence: ep-aa01, ep-aa02]"])])
    git(repo, "merge", "-q", "--no-edit", "-X", "ours", "bob")
    empty = tmp_path / "none"
    empty.mkdir()
    data = json.loads(run(repo, "ascend", "--claude-dir", str(empty), "the whole line of work on the retry budget",
                          "--json").out)
    assert [d["session_id"] for d in data["unit"]["deposits"]] == ["alice-monday", "alice-wednesday"]
    assert "alice-monday" in data["text"].split("Where it began", 1)[1].splitlines()[1]
    merge = git(repo, "rev-parse", "HEAD").strip()
    assert merge not in data["text"] and merge[:8] not in data["text"]
    assert "read 3 deposit(s)" in data["text"]


def test_the_git_partition_reads_each_version_once_through_the_history_walk(run, wrapped, monkeypatch):
    """The partition is read by the walk ``log``, ``audit`` and ``report`` use: every version scanned once
    (not once as a commit and again as its child's parent), the same deposits as before."""
    import flowgit.continuity.scan as scan
    import flowgit.history.walk as walk
    from flowgit.ascend.history import HistoryPartition
    from flowgit.ascend.partitions import ScopeNotes
    from flowgit.config import load_config

    repo, _, shas = wrapped
    scanned: list[int] = []
    by_bytes, by_text = scan.scan_pattern_bytes, scan.scan_patterns

    def count_bytes(data, *a, **kw):
        scanned.append(len(data))
        return by_bytes(data, *a, **kw)

    def count_text(text, *a, **kw):
        scanned.append(len(text))
        return by_text(text, *a, **kw)

    monkeypatch.setattr(walk, "scan_pattern_bytes", count_bytes)
    monkeypatch.setattr(scan, "scan_patterns", count_text)
    import flowgit.ascend.history as history
    monkeypatch.setattr(history, "scan_patterns", count_text, raising=False)
    notes = ScopeNotes()
    found = list(HistoryPartition(load_config(repo)).deposits(notes))
    versions = int(git(repo, "rev-list", "--count", "HEAD").strip())   # seven wraps, seven versions
    assert len(scanned) == versions == 7
    assert [d.sid for d in found] == [f"sess-{c}" for c in "gfedcba"]
    assert found[-1].coined[0].token == "retry_budget" and found[-1].source_ref == f"{shas[0]}:CONTINUITY.md"
    assert notes.partitions[f"git:{repo.name}"] == len(found)


def test_a_shallow_clones_boundary_coins_nothing_and_the_shallowness_is_scope(run, wrapped, tmp_path):
    """The oldest commit of a shallow clone has parents the clone cannot show: it is a baseline, so it coins
    none of the patterns it holds and deposits nothing; the reader is told what the clone cannot see."""
    repo, empty, _ = wrapped
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "3", f"file://{repo}", str(shallow))
    res = run(shallow, "ascend", "--claude-dir", str(empty), "--partition", "git",
              "the principle we ended up calling retry_budget", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert not any(c["kind"] == "first_use" for c in data["confirmations"])
    assert data["scope"]["partitions"] == {"git:shallow": 2}          # sess-f and sess-g; sess-e is the boundary
    note = ("the history of shallow's continuity file is shallow before 2026-11-06: earlier wraps are not in this "
            "clone, so where the patterns it already held were coined cannot be seen")
    assert data["scope"]["shallow_history"] == [note]
    assert f"  not visible: {note}" in data["text"]
    full = json.loads(run(repo, "ascend", "--claude-dir", str(empty), "--partition", "git",
                          "the principle we ended up calling retry_budget", "--json").out)
    assert full["scope"]["shallow_history"] == []


def test_wraps_are_dated_by_when_the_session_wrapped_not_by_a_rebase(run, repo, tmp_path):
    """A rebase gives every commit the rebase day as its committer date; the wrap keeps its author date, which
    dates the deposit, orders the line and is what the date claim is checked against (read from the commit,
    not from the deposit: a wrong index date is corrected, never confirmed by itself)."""
    import os
    import subprocess

    from flowgit.ascend.engine import Ascend
    from flowgit.config import load_config

    run(repo, "init", "--no-hooks")
    env = {**os.environ, "GIT_AUTHOR_DATE": "2026-11-20T12:00:00Z", "GIT_COMMITTER_DATE": "2026-11-20T12:00:00Z"}
    (repo / "README.md").write_text("x\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-qm", "readme", "--no-verify")
    git(repo, "checkout", "-qb", "work")
    write_wraps(repo, [
        Wrap("sess-c", "2026-10-02", continuity("Focus: breaker.", [LOGIN_1]), "Session wrap Oct 2 — added login_wait"),
        Wrap("sess-b", "2026-10-15", continuity("Focus: breaker.", [LOGIN_1.replace("cookie", "cookie and token")]),
             "Session wrap Oct 15 — login_wait waits for the token too"),
        Wrap("sess-a", "2026-11-01", continuity("Focus: breaker.", [LOGIN_1.replace("cookie", "cookie, token")]),
             "Session wrap Nov 1 — login_wait reworded")])
    git(repo, "checkout", "-q", "-b", "base", "HEAD~3")
    (repo / "README.md").write_text("y\n")
    subprocess.run(["git", "add", "README.md"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "readme", "--no-verify"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "checkout", "-q", "work"], cwd=repo, check=True)
    subprocess.run(["git", "rebase", "-q", "base"], cwd=repo, check=True, env=env)
    assert set(git(repo, "log", "-3", "--format=%cs").split()) == {"2026-11-20"}
    empty = tmp_path / "no-claude"
    empty.mkdir()
    data = json.loads(run(repo, "ascend", "--claude-dir", str(empty), "--partition", "git",
                          "that whole line of work on login_wait", "--json").out)
    assert [(d["session_id"], d["date"]) for d in data["unit"]["deposits"]] == [
        ("sess-c", "2026-10-02"), ("sess-b", "2026-10-15"), ("sess-a", "2026-11-01")]
    dates = {c["deposit"].rsplit(":", 1)[-1]: (c["verdict"], c["shown"]) for c in data["confirmations"]
             if c["kind"] == "date"}
    assert dates == {"sess-c": ("confirmed", "2026-10-02"), "sess-b": ("confirmed", "2026-10-15"),
                     "sess-a": ("confirmed", "2026-11-01")}
    engine = Ascend(load_config(repo), empty, ["git"])
    wrap = next(d for d in engine.index.deposits if d.sid == "sess-b")
    wrap.date, wrap.started_at = "2026-11-20", "2026-11-20T12:00:00+00:00"   # an index that says otherwise
    claim = engine.confirmer.date(wrap)
    assert (claim.verdict, claim.shown) == ("corrected", "2026-10-15")


@pytest.mark.parametrize("link", ["[<-> retry_budget]", "[← retry_budget]", "[<- Retry_Budget, cache_warmup]"])
def test_every_derivation_link_the_wrap_reads_joins_the_wraps(run, repo, tmp_path, link):
    """The partition reads derivations with the wrap's own reading of FlowScript links (a mutual `<->`, an arrow
    character, a name in another case), not a narrower one of its own."""
    run(repo, "init", "--no-hooks")
    wraps = seven_wraps()
    alerts = ALERTS.replace("[<- retry_budget]", link)
    last = wraps[-1]
    wraps[-1] = Wrap(last.session, last.day, continuity("Focus: alerting.", [CACHE_2, LOGIN_1, alerts], [RETRY_3]),
                     last.subject)
    write_wraps(repo, wraps)
    empty = tmp_path / "no-claude"
    empty.mkdir()
    res = run(repo, "ascend", "--claude-dir", str(empty), "that whole line of work on retry_budget", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert [d["session_id"] for d in data["unit"]["deposits"]][-1] == "sess-g"
    assert "a new pattern derived from retry_budget" in data["text"]


def test_one_session_s_answer_lists_every_way_back_in_as_its_json_does(run, repo, tmp_path, monkeypatch):
    """A session that wrapped twice: the text answer printed only the first `git show`, the JSON both."""
    assert run(repo, "init", "--commit").code == 0
    assert run(repo, "episode", "add", "--type", "finding", "--session", "s-alpha",
               "zorblax gateway retries multiply load").code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "facts alpha")
    for n, (name, text) in enumerate([("zorblax_cap", "cap zorblax gateway retries per request"),
                                      ("zorblax_timeout", "zorblax gateway timeouts shorter than retries")]):
        plan = tmp_path / f"p{n}.json"
        plan.write_text(json.dumps({"session": "s-alpha", "state": f"Focus: zorblax gateway, step {n}.",
                                    "patterns": [{"op": "add", "name": name, "text": text}]}))
        monkeypatch.setenv("GIT_AUTHOR_DATE", f"2026-11-01T1{n}:00:00Z")
        assert run(repo, "wrap", "--plan", str(plan)).code == 0
    recall = "the whole line of work on zorblax_cap"
    text = run(repo, "ascend", "--partition", "git", "--no-interactive", recall).out
    data = json.loads(run(repo, "ascend", "--partition", "git", "--no-interactive", "--json", recall).out)
    ways = data["single_session"]["resumes"]
    assert data["status"] == "single_session" and len(ways) == 2 and all(w in text for w in ways), text


def test_a_history_deposits_id_names_its_partition_once(run, wrapped):
    """A history deposit's slug (``git:repo``) already names its partition: its id is ``git:repo:sid``, the
    form ``--refine drop:`` and the JSON's members share, never ``git:git:repo:sid``."""
    repo, empty, _ = wrapped
    res = run(repo, "ascend", "--claude-dir", str(empty), "--partition", "git",
              "the principle we ended up calling retry_budget", "--json")
    assert res.code == 0, res.err
    members = json.loads(res.out)["unit"]["members"]
    assert members and all(m.startswith(f"git:{repo.name}:") and not m.startswith("git:git:") for m in members)


def test_a_history_recalls_ready_commands_name_no_deposit_tree_and_run_as_written(run, wrapped):
    """A recall of the history alone reads no deposit tree: the commands the text gives to answer it without a
    terminal carry no ``--claude-dir`` (the home directory's tree was named before), and they run as written."""
    import shlex

    from tests.ascend.hints import terminal_free_commands

    repo, empty, _ = wrapped
    recall = "the principle we ended up calling retry_budget"
    res = run(repo, "ascend", "--claude-dir", str(empty), "--partition", "git", recall)
    assert res.code == 0, res.err
    first, answers = terminal_free_commands(res.out)
    assert "--claude-dir" not in first and first[first.index("--partition") + 1] == "git"
    again = run(repo, *first[1:])
    assert again.code == 0, again.err
    (repo / ".git" / "ascend.json").write_text(again.out)
    refine = next(a for a in answers if a.startswith("--refine drop:"))
    answered = run(repo, "ascend", "--state", str(repo / ".git" / "ascend.json"), *shlex.split(refine), "--json")
    assert answered.code == 0, answered.err
    dropped = shlex.split(refine)[1].removeprefix("drop:")
    assert not any(m.endswith(f":{dropped}") for m in json.loads(answered.out)["unit"]["members"] or [])
