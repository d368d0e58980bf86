"""Reading untrusted deposit trees: regular files only, inside the tree, bounded in size and time.

A deposit tree is written by other tools and may hold anything: a FIFO or a
device where a file should be (opening ``/dev/zero`` and reading to the end
never ends), a symlink pointing out of the tree (to ``~/.ssh``), a gigabyte
transcript, a YAML alias bomb in front matter. Every read ascend makes of such
a tree goes through this module, which refuses rather than hangs:

* a path whose real location is outside the tree's root is refused (symlinks
  are followed only when they stay inside);
* only regular files are opened, and the open itself cannot block (a FIFO
  opened without ``O_NONBLOCK`` waits for a writer forever), the type being
  checked again on the open descriptor so a swap between check and open is caught;
* at most ``limit`` bytes are read.

Refusals are returned as a reason, never raised: the caller records them as
scope notes and carries on with the rest of the tree.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Iterator

INDEX_FILE_LIMIT = 1 << 20          # one deposit index file (clue.md, narrative.md …)
FRONTMATTER_LIMIT = 64 * 1024       # the YAML a deposit may ask us to parse
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
SPECIAL = {errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP}
UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
NOT_REGULAR = "not a regular file (a FIFO, device, socket or directory); not read"


class Refused(Exception):
    """A path that is not read, and why (a scope note, not an error)."""


class Tree:
    """One deposit tree's root; answers whether a path may be read and reads it safely."""

    def __init__(self, root: Path | str) -> None:
        self.root = os.path.realpath(root)
        self.refused: list[str] = []

    def inside(self, path: str | Path) -> bool:
        real = os.path.realpath(path)
        return real == self.root or real.startswith(self.root + os.sep)

    def check_dir(self, path: str | Path) -> bool:
        """A directory we may descend into: a real directory (or a link to one) inside the tree."""
        try:
            st = os.stat(path)
        except OSError:
            return False
        if not stat.S_ISDIR(st.st_mode):
            return False
        if not self.inside(path):
            self.note(path, "a link that leads outside the deposit tree; not followed")
            return False
        return True

    def note(self, path: str | Path, why: str) -> None:
        text = f"{path}: {why}"
        if text not in self.refused:
            self.refused.append(text)

    def read_head(self, path: str | Path, limit: int) -> bytes | None:
        """The first ``limit`` bytes of a regular file inside the tree, in one read sized by the file
        (no buffer larger than the file is allocated: this is the hot path of a 10,000-file scan)."""
        opened = self._fd(path)
        if opened is None:
            return None
        fd, size = opened
        try:
            return os.read(fd, min(size, limit)) if size else b""
        finally:
            os.close(fd)

    def open(self, path: str | Path):
        """A binary file object for a regular file inside the tree, or None (a note says why)."""
        opened = self._fd(path)
        return None if opened is None else os.fdopen(opened[0], "rb")

    def _fd(self, path: str | Path) -> tuple[int, int] | None:
        """(descriptor, size) of a regular file inside the tree, or None (a note says why).

        The common case costs two system calls: an open that neither follows a
        link nor blocks (a FIFO opened for reading without ``O_NONBLOCK`` waits
        for a writer forever), and an ``fstat`` of what was opened. Only a link
        takes the slow path: resolved, and followed only when it stays inside.
        """
        try:
            fd = os.open(path, os.O_RDONLY | NONBLOCK | NOFOLLOW)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno in SPECIAL:   # a socket (or a device without a driver) cannot even be opened
                self.note(path, NOT_REGULAR)
                return None
            if exc.errno != errno.ELOOP:
                self.note(path, f"cannot be read ({exc.strerror})")
                return None
            if not self.inside(path):
                self.note(path, "a link that leads outside the deposit tree; not followed")
                return None
            try:
                fd = os.open(path, os.O_RDONLY | NONBLOCK)
            except FileNotFoundError:
                return None   # a dangling link inside the tree: missing, like any missing file
            except OSError as err:
                self.note(path, NOT_REGULAR if err.errno in SPECIAL else f"cannot be read ({err.strerror})")
                return None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            self.note(path, NOT_REGULAR)
            return None
        return fd, st.st_size   # O_NONBLOCK means nothing to a regular file: reads behave as usual

    def read_text(self, path: str | Path, limit: int = INDEX_FILE_LIMIT) -> str | None:
        """At most ``limit`` bytes of a regular file inside the tree, decoded leniently; None if not read."""
        fh = self.open(path)
        if fh is None:
            return None
        with fh:
            data = fh.read(limit + 1)
        if len(data) > limit:
            self.note(path, f"larger than {limit // 1024} KB; only the first {limit // 1024} KB were read")
            data = data[:limit]
        return self.decode(path, data)

    def decode(self, path: str | Path, data: bytes) -> str | None:
        """A deposit file's bytes as text, or None; a note says what was wrong with them.

        Deposits are UTF-8. An editor may add a byte order mark (dropped: the
        front matter that follows must still start the file) or save the file
        as UTF-16; bytes that are not UTF-8 are read with U+FFFD in their
        place. Either way the person is told which file it was: a deposit
        that silently lost every field drops out of its unit unnoticed.
        """
        if data.startswith(UTF8_BOM):
            data = data[len(UTF8_BOM):]
        if data[:2] in UTF16_BOMS or b"\x00" in data[:4096]:
            self.note(path, "saved as UTF-16 (or binary), not UTF-8; not read (re-save it as UTF-8)")
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            self.note(path, f"line {line}: not UTF-8 (byte 0x{data[exc.start]:02x}); read with U+FFFD in place of "
                            "what is not (re-save it as UTF-8)")
            return data.decode("utf-8", "replace")

    def is_file(self, path: str | Path) -> bool:
        """A regular file inside the tree (what :meth:`open` would read), without opening it."""
        try:
            st = os.stat(path)
        except OSError:
            return False
        return stat.S_ISREG(st.st_mode) and self.inside(path)


SKIP_CHUNK = 1 << 20  # how much of an over-long line is read at once on the way to its end


def bounded_lines(fh, longest: int, budget: int | None = None) -> Iterator[tuple[bytes | None, int]]:
    """(line, its length in bytes) for each line of a binary file; the line is None when it is longer than
    ``longest`` (a pasted log, a tool's base64 image), which is passed over a chunk at a time: memory stays
    bounded by ``longest`` whatever the file holds, and a caller counting bytes still counts it.

    ``budget``: the most bytes read in all. Passing over a line stops there (its length is then what was
    read, which takes the caller's count past the budget), so a line a gigabyte long costs the budget, not
    a gigabyte of reads."""
    total = 0
    while True:
        line = fh.readline(longest + 1)
        if not line:
            return
        total += len(line)
        if len(line) <= longest:
            yield line, len(line)
            continue
        size = len(line)
        while not line.endswith(b"\n") and (budget is None or total <= budget):
            line = fh.readline(SKIP_CHUNK)
            if not line:
                break
            size += len(line)
            total += len(line)
        yield None, size
        if budget is not None and total > budget:
            return
