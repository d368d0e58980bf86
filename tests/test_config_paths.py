"""Configured paths stay inside the repository: a cloned config cannot send writes elsewhere."""

from __future__ import annotations

import os

import pytest

from flowgit.config import load_config
from flowgit.errors import FlowgitError
from tests.conftest import tree_digest


@pytest.mark.parametrize("key, value, why", [
    ("store", "../outside.jsonl", "outside the repository"),
    ("store", "/tmp/flowgit-anywhere.jsonl", "outside the repository"),
    ("continuity", "../../etc/CONTINUITY.md", "outside the repository"),
    ("store", ".git/hooks/post-commit", "git's own directory"),
    ("store", "sub/.git/x.jsonl", "git's own directory"),
    ("continuity", "docs/.GIT/CONTINUITY.md", "git's own directory"),
    ("store", "link/episodes.jsonl", "outside the repository"),
    ("store", ".", "git's own directory (or at the root)"),
    ("store", "", "non-empty path string"),
    ("continuity", "docs/../CONTINUITY.md", "has a `..` in it"),
])
def test_configured_paths_outside_the_repository_are_refused(repo, run, key, value, why):
    outside = repo.parent / "elsewhere"
    outside.mkdir()
    (repo / "link").symlink_to(outside)
    (repo / ".flowgit.toml").write_text(f'{key} = "{value}"\n')
    with pytest.raises(FlowgitError) as info:
        load_config(repo)
    assert why in info.value.message and info.value.path.endswith(".flowgit.toml")
    before = tree_digest(repo.parent)
    res = run(repo, "episode", "add", "--type", "finding", "--content", "x", "--session", "s")
    assert res.code == 2 and why in res.err and "fix:" in res.err
    assert tree_digest(repo.parent) == before


@pytest.mark.parametrize("key, value, fixed", [
    ("store", "sub/../../{repo}/.flow/x.jsonl", 'store = ".flow/x.jsonl"'),  # (its fix was refused again)
    ("continuity", "docs/../CONTINUITY.md", 'continuity = "CONTINUITY.md"'),
    ("continuity", ".git/notes.md", 'continuity = "CONTINUITY.md"'),  # (not the store's path)
    ("store", ".git/x.jsonl", 'store = ".flow/episodes.jsonl"'),
])
def test_the_fix_of_a_refused_path_is_a_path_that_is_accepted(repo, key, value, fixed):
    (repo / "sub").mkdir()
    (repo / ".flowgit.toml").write_text(f'{key} = "{value.format(repo=repo.name)}"\n')
    with pytest.raises(FlowgitError) as info:
        load_config(repo)
    assert fixed in info.value.fix, info.value.fix
    (repo / ".flowgit.toml").write_text(fixed + "\n")
    load_config(repo)  # the fix, applied, is accepted


def test_a_non_string_path_is_refused(repo):
    (repo / ".flowgit.toml").write_text("store = 3\n")
    with pytest.raises(FlowgitError, match="must be a non-empty path string"):
        load_config(repo)


def test_paths_inside_are_fine_and_options_are_the_users_choice(repo, tmp_path):
    (repo / ".flowgit.toml").write_text('store = "memory/eps.jsonl"\ncontinuity = "docs/C.md"\n')
    cfg = load_config(repo)
    assert cfg.store == repo / "memory" / "eps.jsonl" and cfg.continuity == repo / "docs" / "C.md"
    cfg = load_config(repo, store=str(tmp_path / "mine.jsonl"))  # given on the command line: not limited
    assert cfg.store == tmp_path / "mine.jsonl"
    os.chdir(repo)
    assert load_config().store_rel == "memory/eps.jsonl"


@pytest.mark.parametrize("key, value", [
    ("store", ".flowgit.toml"), ("store", "pyproject.toml"), ("continuity", ".pre-commit-config.yaml"),
    ("store", ".gitattributes"), ("store", ".flow/.gitattributes"), ("continuity", "./pyproject.toml"),
])
def test_a_memory_file_that_is_a_configuration_file_is_refused_and_nothing_is_written(repo, run, key, value):
    """An `episode add` into pyproject.toml left the configuration invalid TOML, and every later command with it."""
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.flowgit]\n'
                                         f'{key} = "{value}"\n')
    (repo / ".flow").mkdir(exist_ok=True)
    with pytest.raises(FlowgitError) as info:
        load_config(repo)
    assert "a file that configures flowgit or git" in info.value.message and "e.g." in info.value.fix
    before = tree_digest(repo.parent)
    res = run(repo, "episode", "add", "--type", "finding", "--content", "x", "--session", "s")
    assert res.code == 2 and "configures flowgit or git" in res.err
    assert tree_digest(repo.parent) == before


def test_a_typed_store_that_is_a_configuration_file_names_the_option(repo, run):
    res = run(repo, "--store", "pyproject.toml", "episode", "add", "--type", "finding", "--content", "x",
              "--session", "s", "--json")
    assert res.code == 2
    import json

    assert json.loads(res.out)["error"]["option"] == "--store"


@pytest.mark.parametrize("layout", ["a checked-out submodule", "a submodule not checked out", "a nested clone"])
def test_a_memory_inside_another_repository_is_refused_and_nothing_is_written(repo, run, tmp_path, layout):
    """`continuity = "mem/CONTINUITY.md"` where `mem` is a submodule (or a clone kept inside): init wrote the
    memory into that repository's working tree and stopped on git's raw `Pathspec … is in submodule`, and
    `episode add` appended to the other repository's store. Refused now, as a path outside is, before any
    write."""
    import subprocess

    from tests.conftest import committed_repo, git

    mem = committed_repo(tmp_path / "mem", "readme", "x\n", "mem")
    if layout == "a nested clone":
        git(repo, "clone", "-q", str(mem), "mem")
    else:
        subprocess.run(["git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(mem), "mem"],
                       cwd=repo, check=True, capture_output=True)
        if layout == "a submodule not checked out":
            git(repo, "commit", "-qm", "the submodule")
            git(repo, "submodule", "deinit", "-q", "-f", "mem")
            assert not (repo / "mem" / ".git").exists()
    (repo / ".flowgit.toml").write_text('continuity = "mem/CONTINUITY.md"\nstore = "mem/.flow/episodes.jsonl"\n')
    before = tree_digest(repo)
    for args in (("init", "--commit"), ("episode", "add", "--type", "finding", "--session", "s1", "x")):
        res = run(repo, *args)
        assert res.code == 2 and "is inside mem, another repository" in res.err, res.out + res.err
        assert "Traceback" not in res.err and "fatal:" not in res.err
    assert tree_digest(repo) == before and not (repo / "mem" / "CONTINUITY.md").exists()
