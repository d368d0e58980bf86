"""The one repository lock: every writer of the continuity file, the store or the index takes it.

The lock is an operating-system lock (``fcntl.flock`` on POSIX, ``msvcrt.locking``
on Windows) on ``<git dir>/flowgit.lock``. The kernel drops it when the holder
exits, however it exits, so a lock is stale exactly when nobody holds it: a
``kill -9`` never leaves the repository locked and a recycled process id can
never make a dead holder look alive. The file also carries the holder's pid,
host, process start time and purpose, written after the lock is taken, so a
refusal can say who holds it; a record left by a dead holder is only ever
reported as "previous holder", never trusted.

Within one thread the lock is re-entrant (a wrap holds it and appends to the
store, which takes it again), counted per lock file. Another thread of the same
process waits as another process does (the MCP server runs tool calls on worker
threads): the OS lock is per open file, and that thread opens its own.

While an interrupted wrap's journal is pending, the lock refuses every writer
but the wrap and its recovery (``pending_ok``): the recovery proves what the wrap
wrote by the store's exact length and bytes and the file's blob id, so an
``episode add`` (or any other write) landing first would turn a state it can
undo into one it must refuse forever. The check runs under the lock, so a wrap
killed while another writer waited is seen too.
"""

from __future__ import annotations

import math
import os
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any, NamedTuple

from flowgit.errors import FlowgitError
from flowgit.journal import pending_journal

LOCK_NAME = "flowgit.lock"
DEFAULT_WAIT = 30.0
_POLL = 0.05

_held: dict[str, tuple[int, int, int]] = {}  # resolved lock path -> (fd, depth, the holding thread's ident)
_guard = threading.Lock()


class LockBusy(FlowgitError):
    """Another process holds the repository lock and did not let go in time."""


class WrapPending(FlowgitError):
    """An interrupted wrap awaits recovery: writing anything now would make it impossible to undo."""


def refuse_if_wrap_pending(git_dir: str | Path, *, probe: bool = False) -> None:
    """Raise WrapPending when an interrupted wrap's journal is in ``git_dir``. ``probe`` (a caller that does
    not hold the lock): a journal whose wrap holds the lock is a wrap running now, and is named as one."""
    path = pending_journal(git_dir)
    if path is not None and probe and lock_taken(git_dir):
        raise WrapPending("a wrap is running now: its edits are not committed yet; nothing was written", path=path,
                          fix="wait for it to finish, then run this command again")
    if path is not None:
        raise WrapPending("an interrupted wrap awaits recovery: the continuity file, the store and the index may "
                          "still hold its half-written changes; nothing was written", path=path,
                          fix="run `flowgit wrap --recover` first (it undoes the interrupted wrap only when it "
                              "can prove the repository holds nothing else), then run this command again")


class Holder(NamedTuple):
    """Who took the lock (as the holder wrote it down). A named tuple, not a dataclass: the gate's hook
    imports this module when a wrap's journal is pending, and defining a dataclass costs it a millisecond."""

    pid: int
    host: str
    started: str  # the holder process's start time (tells a reused pid apart)
    since: float
    purpose: str

    def describe(self) -> str:
        try:
            when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.since))
        except (OverflowError, ValueError, OSError):  # (a record written by hand: the lock is still held)
            when = "an unreadable time"
        return f"process {self.pid} on {self.host} ({self.purpose}, since {when})"


def process_start(pid: int) -> str:
    """An identifier of when ``pid`` started ('' when the platform does not say).

    On Linux this is field 22 of ``/proc/<pid>/stat`` (clock ticks after boot):
    the same pid with another start time is another process.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rpartition(")")[2].split()[19] if ")" in stat else ""


# ------------------------------------------------------------------ OS locks
def _try_lock_posix(fd: int) -> bool:
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError):
        return False
    return True


def _unlock_posix(fd: int) -> None:
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)


def _try_lock_windows(fd: int) -> bool:
    import msvcrt

    os.lseek(fd, 0, os.SEEK_SET)
    try:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
    except OSError:
        return False
    return True


def _unlock_windows(fd: int) -> None:
    import msvcrt

    os.lseek(fd, 0, os.SEEK_SET)
    msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]


def _backend(platform: str | None = None) -> tuple[Any, Any]:
    if (platform or sys.platform) == "win32":
        return _try_lock_windows, _unlock_windows
    return _try_lock_posix, _unlock_posix


# Windows locks a byte range of the file; the record is written from this offset on
# so that locking byte 0 never blocks writing it.
_RECORD_AT = 1


def read_holder(path: Path) -> Holder | None:
    """The record in a lock file (None when empty or unreadable)."""
    try:
        with os.fdopen(os.open(path, os.O_RDONLY | _NO_FOLLOW | getattr(os, "O_BINARY", 0)), "rb") as fh:
            fh.seek(_RECORD_AT)
            import json

            data = json.loads(fh.read(4096) or b"null")
        return Holder(int(data["pid"]), str(data["host"]), str(data["started"]), float(data["since"]),
                      str(data["purpose"]))
    except (OSError, ValueError, TypeError, KeyError):
        return None


class RepoLock:
    """``with RepoLock(git_dir, "wrap"):`` — hold the repository lock for the block.

    ``wait`` is how long to wait for another holder (seconds; 0 refuses at once).
    The default comes from ``$FLOWGIT_LOCK_WAIT`` or 30 s. ``pending_ok``: the
    holder is the wrap or its recovery, which deal with a pending journal
    themselves; every other writer is refused while one is pending (WrapPending).
    """

    def __init__(self, git_dir: str | Path, purpose: str, *, wait: float | None = None,
                 platform: str | None = None, pending_ok: bool = False) -> None:
        self.path = Path(git_dir) / LOCK_NAME
        self.purpose = purpose
        self.pending_ok = pending_ok
        self.wait = _default_wait() if wait is None else wait
        from flowgit.git import git_lock_wait

        git_lock_wait()  # (read once here, where nothing is written yet: a bad value refused up front, never midway)
        self._try, self._unlock = _backend(platform)
        self._key = str(self.path.resolve())

    def __enter__(self) -> "RepoLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self) -> None:
        me = threading.get_ident()
        with _guard:
            if self._key in _held and _held[self._key][2] == me:
                fd, depth, _ = _held[self._key]
                _held[self._key] = (fd, depth + 1, me)
                return
        fd = self._open()  # (held by another thread: its own file, so the OS lock makes it wait its turn)
        deadline = time.monotonic() + self.wait
        told = False
        while not self._try(fd):
            self._refuse_inside_the_holders_commit(fd)
            if not told and self.wait > 0:
                told = True
                self._tell_waiting()
            if time.monotonic() >= deadline:
                os.close(fd)
                holder = read_holder(self.path)
                who = holder.describe() if holder else "another process"
                raise LockBusy(f"the repository is locked by {who}", path=self.path,
                               fix="wait for it to finish and run the command again "
                                   "(the lock is released the moment that process exits)")
            time.sleep(_POLL)
        try:
            self._record(fd)
        except OSError:
            pass  # the record is only for messages: the OS lock is what counts
        if not self.pending_ok:
            try:
                refuse_if_wrap_pending(self.path.parent)
            except WrapPending:
                self._unlock(fd)
                os.close(fd)
                raise
        with _guard:
            _held[self._key] = (fd, 1, me)

    def _refuse_inside_the_holders_commit(self, fd: int) -> None:
        """Refuse at once, not after the whole wait, when this process runs inside the holder's own commit (a
        git hook of the wrap's commit: the wrap passes its pid down as FLOWGIT_WRAP_COMMIT). The holder waits
        for git, git for the hook, the hook for the lock: it could only time out."""
        import socket

        from flowgit.journal import WRAP_COMMIT_VARIABLE

        wrap = os.environ.get(WRAP_COMMIT_VARIABLE, "")
        holder = read_holder(self.path) if wrap.isdigit() else None
        if holder is None or str(holder.pid) != wrap or holder.host != socket.gethostname():
            return
        os.close(fd)
        raise LockBusy(f"the repository is locked by {holder.describe()}, and this runs inside that wrap's own "
                       "commit (from a git hook): the lock is released only after the hook ends",
                       path=self.path, fix="let the hook skip while FLOWGIT_WRAP_COMMIT is set (the wrap records "
                                           "its own episodes), or record the episode after the wrap")

    def _tell_waiting(self) -> None:
        """Say once, on a terminal, who holds the lock and how long this waits: a silent wait of up to
        half a minute looks like a hang."""
        try:
            if not sys.stderr.isatty():
                return
            holder = read_holder(self.path)
            who = holder.describe() if holder else "another process"
            sys.stderr.write(f"flowgit: waiting for the repository lock, held by {who} "
                             f"(up to {self.wait:g} s; $FLOWGIT_LOCK_WAIT sets it)\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass

    def release(self) -> None:
        with _guard:
            fd, depth, owner = _held.get(self._key, (-1, 0, 0))
            if owner != threading.get_ident():
                return  # (not this thread's to release)
            if depth > 1:
                _held[self._key] = (fd, depth - 1, owner)
                return
            _held.pop(self._key, None)
        if fd < 0:
            return
        try:
            self._unlock(fd)
        finally:
            os.close(fd)  # closing drops the lock in any case

    def _open(self) -> int:
        """The lock file, opened without following a link: the holder's record is written into it, and a
        link there (planted, or left by a tool) would have that write truncate the file it names."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _NO_FOLLOW | getattr(os, "O_BINARY", 0), 0o644)
        except OSError as exc:
            if self.path.is_symlink():
                raise _not_a_lock_file(self.path, "a symbolic link") from None
            if self.path.exists() and not self.path.is_file():
                raise _not_a_lock_file(self.path, "not a regular file") from None
            raise FlowgitError(f"cannot open the repository lock ({exc.strerror})", path=self.path,
                               fix="check that the git directory is writable") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise _not_a_lock_file(self.path, "not a regular file")
        return fd

    def _record(self, fd: int) -> None:
        pid = os.getpid()
        import json
        import socket

        record = json.dumps({"pid": pid, "host": socket.gethostname(), "started": process_start(pid),
                             "since": time.time(), "purpose": self.purpose}).encode()
        os.ftruncate(fd, _RECORD_AT)
        os.lseek(fd, _RECORD_AT, os.SEEK_SET)
        os.write(fd, record)


_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)  # (no link followed, no FIFO waited on)


def _not_a_lock_file(path: Path, what: str) -> FlowgitError:
    return FlowgitError(f"the repository lock is {what}; flowgit keeps its lock record only in a regular file "
                        "of its own, never writing through a link", path=path,
                        fix=f"look at what it is, then remove it (`{_remover(path)} {path}`): flowgit creates the "
                            "lock file again when it next writes")


def _remover(path: Path) -> str:
    """The command that removes what stands at ``path`` (``rm`` refuses a directory)."""
    return "rmdir" if path.is_dir() and not path.is_symlink() else "rm"


def lock_taken(git_dir: str | Path, *, platform: str | None = None) -> bool:
    """Whether some process (this one included) holds the repository lock right now: probed by taking it
    and letting go at once, never waited for (a writer polling for it meanwhile just polls again). A lock
    file that does not exist is held by nobody, and the probe never creates one.

    The gate asks this when a wrap's journal is pending: the wrap's own commit runs while the wrap holds
    the lock; a commit at any other time would move HEAD past an interrupted wrap's recovery.
    """
    if held(git_dir):
        return True
    try_lock, unlock = _backend(platform)
    try:
        fd = os.open(Path(git_dir) / LOCK_NAME, os.O_RDWR | _NO_FOLLOW | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return False
    except OSError:
        return True  # cannot be probed (permissions): assume a holder rather than refuse a running wrap
    try:
        if not try_lock(fd):
            return True
        unlock(fd)
        return False
    finally:
        os.close(fd)


def held(git_dir: str | Path) -> bool:
    """Whether this process holds the lock of ``git_dir``."""
    return str((Path(git_dir) / LOCK_NAME).resolve()) in _held


def _default_wait() -> float:
    return env_seconds("FLOWGIT_LOCK_WAIT", DEFAULT_WAIT, "to wait for another writer")


def env_seconds(name: str, default: float, what: str) -> float:
    """``$name`` in seconds (a number of 0 or more; unset or empty: ``default``); anything else is refused, not
    ignored: a wait its author cannot get is a wait they do not expect."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not math.isfinite(value) or value < 0:
        from flowgit.errors import FlowgitError

        raise FlowgitError(f"{name} is {raw!r}, not a number of seconds", path="environment",
                           fix=f"set it to seconds {what}, e.g. {name}={default:g} (or unset it)")
    return value
