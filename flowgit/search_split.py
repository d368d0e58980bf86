"""A large store searched on two cores: the lines after its middle in a forked process.

Printing the matches of a common word costs far more than finding them (a
third of a million episodes is a hundred megabytes of JSON), and all of it is
per line: so the store is cut at a line boundary near its middle, and a forked
worker scans and renders the second half, with the same code and query, into
an unlinked temporary file while this process scans and prints the first.

Joining the halves is exact when no episode id was printed by both (each half
keeps the first matching line of each id it meets): the worker hands back the
ids it printed with its count and problems, and when one of them was printed
here too, or the worker failed in any way, its output is dropped and this
process scans the second half itself, as it would have without a worker.

Workers are forked (POSIX): nothing is re-imported. Where the platform cannot
fork, only one core is available, or the store is small enough that a fork
costs more than it saves, nothing is split.
"""

from __future__ import annotations

import os
import struct
import sys
from dataclasses import dataclass
from typing import IO, Callable

from flowgit.episodes import Problem

# Smaller stores: forking, handing back and joining (and, on a busy machine, waiting for a core)
# cost more than the half saves. 64 MB is about 250,000 episodes; a common word there takes 0.3 s.
MIN_BYTES = 64 << 20
_FRAME = struct.Struct(">Q")  # the length of the result the worker hands back, before it


def split_point(data) -> int | None:
    """Where the worker's half of ``data`` starts (a line start near the middle), or None: do not split."""
    if len(data) < MIN_BYTES or not hasattr(os, "fork") or _cores() < 2:
        return None
    nl = data.find(b"\n", len(data) // 2)
    return nl + 1 if 0 <= nl < len(data) - 1 else None


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on every platform)
        return os.cpu_count() or 1


@dataclass
class HalfResult:
    """What the worker found: how many episodes it rendered, their ids, and the problems it met, in order.

    The ids come as one string, each followed by a NUL (none holds one, or they
    come as a set in ``id_set``): half a million ids unpacked into a set here
    would cost this process as much memory as the worker's whole half.
    """

    count: int
    packed_ids: bytes
    id_set: set[bytes] | None
    problems: list[Problem]

    def overlaps(self, seen: set[bytes]) -> bool:
        """Whether one of the worker's ids is in ``seen`` (checked a megabyte of ids at a time)."""
        if self.id_set is not None:
            return not seen.isdisjoint(self.id_set)
        ids, start = self.packed_ids, 0
        while start < len(ids):
            end = ids.find(b"\0", start + (1 << 20))
            end = len(ids) if end == -1 else end + 1
            if not seen.isdisjoint(ids[start:end - 1].split(b"\0")):
                return True
            start = end
        return False


# The worker's job: render its half into the file; returns (count, ids printed, problems met).
Job = Callable[[IO[bytes]], tuple[int, set[bytes], list[Problem]]]


def start(job: Job) -> Worker | None:
    """A worker running ``job``, or None when none can be started (no temporary file, no process left)."""
    try:
        return Worker(job)
    except OSError:
        return None


class Worker:
    """A forked process running ``job`` into an unlinked temporary file; reaped by :meth:`close`."""

    def __init__(self, job: Job) -> None:
        import tempfile

        self.out = tempfile.TemporaryFile()
        self.pid: int | None = None
        self.pipe: int | None = None
        for stream in (sys.stdout, sys.stderr):  # nothing buffered here may be written twice
            stream.flush()
        try:
            read_end, write_end = os.pipe()
        except OSError:
            self.out.close()
            raise
        try:
            pid = os.fork()
        except OSError:
            for fd in (read_end, write_end):
                os.close(fd)
            self.out.close()
            raise
        if pid == 0:  # the worker: never returns
            os.close(read_end)
            _run(job, self.out, write_end)
        os.close(write_end)
        self.pid, self.pipe = pid, read_end

    def result(self) -> HalfResult | None:
        """The worker's result once it has handed it back, or None when it failed (its output is then unusable).

        The result arrives framed by its length and the worker closes the pipe
        right after it: a complete frame is written only once the job and its
        output are done, so it proves success without waiting for the worker's
        exit (tearing down a forked copy of a large address space takes a
        while). The worker is reaped in :meth:`close`, after the splice.
        """
        parts = []
        while True:
            part = os.read(self.pipe, 1 << 20)
            if not part:
                break
            parts.append(part)
        os.close(self.pipe)
        self.pipe = None
        payload = b"".join(parts)
        if len(payload) < _FRAME.size or _FRAME.unpack_from(payload)[0] != len(payload) - _FRAME.size:
            return None  # the worker stopped before handing back all of it
        import pickle

        return HalfResult(*pickle.loads(memoryview(payload)[_FRAME.size:]))

    def copy_to(self, write: Callable[[bytes], object], fd: int | None = None) -> None:
        """The worker's output: by the kernel into ``fd`` where it can (what ``write`` feeds, already
        flushed), else a megabyte at a time through ``write``."""
        size, done = self.out.seek(0, os.SEEK_END), 0
        if fd is not None and hasattr(os, "sendfile"):
            try:
                while done < size:
                    sent = os.sendfile(fd, self.out.fileno(), done, size - done)
                    if sent == 0:
                        break
                    done += sent
            except OSError:  # (not a file the kernel can send to, or a non-blocking one that is full)
                pass
        self.out.seek(done)
        while True:
            block = self.out.read(1 << 20)
            if not block:
                return
            write(block)

    def close(self) -> None:
        """End the worker if it still runs (this process stopped early), reap it, and drop its output."""
        if self.pid is not None:
            import signal

            try:
                if self.pipe is not None:  # its result was never taken: it may still be working
                    os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except OSError:
                pass
            self.pid = None
        if self.pipe is not None:
            os.close(self.pipe)
            self.pipe = None
        self.out.close()


def _run(job: Job, out: IO[bytes], pipe: int) -> None:
    """In the worker: run the job, hand back its result, and leave without unwinding the parent's state."""
    code = 1
    try:
        import pickle

        count, ids, problems = job(out)
        out.flush()
        packed = b"\0".join(ids) + b"\0" if ids else b""
        plain = packed.count(b"\0") == len(ids)  # (an id decoded from JSON may hold a NUL)
        result = (count, packed if plain else b"", None if plain else ids, problems)
        payload = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(_FRAME.pack(len(payload)) + payload)
        while view:
            view = view[os.write(pipe, view):]
        os.close(pipe)  # the parent reads the end of the result now, not after this process is torn down
        code = 0
    except BaseException:  # any failure (an interrupt too) means: the parent does this half itself
        pass
    finally:
        os._exit(code)
