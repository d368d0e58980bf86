"""Safe file reading and atomic writing.

Reading refuses what is not a text file a person could mean (binary, not UTF-8,
too large) with a clear error; writing goes to a temporary file in the same
directory and is renamed over the target, so a crash never leaves half a file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Callable

from flowgit.errors import FlowgitError, UnreadableText

MAX_TEXT_BYTES = 8 * 1024 * 1024


def decode_text(data: bytes, path: str | Path, *, max_bytes: int = MAX_TEXT_BYTES) -> str:
    """Decode bytes read from ``path`` as UTF-8 text or raise a FlowgitError naming why."""
    if len(data) > max_bytes:
        raise UnreadableText(
            f"file is {len(data):,} bytes, over the {max_bytes:,}-byte limit for a continuity file",
            path=path, fix="archive old sections and move long pasted text (logs, transcripts) out of the file")
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") and _wide_text(data):
        raise UnreadableText("is UTF-16 or UTF-32 text (its byte order mark says so), not UTF-8", path=path,
                           fix="re-save it as UTF-8; if git checks it out so, a `working-tree-encoding` attribute "
                               "in .gitattributes asks for it: remove that attribute for the file")
    if b"\x00" in data[:8192]:
        raise UnreadableText("looks like a binary file, not markdown text", path=path,
                           fix="point flowgit at the continuity markdown file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UnreadableText(f"not valid UTF-8 (byte 0x{data[exc.start]:02x})", path=path, line=line,
                           fix="re-save the file as UTF-8") from None


def _wide_text(data: bytes) -> bool:
    """Whether ``data``, begun with a byte order mark, reads whole as UTF-32 or UTF-16 text."""
    for encoding in ("utf-32", "utf-16"):
        try:
            data[:MAX_TEXT_BYTES].decode(encoding)
            return True
        except UnicodeDecodeError:
            continue
    return False


def as_text(data: bytes) -> str:
    """Bytes that :func:`decode_text` refuses, read as they were most likely meant (for judging a file that
    got past the gate, never for writing): each line that is not UTF-8 as Windows-1252 (Latin-1 where that
    has no character), which is what re-saving it as UTF-8 turns it into; a NUL as a replacement character."""
    out = []
    for line in data.splitlines(keepends=True):
        try:
            out.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            try:
                out.append(line.decode("cp1252"))
            except UnicodeDecodeError:
                out.append(line.decode("latin-1"))
    return "".join(out).replace("\x00", "\ufffd")


def read_text(path: str | Path, *, max_bytes: int = MAX_TEXT_BYTES) -> str:
    """Read a UTF-8 text file exactly (no newline translation)."""
    p = Path(path)
    return decode_text(read_regular(p, max_bytes=max_bytes), p, max_bytes=max_bytes)


def read_regular(path: str | Path, *, max_bytes: int = MAX_TEXT_BYTES) -> bytes:
    """The bytes of a regular file, at most ``max_bytes`` (+1, so the caller can tell it is over).

    A FIFO would block forever and ``/dev/zero`` never ends: anything that is
    not a regular file is refused before a byte is read, and the read itself is
    bounded. The file is opened without blocking and checked on the open
    descriptor, so it cannot be swapped for a FIFO between the check and the read.
    """
    p = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(p, flags)
    except FileNotFoundError:
        raise FlowgitError("no such file", path=p, fix="check the path, or run `flowgit init`") from None
    except IsADirectoryError:
        raise FlowgitError("is a directory, not a file", path=p, fix="name the file itself") from None
    except PermissionError:
        raise FlowgitError("cannot be read (permission denied)", path=p, fix="check the file's permissions") from None
    except OSError as exc:
        raise FlowgitError(f"cannot be read ({exc.strerror})", path=p) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise FlowgitError("is a directory, not a file", path=p, fix="name the file itself")
        if not stat.S_ISREG(st.st_mode):
            raise FlowgitError("is not a regular file (a FIFO, a socket or a device)", path=p,
                               fix="point flowgit at an ordinary file")
        chunks, left = [], max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise FlowgitError(f"cannot be read ({exc.strerror})", path=p) from None
    finally:
        os.close(fd)


def atomic_write(path: str | Path, data: str | bytes, *, before_replace: "Callable[[], None] | None" = None) -> None:
    """Write ``data`` to ``path`` through a temporary file and an atomic rename.

    The file's permission bits are kept when it already exists.
    ``before_replace`` runs after the new bytes are safely on disk, just before
    the rename: a check that the file still holds what the caller read (it
    raises to leave the file as it is), made as late as a rename allows.
    """
    p = Path(path)
    if p.is_symlink():  # write through a link (a continuity file kept elsewhere), never replace the link
        p = p.resolve()
    if p.exists() and not p.is_file():
        # os.replace would swap a device, FIFO or socket for a regular file (as root, even /dev/null)
        raise FlowgitError("is not a regular file, so flowgit will not replace it", path=p,
                           fix="name a regular file (flowgit writes through a temporary file and a rename)")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    p.parent.mkdir(parents=True, exist_ok=True)
    import tempfile  # only writers pay for it (the gate reads through this module on every commit)

    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.chmod(tmp, p.stat().st_mode & 0o7777)
        except FileNotFoundError:
            os.chmod(tmp, 0o644)
        if before_replace is not None:
            before_replace()
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_fix(exc: OSError, where: str | Path | None = None, then: str = "run it again") -> str:
    """The fix for a write that failed, by what failed: space, the file-size limit, or permission to write
    (telling someone to free disk space when a directory is read-only sends them the wrong way)."""
    import errno

    place = f" ({where})" if where else ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"free disk space{place}, then {then}"
    if exc.errno == errno.EFBIG:
        return f"raise the file-size limit (`ulimit -f`){place}, then {then}"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"make the directory writable for you{place} (`ls -ld` shows who may write), then {then}"
    if exc.errno == errno.EROFS:
        return f"the file system is mounted read-only{place}: remount it writable, then {then}"
    return f"free disk space or fix the permissions{place}, then {then}"
