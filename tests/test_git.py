"""git plumbing: literal paths, both hash functions, state read without rewriting the index."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from flowgit.git import (blob_oid, enclosing_git_dir, git_dir, hex_len, index_tree, inside_git_dir, object_format,
                         write_tree)
from tests.conftest import committed_repo, git, tree_digest


def test_object_format_and_blob_ids(tmp_path):
    for fmt, n in (("sha1", 40), ("sha256", 64)):
        root = tmp_path / fmt
        root.mkdir()
        git(root, "init", "-q", f"--object-format={fmt}")
        (root / "f").write_bytes(b"hello\n")
        assert object_format(root) == fmt and hex_len(root) == n
        assert git(root, "hash-object", "f").strip() == blob_oid(b"hello\n", n)


def test_index_tree_never_rewrites_the_index(repo):
    (repo / "a").write_text("a\n")
    git(repo, "add", "a")
    index = repo / ".git" / "index"
    before = hashlib.sha256(index.read_bytes()).hexdigest()
    tree = index_tree(repo, index)
    assert hashlib.sha256(index.read_bytes()).hexdigest() == before  # plain write-tree adds a cache-tree
    assert tree == write_tree(repo)
    assert index_tree(repo, repo / ".git" / "no-such-index") == git(repo, "hash-object", "-t", "tree",
                                                                      "/dev/null").strip()


def test_paths_with_dollars_and_spaces_are_literal(tmp_path, monkeypatch):
    monkeypatch.setenv("V", "B")
    odd = tmp_path / "proj$V and ~ spaces"
    odd.mkdir()
    git(odd, "init", "-q")
    assert git_dir(odd) == odd / ".git"


def test_the_git_directory_of_a_clone_a_worktree_and_a_hook_environment(tmp_path, monkeypatch):
    """A clone's own ``.git`` directory is read without git; a worktree's ``.git`` file and a ``GIT_DIR`` set
    in the environment (git sets it for a worktree's hooks) are git's to answer: the worktree's own
    directory, in a path whose ``$`` is taken literally."""
    monkeypatch.setenv("V", "B")
    main = tmp_path / "main"
    git(tmp_path, "init", "-q", "main")
    (main / "f").write_text("x")
    git(main, "add", "f")
    git(main, "commit", "-qm", "x")
    worktree = tmp_path / "wt$V"
    git(main, "worktree", "add", "-q", str(worktree))
    assert git_dir(main) == main / ".git"
    own = git_dir(worktree)
    assert own.parent == main / ".git" / "worktrees" and (own / "HEAD").is_file() and "$V" in own.name
    monkeypatch.setenv("GIT_DIR", str(own))
    assert git_dir(main) == own  # the environment names the repository: git's answer, not the folder's


def test_git_dirs_are_recognised(tmp_path):
    git(tmp_path, "init", "-q", "--bare", "b.git")
    assert inside_git_dir(tmp_path / "b.git" / ".flow" / "x") == tmp_path / "b.git"
    git(tmp_path, "init", "-q", "w")
    assert inside_git_dir(tmp_path / "w" / ".flow") is None
    (tmp_path / "w" / "f").write_text("x")
    git(tmp_path / "w", "add", "f")
    git(tmp_path / "w", "commit", "-qm", "x")
    git(tmp_path / "w", "worktree", "add", "-q", str(tmp_path / "wt"))
    assert enclosing_git_dir(tmp_path / "wt" / ".flow") == Path(git(tmp_path / "wt", "rev-parse",
                                                                    "--absolute-git-dir").strip())


def test_blobs_step_over_a_directory_and_keep_reading(repo):
    """A spec that names a tree gets None, and the answers after it stay aligned with their specs."""
    from flowgit.git import blobs

    (repo / ".flowgit.toml").mkdir()
    (repo / ".flowgit.toml" / "inner.txt").write_text("not a config\n")
    (repo / "after.txt").write_text("the file after\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a directory where a file is expected", "--no-verify")
    assert blobs(repo, ["HEAD:.flowgit.toml", "HEAD:after.txt", "HEAD:absent", "HEAD:after.txt"]) == [
        None, b"the file after\n", None, b"the file after\n"]


def test_a_directory_that_no_longer_exists_is_named_not_taken_for_a_missing_git(tmp_path):
    from flowgit.errors import FlowgitError
    from flowgit.git import git as run_git

    gone = tmp_path / "moved-away"
    with pytest.raises(FlowgitError, match="no longer exists") as info:
        run_git(gone, "status")
    assert str(gone) in str(info.value) and "not installed" not in str(info.value)


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_an_index_tree_is_computed_in_memory_as_git_writes_it(tmp_path, object_format):
    """Recovery proves the index's tree without writing anything (a copy of the index failed on a full disk,
    and the rollback with it): the id must be git's own, whatever the index holds."""
    import subprocess

    from flowgit.git import index_tree, write_tree

    root = tmp_path / "r"
    root.mkdir()
    subprocess.run(["git", "init", "-q", f"--object-format={object_format}"], cwd=root, check=True)
    assert index_tree(root, root / ".git" / "index") == write_tree(root)  # no index yet: the empty tree
    for rel, text in (("a/b/x", "1"), ("a.txt", "2"), ("a-b", "3"), ("a.d/f", "4"), ("c/y", "5"), ("exe", "6")):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "exe").chmod(0o755)
    (root / "link").symlink_to("a.txt")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    gitlink = "1" * (40 if object_format == "sha1" else 64)
    subprocess.run(["git", "update-index", "--add", "--cacheinfo", f"160000,{gitlink},sub"], cwd=root, check=True)
    index = root / ".git" / "index"
    before = index.read_bytes()
    tree = index_tree(root, index)
    assert index.read_bytes() == before  # read, never rewritten
    assert tree == write_tree(root)
    blob = subprocess.run(["git", "hash-object", "-w", "a.txt"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip()
    subprocess.run(["git", "update-index", "--index-info"], cwd=root, check=True,
                   input=f"100644 {blob} 1\tconflicted\n100644 {blob} 2\tconflicted\n", text=True)
    assert index_tree(root, index) is None and write_tree(root) is None  # unmerged: no tree


def test_a_repository_named_by_git_dir_is_said_unsupported_never_told_to_git_init(tmp_path, monkeypatch):
    """The dotfiles layout: git finds the repository through GIT_DIR/GIT_WORK_TREE; `git init` there would
    nest a second repository in a working tree that has one."""
    import subprocess

    from flowgit.errors import FlowgitError
    from flowgit.git import require_repo

    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "cfg.git")], check=True)
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "cfg.git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path / "home"))
    with pytest.raises(FlowgitError) as caught:
        require_repo(tmp_path / "home")
    assert "GIT_DIR/GIT_WORK_TREE" in caught.value.message and "do not run `git init`" in caught.value.fix


def _hooked_project(tmp_path: Path, memory: Path, plan: Path, worktree: bool) -> Path:
    """A project whose hook wraps another repository (the memory) without clearing git's environment: a
    post-commit hook of a commit in a linked worktree (git exports GIT_DIR and GIT_INDEX_FILE), or a pre-commit
    hook of a ``commit -a`` in the main checkout (git exports its absolute ``index.lock``)."""
    import sys

    project = committed_repo(tmp_path / "project", "a.txt", "a\n", "base")
    hook = project / ".git" / "hooks" / ("post-commit" if worktree else "pre-commit")
    hook.write_text(f"#!/bin/sh\ncd '{memory}' && FLOWGIT_SESSION=s1 '{sys.executable}' -m flowgit wrap "
                    f"--plan '{plan}' > '{tmp_path}/hook.out' 2>&1\nexit 0\n")
    hook.chmod(0o755)
    if not worktree:
        return project
    git(project, "worktree", "add", "-q", str(tmp_path / "project-wt"), "-b", "feature")
    return tmp_path / "project-wt"


@pytest.mark.parametrize("worktree", [True, False], ids=["linked-worktree", "commit-a"])
def test_a_hook_environment_naming_another_repository_is_refused(tmp_path, run, worktree):
    """A project's hook that runs flowgit in the memory repository inherits the project's GIT_DIR /
    GIT_INDEX_FILE: flowgit refuses (exit 2, the variables and the fix named) and neither repository changes;
    before, the memory's wrap was committed on the project's branch."""
    import json

    memory = tmp_path / "memory"
    memory.mkdir()
    git(memory, "init", "-q")
    assert run(memory, "init", "--commit").code == 0
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"state": "Focus: the project.",
                                "episodes": [{"type": "finding", "content": "project commit made"}]}))
    memory_head, memory_files = git(memory, "rev-parse", "HEAD"), tree_digest(memory)
    work = _hooked_project(tmp_path, memory, plan, worktree)
    (work / "a.txt").write_text("b\n")
    git(work, "commit", "-qam", "project work")
    said = (tmp_path / "hook.out").read_text()
    assert "another repository" in said and "GIT_INDEX_FILE" in said and "env -u" in said, said
    assert "Traceback" not in said
    assert git(work, "ls-tree", "-r", "--name-only", "HEAD") == "a.txt\n"
    assert git(work, "log", "-1", "--format=%s") == "project work\n"
    assert git(memory, "rev-parse", "HEAD") == memory_head and tree_digest(memory) == memory_files
    assert git(memory, "status", "--porcelain") == ""


def test_git_environments_that_name_this_repository_are_accepted(tmp_path, monkeypatch):
    """The variables git sets for a repository's own hooks (a relative or absolute index, a worktree's
    GIT_DIR, a temporary index of git's or outside any repository) pass; only another repository's fail."""
    from flowgit.errors import FlowgitError
    from flowgit.git import refuse_foreign_git_environment

    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q")
    git(main, "commit", "-q", "--allow-empty", "-m", "base")
    git(main, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "side")
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    wt_dir = main / ".git" / "worktrees" / "wt"
    accepted = [(main, {"GIT_INDEX_FILE": ".git/index"}),
                (main, {"GIT_INDEX_FILE": str(main / ".git" / "index.lock")}),
                (main, {"GIT_INDEX_FILE": str(main / ".git" / "next-index-123.lock")}),
                (main, {"GIT_INDEX_FILE": str(tmp_path / "scratch-index")}),
                (main, {"GIT_DIR": ".git", "GIT_WORK_TREE": str(main)}),
                (tmp_path / "wt", {"GIT_DIR": str(wt_dir), "GIT_INDEX_FILE": str(wt_dir / "index")}),
                (tmp_path / "wt", {"GIT_COMMON_DIR": str(main / ".git")})]
    refused = [(main, {"GIT_DIR": str(other / ".git")}),
               (main, {"GIT_INDEX_FILE": str(other / ".git" / "index")}),
               (main, {"GIT_WORK_TREE": str(other)}),
               (main, {"GIT_DIR": str(wt_dir)}),  # the worktree's, not the main checkout's
               (tmp_path / "wt", {"GIT_DIR": str(main / ".git")}),
               (other, {"GIT_DIR": str(wt_dir), "GIT_INDEX_FILE": str(wt_dir / "index")})]
    for root, env in accepted + refused:
        for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        if (root, env) in accepted:
            refuse_foreign_git_environment(root)
        else:
            with pytest.raises(FlowgitError, match="another repository"):
                refuse_foreign_git_environment(root)
