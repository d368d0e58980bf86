"""What a remote holds, as the remote says it: the commits a push of a new ref is judged above.

A clone's remote-tracking refs are only its belief about the remote: one
moved by hand (``git update-ref``) or left behind after the branch was deleted
there would hide, from the audit of a push, commits the remote never had and
no audit judged. So a new ref's range stops only at commits the remote names
itself (``git ls-remote``) that this clone has.

The pre-commit framework's pre-push stage tells its hooks of one pushed ref
(the first with something to push, found from remote-tracking refs): ``audit
--pushed`` therefore judges that ref and every local branch, tag and HEAD
the remote lacks (:func:`pushed_spec`), so ``git push origin clean evil``
cannot land ``evil`` behind ``clean``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, TYPE_CHECKING

from flowgit.errors import FlowgitError
from flowgit.git import git

if TYPE_CHECKING:
    from flowgit.history.audit import RangeSpec


def pushed_spec(root: Path, exclude: tuple[str, ...] = (), root_base: str | None = None,
                env: Mapping[str, str] | None = None) -> "RangeSpec":
    """What the framework's pre-push stage pushes, read from its environment, and all the push may carry.

    ``PRE_COMMIT_FROM_REF``/``TO_REF`` name one ref's update (judged as a
    branch's update, ``--replaces``, when it goes to a branch). Which other
    refs git pushes the framework does not say, so every local branch, tag
    and HEAD is judged above the commits the remote itself names (not above
    this clone's remote-tracking refs); a history begun afresh on any of them
    is judged against the remote's default branch. Without a remote (``pre-commit
    try-repo``), the named range alone.
    """
    from flowgit.history.audit import RangeSpec

    env = os.environ if env is None else env
    start, end = env.get("PRE_COMMIT_FROM_REF"), env.get("PRE_COMMIT_TO_REF")
    tip = end or env.get("PRE_COMMIT_LOCAL_BRANCH") or "HEAD"
    update = bool(start and end) and env.get("PRE_COMMIT_REMOTE_BRANCH", "refs/heads/").startswith("refs/heads/")
    # the URL git pushes to: a remote's name would ask its fetch URL, which `pushurl` or `pushInsteadOf` may
    # send elsewhere (commits the fetch repository holds are not the push target's)
    remote = env.get("PRE_COMMIT_REMOTE_URL") or env.get("PRE_COMMIT_REMOTE_NAME")
    named = f"{start}..{end}" if start and end else tip
    if not remote:
        return RangeSpec.parse(named, None, exclude, root_base, update)
    known, default = commits_the_remote_holds(root, remote)
    tips = _local_tips(root)
    if not (root_base or default) and known:
        _refuse_a_history_with_no_default(root, remote, (tip, *tips), known)
    spec = RangeSpec.parse(named, None, exclude + tuple(known), root_base or default, update)
    return spec.with_tips(tips, f"{named} and every local branch and tag {remote} lacks", root_base or default)


def _refuse_a_history_with_no_default(root: Path, remote: str, tips: tuple[str, ...], known: list[str]) -> None:
    """A push that begins a history afresh where the remote's HEAD names no branch and it holds several (or only
    tags): the memory it would be judged against cannot be told (the newest branch is whichever a pusher dates
    last, a decoy pushed first would do), so it is refused with the way to name one."""
    out = git(root, "rev-list", "--max-parents=0", *tips, "--not", *known, check=False).decode().split()
    if out:
        raise FlowgitError(f"this push begins a history afresh ({out[0][:10]}), and {remote}'s HEAD names no branch "
                           "while it holds not one branch alone: no default branch's memory to judge it against",
                           fix="name the default branch on the server (`git symbolic-ref HEAD refs/heads/main` in "
                               "its repository, or the hosting's default-branch setting), then push again; or "
                               "judge it against a branch you name: `flowgit audit --pushed --root-base REF`")


def _local_tips(root: Path) -> tuple[str, ...]:
    """HEAD and every local branch and tag (peeled where git can): what a push may carry."""
    out = git(root, "for-each-ref", "--format=%(objectname) %(*objectname)", "refs/heads", "refs/tags",
              check=False).decode().split("\n")
    tips = [parts[-1] for parts in map(str.split, out) if parts]
    head = git(root, "rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).decode().strip()
    return tuple(dict.fromkeys([head, *tips] if head else tips))


def commits_the_remote_holds(root: Path, remote: str) -> tuple[list[str], str | None]:
    """(the commits ``remote``'s refs point at that this clone has, the one its HEAD names, else its only
    branch's, else None)."""
    held = _listed(root, remote)
    wanted = "".join(f"{sha}^{{commit}}\n" for sha in dict.fromkeys(held.values())).encode()
    answers = git(root, "cat-file", "--batch-check=%(objectname) %(objecttype)", input=wanted,
                  check=False).decode().splitlines() if held else []
    commits = list(dict.fromkeys(parts[0] for parts in map(str.split, answers)
                                 if len(parts) == 2 and parts[1] == "commit"))  # (tags peeled to theirs)
    if not commits and any(line.endswith(" missing") for line in answers):
        raise FlowgitError(f"this clone has none of the commits {remote} holds, so a history this push begins "
                           "cannot be judged against the memory the remote keeps (its default branch)",
                           fix=f"`git fetch {remote}` first, then push again")
    head = held.get("HEAD")
    branches = {sha for ref, sha in held.items() if ref.startswith("refs/heads/")}
    # where HEAD names no branch (a bare `git init` whose HEAD names a branch never pushed), the one branch
    # there is; among several (or only tags) none: the newest is whichever a pusher dates last
    default = head if head in commits else (next(iter(branches)) if len(branches) == 1 and
                                            branches <= set(commits) else None)
    return commits, default


def _listed(root: Path, remote: str) -> dict[str, str]:
    """The remote's refs and the objects they name, asked of the remote; a remote that cannot answer stops
    the audit (a push to it would not get through either)."""
    import subprocess

    fix = "check the remote is reachable, then push again"
    try:
        proc = subprocess.run(["git", "ls-remote", "--", remote], cwd=root, capture_output=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FlowgitError(f"cannot ask {remote} which commits it holds ({exc})", fix=fix) from None
    if proc.returncode:
        said = (proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["no answer"])[-1]
        raise FlowgitError(f"cannot ask {remote} which commits it holds, so what this push adds cannot be told "
                           f"apart ({said})", fix=fix)
    held: dict[str, str] = {}
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        sha, _, ref = line.partition("\t")
        held.setdefault(ref, sha)
    return held


def not_pushed(root: Path, commits: list[str]) -> set[str] | None:
    """Which of ``commits`` (of HEAD's history) no remote-tracking ref reaches: those can still be rewritten
    before anyone else has them. None when the clone tracks no remote (nothing tells what others have).

    Advice only, never a verdict: remote-tracking refs are this clone's belief about its remotes, which is
    all a suggestion of how to repair needs (the push itself is judged against what the remote names).
    """
    if not commits or not git(root, "for-each-ref", "--count=1", "refs/remotes", check=False).strip():
        return None
    local = set(git(root, "rev-list", "HEAD", "--not", "--remotes", check=False).decode().split())
    return {sha for sha in commits if sha in local}


def remote_tips(root: Path) -> tuple[str, ...]:
    """The commits this clone's remote-tracking refs name: what it believes its remotes hold."""
    out = git(root, "for-each-ref", "--format=%(objectname)", "refs/remotes", check=False).decode().split()
    return tuple(dict.fromkeys(out))


def unpushed_count(root: Path, tips: tuple[str, ...]) -> int:
    """How many commits of HEAD's history no remote-tracking ref reaches."""
    out = git(root, "rev-list", "--count", "HEAD", "--not", *tips, check=False).decode().strip()
    return int(out) if out.isdigit() else 0
