"""What a merge driver run can learn about the two sides besides the three files git hands it.

git gives a driver the base, ours and theirs of one path. The continuity merge
also needs the *merged store* (a raised pattern keeps its level only if its
evidence holds there) and the *wraps' dates* (the newer REPLACE wins). Ours is
HEAD; theirs is the commit being merged (``GITHEAD_<sha>`` in the environment of
``git merge``), picked (the last ``pick`` in ``rebase-merge/done`` during
``git rebase`` and ``git pull --rebase``), or ``MERGE_HEAD`` /
``CHERRY_PICK_HEAD`` / ``REBASE_HEAD``. A commit replayed by ``git cherry-pick``
or ``git revert`` (:func:`replayed`) is read from the sequencer's list or the
running git's own arguments, with the base git merges it on: the picked commit's
parent (for a revert, the two swap). When theirs cannot be found, evidence is
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
    author: str = ""  # who made the wrap, and in which session: what a merge note names it by (a teammate
    session: str = ""  # reading it does not know which side was "ours" when someone else's sync merged)

    def who(self) -> str:
        """"by Bob, session b1" (the parts known), or ""."""
        return ", ".join(part for part in (self.author and f"by {self.author}",
                                           self.session and f"session {self.session}") if part)


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
            if parts and parts[0] in ("merge", "m"):
                break  # `--rebase-merges` redoing a merge: git names the side it merges in MERGE_HEAD (below)
            if len(parts) >= 2 and parts[0] in ("pick", "p", "edit", "e", "reword", "r", "squash", "s",
                                                 "fixup", "f"):
                return _verify(root, parts[1])
    for ref in ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REBASE_HEAD"):
        if (gdir / ref).is_file():
            found = _verify(root, ref)
            if found:
                return found
    return None


# git commands that run the driver with no merge commit to follow: a cherry-pick or a revert replays one commit
# into a non-merge commit, and so does `git am -3` a mailed patch (its commit stays where it was made); a stash
# applied (`git stash pop`, after `flowgit sync` asked for a stash) and a `checkout -m`/`switch -m` carry
# working-tree edits over. A note is refused outside a merge (G304). (`git rebase --apply` runs `git am
# --rebasing`: a rebase, whose replayed commits leave their branch, so the other wrap's text is quoted.)
NO_MERGE_COMMIT = frozenset({"cherry-pick", "revert", "am", "stash", "checkout", "switch"})


def quotes_the_other_side(root: Path) -> bool:
    """Whether the driver quotes the other wrap's replaced text as a merge note: unless git runs it for a
    command after which no merge commit comes (:data:`NO_MERGE_COMMIT`), where a note is refused (G304)
    and there is no way back (a rebase's replayed commit is refused too, and `flowgit sync` merges instead).
    Any other merge, `git merge-tree` included, or a git this cannot tell, quotes it: nothing is lost. (A
    `checkout -m FILE` in a merge that stopped on a conflict redoes that merge: its commit follows.)"""
    argv = _running_git_argv()
    command = git_command_of(argv) if argv else None
    if command in ("checkout", "switch") and (git_dir(root) / "MERGE_HEAD").is_file():
        return True
    if command == "am" and "--rebasing" in (argv or []):
        return True
    return command not in NO_MERGE_COMMIT


GIT_OPTIONS_WITH_VALUE = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--exec-path"})


@dataclass(frozen=True)
class Replay:
    """A commit git replays onto HEAD as a three-way merge: ``theirs`` merged on ``base`` (a cherry-pick of C:
    C on C's parent; a revert of C: C's parent on C)."""

    theirs: str
    base: str


REPLAYING = ("cherry-pick", "revert")
MAINLINE_OPTIONS = ("-m", "--mainline")
PICK_OPTIONS_WITH_VALUE = frozenset({*MAINLINE_OPTIONS, "-s", "--strategy", "-X", "--strategy-option",
                                     "--cleanup"})


def replayed(root: Path) -> Replay | None:
    """The commit a running ``git cherry-pick``/``git revert`` replays, and the base git merges it on; None
    for any other git command, or where it cannot be told (then the caller reads the other traces)."""
    argv = _running_git_argv()
    command = git_command_of(argv) if argv else None
    if command not in REPLAYING:
        return None
    rev, mainline = _sequencer_current(root, command)
    if rev is None:
        rev, mainline = _one_revision(argv[argv.index(command) + 1:] if command in argv else argv[1:])
    commit = _verify(root, rev) if rev else None
    # git replays a commit of one parent on that parent whatever `-m` says (a list may mix merges with others)
    parent = (_verify(root, f"{commit}^{mainline}") or _verify(root, f"{commit}^1")) if commit else None
    if commit is None or parent is None:
        return None
    return Replay(commit, parent) if command == "cherry-pick" else Replay(parent, commit)


def _sequencer_current(root: Path, command: str) -> tuple[str | None, int]:
    """The commit a multi-commit pick or revert is at (the first line of git's sequencer list) and the
    ``-m`` parent the list was started with (its options file; 1 unless given); (None, 1) without a list."""
    sequencer = git_dir(root) / "sequencer"
    try:
        lines = (sequencer / "todo").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None, 1
    word = "pick" if command == "cherry-pick" else "revert"
    for line in lines:
        parts = line.split()
        if parts and not parts[0].startswith("#"):
            if len(parts) >= 2 and parts[0] in (word, word[0]):
                return parts[1], _sequencer_mainline(root, sequencer / "opts")
            return None, 1
    return None, 1


def _sequencer_mainline(root: Path, opts: Path) -> int:
    """The ``mainline`` git's sequencer keeps in its options file (git's config format), 1 when none."""
    found = git(root, "config", "--file", str(opts), "--get", "options.mainline", check=False).strip()
    return int(found) if found.isdigit() and int(found) > 0 else 1


def _one_revision(args: list[str]) -> tuple[str | None, int]:
    """The one revision a single-commit pick names among its arguments, and its ``-m`` parent (1 unless
    given); (None, 1) for several, a range, or none (git then keeps a sequencer list)."""
    revs, mainline, skip = [], 1, None
    for arg in args:
        if skip is not None:
            if skip in MAINLINE_OPTIONS and arg.isdigit():
                mainline = int(arg)
            skip = None
        elif arg in PICK_OPTIONS_WITH_VALUE:
            skip = arg
        elif arg.startswith("--mainline=") and arg.split("=", 1)[1].isdigit():
            mainline = int(arg.split("=", 1)[1])
        elif arg.startswith("-m") and arg[2:].isdigit():
            mainline = int(arg[2:])
        elif arg == "--":
            continue
        elif not arg.startswith("-"):
            revs.append(arg)
    if len(revs) != 1 or ".." in revs[0] or revs[0].startswith("^"):
        return None, 1
    return revs[0], mainline


def _running_git_argv() -> list[str] | None:
    """The arguments of the nearest git process this one runs under, read from the process table (Linux);
    None where it cannot be read."""
    pid = os.getpid()
    for _ in range(8):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                stat = fh.read()
            pid = int(stat[stat.rindex(b")") + 2:].split()[1])  # (the parent, after the command's name)
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = [a.decode("utf-8", "replace") for a in fh.read().split(b"\0") if a]
        except (OSError, ValueError, IndexError):
            return None
        if git_command_of(argv) is not None:
            return argv
        if pid <= 1:
            return None
    return None


def git_command_of(argv: list[str]) -> str | None:
    """The git subcommand a process's arguments run (`git -c x=y cherry-pick …`, or git's own program run by
    its path, `git-cherry-pick`); None for a process that is not git."""
    program = os.path.basename(argv[0]) if argv else ""
    if program in ("git", "git.exe"):
        return _subcommand(argv[1:]) or ""
    if program.startswith("git-"):
        return program[len("git-"):].removesuffix(".exe")
    return None


def _subcommand(args: list[str]) -> str | None:
    """git's subcommand among its arguments: the first that is no global option (nor an option's value)."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in GIT_OPTIONS_WITH_VALUE:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


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


def wrote(root: Path, rel: str, side: CommitSide | None) -> CommitSide | None:
    """The newest non-merge commit reachable from ``side`` that changed ``rel``: the wrap that wrote its text.

    A side's tip may be a sync's merge commit, dated when the sync ran, not when the text it carries was
    written; judging "the newer wrap" by it let an older wrap's State beat the newest one. A merge commit
    only combines what its parents' wraps wrote, so it is passed over. The tip itself where git finds none.
    """
    if side is None:
        return None
    out = git(root, "log", "-1", "--no-merges", "--author-date-order",
              "--format=%H%x1f%at%x1f%as%x1f%an%x1f%(trailers:key=Flow-Session,valueonly,separator=%x2C)",
              side.sha, "--", rel, check=False).decode("utf-8", "replace").rstrip("\n").split("\x1f")
    if len(out) != 5:
        return side
    return CommitSide(out[0], int(out[1]), out[2], " ".join(out[3].split()), " ".join(out[4].split()))


def stores(root: Path, store_rel: str, ours: CommitSide | None, theirs: CommitSide | None) -> tuple[bytes, bytes]:
    """Both sides' stores as committed (empty when a side or its store is unknown)."""
    specs = [f"{c.sha}:{store_rel}" for c in (ours, theirs) if c]
    found = iter(blobs(root, specs))
    return tuple((next(found) or b"") if c else b"" for c in (ours, theirs))  # type: ignore[return-value]


def store_at(root: Path, store_rel: str, commit: str) -> bytes:
    """The store as ``commit`` holds it (empty when it holds none)."""
    return blobs(root, [f"{commit}:{store_rel}"])[0] or b""


def base_store(root: Path, store_rel: str, ours: CommitSide | None, theirs: CommitSide | None) -> bytes:
    """The store at the two sides' merge base, as committed (empty when it is unknown: nothing counts as
    removed then, and the merge is the union of both sides)."""
    if ours is None or theirs is None:
        return b""
    base = git(root, "merge-base", ours.sha, theirs.sha, check=False).decode().split()
    return (blobs(root, [f"{base[0]}:{store_rel}"])[0] or b"") if base else b""
