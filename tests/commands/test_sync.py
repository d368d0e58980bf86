"""flowgit sync and wrap --push: two clones of one bare remote, integration through the driver, no force."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from flowgit.merge.markers import find_markers
from tests.conftest import committed_repo, git
from tests.merge.cases import CASES
from tests.merge.fixtures import BASE, STORE


def commit(repo: Path, message: str, *extra: str) -> None:
    subprocess.run(["git", "commit", "-qam", message, *extra], cwd=repo, check=True, capture_output=True)


def seeded(tmp_path: Path, run, text: str = BASE, name: str = "seed") -> Path:
    """A repository set up with ``text`` as its continuity file and the fixtures' store, committed."""
    seed = tmp_path / name
    seed.mkdir()
    git(seed, "init", "-q")
    (seed / "CONTINUITY.md").write_text(text)
    (seed / ".flow").mkdir()
    (seed / ".flow" / "episodes.jsonl").write_bytes(STORE)
    assert run(seed, "init", "--commit", "--no-hooks").code == 0
    return seed


def bare_of(tmp_path: Path, seed: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    return bare


@pytest.fixture
def remote(tmp_path: Path, run) -> Path:
    return bare_of(tmp_path, seeded(tmp_path, run))


def clone(tmp_path: Path, remote: Path, name: str, run, *init_args: str) -> Path:
    git(tmp_path, "clone", "-q", str(remote), name)
    path = tmp_path / name
    assert run(path, "init", *init_args).code == 0
    return path


def head(repo: Path, rev: str = "HEAD") -> str:
    return git(repo, "rev-parse", rev).strip()


def both_wrapped(tmp_path: Path, remote: Path, run, case: str) -> tuple[Path, Path]:
    """Clones a and b wrap one base with the two sides of ``CASES[case]``; a syncs first, b not yet."""
    a, b = clone(tmp_path, remote, "a", run), clone(tmp_path, remote, "b", run)
    ours, theirs, _ = CASES[case]
    (a / "CONTINUITY.md").write_text(ours)
    commit(a, "a wraps")
    assert run(a, "sync").code == 0
    (b / "CONTINUITY.md").write_text(theirs)
    commit(b, "b wraps")
    return a, b


def test_two_clones_wrap_the_same_base_and_both_reach_the_remote(tmp_path, remote, run):
    a, b = clone(tmp_path, remote, "a", run), clone(tmp_path, remote, "b", run)
    ours, theirs, _ = CASES["both_add"]
    (a / "CONTINUITY.md").write_text(ours)
    commit(a, "a wraps")
    (b / "CONTINUITY.md").write_text(theirs)
    commit(b, "b wraps")
    first = run(a, "sync", "--json")
    assert first.code == 0, first.err
    second = run(b, "sync")
    assert second.code == 0, second.err
    assert "merged the remote" in second.out and "pushed" in second.out
    assert git(b, "log", "-1", "--format=%s").strip() == "Merge origin/main into main (flowgit sync)"
    again = run(a, "sync")
    assert again.code == 0 and "fast-forwarded" in again.out
    assert head(a) == head(b) == git(remote, "rev-parse", "main").strip()
    text = (a / "CONTINUITY.md").read_text()
    assert "queue_depth" in text and "pool_sizing" in text and find_markers(text) is None
    assert (a / "CONTINUITY.md").read_bytes() == (b / "CONTINUITY.md").read_bytes()


def _b_syncs_by_rebase_after_a(tmp_path, remote, run, case: str):
    """Clone a wraps and syncs; clone b (pull.rebase) wraps the same base and syncs: (b, b's sync result)."""
    _, b = both_wrapped(tmp_path, remote, run, case)
    git(b, "config", "pull.rebase", "true")
    res = run(b, "sync", "--json")
    assert res.code == 0, res.err
    return b, res


def test_rebase_when_the_branch_says_so_keeps_history_linear(tmp_path, remote, run):
    b, res = _b_syncs_by_rebase_after_a(tmp_path, remote, run, "actions_done_vs_redated")
    assert "rebased onto the remote" in json.loads(res.out)["steps"]
    assert git(b, "rev-list", "--merges", "HEAD").strip() == ""
    assert "- ✓ write the retry budget — seen: Nov 26, next: Nov 28" in (b / "CONTINUITY.md").read_text()


def test_rebase_mode_merges_when_both_wraps_replaced_a_section(tmp_path, remote, run):
    """Replayed by a rebase, our wrap would carry the remote's State as a note its one parent holds (an
    append, to the gate); as a merge commit the note is the merge's record. So sync merges, and says so."""
    b, res = _b_syncs_by_rebase_after_a(tmp_path, remote, run, "both_replace_state")
    assert "merged the remote (both wraps replaced a section: merged rather than rebased)" in \
        json.loads(res.out)["steps"]
    assert git(b, "rev-list", "--merges", "HEAD").strip() != ""
    assert "# flowgit merge:" in (b / "CONTINUITY.md").read_text()
    assert run(b, "audit").code == 0
    notes = json.loads(res.out)["notes"]  # the driver's choice is said, as git shows it to a person merging
    assert any("Current State" in note for note in notes), notes


def test_rebase_mode_merges_when_the_gate_refuses_a_replayed_wrap(tmp_path, remote, run):
    """Two agents each raise one pattern 1x -> 2x on their own evidence: both right where they were made. b's
    wrap replayed onto a's would say `Incremented:` of a pattern already at 2x (A201); merged, each wrap is
    judged against its own parent, so sync merges, says so, and the result audits clean."""
    a, b = clone(tmp_path, remote, "a", run), clone(tmp_path, remote, "b", run)

    def wrap(repo: Path, plan: dict) -> None:
        path = repo.parent / f"plan-{repo.name}.json"
        path.write_text(json.dumps(plan))
        res = run(repo, "wrap", "--plan", str(path))
        assert res.code == 0, res.out + res.err

    wrap(a, {"session": "s1", "agent": "agent-a", "state": "Focus: retry budget.",
             "episodes": [{"type": "finding", "content": "the retry budget capped retries per request and kept "
                                                         "provider load flat"}],
             "patterns": [{"op": "add", "name": "retry_cap", "text": "cap retries per request so an outage "
                                                                       "cannot multiply load"}]})
    assert run(a, "sync").code == 0 and run(b, "sync").code == 0
    git(b, "config", "pull.rebase", "true")
    first = json.loads(git(a, "show", "HEAD:.flow/episodes.jsonl").splitlines()[-1])["id"]
    for repo, session, agent, words in ((a, "s2", "agent-a", "during the outage the retry budget capped retries "
                                                             "per request; provider load stayed flat"),
                                        (b, "s3", "agent-b", "load tests confirm the retry budget caps retries "
                                                             "per request and keeps load flat")):
        wrap(repo, {"session": session, "agent": agent,  # (State left alone: no merge note to merge for)
                    "episodes": [{"type": "outcome", "content": words}],
                    "patterns": [{"op": "increment", "name": "retry_cap", "evidence": [first, "#0"]}]})
    assert run(a, "sync").code == 0
    res = run(b, "sync", "--json")
    assert res.code == 0, res.out + res.err
    assert any("merged rather than rebased" in step for step in json.loads(res.out)["steps"])
    assert git(b, "rev-list", "--merges", "HEAD").strip() != ""
    assert head(b) == git(remote, "rev-parse", "main").strip()
    assert run(b, "audit").code == 0


def test_a_sync_killed_while_it_merged_is_put_back_before_anything_commits_its_files(tmp_path, remote, run):
    """kill -9 in the middle of the merge leaves the other clone's episodes in our store, uncommitted, and
    the sync's mark: neither a sync nor a wrap commits them as ours; once the branch is put back as the
    refusal says, sync goes on (and a mark with nothing left behind is cleared without a word)."""
    from flowgit.merge.sync import PENDING

    a, b = clone(tmp_path, remote, "a", run), clone(tmp_path, remote, "b", run)
    assert run(a, "episode", "add", "--type", "finding", "--session", "sa", "a's fact about retries").code == 0
    git(a, "add", "-A")
    commit(a, "a records")
    assert run(a, "sync").code == 0
    started = head(b)
    git(b, "fetch", "-q")
    theirs = git(b, "show", "origin/main:.flow/episodes.jsonl")
    (b / ".flow" / "episodes.jsonl").write_text(theirs)  # what the driver had written when the kill came
    mark = Path(git(b, "rev-parse", "--git-dir").strip())
    mark = (mark if mark.is_absolute() else b / mark) / PENDING
    mark.write_text(started + "\n")
    held = (b / ".flow" / "episodes.jsonl").read_bytes()
    for argv in (("sync",), ("wrap", "--plan", "-"), ("wrap",),  # a hand edit's wrap: no gate verdict on it
                 ("episode", "add", "--type", "decision", "--session", "sb", "b ships on Friday")):
        res = run(b, *argv, stdin='{"session": "sb", "state": "Focus: b."}')
        assert res.code == 2 and "stopped while it merged" in res.err, (argv, res.err)
        assert "(.flow/episodes.jsonl)" in res.err and "git restore --staged --worktree" in res.err
        assert head(b) == started and mark.exists()
        assert (b / ".flow" / "episodes.jsonl").read_bytes() == held  # the fix would drop what it appended
    status = run(b, "status", "--json")  # what a person and an agent read first says so (it writes nothing)
    said = json.loads(status.out)["interrupted_sync"]
    assert status.code == 0 and "stopped while it merged" in said["message"] and "git restore" in said["fix"]
    assert "An interrupted sync left a half-made merge" in run(b, "status").out
    assert "an interrupted `flowgit sync`" in run(b, "prime").out and mark.exists()
    git(b, "restore", "--staged", "--worktree", "--", ".flow/episodes.jsonl")  # as the refusal says
    assert json.loads(run(b, "status", "--json").out)["interrupted_sync"] is None
    res = run(b, "sync")
    assert res.code == 0, res.err
    assert not mark.exists() and head(b) == git(remote, "rev-parse", "main").strip()
    mark.write_text(head(b) + "\n")  # killed before it wrote anything: nothing to put back
    assert run(b, "sync").code == 0 and not mark.exists()
    mark.write_text("0" * 40 + "\n")  # a clean tree, whatever HEAD is (reset, switched): nothing to put back
    assert run(b, "sync").code == 0 and not mark.exists()


def test_a_sync_killed_after_its_rebase_names_the_commits_it_started_from(tmp_path, remote, run):
    """Killed between its rebase and its gate: the tree is clean, HEAD holds unjudged copies of our commits.
    The next sync names where they were (a clean tree alone no longer clears the mark); put back, it syncs."""
    from flowgit.merge.sync import PENDING

    a, b = clone(tmp_path, remote, "a", run), clone(tmp_path, remote, "b", run)
    (a / "a.txt").write_text("a\n")
    git(a, "add", "a.txt")
    commit(a, "a's work")
    assert run(a, "sync").code == 0
    (b / "b.txt").write_text("b\n")
    git(b, "add", "b.txt")
    commit(b, "b's work")
    started = head(b)
    mark = b / ".git" / PENDING
    mark.write_text(started + "\n")
    git(b, "fetch", "-q")
    git(b, "rebase", "-q", "origin/main")  # what the killed sync had done
    res = run(b, "sync")
    assert res.code == 2 and "stopped after it rebased" in res.err and f"git reset --keep {started[:12]}" in res.err
    git(b, "reset", "-q", "--keep", started)
    res = run(b, "sync")
    assert res.code == 0, res.err
    assert not mark.exists() and head(b) == git(remote, "rev-parse", "main").strip()


def test_a_real_conflict_aborts_and_leaves_the_branch_as_it_was(tmp_path, remote, run, monkeypatch):
    a, b = clone(tmp_path, remote, "a", run), clone(tmp_path, remote, "b", run)
    ours, _, _ = CASES["protected_conflict"]
    (a / "CONTINUITY.md").write_text(ours)
    monkeypatch.setenv("FLOWGIT_OVERRIDE", "reworded the Foundation on purpose")
    commit(a, "a rewords Foundation")  # the hooks record the override as a trailer; sync honours it
    monkeypatch.delenv("FLOWGIT_OVERRIDE")
    assert "Flow-Override: reworded" in git(a, "log", "-1", "--format=%B")
    res = run(a, "sync")
    assert res.code == 0, res.err
    (b / "CONTINUITY.md").write_text(BASE.replace("before the pattern.\n", "before the pattern.\nCite it.\n"))
    monkeypatch.setenv("FLOWGIT_OVERRIDE", "b adds a Foundation line on purpose")
    commit(b, "b adds to Foundation")  # Foundation changes only with an override (recorded as a trailer)
    monkeypatch.delenv("FLOWGIT_OVERRIDE")
    before = head(b)
    res = run(b, "sync")
    assert res.code == 1 and "conflicted in CONTINUITY.md" in res.err and "aborted" in res.err
    assert "CONFLICT in Foundation" in res.err
    assert "`git pull --no-rebase`" in res.err  # (a bare `git pull` stops on divergent branches in current git)
    assert head(b) == before and git(b, "status", "--porcelain", "--untracked-files=no") == ""
    assert find_markers((b / "CONTINUITY.md").read_text()) is None
    assert git(remote, "rev-parse", "main").strip() == head(a)


UNGROUNDED = BASE.replace("! cache_first: serve balances from cache before the provider | 1x",
                          "!! cache_first: serve balances from cache before the provider | 2x (DATA)")


def test_the_gate_refuses_what_would_be_pushed(tmp_path, remote, run):
    """A local commit made with --no-verify is caught by sync's own gate before the push."""
    b = clone(tmp_path, remote, "b", run)
    (b / "CONTINUITY.md").write_text(UNGROUNDED)
    commit(b, "ungrounded", "--no-verify")
    before, remote_before = head(b), git(remote, "rev-parse", "main")
    res = run(b, "sync")
    assert res.code == 1 and "G101" in res.err and "nothing was pushed" in res.err
    assert head(b) == before and git(remote, "rev-parse", "main") == remote_before
    assert "\n    fix: " in res.err  # each finding with its fix, as the audit gives it
    assert "rewrite that commit (`git rebase -i` from its parent" in res.err  # a commit on top takes none back
    assert "gate refuses the integrated result" not in res.err  # nothing was integrated: the remote had nothing


def test_a_bad_commit_is_not_carried_into_a_merge_either(tmp_path, remote, run):
    a, b = clone(tmp_path, remote, "a", run), clone(tmp_path, remote, "b", run)
    (a / "CONTINUITY.md").write_text(CASES["both_add"][0])
    commit(a, "a wraps")
    assert run(a, "sync").code == 0
    (b / "CONTINUITY.md").write_text(UNGROUNDED)
    commit(b, "ungrounded", "--no-verify")
    before = head(b)
    res = run(b, "sync")
    assert res.code == 1 and "G101" in res.err and "nothing was pushed" in res.err
    assert head(b) == before and git(b, "status", "--porcelain", "--untracked-files=no") == ""
    assert git(remote, "rev-parse", "main").strip() == head(a)


def test_a_rejected_push_is_integrated_again_and_nothing_is_forced(tmp_path, remote, run):
    a, b = clone(tmp_path, remote, "a", run), clone(tmp_path, remote, "b", run)
    ours, theirs, _ = CASES["both_add"]
    (b / "CONTINUITY.md").write_text(theirs)
    commit(b, "b wraps")
    # the first time a pushes, b pushes first (from a pre-push hook), so a's push is rejected
    hook = a / ".git" / "hooks" / "pre-push"
    flag = tmp_path / "raced"
    hook.write_text(f"#!/bin/sh\n[ -e {flag} ] && exit 0\ntouch {flag}\ncd {b} && git push -q origin main\n")
    hook.chmod(0o755)
    (a / "CONTINUITY.md").write_text(ours)
    commit(a, "a wraps")
    b_commit = head(b)
    res = run(a, "sync", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["attempts"] == 2 and any("push rejected" in s for s in data["steps"])
    assert git(remote, "merge-base", "--is-ancestor", b_commit, "main") == ""  # b's commit was not overwritten
    text = (a / "CONTINUITY.md").read_text()
    assert "queue_depth" in text and "pool_sizing" in text


def test_sync_refuses_to_start_on_uncommitted_changes_or_mid_merge(tmp_path, remote, run):
    a = clone(tmp_path, remote, "a", run)
    (a / "CONTINUITY.md").write_text(BASE + "\nmore\n")
    res = run(a, "sync")
    assert res.code == 2 and "uncommitted changes: CONTINUITY.md" in res.err
    assert "any other file with `git commit`" in res.err  # (a README edited is no wrap's to commit)
    git(a, "checkout", "--", "CONTINUITY.md")
    (Path(git(a, "rev-parse", "--absolute-git-dir").strip()) / "MERGE_HEAD").write_text(head(a) + "\n")
    res = run(a, "sync")
    assert res.code == 2 and "a merge is in progress" in res.err


def test_work_inside_a_submodule_does_not_stop_a_sync_but_a_moved_submodule_does(tmp_path, remote, run):
    """An edit in a submodule's own tree is no merge's to touch (and `git stash` cannot take it): sync goes on.
    A submodule moved to another commit is the superproject's change: refused, named, as any edit is."""
    lib = committed_repo(tmp_path / "lib", "l.txt", "l\n", "lib")
    a = clone(tmp_path, remote, "a", run)
    git(a, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(a, "commit", "-qm", "add the submodule")
    (a / "lib" / "l.txt").write_text("work in progress\n")
    res = run(a, "sync")
    assert res.code == 0, res.err
    assert head(a) == head(a, "origin/main") and (a / "lib" / "l.txt").read_text() == "work in progress\n"
    git(a / "lib", "commit", "-qam", "moved on")
    res = run(a, "sync")
    assert res.code == 2 and "uncommitted changes: lib" in res.err


def test_sync_over_a_stale_index_lock_refuses_before_it_merges_and_names_the_lock(tmp_path, remote, run):
    """A merge meeting git's lock fails and read as a conflict "as it was", leaving MERGE_HEAD behind."""
    a, b = clone(tmp_path, remote, "a", run), clone(tmp_path, remote, "b", run)
    assert run(a, "episode", "add", "--type", "finding", "--session", "sa", "a's fact about retries").code == 0
    git(a, "add", "-A")
    commit(a, "a records")
    assert run(a, "sync").code == 0
    gdir = Path(git(b, "rev-parse", "--absolute-git-dir").strip())
    (gdir / "index.lock").write_text("")
    before = head(b)
    res = run(b, "sync")
    assert res.code == 2 and ".git/index.lock" in res.err and "run `flowgit sync` again" in res.err, res.err
    assert head(b) == before and not (gdir / "MERGE_HEAD").exists()
    (gdir / "index.lock").unlink()
    assert run(b, "sync").code == 0 and head(b) == git(remote, "rev-parse", "main").strip()


def test_wrap_push_wraps_then_syncs(tmp_path, remote, run):
    a = clone(tmp_path, remote, "a", run)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"session": "sess-push", "state": "Focus: pushing wraps.",
                                "episodes": [{"type": "finding", "content": "sync pushes the wrap to the remote"}]}))
    res = run(a, "wrap", "--plan", str(plan), "--date", "2026-11-28", "--push", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["wrap"]["committed"] and data["sync"]["pushed"]
    assert git(remote, "rev-parse", "main").strip() == head(a) == data["wrap"]["committed"]


def test_sync_without_a_remote_is_a_clear_error(run, repo):
    (repo / "x").write_text("x")
    git(repo, "add", "x")
    git(repo, "commit", "-qm", "x")
    res = run(repo, "sync")
    assert res.code == 2 and "no remote" in res.err


def test_an_interrupted_integration_is_undone(tmp_path, remote, run, monkeypatch):
    a, b = both_wrapped(tmp_path, remote, run, "both_add")
    before = head(b)
    from flowgit.merge import sync

    def interrupted(*args, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(sync, "_gate", interrupted)  # after the merge landed, before the push
    assert run(b, "sync").code == 130
    assert head(b) == before and git(b, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_new_branch_is_gated_and_pushed_with_its_upstream_set(tmp_path, remote, run):
    a = clone(tmp_path, remote, "a", run)
    git(a, "checkout", "-qb", "topic")
    (a / "CONTINUITY.md").write_text(UNGROUNDED)
    commit(a, "ungrounded", "--no-verify")
    res = run(a, "sync")
    assert res.code == 1 and "G101" in res.err
    git(a, "reset", "-q", "--hard", "HEAD~1")
    (a / "CONTINUITY.md").write_text(CASES["both_add"][0])
    commit(a, "a wraps on a topic branch")
    res = run(a, "sync")
    assert res.code == 0, res.err
    assert git(remote, "rev-parse", "topic").strip() == head(a)
    assert git(a, "config", "branch.topic.remote").strip() == "origin"


def test_sync_in_a_clone_that_never_ran_init_refuses_before_fetching(tmp_path, remote, run):
    """Without the driver two wraps of one base conflict line by line: say so up front, touch nothing."""
    a = clone(tmp_path, remote, "a", run)
    ours, theirs, _ = CASES["both_add"]
    (a / "CONTINUITY.md").write_text(ours)
    commit(a, "a wraps")
    assert run(a, "sync").code == 0
    git(tmp_path, "clone", "-q", str(remote), "fresh")
    fresh = tmp_path / "fresh"
    (fresh / "CONTINUITY.md").write_text(theirs)
    commit(fresh, "fresh wraps")
    before = (head(fresh), git(fresh, "status", "--porcelain"), git(fresh, "for-each-ref"))
    res = run(fresh, "sync", "--json")
    assert res.code == 2 and "Traceback" not in res.err
    error = json.loads(res.out)["error"]
    assert "merge driver is not registered in this clone" in error["message"] and "flowgit init" in error["fix"]
    assert (head(fresh), git(fresh, "status", "--porcelain"), git(fresh, "for-each-ref")) == before
    assert run(fresh, "init").code == 0 and run(fresh, "sync").code == 0  # the fix it names works


def test_sync_waits_for_a_wrap_holding_the_lock_and_never_resets_under_it(tmp_path, remote, run, monkeypatch):
    """Integration, gate and push run under the repository lock: a writer that holds it is waited for."""
    import sys
    import time

    a = clone(tmp_path, remote, "a", run)
    marker = tmp_path / "held"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom flowgit.lock import RepoLock\n"
        "with RepoLock(sys.argv[1], 'flowgit wrap'):\n    open(sys.argv[2], 'w').write('x')\n    time.sleep(60)\n"),
        str(a / ".git"), str(marker)])
    try:
        for _ in range(400):
            if marker.exists():
                break
            time.sleep(0.025)
        monkeypatch.setenv("FLOWGIT_LOCK_WAIT", "0.5")
        res = run(a, "sync", "--json")
        assert res.code == 2 and "the repository is locked by" in json.loads(res.out)["error"]["message"]
    finally:
        holder.kill()
        holder.wait()
    assert run(a, "sync").code == 0  # released: it syncs


def test_a_wrap_in_a_clone_that_never_ran_init_warns_before_it_is_shared(tmp_path, remote, run):
    git(tmp_path, "clone", "-q", str(remote), "fresh")
    fresh = tmp_path / "fresh"
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"session": "s-fresh", "state": "Focus: the fresh clone.",
                                "episodes": [{"type": "finding", "content": "a fresh clone wrapped"}]}))
    res = run(fresh, "wrap", "--plan", str(plan), "--json")
    assert res.code == 0, res.err
    assert any("merge driver is not registered in this clone" in w for w in json.loads(res.out)["warnings"])


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGINT"])
def test_sync_stopped_while_it_merges_puts_the_branch_back_and_leaves_nothing_staged(tmp_path, remote, run,
                                                                                      signal_name):
    """SIGTERM ended the process mid-merge (Python's default), and a Ctrl-C that stopped git before it wrote
    MERGE_HEAD left the remote's files staged: the branch, the index and the tree come back as they were."""
    import os
    import signal
    import sys
    import time

    a, b = clone(tmp_path, remote, "a", run), clone(tmp_path, remote, "b", run)
    (b / "b.txt").write_text("b\n")
    git(b, "add", "b.txt")
    commit(b, "b work")
    assert run(b, "sync").code == 0
    (a / "a.txt").write_text("a\n")
    git(a, "add", "a.txt")
    commit(a, "a work")
    original = head(a)
    hook = a / ".git" / "hooks" / "pre-merge-commit.flowgit-chained"  # the user's own slow hook, chained
    hook.write_text("#!/bin/sh\nsleep 3\n")
    hook.chmod(0o755)
    # Ctrl-C as a terminal sends it, even where the suite itself runs in the background (SIGINT ignored there)
    proc = subprocess.Popen([sys.executable, "-m", "flowgit", "sync"], cwd=a, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(1.5)  # inside the merge: its hook sleeps
    os.killpg(proc.pid, getattr(signal, signal_name)) if signal_name == "SIGINT" else proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    time.sleep(0.5)
    assert head(a) == original and git(a, "status", "--porcelain", "--untracked-files=no") == ""
    assert not (a / ".git" / "MERGE_HEAD").exists() and not (a / ".git" / "index.lock").exists()
    hook.unlink()
    assert run(a, "sync").code == 0  # and it syncs afterwards


def test_sync_names_a_running_or_interrupted_wrap_instead_of_calling_its_files_uncommitted(tmp_path, remote, run):
    import sys
    import time

    a = clone(tmp_path, remote, "a", run)
    (a / ".git" / "flowgit-wrap.journal").write_text("{}")
    (a / "CONTINUITY.md").write_text((a / "CONTINUITY.md").read_text() + "\nhalf-written\n")
    marker = tmp_path / "held"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom flowgit.lock import RepoLock\n"
        "with RepoLock(sys.argv[1], 'flowgit wrap', pending_ok=True):\n"
        "    open(sys.argv[2], 'w').write('x')\n    time.sleep(60)\n"), str(a / ".git"), str(marker)])
    try:
        for _ in range(400):
            if marker.exists():
                break
            time.sleep(0.025)
        res = run(a, "sync")
        assert res.code == 2 and "a wrap is running now" in res.err and "uncommitted changes" not in res.err
    finally:
        holder.kill()
        holder.wait()
    res = run(a, "sync")
    assert res.code == 2 and "an interrupted wrap awaits recovery" in res.err


def test_wrap_push_that_cannot_sync_still_reports_the_commit_it_made(tmp_path, run):
    repo = seeded(tmp_path, run, name="solo")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"session": "s-solo", "state": "Focus: pushing nowhere.",
                                "episodes": [{"type": "finding", "content": "a wrap with no remote"}]}))
    res = run(repo, "wrap", "--plan", str(plan), "--push", "--json")
    assert res.code == 5, res.err  # not 2: that says nothing was written, and an agent would wrap again
    data = json.loads(res.out)
    assert data["wrap"]["committed"] == head(repo)  # committed: said so, not hidden behind the sync error
    assert data["sync"]["ok"] is False and data["sync"]["started"] is False
    assert "no remote" in data["sync"]["error"]["message"]
    plan.write_text(json.dumps({"session": "s-solo", "state": "Focus: pushing nowhere, again."}))
    human = run(repo, "wrap", "--plan", str(plan), "--push")
    assert human.code == 5 and "sync failed: this repository has no remote" in human.out + human.err
    assert f"the wrap is committed ({head(repo)[:12]}) and stands; the sync could not start" in human.out


def test_sync_judges_what_it_pushes_under_the_committed_configuration_not_an_untracked_one(tmp_path, remote, run):
    """sync's gate is the audit over the commits it pushes: a `.flowgit.toml` in the working tree, never
    committed, switches no rule off (it did, and a hookless commit the audit reports went out)."""
    a = clone(tmp_path, remote, "a", run, "--no-hooks")
    text = (a / "CONTINUITY.md").read_text()
    assert "## Developing Knowledge\n" in text
    (a / "CONTINUITY.md").write_text(text.replace("## Developing Knowledge\n", "## Developing Knowledge\n"
                                                  "!! fresh_claim: caches never go stale | 2x (CORE)\n", 1))
    commit(a, "an ungrounded 2x", "--no-verify")
    (a / ".flowgit.toml").write_text('[rules]\nnew-pattern = "off"\nungrounded-graduation = "off"\nevidence = "off"\n')
    before = head(a)
    res = run(a, "sync", "--json")
    assert res.code == 1, res.out
    assert "G204" in json.loads(res.out)["error"]["message"] and head(a) == before
    assert git(remote, "rev-parse", "main").strip() != before  # nothing went out


def test_two_raises_of_one_pattern_one_reworded_as_it_rose_merge_through_the_driver(tmp_path, run):
    """Both raises were valid commits; the driver judged its own union with a rule the gate no longer used
    (G209 against the plain raise) and sync failed on a merge the hook and the audit accept. The driver now
    reaches its verdict with the gate's own merge engine."""
    remote = bare_of(tmp_path, seeded(tmp_path, run, BASE.replace(
        "## Developing Knowledge\n", "## Developing Knowledge\n"
        "! cache_warmup: warm the cache before switching traffic to a new node | 1x\n", 1)))
    c1, c2 = clone(tmp_path, remote, "c1", run), clone(tmp_path, remote, "c2", run)

    def raise_in(repo: Path, facts: list[tuple[str, str, str]], words: str) -> None:
        ids = []
        for s, a, text in facts:  # each recorded in a commit of its own, before the raise cites it
            ids.append(json.loads(run(repo, "episode", "add", "--json", "--type", "finding", "--session", s,
                                      "--agent", a, text).out)["added"][0]["id"])
            git(repo, "add", "-A")
            commit(repo, f"record {ids[-1]}")
        text = (repo / "CONTINUITY.md").read_text()
        old = next(ln for ln in text.splitlines() if ln.startswith("! cache_warmup:"))
        (repo / "CONTINUITY.md").write_text(text.replace(old, f"!! cache_warmup: {words} | 2x (PERF) "
                                                              f"[evidence: {', '.join(ids)}]"))
        git(repo, "add", "-A")
        commit(repo, "raise cache_warmup")

    raise_in(c1, [("s1", "a1", "cold cache after switching traffic to a new node caused a latency spike"),
                  ("s2", "a2", "warming the cache before switching traffic removed the latency spike")],
             "warm the cache before switching traffic to a new node")
    raise_in(c2, [("s3", "a3", "node switch with a cold cache doubled p99 latency"),
                  ("s4", "a4", "cache warmup script before traffic switch kept p99 flat on the new node")],
             "warm the cache before switching traffic to a new node and every replica")
    assert run(c2, "sync").code == 0
    res = run(c1, "sync")
    assert res.code == 0, res.out + res.err
    assert run(c1, "audit").code == 0


def _two_commits(repo: Path) -> tuple[str, str]:
    (repo / "notes.txt").write_text("notes\n")
    (repo / "code.txt").write_text("v1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first", "--no-verify")
    original = git(repo, "rev-parse", "HEAD").strip()
    (repo / "code.txt").write_text("v2 (what the integration brought)\n")
    git(repo, "commit", "-qam", "integrated", "--no-verify")
    return original, git(repo, "rev-parse", "HEAD").strip()


def test_putting_the_branch_back_keeps_an_edit_made_while_sync_ran(repo):
    """The lock holds off flowgit's writers, not a person editing a file meanwhile: sync's rollback moves the
    branch back and leaves that edit where it is (a `reset --hard` wiped it)."""
    from flowgit.merge.sync import _back_to

    original, integrated = _two_commits(repo)
    (repo / "notes.txt").write_text("notes\nan edit made while sync ran\n")
    _back_to(repo, original, integrated)
    assert git(repo, "rev-parse", "HEAD").strip() == original
    assert (repo / "code.txt").read_text() == "v1\n"
    assert (repo / "notes.txt").read_text() == "notes\nan edit made while sync ran\n"


def test_putting_the_branch_back_refuses_rather_than_overwrite_an_edit(repo):
    from flowgit.merge.sync import SyncFailed, _back_to

    original, integrated = _two_commits(repo)
    (repo / "code.txt").write_text("v2, edited by hand meanwhile\n")
    with pytest.raises(SyncFailed) as refused:
        _back_to(repo, original, integrated)
    assert "git stash" in refused.value.fix and original[:12] in refused.value.fix
    assert git(repo, "rev-parse", "HEAD").strip() == integrated
    assert (repo / "code.txt").read_text() == "v2, edited by hand meanwhile\n"


def test_wrap_push_with_nothing_to_wrap_and_no_remote_is_syncs_usage_error(tmp_path, run):
    """Exit 5 says a wrap was committed: with nothing to wrap, the sync's own refusal (2) is the answer."""
    repo = seeded(tmp_path, run, name="solo-idle")
    before = head(repo)
    res = run(repo, "wrap", "--session", "s-idle", "--push")
    assert res.code == 2 and head(repo) == before, (res.out, res.err)
    assert "no remote" in res.out + res.err


def test_sync_refuses_a_registered_driver_whose_program_is_gone(tmp_path, remote, run):
    """The interpreter `flowgit init` registered was removed (a rebuilt virtualenv): git could not start the
    driver and would leave ours whole. Sync says so before fetching, and `flowgit init` mends it."""
    a = clone(tmp_path, remote, "a", run)
    gone = str(tmp_path / "old-venv" / "bin" / "python3")
    git(a, "config", "merge.flowgit.driver", f"{gone} -m flowgit.commands.merge_driver %O %A %B %P")
    res = run(a, "sync")
    assert res.code == 2 and f"`{gone}` does not exist" in res.err and "flowgit init" in res.err
    assert run(a, "init").code == 0 and "does not exist" not in run(a, "sync").err


def test_a_rename_on_one_clone_and_a_graduation_on_the_other_merge_and_pass(tmp_path, remote, run):
    """Alice renames retry_budget (same claim, same evidence) and records an episode; Bob graduates it under
    the old name on a third episode from another agent. The driver writes the renamed pattern graduated; the
    verdict against Alice's parent read every line of the interleaved store as appended together (one source,
    G103) and refused the merge. Against a parent, a merge brings the episodes that parent lacks."""
    import json as _json

    a, b = clone(tmp_path, remote, "a", run), clone(tmp_path, remote, "b", run)
    (a / "CONTINUITY.md").write_text((a / "CONTINUITY.md").read_text().replace("!! retry_budget:", "!! retry_cap:"))
    (tmp_path / "alice.json").write_text(_json.dumps({"session": "sa1", "agent": "alice", "state": "A: renamed.",
                                                      "episodes": [{"type": "observation",
                                                                    "content": "renamed the retry pattern"}]}))
    assert run(a, "wrap", "--plan", str(tmp_path / "alice.json")).code == 0
    assert run(a, "sync").code == 0
    (tmp_path / "bob.json").write_text(_json.dumps({"session": "sb1", "agent": "bob", "state": "B: graduated.",
                                                    "episodes": [{"type": "outcome", "content": "retry budget per "
                                                                  "request held provider load flat in failover"}],
                                                    "patterns": [{"op": "graduate", "name": "retry_budget",
                                                                  "evidence": ["#0"]}]}))
    graduated = run(b, "wrap", "--plan", str(tmp_path / "bob.json"), "--json")
    assert graduated.code == 0, graduated.out + graduated.err
    synced = run(b, "sync")
    assert synced.code == 0, synced.out + synced.err
    merged = (b / "CONTINUITY.md").read_text()
    assert "!! retry_cap:" in merged and "| 3x" in merged.split("!! retry_cap:")[1].split("\n")[0], merged
    assert run(b, "audit").code == 0


def test_a_stash_popped_after_a_sync_keeps_the_citation_of_an_episode_no_commit_holds(tmp_path, run):
    """Bob records an episode and raises a pattern by hand citing it; `flowgit sync` asks him to stash, and the
    pop merges his line with Alice's raise of the same pattern. No commit holds Bob's side (a stash sets no
    merge head), so his episode cannot be looked up: the driver dropped his citation as evidence that "does not
    hold". Both sides' citations are kept, and the gate judges them when Bob commits."""
    import json as _json

    remote = bare_of(tmp_path, seeded(tmp_path, run, text=BASE.replace(
        "! cache_first: serve balances from cache before the provider | 1x\n", "")))
    a, b = clone(tmp_path, remote, "a", run), clone(tmp_path, remote, "b", run)

    def wrap_a(plan: dict) -> None:
        (tmp_path / "a.json").write_text(_json.dumps({"agent": "alice", **plan}))
        res = run(a, "wrap", "--plan", str(tmp_path / "a.json"))
        assert res.code == 0, res.out + res.err

    wrap_a({"session": "sa1", "state": "Focus: retries.", "episodes": [
        {"type": "finding", "content": "slow requests multiplied provider calls during the outage"}],
        "patterns": [{"op": "add", "name": "call_cap", "text": "cap provider calls per request in an outage"}]})
    first = _json.loads(run(a, "episode", "list", "--json").out)[-1]["id"]
    assert run(a, "sync").code == 0 and run(b, "sync").code == 0
    wrap_a({"session": "sa2", "state": "A: raised.", "episodes": [
        {"type": "outcome", "content": "capping provider calls per request kept the outage small"}],
        "patterns": [{"op": "increment", "name": "call_cap", "evidence": ["#0", first]}]})
    assert run(a, "sync").code == 0
    added = run(b, "episode", "add", "--type", "outcome", "--session", "sb1", "--agent", "bob", "--json",
                "capped provider calls per request held during failover")
    mine = _json.loads(added.out)["added"][0]["id"]
    text = (b / "CONTINUITY.md").read_text()
    (b / "CONTINUITY.md").write_text(text.replace(
        "! call_cap: cap provider calls per request in an outage | 1x",
        f"!! call_cap: cap provider calls per request in an outage | 2x (RELIABILITY) [evidence: {first}, {mine}]"))
    git(b, "stash", "-q")
    assert run(b, "sync").code == 0
    subprocess.run(["git", "stash", "pop"], cwd=b, capture_output=True)
    line = next(ln for ln in (b / "CONTINUITY.md").read_text().splitlines() if "call_cap:" in ln)
    assert mine in line and first in line, line
    assert mine.encode() in (b / ".flow" / "episodes.jsonl").read_bytes()


def test_wraps_a_plain_pull_rebased_are_undone_not_repaired_and_orig_head_survives_a_refused_sync(
        tmp_path, remote, run):
    """With pull.rebase=true a plain `git pull` replays b's wrap onto a's: the merge driver's note of a's State
    lands in an ordinary commit, which the audit refuses. The way out is to undo the pull, not to repair the
    commit: sync and status name the commit the branch stood at before the rebase, the refused sync leaves
    ORIG_HEAD where the pull put it, and after the undo sync merges and pushes."""
    a, b = both_wrapped(tmp_path, remote, run, "both_replace_state")
    before = head(b)
    git(b, "config", "pull.rebase", "true")
    git(b, "pull", "-q")
    assert git(b, "rev-list", "--merges", "HEAD").strip() == "" and head(b) != before  # replayed, linear
    orig_head = head(b, "ORIG_HEAD")
    refused = run(b, "sync")
    assert refused.code == 1 and f"git reset --keep {before[:12]}" in refused.out + refused.err
    assert head(b, "ORIG_HEAD") == orig_head  # the user's own way back still works
    status = json.loads(run(b, "status", "--json").out)["unpushed_failing"]
    assert status["failing"] and f"git reset --keep {before[:12]}" in status["fix"]
    git(b, "reset", "-q", "--keep", before)
    synced = run(b, "sync")
    assert synced.code == 0, synced.err
    assert "(merge)" in synced.out and "(rebase)" not in synced.out  # what was done, not what git is set to do
    assert head(b) == git(remote, "rev-parse", "main").strip() and run(b, "audit").code == 0


def test_a_merge_the_gate_refuses_is_said_as_the_gate_s_finding_with_the_merge_s_override_as_the_fix(
        tmp_path, remote, run, monkeypatch):
    """The remote raised a budget under its own override; b wrapped meanwhile. The merge has no conflict, but
    the result loosens b's configuration (G801: a merge needs its own override). sync said "conflicted in the
    tree", cut the finding's own line and said to fix conflicts; it now names the gate, the finding and the
    override that lets the merge through, which then syncs."""
    a, b = clone(tmp_path, remote, "a", run), clone(tmp_path, remote, "b", run)
    (a / ".flowgit.toml").write_text("[budgets]\nstate_chars_max = 5000\n")
    git(a, "add", ".flowgit.toml")
    subprocess.run(["git", "commit", "-qm", "more room for State"], cwd=a, check=True, capture_output=True,
                   env={**os.environ, "FLOWGIT_OVERRIDE": "G801: more room for State"})
    assert run(a, "sync").code == 0
    (b / "notes.txt").write_text("b's own work\n")
    git(b, "add", "notes.txt")
    commit(b, "b works")
    before = head(b)
    res = run(b, "sync", "--json")
    assert res.code == 1 and head(b) == before, res.out
    error = json.loads(res.out)["error"]
    assert "the gate refused the merge commit" in error["message"] and "conflict" not in error["fix"]
    assert "G801 error [config]" in error["message"] and "loosens budgets.state_chars_max" in error["message"]
    assert 'FLOWGIT_OVERRIDE="G801: why" flowgit sync' in error["fix"]
    monkeypatch.setenv("FLOWGIT_OVERRIDE", "G801: the team raised the budget")
    assert run(b, "sync").code == 0
    assert "Flow-Override: G801: the team raised the budget" in git(b, "log", "-1", "--format=%B")
