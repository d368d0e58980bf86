"""Where a wrap's journal lives, and whether one is there: asked by the gate's hook on every commit.

A module of its own, importing nothing but :mod:`pathlib`, so the hook asks the
question for the price of one ``stat``; the lock that tells a running wrap from
an interrupted one (:mod:`flowgit.lock`) is imported only when a journal is there.
"""

from __future__ import annotations

from pathlib import Path

WRAP_JOURNAL = "flowgit-wrap.journal"  # written by flowgit.wrap.transaction, removed when the wrap ends


def pending_journal(git_dir: str | Path) -> Path | None:
    """The journal a wrap left in ``git_dir`` (None when there is none): running, or interrupted."""
    path = Path(git_dir) / WRAP_JOURNAL
    return path if path.exists() else None
