"""A sparse checkout that leaves the memory out: the files are in HEAD, only not here."""

from __future__ import annotations

import json

from tests.conftest import git, tree_digest


def test_a_memory_outside_the_sparse_checkout_is_named_and_never_written_over(run, repo, tmp_path):
    (repo / "app").mkdir()
    (repo / "app" / "main.txt").write_text("code\n")
    git(repo, "add", "app")
    git(repo, "commit", "-qm", "app")
    assert run(repo, "init", "--commit").code == 0
    assert run(repo, "episode", "add", "--type", "finding", "--session", "s1", "the cache warmed").code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "an episode")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--no-checkout", str(repo), str(clone))
    git(clone, "sparse-checkout", "set", "--no-cone", "/app/")
    git(clone, "checkout", "-q")
    assert not (clone / "CONTINUITY.md").exists()
    before = tree_digest(clone)
    status = run(clone, "status")
    assert status.code == 0 and "outside this sparse checkout" in status.out and "run `flowgit init`" not in status.out
    view = json.loads(run(clone, "status", "--json").out)
    assert sorted(view["outside_sparse_checkout"]) == [".flow/episodes.jsonl", "CONTINUITY.md"]
    added = run(clone, "episode", "add", "--type", "finding", "--session", "s2", "recorded in the sparse clone")
    assert added.code == 2 and "git sparse-checkout add .flow" in added.err, added.err
    init = run(clone, "init")
    assert init.code == 2 and "outside this sparse checkout" in init.err
    assert tree_digest(clone) == before and git(clone, "status", "--porcelain") == ""
    git(clone, "sparse-checkout", "disable")
    assert run(clone, "episode", "add", "--type", "finding", "--session", "s2", "now it can be recorded").code == 0
