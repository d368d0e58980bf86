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
from pathlib import Path
from typing import Any, Iterator

from flowgit.config import Config
from flowgit.errors import FlowgitError
from flowgit.fsio import atomic_write
from flowgit.git import blob_oid, busy, git, git_dir, git_path, hash_for_path, head_entries, head_sha, \
    hex_len, index_tree, write_tree
from flowgit.lock import RepoLock

JOURNAL = "flowgit-wrap.journal"
MESSAGE = "flowgit-wrap.message"  # the commit message git reads (one wrap at a time holds the lock)
FORMAT = 2


class RecoveryRefused(FlowgitError):
    """An interrupted wrap's leftovers cannot be proven to be only its own: nothing is touched."""


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
    path: Path
    root: str
    continuity: str
    continuity_rel: str
    store: str
    index: str
    hex_len: int
    pre: State
    post: State
    message_subject: str = ""
    stage: str = "begun"  # begun -> committing
    pid: int = 0
    host: str = ""
    backups: dict[str, str | None] = field(default_factory=dict)  # continuity, index, payload

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
        journal = cls(path=gdir / JOURNAL, root=str(root), continuity=str(cfg.continuity),
                      continuity_rel=cfg.continuity_rel, store=str(cfg.store), index=str(index), hex_len=n,
                      pre=pre, post=post, message_subject=message.split("\n", 1)[0], pid=os.getpid(),
                      host=socket.gethostname())
        made: list[Path] = []
        try:
            journal.backups = {
                "continuity": _backup(cfg.continuity, gdir / "flowgit-wrap.continuity.bak", made),
                "index": _backup(index, gdir / "flowgit-wrap.index.bak", made),
                "payload": _write_new(gdir / "flowgit-wrap.payload.bak", payload, made),
            }
            journal.save()
        except OSError as exc:
            for extra in made:
                _unlink(extra)
            raise FlowgitError(f"could not start the wrap ({exc.strerror or exc}); nothing was changed",
                               path=gdir, fix="free disk space and run the wrap again") from None
        return journal

    def save(self) -> None:
        data = {"format": FORMAT, **{k: v for k, v in asdict(self).items() if k != "path"}}
        atomic_write(self.path, json.dumps(data, indent=2, default=str))

    def committing(self, cfg: Config) -> None:
        """The files are written: record the index tree ``git add`` will make, before running it."""
        root = Path(self.root)
        tmp = Path(self.index).parent / "flowgit-wrap.index.next"
        try:
            if Path(self.index).exists():
                shutil.copyfile(self.index, tmp)
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
        actual = index_tree(Path(self.root), self.index)
        if actual != self.post.index_tree:
            self.post.index_tree = actual
            self.save()

    # ------------------------------------------------------------ reading
    @classmethod
    def load(cls, cfg: Config) -> "Journal | None":
        path = git_dir(cfg.root) / JOURNAL
        if not path.exists():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.pop("format", None) != FORMAT:
                raise ValueError("written by another version of flowgit")
            data["pre"], data["post"] = State(**data["pre"]), State(**data["post"])
            return cls(path=path, **data)
        except (OSError, ValueError, TypeError, KeyError) as exc:
            raise RecoveryRefused(f"the journal of an interrupted wrap cannot be read ({exc}); nothing was changed",
                                  path=path, fix="compare `git status` with what you expect, then delete the "
                                                 "journal and the flowgit-wrap.*.bak files beside it") from None

    # ------------------------------------------------------------ undoing
    def undo(self) -> str:
        """Undo what the wrap did, after proving the repository holds nothing else; or refuse.

        Returns what was done. Raises RecoveryRefused (leaving everything) when
        the state cannot be proven to be one this wrap left.
        """
        root = Path(self.root)
        gdir = self.path.parent
        running = busy(gdir)
        if running:
            raise self._refuse([f"a git process is still running here (it holds {', '.join(running)})"],
                               fix="wait for that git command to finish (or end it), then run "
                                   "`flowgit wrap --recover`")
        head = head_sha(root)
        if head != self.pre.head:
            if self.stage == "committing" and self._is_our_commit(head):
                self.finish()
                return f"the interrupted wrap had already committed {head[:12]}; cleared its journal"
            raise self._refuse([f"HEAD moved from {_short(self.pre.head)} to {_short(head)}, a commit this "
                                "wrap did not make"])
        problems, actions = self._plan_undo(root)
        if problems:
            raise self._refuse(problems)
        for act in actions:
            act()
        self.finish()
        return "rolled back an interrupted wrap: working tree, store and index are as they were before it"

    def _plan_undo(self, root: Path) -> tuple[list[str], list]:
        problems: list[str] = []
        actions: list = []
        # the index
        tree = index_tree(root, self.index)
        allowed = {self.pre.index_tree} | ({self.post.index_tree} if self.stage == "committing" else set())
        if tree not in allowed:
            problems.append("the index changed since the wrap was interrupted (something else was staged)")
        elif tree != self.pre.index_tree:
            actions.append(self._restore_index)
        # the continuity file
        cont = _oid(_read(Path(self.continuity)), self.hex_len)
        if cont not in (self.pre.continuity, self.post.continuity):
            problems.append(f"{self.continuity_rel} was edited since the wrap was interrupted")
        elif cont != self.pre.continuity:
            actions.append(self._restore_continuity)
        # the store
        verdict = self._store_verdict()
        if verdict:
            problems.append(verdict)
        elif _size(Path(self.store)) != self.pre.store_len:
            actions.append(self._restore_store)
        return problems, actions

    def _store_verdict(self) -> str | None:
        """None when the store holds the pre-wrap bytes plus a prefix of what the wrap appended."""
        store = Path(self.store)
        size = _size(store)
        payload = _read(Path(self.backups["payload"])) if self.backups.get("payload") else b""
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
        store = Path(self.store)
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

    def _restore_continuity(self) -> None:
        target = Path(self.continuity)
        backup = self.backups.get("continuity")
        if self.pre.continuity is None:
            target.unlink()
            return
        if not backup or _oid(_read(Path(backup)), self.hex_len) != self.pre.continuity:
            raise self._refuse(["the backup of the continuity file is missing or does not match the journal"])
        _put_back(Path(backup), target)

    def _restore_index(self) -> None:
        index = Path(self.index)
        backup = self.backups.get("index")
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
            if index_tree(Path(self.root), backup) != self.pre.index_tree:
                raise self._refuse(["the backup of the index does not hold the pre-wrap tree"])
            _put_back(Path(backup), index)
        finally:
            _unlink(lock)

    def _is_our_commit(self, sha: str | None) -> bool:
        """HEAD is the commit this wrap set out to make: parent, tree and subject all match the journal."""
        if not sha or not self.post.index_tree:
            return False
        raw = git(Path(self.root), "cat-file", "commit", sha, check=False)
        header, _, body = raw.partition(b"\n\n")
        lines = header.decode("utf-8", "replace").splitlines()
        tree = next((ln[5:] for ln in lines if ln.startswith("tree ")), None)
        parents = [ln[7:] for ln in lines if ln.startswith("parent ")]
        subject = body.decode("utf-8", "replace").split("\n", 1)[0]
        return (tree == self.post.index_tree and parents == ([self.pre.head] if self.pre.head else [])
                and subject == self.message_subject)

    def _refuse(self, problems: list[str], fix: str | None = None) -> RecoveryRefused:
        return RecoveryRefused(
            "an interrupted wrap cannot be undone safely, so nothing was changed: " + "; ".join(problems),
            path=self.path,
            fix=fix or ("the repository has moved on since: check `git status` and `git log`, keep what you "
                        "want, then delete the journal and the flowgit-wrap.*.bak files beside it"))

    def finish(self) -> None:
        for extra in self.backups.values():
            if extra:
                _unlink(Path(extra))
        _unlink(self.path.parent / MESSAGE)  # left behind only by a wrap killed while git committed
        _unlink(self.path)


def recover(cfg: Config, *, lock_wait: float | None = None) -> str | None:
    """Undo an interrupted wrap if that is provably safe (else RecoveryRefused). Returns what was done."""
    from flowgit.git import require_repo

    gdir = git_dir(require_repo(cfg.root))
    if not (gdir / JOURNAL).exists():
        return None
    with RepoLock(gdir, "flowgit wrap --recover", wait=lock_wait):
        journal = Journal.load(cfg)
        return journal.undo() if journal else None


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
    gdir = git_dir(cfg.root)
    if (gdir / JOURNAL).exists():
        raise RecoveryRefused("an interrupted wrap's journal is still here", path=gdir / JOURNAL,
                              fix="run `flowgit wrap --recover`")
    changed = _changed_since_read(cfg, inputs)
    if changed:
        raise FlowgitError(f"the repository changed while this wrap was deciding ({changed}); nothing was "
                           "written", path=cfg.root, fix="run the wrap again: it starts from the new state")
    running = busy(gdir)
    if running:
        raise FlowgitError(f"a git process is running here (it holds {', '.join(running)}); nothing was written",
                           path=gdir, fix="wait for it to finish and run the wrap again")


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
    if _read(cfg.continuity) != inputs.doc.text.encode("utf-8"):
        return f"{cfg.continuity_rel} was edited"
    if (_read(cfg.store) or b"") != inputs.store_raw:
        return f"{cfg.store_rel} was appended to"
    return ""


def undo_after(journal: Journal, exc: BaseException) -> None:
    """Roll back after a failure in this process.

    A rollback that cannot be proven safe leaves everything and says why; a
    failed write (disk full, a file-size limit) becomes a FlowgitError (exit 2)
    once the repository is back as it was.
    """
    try:
        done = journal.undo()
    except RecoveryRefused as refused:
        sys.stderr.write(f"flowgit: error: {refused.render()}\n")
        return
    if "already committed" in done:
        sys.stderr.write(f"flowgit: note: {done}\n")
        return
    if isinstance(exc, OSError):
        raise FlowgitError(f"the wrap could not write ({exc.strerror or exc}); it was rolled back and the "
                           "repository is as it was before", path=getattr(exc, "filename", None),
                           fix="free disk space (or raise the file-size limit) and run the wrap again") from None
    if isinstance(exc, FlowgitError) and "could not append" in exc.message:
        raise FlowgitError(exc.message + "; the wrap was rolled back", path=exc.path, fix=exc.fix) from None


# ---------------------------------------------------------------- helpers
def _index_modes(root: Path, paths: list[str]) -> dict[str, str]:
    """The modes the index already gives ``paths`` (git add keeps them unless the file's x bit changed)."""
    out = git(root, "ls-files", "-s", "-z", "--", *paths, check=False)
    modes = {}
    for record in out.split(b"\0"):
        meta, _, path = record.partition(b"\t")
        if meta:
            modes[path.decode("utf-8", "surrogateescape")] = meta.split()[0].decode()
    return modes

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
    return str(dst)


def _write_new(dst: Path, data: bytes, made: list[Path]) -> str:
    made.append(dst)
    atomic_write(dst, data)
    return str(dst)


def _put_back(backup: Path, target: Path) -> None:
    """Move a backup over its target (a rename needs no free space); copy across devices."""
    try:
        os.replace(backup, target)
    except OSError:
        atomic_write(target, backup.read_bytes())
