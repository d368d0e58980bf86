"""The history walk: memory flat in the number of versions; a shallow boundary is a baseline, not a change."""

from __future__ import annotations

import json
import subprocess
import tracemalloc
from pathlib import Path

from flowgit.config import load_config
from flowgit.history.audit import run_audit
from flowgit.history.walk import Lives, read_history
from tests.conftest import git

HEAD_TEXT = "# C\n\n## Current State\nFocus: {n}.\n\n## Developing Knowledge\n"


def fast_history(root: Path, commits: int, patterns: int = 60) -> None:
    """``commits`` versions that each change State only (so no pattern events), built with fast-import."""
    git(root, "init", "-q")
    dev = "".join(f"! pat_{i}: pattern number {i} about queues and retries and budgets | 1x\n"
                  for i in range(patterns))
    out = []
    for n in range(commits):
        body = (HEAD_TEXT.format(n=n) + dev).encode()
        msg = f"wrap {n}\n".encode()
        out.append(b"commit refs/heads/main\ncommitter t <t@e> %d +0000\ndata %d\n%s" % (1_700_000_000 + n, len(msg), msg))
        out.append(b"M 100644 inline CONTINUITY.md\ndata %d\n%s\n" % (len(body), body))
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=b"".join(out), check=True)
    git(root, "checkout", "-q", "-f", "main")


def peak_of_walk(root: Path) -> tuple[int, int]:
    cfg = load_config(root)
    tracemalloc.start()
    try:
        history = read_history(cfg)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, len(history.commits)


def test_memory_does_not_grow_with_the_number_of_versions(tmp_path):
    small, large = tmp_path / "small", tmp_path / "large"
    small.mkdir()
    large.mkdir()
    fast_history(small, 100)
    fast_history(large, 1000)
    peak_small, n_small = peak_of_walk(small)
    peak_large, n_large = peak_of_walk(large)
    assert (n_small, n_large) == (100, 1000)
    # 900 more versions, each with 60 patterns: keeping their maps would cost tens of MB;
    # what grows is the list of commits (a few hundred bytes each)
    assert peak_large - peak_small < 900 * 2_000, (peak_small, peak_large)


def memory_repo(root: Path, run) -> Path:
    """A repository at ``root`` whose first commit holds a fresh memory (no hooks)."""
    root.mkdir()
    git(root, "init", "-q")
    run(root, "init", "--no-hooks")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


def test_a_shallow_boundary_that_is_a_wrap_gives_no_false_finding(tmp_path, run):
    origin = memory_repo(tmp_path / "origin", run)
    steps = [("alpha", {"op": "add", "name": "alpha", "text": "alpha pattern text"}),
             ("beta", {"op": "add", "name": "beta", "text": "beta pattern text"}),
             ("archive", {"op": "archive", "name": "alpha"}),
             ("gamma", {"op": "add", "name": "gamma", "text": "gamma pattern text"})]
    for n, (label, op) in enumerate(steps):
        plan = tmp_path / f"p{n}.json"
        plan.write_text(json.dumps({"session": f"s{n}", "state": f"Focus: {label}.",
                                    "episodes": [{"type": "finding", "content": f"{label} seen"}],
                                    "patterns": [op]}))
        assert run(origin, "wrap", "--plan", str(plan)).code == 0
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "2", origin.as_uri(), str(clone))
    assert git(clone, "rev-parse", "--is-shallow-repository").strip() == "true"
    boundary = (clone / ".git" / "shallow").read_text().split()
    assert "Archived: alpha" in git(clone, "log", "-1", "--format=%B", boundary[0])  # the boundary is a wrap
    report = run_audit(load_config(clone))
    assert report.shallow and not [f for f in report.findings if f.code == "A201"], report.findings
    history = read_history(load_config(clone))
    assert history.boundary == frozenset(boundary)
    assert [(e.commit.sha, e.event.name) for e in history.events] == [(git(clone, "rev-parse", "HEAD").strip(),
                                                                       "gamma")]
    res = run(clone, "log")
    assert res.code == 0 and "shallow clone: history visible back to" in res.out
    # the full clone still reports beta where it happened
    full = read_history(load_config(origin))
    assert ("archived", "alpha") in {(e.event.kind, e.event.name) for e in full.events}


def test_a_sha256_repository_is_refused_up_front_by_the_history_reader(tmp_path, run):
    root = tmp_path / "s256"
    root.mkdir()
    git(root, "init", "-q", "--object-format=sha256")
    (root / "CONTINUITY.md").write_text(HEAD_TEXT.format(n=0))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "x")
    before = git(root, "rev-parse", "HEAD"), git(root, "status", "--porcelain")
    for cmd in ("log", "audit"):
        res = run(root, cmd)
        if res.code == 0:  # a libgit2 that reads SHA-256 repositories: then it simply works
            continue
        assert res.code == 2 and "SHA-256 repository" in res.err and "Traceback" not in res.err
    assert (git(root, "rev-parse", "HEAD"), git(root, "status", "--porcelain")) == before


def test_a_commit_dated_outside_the_calendar_is_shown_at_its_end(tmp_path, run):
    """A commit written with year 10000 (or year 0) stopped log, report, status and ascend with a traceback;
    its date is shown at the nearest end of the calendar, and every reader goes on."""
    root = memory_repo(tmp_path / "repo", run)
    text = (root / "CONTINUITY.md").read_text()
    at = text.index("\n", text.index("## Developing Knowledge")) + 1
    (root / "CONTINUITY.md").write_text(text[:at] + "! far_future: a pattern dated far ahead | 1x\n" + text[at:])
    git(root, "add", "-A")
    tree, parent = git(root, "write-tree").strip(), git(root, "rev-parse", "HEAD").strip()
    for stamp, shown in ((253402300800, "9999-12-30"), (-62198755200, "0001-01-01")):
        body = (f"tree {tree}\nparent {parent}\nauthor F <f@x> {stamp} +0000\ncommitter F <f@x> {stamp} +0000\n"
                "\nadd a pattern\n")
        sha = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=root, input=body,
                             text=True, capture_output=True, check=True).stdout.strip()
        git(root, "update-ref", "HEAD", sha)
        for args in (["log", "--json"], ["log", "--format", "mermaid"], ["status"], ["candidates"],
                     ["report", "-o", str(tmp_path / "r.html")], ["audit"]):
            res = run(root, *args)
            assert res.code == 0 and "Traceback" not in res.err, (stamp, args, res.err)
        events = json.loads(run(root, "log", "--json").out)["patterns"]["far_future"]
        assert events[0]["date"] == shown


def _version(root: Path, developing: str, message: str) -> str:
    (root / "CONTINUITY.md").write_text(f"# C\n\n## Current State\nFocus: x\n\n## Developing Knowledge\n{developing}\n"
                                        "## Proven Knowledge\n\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def test_a_name_freed_by_a_rename_and_taken_again_begins_a_new_life(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q")
    first = _version(root, "! alpha: cache the balances first | 1x\n", "one")
    renamed = _version(root, "! beta: cache the balances first | 1x\n", "rename alpha to beta")
    again = _version(root, "! beta: cache the balances first | 1x\n"
                           "! alpha: an entirely different idea about retries | 1x\n", "a new alpha")
    history = read_history(load_config(root))
    lives = Lives(history)
    assert [(i.event.kind, i.event.name, lives.key(i)) for i in history.events] == [
        ("added", "alpha", "beta"), ("renamed", "beta", "beta"), ("added", "alpha", "alpha")]
    assert (lives.at(first, "alpha"), lives.at(renamed, "alpha"), lives.at(again, "alpha")) == ("beta", "beta", "alpha")
    assert lives.named(["alpha"]) == {"alpha", "beta"} and lives.named(["beta"]) == {"beta"}
    assert lives.named(["never"]) == {"never"}
