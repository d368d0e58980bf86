"""G811: a `.gitattributes` change that makes git re-encode, filter or merge the memory otherwise is refused by
the hook (staged attributes files at every level that can reach the judged files) and by the audit (so at push
and on the server); harmless attributes pass."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.checks.gate_fixtures import committed_base
from tests.conftest import git


@pytest.fixture
def project(tmp_path: Path, repo: Path, run) -> tuple[Path, Path]:
    """A memory set up by `flowgit init --commit` (hooks, `merge=flowgit` lines), pushed to a bare remote."""
    git(repo, "checkout", "-q", "-b", "main")
    committed_base(repo)
    assert run(repo, "init", "--commit").code == 0
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    return repo, remote


def commit(repo: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(["git", "commit", "-q", "-m", "attributes", *args], cwd=repo, capture_output=True,
                          text=True, env={**os.environ, **(env or {})})


def edit(repo: Path, path: str, change) -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(change(target.read_text() if target.exists() else ""))
    git(repo, "add", path)


REFUSED = [
    (".gitattributes", lambda t: t + "CONTINUITY.md working-tree-encoding=UTF-16LE-BOM\n",
     "CONTINUITY.md as `working-tree-encoding=UTF-16LE-BOM`"),
    (".gitattributes", lambda t: t.replace("CONTINUITY.md merge=flowgit", "CONTINUITY.md merge=union"),
     "CONTINUITY.md as `merge=union`"),
    (".gitattributes", lambda t: t.replace("CONTINUITY.md merge=flowgit\n", ""), "CONTINUITY.md as `merge unspecified"),
    (".gitattributes", lambda t: t + "*.md filter=tidy\n", "CONTINUITY.md as `filter=tidy`"),
    (".flow/.gitattributes", lambda t: t + "*.jsonl binary\n", ".flow/episodes.jsonl as `-merge`"),
]


@pytest.mark.parametrize("path, change, said", REFUSED, ids=["encoding", "union", "line-removed", "filter",
                                                            "deeper-binary"])
def test_an_attribute_that_takes_the_memory_away_is_refused_at_commit_and_at_push(run, project, path, change, said):
    repo, remote = project
    edit(repo, path, change)
    refused = commit(repo)
    assert refused.returncode != 0 and "G811" in refused.stdout + refused.stderr and said in refused.stdout + \
        refused.stderr, refused.stdout + refused.stderr
    checked = json.loads(run(repo, "check", "--json").out)["findings"]
    assert [(f["code"], f["path"]) for f in checked] == [("G811", path)] and checked[0]["line"], checked
    assert commit(repo, "--no-verify").returncode == 0
    audited = run(repo, "audit", "--range", "origin/main..HEAD", "--json")
    assert audited.code == 1 and [f["code"] for f in json.loads(audited.out)["findings"]] == ["G811"], audited.out
    pushed = subprocess.run(["git", "push", "origin", "main"], cwd=repo, capture_output=True, text=True)
    assert pushed.returncode != 0 and "G811" in pushed.stdout + pushed.stderr, pushed.stdout + pushed.stderr


def test_the_judging_repositorys_own_info_attributes_decide_nothing(run, project, tmp_path):
    """`info/attributes` overrides every `.gitattributes` in the repository that holds it: a clone, or a server
    that copies its default branch's file there. The verdict is the committed change's, wherever it is judged:
    the hook, the audit and the server's pre-receive all refuse the union merge."""
    repo, remote = project
    committed = git(repo, "show", "HEAD:.gitattributes")
    for gitdir in (repo / ".git", remote):
        (gitdir / "info").mkdir(exist_ok=True)
        (gitdir / "info" / "attributes").write_text(committed)
    assert run(repo, "install-hook", "--server", str(remote)).code == 0
    edit(repo, ".gitattributes", lambda t: t.replace("CONTINUITY.md merge=flowgit", "CONTINUITY.md merge=union"))
    refused = commit(repo)
    assert refused.returncode != 0 and "G811" in refused.stdout + refused.stderr, refused.stdout + refused.stderr
    assert commit(repo, "--no-verify").returncode == 0
    audited = run(repo, "audit", "--range", "origin/main..HEAD", "--json")
    assert audited.code == 1 and [f["code"] for f in json.loads(audited.out)["findings"]] == ["G811"], audited.out
    pushed = subprocess.run(["git", "push", "--no-verify", "origin", "main"], cwd=repo, capture_output=True,
                            text=True)
    assert pushed.returncode != 0 and "G811" in pushed.stderr, pushed.stderr


HARMLESS = [
    (".gitattributes", lambda t: t + "CONTINUITY.md diff=markdown linguist-documentation export-ignore\n"),
    (".gitattributes", lambda t: t + "*.md linguist-generated=false\n*.png binary\n*.bin filter=lfs\n"),
    (".flow/.gitattributes", lambda t: t + "*.jsonl -diff linguist-generated\n"),
    (".gitattributes", lambda t: t.replace("CONTINUITY.md merge=flowgit", "CONTINUITY.md merge=flowgit diff")),
]


@pytest.mark.parametrize("path, change", HARMLESS, ids=["diff-linguist-export", "other-files", "deeper-diff",
                                                        "same-driver"])
def test_a_harmless_attribute_passes_the_commit_and_the_push(run, project, path, change):
    repo, remote = project
    edit(repo, path, change)
    done = commit(repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert run(repo, "audit", "--range", "origin/main..HEAD").code == 0
    pushed = subprocess.run(["git", "push", "origin", "main"], cwd=repo, capture_output=True, text=True)
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr


def test_an_override_records_the_change_and_a_later_commit_is_not_refused_for_it(run, project):
    """Made with FLOWGIT_OVERRIDE it is on the record (a notice); the commits after it change no attribute."""
    repo, _ = project
    edit(repo, ".gitattributes", lambda t: t.replace("CONTINUITY.md merge=flowgit", "CONTINUITY.md merge=union"))
    done = commit(repo, env={"FLOWGIT_OVERRIDE": "a plain union on purpose"})
    assert done.returncode == 0, done.stdout + done.stderr
    edit(repo, "README", lambda t: "code\n")
    assert commit(repo).returncode == 0
    audited = json.loads(run(repo, "audit", "--range", "origin/main..HEAD", "--json").out)
    assert audited["ok"] and [f["code"] for f in audited["findings"]] == ["A301", "G811"], audited


def _two_branches(repo: Path) -> None:
    """`side` with a code commit, `main` with another: a merge of the two changes no attribute of its own."""
    git(repo, "checkout", "-qb", "side")
    edit(repo, "side.txt", lambda t: "side\n")
    assert commit(repo).returncode == 0
    git(repo, "checkout", "-q", "main")
    edit(repo, "main.txt", lambda t: "main\n")
    assert commit(repo).returncode == 0


def test_a_merge_that_changes_an_attribute_itself_is_refused_by_the_hook_and_the_audit(run, project):
    """Judged against every parent: the merge's own `-merge` line shows against both, so it stands (it once
    showed against the first parent only, and a merge answers only for what every parent shows)."""
    repo, _ = project
    _two_branches(repo)
    git(repo, "merge", "-q", "--no-commit", "side")
    edit(repo, ".gitattributes", lambda t: t + "CONTINUITY.md -merge\n")
    refused = commit(repo)
    assert refused.returncode != 0 and "G811" in refused.stdout + refused.stderr, refused.stdout + refused.stderr
    assert commit(repo, "--no-verify").returncode == 0
    assert len(git(repo, "rev-list", "--parents", "-1", "HEAD").split()) == 3
    audited = run(repo, "audit", "--range", "origin/main..HEAD", "--json")
    findings = json.loads(audited.out)["findings"]
    assert audited.code == 1 and [(f["code"], f["commit"][:12]) for f in findings] == \
        [("G811", git(repo, "rev-parse", "--short=12", "HEAD").strip())], audited.out


def test_a_merge_bringing_a_branchs_overridden_attribute_change_passes(run, project):
    """The other direction: the branch made the change under an override (on the record there); the merge
    only carries it, shows it against the first parent alone, and is not refused for it."""
    repo, _ = project
    _two_branches(repo)
    git(repo, "checkout", "-q", "side")
    edit(repo, ".gitattributes", lambda t: t.replace("CONTINUITY.md merge=flowgit", "CONTINUITY.md merge=union"))
    assert commit(repo, env={"FLOWGIT_OVERRIDE": "a plain union on purpose"}).returncode == 0
    git(repo, "checkout", "-q", "main")
    merged = subprocess.run(["git", "merge", "--no-edit", "side"], cwd=repo, capture_output=True, text=True)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    audited = json.loads(run(repo, "audit", "--range", "origin/main..HEAD", "--json").out)
    assert audited["ok"] and [f["code"] for f in audited["findings"]] == ["A301", "G811"], audited
    side_commit = git(repo, "rev-parse", "--short=12", "side").strip()
    assert {f["commit"][:12] for f in audited["findings"]} == {side_commit}


def test_attributes_are_judged_in_a_sha256_repository(run, tmp_path):
    """The private repository git is asked in reads the real one's objects in their own hash."""
    repo = tmp_path / "sha256"
    git(tmp_path, "init", "-q", "--object-format=sha256", str(repo))
    git(repo, "config", "user.email", "a@example.com")
    git(repo, "config", "user.name", "A")
    assert run(repo, "init", "--commit").code == 0
    edit(repo, ".gitattributes", lambda t: t + "*.png binary\n")
    assert commit(repo).returncode == 0
    edit(repo, ".gitattributes", lambda t: t.replace("CONTINUITY.md merge=flowgit", "CONTINUITY.md merge=union"))
    refused = commit(repo)
    assert refused.returncode != 0 and "G811" in refused.stdout + refused.stderr, refused.stdout + refused.stderr
