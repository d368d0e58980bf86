"""An invalid configuration committed past the gate: one verdict, and no wedge.

The audit reports it where it came in (A402) and judges every later commit
under the defaults; the hook does the same (a G808 warning), so the commit
that repairs it is judged, not refused for what it did not write, and the
defaults' rules still hold meanwhile.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.checks.gate_fixtures import base_text, committed_base
from tests.commands.test_hooks import commit, ungrounded_text
from tests.conftest import git

INVALID = "unknown_key = 1\n"


@pytest.fixture
def wedged(run, repo: Path) -> Path:
    """Hooks installed; an invalid `.flowgit.toml` committed with --no-verify, and still checked out."""
    committed_base(repo)
    assert run(repo, "install-hook").code == 0
    (repo / ".flowgit.toml").write_text(INVALID)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "an invalid configuration", "--no-verify")
    return repo


def _state(text: str) -> str:
    return base_text(state=text)


def test_a_legitimate_change_is_judged_under_the_defaults_with_a_warning(run, wedged):
    (wedged / "CONTINUITY.md").write_text(_state("Focus: the breaker. Critical path: its half-open probe."))
    git(wedged, "add", "-A")
    res = commit(wedged, "state")
    assert res.returncode == 0, res.stderr + res.stdout
    checked = subprocess.run(["git", "log", "-1", "--format=%s"], cwd=wedged, capture_output=True, text=True)
    assert checked.stdout.strip() == "state"


def test_the_warning_names_the_invalid_configuration(run, wedged):
    (wedged / "CONTINUITY.md").write_text(_state("Focus: the breaker. Critical path: its half-open probe."))
    git(wedged, "add", "-A")
    res = run(wedged, "check", "--json")
    assert res.code == 0, res.out + res.err
    data = json.loads(res.out)
    (g808,) = [f for f in data["findings"] if f["code"] == "G808"]
    assert g808["severity"] == "warning" and ".flowgit.toml" in g808["path"]
    assert "unknown setting `unknown_key`" in g808["message"]
    assert "working tree's configuration is not read here" in res.err


def test_the_repair_commits_through_the_hook(run, wedged):
    (wedged / ".flowgit.toml").unlink()
    git(wedged, "add", "-A")
    res = commit(wedged, "remove the invalid configuration")
    assert res.returncode == 0, res.stderr + res.stdout


def test_the_defaults_still_refuse_a_violation_meanwhile(run, wedged):
    """An invalid configuration is no way around the rules: an ungrounded graduation is refused."""
    (wedged / "CONTINUITY.md").write_text(ungrounded_text())
    git(wedged, "add", "-A")
    res = commit(wedged, "graduate without evidence")
    assert res.returncode != 0 and "G101" in res.stdout + res.stderr


def test_a_new_invalid_edit_of_ones_own_is_refused(run, wedged):
    (wedged / ".flowgit.toml").write_text("another_unknown = 2\n")
    git(wedged, "add", "-A")
    res = run(wedged, "check")
    assert res.code == 2 and "index:.flowgit.toml" in res.err and "another_unknown" in res.err


def test_the_audit_with_the_invalid_configuration_checked_out_reports_a402(run, wedged):
    """What CI sees: the working tree holds the invalid file; the audit reports it, exit 1, not 2."""
    bad = git(wedged, "rev-parse", "HEAD").strip()
    res = run(wedged, "audit", "--json")
    assert res.code == 1, res.err
    data = json.loads(res.out)
    assert [(f["code"], f["commit"]) for f in data["findings"]] == [("A402", bad)]


def test_the_hook_and_the_audit_agree_on_the_commits_after_it(run, wedged):
    (wedged / "CONTINUITY.md").write_text(_state("Focus: the breaker. Critical path: its half-open probe."))
    git(wedged, "add", "-A")
    assert commit(wedged, "state").returncode == 0
    (wedged / ".flowgit.toml").unlink()
    git(wedged, "add", "-A")
    assert commit(wedged, "repair").returncode == 0
    res = run(wedged, "audit", "--json", "--range", "HEAD~2..HEAD")
    assert res.code == 0 and json.loads(res.out)["findings"] == []


def test_another_configuration_file_edited_meanwhile_is_judged_under_the_defaults(run, wedged):
    """A pyproject.toml version bump re-reads the unchanged invalid `.flowgit.toml` from the index: it is the
    base's own invalidity, not one of the commit's, so the defaults judge (G808), as for the base."""
    (wedged / "pyproject.toml").write_text("[project]\nname = \"x\"\nversion = \"1.1\"\n")
    git(wedged, "add", "-A")
    res = commit(wedged, "bump the version")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "G808" in res.stdout + res.stderr and "index:.flowgit.toml" not in res.stdout + res.stderr
