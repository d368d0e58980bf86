"""The wrap transaction under faults, kills, races and odd repositories: exact post-states, never a guess."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import git
from tests.wrap.test_wrap import A2, graduate_plan, snapshot, wrap_repo  # noqa: F401  (fixture)

JOURNAL = Path(".git") / "flowgit-wrap.journal"


def full_state(repo: Path) -> dict:
    """snapshot() plus the exact bytes of the file and the store, and the refs."""
    return {**snapshot(repo), "continuity": (repo / "CONTINUITY.md").read_bytes(),
            "store": (repo / ".flow" / "episodes.jsonl").read_bytes(),
            "refs": git(repo, "for-each-ref", "--format=%(refname) %(objectname)")}


def flowgit(repo: Path, *args: str, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flowgit", *args], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, **kw)


def write_plan(tmp: Path, name: str = "plan.json", **extra) -> Path:
    plan = graduate_plan([A2.id], episodes=[{"type": "finding", "content": "retry budget held in the third outage"}],
                         state="Focus: the transaction", **extra)
    path = tmp / name
    path.write_text(json.dumps(plan))
    return path


def start_paused(repo: Path, tmp: Path, point: str, seconds: float | None = None) -> subprocess.Popen:
    """A wrap started and paused at ``point`` (for ``seconds``, then it goes on; by default until killed)."""
    marker = tmp / f"paused-{point}"
    env = {**os.environ, "FLOWGIT_PAUSE": point, "FLOWGIT_PAUSE_FILE": str(marker),
           **({"FLOWGIT_PAUSE_SECONDS": str(seconds)} if seconds is not None else {})}
    proc = subprocess.Popen([sys.executable, "-m", "flowgit", "wrap", "--plan", str(write_plan(tmp)),
                             "--date", "2026-11-26"], cwd=repo, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    for _ in range(600):
        if marker.exists() and marker.read_text():
            return proc
        time.sleep(0.02)
    proc.kill()
    raise AssertionError(f"never reached {point}: {proc.communicate()}")


def kill9(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def install_hook(repo: Path, body: str) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\n" + body)
    hook.chmod(0o755)


# ------------------------------------------------------------------ kill -9 at every step
def test_kill9_after_the_commit_keeps_the_wraps_commit(wrap_repo, tmp_path):
    base = git(wrap_repo, "rev-parse", "HEAD").strip()
    kill9(start_paused(wrap_repo, tmp_path, "7-committed"))
    committed = full_state(wrap_repo)
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 0 and "had already committed" in res.stdout
    assert git(wrap_repo, "rev-parse", "HEAD~1").strip() == base and full_state(wrap_repo) == committed
    assert not list((wrap_repo / ".git").glob("flowgit-wrap*"))


def test_a_failure_after_the_commit_keeps_the_commit(wrap_repo, tmp_path, run, monkeypatch):
    base = git(wrap_repo, "rev-parse", "HEAD").strip()
    monkeypatch.setenv("FLOWGIT_FAULT", "7-committed")
    with pytest.raises(Exception, match="injected failure"):
        run(wrap_repo, "wrap", "--plan", str(write_plan(tmp_path)), "--date", "2026-11-26")
    assert git(wrap_repo, "rev-parse", "HEAD~1").strip() == base
    assert git(wrap_repo, "status", "--porcelain") == "" and not (wrap_repo / JOURNAL).exists()


@pytest.mark.parametrize("point", ["0-journal", "1-episodes", "4-sections", "6-stage"])
def test_kill9_at_every_step_is_recovered_exactly(wrap_repo, tmp_path, point):
    before = full_state(wrap_repo)
    kill9(start_paused(wrap_repo, tmp_path, point))
    assert (wrap_repo / JOURNAL).exists()
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 0 and "rolled back an interrupted wrap" in res.stdout
    assert full_state(wrap_repo) == before
    assert not list((wrap_repo / ".git").glob("flowgit-wrap*"))


def test_the_next_wrap_recovers_first_and_then_wraps(wrap_repo, tmp_path):
    kill9(start_paused(wrap_repo, tmp_path, "6-stage"))
    res = flowgit(wrap_repo, "wrap", "--plan", str(write_plan(tmp_path, "again.json")), "--date", "2026-11-26")
    assert res.returncode == 0, res.stderr
    assert "note: rolled back an interrupted wrap" in res.stdout and "committed" in res.stdout
    assert git(wrap_repo, "rev-list", "--count", "HEAD").strip() == "2"
    assert git(wrap_repo, "status", "--porcelain") == ""


# ------------------------------------------------------------------ a stale journal after further work
@pytest.mark.parametrize("work", ["commit", "edit", "episode", "stage"])
def test_a_stale_journal_after_further_work_is_refused_and_nothing_changes(wrap_repo, tmp_path, work):
    kill9(start_paused(wrap_repo, tmp_path, "4-sections"))
    if work == "commit":
        (wrap_repo / "notes.txt").write_text("my own work\n")
        git(wrap_repo, "add", "notes.txt")
        git(wrap_repo, "commit", "-qm", "my own commit")
        why = "HEAD moved"
    elif work == "edit":
        with (wrap_repo / "CONTINUITY.md").open("a") as fh:
            fh.write("- a line I typed after the kill\n")
        why = "CONTINUITY.md was edited"
    elif work == "episode":  # `episode add` refuses while the journal is pending: another tool appended
        with (wrap_repo / ".flow" / "episodes.jsonl").open("ab") as fh:
            fh.write(b'{"id": "ep-000000000000", "type": "finding", "content": "appended by another tool"}\n')
        why = "the wrap did not write"
    else:
        (wrap_repo / "other.txt").write_text("x\n")
        git(wrap_repo, "add", "other.txt")
        why = "the index changed"
    after_work = full_state(wrap_repo)
    for args in (["wrap", "--recover"], ["wrap", "--plan", str(write_plan(tmp_path, "p2.json")),
                                         "--date", "2026-11-26"]):
        res = flowgit(wrap_repo, *args)
        assert res.returncode == 2, res
        assert "cannot be undone safely, so nothing was changed" in res.stderr and why in res.stderr
        assert "Traceback" not in res.stderr
        assert full_state(wrap_repo) == after_work
    assert (wrap_repo / JOURNAL).exists()


def test_an_unreadable_journal_is_refused(wrap_repo):
    (wrap_repo / JOURNAL).write_text("{not json")
    before = full_state(wrap_repo)
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 2 and "cannot be read" in res.stderr and full_state(wrap_repo) == before


# ------------------------------------------------------------------ an editor's save while the wrap runs
def test_an_edit_saved_while_the_wrap_runs_is_never_written_over(wrap_repo, tmp_path):
    """The file is saved after the wrap read it (here: once its journal exists and its episodes are appended),
    before it would replace it: the wrap rolls back what it wrote (the store back to its bytes), leaves the
    file as the editor saved it, and says so with exit 2; nothing is committed."""
    before = full_state(wrap_repo)
    proc = start_paused(wrap_repo, tmp_path, "1-episodes", seconds=1.5)
    with (wrap_repo / "CONTINUITY.md").open("a", encoding="utf-8") as fh:
        fh.write("- a note saved by my editor during the wrap\n")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, out + err
    assert b"was saved by someone else while the wrap ran" in err and b"Traceback" not in err
    after = full_state(wrap_repo)
    assert after["continuity"] == before["continuity"] + b"- a note saved by my editor during the wrap\n"
    edited = ("continuity", "files", "status")  # (the file, as the editor saved it, and what git says of it)
    assert {k: v for k, v in after.items() if k not in edited} == {k: v for k, v in before.items()
                                                                   if k not in edited}
    assert after["status"] == " M CONTINUITY.md\n"
    assert not (wrap_repo / ".git" / "flowgit-wrap.journal").exists()


# ------------------------------------------------------------------ episode add racing a failing wrap
def test_episode_add_racing_a_failing_wrap_is_kept(wrap_repo, tmp_path):
    gate = tmp_path / "in-hook"
    install_hook(wrap_repo, f"touch '{gate}'\nsleep 1.5\necho 'hook says no' >&2\nexit 1\n")
    before = full_state(wrap_repo)
    wrap_proc = subprocess.Popen([sys.executable, "-m", "flowgit", "wrap", "--plan", str(write_plan(tmp_path)),
                                  "--date", "2026-11-26"], cwd=wrap_repo, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
    for _ in range(500):
        if gate.exists():
            break
        time.sleep(0.01)
    assert gate.exists()
    add = flowgit(wrap_repo, "episode", "add", "--type", "finding", "--content", "added during the wrap",
                  "--session", "racer", "--ts", "2026-11-26T10:00:00Z")
    _, err = wrap_proc.communicate(timeout=60)
    assert wrap_proc.returncode == 1 and "hook says no" in err
    assert add.returncode == 0 and "added" in add.stdout
    line = json.loads((wrap_repo / ".flow" / "episodes.jsonl").read_bytes()[len(before["store"]):])
    assert line["content"] == "added during the wrap"
    after = full_state(wrap_repo)
    assert after["store"].startswith(before["store"]) and after["store"].count(b"\n") == before["store"].count(b"\n") + 1
    assert {k: after[k] for k in ("head", "index", "continuity", "refs")} == \
        {k: before[k] for k in ("head", "index", "continuity", "refs")}


# ------------------------------------------------------------------ SIGTERM and kill -9 during the hook
def _wrap_in_hook(repo: Path, tmp: Path, hook_exit: int, sleep: float = 3) -> tuple[subprocess.Popen, Path]:
    gate = tmp / "in-hook"
    install_hook(repo, f"touch '{gate}'\nsleep {sleep}\nexit {hook_exit}\n")
    proc = subprocess.Popen([sys.executable, "-m", "flowgit", "wrap", "--plan", str(write_plan(tmp)),
                             "--date", "2026-11-26"], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    for _ in range(500):
        if gate.exists():
            return proc, gate
        time.sleep(0.01)
    proc.kill()
    raise AssertionError("hook never ran")


def test_sigterm_during_the_hook_stops_git_and_rolls_back_exactly(wrap_repo, tmp_path):
    before = full_state(wrap_repo)
    proc, _ = _wrap_in_hook(wrap_repo, tmp_path, hook_exit=0)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert not (wrap_repo / ".git" / "index.lock").exists()
    time.sleep(3.5)  # the orphaned hook's sleep ends: nothing may land afterwards
    assert full_state(wrap_repo) == before
    assert not (wrap_repo / JOURNAL).exists()


def test_sigterm_once_the_commit_has_landed_reports_the_wrap_committed(wrap_repo, tmp_path):
    """Stopped while git runs its post-commit hook: the commit is made, so the wrap is done. It said
    "aborted" (exit 130, a JSON error, no commit id) though its commit stood and its journal was cleared."""
    gate = tmp_path / "in-post-commit"
    hook = wrap_repo / ".git" / "hooks" / "post-commit"
    hook.write_text(f"#!/bin/sh\ntouch '{gate}'\nsleep 3\n")
    hook.chmod(0o755)
    base = git(wrap_repo, "rev-parse", "HEAD").strip()
    proc = subprocess.Popen([sys.executable, "-m", "flowgit", "wrap", "--json", "--plan", str(write_plan(tmp_path)),
                             "--date", "2026-11-26"], cwd=wrap_repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    for _ in range(500):
        if gate.exists():
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    head = git(wrap_repo, "rev-parse", "HEAD").strip()
    assert head != base and git(wrap_repo, "rev-parse", "HEAD~1").strip() == base
    assert proc.returncode == 0, err
    assert json.loads(out)["committed"] == head and "already committed" in err
    assert not (wrap_repo / JOURNAL).exists()


@pytest.mark.parametrize("hook_exit", [0, 1])
def test_kill9_during_the_hook_refuses_while_git_runs_then_settles(wrap_repo, tmp_path, hook_exit):
    before = full_state(wrap_repo)
    proc, _ = _wrap_in_hook(wrap_repo, tmp_path, hook_exit=hook_exit, sleep=2.5)
    kill9(proc)  # git commit and its hook run on, orphaned
    assert (wrap_repo / ".git" / "index.lock").exists()
    during = full_state(wrap_repo)
    res = flowgit(wrap_repo, "wrap", "--recover", env={"FLOWGIT_GIT_LOCK_WAIT": "0"})  # (no wait for git: refused)
    assert res.returncode == 2 and "a git process is still running here" in res.stderr
    assert full_state(wrap_repo) == during and (wrap_repo / JOURNAL).exists()
    for _ in range(400):
        if not (wrap_repo / ".git" / "index.lock").exists():
            break
        time.sleep(0.02)
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 0, res.stderr
    if hook_exit == 0:  # the commit landed: it is the wrap's own, so it is kept
        assert "had already committed" in res.stdout
        assert git(wrap_repo, "rev-parse", "HEAD~1").strip() == before["head"]
        assert git(wrap_repo, "status", "--porcelain") == ""
    else:
        assert "rolled back" in res.stdout and full_state(wrap_repo) == before
    assert not list((wrap_repo / ".git").glob("flowgit-wrap*"))


# ------------------------------------------------------------------ two wraps at once
def _race_once(repo: Path, plans: list[Path]) -> list[subprocess.CompletedProcess]:
    procs = [subprocess.Popen([sys.executable, "-m", "flowgit", "wrap", "--plan", str(p), "--date", "2026-11-26"],
                              cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for p in plans]
    return [subprocess.CompletedProcess(p.args, p.wait(timeout=120), *p.communicate()) for p in procs]


@pytest.mark.slow
def test_fifty_races_of_two_wraps_never_corrupt(wrap_repo, tmp_path):
    plans = []
    for name in ("one", "two"):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"session": f"race-{name}", "state": f"Focus: {name}",
                                    "episodes": [{"type": "finding", "content": f"racer {name} was here"}]}))
        plans.append(path)
    outcomes = {"both": 0, "one": 0}
    for n in range(50):
        base = git(wrap_repo, "rev-parse", "HEAD").strip()
        results = _race_once(wrap_repo, plans)
        codes = sorted(r.returncode for r in results)
        for r in results:
            assert "Traceback" not in r.stderr, r.stderr
        new = git(wrap_repo, "rev-list", f"{base}..HEAD").split()
        assert codes in ([0, 0], [0, 2]), results
        assert len(new) == codes.count(0)
        if codes == [0, 2]:
            loser = next(r for r in results if r.returncode == 2)
            assert "changed while this wrap was deciding" in loser.stderr or "locked by" in loser.stderr
        outcomes["both" if len(new) == 2 else "one"] += 1
        assert git(wrap_repo, "status", "--porcelain") == ""
        assert not list((wrap_repo / ".git").glob("flowgit-wrap*"))
        # the store only ever grew, line by whole line
        store = (wrap_repo / ".flow" / "episodes.jsonl").read_bytes()
        assert all(json.loads(line) for line in store.splitlines())
        # put both plans' episodes out of the store's way for the next round: new sessions each time
        for i, path in enumerate(plans):
            data = json.loads(path.read_text())
            data["session"] = f"race-{i}-{n}"
            path.write_text(json.dumps(data))
    assert subprocess.run(["git", "fsck", "--no-progress"], cwd=wrap_repo, capture_output=True).returncode == 0
    assert sum(outcomes.values()) == 50


# ------------------------------------------------------------------ repositories that are not simple
def _plain_repo(path: Path, *init_args: str) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", *init_args)
    (path / "CONTINUITY.md").write_text("# C\n\n## Current State\nFocus: old.\n\n## Developing Knowledge\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "base")
    return path


def test_a_dollar_in_the_repository_path_is_not_expanded(tmp_path):
    real = _plain_repo(tmp_path / "proj$V")
    decoy = _plain_repo(tmp_path / "projB")
    (decoy / "CONTINUITY.md").write_text((decoy / "CONTINUITY.md").read_text() + "\nuncommitted edit in projB\n")
    decoy_before = full_state_light(decoy)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"session": "s1", "state": "Focus: dollar paths.",
                                "episodes": [{"type": "finding", "content": "dollar paths stay literal"}]}))
    res = flowgit(real, "wrap", "--plan", str(plan), env={"V": "B"})
    assert res.returncode == 0, res.stderr
    assert "Focus: dollar paths." in git(real, "show", "HEAD:CONTINUITY.md")
    assert git(real, "rev-list", "--count", "HEAD").strip() == "2"
    assert full_state_light(decoy) == decoy_before


def full_state_light(repo: Path) -> dict:
    return {"head": git(repo, "rev-parse", "HEAD"), "status": git(repo, "status", "--porcelain"),
            "file": hashlib.sha256((repo / "CONTINUITY.md").read_bytes()).hexdigest()}


def test_a_sha256_repository_wraps_and_recovers(tmp_path):
    repo = _plain_repo(tmp_path / "sha256", "--object-format=sha256")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"session": "s1", "state": "Focus: sha-256.",
                                "episodes": [{"type": "finding", "content": "sha-256 object ids are 64 digits"}]}))
    res = flowgit(repo, "wrap", "--plan", str(plan))
    assert res.returncode == 0, res.stderr
    head = git(repo, "rev-parse", "HEAD").strip()
    assert len(head) == 64 and head.startswith(res.stdout.split("committed ")[1][:12])
    assert git(repo, "status", "--porcelain") == "" and not (repo / JOURNAL).exists()
    # and a killed wrap there is recovered exactly
    before = {**full_state_light(repo), "index": git(repo, "ls-files", "-s")}
    plan.write_text(json.dumps({"session": "s2", "state": "Focus: killed.",
                                "episodes": [{"type": "finding", "content": "killed in a sha-256 repository"}]}))
    marker = tmp_path / "m"
    proc = subprocess.Popen([sys.executable, "-m", "flowgit", "wrap", "--plan", str(plan)], cwd=repo,
                            env={**os.environ, "FLOWGIT_PAUSE": "6-stage", "FLOWGIT_PAUSE_FILE": str(marker)})
    for _ in range(600):
        if marker.exists() and marker.read_text():
            break
        time.sleep(0.02)
    kill9(proc)
    res = flowgit(repo, "wrap", "--recover")
    assert res.returncode == 0 and "rolled back" in res.stdout
    assert {**full_state_light(repo), "index": git(repo, "ls-files", "-s")} == before


# ------------------------------------------------------------------ disk full and file-size limits
def _limit_fsize(limit: int):
    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_a_file_size_limit_during_a_wrap_leaves_the_pre_wrap_state(wrap_repo, tmp_path):
    before = full_state(wrap_repo)
    limit = len(before["store"]) + 40  # the episode line cannot fit: the append is short
    res = subprocess.run([sys.executable, "-m", "flowgit", "wrap", "--plan", str(write_plan(tmp_path)),
                          "--date", "2026-11-26"], cwd=wrap_repo, capture_output=True, text=True,
                         preexec_fn=_limit_fsize(limit))
    assert res.returncode == 2, res
    assert "Traceback" not in res.stderr and "nothing was added" in res.stderr and "rolled back" in res.stderr
    assert full_state(wrap_repo) == before
    assert not list((wrap_repo / ".git").glob("flowgit-wrap*"))


def test_a_clean_filter_on_the_file_is_predicted_and_undone_exactly(wrap_repo, tmp_path):
    """The filter changes what git records of the wrap's new State (the committed file is already as it makes
    it, so the checkout is clean before and after), and the gate judges what git records: a filter that broke
    every pattern (upper-casing the file, say) is refused by the wrap as by the hook."""
    git(wrap_repo, "config", "filter.shout.clean", "sed 's/the transaction/the TRANSACTION/'")
    git(wrap_repo, "config", "filter.shout.smudge", "cat")
    (wrap_repo / ".gitattributes").write_text((wrap_repo / ".gitattributes").read_text()
                                              + "CONTINUITY.md filter=shout\n")
    git(wrap_repo, "add", ".gitattributes")
    git(wrap_repo, "commit", "-qm", "filter")
    before = full_state(wrap_repo)
    kill9(start_paused(wrap_repo, tmp_path, "6-stage"))  # staged through the filter, then killed
    journal = json.loads((wrap_repo / JOURNAL).read_text())
    assert journal["stage"] == "committing" and journal["post"]["index_tree"]
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 0 and "rolled back" in res.stdout, res.stderr
    assert full_state(wrap_repo) == before


GIT_SAYS = {  # what git prints when it cannot write part of a commit (printed here by a hook, as git prints it)
    "commit": ("fatal: unable to write new index file: No space left on device", "disk full"),
    "commit-out-of-diskspace": ("error: write error. Out of diskspace", "disk full"),
    "commit-ref": ("error: couldn't write '.git/refs/heads/main.lock'", "a write failed"),
    "commit-read-only": ("fatal: unable to append to '.git/logs/HEAD': Read-only file system", "a write failed"),
    "commit-ref-permission": ("fatal: cannot lock ref 'HEAD': Unable to create '.git/refs/heads/main.lock': "
                              "Permission denied", "a write failed"),
}


@pytest.mark.parametrize("where", ["journal", "continuity", *GIT_SAYS])
def test_disk_full_anywhere_in_a_wrap_is_exit_2_and_the_pre_wrap_state(wrap_repo, tmp_path, run, monkeypatch, where):
    import errno

    import flowgit.wrap.run as wrap_run
    import flowgit.wrap.transaction as transaction

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    before = full_state(wrap_repo)
    if where == "journal":
        monkeypatch.setattr(transaction.shutil, "copy2", full)
        expected = "could not start the wrap (No space left on device); nothing was changed"
    elif where == "continuity":
        monkeypatch.setattr(wrap_run, "atomic_write", full)
        expected = "could not write (No space left on device); it was rolled back"
    else:  # git reporting a write it could not make
        said, why = GIT_SAYS[where]
        hook = wrap_repo / ".git" / "hooks" / "pre-commit"
        hook.write_text(f"#!/bin/sh\necho \"{said}\" >&2\nexit 128\n")
        hook.chmod(0o755)
        expected = f"git could not write the commit ({why})"
    res = run(wrap_repo, "wrap", "--plan", str(write_plan(tmp_path)), "--date", "2026-11-26")
    assert res.code == 2 and expected in res.err, res.err
    assert full_state(wrap_repo) == before
    assert not list((wrap_repo / ".git").glob("flowgit-wrap*"))


def test_fault_points_are_dead_outside_the_test_suite(wrap_repo, tmp_path):
    """Without tests/support on the path (an installed flowgit), FLOWGIT_FAULT/FLOWGIT_PAUSE do nothing."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(FLOWGIT_FAULT="4-sections", FLOWGIT_PAUSE="1-episodes", FLOWGIT_PAUSE_FILE=str(tmp_path / "m"))
    res = subprocess.run([sys.executable, "-m", "flowgit", "wrap", "--plan", str(write_plan(tmp_path)),
                          "--date", "2026-11-26"], cwd=wrap_repo, env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "committed" in res.stdout, res.stderr
    assert not (tmp_path / "m").exists()


def test_a_formatter_hook_that_rewrites_the_file_and_refuses_the_commit_is_rolled_back_keeping_its_version(
        wrap_repo, tmp_path):
    """Fixer hooks rewrite what is staged and exit 1: the rollback found bytes that were neither the pre- nor
    the post-wrap file and refused, wedging the repository behind a pending journal while saying "nothing was
    changed". The wrap holds the lock, so only a hook can have written them: they are kept aside, and the
    repository comes back exactly."""
    before = full_state(wrap_repo)
    install_hook(wrap_repo, "printf '\\n<!-- formatted -->\\n' >> CONTINUITY.md\ngit add CONTINUITY.md\n"
                            "echo 'formatter: files were modified by this hook' >&2\nexit 1\n")
    res = flowgit(wrap_repo, "wrap", "--plan", str(write_plan(tmp_path)), "--date", "2026-11-26")
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert "CONTINUITY.md was changed while git ran the wrap's commit (by a hook, or by someone" in res.stderr
    assert full_state(wrap_repo) == before
    kept = wrap_repo / ".git" / "flowgit-wrap.hook-edited"
    assert kept.read_text().endswith("<!-- formatted -->\n") and "retry_budget" in kept.read_text()
    assert not (wrap_repo / ".git" / "flowgit-wrap.journal").exists()
    assert flowgit(wrap_repo, "episode", "add", "--type", "finding", "--session", "s9", "later").returncode == 0
    # A second rollback keeps its own copy: the lock keeps out other wraps, not a person's editor, so the
    # first copy may be the only place someone's edit is left.
    again = flowgit(wrap_repo, "wrap", "--plan", str(write_plan(tmp_path)), "--date", "2026-11-26")
    assert again.returncode == 1 and "flowgit-wrap.hook-edited.2" in again.stderr, again.stderr
    assert kept.read_text().endswith("<!-- formatted -->\n")
    assert (wrap_repo / ".git" / "flowgit-wrap.hook-edited.2").read_text().endswith("<!-- formatted -->\n")
    # under --json (and so over MCP, where stderr is unread) the error itself says where the copy is
    third = flowgit(wrap_repo, "--json", "wrap", "--plan", str(write_plan(tmp_path)), "--date", "2026-11-26")
    error = json.loads(third.stdout)["error"]
    assert third.returncode == 1 and "flowgit-wrap.hook-edited.3" in error["message"], error
    assert "compare " in error["fix"] and "flowgit-wrap.hook-edited.3" in error["fix"]


@pytest.mark.parametrize("extra", ["a file staged beside it", "a ticket prefix on its subject"])
def test_the_wraps_own_commit_is_recognised_after_a_kill_whatever_else_was_staged_or_prefixed(wrap_repo, tmp_path,
                                                                                               extra):
    """The wrap commits its two paths only, so a file staged beside them is not in its commit (the whole
    index tree it predicted is not the commit's); a prepare-commit-msg hook may prefix the subject."""
    base = git(wrap_repo, "rev-parse", "HEAD").strip()
    if extra == "a file staged beside it":
        (wrap_repo / "notes.txt").write_text("staged, not the wrap's\n")
        git(wrap_repo, "add", "notes.txt")
    else:
        hook = wrap_repo / ".git" / "hooks" / "prepare-commit-msg"
        hook.write_text('#!/bin/sh\nsed -i "1s/^/[PROJ-1] /" "$1"\n')
        hook.chmod(0o755)
    kill9(start_paused(wrap_repo, tmp_path, "7-committed"))
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 0 and "had already committed" in res.stdout, res.stdout + res.stderr
    assert git(wrap_repo, "rev-parse", "HEAD~1").strip() == base
    assert not (wrap_repo / ".git" / "flowgit-wrap.journal").exists()


def test_a_wrap_that_reads_another_wraps_file_before_its_commit_says_so_not_hand_edit(wrap_repo, tmp_path,
                                                                                      monkeypatch):
    """Wrap A has written its State and not yet committed (paused there, holding the lock) when wrap B reads
    its inputs: B sees a State HEAD lacks. That is A's wrap, not a hand edit: B's guard waits for the lock
    and refuses with the race, and never advises undoing A's edit. (B is run in-process from the reading
    of its inputs: between its own start-up checks and that reading is where the two wraps cross.)"""
    from flowgit.config import load_config
    from flowgit.errors import FlowgitError
    from flowgit.wrap.plan import load_plan
    from flowgit.wrap.run import _refuse_replacing_hand_edits, read_inputs

    first = start_paused(wrap_repo, tmp_path, "4-sections", seconds=2)
    assert "Focus: the transaction" in (wrap_repo / "CONTINUITY.md").read_text()  # written, not committed
    second_plan = tmp_path / "second.json"
    second_plan.write_text(json.dumps({"session": "s-second", "state": "Focus: the second wrap"}))
    monkeypatch.setenv("FLOWGIT_LOCK_WAIT", "30")
    cfg, plan = load_config(wrap_repo), load_plan(str(second_plan))
    inputs = read_inputs(cfg, plan, None, "2026-11-26")
    with pytest.raises(FlowgitError) as refused:
        _refuse_replacing_hand_edits(cfg, inputs, plan)
    assert "changed while this wrap was deciding" in refused.value.message
    _, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert git(wrap_repo, "status", "--porcelain") == ""


def test_a_change_staged_apart_from_the_working_tree_is_refused_not_lost(wrap_repo, tmp_path):
    """Staged, then the working file put back as HEAD has it (an editor's revert, `git restore --worktree`):
    the wrap stages the working tree's file, so it refuses rather than make the staged change vanish."""
    path = wrap_repo / "CONTINUITY.md"
    held = path.read_text()
    path.write_text(held.replace("## Current State\n", "## Current State\nStaged: the on-call rota moved.\n", 1))
    git(wrap_repo, "add", "CONTINUITY.md")
    path.write_text(held)
    before = full_state(wrap_repo)
    res = flowgit(wrap_repo, "wrap", "--plan", str(write_plan(tmp_path)), "--date", "2026-11-26")
    assert res.returncode == 2 and "staged change to CONTINUITY.md that the working tree does not hold" \
        in res.stderr, res.stderr
    assert full_state(wrap_repo) == before and "Staged: the on-call rota" in git(wrap_repo, "show", ":CONTINUITY.md")
    assert "`git commit`, with no path" in res.stderr  # (`git commit -- PATH` commits the working file instead)
    git(wrap_repo, "commit", "-q", "--no-verify", "-m", "the staged change, kept as the fix says")
    assert "Staged: the on-call rota" in git(wrap_repo, "show", "HEAD:CONTINUITY.md")
    git(wrap_repo, "reset", "-q", "--soft", "HEAD~1")  # (staged again, to take the other way out)
    git(wrap_repo, "restore", "--staged", "CONTINUITY.md")
    assert flowgit(wrap_repo, "wrap", "--plan", str(write_plan(tmp_path)), "--date", "2026-11-26").returncode == 0


def test_a_store_staged_before_more_episodes_came_is_no_loss(wrap_repo, tmp_path):
    store = wrap_repo / ".flow" / "episodes.jsonl"
    assert flowgit(wrap_repo, "episode", "add", "--type", "finding", "--session", "s-x", "staged first").returncode == 0
    git(wrap_repo, "add", ".flow/episodes.jsonl")
    assert flowgit(wrap_repo, "episode", "add", "--type", "finding", "--session", "s-x", "then this").returncode == 0
    res = flowgit(wrap_repo, "wrap", "--plan", str(write_plan(tmp_path)), "--date", "2026-11-26")
    assert res.returncode == 0, res.stderr
    assert "staged first" in git(wrap_repo, "show", "HEAD:.flow/episodes.jsonl") and "then this" in store.read_text()


@pytest.mark.parametrize("point", ["4-sections", "6-stage"])
def test_a_wrap_that_meets_another_gits_index_lock_for_a_moment_waits_and_commits(wrap_repo, tmp_path, point):
    """An editor's `git status` holds index.lock for a moment: met by the wrap's `git add` (paused just
    before it) or its `git commit` (paused just before it), the wrap waits for the lock to go and commits,
    instead of failing and leaving its writes behind."""
    import threading

    proc = start_paused(wrap_repo, tmp_path, point, seconds=1)
    lock = wrap_repo / ".git" / "index.lock"
    lock.write_bytes(b"")  # another git at work, for the next 2 seconds: past the pause, into git's step
    threading.Timer(2.0, lock.unlink).start()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    assert "Focus: the transaction" in git(wrap_repo, "show", "HEAD:CONTINUITY.md")
    assert git(wrap_repo, "status", "--porcelain") == "" and not list((wrap_repo / ".git").glob("flowgit-wrap*"))


def test_a_post_commit_hook_recording_an_episode_is_told_at_once_and_its_words_are_shown(wrap_repo, tmp_path):
    """A hook of the wrap's own commit cannot take the lock the wrap holds while git runs it: `episode add` there
    waited out the whole lock wait, then failed, and the wrap showed nothing of it. It is refused at once, and
    the wrap shows what the project's hooks said (flowgit's own gate lines aside: the wrap reported them)."""
    assert flowgit(wrap_repo, "install-hook").returncode == 0  # (the gate's own lines are not repeated)
    hook = wrap_repo / ".git" / "hooks" / "post-commit"
    hook.write_text(f'#!/bin/sh\necho "post-commit ran"\n"{sys.executable}" -m flowgit episode add --type observation '
                    '"made a commit" --session hook\n')
    hook.chmod(0o755)
    before = (wrap_repo / ".flow" / "episodes.jsonl").read_bytes()
    res = flowgit(wrap_repo, "wrap", "--plan", str(write_plan(tmp_path)), "--date", "2026-11-26",
                  env={"FLOWGIT_LOCK_WAIT": "300"}, timeout=120)  # (a wait would outlast the timeout)
    assert res.returncode == 0, res.stderr
    assert "flowgit: git's hooks said, while the wrap committed:\n  post-commit ran\n" in res.stderr
    assert "runs inside that wrap's own commit" in res.stderr and "FLOWGIT_WRAP_COMMIT" in res.stderr
    assert "flowgit check:" not in res.stderr
    assert b"made a commit" not in (wrap_repo / ".flow" / "episodes.jsonl").read_bytes()[len(before):]


@pytest.mark.parametrize("how", ["--soft", "--mixed"])
def test_a_reset_to_the_parent_after_the_wraps_commit_is_not_rolled_back(wrap_repo, tmp_path, how):
    """Killed just after committing, then `git reset --soft HEAD~1`: HEAD is the journal's pre-wrap HEAD again
    and the wrap's tree is staged, the look of a wrap killed before its commit; but the reflog shows the
    wrap's commit made, so what the person did after it stands and only the journal goes."""
    base = git(wrap_repo, "rev-parse", "HEAD").strip()
    kill9(start_paused(wrap_repo, tmp_path, "7-committed"))
    made = git(wrap_repo, "rev-parse", "HEAD").strip()
    git(wrap_repo, "reset", "-q", how, "HEAD~1")
    after_reset = full_state(wrap_repo)
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 0, res.stderr
    assert f"had already committed {made[:12]}" in res.stdout and "nothing was rolled back" in res.stdout
    assert git(wrap_repo, "rev-parse", "HEAD").strip() == base and full_state(wrap_repo) == after_reset
    assert not list((wrap_repo / ".git").glob("flowgit-wrap*"))


# ------------------------------------------------------------------ paths git will not stage
@pytest.mark.parametrize("how", ["skip-worktree", "ignored"])
def test_a_store_git_would_not_stage_is_refused_before_anything_is_written(wrap_repo, tmp_path, run, how):
    """`git add` of the file and the store stages the one it can and refuses the other: refused up front."""
    if how == "skip-worktree":
        git(wrap_repo, "update-index", "--skip-worktree", ".flow/episodes.jsonl")
    else:
        (wrap_repo / ".flowgit.toml").write_text('store = "memory/episodes.jsonl"\n')
        (wrap_repo / ".gitignore").write_text("memory/\n")
        git(wrap_repo, "add", "-A")
        git(wrap_repo, "commit", "-qm", "move the store", "--no-verify")
    before = full_state(wrap_repo) if how == "skip-worktree" else snapshot(wrap_repo)
    res = run(wrap_repo, "wrap", "--plan", str(write_plan(tmp_path)), "--date", "2026-11-26")
    assert res.code == 2, res.out + res.err
    said = "sparse checkout" if how == "skip-worktree" else "git check-ignore -v memory/episodes.jsonl"
    assert "nothing was written" in res.err and said in res.err, res.err
    assert (full_state(wrap_repo) if how == "skip-worktree" else snapshot(wrap_repo)) == before
    assert not (wrap_repo / JOURNAL).exists()


def test_a_tracked_store_in_an_ignored_directory_is_wrapped(wrap_repo, tmp_path, run):
    """git stages a tracked file under an ignored directory and still exits 1: the wrap stages it anyway (an
    untracked one there is refused before anything is written, above)."""
    (wrap_repo / "memory").mkdir()
    git(wrap_repo, "mv", ".flow/episodes.jsonl", "memory/episodes.jsonl")
    (wrap_repo / ".flowgit.toml").write_text('store = "memory/episodes.jsonl"\n')
    (wrap_repo / ".gitignore").write_text("memory/\n")
    git(wrap_repo, "add", "-A")
    git(wrap_repo, "commit", "-qm", "the store under an ignored directory", "--no-verify")
    res = run(wrap_repo, "wrap", "--plan", str(write_plan(tmp_path)), "--date", "2026-11-26")
    assert res.code == 0, res.out + res.err
    assert "retry budget held in the third outage" in git(wrap_repo, "show", "HEAD:memory/episodes.jsonl")
    assert git(wrap_repo, "status", "--porcelain") == "" and not (wrap_repo / JOURNAL).exists()


def test_a_wrap_git_stages_only_half_of_is_rolled_back_exactly(wrap_repo, tmp_path, run, monkeypatch):
    """The store is put out of the checkout while the wrap writes (after its check): git stages the file, refuses
    the store and exits 1. The index is then neither state the journal names, yet nothing in it is anyone
    else's: the rollback proves that and undoes it, and nothing blocks the next writer."""
    import flowgit.wrap.run as wrap_run

    real = wrap_run.checkpoint

    def hide_the_store(point: str) -> None:
        real(point)
        if point == "4-sections":
            git(wrap_repo, "update-index", "--skip-worktree", ".flow/episodes.jsonl")

    before = full_state(wrap_repo)
    monkeypatch.setattr(wrap_run, "checkpoint", hide_the_store)
    res = run(wrap_repo, "wrap", "--plan", str(write_plan(tmp_path)), "--date", "2026-11-26")
    assert res.code == 2 and "sparse-checkout" in res.err, res.err
    assert full_state(wrap_repo) == before  # the index as it was: its backup, taken before the store was hidden
    assert "S " not in git(wrap_repo, "ls-files", "-t", ".flow/episodes.jsonl")
    assert not list((wrap_repo / ".git").glob("flowgit-wrap*"))
    monkeypatch.setattr(wrap_run, "checkpoint", real)
    assert run(wrap_repo, "episode", "add", "--type", "finding", "--session", "s9", "a later fact").code == 0


def test_recovery_after_git_gc_writes_again_the_staged_store_only_the_old_index_named(wrap_repo, tmp_path, run):
    """An episode staged before the wrap (its blob held by the index alone), the wrap killed after staging, then
    `git gc --prune=now`: the pre-wrap index names a pruned blob. The recovery writes it again from the bytes it
    puts back (they are exactly it), so the index it restores is one git can commit."""
    assert run(wrap_repo, "episode", "add", "--type", "finding", "--session", "s8", "a staged fact").code == 0
    git(wrap_repo, "add", ".flow/episodes.jsonl")
    staged = git(wrap_repo, "write-tree").strip()
    before = full_state(wrap_repo)
    kill9(start_paused(wrap_repo, tmp_path, "6-stage"))
    git(wrap_repo, "gc", "-q", "--prune=now")
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 0 and "rolled back" in res.stdout, res.stdout + res.stderr
    assert full_state(wrap_repo) == before
    assert git(wrap_repo, "write-tree").strip() == staged  # (git can make a tree, so a commit, of it)
    assert "missing" not in subprocess.run(["git", "fsck"], cwd=wrap_repo, capture_output=True, text=True).stdout


def test_recovery_refuses_when_git_gc_pruned_a_staged_version_it_cannot_write_again(wrap_repo, tmp_path, run):
    """The staged store differs from the one on disk (staged, then another episode added): git gc prunes the
    staged one, which no byte the recovery holds can re-create. Refused, with the reason, nothing touched."""
    assert run(wrap_repo, "episode", "add", "--type", "finding", "--session", "s8", "a staged fact").code == 0
    git(wrap_repo, "add", ".flow/episodes.jsonl")
    assert run(wrap_repo, "episode", "add", "--type", "finding", "--session", "s8", "an unstaged fact").code == 0
    kill9(start_paused(wrap_repo, tmp_path, "6-stage"))
    git(wrap_repo, "gc", "-q", "--prune=now")
    after_kill = full_state(wrap_repo)
    res = flowgit(wrap_repo, "wrap", "--recover")
    assert res.returncode == 2 and "git has pruned the version of .flow/episodes.jsonl" in res.stderr, res.stderr
    assert full_state(wrap_repo) == after_kill and (wrap_repo / JOURNAL).exists()


def test_a_write_refused_for_permission_is_told_the_permission_fix_not_disk_space(wrap_repo, tmp_path, run,
                                                                                  monkeypatch):
    import errno

    import flowgit.wrap.run as wrap_run

    def denied(*a, **k):
        raise OSError(errno.EACCES, "Permission denied", str(wrap_repo / "CONTINUITY.md"))

    before = full_state(wrap_repo)
    monkeypatch.setattr(wrap_run, "atomic_write", denied)
    res = run(wrap_repo, "--json", "wrap", "--plan", str(write_plan(tmp_path)), "--date", "2026-11-26")
    assert res.code == 2 and full_state(wrap_repo) == before
    error = json.loads(res.out)["error"]
    assert "could not write (Permission denied)" in error["message"]
    assert "writable" in error["fix"] and "disk space" not in error["fix"]
