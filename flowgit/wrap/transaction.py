"""The wrap's writes as one transaction that a recovery can prove safe to undo.

The whole transaction runs under the repository lock (:mod:`flowgit.lock`), so
two wraps, or a wrap and an ``episode add``, never interleave. Before the first
write the journal records two states of the repository:

- *pre*: HEAD, the index's tree, the blob ids of the continuity file and the
  store as they are on disk, and the store's length;
- *post*: what the wrap is about to make of each: the file's and the store's
  blob ids and length (the appended bytes are kept beside the journal), and,
  once the files are written, the index tree ``git add`` will produce.

Undoing (after a failure in this process, or by ``--recover`` / the check at
the start of the next wrap after a kill) acts only when every part of the
repository is still in one of the states the wrap could have left it in, and no
git process holds ``index.lock``. Anything else — a commit the wrap did not
make, an edit, an episode added since, another git still running — is reported
and left exactly as it is: HEAD is never reset and no byte the wrap did not
write is ever cut.

The journal describes the repository it lives in, never another: the file, the
store and the backups are named relative to the work tree and the git directory,
and resolved against the repository where the recovery runs. A copy (``cp -a``)
or a moved repository recovers itself, and only after proving that it holds one
of the journal's states (the states are content-addressed, so where the
repository lives does not matter). A wrap whose commit landed before it could
clear its journal is recognised by that commit (its parent, tree and subject are
the journal's) anywhere in HEAD's history: the wrap completed, nothing is undone.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sys
import threading
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator

from flowgit.config import Config
from flowgit.errors import FlowgitError
from flowgit.fsio import atomic_write, write_fix
from flowgit.git import blob_oid, git, git_dir, git_path, hash_for_path, head_entries, head_sha, \
    hex_len, index_tree, literal, operation_in_progress, stale_lock_fix, wait_until_idle, write_tree
from flowgit.journal import WRAP_JOURNAL as JOURNAL
from flowgit.lock import RepoLock, refuse_if_wrap_pending

MESSAGE = "flowgit-wrap.message"  # the commit message git reads (one wrap at a time holds the lock)
REFLOG_LOOKBACK = 200  # HEAD's last moves searched for the wrap's own commit left behind by a reset
NEXT_INDEX = "flowgit-wrap.index.next"  # the index the wrap predicts its commit's tree with (beside git's own)
FORMAT = 3  # 3: paths relative to the repository the journal lives in (2 held absolute paths)
# The backups, by role: always these names in the journal's own git directory, never a path.
BACKUPS = {"continuity": "flowgit-wrap.continuity.bak", "index": "flowgit-wrap.index.bak",
           "payload": "flowgit-wrap.payload.bak"}


def _tree_entries(root: Path, tree: str, paths: list[str]) -> dict[str, tuple[str, str, str]]:
    """{path: (mode, blob id, stage "0")} of ``paths`` in ``tree`` (a path it lacks is left out)."""
    out = git(root, "ls-tree", "-r", "-z", tree, "--", *literal(*paths)).decode("utf-8", "surrogateescape")
    entries = {}
    for item in filter(None, out.split("\0")):
        meta, path = item.split("\t", 1)
        mode, _, oid = meta.split()
        entries[path] = (mode, oid, "0")
    return entries


def _staged_oid(root: Path, path: str, data: bytes, *, write: bool) -> str:
    """The blob ``git add`` records of ``data`` at ``path`` (its filters and line endings), stored when ``write``."""
    return git(root, "hash-object", *(["-w"] if write else []), f"--path={path}", "--stdin",
               input=data).decode().strip()


def _index_records(root: Path, index: Path) -> dict[str, tuple[str, str, str]]:
    """{path: (mode, blob id, stage)} of every entry of the index file ``index`` (a conflicted path's last)."""
    out = git(root, "ls-files", "-s", "-z", env={"GIT_INDEX_FILE": str(index)}).decode("utf-8", "surrogateescape")
    entries = {}
    for item in filter(None, out.split("\0")):
        meta, path = item.split("\t", 1)
        mode, oid, stage = meta.split()
        entries[path] = (mode, oid, stage)
    return entries


class RecoveryRefused(FlowgitError):
    """An interrupted wrap's leftovers cannot be proven to be only its own: nothing is touched."""


class EditedDuringWrap(FlowgitError):
    """The continuity file changed on disk after the wrap read it and before it replaced it (an editor's save):
    the wrap rolls back what it wrote and leaves the file as the editor saved it."""


def refuse_if_edited(cfg: Config, journal: "Journal") -> None:
    """Right before the wrap replaces the continuity file: refuse if it no longer holds the bytes the journal
    recorded, so an edit saved meanwhile is never written over."""
    if _oid(_read(cfg.continuity), journal.hex_len) != journal.pre.continuity:
        raise EditedDuringWrap(f"{cfg.continuity_rel} was saved by someone else while the wrap ran; the wrap "
                               "was rolled back and the file is left as they saved it", path=cfg.continuity,
                               fix="look at the edit, then run the wrap again: it starts from the file as it is")


@dataclass
class State:
    """One state of the parts a wrap touches (None: absent / not known yet)."""

    head: str | None = None
    index_tree: str | None = None
    continuity: str | None = None  # blob id of the file's bytes on disk
    store_len: int | None = None
    store_oid: str | None = None


@dataclass
class Journal:
    """The wrap's record; ``path`` and ``root`` are where it was found, never stored in it."""

    path: Path  # <git dir>/flowgit-wrap.journal of the repository it describes
    root: Path  # that repository's work tree
    continuity_rel: str  # relative to the work tree
    store_rel: str
    hex_len: int
    pre: State
    post: State
    message_subject: str = ""
    stage: str = "begun"  # begun -> committing
    pid: int = 0
    host: str = ""
    backups: dict[str, str | None] = field(default_factory=dict)  # role -> a name in BACKUPS, or None
    kept_edit: Path | None = field(default=None, compare=False)  # where a rollback kept a changed file (not stored)

    @property
    def continuity(self) -> Path:
        return self.root / self.continuity_rel

    @property
    def store(self) -> Path:
        return self.root / self.store_rel

    @cached_property
    def index(self) -> Path:
        """The index of the repository recovering (not a path the journal stored)."""
        return git_path(self.root, "index")

    def backup(self, role: str) -> Path | None:
        name = self.backups.get(role)
        return self.path.parent / name if name else None

    # ------------------------------------------------------------ writing
    @classmethod
    def begin(cls, cfg: Config, final: bytes | None, payload: bytes, message: str) -> "Journal":
        """Record pre and post states and the backups, before the first write (the lock is held)."""
        root = cfg.root
        gdir = git_dir(root)
        n = hex_len(root)
        index = git_path(root, "index")
        cont_now = _read(cfg.continuity)
        store_now = _read(cfg.store)
        pre = State(head=head_sha(root), index_tree=index_tree(root, index),
                    continuity=_oid(cont_now, n), store_len=None if store_now is None else len(store_now),
                    store_oid=_oid(store_now, n))
        if pre.index_tree is None:
            raise FlowgitError("the index has unmerged entries (a merge in progress?)", path=cfg.root,
                               fix="finish or abort the merge, then wrap")
        post_store = (store_now or b"") + payload if (payload or store_now is not None) else None
        post_cont = final if final is not None else cont_now
        post = State(continuity=_oid(post_cont, n), store_len=None if post_store is None else len(post_store),
                     store_oid=_oid(post_store, n))
        journal = cls(path=gdir / JOURNAL, root=Path(root), continuity_rel=cfg.continuity_rel,
                      store_rel=cfg.store_rel, hex_len=n, pre=pre, post=post,
                      message_subject=message.split("\n", 1)[0], pid=os.getpid(), host=socket.gethostname())
        made: list[Path] = []
        try:
            journal.backups = {
                "continuity": _backup(cfg.continuity, gdir / BACKUPS["continuity"], made),
                "index": _backup(index, gdir / BACKUPS["index"], made),
                "payload": _write_new(gdir / BACKUPS["payload"], payload, made),
            }
            journal.save()
        except OSError as exc:
            for extra in made:
                _unlink(extra)
            raise FlowgitError(f"could not start the wrap ({exc.strerror or exc}); nothing was changed",
                               path=gdir, fix=write_fix(exc, gdir, "run the wrap again")) from None
        return journal

    def save(self) -> None:
        data = {"format": FORMAT, **{k: v for k, v in asdict(self).items()
                                     if k not in ("path", "root", "kept_edit")}}
        atomic_write(self.path, json.dumps(data, indent=2, default=str))

    def committing(self, cfg: Config) -> None:
        """The files are written: record the index tree ``git add`` will make, before running it."""
        root = self.root
        index = self.index
        tmp = index.parent / NEXT_INDEX
        try:
            if index.exists():
                shutil.copyfile(index, tmp)
            env = {"GIT_INDEX_FILE": str(tmp)}
            modes = _index_modes(root, [cfg.continuity_rel, cfg.store_rel])
            for rel, file in ((cfg.continuity_rel, cfg.continuity), (cfg.store_rel, cfg.store)):
                if file.exists():
                    oid = hash_for_path(root, rel, file)
                    mode = modes.get(rel, "100644")
                    git(root, "update-index", "--add", "--info-only", "--cacheinfo", f"{mode},{oid},{rel}",
                        env=env)
            self.post.index_tree = write_tree(root, tmp)
        finally:
            _unlink(tmp)
        self.stage = "committing"
        self.save()

    def staged(self) -> None:
        """After ``git add``: if git staged another tree than predicted (a filter, a file mode), record git's."""
        actual = index_tree(self.root, self.index)
        if actual != self.post.index_tree:
            self.post.index_tree = actual
            self.save()

    # ------------------------------------------------------------ reading
    @classmethod
    def load(cls, cfg: Config) -> "Journal | None":
        """The journal of the repository at ``cfg.root``, its paths resolved there (None: no wrap pending)."""
        path = git_dir(cfg.root) / JOURNAL
        if not path.exists():
            return None
        try:
            data = _current_format(json.loads(path.read_text(encoding="utf-8")))
            data["pre"], data["post"] = State(**data["pre"]), State(**data["post"])
            return cls(path=path, root=Path(cfg.root), **data)
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            raise RecoveryRefused(f"the journal of an interrupted wrap cannot be read ({exc}); nothing was changed",
                                  path=path, fix="compare `git status` with what you expect, then delete the "
                                                 "journal and the flowgit-wrap.*.bak files beside it") from None

    # ------------------------------------------------------------ undoing
    def undo(self, *, hook_edits: bool = False, file_not_written: bool = False) -> str:
        """Undo what the wrap did, after proving the repository holds nothing else; or refuse.

        Every part is proven (and every backup checked) before the first
        change, so a refusal leaves the repository exactly as it was. Returns
        what was done. Raises RecoveryRefused when the state cannot be proven
        to be one this wrap left.

        ``hook_edits``: the wrap itself is rolling back a commit git refused,
        still holding the lock, so only git's hooks can have changed the
        continuity file or the index since the wrap wrote them (a formatter
        that rewrites the file and refuses the commit). The file's bytes are
        then kept beside the journal (:data:`HOOK_EDITED`), never lost, and
        the pre-wrap file and index come back from their backups.

        ``file_not_written``: the wrap stopped before it wrote the continuity
        file (:class:`EditedDuringWrap`): whatever the file holds is someone
        else's and is left as it is.
        """
        running = wait_until_idle(self.path.parent)
        if running:
            raise self._refuse([f"a git process is still running here, or one was killed and left its lock "
                                f"behind ({', '.join(running)})"],
                               fix=stale_lock_fix(self.root, self.path.parent, running,
                                                  "run `flowgit wrap --recover` again"))
        head = head_sha(self.root)
        if head != self.pre.head:
            return self._completed(head)
        made = self._our_commit_left_behind() if self.stage == "committing" and not hook_edits else None
        if made is not None:
            self.finish()
            return (f"the interrupted wrap had already committed {made[:12]}, and HEAD was since moved back to its "
                    "parent (`git reflog` shows both): that was done after the wrap, so nothing was rolled back "
                    "and what it changed stands as you left it; cleared its journal")
        problems, actions = self._plan_undo(hook_edits, file_not_written)
        if problems:
            raise self._refuse(problems)
        for act in actions:
            act()
        self.finish()
        return "rolled back an interrupted wrap: working tree, store and index are as they were before it"

    def _completed(self, head: str | None) -> str:
        """HEAD moved: clear the journal if the wrap's own commit is HEAD or in its history, else refuse."""
        sha = self._our_commit_in_history(head) if self.stage == "committing" else None
        if sha is None:
            raise self._refuse([f"HEAD moved from {_short(self.pre.head)} to {_short(head)}, and no commit in "
                                "its history is the one this wrap set out to make"])
        self.finish()
        if sha == head:
            return f"the interrupted wrap had already committed {sha[:12]}; cleared its journal"
        return (f"the interrupted wrap had already committed {sha[:12]}, which HEAD ({head[:12]}) has in its "
                "history, so there was nothing to undo; cleared its journal and its backups (they serve only to "
                "undo a wrap that did not finish, and this one finished)")

    def _our_commit_in_history(self, head: str | None) -> str | None:
        """The commit this wrap made, when it is HEAD or an ancestor of HEAD (a child of the journal's pre-HEAD)."""
        if not head or not self.post.index_tree:
            return None
        if self._is_our_commit(head):
            return head
        if self.pre.head is None:  # the wrap made the first commit: it is a root of HEAD's history
            out = git(self.root, "rev-list", "--max-parents=0", head, check=False).decode()
            children = out.split()
        else:
            base = git(self.root, "merge-base", self.pre.head, head, check=False).decode().strip()
            if base != self.pre.head:  # the wrap's parent is not in HEAD's history: neither is its commit
                return None
            out = git(self.root, "rev-list", "--ancestry-path", "--parents", head, f"^{self.pre.head}",
                      check=False).decode()
            children = [f[0] for f in (ln.split() for ln in out.splitlines()) if f[1:] == [self.pre.head]]
        return next((sha for sha in children if self._is_our_commit(sha)), None)

    def _our_commit_left_behind(self) -> str | None:
        """The wrap's commit when HEAD's reflog shows it made and left since (``git reset --soft HEAD~1`` after
        a kill): the state then looks like a wrap killed before committing, but the wrap had finished, and
        rolling back would undo what the person did after it. None when the reflog shows no such commit."""
        if self.pre.head is None:
            return None  # (the wrap would have made the first commit: HEAD cannot have moved back to before it)
        out = git(self.root, "log", "-g", "--format=%H %P", f"-n{REFLOG_LOOKBACK}", "HEAD", check=False)
        children = dict.fromkeys(fields[0] for fields in (line.split() for line in out.decode("ascii", "replace")
                                                          .splitlines()) if fields[1:] == [self.pre.head])
        return next((sha for sha in children if self._is_our_commit(sha)), None)

    def _plan_undo(self, hook_edits: bool = False, file_not_written: bool = False) -> tuple[list[str], list]:
        """What differs from the pre-wrap state and how to put it back; problems when anything is unproven."""
        problems: list[str] = []
        actions: list = []
        # the index
        tree = index_tree(self.root, self.index)
        allowed = {self.pre.index_tree} | ({self.post.index_tree} if self.stage == "committing" else set())
        if hook_edits and self.stage == "committing" and tree not in allowed:
            allowed.add(tree)  # a hook re-staged what it rewrote: the file's bytes are kept aside below
        if tree not in allowed and self.stage == "committing" and self._partly_staged():
            allowed.add(tree)  # git staged one of the wrap's two files and refused the other
        if tree not in allowed:
            problems.append("the index changed since the wrap was interrupted (something else was staged)")
        elif tree != self.pre.index_tree:
            backup = self.backup("index")
            if backup is not None and index_tree(self.root, backup) != self.pre.index_tree:
                problems.append("the backup of the index does not hold the pre-wrap tree")
            elif backup is not None:
                self._plan_pruned_blobs(backup, problems, actions)
            actions.append(self._restore_index)
        # the continuity file
        cont = _oid(_read(self.continuity), self.hex_len)
        edited_by_hook = hook_edits and self.stage == "committing" and cont not in (
            self.pre.continuity, self.post.continuity) and cont is not None
        if edited_by_hook:
            actions.append(self._keep_hook_edit)
        if file_not_written:
            pass  # (the wrap never wrote it: its bytes are whoever saved them, and stay)
        elif cont not in (self.pre.continuity, self.post.continuity) and not edited_by_hook:
            problems.append(f"{self.continuity_rel} was edited since the wrap was interrupted")
        elif cont != self.pre.continuity:
            backup = self.backup("continuity")
            if self.pre.continuity is not None and (
                    backup is None or _oid(_read(backup), self.hex_len) != self.pre.continuity):
                problems.append("the backup of the continuity file is missing or does not match the journal")
            actions.append(self._restore_continuity)
        # the store
        verdict = self._store_verdict()
        if verdict:
            problems.append(verdict)
        elif _size(self.store) != self.pre.store_len:
            actions.append(self._restore_store)
        return problems, actions

    def _plan_pruned_blobs(self, backup: Path, problems: list[str], actions: list) -> None:
        """Blobs the pre-wrap index names that git no longer has: a version staged before the wrap was held by
        that index alone, and a ``git gc`` run before the recovery pruned it, so the index put back would name
        a missing object (no commit could be made of it). A blob of the file or the store is written again
        when the bytes the recovery puts back are exactly it; any other is a refusal."""
        named = _index_records(self.root, backup)
        blobs = {oid: path for path, (mode, oid, _) in named.items() if mode != "160000"}  # (160000: a submodule)
        if not blobs:
            return
        query = "".join(f"{oid}\n" for oid in blobs).encode("ascii")
        answer = git(self.root, "cat-file", "--batch-check", input=query).decode("ascii", "replace")
        for line in answer.splitlines():
            oid, _, state = line.partition(" ")
            if state != "missing":
                continue
            path = blobs.get(oid, "?")
            data = self._pre_bytes(path)
            if data is not None and _staged_oid(self.root, path, data, write=False) == oid:
                actions.append(lambda path=path, data=data: _staged_oid(self.root, path, data, write=True))
            else:
                problems.append(f"git has pruned the version of {path} the pre-wrap index staged ({oid[:12]}; "
                                "`git gc` after the wrap was interrupted), so that index cannot be put back")

    def _pre_bytes(self, path: str) -> bytes | None:
        """The bytes the recovery puts back at ``path`` (the file's backup; the store's first ``pre.store_len``
        bytes, which the store's verdict proves), or None for any other path."""
        if path == self.continuity_rel and self.pre.continuity is not None:
            backup = self.backup("continuity")
            return _read(backup) if backup is not None else None
        if path == self.store_rel and self.pre.store_len is not None:
            try:
                with self.store.open("rb") as fh:
                    return fh.read(self.pre.store_len)
            except OSError:
                return None  # (gone: the store's verdict says so)
        return None

    def _partly_staged(self) -> bool:
        """Whether the index is the pre-wrap one but for the wrap's two paths, each staged as before the wrap or
        as the wrap staged it: ``git add`` of both stages the one it can and refuses the other (a store kept
        out of the checkout by skip-worktree, or one in an ignored directory), so the index is neither state
        the journal names, and nothing in it is anyone else's. Read, never written: a rollback on a full disk
        must still prove what it undoes."""
        backup = self.backup("index")
        if not self.post.index_tree or backup is None or not backup.exists():
            return False
        paths = {self.continuity_rel, self.store_rel}
        now, before = _index_records(self.root, self.index), _index_records(self.root, backup)
        if {k: v for k, v in now.items() if k not in paths} != {k: v for k, v in before.items() if k not in paths}:
            return False
        after = _tree_entries(self.root, self.post.index_tree, sorted(paths))
        return all(now.get(path) in (before.get(path), after.get(path)) for path in paths)

    def _store_verdict(self) -> str | None:
        """None when the store holds the pre-wrap bytes plus a prefix of what the wrap appended."""
        store = self.store
        size = _size(store)
        payload_file = self.backup("payload")
        payload = _read(payload_file) if payload_file else b""
        pre_len = self.pre.store_len or 0
        if size is None:
            return None if self.pre.store_len is None else "the store was deleted since the wrap was interrupted"
        if size < pre_len:
            return f"the store is shorter than before the wrap ({size:,} < {pre_len:,} bytes)"
        if payload is None or size > pre_len + len(payload):
            extra = size - pre_len - len(payload or b"")
            return f"the store has {extra:,} byte(s) the wrap did not write (episodes added since?)"
        with store.open("rb") as fh:
            head = fh.read(pre_len)
            tail = fh.read()
        if self.pre.store_len is not None and _oid(head, self.hex_len) != self.pre.store_oid:
            return "the store's earlier lines were rewritten since the wrap was interrupted"
        if tail != payload[:len(tail)]:
            return "the store holds bytes after its old end that the wrap did not write"
        return None

    def _restore_store(self) -> None:
        store = self.store
        if self.pre.store_len is None:
            store.unlink()
            return
        with store.open("r+b") as fh:
            fh.truncate(self.pre.store_len)
            fh.flush()
            os.fsync(fh.fileno())
        with store.open("rb") as fh:
            ok = _oid(fh.read(), self.hex_len) == self.pre.store_oid
        if not ok:
            raise FlowgitError("the store did not come back to its pre-wrap bytes", path=store)

    def _keep_hook_edit(self) -> None:
        """Copy the continuity file as it was found beside the journal, under a name no earlier copy has: the
        lock keeps other wraps out, not a person's editor, so the bytes may be someone's edit, and a second
        rollback must not replace the first one's copy."""
        kept = _unused(self.path.parent / HOOK_EDITED)
        data = _read(self.continuity) or b""
        tmp = kept.with_name(kept.name + ".tmp")
        tmp.write_bytes(data)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, kept)  # (a name no copy has: the wrap holds the lock, so no other wrap takes it meanwhile)
        self.kept_edit = kept

    def _restore_continuity(self) -> None:
        if self.pre.continuity is None:
            self.continuity.unlink()
            return
        _put_back(self.backup("continuity"), self.continuity)  # proven by _plan_undo

    def _restore_index(self) -> None:
        index = self.index
        backup = self.backup("index")
        lock = index.with_name(index.name + ".lock")
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)  # git's own protocol
        except FileExistsError:
            raise self._refuse(["a git process took index.lock while the wrap was being undone"]) from None
        os.close(fd)
        try:
            if backup is None:
                index.unlink()  # there was no index before the wrap
                return
            _put_back(backup, index)  # proven by _plan_undo
        finally:
            _unlink(lock)

    def _is_our_commit(self, sha: str | None) -> bool:
        """``sha`` is the commit this wrap set out to make: its parent is the journal's HEAD, it holds the
        continuity file and the store as the wrap staged them, and its subject is the wrap's.

        The wrap commits its two paths only (``git commit -- paths``), so a file staged beside them is not in
        the commit: the two paths are compared, not the whole tree; and a ``prepare-commit-msg`` hook may add
        to the subject (a ticket prefix), so the wrap's subject need only stand in it.
        """
        if not sha or not self.post.index_tree:
            return False
        raw = git(self.root, "cat-file", "commit", sha, check=False)
        header, _, body = raw.partition(b"\n\n")
        lines = header.decode("utf-8", "replace").splitlines()
        tree = next((ln[5:] for ln in lines if ln.startswith("tree ")), None)
        parents = [ln[7:] for ln in lines if ln.startswith("parent ")]
        subject = body.decode("utf-8", "replace").split("\n", 1)[0]
        if parents != ([self.pre.head] if self.pre.head else []) or self.message_subject not in subject:
            return False
        if tree == self.post.index_tree:
            return True
        return (tree is not None and self._paths_in(tree) == self._paths_in(self.post.index_tree)
                and self._changes_only_its_paths(sha))

    def _changes_only_its_paths(self, sha: str) -> bool:
        """Whether ``sha`` changes nothing but the continuity file and the store against its parent (a commit
        that also took other staged files is someone's own, whatever its subject)."""
        if self.pre.head is None:
            return False  # a first commit: only the predicted tree says it is the wrap's
        out = git(self.root, "diff-tree", "-r", "--no-renames", "--name-only", "-z", self.pre.head, sha, check=False)
        changed = {p for p in out.decode("utf-8", "surrogateescape").split("\0") if p}
        return changed <= {self.continuity_rel, self.store_rel}

    def _paths_in(self, tree: str) -> bytes:
        """The entries of the continuity file and the store in ``tree`` (mode, id, path), as git lists them."""
        return git(self.root, "ls-tree", "-z", tree, "--", self.continuity_rel, self.store_rel, check=False)

    def _refuse(self, problems: list[str], fix: str | None = None) -> RecoveryRefused:
        return RecoveryRefused(
            "an interrupted wrap cannot be undone safely, so nothing was changed: " + "; ".join(problems),
            path=self.path,
            fix=fix or ("the repository has moved on since: check `git status` and `git log`, keep what you "
                        "want, then delete the journal and the flowgit-wrap.*.bak files beside it"))

    def finish(self) -> None:
        for role in self.backups:
            extra = self.backup(role)
            if extra is not None:
                _unlink(extra)
        _unlink(self.path.parent / MESSAGE)  # left behind only by a wrap killed while git committed
        self._sweep_temporaries()
        _unlink(self.path)

    def _sweep_temporaries(self) -> None:
        """The wrap's own temporary files a kill left behind (under the lock no writer of flowgit's has one
        open): the index it predicts the commit's tree with, and a file written beside the continuity file or
        the store before its rename (``.CONTINUITY.md.<random>.tmp``)."""
        import glob

        _unlink(self.index.parent / NEXT_INDEX)
        for rel in (self.continuity_rel, self.store_rel):
            target = self.root / rel
            for left in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
                if left.is_file() and not left.is_symlink():
                    _unlink(left)


def recover(cfg: Config, *, lock_wait: float | None = None) -> str | None:
    """Undo an interrupted wrap if that is provably safe (else RecoveryRefused). Returns what was done."""
    from flowgit.git import require_repo

    gdir = git_dir(require_repo(cfg.root))
    if not (gdir / JOURNAL).exists():
        return None
    with RepoLock(gdir, "flowgit wrap --recover", wait=lock_wait, pending_ok=True):
        journal = Journal.load(cfg)
        return journal.undo() if journal else None


def _current_format(data: dict) -> dict:
    """The journal's fields in the current format, checked: names inside this repository, never elsewhere.

    A format-2 journal (absolute paths) is read by its paths relative to the
    root it recorded; the state proof then decides, in this repository, whether
    anything may be undone.
    """
    version = data.pop("format", None)
    if version == 2:
        old_root = Path(data.pop("root"))
        data["store_rel"] = Path(data.pop("store")).relative_to(old_root).as_posix()
        for key in ("continuity", "index"):
            data.pop(key)
        data["backups"] = {role: Path(v).name if v else None for role, v in data.get("backups", {}).items()}
    elif version != FORMAT:
        raise ValueError("written by another version of flowgit")
    for key in ("continuity_rel", "store_rel"):
        rel = Path(data[key])
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            raise ValueError(f"`{key}` is not a path inside the repository")
    for role, name in data.get("backups", {}).items():
        if name is not None and name != BACKUPS.get(role):
            raise ValueError(f"backup `{role}` is not one the wrap writes")
    return data


# What git keeps in its directory while an operation is stopped halfway, and how to end it.
def refuse_in_progress(root: Path) -> None:
    """Refuse (before any write) while git is in the middle of an operation that owns HEAD.

    A wrap committed there is taken by that operation: a ``rebase --abort``
    drops it with its episodes, and a merge refuses the wrap's partial commit.
    """
    found = operation_in_progress(root)
    if found is not None:
        what, how = found
        raise FlowgitError(f"{what} is in progress in this repository; a wrap committed now would be part "
                           "of it, so nothing was written", path=root, fix=f"{how}, then wrap")


class Terminated(KeyboardInterrupt):
    """SIGTERM during the transaction: unwind through the rollback as Ctrl-C does."""


@contextmanager
def sigterm_unwinds() -> Iterator[None]:
    """Turn SIGTERM into an exception for the block, so the rollback runs instead of a silent death."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum, frame):  # noqa: ARG001
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def check_unchanged(cfg: Config, inputs: Any) -> None:
    """Refuse (before any write) if the repository is not as the wrap read it, or a journal or git is pending.

    ``inputs`` is the wrap's :class:`flowgit.wrap.run.Inputs`.
    """
    from flowgit.merge.sync import settle_interrupted_sync

    gdir = git_dir(cfg.root)
    refuse_if_wrap_pending(gdir)  # the lock refused it already unless taken with pending_ok
    refuse_in_progress(cfg.root)
    settle_interrupted_sync(cfg.root)  # a killed sync's half-merged files are not this session's to commit
    changed = _changed_since_read(cfg, inputs)
    if changed:
        raise FlowgitError(f"the repository changed while this wrap was deciding ({changed}); nothing was "
                           "written", path=cfg.root, fix="run the wrap again: it starts from the new state")
    running = wait_until_idle(gdir)
    if running:
        raise FlowgitError(f"a git process is running here, or one was killed and left its lock behind "
                           f"({', '.join(running)}); nothing was written", path=gdir,
                           fix=stale_lock_fix(cfg.root, gdir, running, "run the wrap again"))


def _changed_since_read(cfg: Config, inputs: Any) -> str:
    """What differs from what the wrap read ('' if nothing): HEAD's file or store, the file or store on disk."""
    at_head = head_entries(cfg.root, [cfg.continuity_rel, cfg.store_rel])
    cont_at_head = at_head.get(cfg.continuity_rel)
    if inputs.head_doc is None:
        if cont_at_head is not None:
            return f"a commit added {cfg.continuity_rel}"
    elif cont_at_head is None or cont_at_head[0] != blob_oid(inputs.head_doc.text.encode("utf-8"),
                                                             len(cont_at_head[0])):
        return f"a commit changed {cfg.continuity_rel}"
    if at_head.get(cfg.store_rel) != inputs.head_store:
        return f"a commit changed {cfg.store_rel}"
    on_disk = inputs.on_disk  # (the bytes the wrap read, where git records others)
    if _read(cfg.continuity) != (on_disk.continuity if on_disk else inputs.doc.text.encode("utf-8")):
        return f"{cfg.continuity_rel} was edited"
    if (_read(cfg.store) or b"") != (on_disk.store if on_disk else inputs.store_raw):
        return f"{cfg.store_rel} was appended to"
    return ""


HOOK_EDITED = "flowgit-wrap.hook-edited"  # the continuity file as a hook left it when git refused the wrap's commit


def undo_after(journal: Journal, exc: BaseException) -> bool:
    """Roll back after a failure in this process; True when the wrap's own commit had already landed (then
    there is nothing to undo, and the caller reports the wrap as done).

    A rollback that cannot be proven safe leaves everything and says why; a
    failed write (disk full, a file-size limit) becomes a FlowgitError (exit 2)
    once the repository is back as it was.
    """
    from flowgit.wrap.run import CommitRejected

    refused_commit = isinstance(exc, CommitRejected)
    try:
        done = journal.undo(hook_edits=refused_commit, file_not_written=isinstance(exc, EditedDuringWrap))
    except RecoveryRefused as refused:
        if refused_commit:  # "nothing was changed" would not be true: say what is left
            raise FlowgitError(f"git refused the wrap commit, and the wrap could not be rolled back safely: "
                               f"{refused.message}", path=refused.path, fix=refused.fix) from exc
        sys.stderr.write(f"flowgit: error: {refused.render()}\n")
        return False
    kept = journal.kept_edit
    if refused_commit and kept is not None:
        said = (f"{journal.continuity_rel} was changed while git ran the wrap's commit (by a hook, or by someone "
                f"editing it); the wrap was rolled back and the changed file is kept at {kept}")
        sys.stderr.write(f"flowgit: note: {said}: compare it with {journal.continuity_rel} and take back any edit "
                         "of yours\n")
        if isinstance(exc, FlowgitError):  # (said in the error too: under --json and over MCP stderr is unread)
            exc.message += f"\n{said}"
            exc.fix = (f"compare {kept} with {journal.continuity_rel} and take back any edit of yours; a hook "
                       "that reformats the file: run it on the file before the wrap, then wrap again")
    if "already committed" in done:
        sys.stderr.write(f"flowgit: note: {done}\n")
        return True
    if isinstance(exc, OSError):
        raise FlowgitError(f"the wrap could not write ({exc.strerror or exc}); it was rolled back and the "
                           "repository is as it was before", path=getattr(exc, "filename", None),
                           fix=write_fix(exc, None, "run the wrap again")) from None
    if isinstance(exc, FlowgitError) and "could not append" in exc.message:
        raise FlowgitError(exc.message + "; the wrap was rolled back", path=exc.path, fix=exc.fix) from None
    return False


# ---------------------------------------------------------------- helpers
def _index_modes(root: Path, paths: list[str]) -> dict[str, str]:
    """The modes the index already gives ``paths`` (git add keeps them unless the file's x bit changed)."""
    out = git(root, "ls-files", "-s", "-z", "--", *literal(*paths), check=False)
    modes = {}
    for record in out.split(b"\0"):
        meta, _, path = record.partition(b"\t")
        if meta:
            modes[path.decode("utf-8", "surrogateescape")] = meta.split()[0].decode()
    return modes

def _unused(path: Path) -> Path:
    """``path``, or ``path.2``, ``path.3``… : the first name no file has."""
    n = 1
    found = path
    while found.exists() or found.with_name(found.name + ".tmp").exists():
        n += 1
        found = path.with_name(f"{path.name}.{n}")
    return found


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return None


def _oid(data: bytes | None, n: int) -> str | None:
    return None if data is None else blob_oid(data, n)


def _short(sha: str | None) -> str:
    return sha[:12] if sha else "(no commit)"


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def _backup(src: Path, dst: Path, made: list[Path]) -> str | None:
    if not src.exists():
        return None
    made.append(dst)
    shutil.copy2(src, dst)
    with open(dst, "rb") as fh:
        os.fsync(fh.fileno())
    return dst.name  # the journal names its backups, never where they are


def _write_new(dst: Path, data: bytes, made: list[Path]) -> str:
    made.append(dst)
    atomic_write(dst, data)
    return dst.name


def _put_back(backup: Path, target: Path) -> None:
    """Move a backup over its target (a rename needs no free space); copy across devices."""
    try:
        os.replace(backup, target)
    except OSError:
        atomic_write(target, backup.read_bytes())
