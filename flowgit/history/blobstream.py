"""Blob contents in a planned order from one ``git cat-file --batch``, inflated by git while Python works.

The log walk and the audit read thousands of versions of the continuity file
(64 KB each) and of the store (up to megabytes), and they know which ones, in
which order, before they read them. Inflating them in-process with libgit2
holds the interpreter for about half of ``flowgit log``; ``git cat-file
--batch`` inflates the same objects in its own process, on another core, while
Python scans and judges the version before.

:class:`BlobStream` keeps git a bounded distance ahead, without a thread:

* at most ``ahead`` ids are asked and not yet answered (:data:`MAX_AHEAD` ids
  of at most 65 bytes fit in one page, the least a pipe holds, so writing them
  never blocks, whatever git is doing: the two pipes cannot deadlock);
* git's answers wait in its stdout pipe (enlarged to :data:`PIPE_BYTES` where
  Linux allows it); when the pipe is full git blocks, so git runs ahead by at
  most that many bytes plus the object it holds, whatever the blob sizes.

Only full object ids are written to git, never a path or a revision
expression. git runs with replace objects off and lazy fetching off (a partial
clone's missing blob is not fetched behind the user's back; git before 2.44
has no switch for it, so callers ask only for objects they know are here:
:func:`planned_reads` asks libgit2 first). Its answers are what the object
database holds, byte for byte what libgit2 reads.

:class:`PlannedReads` is what the walk and the audit call: a blob by id, from
the stream when it is among the next ones planned, otherwise read in-process.
The plan may be inexact (a planned blob never read, a merge's other parent
read out of order, git gone or refusing): that costs time, never an answer.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections import OrderedDict, deque
from pathlib import Path
from typing import Callable, Iterable, Iterator

from flowgit.entry import AS_RECORDED
from flowgit.errors import FlowgitError
from flowgit.git import read_batch_answer

AHEAD = 32  # ids asked and not yet answered: enough to keep git busy, small enough to be cheap to skip
MAX_AHEAD = 60  # 60 ids of up to 65 bytes fill less than one 4 KB page: writing them never blocks
PIPE_BYTES = 1 << 20  # how far git may run ahead (the default ceiling of /proc/sys/fs/pipe-max-size)
SKIPPED_KEPT = 4  # answers read past on the way to a later one, kept for a moment (a read slightly out of order)
# git's own memory, bounded: its delta base cache (96 MB by default) and the pack it keeps mapped (8 GB).
# Reading versions in order needs little of either: over 10,000 versions the CPU time is the same and git's
# peak falls from 266 MB to about 85 MB, which counts against the memory budget of log and audit.
GIT_LIMITS = ("-c", "core.deltaBaseCacheLimit=32m", "-c", "core.packedGitLimit=64m",
              "-c", "core.packedGitWindowSize=16m")
_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class BlobStreamError(Exception):
    """git stopped answering, or answered something else than what was asked: stop using the stream."""


class BlobStream:
    """Objects' raw contents, in the order of ``oids``, from one ``git cat-file --batch`` process.

    Iterate it for ``(oid, bytes)`` pairs (``None`` for an object git does
    not have); close it (or use it as a context manager) to stop and reap git
    at any point. ``oids`` may be a lazy iterable: it is pulled a few ids at a
    time, as answers are taken.
    """

    def __init__(self, git_dir: str | Path, oids: Iterable[str], *, ahead: int = AHEAD) -> None:
        self._pending: Iterator[str] | None = iter(oids)
        self._asked: deque[str] = deque()
        self._ahead = max(2, min(ahead, MAX_AHEAD))
        self._owner = os.getpid()  # a forked child must not reap its parent's git
        self._proc: subprocess.Popen | None = _start(git_dir)
        try:
            self._top_up()
        except BaseException:
            self.close()
            raise

    # ---------------------------------------------------------------- asking
    def _top_up(self) -> None:
        """Ask git for the next planned ids, up to ``ahead`` outstanding, in one write."""
        if self._pending is None or self._proc is None:
            return
        batch: list[str] = []
        while len(self._asked) + len(batch) < self._ahead:
            oid = next(self._pending, None)
            if oid is None:
                self._pending = None
                break
            if not _OID.fullmatch(oid):
                raise ValueError(f"not a full object id: {oid!r}")
            batch.append(oid)
        try:
            if batch:
                self._proc.stdin.write(("\n".join(batch) + "\n").encode("ascii"))
                self._proc.stdin.flush()
            if self._pending is None:
                self._proc.stdin.close()  # git answers what is asked, then sees the end and exits
        except OSError:
            self.close()
            raise BlobStreamError("git stopped reading object ids") from None
        self._asked.extend(batch)

    @property
    def upcoming(self) -> deque[str]:
        """The ids asked and not yet answered, in order (the next answer is for the first)."""
        return self._asked

    # -------------------------------------------------------------- answers
    def __iter__(self) -> "BlobStream":
        return self

    def __next__(self) -> tuple[str, bytes | None]:
        if len(self._asked) <= self._ahead // 2:
            self._top_up()
        if not self._asked or self._proc is None:
            self.close()
            raise StopIteration
        oid = self._asked.popleft()
        try:
            header, data = read_batch_answer(self._proc.stdout)
        except (OSError, ValueError):
            header, data = [], None
        if data is not None:
            if header[0] != oid.encode() or len(data) != int(header[2]):
                self.close()
                raise BlobStreamError(f"git answered {header[:1]!r} for {oid} (or stopped in the middle)")
            return oid, data
        if header != [oid.encode(), b"missing"]:
            self.close()
            raise BlobStreamError(f"git gave no answer for {oid}")
        return oid, None

    # -------------------------------------------------------------- closing
    def close(self) -> None:
        """Stop git and reap it (at once: it only reads); safe to call twice, and in a forked child."""
        proc, self._proc = self._proc, None
        self._pending = None
        self._asked.clear()
        if proc is None or os.getpid() != self._owner:
            return
        for pipe in (proc.stdin, proc.stdout):
            try:
                pipe.close()
            except OSError:  # stdin's last flush into a pipe git has closed
                pass
        if proc.poll() is None:
            proc.kill()
        proc.wait()

    def __enter__(self) -> "BlobStream":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing more to do
            pass


def _start(git_dir: str | Path) -> subprocess.Popen:
    """``git cat-file --batch`` on the repository at ``git_dir`` (its git directory), pipes enlarged."""
    env = {**os.environ, "GIT_DIR": os.fspath(git_dir), "GIT_NO_LAZY_FETCH": "1", **AS_RECORDED}
    try:
        proc = subprocess.Popen(["git", *GIT_LIMITS, "cat-file", "--batch"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, bufsize=1 << 16)
    except OSError as exc:
        raise BlobStreamError(f"git cannot be started ({exc})") from None
    _enlarge(proc.stdout.fileno())
    return proc


def _enlarge(fd: int) -> None:
    """Let git run up to :data:`PIPE_BYTES` ahead (Linux); elsewhere the pipe keeps its size."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):  # not Linux, or over the user's pipe allowance
        pass


class PlannedReads:
    """Blob bytes by id: the stream's next answers when the id is among them, else ``fallback(oid)``.

    A read finds its blob at most ``AHEAD`` answers ahead; the answers it
    passes on the way are kept (the last :data:`SKIPPED_KEPT`) in case they
    are read next. Anything else (not planned, planned long ago, git gone) is
    read by ``fallback``, which gives what the caller gave before there was a
    stream, including its error for a missing object.
    """

    def __init__(self, stream: BlobStream | None, fallback: Callable[[str], bytes]) -> None:
        self._stream = stream
        self._fallback = fallback
        self._skipped: OrderedDict[str, bytes] = OrderedDict()
        self.streamed = 0  # answers taken from the stream (the tests read it)

    def read(self, oid) -> bytes:
        key = str(oid)
        data = self._skipped.pop(key, None)
        if data is None and self._stream is not None and key in self._stream.upcoming:
            data = self._take(key)
        return data if data is not None else self._fallback(key)

    def _take(self, key: str) -> bytes | None:
        try:
            for oid, data in self._stream:
                if oid == key:
                    self.streamed += data is not None
                    return data
                if data is not None:
                    self._skipped[oid] = data
                    if len(self._skipped) > SKIPPED_KEPT:
                        self._skipped.popitem(last=False)
        except BlobStreamError:
            self.close()
        return None

    def close(self) -> None:
        stream, self._stream = self._stream, None
        self._skipped.clear()
        if stream is not None:
            stream.close()

    def __enter__(self) -> "PlannedReads":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def planned_reads(repo, plan: Iterable | None) -> PlannedReads:
    """Reads of ``repo``'s blobs (a pygit2 repository) expected in the order of ``plan`` (ids or Oids).

    Only objects libgit2 has are asked of git (so git never fetches what a
    partial clone lacks); anything else, and everything when git cannot be
    started or there is no plan (None), is read by libgit2 as before; a
    missing object is a clear FlowgitError (no traceback). The plan is pulled
    lazily and need not succeed: a planner that raises just stops planning, and
    the read that meets the same problem raises it where it did before.
    """
    odb = repo.odb

    def fallback(oid: str) -> bytes:
        try:
            return odb.read(oid)[1]  # raw object bytes: no Blob wrapper
        except KeyError:  # libgit2's "not found": a partial clone left the blob on the server
            raise FlowgitError(f"version {oid} of the history is not in this clone (a partial clone fetches "
                               "file contents on demand; flowgit reads history without fetching)",
                               path=repo.path, fix="fetch the missing contents once: `git fetch --refetch`, "
                               "or clone without `--filter`") from None

    def present() -> Iterator[str]:
        try:
            for oid in plan:
                if oid is not None and oid in odb:
                    yield str(oid)
        except Exception:  # e.g. a tree a partial clone lacks: the read itself will meet it and say so
            return

    if plan is None:
        return PlannedReads(None, fallback)
    try:
        stream = BlobStream(repo.path, present())
    except BlobStreamError:
        stream = None
    return PlannedReads(stream, fallback)
