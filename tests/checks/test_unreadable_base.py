"""A continuity file committed past the gate as bytes that are not text (not UTF-8).

The audit reports it at that commit (A403) and goes on judging; the hook
judges a later change against the base read with replacement characters (a
G002 warning), so the commit that repairs it passes and one that does more is
still judged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.checks.gate_fixtures import base_text, committed_base
from tests.commands.test_hooks import commit, ungrounded_text
from tests.conftest import git

STATE = "Focus: the cafe retry budget. Critical path: the breaker."


@pytest.fixture
def latin1(run, repo: Path) -> tuple[Path, str]:
    """Hooks installed; a commit made with --no-verify whose State holds a Latin-1 byte."""
    committed_base(repo, base_text(state=STATE))
    assert run(repo, "install-hook").code == 0
    path = repo / "CONTINUITY.md"
    path.write_bytes(path.read_bytes().replace(b"cafe", b"caf\xe9"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "latin-1 slipped in", "--no-verify")
    return repo, git(repo, "rev-parse", "HEAD").strip()


def test_the_audit_reports_the_unreadable_commit_and_goes_on(run, latin1):
    repo, bad = latin1
    (repo / "CONTINUITY.md").write_text(base_text(state=STATE))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "re-saved", "--no-verify")
    res = run(repo, "audit", "--json")
    assert res.code == 1, res.err
    (finding,) = json.loads(res.out)["findings"]
    assert (finding["code"], finding["commit"], finding["line"]) == ("A403", bad, 5)
    assert "not valid UTF-8" in finding["message"] and finding["path"] == "CONTINUITY.md"
    fixed = run(repo, "audit", "--json", "--range", "HEAD~1..HEAD")
    assert fixed.code == 0 and json.loads(fixed.out)["findings"] == []


def test_the_repair_passes_the_hook_with_a_warning(run, latin1):
    repo, _ = latin1
    (repo / "CONTINUITY.md").write_text(base_text(state=STATE))
    git(repo, "add", "-A")
    res = run(repo, "check", "--json")
    assert res.code == 0, res.out + res.err
    codes = [(f["code"], f["severity"]) for f in json.loads(res.out)["findings"]]
    assert codes == [("G002", "warning")]
    assert commit(repo, "re-save as UTF-8").returncode == 0


def test_a_violation_riding_on_the_repair_is_still_refused(run, latin1):
    repo, _ = latin1
    (repo / "CONTINUITY.md").write_text(ungrounded_text().replace(
        "Focus: ship the gate. Critical path: the compression rule, then the benchmark.", STATE))
    git(repo, "add", "-A")
    res = commit(repo, "re-save, and graduate without evidence")
    assert res.returncode != 0 and "G101" in res.stdout + res.stderr


def test_an_unreadable_staged_file_is_still_refused(run, repo):
    committed_base(repo)
    path = repo / "CONTINUITY.md"
    path.write_bytes(path.read_bytes() + b"\xff\n")
    git(repo, "add", "-A")
    res = run(repo, "check")
    assert res.code == 2 and "not valid UTF-8" in res.err and "CONTINUITY.md" in res.err
