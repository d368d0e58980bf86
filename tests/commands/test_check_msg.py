"""`flowgit check-msg FILE` reads a regular file only: a FIFO or a device is refused, never waited on."""

from __future__ import annotations

import os

import pytest


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_a_message_file_that_is_not_a_regular_file_is_refused(repo, run, kind):
    assert run(repo, "init", "--no-hooks").code == 0
    target = repo.parent / "msg"
    if kind == "fifo":
        os.mkfifo(target)  # nobody writes it: a read would block forever
    elif kind == "directory":
        target.mkdir()
    else:
        target = "/dev/zero"
    result = run(repo, "check-msg", str(target))
    assert result.code == 2, result.err
    assert "cannot read the commit message" in result.err and str(target) in result.err
    assert "COMMIT_EDITMSG" in result.err  # the fix names what git gives the hook


def test_an_episodes_trailer_on_a_commit_that_leaves_the_memory_alone_is_held_to_heads_store(repo, run):
    """Nothing judged is staged, so the store is the one HEAD's committed configuration names: an uncommitted
    configuration pointing at a store of its own (holding the claimed episode) vouches for nothing."""
    from tests.checks.gate_fixtures import committed_base, ep
    from tests.conftest import git

    committed_base(repo)
    fake = ep("an episode no wrap recorded", "s9")
    (repo / "fake.jsonl").write_text(fake.to_json() + "\n")
    (repo / ".flowgit.toml").write_text('store = "fake.jsonl"\n')
    git(repo, "add", "fake.jsonl")
    message = repo.parent / "MSG"
    message.write_text(f"notes\n\nEpisodes: {fake.id}\n")
    res = run(repo, "check-msg", str(message))
    assert res.code == 1 and f"names {fake.id}, which is not in the store the commit records" in res.out, res.out
