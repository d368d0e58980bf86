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


PARTNER = "We decide in writing at the cafe and keep the reasons next to the decision."


def test_the_repair_of_a_protected_line_is_no_change_to_it(run, repo):
    """The Latin-1 `é` read as the `é` a re-save writes: a Partnership line re-saved as UTF-8 is the same
    line (no G402), where a replacement character made it look reworded."""
    committed_base(repo, base_text(partnership=PARTNER.replace("cafe", "café")))
    assert run(repo, "install-hook").code == 0
    path = repo / "CONTINUITY.md"
    path.write_bytes(path.read_bytes().replace("café".encode(), b"caf\xe9"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "latin-1 slipped in", "--no-verify")
    path.write_text(base_text(partnership=PARTNER.replace("cafe", "café")))
    git(repo, "add", "-A")
    res = run(repo, "check", "--json")
    assert res.code == 0, res.out
    assert [f["code"] for f in json.loads(res.out)["findings"]] == ["G002"]


def test_an_unreadable_commit_is_still_judged_for_what_it_did(run, repo):
    """A stray byte must not hide the commit's own violation: the audit reports A403 and the rules' findings
    on the commit read as text (here G402: a Partnership line deleted)."""
    committed_base(repo, base_text(state=STATE))
    path = repo / "CONTINUITY.md"
    text = base_text(state=STATE, partnership="").encode().replace(b"cafe", b"caf\xe9")
    path.write_bytes(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "drop the partnership line, and a stray byte", "--no-verify")
    bad = git(repo, "rev-parse", "HEAD").strip()
    res = run(repo, "audit", "--json")
    assert res.code == 1, res.err
    found = {(f["code"], f["commit"]) for f in json.loads(res.out)["findings"]}
    assert found == {("A403", bad), ("G402", bad)}


def test_bytes_that_are_not_utf8_are_read_as_meant():
    from flowgit.fsio import as_text

    assert as_text(b"caf\xe9\n") == "café\n"
    assert as_text(b"it\x92s\r\n") == "it’s\r\n"  # Windows-1252's right quote, the line ending kept
    assert as_text(b"odd \x81 byte\n") == "odd \x81 byte\n"  # no Windows-1252 character: Latin-1
    assert as_text("naïve ✓\n".encode() + b"caf\xe9") == "naïve ✓\ncafé"  # UTF-8 lines as they are
    assert as_text(b"a\x00b\n") == "a\ufffdb\n"


def test_a_merge_with_a_parent_that_is_not_text_is_judged_not_stopped_on(run, repo):
    """Every parent of a merge is read for the rules that ask what each held: one that is not text is read as
    the base is (as text), so the audit reports the parent's own commit (A403) and goes on."""
    committed_base(repo, base_text(state=STATE))
    git(repo, "checkout", "-q", "-b", "side")
    path = repo / "CONTINUITY.md"
    path.write_bytes(path.read_bytes().replace(b"cafe", b"caf\xe9"))
    git(repo, "commit", "-qam", "latin-1 on a branch", "--no-verify")
    bad = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-")
    (repo / "notes.txt").write_text("elsewhere\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "meanwhile", "--no-verify")
    git(repo, "merge", "-q", "--no-edit", "--no-verify", "side")
    res = run(repo, "audit", "--json")
    assert res.code == 1, res.err
    assert ("A403", bad) in {(f["code"], f["commit"]) for f in json.loads(res.out)["findings"]}
