"""flowgit audit catches every way around the local hook, at the right commit, and nothing else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.checks.gate_fixtures import DEVELOPING, E_RETRY, base_text, committed_base, developing_lines, ep
from tests.conftest import git

E_FRESH = ep("retries without a budget multiplied provider load in the fourth outage", "s8", "outcome",
             agent="reviewer", tags=["retries"])


def p01(level: int, evidence=(), proven: bool = False) -> str:
    """The base text with p01 at ``level`` (moved to Proven when ``proven``)."""
    lines = developing_lines().splitlines()
    ev = f" [evidence: {', '.join(e.id for e in evidence)}]" if evidence else ""
    line = f"!! p01: {DEVELOPING[0][1]} | {level}x (RELIABILITY{' — 2026-11-30' if proven else ''}){ev}"
    if level == 1:
        line = f"! p01: {DEVELOPING[0][1]} | 1x"
    if proven:
        return base_text(developing="\n".join(lines[1:]), proven_extra=line + "\n")
    lines[0] = line
    return base_text(developing="\n".join(lines))


def commit_text(repo: Path, text: str, message: str, *extra: str, episodes=()) -> str:
    (repo / "CONTINUITY.md").write_text(text)
    if episodes:
        with (repo / ".flow" / "episodes.jsonl").open("a") as fh:
            fh.writelines(e.to_json() + "\n" for e in episodes)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message, *extra)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def based(repo: Path) -> Path:
    committed_base(repo, episodes=[*E_RETRY, E_FRESH])
    git(repo, "tag", "base")
    return repo


def audit(run, repo: Path, *args: str):
    res = run(repo, "audit", "--json", *args)
    assert res.code in (0, 1), res.err
    return res.code, json.loads(res.out)


def found(data) -> list[tuple[str, str]]:
    return [(f["code"], f["commit"]) for f in data["findings"]]


def test_no_verify_is_caught(run, based):
    run(based, "install-hook")
    bad = commit_text(based, p01(2), "hand edit", "--no-verify")
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and found(data) == [("G101", bad)]
    assert data["findings"][0]["path"] == "CONTINUITY.md" and data["findings"][0]["line"]
    assert data["findings"][0]["pattern"] == "p01"  # a pattern rule's finding names its pattern, to filter by
    human = run(based, "audit", "--range", "base..HEAD")
    assert human.code == 1 and f"{bad[:12]}" in human.out and "G101 [ungrounded-graduation]" in human.out
    assert f"\n    fix: {data['findings'][0]['fix']}\n" in human.out  # as `flowgit check` says it
    assert "rewrite the commit before it leaves" in human.out  # a range on its way out: a commit on top repairs
    whole = run(based, "audit")                                    # the memory, never the record
    assert whole.code == 1 and "repair the memory in a new commit" in whole.out and "stays on the record" in whole.out


def test_a_range_of_one_revision_says_it_is_that_revisions_whole_history(run, based):
    """`--range HEAD~1` is git's range, everything HEAD~1 reaches, which a hurried reader takes for "the last
    commit": the summary says which it judged; a range of two ends says nothing more."""
    (based / "notes.txt").write_text("a commit of code\n")
    git(based, "add", "notes.txt")
    git(based, "commit", "-qm", "code")
    one = run(based, "audit", "--range", "HEAD~1").out
    assert "judged with every gate rule in HEAD~1 and all the history before it (A..B judges only the commits " \
           "B has that A does not)" in one
    assert "all the history before it" not in run(based, "audit", "--range", "HEAD~1..HEAD").out
    parent = git(based, "rev-parse", "HEAD~1").strip()
    hooks = run(based, "audit", "--range", "HEAD", "--not", parent).out  # (as the push hooks ask: what is new)
    assert f"in HEAD --not {parent[:12]} (1 read)" in hooks and "all the history before it" not in hooks


def test_the_whole_historys_advice_says_which_failing_commits_can_still_be_rewritten(run, based, tmp_path):
    """The whole history's audit told a commit no one else had yet to stay on the record and be repaired on
    top, while the push of the same commit said rewrite it. Now the advice follows where the commit is: one no
    remote has is rewritten, a pushed one is repaired on top, and with both each is named."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(based, "remote", "add", "origin", str(remote))
    first = commit_text(based, p01(2), "hand edit", "--no-verify")
    git(based, "push", "-q", "--no-verify", "origin", "HEAD:refs/heads/main")
    git(based, "fetch", "-q", "origin")
    pushed = run(based, "audit")
    assert pushed.code == 1 and "pushed: repair the memory in a new commit" in pushed.out
    assert "rewrite the commit" not in pushed.out
    second = commit_text(based, p01(2) + "\n!! p09: skip the cache on writes | 2x\n", "another", "--no-verify")
    both = run(based, "audit")
    assert f"{second[:12]} no remote has yet: rewrite the commit before it leaves" in both.out
    assert first[:12] not in both.out.split("no remote has yet")[0].split("(each")[-1]
    assert "the others are pushed: repair the memory" in both.out
    code, data = audit(run, based)
    assert data["not_pushed"] == [second]
    git(based, "reset", "-q", "--hard", "base")
    git(based, "push", "-q", "--no-verify", "--force", "origin", "HEAD:refs/heads/main")
    git(based, "fetch", "-q", "origin")
    third = commit_text(based, p01(2), "hand edit again", "--no-verify")
    local = run(based, "audit")
    assert local.code == 1 and "rewrite the commit before it leaves" in local.out and "stays on the record" not in local.out
    assert audit(run, based)[1]["not_pushed"] == [third]


def _grafted_violation(run, based: Path) -> tuple[str, str]:
    """p01 graduated by the hooks, then taken out of Proven with ``--no-verify`` (G205 against its real
    parent): (the violating commit, the base it is made to look like an edit of)."""
    run(based, "install-hook")
    commit_text(based, p01(2, E_RETRY[:2]), "p01 to 2x")
    commit_text(based, p01(3, [*E_RETRY[:2], E_FRESH], proven=True), "p01 to 3x")
    bad = commit_text(based, p01(1), "p01 back to 1x", "--no-verify")
    return bad, git(based, "rev-parse", "base").strip()


def test_a_graft_file_cannot_give_a_commit_another_parent(run, based, tmp_path):
    """git's deprecated info/grafts gave the violating commit a parent it does not have (the base, which it
    equals): the audit, and the pre-push hook running it, judged the fake change and reported clean, and the
    commit reached the remote. The history reader now refuses such a repository with the way out, the push
    is refused; without the file the commit is judged by its real parent."""
    bad, base = _grafted_violation(run, based)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(based, "remote", "add", "origin", str(remote))
    git(based, "config", "advice.graftFileDeprecated", "false")
    grafts = based / ".git" / "info" / "grafts"
    grafts.parent.mkdir(exist_ok=True)
    grafts.write_text(f"{bad} {base}\n")
    assert git(based, "rev-parse", f"{bad}^").strip() == base  # git itself now reads the fake parent
    refused = run(based, "audit")
    assert refused.code == 2 and "has a graft file, which gives commits other parents" in refused.err
    assert str(grafts) in refused.err and "git replace --convert-graft-file" in refused.err
    assert run(based, "log").code == 2
    push = subprocess.run(["git", "push", "origin", "HEAD:refs/heads/evil"], cwd=based, capture_output=True,
                          text=True)
    assert push.returncode != 0 and "graft file" in push.stderr
    assert subprocess.run(["git", "--git-dir", str(remote), "rev-parse", "--verify", "-q", "evil"],
                          capture_output=True).returncode != 0
    grafts.write_text(f"# {bad} {base}\n")  # (the history reader cannot open a repository whose file has this)
    assert "has a graft file" in run(based, "audit").err
    grafts.unlink()
    code, data = audit(run, based)
    assert code == 1 and ("G205", bad) in found(data)


def test_a_graft_file_named_in_the_environment_changes_no_verdict(run, based, tmp_path):
    """GIT_GRAFT_FILE points git at a graft file anywhere (the history reader never reads it): the hook's and
    flowgit's own git calls read none, so the push is judged by the real parent and refused (G205)."""
    bad, base = _grafted_violation(run, based)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(based, "remote", "add", "origin", str(remote))
    outside = tmp_path / "grafts"
    outside.write_text(f"{bad} {base}\n")
    env = {**os.environ, "GIT_GRAFT_FILE": str(outside)}
    push = subprocess.run(["git", "-c", "advice.graftFileDeprecated=false", "push", "origin",
                           "HEAD:refs/heads/evil"], cwd=based, capture_output=True, text=True, env=env)
    assert push.returncode != 0 and "G205" in push.stdout + push.stderr


def test_amend_is_judged_against_the_real_parent(run, based):
    run(based, "install-hook")
    commit_text(based, p01(2, E_RETRY[:2]), "p01 to 2x")
    (based / "CONTINUITY.md").write_text(p01(3, [*E_RETRY[:2], E_FRESH], proven=True))
    refused = subprocess.run(["git", "commit", "-qa", "--amend", "-m", "p01 to 3x, amended"], cwd=based,
                             capture_output=True, text=True)
    assert refused.returncode != 0 and "G201" in refused.stderr  # the hooks judge an amend against the real parent
    git(based, "commit", "-qa", "--amend", "--no-verify", "-m", "p01 to 3x, amended")  # forced past them
    amended = git(based, "rev-parse", "HEAD").strip()
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and ("G201", amended) in found(data)


def test_rebase_squash_is_caught(run, based):
    commit_text(based, p01(2, E_RETRY[:2]), "p01 to 2x")
    commit_text(based, p01(3, [*E_RETRY[:2], E_FRESH], proven=True), "p01 to 3x")
    assert audit(run, based, "--range", "base..HEAD")[0] == 0  # one level per commit: clean
    env = {**os.environ, "GIT_SEQUENCE_EDITOR": "sed -i '2s/^pick/squash/'", "GIT_EDITOR": "true"}
    subprocess.run(["git", "rebase", "-q", "-i", "base"], cwd=based, env=env, check=True, capture_output=True)
    squashed = git(based, "rev-parse", "HEAD").strip()
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and found(data) == [("G201", squashed)]


def test_revert_of_recorded_episodes_is_caught(run, based):
    extra = ep("a retry budget per tenant kept one noisy tenant from starving the rest", "s9", tags=["retries"])
    commit_text(based, base_text(state="Focus: tenants."), "record an episode", episodes=[extra])
    git(based, "revert", "--no-edit", "HEAD")
    reverted = git(based, "rev-parse", "HEAD").strip()
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and found(data) == [("G701", reverted)]


def test_a_hookless_clone_is_caught(run, based, tmp_path):
    run(based, "install-hook")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(based), str(clone))
    assert not (clone / ".git" / "hooks" / "pre-commit").exists()
    text = (clone / "CONTINUITY.md").read_text().replace(f", {E_RETRY[2].id}]", "]")
    bad = commit_text(clone, text, "tidy the evidence")
    code, data = audit(run, clone, "--since-ref", "origin/main")
    assert code == 1 and ("G401", bad) in found(data) and data["range"] == "origin/main..HEAD"
    assert {c for _, c in found(data)} == {bad}


def test_a_weakening_config_is_caught_at_the_commit_that_weakens(run, based):
    (based / ".flowgit.toml").write_text('[rules]\nprotected-evidence = "off"\nevidence = "warning"\n')
    git(based, "add", "-A")
    git(based, "commit", "-qm", "quieter gate")
    weakened = git(based, "rev-parse", "HEAD").strip()
    text = (based / "CONTINUITY.md").read_text().replace(f", {E_RETRY[2].id}]", "]")
    commit_text(based, text, "tidy the evidence")
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and found(data) == [("A401", weakened)]
    assert "turns rule `protected-evidence` from on to off" in data["findings"][0]["message"]
    assert "turns rule `evidence` from on to warning" in data["findings"][0]["message"]


def test_a_config_weakened_in_the_same_commit_does_not_judge_that_commit(run, based):
    (based / ".flowgit.toml").write_text('[rules]\nprotected-evidence = "off"\n')
    text = (based / "CONTINUITY.md").read_text().replace(f", {E_RETRY[2].id}]", "]")
    bad = commit_text(based, text, "tidy the evidence and quieten the gate")
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and {("A401", bad), ("G401", bad)} <= set(found(data))


def test_an_overridden_weakening_is_reported_as_the_override(run, based):
    (based / ".flowgit.toml").write_text('[thresholds]\nevidence_2x = 1\n')
    git(based, "add", "-A")
    git(based, "commit", "-qm", "one episode is enough here\n\nFlow-Override: pilot project")
    code, data = audit(run, based, "--range", "base..HEAD")
    assert [f["code"] for f in data["findings"]] == ["A301"]


def test_an_override_lists_what_it_let_through_and_passes(run, based):
    """A `Flow-Override:` trailer (typed by hand, hooks skipped) does not fail the audit, but every finding it
    let through is shown under it, as a notice."""
    sha = commit_text(based, p01(3, E_RETRY[:1]), "hand edit\n\nFlow-Override: importing a legacy file",
                      "--no-verify")
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 0 and data["ok"]
    notices = [(f["code"], f["severity"]) for f in data["findings"]]
    assert ("A301", "notice") in notices and {("G201", "notice"), ("G103", "notice")} <= set(notices)
    assert all(f["commit"] == sha and f["severity"] == "notice" for f in data["findings"])
    assert all(f["message"].startswith("let through by the override: ") for f in data["findings"]
               if f["code"] != "A301")
    text = run(based, "audit", "--range", "base..HEAD").out
    assert "clean, 1 override(s) recorded (" in text and "finding(s) they let through, listed above" in text


def test_an_override_naming_codes_lets_through_only_those(run, based):
    """A trailer that names codes (`G402: why`) covers those codes alone: what else the commit did still fails
    the audit, and the notice says what the override was scoped to."""
    elsewhere = commit_text(based, p01(3, E_RETRY[:1]), "hand edit\n\nFlow-Override: G402: adopting a foundation",
                            "--no-verify")
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and not data["ok"]
    errors = {f["code"] for f in data["findings"] if f["severity"] == "error"}
    assert {"G201", "G103"} <= errors and all(f["commit"] == elsewhere for f in data["findings"])
    notice = next(f for f in data["findings"] if f["code"] == "A301")
    assert notice["severity"] == "notice" and "overridden for G402 only: G402: adopting" in notice["message"]
    git(based, "reset", "-q", "--hard", "base")
    named = commit_text(based, p01(3, E_RETRY[:1]), "hand edit\n\nFlow-Override: G201, g103 G210: importing a file",
                        "--no-verify")
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 0, [(f["code"], f["severity"]) for f in data["findings"]]
    assert {(f["code"], f["severity"]) for f in data["findings"]} >= {("G201", "notice"), ("G103", "notice")}
    assert all(f["commit"] == named for f in data["findings"])


def test_log_marks_an_event_made_under_an_override(run, based):
    """`flowgit log` shows the event an override let through as it shows any other, and says so beside it."""
    sha = commit_text(based, p01(3, E_RETRY[:1]), "hand edit\n\nFlow-Override: G201: importing a file",
                      "--no-verify")
    human = run(based, "log", "p01")
    assert human.code == 0, human.err
    lines = human.out.splitlines()
    at = next(n for n, line in enumerate(lines) if sha[:10] in line)
    assert lines[at + 1].strip() == "! made under an override: G201: importing a file"
    events = json.loads(run(based, "log", "p01", "--json").out)["patterns"]["p01"]
    assert [e["override"] for e in events if e["commit"] == sha] == ["G201: importing a file"]
    assert all(e["override"] is None for e in events if e["commit"] != sha)


def test_an_override_scoped_to_other_codes_does_not_cover_a_weakened_configuration(run, based):
    (based / ".flowgit.toml").write_text('[thresholds]\nevidence_2x = 1\n')
    git(based, "add", "-A")
    git(based, "commit", "-qm", "quieter\n\nFlow-Override: G101: a legacy line")
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and "A401" in {f["code"] for f in data["findings"] if f["severity"] == "error"}
    git(based, "commit", "-q", "--amend", "-m", "quieter\n\nFlow-Override: G801: a pilot project")
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 0 and [f["code"] for f in data["findings"]] == ["A301"]


def test_a_weak_configuration_brought_in_by_an_orphan_merge_is_found(run, based):
    """Hooks skipped: the memory merged into an orphan holding only a configuration with rules off, then
    fast-forwarded. The orphan holds no memory, so it vouches for nothing: the merge weakened the gate."""
    from tests.checks.redteam.cases import ALL_RULES_OFF

    git(based, "checkout", "-q", "--orphan", "weak")
    git(based, "rm", "-rq", "--cached", ".")
    git(based, "clean", "-fdqx")
    (based / ".flowgit.toml").write_text(ALL_RULES_OFF)
    git(based, "add", ".flowgit.toml")
    git(based, "commit", "-qm", "tooling config", "--no-verify")
    git(based, "merge", "-q", "--no-verify", "--no-edit", "--allow-unrelated-histories", "main")
    merge = git(based, "rev-parse", "HEAD").strip()
    code, data = audit(run, based)
    assert code == 1 and ("A401", merge) in found(data)
    assert "turns rule `evidence` from on to off" in next(f["message"] for f in data["findings"]
                                                          if f["code"] == "A401")


def test_a_false_renamed_trailer_is_found(run, based):
    """`Renamed:` is read by ascend's git partition as a rename on the record: one the change never made is
    a finding, as a false graduation is."""
    git(based, "commit", "-q", "--allow-empty", "--no-verify", "-m", "Move a.py\n\nRenamed: a.py -> b.py\n")
    (based / "CONTINUITY.md").write_text(base_text(state="Focus: the breaker rollout, renamed nothing."))
    git(based, "commit", "-qam", "wrap\n\nFlow-Session: s9\nRenamed: p01 -> p77\n", "--no-verify")
    sha = git(based, "rev-parse", "HEAD").strip()
    code, data = audit(run, based, "--range", "base..HEAD")  # (the first commit leaves the memory alone)
    assert code == 1 and found(data) == [("A201", sha)]
    assert "does not rename `p01` to `p77`" in data["findings"][0]["message"]


@pytest.mark.parametrize("message", ["nothing changed\n\nGraduated : p01 [evidence: x]\n",
                                     "nothing changed\r\n\r\nGraduated: p01 [evidence: x]\r\n"],
                         ids=["space-before-colon", "crlf"])
def test_a_false_wrap_trailer_is_found_without_a_session_and_without_a_change(run, based, message):
    """Git reports the claim (`%(trailers:key=Graduated)`) whether or not a session is named or the file
    changed: the audit checks it the same way."""
    git(based, "commit", "-q", "--allow-empty", "--no-verify", "-m", message)
    sha = git(based, "rev-parse", "HEAD").strip()
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and found(data) == [("A201", sha)]
    assert "trailer `Graduated: p01` but the change does not show `p01` graduated" in data["findings"][0]["message"]


def test_a_false_wrap_trailer_on_a_merge_that_changes_nothing_is_found(run, based):
    """A merge whose memory is every parent's claims a graduation in its message (`git merge --no-verify`):
    git reports the claim, the commit-msg hook refuses it, and the audit finds it, as on a plain commit."""
    git(based, "checkout", "-q", "-b", "side")
    (based / "notes.txt").write_text("side notes\n")
    git(based, "add", "-A")
    git(based, "commit", "-qm", "side notes")
    git(based, "checkout", "-q", "main")
    git(based, "commit", "-q", "--allow-empty", "-m", "main moves")
    git(based, "merge", "-q", "--no-verify", "--no-ff", "-m", "Merge side\n\nGraduated: p01 [evidence: x]", "side")
    merge = git(based, "rev-parse", "HEAD").strip()
    assert len(git(based, "log", "-1", "--format=%P").split()) == 2
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and found(data) == [("A201", merge)], data["findings"]


def test_a_root_commit_that_loosens_the_defaults_is_found(run, based):
    """Hooks skipped on a second root (an orphan branch): held to the defaults, as the gate holds it."""
    from tests.checks.redteam.cases import ALL_RULES_OFF

    git(based, "checkout", "-q", "--orphan", "fresh")
    (based / ".flowgit.toml").write_text(ALL_RULES_OFF)
    git(based, "add", "-A")
    git(based, "commit", "-qm", "a fresh start", "--no-verify")
    root = git(based, "rev-parse", "HEAD").strip()
    code, data = audit(run, based)
    assert code == 1 and ("A401", root) in found(data)


def test_a_directory_or_a_link_where_the_configuration_lives_is_read_as_git_records_it(run, based):
    """A directory named `.flowgit.toml` holds no configuration (as for every reader); a linked pyproject.toml
    is reported: the gate refuses it (its target configures nothing the gate reads)."""
    (based / ".flowgit.toml").mkdir()
    (based / ".flowgit.toml" / "x").write_text("not a configuration\n")
    git(based, "add", "-A")
    git(based, "commit", "-qm", "a directory", "--no-verify")
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 0 and data["findings"] == []
    (based / "conf.toml").write_text("[project]\nname = 'x'\n")
    (based / "pyproject.toml").symlink_to("conf.toml")
    git(based, "add", "-A")
    git(based, "commit", "-qm", "a linked pyproject", "--no-verify")
    linked = git(based, "rev-parse", "HEAD").strip()
    (based / "pyproject.toml").unlink()  # the working tree's own reading is another test's business
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and found(data) == [("A402", linked)] and "symbolic link" in data["findings"][0]["message"]


def test_a_merge_answers_only_for_what_it_introduced(run, based):
    git(based, "checkout", "-q", "-b", "side")
    commit_text(based, p01(2, E_RETRY[:2]), "p01 to 2x")
    commit_text(based, p01(3, [*E_RETRY[:2], E_FRESH], proven=True), "p01 to 3x")
    git(based, "checkout", "-q", "main")
    commit_text(based, base_text(recent="The main line moved on: the breaker shipped."), "main moves")
    git(based, "merge", "-q", "--no-edit", "side")
    assert len(git(based, "log", "-1", "--format=%P").split()) == 2
    code, data = audit(run, based, "--range", "base..HEAD")
    # against main the merge shows 1x -> 3x, against side nothing
    assert code == 0, [(f["code"], f["severity"]) for f in data["findings"]]
    assert data["commits_judged"] == 4


def test_a_shallow_boundary_never_produces_a_finding(run, based, tmp_path):
    commit_text(based, p01(2), "ungrounded", "--no-verify")
    for n in range(3):
        commit_text(based, p01(2).replace("Focus: ship the gate.", f"Focus: step {n}."), f"step {n}")
    assert audit(run, based)[0] == 1
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{based}", str(shallow))
    code, data = audit(run, shallow)
    assert code == 0 and data["shallow"] and data["findings"] == []
    assert len(data["unjudged"]) == 1  # the boundary commit: listed, not judged
    assert "not judged: 1 commit(s) whose parent is beyond the shallow boundary" in run(shallow, "audit").out
    deeper = tmp_path / "deeper"
    git(tmp_path, "clone", "-q", "--depth", "5", f"file://{based}", str(deeper))
    assert audit(run, deeper)[0] == 1  # once the bypass and its parent are visible, it is reported


def test_a_range_holding_commits_beyond_a_shallow_boundary_is_not_passed(run, based, tmp_path):
    """CI asks about a range: a commit in it that cannot be judged leaves the question open (exit 2), never
    "clean"; the CI script refuses a shallow checkout it would audit whole."""
    commit_text(based, p01(2), "ungrounded", "--no-verify")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{based}", str(shallow))
    res = run(shallow, "audit", "--json", "--range", "HEAD")
    code, data = res.code, json.loads(res.out)
    assert code == 2 and not data["ok"] and data["incomplete"] and len(data["unjudged"]) == 1
    assert "the range is not passed until every commit in it is judged" in run(shallow, "audit", "--range", "HEAD").out
    script = Path(__file__).resolve().parents[2] / "templates" / "ci" / "flowgit-audit.sh"
    env = {**os.environ, "FLOWGIT": f"{sys.executable} -m flowgit"}
    ci = subprocess.run(["sh", str(script)], cwd=shallow, capture_output=True, text=True, env=env)
    assert ci.returncode == 2 and "shallow" in ci.stderr
    assert audit(run, shallow)[0] == 0  # a whole shallow history's oldest commit is its baseline (see above)


@pytest.mark.parametrize("args, message", [
    (("--range", "nope..HEAD"), "unknown revision 'nope'"),
    (("--range", "base...HEAD"), "symmetric difference"),
    (("--range", "base..HEAD", "--since-ref", "base"), "not both"),
])
def test_bad_ranges_are_usage_errors(run, based, args, message):
    res = run(based, "audit", *args)
    assert res.code == 2 and message in res.err and "Traceback" not in res.err


def test_a_symlinked_store_committed_without_the_hook_is_found(run, based):
    store = based / ".flow" / "episodes.jsonl"
    (based / "data").mkdir()
    (based / "data" / "eps.jsonl").write_bytes(store.read_bytes())
    store.unlink()
    store.symlink_to("../data/eps.jsonl")
    git(based, "add", "-A")
    git(based, "commit", "-qm", "store behind a link", "--no-verify")
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and "G806" in [f["code"] for f in data["findings"]]


def test_a_merge_that_keeps_one_side_whole_and_drops_the_others_episodes_is_found(run, based):
    git(based, "checkout", "-q", "-b", "side")
    commit_text(based, p01(1), "side records an episode", episodes=[
        ep("the retry budget held while the provider recovered", "s9", "finding", agent="agent-b")])
    git(based, "checkout", "-q", "main")
    commit_text(based, base_text(recent="The main line moved on: the breaker shipped."), "main moves")
    git(based, "merge", "-q", "--no-edit", "--no-verify", "-s", "ours", "side")
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and [f["code"] for f in data["findings"]] == ["G704"], data["findings"]


def test_a_commit_dated_in_the_future_is_judged_as_of_now(run, based):
    """A Proven pattern graduated days ago is not stale; a committer date in 2027 does not make it so."""
    import re
    from datetime import datetime, timezone

    today = datetime.now(timezone.utc).strftime("%Y-%m-%d")  # graduated today, whenever the test runs
    text = re.sub(r"\(RELIABILITY — [0-9-]+\)", f"(RELIABILITY — {today})", (based / "CONTINUITY.md").read_text())
    commit_text(based, text, "graduated today", "--no-verify")
    proven = next(ln for ln in text.splitlines() if ln.startswith("!! retry_budget:"))
    assert today in proven
    env = {**os.environ, "GIT_COMMITTER_DATE": "2099-03-01T00:00:00Z"}
    (based / "CONTINUITY.md").write_text(text.replace(proven + "\n", ""))
    git(based, "add", "-A")
    subprocess.run(["git", "commit", "-qm", "archive a stale pattern", "--no-verify"], cwd=based, env=env,
                   check=True)
    dropped = git(based, "rev-parse", "HEAD").strip()
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and ("G205", dropped) in found(data)


E_NEW = ep("a budget of two retries per request held provider load in the fifth outage", "s9", "outcome",
           agent="reviewer", tags=["retries"])


@pytest.mark.parametrize("named,problem", [
    ("ep-000000000000", "not in the store the commit records"),
    (E_RETRY[0].id, "already committed before"),
    (E_NEW.id, None),
])
def test_an_episodes_trailer_is_held_to_the_store_as_check_msg_holds_it(run, based, named, problem):
    """`Episodes:` says this commit recorded those episodes: an id the store lacks, or one an earlier commit
    recorded, is a false claim whichever way the commit got in (here --no-verify)."""
    sha = commit_text(based, base_text(state="Focus: the breaker. Critical path: its probe."),
                      f"Session wrap\n\nFlow-Session: s9\nEpisodes: {named}", "--no-verify", episodes=[E_NEW])
    code, data = audit(run, based, "--range", "base..HEAD")
    if problem is None:
        assert code == 0 and data["findings"] == []
    else:
        assert code == 1 and found(data) == [("A201", sha)] and problem in data["findings"][0]["message"]


def test_an_episodes_trailer_on_a_commit_that_changes_nothing_judged_is_false(run, based):
    (based / "notes.txt").write_text("unrelated\n")
    git(based, "add", "-A")
    git(based, "commit", "-qm", f"notes\n\nEpisodes: {E_RETRY[0].id}", "--no-verify")
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and [f["code"] for f in data["findings"]] == ["A201"]


def test_a_wrap_trailer_listing_evidence_the_change_does_not_cite_is_refused_and_found(run, based):
    """`Incremented: p01 1x->2x [evidence: …]` is what `git log --format=%(trailers)` reports as the record:
    ids the line does not cite (here, in no store at all) are refused by check-msg and found by the audit."""
    run(based, "install-hook")
    forged = "Session wrap\n\nFlow-Session: s9\nIncremented: p01 1x->2x [evidence: ep-000000000000, ep-111111111111]"
    (based / "CONTINUITY.md").write_text(p01(2, E_RETRY[:2]))
    git(based, "add", "-A")
    refused = subprocess.run(["git", "commit", "-qm", forged], cwd=based, capture_output=True, text=True)
    assert refused.returncode != 0 and "lists evidence ep-000000000000, ep-111111111111 but the change cites" \
        in refused.stdout + refused.stderr
    assert git(based, "rev-parse", "HEAD").strip() == git(based, "rev-parse", "base").strip()
    sha = commit_text(based, p01(2, E_RETRY[:2]), forged, "--no-verify")
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and found(data) == [("A201", sha)]
    ids = ", ".join(sorted(e.id for e in E_RETRY[:2]))
    truthful = forged.replace("ep-000000000000, ep-111111111111", ids)
    git(based, "reset", "-q", "--hard", "base")
    commit_text(based, p01(2, E_RETRY[:2]), truthful)  # the hooks pass it, and the audit finds nothing
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 0 and data["findings"] == []


@pytest.mark.parametrize("path", ["CONTINUITY.md", ".flow/episodes.jsonl"])
def test_a_mode_only_change_to_a_symbolic_link_is_judged(run, based, path):
    """The blob stays the same and only the mode becomes 120000: the commit is a change all the same (G806,
    so pre-push, CI and pre-receive refuse it); an executable bit set on the memory changes nothing judged."""
    blob = git(based, "rev-parse", f"HEAD:{path}").strip()
    git(based, "update-index", "--cacheinfo", f"100755,{blob},{path}")
    git(based, "commit", "-qm", "executable", "--no-verify")
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 0 and data["findings"] == [], data["findings"]
    git(based, "update-index", "--cacheinfo", f"120000,{blob},{path}")
    git(based, "commit", "-qm", "the memory as a link", "--no-verify")
    bad = git(based, "rev-parse", "HEAD").strip()
    code, data = audit(run, based, "--range", "base..HEAD")
    assert code == 1 and ("G806", bad) in found(data), data["findings"]


def test_a_finding_names_its_pattern_once_in_human_output():
    """The gate's message already opens with the pattern's name: the line does not say it twice; an audit
    finding whose message does not name it still shows it."""
    from flowgit.history.audit import AuditFinding

    named = AuditFinding("G101", "0" * 40, "2026-12-05", "cache_first",
                         "`cache_first` is at 2x without [evidence: …]", path="CONTINUITY.md", line=24)
    assert named.format() == ("000000000000 2026-12-05 G101 CONTINUITY.md:24: `cache_first` is at 2x without "
                              "[evidence: …]")
    unnamed = AuditFinding("A201", "0" * 40, "2026-12-05", "cache_first", "graduated with no trailer")
    assert unnamed.format() == "000000000000 2026-12-05 A201 `cache_first`: graduated with no trailer"
