"""``flowgit sync``: fetch, integrate through the merge driver, re-run the gate, push; repeat if someone was first.

The wrap's Step 6 ("push to the remote if applicable") done safely for many
agents on one remote:

1. refuse to start in the middle of a merge or rebase, or with uncommitted
   changes (nothing of the user's is ever stashed or overwritten);
2. fetch the upstream and integrate it the way the branch is configured
   (``branch.<name>.rebase`` / ``pull.rebase``: rebase, else merge) — the
   continuity file and the store merge through ``merge=flowgit``;
3. judge every commit that is about to be pushed against each of its parents
   with the gate (the one rule engine), as the pre-receive side would;
4. push without force; a rejected push (someone pushed first) starts again
   from 1, a bounded number of times.

Any failure restores the branch to where it was (``git rebase --abort`` /
``git merge --abort``, or back to the original commit when the gate refused the
result) and explains; the tree is never left half-merged.
"""

from __future__ import annotations

import random
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from flowgit.config import Config
from flowgit.errors import FlowgitError
from flowgit.faults import checkpoint
from flowgit.git import busy, git, git_dir, git_said, operation_in_progress, require_repo, run_until_done, \
    stale_lock_fix
from flowgit.fsio import atomic_write
from flowgit.lock import RepoLock

REMOTE_MOVED = "flowgit: [remote moved since the last fetch]"  # hooks/pre-push's refusal of a ref that moved
RETRYABLE = ("[rejected]", "non-fast-forward", "fetch first", "cannot lock ref", "failed to update ref",
             "incorrect old value", "failed to lock", REMOTE_MOVED)


class SyncFailed(FlowgitError):
    """Integration or push failed; the branch is as it was before the attempt."""


class RollbackRefused(FlowgitError):
    """Sync could not prove that HEAD and the index hold only what its own integration wrote (a commit made on
    top, an edit staged meanwhile, git still at work): nothing was undone, the branch and the index are left as
    they are, and the refusal says what it found (exit 2, like any state sync cannot start from)."""


@dataclass
class SyncResult:
    branch: str
    remote: str
    upstream: str
    mode: str  # how the upstream is integrated when both sides moved: "rebase" or "merge" (what git is set to do)
    attempts: int = 0
    integrated: str | None = None  # what the last integration did: "rebase", "merge", "fast-forward" or None
    steps: list[str] = field(default_factory=list)
    pushed: bool = False
    head: str = ""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"branch": self.branch, "remote": self.remote, "upstream": self.upstream, "mode": self.mode,
                "integrated": self.integrated, "attempts": self.attempts, "steps": self.steps,
                "pushed": self.pushed, "head": self.head, "notes": self.notes}


@dataclass(frozen=True)
class Target:
    branch: str
    remote: str
    merge_ref: str  # the branch on the remote, e.g. refs/heads/main
    has_upstream: bool

    @property
    def tracking(self) -> str:
        return f"refs/remotes/{self.remote}/{self.merge_ref.removeprefix('refs/heads/')}"


def _run(root: Path, *args: str):
    """git with ``args``, run to its end even when sync is interrupted (:func:`flowgit.git.run_until_done`)."""
    return run_until_done(["git", *args], root, text=True)


class _TerminatedAsInterrupt:
    """SIGTERM raised as KeyboardInterrupt while sync integrates, so the rollback runs as it does on Ctrl-C
    (Python's default for SIGTERM ends the process where it stands, mid-merge)."""

    def __enter__(self) -> "_TerminatedAsInterrupt":
        import signal
        import threading

        self._previous = None
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, self._interrupt)
        return self

    @staticmethod
    def _interrupt(signum, frame) -> None:
        raise KeyboardInterrupt

    def __exit__(self, *exc: object) -> None:
        import signal

        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)


def _one(root: Path, *args: str) -> str:
    return git(root, *args, check=False).decode().strip()


PENDING = "flowgit-sync.pending"  # in the git directory while a sync integrates: the HEAD it started from


def tracked_changes(root: Path) -> str:
    """``git status --porcelain`` of the tracked files a merge of this branch could touch: work inside a
    submodule's own tree is left out (no merge of the superproject takes it, and `git stash` cannot)."""
    return git(root, "status", "--porcelain", "--untracked-files=no", "--ignore-submodules=dirty",
               check=False).decode()


def preflight(root: Path, *, locked: bool = False) -> list[str]:
    """Refuse to start where integrating would take in or lose something. ``locked``: under the repository
    lock, where a sync's pending mark can only be one a killed sync left. Returns what settling such a mark
    removed (git's merge temporaries), for the caller to say."""
    from flowgit.lock import refuse_if_wrap_pending

    refuse_if_wrap_pending(git_dir(root), probe=True)  # a wrap's files are not "uncommitted changes" to commit
    running = busy(git_dir(root))
    if running:  # a merge would fail on git's lock and read as a conflict, leaving its state half-made
        raise FlowgitError("git's lock is held here: a git command is running, or a killed one left "
                           f"{' and '.join(running)} behind; nothing was fetched or merged", path=root,
                           fix=stale_lock_fix(root, git_dir(root), running, "run `flowgit sync` again"))
    found = operation_in_progress(root)
    if found is not None:
        what, how = found
        raise FlowgitError(f"{what} is in progress in this repository", path=root, fix=f"{how}, then sync")
    removed: list[str] = []
    if (git_dir(root) / PENDING).exists():
        if not locked:
            return removed  # another sync may be integrating now: asked again under the lock
        removed = settle_interrupted_sync(root)
    dirty = tracked_changes(root)
    if dirty.strip():
        raise FlowgitError("uncommitted changes: " + ", ".join(ln[3:] for ln in dirty.splitlines()[:5]),
                           path=root, fix="commit them first (the continuity file and the store with `flowgit "
                                          "wrap`, any other file with `git commit`), or stash them (`git stash`)")
    return removed


def settle_interrupted_sync(root: Path) -> list[str]:
    """Asked under the repository lock (by sync, and by the wrap before it writes): a sync was killed while it
    integrated when its mark is left. Where its merge was committed (HEAD
    descends from where it started), or the working tree holds nothing (HEAD unmoved), there is nothing to
    undo: the mark goes and this sync goes on. Otherwise its files may sit
    half-merged in the tree, the other clone's episodes among them: refused, with how to put the branch back,
    never committed as if this clone had written them. A sync killed while git ran the merge driver also
    leaves git's copies of the sides (``.merge_file_XXXXXX``: whole continuity files and stores) untracked
    at the top of the tree: those, and only those made since the mark, are removed; their names returned."""
    found = interrupted_sync(root)
    if found is None:
        return []
    if found.problem is not None:
        raise found.problem
    removed = _remove_merge_temporaries(root, found.mark)
    found.mark.unlink(missing_ok=True)
    return removed


MERGE_TEMPORARY = re.compile(r"\.merge_file_[A-Za-z0-9]{6}")  # git's mkstemp name for a driver's %O %A %B


def _remove_merge_temporaries(root: Path, mark: Path) -> list[str]:
    """Remove git's merge-driver temporaries a killed sync left: untracked regular files at the top of the
    tree named exactly as git names them, made no earlier than the killed sync's mark. Nothing else is
    touched: a file of any other name, age or kind is the user's."""
    try:
        since = mark.stat().st_mtime
    except FileNotFoundError:
        return []
    untracked = _one(root, "ls-files", "--others", "-z", "--", ":(glob).merge_file_*").split("\0")
    removed = []
    for name in sorted(n for n in untracked if MERGE_TEMPORARY.fullmatch(n)):
        path = root / name
        info = path.lstat()
        if stat.S_ISREG(info.st_mode) and info.st_mtime >= since:
            path.unlink()
            removed.append(name)
    return removed


@dataclass(frozen=True)
class InterruptedSync:
    """A sync's mark left in the git directory, and what stands in the way (None: nothing is left of it)."""

    mark: Path
    problem: FlowgitError | None


def interrupted_sync(root: Path) -> InterruptedSync | None:
    """What a killed sync left (read-only: ``flowgit status`` and ``prime`` ask it too); None: no mark."""
    pending = git_dir(root) / PENDING
    try:
        started = pending.read_text(encoding="utf-8", errors="replace").strip()
    except FileNotFoundError:
        return None
    dirty = tracked_changes(root)
    head = _one(root, "rev-parse", "HEAD")
    descends = _run(root, "merge-base", "--is-ancestor", started, "HEAD").returncode == 0 if started else False
    if not dirty.strip() and not descends and started and _replayed(root, started):
        return InterruptedSync(pending, FlowgitError(
            "an earlier `flowgit sync` was stopped after it rebased this branch onto the remote and "
            f"before it judged the result: HEAD holds copies of the commits it started from "
            f"({started[:12]}), never judged as replayed", path=root,
            fix=f"put them back as they were (`git reset --keep {started[:12]}`), then run "
                f"`flowgit sync` again (it merges when the gate refuses a rebase); if you rebased "
                f"yourself since, remove {pending} instead"))
    if not dirty.strip() or (descends and head != started):  # nothing left of it, or its merge committed
        return InterruptedSync(pending, None)
    paths = " ".join(line[3:] for line in dirty.splitlines())
    return InterruptedSync(pending, FlowgitError(
        "an earlier `flowgit sync` was stopped while it merged the remote, and the working tree "
        f"differs from HEAD ({paths}): what it merged halfway (another clone's episodes among "
        "them) must not be committed as this clone's", path=root,
        fix=f"see what changed (`git diff`); put back what the merge wrote (`git restore "
            f"--staged --worktree -- <file>`); if every change is an edit of your own, made since, "
            f"remove {pending} to say so; then run it again"))


def _replayed(root: Path, started: str) -> bool:
    """Whether HEAD holds a copy of every commit ``started`` has that HEAD lacks (what a rebase leaves): the
    same author, author date and subject (a rebase keeps them; the patch itself may differ where the merge
    driver joined it with the remote's)."""
    form = "--format=%ae%x00%ad%x00%s"
    ours = set(_one(root, "log", form, "--date=raw", started, "--not", "HEAD").splitlines())
    theirs = set(_one(root, "log", form, "--date=raw", "HEAD", "--not", started).splitlines())
    return bool(ours) and ours <= theirs


def require_driver(root: Path) -> None:
    """Refuse before fetching in a clone whose git config lacks flowgit's merge driver (a clone that never
    ran ``flowgit init``: git copies no config between clones), where two wraps would conflict line by line."""
    from flowgit.merge.setup import driver_problem, is_registered

    problem = driver_problem(root)
    if problem:
        raise FlowgitError(f"{problem}; nothing was fetched or merged", path=root,
                           fix="run `flowgit init` in this clone (it registers the driver with the flowgit you "
                               "run now; safe to repeat), then sync")
    if not is_registered(root):
        raise FlowgitError("flowgit's merge driver is not registered in this clone, so two wraps of one base "
                           "would conflict line by line; nothing was fetched or merged", path=root,
                           fix="run `flowgit init` in this clone (it registers the driver; safe to repeat), "
                               "then sync")


def target(root: Path) -> Target:
    branch = _one(root, "symbolic-ref", "-q", "--short", "HEAD")
    if not branch:
        raise FlowgitError("HEAD is detached; sync works on a branch", path=root, fix="git switch <branch>")
    remote = _one(root, "config", "--get", f"branch.{branch}.remote")
    merge_ref = _one(root, "config", "--get", f"branch.{branch}.merge")
    if remote and merge_ref:
        return Target(branch, remote, merge_ref, True)
    remotes = _one(root, "remote").split()
    if not remotes:
        raise FlowgitError("this repository has no remote to sync with", path=root,
                           fix="git remote add origin <url>")
    return Target(branch, "origin" if "origin" in remotes else remotes[0], f"refs/heads/{branch}", False)


def _refuse_if_switched(root: Path, tgt: Target) -> None:
    """Refuse (exit 2, nothing merged or pushed) when HEAD is no longer the branch sync set out to sync: the
    fetch runs outside the lock, and a switch meanwhile would merge the remote into the other branch and push
    that branch's commits to the remote's ``tgt.merge_ref``."""
    now = _one(root, "symbolic-ref", "-q", "--short", "HEAD")
    if now != tgt.branch:
        raise FlowgitError(f"HEAD moved from {tgt.branch} to {now or 'a detached commit'} while sync fetched; "
                           "nothing was merged or pushed", path=root,
                           fix=f"switch back (`git switch {tgt.branch}`) and run `flowgit sync` again, or sync "
                               "the branch you are on now")


def integration_mode(root: Path, branch: str) -> str:
    for key in (f"branch.{branch}.rebase", "pull.rebase"):
        value = _one(root, "config", "--get", key).lower()
        if value:
            return "merge" if value in ("false", "no", "off", "0") else "rebase"
    return "merge"


def run_sync(cfg: Config, *, retries: int = 8) -> SyncResult:
    root = require_repo(cfg.root)
    preflight(root)
    tgt = target(root)
    require_driver(root)
    result = SyncResult(tgt.branch, tgt.remote, tgt.merge_ref, integration_mode(root, tgt.branch))
    for attempt in range(1, retries + 2):
        result.attempts = attempt
        fetched = _run(root, "fetch", "--quiet", tgt.remote)
        if fetched.returncode != 0:
            raise SyncFailed(f"git fetch {tgt.remote} failed:\n{git_said(fetched.stderr)}", path=root,
                             fix="check the remote and the network, then sync again")
        upstream = _one(root, "rev-parse", "-q", "--verify", tgt.tracking)
        checkpoint("sync-fetched")  # (a test's pause: the clone changed between the fetch and the lock)
        # The repository lock, from integration to push: a wrap cannot commit in between, so a failed
        # integration's reset never takes a commit with it (the fetch, which may be slow, holds nothing).
        with RepoLock(git_dir(root), "flowgit sync"), _TerminatedAsInterrupt():
            removed = preflight(root, locked=True)  # (again, under the lock: a wrap may have finished meanwhile)
            if removed:
                result.notes.append("removed git's merge temporaries a killed sync left: " + ", ".join(removed))
            _refuse_if_switched(root, tgt)
            original = _one(root, "rev-parse", "HEAD")
            kept_orig_head = _one(root, "rev-parse", "-q", "--verify", "ORIG_HEAD")
            pending = git_dir(root) / PENDING
            atomic_write(pending, original + "\n")  # (left behind only if this process is killed outright)
            try:
                result.steps.append(_integrated_and_judged(root, cfg, tgt, result.mode, original, upstream or None,
                                                           result.notes))
                result.integrated = _what_integrating_did(result.steps[-1])
            except (SyncFailed, RollbackRefused):
                _put_back_orig_head(root, kept_orig_head)
                raise
            except BaseException:  # interrupted, or a file the gate cannot read: never leave it half-merged
                _restore(root, original, upstream or None, _merge_subject(tgt))
                _put_back_orig_head(root, kept_orig_head)
                raise
            finally:
                pending.unlink(missing_ok=True)
            if upstream and _one(root, "rev-parse", "HEAD") == upstream:
                result.steps.append("nothing to push: the remote has every commit")
                result.head = upstream
                return result
            pushed = _run(root, "push", "--porcelain", *([] if tgt.has_upstream else ["-u"]), tgt.remote,
                          f"refs/heads/{tgt.branch}:{tgt.merge_ref}")  # (the branch by name, never HEAD)
            if pushed.returncode == 0:
                result.pushed, result.head = True, _one(root, "rev-parse", "HEAD")
                return result
        output = pushed.stdout + pushed.stderr
        if not any(token in output for token in RETRYABLE):
            said = git_said(pushed.stderr, _refused_refs(pushed.stdout))
            raise SyncFailed(f"git push failed:\n{said}", path=root,
                             fix="nothing was pushed; the branch holds the integrated commits: fix and sync again")
        result.steps.append("push rejected: someone pushed first; integrating again")
        time.sleep(random.uniform(0.05, min(3.0, 0.1 * 2 ** attempt)))  # back off so the losers do not starve
    raise SyncFailed(f"the push was rejected {retries + 1} times (the remote keeps moving)", path=root,
                     fix="nothing was lost: the branch holds your commits integrated with the last fetch; "
                         "run `flowgit sync` again")


def _what_integrating_did(step: str) -> str | None:
    """"merge", "rebase" or "fast-forward" for an integration step's words (None: nothing to integrate)."""
    for opening, how in (("merged", "merge"), ("rebased", "rebase"), ("fast-forwarded", "fast-forward")):
        if step.startswith(opening):
            return how
    return None


def _put_back_orig_head(root: Path, before: str) -> None:
    """``ORIG_HEAD`` as it was before a sync that committed nothing: the integration it undid moved it, and
    the user's own way back (``git reset --keep ORIG_HEAD`` after a pull that rebased) must still work."""
    if before:
        _run(root, "update-ref", "--no-deref", "ORIG_HEAD", before)
    else:
        _run(root, "update-ref", "-d", "ORIG_HEAD")


def _integrated_and_judged(root: Path, cfg: Config, tgt: Target, mode: str, original: str,
                           upstream: str | None, notes: list[str]) -> str:
    """Integrate the upstream and judge what would be pushed; a rebase the gate refuses is merged instead.

    A wrap replayed onto the remote's is judged against a parent it was not
    written on: two agents that each raised one pattern to 2x leave the
    replayed wrap saying `Incremented:` of a pattern already at 2x (A201),
    though both wraps were right where they were made. Merged, each commit is
    judged against its own parent and the merge as a merge, so a violation in
    our wraps is refused either way and only the replay's artefact is not.
    """
    said: list[str] = []
    step = _integrate(root, cfg, tgt, mode, original, upstream, said)
    checkpoint("sync-integrated")  # (a test's pause: a commit or a `git add` lands on the integrated result)
    try:
        _gate(root, cfg, original, upstream)
    except SyncFailed:
        if not step.startswith("rebased"):
            raise
        said.clear()
        step = _integrate(root, cfg, tgt, "merge", original, upstream, said)  # (the gate put the branch back)
        _gate(root, cfg, original, upstream)
        step += " (the gate refused our wraps replayed onto the remote's: merged rather than rebased)"
    notes.extend(dict.fromkeys(said))
    return step


def _refused_refs(porcelain: str) -> str:
    """The refs ``git push --porcelain`` reports as refused (``!`` lines), with the reason git gives for each."""
    refused = [ln.split("\t") for ln in porcelain.splitlines() if ln.startswith("!\t")]
    return "\n".join(f"! {fields[1]} {' '.join(fields[2:])}".rstrip() for fields in refused if len(fields) > 1)


def _rebase_left_a_merge_note(root: Path, cfg: Config, upstream: str) -> bool:
    """Whether the rebased commits added a merge note to the continuity file.

    Two wraps that both replaced State (or Top of Mind, Recent Context) are
    joined by the merge driver, which keeps the newer text and the other as a
    note. In a merge commit the gate knows the note for what it is (the other
    parent holds the text it quotes); replayed by a rebase, our wrap would
    carry the remote's text as a note its one parent already holds, which no
    rule can tell from an append. So sync merges then, whatever ``pull.rebase``
    says.
    """
    from flowgit.merge.notes import NOTE_HEAD

    diff = _run(root, "diff", "--no-color", "--unified=0", upstream, "HEAD", "--", cfg.continuity_rel).stdout
    return any(line.startswith("+" + NOTE_HEAD) for line in diff.splitlines())


DRIVER_SAYS = "flowgit merge-driver: "


def _driver_notes(done) -> list[str]:
    """What the merge driver told git while it merged (which wording it kept, what it kept lower): git shows
    it to a person merging by hand; sync passes it on rather than let a choice go unsaid."""
    return [line.removeprefix(DRIVER_SAYS) for line in (done.stdout + done.stderr).splitlines()
            if line.startswith(DRIVER_SAYS)]


def _integrate(root: Path, cfg: Config, tgt: Target, mode: str, original: str, upstream: str | None,
               notes: list[str] | None = None) -> str:
    if upstream is None:
        return "the remote has no such branch yet"
    if _run(root, "merge-base", "--is-ancestor", upstream, "HEAD").returncode == 0:
        return "up to date with the remote"
    if _run(root, "merge-base", "--is-ancestor", "HEAD", upstream).returncode == 0:
        done = _run(root, "merge", "--ff-only", "--quiet", upstream)
        if done.returncode != 0:
            raise SyncFailed(f"fast-forward failed:\n{git_said(done.stderr)}", path=root)
        return "fast-forwarded"
    subject = _merge_subject(tgt)
    args = ["rebase", upstream] if mode == "rebase" else ["merge", "--no-edit", "-m", subject, upstream]
    notes = [] if notes is None else notes
    checkpoint("sync-merging")  # (a test's pause: another git command takes the index's lock)
    done = _run(root, *args)
    if done.returncode == 0 and mode == "rebase" and _rebase_left_a_merge_note(root, cfg, upstream):
        _back_to(root, original, _one(root, "rev-parse", "HEAD"))  # our commits as they were: merge instead
        done = _run(root, "merge", "--no-edit", "-m", subject, upstream)
        if done.returncode == 0:
            notes.extend(_driver_notes(done))
            return "merged the remote (both wraps replaced a section: merged rather than rebased)"
        mode = "merge"
    if done.returncode == 0:
        notes.extend(_driver_notes(done))
        return "rebased onto the remote" if mode == "rebase" else "merged the remote"
    conflicted = _one(root, "diff", "--name-only", "--diff-filter=U")
    checkpoint("sync-aborting")  # (a test's pause: the abort meets git's lock)
    _abort(root, mode, original)
    raise _why_it_failed(root, tgt, mode, conflicted, done.stdout + done.stderr)


def _integration_left(root: Path) -> list[str]:
    """What a merge or a rebase leaves in the git directory while it is in progress."""
    gdir = git_dir(root)
    return [name for name in ("MERGE_HEAD", "rebase-merge", "rebase-apply") if (gdir / name).exists()]


def _abort(root: Path, mode: str, original: str) -> None:
    """Abort the failed integration and prove it is gone: no MERGE_HEAD or rebase state, HEAD on ``original``,
    a clean tree. An editor's `git status` holding ``index.lock`` for a moment makes the abort fail as it made
    the merge fail: the abort is tried again once the lock is gone (waiting no longer than the repository lock
    waits), and a state still left is said as such, never as "the branch is as it was"."""
    from flowgit.lock import _default_wait

    deadline = time.monotonic() + _default_wait()
    _run(root, mode, "--abort")
    while _integration_left(root) and time.monotonic() < deadline:
        while busy(git_dir(root)) and time.monotonic() < deadline:
            time.sleep(0.05)
        _run(root, mode, "--abort")
    left = _integration_left(root)
    if left:
        running = busy(git_dir(root))
        raise SyncFailed(f"git {mode} failed, and `git {mode} --abort` could not finish: "
                         f"{' and '.join(left)} still in the git directory (a {mode} in progress)"
                         + (f", and a git command holds {' and '.join(running)}" if running else ""), path=root,
                         fix=f"once no git command runs, `git {mode} --abort`; your commits are at {original[:12]}")
    if _one(root, "rev-parse", "HEAD") != original or _one(root, "status", "--porcelain", "--untracked-files=no"):
        raise SyncFailed(f"git {mode} failed and `git {mode} --abort` did not restore the branch", path=root,
                         fix=f"inspect with `git status`; your commits are at {original[:12]}")


def _why_it_failed(root: Path, tgt: Target, mode: str, conflicted: str, said: str) -> SyncFailed:
    """The failure as git gave it, said by its cause (git's lock, an untracked file in the way, a merge driver
    that cannot start, a conflict), with the files and a fix that fits: a bare "conflicted" hides the one
    thing the person needs to act on."""
    lines = said.splitlines()
    gone = f"; aborted, the branch is as it was\n{git_said(said)}"
    if any(mark in ln for ln in lines for mark in ("index.lock", "Unable to write index", "unable to write new "
                                                                                          "index file")):
        return SyncFailed(f"git's lock (index.lock) was held by another git command while sync ran `git {mode}`, "
                          f"so git could not {mode}: no conflict" + gone, path=root,
                          fix=stale_lock_fix(root, git_dir(root), ["index.lock"], "run `flowgit sync` again"))
    untracked = _listed_after(lines, "untracked working tree files would be")
    if untracked:
        return SyncFailed(f"git refused to {mode}: the untracked file(s) {', '.join(untracked)} would be "
                          f"overwritten by the remote's" + gone, path=root,
                          fix=f"move or remove {', '.join(untracked)} (the remote has a file of that name), then "
                              "`flowgit sync`")
    if any(ln.rstrip().endswith(("not found", "No such file or directory")) for ln in lines):
        return SyncFailed(f"git could not start flowgit's merge driver while it ran `git {mode}`" + gone,
                          path=root, fix="run `flowgit init` in this clone again (it registers the driver with "
                                         "the flowgit that runs it; safe to repeat), then `flowgit sync`")
    if not conflicted and any(GATE_REFUSED in ln for ln in lines):
        return _refused_by_the_gate(root, tgt, lines)
    detail = "\n".join(ln for ln in lines if ln.startswith(("flowgit", "CONFLICT", "  ")))
    if conflicted or detail:
        return SyncFailed(f"integrating {tgt.remote} by {mode} conflicted in {conflicted or 'the tree'}; aborted, "
                          f"the branch is as it was" + (f"\n{detail}" if detail else ""), path=root,
                          fix="resolve it by hand (`git pull --no-rebase`, fix the conflicts, commit: a "
                              "resolution that changes Foundation, Partnership or Cross-Domain is committed with "
                              "`FLOWGIT_OVERRIDE=\"why\"`), then `flowgit sync`")
    return SyncFailed(f"git {mode} failed" + gone, path=root, fix="act on git's message above, then `flowgit sync`")


GATE_REFUSED = "— commit rejected"  # the banner `flowgit check` ends a refusal with (the pre-merge-commit hook)
GIT_CHATTER = ("Not committing merge", "Auto-merging", "Automatic merge", "Merge made by", "hint:")


def _refused_by_the_gate(root: Path, tgt: Target, lines: list[str]) -> SyncFailed:
    """The merge went through the driver without a conflict and the gate's pre-merge-commit hook refused its
    commit: said as that, with the hook's findings whole (a finding's own line included, not only its fix),
    and the fix that fits a merge. A change the remote's commit made under its own override (a configuration
    loosened there, G801) stands against our side in the merge: the merge needs an override of its own."""
    findings = [ln for ln in lines if ln.strip() and not ln.startswith(GIT_CHATTER)]
    codes = list(dict.fromkeys(re.findall(r"\b(G\d{3}) error\b", "\n".join(findings))))
    named = ", ".join(codes) or "<code>"
    return SyncFailed(f"the gate refused the merge commit integrating {tgt.remote} (no conflict: the merge "
                      f"itself breaks {'a rule' if len(codes) <= 1 else 'rules'} {named}); aborted, the branch is "
                      "as it was\n" + "\n".join(findings), path=root,
                      fix=f"where it is a change the remote's commit made under its own override (a configuration "
                          f"loosened there), the merge needs one of its own: `FLOWGIT_OVERRIDE=\"{named}: why\" "
                          "flowgit sync` (recorded on the merge commit); otherwise fix what the finding says, then "
                          "`flowgit sync`")


def _listed_after(lines: list[str], heading: str) -> list[str]:
    """The tab-indented paths git lists under the line holding ``heading``."""
    for at, line in enumerate(lines):
        if heading in line:
            names = []
            for item in lines[at + 1:]:
                if not item.startswith("\t"):
                    break
                names.append(item.strip())
            return names
    return []


def _merge_subject(tgt: Target) -> str:
    """The subject of sync's merge commit: how an interrupted sync's rollback knows the merge for its own."""
    return f"Merge {tgt.remote}/{tgt.merge_ref.removeprefix('refs/heads/')} into {tgt.branch} (flowgit sync)"


def _restore(root: Path, original: str, upstream: str | None, subject: str) -> None:
    """Abort whatever integration is under way and put the branch back on ``original`` (the tree was clean),
    but only where HEAD is provably what the integration made: the interrupt may have come after the merge
    landed and after a commit that is not sync's (``git commit`` takes no flowgit lock) landed on top of it."""
    gdir = Path(_one(root, "rev-parse", "--absolute-git-dir"))
    if (gdir / "rebase-merge").exists() or (gdir / "rebase-apply").exists():
        _run(root, "rebase", "--abort")
    head = _one(root, "rev-parse", "HEAD")
    if (gdir / "MERGE_HEAD").exists():  # committed already (git stopped in its post-merge hook): only the
        _run(root, "merge", "--quit" if head != original else "--abort")  # state goes, never a staged edit
    if head == original:
        if _one(root, "status", "--porcelain", "--untracked-files=no"):  # a merge stopped before MERGE_HEAD
            _unstage_stopped_merge(root, original, upstream)
        return
    if not _made_by_integration(root, original, upstream, subject):
        shown = _one(root, "log", "-1", "--format=%h %s", "HEAD")
        raise RollbackRefused(
            f"sync was interrupted after it integrated the remote, and HEAD has moved on since: {shown} is not "
            "the commit sync made (a commit was made on top of it, or the branch was moved); nothing was undone "
            "and nothing was pushed", path=root,
            fix="nothing is lost: look at the branch (`git log --oneline --graph -5`), then run `flowgit sync` "
                "again to judge and push it as it stands")
    _back_to(root, original, head)


def _made_by_integration(root: Path, original: str, upstream: str | None, subject: str) -> bool:
    """Whether HEAD is exactly what integrating ``upstream`` into ``original`` makes: the fast-forward,
    sync's merge commit (those two parents, its subject), or the rebased copies of our commits and no other."""
    if not upstream:
        return False
    if _one(root, "rev-parse", "HEAD") == upstream:
        return _run(root, "merge-base", "--is-ancestor", original, upstream).returncode == 0
    if _one(root, "rev-list", "--parents", "-n", "1", "HEAD").split()[1:] == [original, upstream]:
        return _one(root, "log", "-1", "--format=%s", "HEAD") == subject
    if _run(root, "merge-base", "--is-ancestor", upstream, "HEAD").returncode != 0 or \
            _one(root, "rev-list", "--merges", f"{upstream}..HEAD"):
        return False
    form = "--format=%ae%x00%ad%x00%s"
    made = _one(root, "log", form, "--date=raw", "HEAD", "--not", upstream).splitlines()
    ours = set(_one(root, "log", form, "--date=raw", original, "--not", upstream).splitlines())
    return bool(made) and set(made) <= ours  # (a commit of anyone's made since has its own date and subject)


def _unstage_stopped_merge(root: Path, original: str, upstream: str | None) -> None:
    """A merge stopped before it wrote MERGE_HEAD left what it merged in the index: put back only paths the
    remote's side changed (what the merge can have written); a change to any other path is someone's edit."""
    base = _one(root, "merge-base", original, upstream) if upstream else ""
    theirs = set(_one(root, "diff", "--name-only", base, upstream).splitlines()) if base else set()
    changed = set(_one(root, "diff", "--name-only", "--cached", original).splitlines())
    foreign = sorted(changed - theirs)
    if foreign:
        raise RollbackRefused(
            "sync was interrupted while it merged, and the index holds changes the merge cannot have written ("
            f"{', '.join(foreign[:5])}): putting the branch back would discard them; nothing was undone",
            path=root, fix="see what is staged (`git diff --cached`); keep what is yours, put back the rest "
                           "(`git restore --staged --worktree -- <file>`), then run `flowgit sync` again")
    _back_to(root, original, original)


def _back_to(root: Path, original: str, produced: str) -> None:
    """Put the branch back on ``original`` from ``produced``, the commit sync's integration made, as a
    compare-and-swap: only while HEAD is ``produced``, no git command holds the index, and the index holds
    nothing but ``produced``'s tree; otherwise refuse (:class:`RollbackRefused`) and leave everything as is.

    The repository lock holds off flowgit's writers, not a person or an agent
    committing or staging meanwhile: a reset would drop their commit from the
    branch and put back the file they staged. ``read-tree -m -u`` moves the
    index and the files from ``produced`` to ``original``, keeps every edit not
    staged, and refuses rather than overwrite one; the branch then moves by
    ``update-ref`` from ``produced`` only, so a commit landing in between is
    never dropped (the files are moved back and sync refuses).
    """
    if produced != original:
        _refuse_unless_untouched(root, original, produced)
    if produced == original:
        done = _run(root, "reset", "--merge", "--quiet", original)
    else:
        _run(root, "update-index", "-q", "--refresh")  # (stale stat data would read as an edit in the way)
        done = _run(root, "read-tree", "-m", "-u", produced, original)
    if done.returncode != 0:
        raise SyncFailed("could not put the branch back without overwriting a file edited while sync ran; "
                         f"nothing was pushed, and the branch is at the integrated commit:\n{git_said(done.stderr)}",
                         path=root, fix=f"save your edits (`git stash`), then `git reset --keep {original[:12]}` "
                                        "and `git stash pop`")
    if produced == original:
        return
    swapped = _run(root, "update-ref", "-m", "flowgit sync: put back", "HEAD", original, produced)
    if swapped.returncode != 0:
        _run(root, "read-tree", "-m", "-u", original, produced)  # the files back under the commit that landed
        raise RollbackRefused("the branch moved while sync put it back (a commit landed): nothing was undone",
                              path=root, fix="look at the branch (`git log --oneline --graph -5`), then run "
                                             "`flowgit sync` again")


def _refuse_unless_untouched(root: Path, original: str, produced: str) -> None:
    """Refuse unless HEAD is ``produced``, git holds no lock here and the index is ``produced``'s tree."""
    head = _one(root, "rev-parse", "HEAD")
    if head != produced:
        shown = _one(root, "log", "-1", "--format=%h %s", "HEAD")
        raise RollbackRefused(
            f"sync would put the branch back on {original[:12]}, but HEAD is {shown}, not the commit sync made "
            f"({produced[:12]}): a commit landed on top of it; nothing was undone and nothing was pushed",
            path=root, fix="nothing is lost: look at the branch (`git log --oneline --graph -5`), then run "
                           "`flowgit sync` again to judge and push it as it stands")
    running = busy(git_dir(root))
    if running:
        raise RollbackRefused(f"sync would put the branch back on {original[:12]}, but a git command holds "
                              f"{' and '.join(running)}: nothing was undone and nothing was pushed", path=root,
                              fix=stale_lock_fix(root, git_dir(root), running, "run `flowgit sync` again"))
    staged = _one(root, "diff", "--cached", "--name-only", produced, "--")
    if staged:
        raise RollbackRefused(
            f"sync would put the branch back on {original[:12]}, but the index holds changes sync did not write "
            f"({', '.join(staged.splitlines()[:5])}), staged while it ran: putting the branch back would discard "
            f"them; nothing was undone, and the branch holds the integrated commit {produced[:12]}, not pushed",
            path=root, fix="commit your staged change and run `flowgit sync` again (it judges and pushes the "
                           f"branch as it stands); or unstage it and put the branch back yourself "
                           f"(`git reset --keep {original[:12]}`)")


def _gate(root: Path, cfg: Config, original: str, upstream: str | None) -> None:
    """Judge each commit about to be pushed, as ``flowgit audit`` does (it is the audit, over just those
    commits): against each parent, under the configuration committed at the parent (never the working
    tree's, an untracked ``.flowgit.toml`` included), a merge from every best base, trailers against the
    change. A commit that carries a ``Flow-Override:`` trailer was let through loudly when it was made (and
    the audit lists it): its errors stay overridden. Refuse and restore on an error.
    """
    from flowgit.history.audit import RangeSpec, run_audit

    if upstream:  # a branch the remote does not have yet: every commit no remote-tracking branch holds
        spec = RangeSpec(("HEAD",), (upstream,), f"{upstream}..HEAD")
    else:
        remotes = tuple(_one(root, "for-each-ref", "--format=%(objectname)", "refs/remotes").split())
        spec = RangeSpec(("HEAD",), remotes, "HEAD --not --remotes")
    produced = _one(root, "rev-parse", "HEAD")  # (what the integration made: the rollback moves only this)
    report = run_audit(cfg, spec, jobs=1)
    problems = [f.format() + (f"\n    fix: {f.fix}" if f.fix else "") for f in report.findings
                if f.severity == "error"]
    if problems:
        try:
            _back_to(root, original, produced)
        except RollbackRefused as refused:
            raise RollbackRefused("the audit refuses what the push would carry:\n" + "\n".join(dict.fromkeys(problems))
                                  + f"\nand {refused.message}", path=root, fix=refused.fix) from None
        from flowgit.merge.replayed import rebased_from, undo_the_rebase

        before = rebased_from(root)  # (the branch is back as it was: its tip is what a pull's rebase made?)
        raise SyncFailed("the audit refuses what the push would carry (the commits no remote has, the "
                         "integration's included); nothing was pushed and the branch is back as it was:\n"
                         + "\n".join(dict.fromkeys(problems)), path=root,
                         fix=undo_the_rebase(before) if before else SYNC_AUDIT_FIX)


# A commit on top takes no finding back (the audit judges every commit): one of your own commits is rewritten
# before it leaves; a finding in the merge itself is resolved by integrating by hand.
SYNC_AUDIT_FIX = ("a finding in a commit of yours: rewrite that commit (`git rebase -i` from its parent, fix it as "
                  "its fix says, `git rebase --continue`); one in the merge: integrate by hand (`git pull "
                  "--no-rebase`), fix, commit; then `flowgit sync`")
