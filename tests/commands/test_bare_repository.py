"""A bare repository is named as one by every command, never read as "no episodes" or "not a repository"."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.conftest import git


@pytest.fixture
def bare(repo: Path, tmp_path: Path, run) -> Path:
    """A bare clone of a set-up repository whose HEAD's store holds one episode."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    assert run(repo, "init", "--commit", "--no-hooks").code == 0
    assert run(repo, "episode", "add", "--session", "s1", "--type", "finding", "hello bare").code == 0
    git(repo, "commit", "-qam", "an episode")
    path = tmp_path / "b.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(path))
    assert git(path, "show", "HEAD:.flow/episodes.jsonl").count("hello bare") == 1
    return path


def everything(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


MESSAGE = "this is a bare repository (or a git directory): flowgit needs a working tree"
FIX = "run it in a clone with a working tree"


@pytest.mark.parametrize("argv", [
    ["episode", "list"],
    ["episode", "search", "hello"],
    ["episode", "show", "ep-0000"],
    ["init"],
    ["init", "--commit"],
    ["setup", "claude", "--project", "--dry-run"],
    ["setup", "claude", "--project"],
    ["status"],  # the wording the others now share
])
def test_a_bare_repository_is_refused_by_name(bare: Path, run, argv: list[str]) -> None:
    before = everything(bare)
    res = run(bare, *argv)
    assert res.code == 2 and res.out == ""
    assert res.err == f"flowgit: error: {bare}: {MESSAGE} (fix: {FIX})\n"
    as_json = run(bare, *argv, "--json")
    assert as_json.code == 2 and as_json.err == ""
    assert json.loads(as_json.out) == {"error": {"message": MESSAGE, "fix": FIX, "file": str(bare), "line": None,
                                                  "option": None}}
    assert everything(bare) == before
    assert not (bare / ".flow").exists() and not (bare / ".claude").exists() and not (bare / "CONTINUITY.md").exists()


def test_a_subdirectory_of_a_bare_repository_is_refused_too(bare: Path, run) -> None:
    res = run(bare / "refs", "episode", "list")
    assert res.code == 2 and res.err == f"flowgit: error: {bare}: {MESSAGE} (fix: {FIX})\n"


def test_outside_any_repository_the_messages_are_unchanged(tmp_path: Path, run) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    res = run(loose, "init")
    assert res.code == 2
    assert res.err == "flowgit: error: not inside a git repository (fix: run `git init` first, or cd into your " \
                      "repository)\n"
    res = run(loose, "setup", "claude", "--project", "--dry-run")
    assert res.code == 2
    assert res.err == "flowgit: error: not inside a git repository (fix: run it in your project, or use --user)\n"
    res = run(loose, "episode", "list")  # no store to read here: said, not "no episodes" (exit 0)
    assert res.code == 2
    assert res.err == "flowgit: error: not inside a git repository (fix: run `git init` first, or cd into your " \
                      "repository)\n"
    assert sorted(loose.iterdir()) == []


def test_a_store_given_outside_the_bare_repository_is_still_read(bare: Path, tmp_path: Path, run) -> None:
    store = tmp_path / "elsewhere.jsonl"
    store.write_bytes(git(bare, "show", "HEAD:.flow/episodes.jsonl").encode())
    res = run(bare, "--store", str(store), "episode", "list")
    assert res.code == 0 and "hello bare" in res.out and res.out.endswith("1 episode(s)\n")
