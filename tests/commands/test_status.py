"""`flowgit status`: what a person reads before a session, a page and not a log."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import git


def test_status_lists_the_newest_unwrapped_episodes_and_counts_the_rest(run, repo):
    """A page, not a log: 25 unwrapped episodes show the newest 20 and a count; --json keeps every id."""
    assert run(repo, "init", "--commit").code == 0
    lines = "".join(json.dumps({"type": "finding", "content": f"unwrapped fact number {n}", "session": "s1"}) + "\n"
                    for n in range(25))
    assert run(repo, "episode", "add", stdin=lines).code == 0
    out = run(repo, "status").out
    assert "(25)" in out and "5 earlier" in out and "unwrapped fact number 24" in out
    assert "unwrapped fact number 4\n" not in out and "unwrapped fact number 5" in out
    assert len(json.loads(run(repo, "status", "--json").out)["unwrapped_episodes"]) == 25


def test_status_says_when_the_registered_merge_driver_cannot_start(run, repo):
    """Its virtualenv rebuilt or moved: a sync refuses, and a hand `git pull` would take ours whole. status
    says so, with the fix, before either happens; a driver that can start is not mentioned."""
    assert run(repo, "init", "--commit").code == 0
    assert json.loads(run(repo, "status", "--json").out)["merge_driver_problem"] is None
    git(repo, "config", "merge.flowgit.driver", "/nonexistent/venv/bin/python -m flowgit merge-driver %O %A %B %P")
    out = run(repo, "status")
    assert out.code == 0 and "The merge driver cannot start:" in out.out and "`/nonexistent/venv/bin/python`" in out.out
    assert "run `flowgit init` again" in out.out
    assert "does not exist" in json.loads(run(repo, "status", "--json").out)["merge_driver_problem"]
    assert run(repo, "init").code == 0
    assert json.loads(run(repo, "status", "--json").out)["merge_driver_problem"] is None


def test_status_says_when_a_merge_attribute_overrides_the_driver(run, repo):
    """`merge=union` in place of `merge=flowgit` bypasses the driver on every merge: status says so, with the
    fix; the attributes `flowgit init` writes (and harmless ones beside them) are not mentioned."""
    assert run(repo, "init", "--commit").code == 0
    attributes = repo / ".gitattributes"
    attributes.write_text(attributes.read_text() + "CONTINUITY.md diff linguist-documentation\n")
    assert json.loads(run(repo, "status", "--json").out)["merge_attribute_problems"] == []
    attributes.write_text(attributes.read_text().replace("CONTINUITY.md merge=flowgit", "CONTINUITY.md merge=union"))
    out = run(repo, "status")
    assert out.code == 0 and "A merge attribute overrides flowgit's driver:" in out.out
    assert "CONTINUITY.md as union" in out.out and "put back `merge=flowgit`" in out.out
    said = json.loads(run(repo, "status", "--json").out)["merge_attribute_problems"]
    assert len(said) == 1 and "CONTINUITY.md" in said[0]


def test_status_says_when_commits_no_remote_has_fail_the_audit(run, repo, tmp_path):
    """A `--no-verify` commit that fails the audit went unmentioned until `git push` refused it; status names
    it (a real bare remote), and says nothing once it is rewritten, nor in a clone that tracks no remote."""
    assert run(repo, "init", "--commit").code == 0
    assert json.loads(run(repo, "status", "--json").out)["unpushed_failing"] is None  # no remote known
    git(tmp_path, "init", "-q", "--bare", "remote.git")
    git(repo, "remote", "add", "origin", str(tmp_path / "remote.git"))
    git(repo, "push", "-q", "origin", "HEAD:refs/heads/main")
    git(repo, "fetch", "-q", "origin")
    git(repo, "branch", "-q", "-u", "origin/main")
    path = repo / "CONTINUITY.md"
    clean = path.read_text()
    path.write_text(clean.replace("## Developing Knowledge\n", "## Developing Knowledge\n"
                                  "!! sneaky: a claim with nothing behind it | 3x (X)\n"))
    git(repo, "commit", "-qam", "sneak", "--no-verify")
    sneak = git(repo, "rev-parse", "HEAD").strip()
    out = run(repo, "status")
    assert out.code == 0 and "Commits no remote has yet fail the audit (1 of 1): a push of them is refused" in out.out
    assert f"{sneak[:10]}  (G101" in out.out and "`flowgit audit --since-ref @{upstream}`" in out.out
    found = json.loads(run(repo, "status", "--json").out)["unpushed_failing"]
    assert found["commits"] == 1 and found["failing"] == [sneak] and "G101" in found["codes"]
    grafts = repo / ".git" / "info" / "grafts"
    grafts.parent.mkdir(exist_ok=True)
    grafts.write_text(sneak + "\n")  # the audit refuses to read such a history: status says so, and goes on
    out = run(repo, "status")
    assert out.code == 0 and "1 commit(s) no remote has yet, not audited here:" in out.out, out.out + out.err
    assert "the audit cannot judge them here" in out.out
    grafts.unlink()
    path.write_text(clean)
    git(repo, "commit", "-qa", "--amend", "--allow-empty", "-m", "rewritten", "--no-verify")
    assert json.loads(run(repo, "status", "--json").out)["unpushed_failing"] is None


def test_status_says_when_a_clone_never_ran_init(run, repo, tmp_path):
    """git copies no config and no hooks between clones: a teammate's fresh clone has no merge driver (the
    next `git pull` that meets another wrap writes markers into the file and the store) and no gate. status
    says so, with the fix, before that happens; `flowgit init` in the clone clears it."""
    assert run(repo, "init", "--commit").code == 0
    assert json.loads(run(repo, "status", "--json").out)["clone_setup_problems"] == []
    git(tmp_path, "init", "-q", "--bare", "remote.git")
    git(repo, "push", "-q", str(tmp_path / "remote.git"), "HEAD:refs/heads/main")
    git(tmp_path, "clone", "-q", "-b", "main", str(tmp_path / "remote.git"), "teammate")
    teammate = tmp_path / "teammate"
    out = run(teammate, "status")
    assert out.code == 0 and "This clone is not set up:" in out.out and "nothing to wrap" not in out.out
    assert "merge driver is not registered" in out.out and "pre-commit and pre-push hooks are not installed" in out.out
    assert "run `flowgit init` in this clone" in out.out
    assert len(json.loads(run(teammate, "status", "--json").out)["clone_setup_problems"]) == 2
    (teammate / ".git" / "hooks" / "pre-push").write_text("#!/bin/sh\nexit 0\n")  # a hook of the user's own
    assert run(teammate, "init").code == 0
    assert json.loads(run(teammate, "status", "--json").out)["clone_setup_problems"] == []
    assert "This clone is not set up" not in run(teammate, "prime").out


def test_status_reports_a_conflicted_merge_instead_of_refusing(run, repo):
    """Both sides changed Foundation (protected: a real conflict, the driver leaves markers). status was the
    one command that refused then, pointing at `flowgit init` that refuses mid-merge; now it says where the
    markers are and how to finish, exits 0, and does not tell the user to wrap the conflicted file."""
    assert run(repo, "init", "--commit").code == 0
    path = repo / "CONTINUITY.md"
    base = path.read_text()
    git(repo, "checkout", "-q", "-b", "other")
    for rule, branch in (("ask before changing thresholds", "other"), ("never retry without a key", None)):
        if branch is None:
            git(repo, "checkout", "-q", "-")
        opening = "(protected: never compressed).\n"
        path.write_text(base.replace(opening, f"{opening}- {rule}\n", 1))
        git(repo, "commit", "-qam", rule, "--no-verify")
    merged = subprocess.run(["git", "merge", "-q", "other"], cwd=repo, capture_output=True, text=True)
    assert merged.returncode != 0 and "<<<<<<<" in path.read_text()
    out = run(repo, "status")
    assert out.code == 0, out.err
    assert "A merge is in progress: CONTINUITY.md holds git conflict markers" in out.out
    assert "`git add` the file and commit" in out.out and "finish with `flowgit wrap`" not in out.out
    said = json.loads(run(repo, "status", "--json").out)["mid_merge"]
    assert said["operation"] == "a merge" and said["line"] == path.read_text().split("\n").index(
        next(ln for ln in path.read_text().split("\n") if ln.startswith("<<<<<<<"))) + 1
    primed = run(repo, "prime")
    assert primed.code == 0 and "is mid-merge" in primed.out and "No continuity file" not in primed.out
    git(repo, "merge", "--abort")
    assert json.loads(run(repo, "status", "--json").out)["mid_merge"] is None


def test_a_clone_whose_hooks_the_pre_commit_framework_runs_is_told_the_frameworks_install(run, repo, tmp_path):
    """`flowgit init` leaves the hooks to the framework whose list runs flowgit's: telling that clone to run
    `flowgit init` would go round in circles. status names the framework's install; its hooks, installed by the
    real framework, count only for the gate hook the list runs (flowgit-check: pre-commit, not pre-push)."""
    from tests.commands.test_init import FRAMEWORK_LIST

    (repo / ".pre-commit-config.yaml").write_text(FRAMEWORK_LIST)
    assert run(repo, "init").code == 0
    said = json.loads(run(repo, "status", "--json").out)
    assert len(said["clone_setup_problems"]) == 1 and "pre-commit and pre-push hooks" in said["clone_setup_problems"][0]
    assert said["clone_setup_fix"].startswith("install the framework's hooks: `pre-commit install")
    exe = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))
    installed = subprocess.run([exe, "install", "--hook-type", "pre-commit", "--hook-type", "pre-push"], cwd=repo,
                               capture_output=True, text=True, env={**os.environ, "PRE_COMMIT_HOME": str(tmp_path)})
    assert installed.returncode == 0, installed.stdout + installed.stderr
    said = json.loads(run(repo, "status", "--json").out)
    assert said["clone_setup_problems"] == ["flowgit's pre-push hook is not installed in this clone: nothing judges a "
                                            "commit or a push here before it is shared"]
    assert run(repo, "install-hook").code == 0
    assert json.loads(run(repo, "status", "--json").out)["clone_setup_problems"] == []
