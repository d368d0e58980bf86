"""judge_change and judge_merge directly: Sides as git records them, the base's configuration."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from flowgit.checks.judge import Side, judge_change, judge_merge
from flowgit.checks.paths import config_weakened
from flowgit.config import Budgets, Thresholds, default_config, load_config_from_blobs
from flowgit.evidence import assess, store_weight
from flowgit.episodes import Episode, episode_id
from tests.checks.gate_fixtures import DEVELOPING, E_RETRY, base_text, ep

STORE = b"".join(e.to_json().encode() + b"\n" for e in E_RETRY)


def side(text: str, store: bytes = STORE, **kw) -> Side:
    return Side(text.encode(), store, "CONTINUITY.md", ".flow/episodes.jsonl", **kw)


def cfg(tmp_path: Path, **files: bytes):
    return load_config_from_blobs(tmp_path, {k.replace("_", "."): v for k, v in files.items()}, "HEAD")


def codes(findings):
    return {f.code for f in findings if f.is_error}


def test_committed_config_is_read_from_bytes_and_rerooted(tmp_path):
    c = cfg(tmp_path, _flowgit_toml=b'continuity = "MEMORY.md"\n[thresholds]\nevidence_2x = 3\n')
    assert c.continuity == tmp_path / "MEMORY.md" and c.thresholds.evidence_2x == 3
    assert c.source and c.source.startswith("HEAD:")


def test_weakening_is_named_and_strengthening_is_not(tmp_path):
    base = cfg(tmp_path)
    assert list(config_weakened(base, base._replace(thresholds=Thresholds(evidence_2x=3)), "x")) == []
    looser = base._replace(thresholds=Thresholds(evidence_2x=1), budgets=Budgets(shrink_max=0.9),
                     rules={"evidence": "warning"})
    (finding,) = config_weakened(base, looser, "x")
    assert "evidence_2x" in finding.message and "shrink_max" in finding.message and "`evidence`" in finding.message


def test_deleted_file_is_an_error_and_an_override_marks_it(tmp_path):
    c = cfg(tmp_path)
    gone = Side(None, STORE, "CONTINUITY.md", ".flow/episodes.jsonl")
    assert codes(judge_change(c, side(base_text()), gone)) == {"G803"}
    overridden = judge_change(c, side(base_text()), gone, override="moving it")
    assert all(f.overridden for f in overridden if f.severity == "error") and not codes(overridden)


def test_merge_accepts_the_union_of_two_valid_sides(tmp_path):
    c = cfg(tmp_path)
    lines = base_text().splitlines()
    left = "\n".join(ln.replace("! p01:", "!! p01:").replace(f"{DEVELOPING[0][1]} | 1x",
                     f"{DEVELOPING[0][1]} | 2x (R) [evidence: {E_RETRY[0].id}, {E_RETRY[1].id}]") for ln in lines)
    new = side(left + "\n")
    assert not codes(judge_merge(c, [side(base_text()), side(left + "\n")], new))
    evil = side(left.replace("! p02:", "!! p02:").replace(f"{DEVELOPING[1][1]} | 1x", f"{DEVELOPING[1][1]} | 2x")
                + "\n")
    assert "G101" in codes(judge_merge(c, [side(base_text()), side(left + "\n")], evil))


def test_independence_is_session_or_agent_and_batches_count_once():
    th = Thresholds()
    a = ep("retries multiplied provider load", "x1", agent="a")
    b = ep("retries multiplied the load at the provider", "x1", agent="b")  # same session, other agent
    c = ep("outage retries multiplied provider load", "x2", agent="a")
    store = {e.id: e for e in (a, b, c)}
    assert assess("p", "retries multiply provider load", 2, [a.id, b.id], store, th).enough
    assert assess("p", "retries multiply provider load", 2, [a.id, c.id], store, th).enough
    batch = assess("p", "retries multiply provider load", 2, [a.id, c.id], store, th, batch={a.id, c.id})
    assert not batch.enough and batch.independent == 1


def test_forged_future_and_sessionless_episodes_do_not_count():
    th = Thresholds()
    now = datetime(2026, 11, 30, tzinfo=timezone.utc)
    forged = Episode("ep-000000000001", "2026-11-01T00:00:00Z", "finding", "retries multiplied load", "s1", "a")
    future = ep("retries multiplied load on the provider", "s2")
    future = future.replace(ts="2027-01-01T00:00:00Z")
    nosession = Episode(episode_id("finding", "retry storms multiplied load", ""), "2026-11-01T00:00:00Z",
                        "finding", "retry storms multiplied load", "", "a")
    store = {e.id: e for e in (forged, future, nosession)}
    v = assess("p", "retries multiply load", 2, list(store), store, th, now=now)
    assert v.forged == [forged.id] and v.future == [future.id] and v.sessionless == [nosession.id]
    assert v.independent == 0 and not v.ok


def test_relevance_weighs_everyday_and_store_common_words_low():
    th = Thresholds()
    coffee = ep("the team fixed the coffee machine this week", "s1")
    weight = store_weight(b"\n".join(b'{"content": "queue retries"}' for _ in range(40)) + b"\n")
    assert not assess("p", "the breaker opens after failures this week", 2, [coffee.id], {coffee.id: coffee},
                      th).unrelated == []  # one everyday word is not enough
    queue = ep("queue depth doubled", "s1")
    assert weight("queue") < 1.0
    assert assess("p", "queue depth alarms", 2, [queue.id], {queue.id: queue}, th, weight=weight).unrelated == []


def test_a_merge_key_leaves_out_the_numbers_a_parent_puts_in_its_message_but_not_the_names():
    from flowgit.checks.finding import Finding
    from flowgit.checks.judge import merge_key

    def g302(message: str) -> Finding:
        return Finding("G302", "append-not-replace", "error", "CONTINUITY.md", 7, message)

    against_main = g302("Current State kept all 2 old item(s) and added 2: it is REPLACED each wrap")
    against_side = g302("Current State kept all 1 old item(s) and added 3: it is REPLACED each wrap")
    assert merge_key(against_main) == merge_key(against_side)  # one error on one line, whatever each side counts
    named = Finding("G404", "proven-claim", "error", "CONTINUITY.md", 9, "`pat12` was reworded (3 words)")
    other = Finding("G404", "proven-claim", "error", "CONTINUITY.md", 9, "`pat13` was reworded (3 words)")
    assert merge_key(named) != merge_key(other)  # names keep their digits: they tell patterns apart
    assert merge_key(named)[2] == "`pat12` was reworded (# words)"


def test_a_merge_that_appends_to_both_wraps_states_is_refused_whatever_each_parent_counts(tmp_path):
    """Both branches replaced State; the merge keeps both and adds one of its own: G302 against each parent,
    with other numbers in each message, is one error the merge made."""
    base = side(base_text(state="- the gate\n- the benchmark"))
    main = side(base_text(state="- canary live at ten percent\n- watch the error budget"))
    other = side(base_text(state="- invoice export fix for finance"))
    fabricated = side(base_text(state="- canary live at ten percent\n- watch the error budget\n"
                                      "- invoice export fix for finance\n- the quarterly migration notes"))
    found = judge_merge(default_config(tmp_path), [main, other], fabricated, base=base)
    assert "G302" in codes(found)
    taken = side(base_text(state="- canary live at ten percent\n- watch the error budget"))
    assert "G302" not in codes(judge_merge(default_config(tmp_path), [main, other], taken, base=base))


def test_a_merge_that_keeps_both_states_is_refused_however_each_parent_words_its_g302(tmp_path):
    """Both branches replaced State; the merge keeps both, the other's item tacked onto one of its own. Each
    parent words its G302 its own way (an item added; old text word for word inside a new one): one error."""
    a_items = ("- branch A focus: idempotency keys for every charge request\n"
               "- branch A second: retry budget dashboards for the provider team")
    b_item = "- branch B focus: circuit breaker thresholds measured in staging today"
    base = side(base_text(state="- the gate\n- the benchmark"))
    main, other = side(base_text(state=a_items)), side(base_text(state=b_item))
    merged = side(base_text(state=a_items + "; " + b_item[2:]))
    found = judge_merge(default_config(tmp_path), [main, other], merged, base=base)
    assert "G302" in codes(found)


def test_a_case_twin_is_named_with_the_file_it_is_a_twin_of():
    """`Me\u0301moire.md` (an accent decomposed) is `Mémoire.md` on macOS: named so, not as the store's twin."""
    from flowgit.checks.judge import Side
    from flowgit.checks.paths import case_collisions

    twin = "Me\u0301moire.md"
    new = Side(b"", b"", "Mémoire.md", ".flow/episodes.jsonl", extra={"case_variants": {twin: "0" * 40}})
    [finding] = case_collisions(None, new)
    assert finding.code == "G809" and finding.path == twin
    assert "is `Mémoire.md` to a case-insensitive" in finding.message


def test_a_merge_over_a_size_budget_is_a_warning_and_a_later_wrap_may_not_grow_it(tmp_path):
    """Two wraps that each kept Developing within its limit add a pattern apiece: the union is over it. The
    merge is not refused (a person would have to drop one side's work by hand); its warning says the next wrap
    may not let it grow, and a next wrap that does is refused (G503)."""
    c = cfg(tmp_path, _flowgit_toml=b"[budgets]\ndeveloping_lines_max = 13\n")
    base = base_text()
    left = base.replace("! p12:", "! p13: left agent's new pattern about retries | 1x\n! p12:")
    right = base.replace("! p12:", "! p14: right agent's new pattern about jitter | 1x\n! p12:")
    union = left.replace("! p12:", "! p14: right agent's new pattern about jitter | 1x\n! p12:")
    assert not codes(judge_change(c, side(base), side(left))) and not codes(judge_change(c, side(base), side(right)))
    findings = judge_merge(c, [side(left), side(right)], side(union), base=side(base))
    assert not codes(findings)
    assert any(f.code == "G503" and "a later wrap may not let it grow" in f.message for f in findings), findings
    grown = union.replace("! p12:", "! p15: one more | 1x\n! p12:")
    assert "G503" in codes(judge_change(c, side(union), side(grown)))
    assert "G503" in codes(judge_merge(c, [side(left), side(right)], side(grown), base=side(base)))  # its own line


# ------------------------------------------------- a merge under a branch's lenient configuration (git, hooks)
LENIENT = '[rules]\nlevel-jump = "off"\n'


def _git_commit(repo: Path, *args: str, **env: str):
    import os
    import subprocess

    return subprocess.run(["git", "commit", "-q", *args], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **env})


def _lenient_branch(run, repo: Path) -> str:
    """main with flowgit's hooks, and a branch `scratch` that switched level-jump off, alone and overridden
    (as the gate allows); main moved on with an unrelated file, so merging it is a real merge."""
    from tests.checks.gate_fixtures import committed_base
    from tests.conftest import git

    committed_base(repo, episodes=[*E_RETRY, E_FRESH])
    assert run(repo, "install-hook").code == 0
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "scratch")
    (repo / ".flowgit.toml").write_text(LENIENT)
    git(repo, "add", ".flowgit.toml")
    done = _git_commit(repo, "-m", "scratch: a lenient gate", FLOWGIT_OVERRIDE="trying a lenient gate")
    assert done.returncode == 0, done.stdout + done.stderr
    git(repo, "checkout", "-q", "main")
    (repo / "notes.txt").write_text("code\n")
    git(repo, "add", "notes.txt")
    assert _git_commit(repo, "-m", "code").returncode == 0
    return base


def _jump_to_3x(repo: Path) -> None:
    """p01 1x -> 3x in Proven on three independent episodes: only level-jump (G201) refuses it."""
    from tests.conftest import git
    from tests.history.test_audit import p01

    (repo / "CONTINUITY.md").write_text(p01(3, [*E_RETRY[:2], E_FRESH], proven=True))
    git(repo, "add", "CONTINUITY.md")


E_FRESH = ep("retries without a budget multiplied provider load in the fourth outage", "s8", "outcome",
             agent="reviewer", tags=["retries"])


def test_a_merge_cannot_borrow_a_branchs_lenient_configuration_for_its_own_edit(run, repo):
    """The merge drops the scratch branch's `.flowgit.toml` and graduates 1x -> 3x itself: judged against
    each parent under the stricter of that parent's configuration and the result's, it is G201 at commit
    and in the audit. Kept instead, the lenient configuration is weaker than the branch merged into (G801,
    A401): it lands only with the merge's own override."""
    from tests.conftest import git

    base = _lenient_branch(run, repo)
    git(repo, "merge", "-q", "--no-commit", "--no-ff", "scratch")
    git(repo, "rm", "-q", "-f", ".flowgit.toml")
    _jump_to_3x(repo)
    dropped = _git_commit(repo, "--no-edit")
    assert dropped.returncode == 1 and "G201" in dropped.stderr, dropped.stdout + dropped.stderr
    git(repo, "commit", "-q", "--no-edit", "--no-verify")
    forced = git(repo, "rev-parse", "HEAD").strip()
    data = json.loads(run(repo, "audit", "--json", "--range", f"{base}..HEAD").out)
    assert ("G201", forced) in {(f["code"], f["commit"]) for f in data["findings"]}, data["findings"]

    git(repo, "reset", "-q", "--hard", "HEAD^")
    git(repo, "merge", "-q", "--no-commit", "--no-ff", "scratch")
    kept = _git_commit(repo, "--no-edit")
    assert kept.returncode == 1 and "G801" in kept.stderr and "level-jump" in kept.stderr, kept.stderr
    git(repo, "commit", "-q", "--no-edit", "--no-verify")
    forced = git(repo, "rev-parse", "HEAD").strip()
    data = json.loads(run(repo, "audit", "--json", "--range", f"{base}..HEAD").out)
    assert ("A401", forced) in {(f["code"], f["commit"]) for f in data["findings"]}, data["findings"]

    git(repo, "reset", "-q", "--hard", "HEAD^")
    git(repo, "merge", "-q", "--no-commit", "--no-ff", "scratch")
    agreed = _git_commit(repo, "--no-edit", FLOWGIT_OVERRIDE="main takes the lenient gate")
    assert agreed.returncode == 0, agreed.stdout + agreed.stderr
    data = json.loads(run(repo, "audit", "--json", "--range", f"{base}..HEAD").out)
    assert data["ok"] and {f["code"] for f in data["findings"]} == {"A301"}, data["findings"]


def test_a_merge_of_a_branch_that_changed_the_configuration_properly_passes(run, repo):
    """A branch that tightened the configuration (no override needed) and raised p01 1x -> 2x on its
    evidence, merged into main that moved on: the merge writes nothing of its own and passes the hook and
    the audit; so does merging main back into the lenient branch (the branch's own configuration kept)."""
    from tests.conftest import git
    from tests.history.test_audit import p01

    base = _lenient_branch(run, repo)
    git(repo, "checkout", "-q", "-b", "tight", base)
    (repo / ".flowgit.toml").write_text("[thresholds]\nevidence_3x = 4\n")
    git(repo, "add", ".flowgit.toml")
    assert _git_commit(repo, "-m", "a stricter gate").returncode == 0
    (repo / "CONTINUITY.md").write_text(p01(2, E_RETRY[:2]))
    git(repo, "add", "CONTINUITY.md")
    raised = _git_commit(repo, "-m", "p01 to 2x")
    assert raised.returncode == 0, raised.stdout + raised.stderr
    git(repo, "checkout", "-q", "scratch")
    back = subprocess_merge(repo, "main")
    assert back.returncode == 0, back.stdout + back.stderr
    git(repo, "checkout", "-q", "main")
    merged = subprocess_merge(repo, "tight")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    for tip in ("main", "scratch"):
        data = json.loads(run(repo, "audit", "--json", "--range", f"{base}..{tip}").out)
        assert data["ok"] and {f["code"] for f in data["findings"]} <= {"A301"}, (tip, data["findings"])


def subprocess_merge(repo: Path, branch: str):
    """A clean `git merge` (its pre-merge-commit hook judges it)."""
    import subprocess

    return subprocess.run(["git", "merge", "-q", "--no-ff", "--no-edit", branch], cwd=repo, capture_output=True,
                          text=True)


def test_stricter_takes_each_setting_from_the_stricter_configuration(tmp_path):
    """What a merge judges each parent under: the parent's paths and aliases, every rule, threshold and
    budget at the stricter of the two configurations."""
    from flowgit.checks.paths import stricter

    loose = cfg(tmp_path, _flowgit_toml=b'[rules]\nlevel-jump = "off"\nflowscript = "warning"\n'
                                        b'[thresholds]\nevidence_3x = 2\n[budgets]\nstate_chars_max = 9000\n')
    strict = cfg(tmp_path, _flowgit_toml=b'[rules]\nflowscript = "off"\n[thresholds]\nevidence_2x = 3\n')
    both = stricter(loose, strict)
    assert both.rules == {"flowscript": "warning"}
    assert (both.thresholds.evidence_3x, both.thresholds.evidence_2x) == (3, 3)
    assert both.budgets.state_chars_max == Budgets().state_chars_max
    assert stricter(strict, strict) is strict


def test_a_merge_keeping_one_of_two_records_of_an_episode_is_refused_whichever_it_keeps(tmp_path):
    """G708: the parents record one id with other agents; either line kept rewrites the other branch's record.
    The same object written with other key order is one record; a parent's line kept where the other
    parent never had the id is no conflict."""
    c = cfg(tmp_path)
    a = ep("queue depth doubles under load", "s1", agent="agent-a")
    record_a = a.to_json().encode()
    record_b = record_a.replace(b'"agent-a"', b'"agent-b"')
    reordered = json.dumps(dict(reversed(list(json.loads(record_a).items())))).encode()
    text = base_text()
    for kept in (record_a, record_b):
        found = judge_merge(c, [side(text, STORE + record_a + b"\n"), side(text, STORE + record_b + b"\n")],
                            side(text, STORE + kept + b"\n"), base=side(text))
        assert "G708" in codes(found) and a.id in next(f.message for f in found if f.code == "G708")
    same = judge_merge(c, [side(text, STORE + record_a + b"\n"), side(text, STORE + reordered + b"\n")],
                       side(text, STORE + record_a + b"\n"), base=side(text))
    assert "G708" not in codes(same)
    one_side = judge_merge(c, [side(text, STORE + record_a + b"\n"), side(text)],
                           side(text, STORE + record_a + b"\n"), base=side(text))
    assert not codes(one_side)
    overridden = judge_merge(c, [side(text, STORE + record_a + b"\n"), side(text, STORE + record_b + b"\n")],
                             side(text, STORE + record_a + b"\n"), base=side(text), override="G708: a's is pushed")
    assert [f.overridden for f in overridden if f.code == "G708"] == [True]


def test_a_torn_line_beside_its_whole_episode_is_no_second_record(tmp_path):
    """A crash tore a line and the episode was appended whole after it: the merge keeps the torn bytes beside
    the whole line (nothing lost), and that is no other record of the episode (G708)."""
    c = cfg(tmp_path)
    whole = ep("queue depth doubles under load", "s1", agent="agent-a").to_json().encode()
    torn = whole[: len(whole) // 2]
    text = base_text()
    found = judge_merge(c, [side(text, STORE + torn + b"\n" + whole + b"\n"), side(text, STORE + whole + b"\n")],
                        side(text, STORE + torn + b"\n" + whole + b"\n"), base=side(text))
    assert "G708" not in codes(found)
