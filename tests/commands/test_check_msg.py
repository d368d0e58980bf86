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
