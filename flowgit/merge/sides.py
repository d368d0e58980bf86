"""What a merge driver run can learn about the two sides besides the three files git hands it.

git gives a driver the base, ours and theirs of one path. The continuity merge
also needs the *merged store* (a raised pattern keeps its level only if its
evidence holds there) and the *wraps' dates* (the newer REPLACE wins). Ours is
HEAD; theirs is the commit being merged (``GITHEAD_<sha>`` in the environment of
``git merge``), picked (the last ``pick`` in ``rebase-merge/done`` during
``git rebase`` and ``git pull --rebase``), or ``MERGE_HEAD`` /
``CHERRY_PICK_HEAD`` / ``REBASE_HEAD``. When theirs cannot be found, evidence is
checked against our store alone and the merge says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from flowgit.git import blobs, git, git_dir


@dataclass(frozen=True)
class CommitSide:
    sha: str
    timestamp: int  # the wrap's time: the author date survives a rebase
    date: str


def other_commit(root: Path) -> str | None:
    """The commit being merged into HEAD right now, if git left a trace of it."""
    for name in os.environ:
        if name.startswith("GITHEAD_") and len(name) > 20:
            return name[len("GITHEAD_"):]
    gdir = git_dir(root)
    done = gdir / "rebase-merge" / "done"
    if done.is_file():
        for line in reversed(done.read_text(encoding="utf-8", errors="replace").splitlines()):
            parts = line.split()
            if len(parts) >= 2 and parts[0] in ("pick", "p", "edit", "e", "reword", "r", "squash", "s",
                                                 "fixup", "f"):
                return _verify(root, parts[1])
    for ref in ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REBASE_HEAD"):
        if (gdir / ref).is_file():
            found = _verify(root, ref)
            if found:
                return found
    return None


def quotes_the_other_side(root: Path) -> bool:
    """Whether the driver quotes the other wrap's replaced text as a merge note: in a merge (`git merge`,
    `git pull`, as git's reflog action says), which makes a merge commit, the note's record; and in a rebase,
    whose replayed commit the gate then refuses (G304: `flowgit sync` merges instead when both wraps replaced
    a section). A cherry-pick or a revert replays one commit with no such way back: the newer text stands."""
    action = os.environ.get("GIT_REFLOG_ACTION", "")
    if action.startswith(("merge", "pull")):
        return True
    gdir = git_dir(root)
    return (gdir / "rebase-merge").is_dir() or (gdir / "rebase-apply").is_dir()


def _verify(root: Path, rev: str) -> str | None:
    out = git(root, "rev-parse", "-q", "--verify", f"{rev}^{{commit}}", check=False).strip()
    return out.decode() if out else None


def describe(root: Path, *revs: str | None) -> list[CommitSide | None]:
    """Each revision's commit and wrap date, from one ``git show``."""
    wanted = [r for r in revs if r]
    out = git(root, "show", "-s", "--format=%H %at %as", *wanted, "--", check=False).decode().split("\n") \
        if wanted else []
    found = iter(out)
    result: list[CommitSide | None] = []
    for rev in revs:
        parts = next(found, "").split() if rev else []
        result.append(CommitSide(parts[0], int(parts[1]), parts[2]) if len(parts) == 3 else None)
    return result


def stores(root: Path, store_rel: str, ours: CommitSide | None, theirs: CommitSide | None) -> tuple[bytes, bytes]:
    """Both sides' stores as committed (empty when a side or its store is unknown)."""
    specs = [f"{c.sha}:{store_rel}" for c in (ours, theirs) if c]
    found = iter(blobs(root, specs))
    return tuple((next(found) or b"") if c else b"" for c in (ours, theirs))  # type: ignore[return-value]
