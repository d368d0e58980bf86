"""The wrap's writes as one transaction: journal first, roll back on any failure, recover after a kill.

Before the first write, the journal records HEAD, the continuity file's bytes,
the store's size and a copy of the index under the git directory. Any
exception rolls all of it back. A process killed mid-wrap leaves the journal
behind; the next ``flowgit wrap`` (or ``flowgit wrap --recover``) restores the
repository from it — or, if the commit had already landed, simply clears it.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from flowgit.config import Config
from flowgit.fsio import atomic_write
from flowgit.git import git, head_sha, index_file


def git_dir(root: Path) -> Path:
    rel = Path(git(root, "rev-parse", "--git-dir").decode().strip())
    return rel if rel.is_absolute() else root / rel


@dataclass
class Journal:
    path: Path
    head: str | None
    continuity: str
    continuity_backup: str | None
    store: str
    store_size: int | None
    index_backup: str | None
    index: str
    pid: int

    @classmethod
    def begin(cls, cfg: Config) -> "Journal":
        gdir = git_dir(cfg.root)
        path = gdir / "flowgit-wrap.journal"
        cont_backup = idx_backup = None
        if cfg.continuity.exists():
            cont_backup = str(gdir / "flowgit-wrap.continuity.bak")
            shutil.copyfile(cfg.continuity, cont_backup)
        index = index_file(cfg.root)
        if index.exists():
            idx_backup = str(gdir / "flowgit-wrap.index.bak")
            shutil.copyfile(index, idx_backup)
        journal = cls(path=path, head=head_sha(cfg.root), continuity=str(cfg.continuity),
                      continuity_backup=cont_backup, store=str(cfg.store),
                      store_size=cfg.store.stat().st_size if cfg.store.exists() else None,
                      index_backup=idx_backup, index=str(index), pid=os.getpid())
        atomic_write(path, json.dumps({k: v for k, v in journal.__dict__.items() if k != "path"}, indent=2))
        return journal

    @classmethod
    def load(cls, cfg: Config) -> "Journal | None":
        path = git_dir(cfg.root) / "flowgit-wrap.journal"
        if not path.exists():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(path=path, **data)

    def rollback(self, root: Path) -> None:
        """Put the working tree, the store and the index back as the journal found them."""
        if head_sha(root) != self.head and self.head is not None:
            git(root, "reset", "--soft", self.head)
        if self.continuity_backup:
            atomic_write(self.continuity, Path(self.continuity_backup).read_bytes())
        elif Path(self.continuity).exists():
            Path(self.continuity).unlink()
        store = Path(self.store)
        if self.store_size is None:
            if store.exists():
                store.unlink()
        elif store.exists() and store.stat().st_size != self.store_size:
            with store.open("r+b") as fh:
                fh.truncate(self.store_size)
        if self.index_backup:
            atomic_write(self.index, Path(self.index_backup).read_bytes())
        self.finish()

    def finish(self) -> None:
        for extra in (self.continuity_backup, self.index_backup):
            if extra and Path(extra).exists():
                Path(extra).unlink()
        if self.path.exists():
            self.path.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(cfg: Config) -> str | None:
    """Finish an interrupted wrap: roll back if its commit never landed. Returns what was done."""
    journal = Journal.load(cfg)
    if journal is None:
        return None
    if journal.pid != os.getpid() and _alive(journal.pid):
        from flowgit.errors import FlowgitError

        raise FlowgitError(f"another wrap (process {journal.pid}) is running in this repository",
                           path=journal.path, fix="wait for it to finish")
    head = head_sha(cfg.root)
    if head != journal.head and _commit_is_wrap(cfg.root, head):
        journal.finish()
        return "an interrupted wrap had already committed; cleared its journal"
    journal.rollback(cfg.root)
    return "rolled back an interrupted wrap: working tree, store and index are as they were before it"


def _commit_is_wrap(root: Path, sha: str | None) -> bool:
    if not sha:
        return False
    body = git(root, "log", "-1", "--format=%B", sha).decode("utf-8", "replace")
    return "Flow-Session:" in body
