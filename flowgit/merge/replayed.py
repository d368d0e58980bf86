"""A pull that rebased: the wraps it replayed, and the commit to go back to.

With ``pull.rebase=true`` (a common global setting) a plain ``git pull``
replays this clone's wraps onto the remote's: each is then a commit its
author never wrote, judged against a parent it was not written on, and the
merge driver's notes land in ordinary commits. The audit then refuses the
push, rightly, but the way out is not to repair each commit: it is to undo
the pull and let ``flowgit sync`` merge instead. The branch's reflog says
where the branch stood before the rebase, even after ``ORIG_HEAD`` moved on.
"""

from __future__ import annotations

import re
from pathlib import Path

from flowgit.git import git

# git's reflog subject for the end of a rebase, whoever started it: `rebase (finish)`, `rebase -i (finish)`,
# `pull --rebase (finish)`, or `pull (finish)` under pull.rebase=true
FINISH_RE = re.compile(r"^[\w -]*\(finish\): refs/heads/")
LOOKED_AT = 50  # reflog entries read: a rebase is found among the newest, or not at all


def rebased_from(root: Path) -> str | None:
    """The commit the current branch pointed at before the rebase that made its tip, or None when its tip is
    not the result of a rebase (a detached HEAD, no reflog, or anything done since, such as a commit)."""
    branch = git(root, "symbolic-ref", "-q", "HEAD", check=False).decode().strip()
    if not branch.startswith("refs/heads/"):
        return None
    log = git(root, "reflog", "show", f"-{LOOKED_AT}", "--format=%H %gs", branch, "--", check=False)
    entries = [line.split(" ", 1) for line in log.decode("utf-8", "replace").splitlines() if " " in line]
    if not entries:
        return None
    tip = entries[0][0]
    for at, (sha, subject) in enumerate(entries):
        if sha != tip:
            return None  # the branch moved to its tip by something other than a rebase
        if FINISH_RE.match(subject):
            return entries[at + 1][0] if at + 1 < len(entries) else None
    return None


def undo_the_rebase(before: str) -> str:
    """The advice for wraps a pull rebased: go back, and let sync merge."""
    return (f"a `git pull` (or rebase) replayed your wraps onto the remote's, where each is judged against a parent "
            f"it was not written on: undo it with `git reset --keep {before[:12]}` (where the branch stood "
            "before), then run `flowgit sync`, which merges instead (set `git config pull.rebase false` in this "
            "clone so a plain `git pull` merges too)")
