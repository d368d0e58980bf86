"""History as git keeps it, odd commit headers included: an unknown encoding is read, and a commit libgit2
refuses whole stops the command with exit 2 and a reason, never a traceback or a false "unknown revision"."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.checks.gate_fixtures import base_text, committed_base
from tests.conftest import git


def _literal_commit(repo: Path, body: str) -> str:
    return subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--literally", "--stdin"], cwd=repo,
                          input=body.encode(), capture_output=True, check=True).stdout.decode().strip()


def test_a_commit_in_an_encoding_python_does_not_know_is_read(run, repo, tmp_path):
    committed_base(repo)
    (repo / "CONTINUITY.md").write_text(base_text(recent="The breaker shipped after the review."))
    git(repo, "add", "-A")
    git(repo, "-c", "i18n.commitEncoding=x-unknown", "commit", "-q", "--no-verify", "-m",
        "Session wrap — recent context\n\nFlow-Override: imported by hand")
    assert "encoding x-unknown" in git(repo, "cat-file", "-p", "HEAD")
    for args in (["log"], ["log", "--json"], ["audit"], ["audit", "--json"],
                 ["report", "-o", str(tmp_path / "r.html")]):
        res = run(repo, *args)
        assert res.code in (0, 1) and "Traceback" not in res.err, (args, res.err)
        if "--json" in args:
            json.loads(res.out)
    said = json.loads(run(repo, "audit", "--json").out)["findings"]
    assert [(f["code"], f["message"]) for f in said] == [
        ("A301", "the gate was overridden for every error: imported by hand")]


@pytest.mark.parametrize("at_head", [False, True])
def test_a_commit_libgit2_cannot_parse_is_a_clear_error(run, repo, tmp_path, at_head):
    committed_base(repo)
    tree, parent = git(repo, "write-tree").strip(), git(repo, "rev-parse", "HEAD").strip()
    bad = _literal_commit(repo, f"tree {tree}\nparent {parent}\nauthor A <a@x> notanumber +0000\n"
                                f"committer A <a@x> 1764000000 +0000\n\nreword\n")
    git(repo, "update-ref", "HEAD", bad)
    if not at_head:
        (repo / "later.txt").write_text("later\n")
        git(repo, "add", "later.txt")
        git(repo, "commit", "-qm", "later", "--no-verify")
    for args in (["log"], ["audit"], ["report", "-o", str(tmp_path / "r.html")]):
        res = run(repo, *args)
        assert res.code == 2 and "Traceback" not in res.err, (args, res.err)
        assert "libgit2 cannot read" in res.err and "unknown revision" not in res.err and "git fsck" in res.err
    error = json.loads(run(repo, "audit", "--json").out)["error"]
    assert "failed to parse signature" in error["message"] and "git fsck" in error["fix"]
