"""Read the episode store (and hash it as git would) while the gate is still starting.

``flowgit check`` spends its first tens of milliseconds importing; the store
(tens of megabytes) takes about as long to read and hash, and neither step
holds the GIL for long. So the command starts reading the store at the default
path at once, on a second thread, and the gate later *takes* that reading if
the path it judges is the same file. Nothing is trusted because it was read
early: the bytes are still proved against the staged blob id by their hash,
exactly as bytes read late would be (:class:`flowgit.checks.staged.Proof`);
a reading nobody takes is dropped. The gate takes the bytes as soon as they
are read and judges them while the same thread hashes them; the verdict
stands only once the hash proves them (``Reading.wait``), and is redone on
git's own blob otherwise.

Kept free of flowgit imports so it can start before them.
"""

from __future__ import annotations

import os
import stat
import threading

DEFAULT_STORE = ".flow/episodes.jsonl"  # flowgit.config.DEFAULT_STORE (a test holds them equal)
JUDGED = ("CONTINUITY.md", DEFAULT_STORE, ".flowgit.toml", "pyproject.toml")  # the default paths the gate judges
MAX_EARLY_BYTES = 256 << 20  # a larger store is read when the gate knows it needs it, not speculatively
EAGER_BYTES = 64 << 20  # a store up to this size is read while git answers whether it is staged at all

_pending: list["Reading"] = []


def read_regular(path: str | os.PathLike, limit: int | None = None) -> tuple[bytes, tuple[int, int]] | None:
    """A regular file's bytes and (device, inode); None when larger than ``limit``.

    Opened without blocking and checked on the open descriptor: a FIFO would
    block forever and a device never ends, so anything else is an OSError.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with open(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path} is not a regular file")
        if limit is not None and st.st_size > limit:
            return None
        return fh.read(), (st.st_dev, st.st_ino)


def blob_sha1(data: bytes) -> str:
    """The SHA-1 blob id git gives ``data``."""
    import hashlib

    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


class Reading:
    """One file read, then hashed, on a daemon thread: :meth:`read` waits for the bytes, :meth:`wait` for the hash."""

    def __init__(self, path: str, cwd: str | None = None) -> None:
        self.path = path
        self.cwd = cwd
        self.data: bytes | None = None
        self.identity: tuple[int, int] | None = None
        self.sha1: str | None = None
        self.error: OSError | None = None
        self._read = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._read_file()
        finally:
            self._read.set()
        if self.data is not None:
            self.sha1 = blob_sha1(self.data)

    def _read_file(self) -> None:
        """Read the store while git says whether anything judged is staged (a store too large to read in
        vain waits for that answer first); an unrelated commit drops what was read."""
        asked = _ask_staged(self.cwd) if self.cwd is not None else None
        try:
            if asked is not None and os.stat(self.path).st_size > EAGER_BYTES and not _staged(asked):
                return  # most likely an unrelated commit: the gate will not read the store (if it does, it reads it then)
            got = read_regular(self.path, MAX_EARLY_BYTES)
        except OSError as exc:
            self.error = exc
            return
        finally:
            staged = asked is None or _staged(asked)  # reaps git, however the read went
        if got is not None and staged:
            self.data, self.identity = got

    def read(self) -> "Reading":
        """Once the bytes are read (or known unreadable); their hash may still be running."""
        self._read.wait()
        return self

    def wait(self) -> "Reading":
        """Once the bytes are read and hashed (``sha1`` set)."""
        self._thread.join()
        return self


def start(cwd: str) -> None:
    """Begin reading the store at its default place under ``cwd`` (where git runs its hooks).

    Kept only when the index differs from HEAD at one of the default judged
    paths: under the pre-commit framework the gate runs on every commit, and
    an unrelated one should not pay for a large store. A store of up to
    ``EAGER_BYTES`` is read while git answers (on a spare core: the gate has
    its imports to do meanwhile); a larger one waits for the answer.
    """
    _pending.append(Reading(os.path.join(cwd, DEFAULT_STORE), cwd))


def _ask_staged(cwd: str) -> int | None:
    """Start ``git diff --cached --quiet`` over the default judged paths; its pid (None: git cannot be started)."""
    quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    try:
        argv = ["git", "-C", cwd, "diff", "--cached", "--quiet", "--no-ext-diff", "--", *JUDGED]
        return os.posix_spawnp("git", argv, dict(os.environ), file_actions=quiet)
    except (OSError, AttributeError):
        return None


_answers: dict[int, bool] = {}


def _staged(pid: int | None) -> bool:
    """Whether that ``git diff --cached`` saw a change (True when it cannot tell); waits for it once."""
    if pid is None:
        return True
    if pid not in _answers:
        try:
            _, status = os.waitpid(pid, 0)
            _answers[pid] = os.waitstatus_to_exitcode(status) != 0
        except OSError:
            _answers[pid] = True
    return _answers[pid]


def take(path: str | os.PathLike) -> Reading | None:
    """The early reading of ``path`` if one was started and it read that very file (same device and inode)."""
    while _pending:
        reading = _pending.pop().read()
        if reading.data is None or reading.identity is None:
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == reading.identity:
            return reading
    return None
