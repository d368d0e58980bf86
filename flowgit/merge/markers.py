"""Git conflict markers: a file that holds them is mid-merge, not a continuity file or a store.

Kept free of heavy imports: every read command and the gate call it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

OPEN, CLOSE = "<" * 7, ">" * 7
# seven or more: a repository's `conflict-marker-size` attribute makes git write longer ones
MARKER_RE = re.compile(rb"^(<{7,}|={7,}|\|{7,}|>{7,})(?:[ \t].*)?\r?$", re.MULTILINE)


class Markers(NamedTuple):
    """Where a conflict's markers are (1-based line numbers)."""

    opening: tuple[int, ...]
    closing: tuple[int, ...]

    @property
    def first(self) -> int:
        return min(self.opening + self.closing)

    def describe(self) -> str:
        lines = sorted(self.opening + self.closing)
        shown = ", ".join(str(n) for n in lines[:4]) + (", …" if len(lines) > 4 else "")
        return f"git conflict markers on line{'s' if len(lines) > 1 else ''} {shown}"


def find_markers(data: bytes | str) -> Markers | None:
    """The conflict markers in ``data``, or None.

    Only ``<<<<<<<`` and ``>>>>>>>`` lines decide (a lone ``=======`` is a
    markdown setext underline); a file with either is mid-merge. Reading starts
    from a byte search (:func:`_holds_run`), so a clean 20 MB store costs two
    ``memchr`` passes.
    """
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    if not _holds_run(raw, b"<") and not _holds_run(raw, b">"):
        return None
    raw = bytes(raw)  # a mapped store: only now, when a marker may be there
    opening: list[int] = []
    closing: list[int] = []
    for m in MARKER_RE.finditer(raw):
        kind = m.group(1)[:1]
        if kind not in (b"<", b">"):
            continue
        line = raw.count(b"\n", 0, m.start()) + 1
        (opening if kind == b"<" else closing).append(line)
    if not opening and not closing:
        return None
    return Markers(tuple(opening), tuple(closing))


RUN = 7  # the shortest marker git writes


def _holds_run(raw, byte: bytes, *, patience: int = 64) -> bool:
    """Whether ``raw`` holds seven ``byte`` in a row, exactly as ``raw.find(byte * 7) != -1`` says.

    A seven-byte substring search steps through a 25 MB store at about a
    third of ``memchr``'s speed, and stores rarely hold ``<`` or ``>`` at all:
    so find each ``byte`` (``memchr``) and compare the run there; a byte that
    keeps recurring without a run hands the rest to the substring search,
    which bounds the cost on any input.
    """
    run = byte * RUN
    find = raw.find
    pos = find(byte)
    for _ in range(patience):
        if pos == -1:
            return False
        if raw[pos:pos + RUN] == run:
            return True
        pos = find(byte, pos + 1)
    return pos != -1 and find(run, pos) != -1
