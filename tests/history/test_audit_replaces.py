"""A branch's update that rewrites its history (a force-push, a rewind) is judged as the change from the old
tip's memory to the new tip's: pre-push, the server's pre-receive and CI's ``audit --range OLD..NEW --replaces``
refuse what the same edit made as a commit is refused for, and let a rebase or an amend through."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from flowgit.episodes import make_episode
from tests.checks.gate_fixtures import E_BACKOFF, base_text, committed_base, developing_lines, write_store
from tests.commands.test_enforcement import server_hook, sh
from tests.conftest import git

CONTRADICTION = make_episode({"type": "tension", "session": "s9", "agent": "agent-d", "tags": [],
                              "content": "retries per request were not the cause: the retry budget did not keep "
                                         "provider load flat in the outage"})


@pytest.fixture
def guarded(tmp_path: Path, repo: Path, run) -> tuple[Path, Path]:
    """A memory with retry_budget Proven, pushed to a bare remote guarded by pre-push and pre-receive."""
    git(repo, "checkout", "-q", "-b", "main")
    committed_base(repo)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    assert run(repo, "install-hook").code == 0
    server_hook(run, repo, remote)
    return repo, remote


def wrap(run, repo: Path, session: str, plan: dict) -> None:
    (repo.parent / "plan.json").write_text(json.dumps({"session": session, "agent": f"agent-{session}", **plan}))
    res = run(repo, "wrap", "--plan", str(repo.parent / "plan.json"), "--json")
    assert res.code == 0, res.out + res.err


def demote(run, repo: Path) -> str:
    """The contradicting episode committed on its own, then a wrap that demotes retry_budget; returns the
    commit before the demotion."""
    write_store(repo, [CONTRADICTION])
    git(repo, "commit", "-qam", "record the contradicting episode")
    before = git(repo, "rev-parse", "HEAD").strip()
    wrap(run, repo, "s9", {"state": "Focus: the outage review.", "patterns": [
        {"op": "demote", "name": "retry_budget", "reason": "load rose with the budget in place",
         "evidence": [CONTRADICTION.id]}]})
    return before


def push(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return sh(repo, "git", "push", *args)


def test_a_rewind_that_drops_a_demotion_is_refused_at_push_on_the_server_and_in_ci(run, guarded):
    """The rewound tip keeps every episode (no A501) and has no commit of its own to judge: only the change
    from the old tip's memory to the new one shows retry_budget back in Proven on its discredited chain (G208,
    as the same undo made as a commit is refused)."""
    repo, remote = guarded
    before = demote(run, repo)
    assert push(repo, "-q", "origin", "main").returncode == 0
    old = git(remote, "rev-parse", "main").strip()
    git(repo, "reset", "-q", "--hard", before)
    refused = push(repo, "-f", "origin", "main")
    assert refused.returncode != 0 and "G208" in refused.stdout + refused.stderr, refused.stdout + refused.stderr
    server = push(repo, "--no-verify", "-f", "origin", "main")
    assert server.returncode != 0 and "G208" in server.stderr, server.stderr
    assert git(remote, "rev-parse", "main").strip() == old
    ci = run(repo, "audit", "--range", f"{old}..{before}", "--replaces", "--json")
    found = json.loads(ci.out)["findings"]
    assert ci.code == 1 and [f["code"] for f in found] == ["G208"], ci.out
    assert found[0]["pattern"] == "retry_budget" and found[0]["commit"] == before and old[:12] in found[0]["message"]
    assert "FLOWGIT_OVERRIDE" in found[0]["fix"]


def test_a_rewind_that_drops_a_proven_pattern_is_refused_and_an_override_on_the_new_tip_records_it(run, guarded):
    """A Proven pattern the old tip held and the new tip lacks, with nothing in the new history taking it out,
    is a Proven pattern dropped (G205); a `Flow-Override:` on the new tip makes it a notice on the record."""
    repo, remote = guarded
    ids = ", ".join(e.id for e in E_BACKOFF)
    (repo / "CONTINUITY.md").write_text(base_text(proven_extra="!! jitter_backoff: jitter the backoff so retries "
                                                  f"spread out | 3x (RELIABILITY) [evidence: {ids}]\n"))
    added = sh(repo, "git", "commit", "-qam", "adopt jitter_backoff", env={"FLOWGIT_OVERRIDE": "adopted as proven"})
    assert added.returncode == 0, added.stdout + added.stderr
    assert push(repo, "-q", "origin", "main").returncode == 0
    old = git(remote, "rev-parse", "main").strip()
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    refused = push(repo, "-f", "origin", "main")
    assert refused.returncode != 0 and "G205" in refused.stdout + refused.stderr, refused.stdout + refused.stderr
    git(repo, "commit", "-q", "--allow-empty", "-m", "drop jitter_backoff\n\nFlow-Override: never proven here")
    noted = run(repo, "audit", "--range", f"{old}..HEAD", "--replaces", "--json")
    report = json.loads(noted.out)
    assert "G205" in [f["code"] for f in report["findings"]], noted.out
    assert noted.code == 0 and all(f["severity"] == "notice" for f in report["findings"]), noted.out


def test_a_rebase_of_a_clean_wrap_onto_a_main_that_demoted_and_an_amend_are_force_pushed(run, guarded):
    """The legitimate force-pushes: a wrap branch rebased onto a main that moved (and demoted a pattern the old
    branch tip still held in Proven: the new history made that change, judged in its commit), and an amend of
    a pushed wrap."""
    repo, remote = guarded
    git(repo, "checkout", "-q", "-b", "feature")
    wrap(run, repo, "s7", {"top_of_mind": ["the feature branch"]})
    assert push(repo, "-q", "origin", "feature").returncode == 0
    git(repo, "checkout", "-q", "main")
    demote(run, repo)
    assert push(repo, "-q", "origin", "main").returncode == 0
    git(repo, "checkout", "-q", "feature")
    old = git(repo, "rev-parse", "HEAD").strip()
    rebased = sh(repo, "git", "rebase", "-q", "main")
    assert rebased.returncode == 0, rebased.stdout + rebased.stderr
    forced = push(repo, "-f", "origin", "feature")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    new = git(remote, "rev-parse", "feature").strip()
    assert run(repo, "audit", "--range", f"{old}..{new}", "--replaces").code == 0
    git(repo, "commit", "-q", "--amend", "-m", git(repo, "log", "-1", "--format=%B") + "\nReviewed-by: someone\n")
    amended = push(repo, "-f", "origin", "feature")
    assert amended.returncode == 0, amended.stdout + amended.stderr


def test_a_rewind_to_an_old_commit_that_carried_an_override_is_still_refused(run, guarded):
    """The new tip's override excuses a replacement only when the update brings that commit: a rewind to an
    old commit the replaced history holds (an adoption made under an override, say) has no reason on record
    for the rewind itself; its override was for its own change."""
    repo, remote = guarded
    ids = ", ".join(e.id for e in E_BACKOFF)
    (repo / "CONTINUITY.md").write_text(base_text(recent="The team adopted the memory by hand."))
    seeded = sh(repo, "git", "commit", "-qam", "seed by hand", env={"FLOWGIT_OVERRIDE": "seeding the file by hand"})
    assert seeded.returncode == 0, seeded.stdout + seeded.stderr
    rewind_to = git(repo, "rev-parse", "HEAD").strip()
    (repo / "CONTINUITY.md").write_text(base_text(recent="The team adopted the memory by hand.", proven_extra=(
        f"!! jitter_backoff: jitter the backoff so retries spread out | 3x (RELIABILITY) [evidence: {ids}]\n")))
    assert sh(repo, "git", "commit", "-qam", "adopt jitter_backoff",
              env={"FLOWGIT_OVERRIDE": "adopted as proven"}).returncode == 0
    assert push(repo, "-q", "origin", "main").returncode == 0
    old = git(remote, "rev-parse", "main").strip()
    server = push(repo, "--no-verify", "-f", "origin", f"{rewind_to}:main")
    assert server.returncode != 0 and "G205" in server.stderr, server.stderr
    assert git(remote, "rev-parse", "main").strip() == old
    ci = run(repo, "audit", "--range", f"{old}..{rewind_to}", "--replaces", "--json")
    assert ci.code == 1 and "G205" in [f["code"] for f in json.loads(ci.out)["findings"]
                                       if f["severity"] == "error"], ci.out


def raise_under_override(repo: Path) -> str:
    """p01 raised 1x -> 3x with no evidence, let through by an override, then reverted; returns the raise."""
    (repo / "CONTINUITY.md").write_text(base_text(developing=developing_lines().replace(
        "! p01: retries without any budget multiply the load on the provider during every outage | 1x",
        "!!! p01: retries without any budget multiply the load on the provider during every outage | 3x")))
    raised = sh(repo, "git", "commit", "-qam", "raise p01 for an experiment",
                env={"FLOWGIT_OVERRIDE": "experiment, reverted next"})
    assert raised.returncode == 0, raised.stdout + raised.stderr
    commit = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "revert", "--no-edit", "HEAD")
    return commit


def replace_state(repo: Path, state: str) -> None:
    """The base's State replaced by ``state`` in the working tree."""
    path = repo / "CONTINUITY.md"
    path.write_text(path.read_text().replace(
        "Focus: ship the gate. Critical path: the compression rule, then the benchmark.", state))


RAISED_LINE = "!!! p01: retries without any budget multiply the load on the provider during every outage | 3x"


def test_a_rewind_that_brings_back_a_reverted_override_is_refused_at_push_on_the_server_and_in_ci(run, guarded):
    """An override is for its own change: the raise it let through was reverted, and a force-push back to it
    re-lands the raise with no commit to judge and nothing lost. The step from the old tip to the new one is
    judged as the commit it amounts to: 1x -> 3x without evidence (G201, G101), at the line the new tip holds."""
    repo, remote = guarded
    raised = raise_under_override(repo)
    assert push(repo, "-q", "origin", "main").returncode == 0
    old = git(remote, "rev-parse", "main").strip()
    refused = push(repo, "-f", "origin", f"{raised}:main")
    assert refused.returncode != 0 and "G201" in refused.stdout + refused.stderr, refused.stdout + refused.stderr
    server = push(repo, "--no-verify", "-f", "origin", f"{raised}:main")
    assert server.returncode != 0 and "G201" in server.stderr, server.stderr
    assert git(remote, "rev-parse", "main").strip() == old
    ci = run(repo, "audit", "--range", f"{old}..{raised}", "--replaces", "--json")
    found = json.loads(ci.out)["findings"]
    assert ci.code == 1 and {"G201", "G101"} <= {f["code"] for f in found}, ci.out
    assert all(f["severity"] == "error" for f in found), ci.out
    line = git(repo, "show", f"{raised}:CONTINUITY.md").split("\n").index(RAISED_LINE) + 1
    jump = next(f for f in found if f["code"] == "G201")
    assert jump["line"] == line and jump["pattern"] == "p01" and old[:12] in jump["message"], jump
    assert "new commit on top of it" in jump["fix"]


def test_a_commit_put_on_the_rewound_tip_does_not_hide_it_and_its_own_override_records_it(run, guarded):
    """A rewind with a commit of its own on top is no pure rewind, yet brings the raise back all the same (the
    new commit's own change shows no raise); the new commit's own override answers for the update (notices)."""
    repo, remote = guarded
    raised = raise_under_override(repo)
    assert push(repo, "-q", "origin", "main").returncode == 0
    old = git(remote, "rev-parse", "main").strip()
    git(repo, "reset", "-q", "--hard", raised)
    git(repo, "commit", "-q", "--allow-empty", "-m", "on top")
    ci = run(repo, "audit", "--range", f"{old}..HEAD", "--replaces", "--json")
    assert ci.code == 1 and "G201" in [f["code"] for f in json.loads(ci.out)["findings"]], ci.out
    git(repo, "commit", "-q", "--allow-empty", "-m", "keep the raise\n\nFlow-Override: the experiment stays")
    noted = run(repo, "audit", "--range", f"{old}..HEAD", "--replaces", "--json")
    report = json.loads(noted.out)
    assert noted.code == 0 and "G201" in [f["code"] for f in report["findings"] if f["severity"] == "notice"], \
        noted.out


def test_a_rewind_past_commits_that_kept_the_overridden_change_brings_nothing_back(run, guarded):
    """The old tip still held what the override let through (a later commit changed only State): rewinding to
    the overridden commit changes nothing the rules about a memory's content read, and the update passes."""
    repo, remote = guarded
    raised = raise_under_override(repo)
    git(repo, "reset", "-q", "--hard", raised)
    replace_state(repo, "Focus: the benchmark. Critical path: its figures, then the note.")
    git(repo, "commit", "-qam", "state only")
    assert push(repo, "-q", "origin", "main").returncode == 0
    old = git(remote, "rev-parse", "main").strip()
    ci = run(repo, "audit", "--range", f"{old}..{raised}", "--replaces", "--json")
    assert ci.code == 0 and json.loads(ci.out)["findings"] == [], ci.out
    assert push(repo, "-f", "origin", f"{raised}:main").returncode == 0


def test_a_rewind_that_brings_back_a_configuration_weakened_under_an_override_is_refused(run, guarded):
    """A configuration weakened under an override and restored later: rewinding to the weak one re-lands it
    (G801), and so does a commit on top that touches the weak configuration (a comment)."""
    repo, remote = guarded
    (repo / ".flowgit.toml").write_text('[rules]\n"level-jump" = "off"\n')
    git(repo, "add", ".flowgit.toml")
    weakened = sh(repo, "git", "commit", "-qm", "loosen for a migration", env={"FLOWGIT_OVERRIDE": "migration"})
    assert weakened.returncode == 0, weakened.stdout + weakened.stderr
    weak = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "rm", "-q", ".flowgit.toml")
    git(repo, "commit", "-qm", "restore the rules")
    assert push(repo, "-q", "origin", "main").returncode == 0
    old = git(remote, "rev-parse", "main").strip()
    ci = run(repo, "audit", "--range", f"{old}..{weak}", "--replaces", "--json")
    assert ci.code == 1 and [f["code"] for f in json.loads(ci.out)["findings"]] == ["G801"], ci.out
    server = push(repo, "--no-verify", "-f", "origin", f"{weak}:main")
    assert server.returncode != 0 and "G801" in server.stderr, server.stderr
    git(repo, "reset", "-q", "--hard", weak)
    (repo / ".flowgit.toml").write_text('# a note\n[rules]\n"level-jump" = "off"\n')
    git(repo, "commit", "-qam", "a comment", "--no-verify")
    ci = run(repo, "audit", "--range", f"{old}..HEAD", "--replaces", "--json")
    assert ci.code == 1 and "G801" in [f["code"] for f in json.loads(ci.out)["findings"]], ci.out


def test_legitimate_rewinds_drop_a_state_only_wrap_or_a_config_comment_and_pass(run, guarded):
    """Dropping the last commits when they changed nothing the memory's content rules read: a commit that
    only rewrote State, and one that only commented the configuration (its rules the same at both tips)."""
    repo, remote = guarded
    start = git(repo, "rev-parse", "HEAD").strip()
    (repo / ".flowgit.toml").write_text('[rules]\n"evidence-reuse" = "error"\n')
    git(repo, "add", ".flowgit.toml")
    git(repo, "commit", "-qm", "config")
    kept = git(repo, "rev-parse", "HEAD").strip()
    (repo / ".flowgit.toml").write_text('# why: see the runbook\n[rules]\n"evidence-reuse" = "error"\n')
    replace_state(repo, "Focus: the runbook. Critical path: its review.")
    git(repo, "commit", "-qam", "state and a comment")
    assert push(repo, "-q", "origin", "main").returncode == 0
    old = git(remote, "rev-parse", "main").strip()
    for target in (kept, start):
        ci = run(repo, "audit", "--range", f"{old}..{target}", "--replaces", "--json")
        assert ci.code == 0 and json.loads(ci.out)["findings"] == [], ci.out
    assert push(repo, "-f", "origin", f"{kept}:main").returncode == 0


@pytest.mark.parametrize("raise_is_newer", [False, True])
def test_a_remade_criss_cross_merge_that_brings_back_a_reverted_raise_is_refused(run, guarded, raise_is_newer):
    """Two merge bases: the raise (under an override) and an unrelated side commit. The new tip, the same two
    commits merged the other way round, holds the raise again; the step is the new history's own only if every
    merge base shows it (libgit2 names one of them, by date), so which one is newer changes nothing."""
    repo, remote = guarded
    now = int(git(repo, "log", "-1", "--format=%ct").strip()) + 1000
    side_at, raise_at = (now - 100, now - 50) if raise_is_newer else (now - 50, now - 100)
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "other.txt").write_text("x\n")
    git(repo, "add", "other.txt")
    sh(repo, "git", "commit", "-qm", "other file", env={"GIT_COMMITTER_DATE": f"@{side_at} +0000"})
    side = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "main")
    (repo / "CONTINUITY.md").write_text(base_text(developing=developing_lines().replace(
        "! p01: retries without any budget multiply the load on the provider during every outage | 1x", RAISED_LINE)))
    assert sh(repo, "git", "commit", "-qam", "raise p01", env={"FLOWGIT_OVERRIDE": "experiment",
                                                              "GIT_COMMITTER_DATE": f"@{raise_at} +0000"}).returncode == 0
    raised = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "merge", "-q", "--no-edit", side)
    (repo / "CONTINUITY.md").write_text(base_text())
    git(repo, "commit", "-qam", "undo the raise")
    assert push(repo, "-q", "origin", "main").returncode == 0
    old = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "remerge", side)
    git(repo, "merge", "-q", "--no-edit", raised)
    new = git(repo, "rev-parse", "HEAD").strip()
    assert len(git(repo, "merge-base", "--all", old, new).split()) == 2
    ci = run(repo, "audit", "--range", f"{old}..{new}", "--replaces", "--json")
    assert ci.code == 1 and "G201" in [f["code"] for f in json.loads(ci.out)["findings"]], ci.out
    server = push(repo, "--no-verify", "-f", "origin", f"{new}:main")
    assert server.returncode != 0 and "G201" in server.stderr, server.stderr


def test_a_rewind_that_brings_back_attributes_set_under_an_override_is_refused(run, guarded):
    """`merge=union` on the store, let through by an override and removed since: rewinding to it (and adding
    an unrelated attribute on top) has the store merged by union again: G811."""
    repo, remote = guarded
    driver = ".flow/episodes.jsonl merge=flowgit\n"
    (repo / ".gitattributes").write_text(driver)
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "the merge driver")
    (repo / ".gitattributes").write_text(".flow/episodes.jsonl merge=union\n")
    assert sh(repo, "git", "commit", "-qam", "union merges", env={"FLOWGIT_OVERRIDE": "trying union"}).returncode == 0
    union = git(repo, "rev-parse", "HEAD").strip()
    (repo / ".gitattributes").write_text(driver)
    git(repo, "commit", "-qam", "back to the driver")
    assert push(repo, "-q", "origin", "main").returncode == 0
    old = git(remote, "rev-parse", "main").strip()
    git(repo, "reset", "-q", "--hard", union)
    (repo / ".gitattributes").write_text(".flow/episodes.jsonl merge=union\n*.png binary\n")
    git(repo, "commit", "-qam", "png", "--no-verify")
    ci = run(repo, "audit", "--range", f"{old}..HEAD", "--replaces", "--json")
    assert ci.code == 1 and "G811" in [f["code"] for f in json.loads(ci.out)["findings"]], ci.out
