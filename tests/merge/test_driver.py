"""The merge driver in real repositories: git merge, git rebase, git pull --rebase, conflicts, refusals."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flowgit.merge.continuity import merge_continuity
from flowgit.merge.markers import find_markers
from tests.conftest import git
from tests.merge.cases import CASES
from tests.merge.conftest import BASE_EPISODES, commit, store_bytes, write
from tests.merge.cases import CACHE_1X
from tests.merge.fixtures import A2, B2, BASE, EPISODES, edit, ep, store_lookup

EXPECTED = Path(__file__).parent / "expected"
def two_branches(repo: Path, name: str, *, ours_store: bytes | None = None, theirs_store: bytes | None = None):
    ours, theirs, _ = CASES[name]
    git(repo, "checkout", "-qb", "other")
    write(repo, theirs, theirs_store)
    commit(repo, "theirs wrap", "2026-11-27T10:00:00Z")
    git(repo, "checkout", "-q", "main")
    write(repo, ours, ours_store)
    commit(repo, "ours wrap", "2026-11-26T10:00:00Z")
    return ours, theirs


def test_git_merge_uses_the_driver_and_the_merged_store(team_repo):
    base_store = store_bytes(*BASE_EPISODES)
    two_branches(team_repo, "both_raise", ours_store=base_store + store_bytes(A2),
                 theirs_store=base_store + store_bytes(B2))
    proc = subprocess.run(["git", "merge", "--no-edit", "other"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # retry_budget reached Proven only because the driver found theirs' store (B2) next to ours' (A2)
    assert (team_repo / "CONTINUITY.md").read_text() == (EXPECTED / "both_raise.md").read_text()
    assert (team_repo / ".flow" / "episodes.jsonl").read_bytes() == base_store + store_bytes(A2, B2)
    assert git(team_repo, "status", "--porcelain") == ""


def test_git_rebase_replays_a_wrap_through_the_driver(team_repo):
    ours, theirs = two_branches(team_repo, "actions_done_vs_redated")
    git(team_repo, "checkout", "-q", "other")
    proc = subprocess.run(["git", "rebase", "main"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # in a rebase, "ours" is the branch being rebased onto and "theirs" the replayed commit
    expected = merge_continuity(BASE, ours, theirs, lookup=store_lookup).text
    assert (team_repo / "CONTINUITY.md").read_text() == expected
    assert "- ✓ write the retry budget — seen: Nov 26, next: Nov 28" in expected


def test_both_wraps_replace_state_the_newer_wins_and_names_the_other(team_repo):
    two_branches(team_repo, "both_replace_state")
    other = git(team_repo, "rev-parse", "other").strip()
    subprocess.run(["git", "merge", "--no-edit", "other"], cwd=team_repo, check=True, capture_output=True)
    text = (team_repo / "CONTINUITY.md").read_text()
    assert "## Current State | 2026-11-27 (theirs)\nFocus: jitter." in text  # theirs wrapped later
    ours_sha = git(team_repo, "rev-parse", "HEAD^1").strip()[:10]
    author = git(team_repo, "log", "-1", "--format=%an", "HEAD^1").strip()  # named as a teammate reads it later
    assert f"# flowgit merge: another wrap ({ours_sha} by {author}, 2026-11-26) also replaced Current State" in text, \
        [line for line in text.splitlines() if "flowgit merge" in line]
    assert "# | Focus: cache. Critical path: balances cache." in text
    assert find_markers(text) is None and other


def test_the_newer_wrap_wins_though_the_other_tip_is_a_later_merge_commit(team_repo):
    """Theirs' tip is a sync's merge commit dated after our wrap, though the State it carries was written
    before ours: the wraps' own dates decide, so our newer State stays current and theirs becomes the note."""
    ours, theirs, _ = CASES["both_replace_state"]
    git(team_repo, "checkout", "-qb", "other")
    write(team_repo, theirs)
    commit(team_repo, "theirs wrap", "2026-11-26T10:00:00Z")
    git(team_repo, "checkout", "-qb", "unrelated", "main")
    (team_repo / "notes.txt").write_text("unrelated\n")
    git(team_repo, "add", "notes.txt")
    commit(team_repo, "unrelated work", "2026-11-25T10:00:00Z")
    git(team_repo, "checkout", "-q", "other")
    env = {**os.environ, "GIT_AUTHOR_DATE": "2026-11-28T10:00:00Z", "GIT_COMMITTER_DATE": "2026-11-28T10:00:00Z"}
    subprocess.run(["git", "merge", "-q", "--no-edit", "unrelated"], cwd=team_repo, check=True, env=env,
                   capture_output=True)  # the sync's merge commit: the newest date on theirs' side
    git(team_repo, "checkout", "-q", "main")
    write(team_repo, ours)
    commit(team_repo, "ours wrap", "2026-11-27T10:00:00Z")
    proc = subprocess.run(["git", "merge", "--no-edit", "other"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (team_repo / "CONTINUITY.md").read_text()
    assert "## Current State | 2026-11-26 (ours)\nFocus: cache." in text
    wrap = git(team_repo, "rev-parse", "other^1").strip()[:10]  # theirs' wrap, not the merge commit
    author = git(team_repo, "log", "-1", "--format=%an", "other^1").strip()
    assert f"# flowgit merge: another wrap ({wrap} by {author}, 2026-11-26) also replaced Current State" in text
    assert "# | Focus: jitter. Critical path: backoff tuning." in text


def test_a_cherry_picked_wrap_takes_the_newer_state_without_a_merge_note(team_repo, run):
    """A cherry-pick makes a non-merge commit, where only a merge may bring a merge note (G304): the newer
    wrap's State stands and the other's is not quoted, and the audit (the pre-push guarantee) is clean; a
    merge of the same two wraps quotes it (above), and so does a rebase, which `flowgit sync` turns into a
    merge when the gate refuses its replayed commit."""
    two_branches(team_repo, "both_replace_state")
    proc = subprocess.run(["git", "cherry-pick", "other"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (team_repo / "CONTINUITY.md").read_text()
    assert "# flowgit merge:" not in text and "# | " not in text and "Focus: jitter." in text
    res = run(team_repo, "audit", "--json")
    assert res.code == 0, res.out


def test_a_mailed_wrap_applied_with_am_takes_its_own_state_without_a_merge_note(team_repo, tmp_path, run):
    """`git am -3` merges a patch through the driver into a non-merge commit, as a cherry-pick does: no merge
    note may stand there (G304), so the patch's State replaces HEAD's without quoting it and the audit is
    clean. (`git rebase --apply` runs `git am --rebasing`: that is a rebase, and quotes as a rebase does.)"""
    two_branches(team_repo, "both_replace_state")
    git(team_repo, "format-patch", "-q", "-1", "other", "-o", str(tmp_path / "patches"))
    proc = subprocess.run(["git", "am", "-3", *sorted(map(str, (tmp_path / "patches").iterdir()))], cwd=team_repo,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (team_repo / "CONTINUITY.md").read_text()
    assert "# flowgit merge:" not in text and "# | " not in text and "Focus: jitter." in text
    assert "Focus: cache." not in text
    res = run(team_repo, "audit", "--json")
    assert res.code == 0, res.out


def test_a_rebase_by_the_apply_backend_quotes_the_other_wrap_as_a_rebase_does(team_repo):
    """`git rebase --apply` replays through `git am --rebasing`: the rebased wrap leaves its branch, so the other
    wrap's State is quoted, not dropped (the pre-push audit then refuses the replay, G304, and sync merges)."""
    two_branches(team_repo, "both_replace_state")
    git(team_repo, "checkout", "-q", "other")
    proc = subprocess.run(["git", "rebase", "--apply", "main"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (team_repo / "CONTINUITY.md").read_text()
    assert "# flowgit merge: another wrap" in text and "# | Focus: cache." in text


QUEUE_1X = "! queue_depth: alert on queue depth before latency | 1x"
Q1 = ep("alerting on queue depth caught the backlog before latency rose", "q1", tags=("queue",))
Q2 = ep("the queue depth alert fired early again, before latency moved", "q2", "outcome", agent="agent-b",
        tags=("queue",))


def _a_pattern_raised_on_a_branch(repo: Path) -> None:
    """Branch `other`: one wrap adds queue_depth at 1x with its episode, the next raises it to 2x citing both."""
    base_store = store_bytes(*BASE_EPISODES)
    git(repo, "checkout", "-qb", "other")
    write(repo, edit(BASE, (CACHE_1X + "\n", f"{CACHE_1X}\n{QUEUE_1X}\n")), base_store + store_bytes(Q1))
    commit(repo, "wrap one: queue_depth added", "2026-11-27T10:00:00Z")
    raised = f"!! queue_depth: alert on queue depth before latency | 2x (OPS) [evidence: {Q1.id}, {Q2.id}]"
    write(repo, edit(BASE, (CACHE_1X + "\n", f"{CACHE_1X}\n{raised}\n")), base_store + store_bytes(Q1, Q2))
    commit(repo, "wrap two: queue_depth raised", "2026-11-28T10:00:00Z")
    git(repo, "checkout", "-q", "main")


def test_a_cherry_picked_raise_whose_evidence_an_unpicked_commit_recorded_stops_as_a_conflict(team_repo, run):
    """git merges a pick on the picked commit's parent, so the store merge leaves out the episode the earlier,
    unpicked wrap recorded; the raised line still cites it. The driver names the episode and stops the pick,
    rather than land a level on evidence no longer on record (found later by the audit as G102)."""
    _a_pattern_raised_on_a_branch(team_repo)
    head = git(team_repo, "rev-parse", "HEAD")
    proc = subprocess.run(["git", "cherry-pick", "other"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert f"cites {Q1.id}, which the other side's store holds but the merged store does not" in proc.stderr
    assert git(team_repo, "rev-parse", "HEAD") == head
    git(team_repo, "cherry-pick", "--abort")
    # both wraps picked (git's sequencer list): each brings its own episodes, and the history audits clean
    proc = subprocess.run(["git", "cherry-pick", "other~1", "other"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    store = (team_repo / ".flow" / "episodes.jsonl").read_bytes()
    assert Q1.id.encode() in store and Q2.id.encode() in store
    assert run(team_repo, "audit", "--json").code == 0



E1 = ep("the first line of work recorded its own finding", "s-x1", tags=("one",))
E2 = ep("the second line of work recorded another finding", "s-x2", tags=("two",))
E3 = ep("the target branch recorded a finding of its own", "s-x3", tags=("three",))


@pytest.mark.parametrize("picks", [["M"], ["M", "N"]], ids=["one commit", "a sequencer list"])
def test_a_pick_of_a_merge_against_its_second_parent_reads_the_store_on_that_parent(team_repo, picks):
    """`git cherry-pick -m 2 M` replays what M brought over its second parent: the first parent's line, a
    pattern citing E1 and E1 itself. git merges on M^2, and the driver must read the stores on it too: given
    one commit, git's arguments say so; given several, git keeps `-m` in its sequencer's options file (before,
    the driver took M^1 there, read E1 as removed on our side, and stopped the pick: "cites E1, which the
    other side's store holds but the merged store does not")."""
    base = store_bytes(*BASE_EPISODES)
    queue = f"! queue_depth: alert on queue depth before latency | 1x [evidence: {E1.id}]"
    git(team_repo, "checkout", "-qb", "x1")
    write(team_repo, edit(BASE, (CACHE_1X + "\n", f"{CACHE_1X}\n{queue}\n")), base + store_bytes(E1))
    commit(team_repo, "x1 adds queue_depth on E1", "2026-11-27T10:00:00Z")
    git(team_repo, "checkout", "-qb", "x2", "main")
    write(team_repo, BASE, base + store_bytes(E2))
    commit(team_repo, "x2 records E2", "2026-11-27T11:00:00Z")
    git(team_repo, "checkout", "-q", "x1")
    env = {**os.environ, "GIT_AUTHOR_DATE": "2026-11-27T12:00:00Z", "GIT_COMMITTER_DATE": "2026-11-27T12:00:00Z"}
    merged = subprocess.run(["git", "merge", "-q", "--no-edit", "x2"], cwd=team_repo, env=env, capture_output=True,
                            text=True)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    revs = {"M": git(team_repo, "rev-parse", "x1").strip(), "N": _a_merge_of_other_work(team_repo, env)}
    git(team_repo, "checkout", "-q", "main")
    write(team_repo, edit(BASE, ("two outages this week.", "two outages this week and a backlog.")),
          base + store_bytes(E3))
    commit(team_repo, "main records E3", "2026-11-27T14:00:00Z")
    proc = subprocess.run(["git", "cherry-pick", "-m", "2", *(revs[p] for p in picks)], cwd=team_repo,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    store = (team_repo / ".flow" / "episodes.jsonl").read_bytes()
    assert E3.id.encode() in store and E1.id.encode() in store and E2.id.encode() not in store
    text = (team_repo / "CONTINUITY.md").read_text()
    assert queue in text and "and a backlog." in text


def _a_merge_of_other_work(repo: Path, env: dict) -> str:
    """A merge commit of two branches that touch neither the memory nor the store (a second pick for the
    list: git takes `-m 2` for every commit of it)."""
    for branch in ("w", "v"):
        git(repo, "checkout", "-qb", branch, "main")
        (repo / f"{branch}.txt").write_text(f"{branch}\n")
        git(repo, "add", f"{branch}.txt")
        commit(repo, f"{branch} work", "2026-11-27T13:00:00Z")
    git(repo, "checkout", "-q", "w")
    subprocess.run(["git", "merge", "-q", "--no-edit", "v"], cwd=repo, env=env, check=True, capture_output=True)
    return git(repo, "rev-parse", "w").strip()

def test_the_replayed_commit_and_its_base_are_read_from_a_picks_arguments():
    from flowgit.merge.sides import _one_revision

    assert _one_revision(["other"]) == ("other", 1)
    assert _one_revision(["-x", "--strategy-option", "theirs", "abc123"]) == ("abc123", 1)
    assert _one_revision(["-m", "2", "abc123"]) == ("abc123", 2)
    assert _one_revision(["--mainline=2", "abc123"]) == ("abc123", 2)
    assert _one_revision(["a..b"]) == (None, 1) and _one_revision(["a", "b"]) == (None, 1)


@pytest.mark.parametrize("carry", ["stash pop", "checkout -m"])
def test_an_uncommitted_state_carried_over_another_wrap_keeps_the_edit_without_a_merge_note(team_repo, carry):
    """`flowgit sync` asks for a stash; `git stash pop` (or `checkout -m`) then merges the pending edit into
    the new HEAD with no merge commit to follow, where a note is refused (G304): the pending State stands, and
    HEAD's stays in its commit."""
    ours, theirs, _ = CASES["both_replace_state"]
    git(team_repo, "checkout", "-qb", "other")
    write(team_repo, ours)
    commit(team_repo, "a teammate's wrap", "2026-11-27T10:00:00Z")
    git(team_repo, "checkout", "-q", "main")
    (team_repo / "CONTINUITY.md").write_text(theirs)  # the pending edit, not committed
    if carry == "stash pop":
        git(team_repo, "stash", "-q")
        git(team_repo, "merge", "-q", "--ff-only", "other")
        proc = subprocess.run(["git", "stash", "pop"], cwd=team_repo, capture_output=True, text=True)
    else:
        proc = subprocess.run(["git", "checkout", "-m", "other"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (team_repo / "CONTINUITY.md").read_text()
    assert "# flowgit merge:" not in text and "# | " not in text and "Focus: jitter." in text
    assert "Focus: cache." in git(team_repo, "show", "HEAD:CONTINUITY.md")


def test_checkout_m_in_a_merge_stopped_on_a_conflict_redoes_it_with_the_note(team_repo):
    """`git checkout -m FILE` while a merge waits on a conflict re-runs that merge, whose commit follows: the
    other wrap's State is quoted as `git merge` quoted it."""
    ours, theirs = two_branches(team_repo, "both_replace_state")
    write(team_repo, ours.replace("Write the episode", "Ours: write the episode"))
    commit(team_repo, "ours changes Foundation", "2026-11-26T11:00:00Z")
    git(team_repo, "checkout", "-q", "other")
    write(team_repo, theirs.replace("Write the episode", "Other: write the episode"))
    commit(team_repo, "theirs changes Foundation", "2026-11-27T11:00:00Z")
    git(team_repo, "checkout", "-q", "main")
    merged = subprocess.run(["git", "merge", "--no-edit", "other"], cwd=team_repo, capture_output=True, text=True)
    assert merged.returncode != 0, merged.stdout  # Foundation conflicts: the merge waits
    first = (team_repo / "CONTINUITY.md").read_text()
    proc = subprocess.run(["git", "checkout", "-m", "CONTINUITY.md"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    again = (team_repo / "CONTINUITY.md").read_text()
    assert "# flowgit merge: another wrap" in first and "# flowgit merge: another wrap" in again


def test_a_merge_made_with_merge_tree_quotes_the_other_side(team_repo):
    """A merge commit made without `git merge` (`git merge-tree`, as a tool or a server might) is a merge: the
    other wrap's State is quoted, not dropped. Only a cherry-pick or a revert leaves it out."""
    from flowgit.merge.sides import _subcommand, git_command_of

    two_branches(team_repo, "both_replace_state")
    tree = git(team_repo, "merge-tree", "--write-tree", "main", "other").split()[0]
    text = git(team_repo, "show", f"{tree}:CONTINUITY.md")
    assert "# flowgit merge: another wrap" in text and "# | Focus: cache." in text
    assert _subcommand(["-c", "x=y", "-C", "/tmp", "cherry-pick", "abc"]) == "cherry-pick"
    assert _subcommand(["--no-pager", "merge", "-m", "revert"]) == "merge"
    assert git_command_of(["/usr/lib/git-core/git-cherry-pick", "abc"]) == "cherry-pick"  # (run by its path)
    assert git_command_of(["/bin/sh", "-c", "git cherry-pick"]) is None


def test_pull_rebase_between_two_clones(tmp_path, team_repo, run):
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(team_repo), str(remote))
    clones = []
    for name in ("a", "b"):
        git(tmp_path, "clone", "-q", str(remote), name)
        assert run(tmp_path / name, "init", "--no-hooks").code == 0  # the driver command lives in .git/config
        clones.append(tmp_path / name)
    a, b = clones
    ours, theirs, _ = CASES["both_add"]
    write(a, ours)
    commit(a, "a wraps", "2026-11-26T10:00:00Z")
    git(a, "push", "-q")
    write(b, theirs)
    commit(b, "b wraps", "2026-11-27T10:00:00Z")
    proc = subprocess.run(["git", "pull", "--rebase", "-q"], cwd=b, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (b / "CONTINUITY.md").read_text() == merge_continuity(BASE, ours, theirs).text


def test_a_protected_conflict_stops_git_and_the_gate_refuses_the_markers(team_repo, run):
    two_branches(team_repo, "protected_conflict")
    proc = subprocess.run(["git", "merge", "--no-edit", "other"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode == 1 and "CONFLICT" in proc.stdout + proc.stderr
    assert "CONFLICT in Foundation" in proc.stderr
    text = (team_repo / "CONTINUITY.md").read_text()
    assert "<<<<<<< ours" in text and ">>>>>>> theirs" in text
    listed = run(team_repo, "patterns")
    assert listed.code == 2 and "mid-merge" in listed.err
    git(team_repo, "add", "CONTINUITY.md")
    assert "G601" in run(team_repo, "check").err


def test_a_merge_the_gate_would_refuse_is_left_conflicted_with_the_reason(team_repo, run, tmp_path):
    """Each side adds a pattern under a name the other's folds to (`cache_ttl`, `Cache-TTL`): each is valid,
    the union holds two patterns of one identity (G112). (A union over a size budget is no longer refused:
    tests/checks/test_judge.py.)"""
    def added(line: str) -> str:
        return edit(BASE, ("! cache_first: serve balances from cache before the provider | 1x\n",
                           "! cache_first: serve balances from cache before the provider | 1x\n" + line))
    files = {}
    for name, text in (("base", BASE), ("ours", added("! cache_ttl: cache provider balances for thirty seconds | 1x\n")),
                       ("theirs", added("! Cache-TTL: keep cached balances no longer than a minute | 1x\n"))):
        files[name] = tmp_path / f"{name}.md"
        files[name].write_text(text)
    res = run(team_repo, "merge-driver", str(files["base"]), str(files["ours"]), str(files["theirs"]),
              "CONTINUITY.md")
    assert res.code == 1 and "G112" in res.err and "would fail the gate" in res.err, res.err
    merged = files["ours"].read_text()
    assert "cache_ttl:" in merged and "Cache-TTL:" in merged and find_markers(merged) is None


def test_the_driver_merges_the_store_by_path_and_falls_back_for_unreadable_files(team_repo, run, tmp_path):
    base, ours, theirs = (tmp_path / n for n in ("b", "o", "t"))
    base.write_bytes(store_bytes(EPISODES[0]))
    ours.write_bytes(store_bytes(EPISODES[0], EPISODES[1]))
    theirs.write_bytes(store_bytes(EPISODES[0], EPISODES[2], EPISODES[1]))
    res = run(team_repo, "merge-driver", str(base), str(ours), str(theirs), ".flow/episodes.jsonl", "--json")
    assert res.code == 0 and '"kind": "store"' in res.out
    assert ours.read_bytes() == store_bytes(EPISODES[0], EPISODES[1], EPISODES[2])
    for f, data in ((base, b"a\n"), (ours, b"\xff\xfe bad\n"), (theirs, b"c\n")):
        f.write_bytes(data)
    res = run(team_repo, "merge-driver", str(base), str(ours), str(theirs), "CONTINUITY.md")
    assert res.code == 1 and "not merged by meaning" in res.err and "not valid UTF-8" in res.err
    missing = run(team_repo, "merge-driver", str(tmp_path / "nope"), str(ours), str(theirs), "CONTINUITY.md")
    assert missing.code == 2 and "cannot be read" in missing.err and "Traceback" not in missing.err


def test_git_rebase_finds_the_picked_commits_store(team_repo):
    base_store = store_bytes(*BASE_EPISODES)
    ours, theirs = two_branches(team_repo, "both_raise", ours_store=base_store + store_bytes(A2),
                                theirs_store=base_store + store_bytes(B2))
    git(team_repo, "checkout", "-q", "other")
    proc = subprocess.run(["git", "rebase", "main"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (team_repo / "CONTINUITY.md").read_text()
    assert text == merge_continuity(BASE, ours, theirs, lookup=store_lookup).text
    assert "!! retry_budget: cap retries per request so outages cannot multiply load | 3x" in text
    assert (team_repo / ".flow" / "episodes.jsonl").read_bytes() == base_store + store_bytes(A2, B2)


def test_a_failure_inside_the_driver_still_leaves_a_visible_conflict(team_repo, run, tmp_path, monkeypatch):
    from flowgit.merge import driver

    def broken(*args, **kw):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(driver, "_continuity", broken)
    files = {}
    for name, text in (("base", BASE), ("ours", CASES["protected_conflict"][0]),
                       ("theirs", CASES["protected_conflict"][1])):
        files[name] = tmp_path / name
        files[name].write_text(text)
    res = run(team_repo, "merge-driver", str(files["base"]), str(files["ours"]), str(files["theirs"]),
              "CONTINUITY.md")
    assert res.code == 1 and "simulated bug" in res.err
    assert find_markers(files["ours"].read_text()) is not None


def test_the_registered_driver_with_a_broken_configuration_merges_as_text(team_repo, tmp_path):
    (team_repo / ".flowgit.toml").write_text("continuity = [\n")
    for name, text in (("b", "a\n"), ("o", "a\nb\n"), ("t", "a\nc\n")):
        (tmp_path / name).write_text(text)
    proc = subprocess.run([sys.executable, "-m", "flowgit.commands.merge_driver", *(str(tmp_path / n) for n in "bot"),
                           "CONTINUITY.md"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode == 1 and "invalid TOML" in proc.stderr and "merged as plain text" in proc.stderr
    assert find_markers((tmp_path / "o").read_text()) is not None


def test_a_clone_behind_by_two_raises_takes_them_without_a_level_jump_refusal(team_repo, run, tmp_path):
    """Another clone raised cache_first 1x -> 2x -> 3x in two gated wraps; ours is still at 1x."""
    from tests.merge.fixtures import C

    two_x = edit(BASE, ("! cache_first: serve balances from cache before the provider | 1x",
                        f"!! cache_first: serve balances from cache before the provider | 2x (DATA) "
                        f"[evidence: {C[0].id}, {C[1].id}]"))
    three_x = edit(two_x, (f"!! cache_first: serve balances from cache before the provider | 2x (DATA) "
                           f"[evidence: {C[0].id}, {C[1].id}]\n", ""),
                   ("## Foundation", f"!! cache_first: serve balances from cache before the provider | 3x (DATA — "
                                     f"2026-11-28) [evidence: {C[0].id}, {C[1].id}, {C[2].id}]\n\n## Foundation"))
    three_x = three_x.replace("\n\n\n## Foundation", "\n\n## Foundation")
    ours = edit(BASE, ("- provider storms", "- cache warm-up"))
    files = {}
    for name, text in (("base", BASE), ("ours", ours), ("theirs", three_x)):
        files[name] = tmp_path / name
        files[name].write_text(text)
    res = run(team_repo, "merge-driver", *(str(files[n]) for n in ("base", "ours", "theirs")), "CONTINUITY.md")
    assert res.code == 0, res.err
    assert "| 3x (DATA — 2026-11-28)" in files["ours"].read_text() and "- cache warm-up" in files["ours"].read_text()


def test_two_wraps_graduating_one_pattern_in_their_own_words_merge_and_audit_clean(team_repo, run):
    """Each wrap graduates retry_budget on its own evidence, each compressing it its own way: the merge keeps
    one claim exactly as its wrap wrote it (with both wraps' evidence), which is a choice, not a loss."""
    two_x = next(ln for ln in BASE.splitlines() if ln.startswith("!! retry_budget:"))

    def graduated(text: str, extra) -> str:
        proven = (f"!! retry_budget: {text} | 3x (RELIABILITY — 2026-11-26) "
                  f"[evidence: {', '.join(e.id for e in (*BASE_EPISODES[:2], extra))}]")
        moved = edit(BASE, (two_x + "\n", ""))
        return moved.replace("## Proven Knowledge\n", f"## Proven Knowledge\n{proven}\n")

    base_store = store_bytes(*BASE_EPISODES)
    git(team_repo, "checkout", "-qb", "other")
    write(team_repo, graduated("cap retries per request so outages cannot multiply", B2), base_store + store_bytes(B2))
    commit(team_repo, "theirs graduates", "2026-11-27T10:00:00Z")
    git(team_repo, "checkout", "-q", "main")
    write(team_repo, graduated("cap retries per request: outages cannot multiply load", A2), base_store + store_bytes(A2))
    commit(team_repo, "ours graduates", "2026-11-26T10:00:00Z")
    proc = subprocess.run(["git", "merge", "--no-edit", "other"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    merged = (team_repo / "CONTINUITY.md").read_text()
    assert "!! retry_budget: cap retries per request so outages cannot multiply | 3x" in merged  # the newer's words
    res = run(team_repo, "audit")
    assert res.code == 0, res.out + res.err



def test_a_redaction_on_one_side_is_not_undone_by_the_other_sides_merge(team_repo):
    """One branch removed a leaked line from the store (a recorded override); the other only kept it and
    appended its own episode: the merge keeps the removal and the appended line, and says so."""
    base_store = store_bytes(*BASE_EPISODES)
    leaked = BASE_EPISODES[-1].to_json().encode() + b"\n"
    git(team_repo, "checkout", "-qb", "other")
    write(team_repo, BASE, base_store.replace(leaked, b""))
    commit(team_repo, "redact a leaked line", "2026-11-26T10:00:00Z")
    git(team_repo, "checkout", "-q", "main")
    write(team_repo, edit(BASE, ("- provider storms", "- provider storms\n- a new worry")), base_store + store_bytes(A2))
    commit(team_repo, "ours wrap", "2026-11-27T10:00:00Z")
    proc = subprocess.run(["git", "merge", "--no-edit", "other"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (team_repo / ".flow" / "episodes.jsonl").read_bytes() == base_store.replace(leaked, b"") + store_bytes(A2)
    assert "stay removed" in proc.stdout + proc.stderr


def _one_episode_two_records(repo: Path):
    """Same type, text and session on two branches by two agents: one id, two records. Returns (ours, theirs,
    the base's store bytes), main checked out."""
    base_store = store_bytes(*BASE_EPISODES)
    mine, yours = ep("queue depth doubles", "shared", agent="agent-a", tags=("from-a",)), \
        ep("queue depth doubles", "shared", agent="agent-b", tags=("from-b",))
    assert mine.id == yours.id
    git(repo, "checkout", "-qb", "other")
    write(repo, BASE, base_store + store_bytes(yours))
    commit(repo, "theirs", "2026-11-26T10:00:00Z")
    git(repo, "checkout", "-q", "main")
    write(repo, BASE, base_store + store_bytes(mine))
    commit(repo, "ours", "2026-11-27T10:00:00Z")
    return mine, yours, base_store


def test_one_episode_recorded_by_two_agents_stops_the_merge_for_a_person_to_choose(team_repo, run):
    """Ids stay unique (G703, `episode add`), so one line is kept, and keeping either rewrites one branch's
    record: the merge stops, names the other agent's record, and the gate refuses the merge (G708) until
    the person merging commits their choice under an override, which the audit then shows."""
    mine, _, base_store = _one_episode_two_records(team_repo)
    proc = subprocess.run(["git", "merge", "--no-edit", "other"], cwd=team_repo, capture_output=True, text=True)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "CONFLICT" in said, said
    assert (team_repo / ".flow" / "episodes.jsonl").read_bytes() == base_store + store_bytes(mine)
    assert f"episode {mine.id} was recorded on both sides" in said
    assert "theirs (agent agent-b, tags [from-b]" in said and 'FLOWGIT_OVERRIDE="G708: ' in said
    assert run(team_repo, "install-hook").code == 0
    git(team_repo, "add", "--", ".flow/episodes.jsonl", "CONTINUITY.md")
    refused = subprocess.run(["git", "commit", "--no-edit"], cwd=team_repo, capture_output=True, text=True)
    assert refused.returncode == 1 and "G708" in refused.stderr and mine.id in refused.stderr, refused.stderr
    env = {**os.environ, "FLOWGIT_OVERRIDE": "G708: agent-a's record is the one main pushed"}
    done = subprocess.run(["git", "commit", "--no-edit"], cwd=team_repo, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "Flow-Override: G708: agent-a's record" in git(team_repo, "log", "-1", "--format=%B")
    audit = run(team_repo, "audit", "--json")
    assert audit.code == 0, audit.out
    shown = {f["code"]: f["severity"] for f in json.loads(audit.out)["findings"]}
    assert shown == {"A301": "notice", "G708": "notice"}, shown  # recorded as let through, not as a failure


def test_a_merge_committed_past_the_hooks_is_found_by_the_audit_at_that_commit(team_repo, run):
    _one_episode_two_records(team_repo)
    subprocess.run(["git", "merge", "--no-edit", "other"], cwd=team_repo, capture_output=True)
    git(team_repo, "add", "--", ".flow/episodes.jsonl", "CONTINUITY.md")
    git(team_repo, "commit", "-q", "--no-edit", "--no-verify")
    audit = run(team_repo, "audit", "--json")
    found = [f for f in json.loads(audit.out)["findings"] if f["code"] == "G708"]
    assert audit.code == 1 and found and found[0]["commit"] == git(team_repo, "rev-parse", "HEAD").strip()


def test_a_driver_that_cannot_start_leaves_a_conflict_with_both_sides_and_says_why(team_repo):
    """The registered interpreter is gone: the command itself falls back to git's text merge and a conflict,
    so nothing takes ours whole (and the other side's action item with it) without a word."""
    import shlex

    from flowgit.merge.setup import driver_command, driver_problem

    gone = str(team_repo.parent / "old-venv" / "bin" / "python3")
    git(team_repo, "config", "merge.flowgit.driver", driver_command().replace(shlex.quote(sys.executable), gone))
    assert f"`{gone}` does not exist" in (driver_problem(team_repo) or "")
    git(team_repo, "checkout", "-qb", "other")
    write(team_repo, edit(BASE, ("- ask the provider", "- rotate the keys\n- ask the provider")))
    commit(team_repo, "theirs", "2026-11-26T10:00:00Z")
    git(team_repo, "checkout", "-q", "main")
    write(team_repo, edit(BASE, ("We chased two outages this week.", "We chased three outages.")))
    commit(team_repo, "ours", "2026-11-27T10:00:00Z")
    proc = subprocess.run(["git", "merge", "--no-edit", "other"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode != 0 and "cannot start" in proc.stdout + proc.stderr
    text = (team_repo / "CONTINUITY.md").read_text()
    assert "- rotate the keys" in text and "We chased three outages." in text
    assert "CONTINUITY.md" in git(team_repo, "diff", "--name-only", "--diff-filter=U")


@pytest.mark.parametrize("about_it", [True, False])
def test_one_sides_archival_does_not_silently_beat_the_other_sides_session_that_fired_it(team_repo, about_it):
    """Theirs archived cache_first as stale; ours' session recorded an episode about it (its wrap kept it, as a
    pattern that fired is never stale): the merge keeps it and says why. An episode about something else lets
    the archival stand, as before."""
    from tests.merge.fixtures import ep

    base_store = store_bytes(*BASE_EPISODES)
    fresh = ep("serving balances from cache first cut provider calls again today" if about_it
               else "the status page went live on Monday", "s-new", "outcome", agent="agent-z")
    git(team_repo, "checkout", "-qb", "other")
    write(team_repo, edit(BASE, ("! cache_first: serve balances from cache before the provider | 1x\n", ""),
                          ("Focus: outages.", "Focus: theirs.")))
    commit(team_repo, "theirs wrap: archived cache_first", "2026-11-26T10:00:00Z")
    git(team_repo, "checkout", "-q", "main")
    write(team_repo, edit(BASE, ("Focus: outages.", "Focus: ours.")), base_store + store_bytes(fresh))
    commit(team_repo, "ours wrap", "2026-11-27T10:00:00Z")
    proc = subprocess.run(["git", "merge", "--no-edit", "other"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    merged = (team_repo / "CONTINUITY.md").read_text()
    said = proc.stdout + proc.stderr
    if about_it:
        assert "! cache_first: serve balances from cache before the provider | 1x" in merged
        assert f"`cache_first` was archived on one side, but the other side's episodes since the base are " \
               f"about it ({fresh.id})" in said
    else:
        assert "cache_first" not in merged and "cache_first" not in said


def test_a_derived_pattern_merged_onto_a_demotion_gets_the_re_check_note(team_repo, run):
    """One wrap demotes backoff_jitter; the other, not knowing, adds a pattern deriving from it. Neither side
    held the two together, so the merge writes the note the wrap writes on a demotion (Step 5)."""
    demoted, _, _ = CASES["raise_vs_demote"]
    wave = "! wave_shaping: shape retry waves | 1x [<- backoff_jitter]"
    git(team_repo, "checkout", "-qb", "other")
    write(team_repo, edit(BASE, ("! cache_first:", wave + "\n! cache_first:")))
    commit(team_repo, "theirs adds a derived pattern", "2026-11-27T10:00:00Z")
    git(team_repo, "checkout", "-q", "main")
    write(team_repo, demoted)
    commit(team_repo, "ours demotes", "2026-11-26T10:00:00Z")
    proc = subprocess.run(["git", "merge", "--no-edit", "other"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "annotated the patterns that derive from it for re-checking: wave_shaping" in proc.stderr
    merged = (team_repo / "CONTINUITY.md").read_text()
    assert wave + " [derives from backoff_jitter, demoted 2026-11-26: re-check]\n" in merged
    res = run(team_repo, "audit")
    assert res.code == 0, res.out + res.err


def _wrap(run, repo: Path, session: str, plan: dict, episode: str) -> None:
    assert run(repo, "episode", "add", "--session", session, "--type", "finding", episode).code == 0
    (repo.parent / "plan.json").write_text(json.dumps(plan))
    res = run(repo, "wrap", "--session", session, "--plan", str(repo.parent / "plan.json"))
    assert res.code == 0, res.out + res.err


def test_rebase_merges_redoes_a_merge_of_two_wraps_with_the_side_it_merges_in(run, repo):
    """`git rebase --rebase-merges` redoes a merge of two wraps through the driver: git names the side it
    merges in (MERGE_HEAD), and the driver reads that side's store. A pattern archived on our side and fired
    on the other is kept, as the original merge kept it (before, the driver took the last `pick` of the rebase
    for "theirs", a commit of our own line, and the redone merge dropped the pattern without a word)."""
    assert run(repo, "init", "--commit", "--no-hooks").code == 0
    _wrap(run, repo, "s0", {"state": "Zero focus.", "patterns": [
        {"op": "add", "name": "cache_warmup", "text": "cache warmup speeds cold starts"}]},
        "cache warmup speeds cold starts")
    git(repo, "branch", "up")
    git(repo, "checkout", "-qb", "topic")
    _wrap(run, repo, "sT", {"state": "Topic focus on staging."}, "cache warmup sped up cold starts again in staging")
    git(repo, "checkout", "-q", "main")
    _wrap(run, repo, "sM", {"state": "Main focus on the parser.", "patterns": [
        {"op": "archive", "name": "cache_warmup"}]}, "main work on the parser")
    merged = subprocess.run(["git", "merge", "--no-edit", "topic"], cwd=repo, capture_output=True, text=True)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "! cache_warmup:" in (repo / "CONTINUITY.md").read_text()
    git(repo, "checkout", "-q", "up")
    (repo / "u.txt").write_text("u\n")
    git(repo, "add", "u.txt")
    git(repo, "commit", "-qm", "unrelated upstream")
    git(repo, "checkout", "-q", "main")
    rebased = subprocess.run(["git", "rebase", "--rebase-merges", "up"], cwd=repo, capture_output=True, text=True)
    assert rebased.returncode == 0, rebased.stdout + rebased.stderr
    assert "! cache_warmup:" in (repo / "CONTINUITY.md").read_text()
    assert len(git(repo, "rev-list", "--merges", "HEAD").split()) == 1
