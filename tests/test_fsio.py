"""Atomic writes: whole files or nothing, never a device swapped for a file, links written through."""

from __future__ import annotations

import os
import stat

import pytest

from flowgit.errors import FlowgitError
from flowgit.fsio import atomic_write


def test_atomic_write_never_replaces_a_device_or_fifo(tmp_path):
    """os.replace onto /dev/null as root would swap the device for a file: refuse instead, touch nothing."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(FlowgitError, match="not a regular file"):
        atomic_write(fifo, "x")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    with pytest.raises(FlowgitError, match="not a regular file"):
        atomic_write("/dev/null", "x")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]  # no temporary file left behind


def test_atomic_write_writes_through_a_symlink(tmp_path):
    real = tmp_path / "notes" / "memory.md"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "CONTINUITY.md"
    link.symlink_to(real)
    atomic_write(link, "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"



@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_utf16_file_names_its_encoding_and_the_attribute_that_checks_it_out_so(encoding):
    """`working-tree-encoding=UTF-16LE-BOM` in .gitattributes checks the file out as UTF-16: "binary" told
    neither the cause nor the fix."""
    from flowgit.errors import UnreadableText
    from flowgit.fsio import decode_text

    data = ("\ufeff" if encoding == "utf-16-be" else "").encode(encoding) + "## Current State\n".encode(encoding)
    with pytest.raises(UnreadableText) as info:
        decode_text(data, "CONTINUITY.md")
    assert "UTF-16 or UTF-32" in info.value.message and "working-tree-encoding" in info.value.fix


@pytest.mark.parametrize("code, says", [
    ("ENOSPC", "free disk space"), ("EDQUOT", "free disk space"), ("EFBIG", "ulimit -f"),
    ("EACCES", "make the directory writable"), ("EPERM", "make the directory writable"),
    ("EROFS", "mounted read-only"), ("EIO", "free disk space or fix the permissions"),
])
def test_a_failed_write_is_told_the_fix_for_what_failed(code, says):
    import errno

    from flowgit.fsio import write_fix

    fix = write_fix(OSError(getattr(errno, code), "x"), "/repo/.git", "run the wrap again")
    assert says in fix and fix.endswith("then run the wrap again") and "(/repo/.git)" in fix
