"""Where a wrap's journal lives, and whether one is there: asked by the gate's hook on every commit.

A module of its own, importing nothing but :mod:`pathlib`, so the hook asks the
question for the price of one ``stat``; the lock that tells a running wrap from
an interrupted one (:mod:`flowgit.lock`) is imported only when a journal is there.
"""

from __future__ import annotations

from pathlib import Path

WRAP_JOURNAL = "flowgit-wrap.journal"  # written by flowgit.wrap.transaction, removed when the wrap ends
# Set by a wrap, to its own process id, for the `git commit` it runs: the one commit the gate lets through
# while that wrap's journal is there and the wrap holds the lock (any other is refused: G807).
WRAP_COMMIT_VARIABLE = "FLOWGIT_WRAP_COMMIT"


def pending_journal(git_dir: str | Path) -> Path | None:
    """The journal a wrap left in ``git_dir`` (None when there is none): running, or interrupted."""
    path = Path(git_dir) / WRAP_JOURNAL
    return path if path.exists() else None
