"""The store merge: every line of both sides exactly once, ours first, in stable order.

The store is append-only, so two clones of one base differ only by what each
appended. The merge keeps our lines as they are (the base stays a prefix of the
result) and appends every line of theirs we do not already hold. Lines are
identified by episode id (content-derived, so the same episode written on two
machines is one episode); a line without a readable id is identified by its
bytes, so nothing unreadable is lost or doubled. Duplicates a ``merge=union``
merge once left behind collapse to their first occurrence.
"""

from __future__ import annotations

import re

ID_RE = re.compile(rb'"id"\s*:\s*"([^"\\]{1,200})"')


def line_key(line: bytes) -> bytes:
    """What makes a store line the same line on both sides: its episode id, else its bytes."""
    m = ID_RE.search(line)
    return b"id:" + m.group(1) if m else b"raw:" + line.rstrip(b"\r\n")


def _lines(data: bytes, *, blank: bool = False) -> list[bytes]:
    """The lines of ``data`` without their ``\n``; blank ones only when ``blank`` (ours: see :func:`merge_store`)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines if blank else [ln for ln in lines if ln.strip()]


def merge_store(ours: bytes, theirs: bytes) -> bytes:
    """Our lines, then theirs we lack; each episode once; every kept line ends with a newline.

    The base is not needed: nothing is ever removed from a store, so a line
    either side holds belongs in the result. Where two lines name one id and
    one of them is not a readable episode (a line torn by a crash, the same
    episode appended whole after it), the torn one is identified by its bytes:
    both stay, so neither the torn bytes nor the readable episode is lost. A blank line of ours (an editor's)
    stays in place; theirs add nothing.
    """
    kept: dict[bytes, int] = {}  # key -> where the line that holds it is in ``out``
    out: list[bytes] = []
    for line in (*_lines(ours, blank=True), *_lines(theirs)):
        if not line.strip():
            out.append(line)  # a blank line of ours stays where it is: ours is the result's first bytes, and a
            continue  # line gone from them is a store rewritten (G701), which refuses the merge itself
        key = line_key(line)
        if key in kept and key.startswith(b"id:"):
            held = out[kept[key]]
            if held.rstrip(b"\r\n") == line.rstrip(b"\r\n"):
                continue  # the very same line (a union merge's duplicate, or both sides hold it)
            if not _readable(line, key):
                key = b"raw:" + line.rstrip(b"\r\n")  # this one is torn: by its bytes
            elif not _readable(held, key):
                kept[b"raw:" + held.rstrip(b"\r\n")] = kept.pop(key)  # the kept one was torn: by its bytes
        if key not in kept:
            kept[key] = len(out)
            out.append(line)
    return b"".join(ln + b"\n" for ln in out)


def _readable(line: bytes, key: bytes) -> bool:
    """Whether ``line`` is a JSON object whose id is the one ``key`` names (asked only of lines sharing an id)."""
    import json

    try:
        data = json.loads(line)
    except ValueError:
        return False
    return isinstance(data, dict) and isinstance(data.get("id"), str) and data["id"].encode() == key[3:]
