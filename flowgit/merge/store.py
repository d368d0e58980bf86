"""The store merge: three-way by whole lines: what both sides hold or appended once, ours first, in stable order.

The store is append-only, so two clones of one base differ mostly by what each
appended. The merge keeps our lines as they are and appends every line of theirs
we do not already hold. Lines are identified by episode id (content-derived, so
the same episode written on two machines is one episode); a line without a
readable id is identified by its bytes, so nothing unreadable is lost or
doubled. Duplicates a ``merge=union`` merge once left behind collapse to their
first occurrence.

The one removal a store sees is deliberate: a leaked secret redacted in a
commit that carries ``Flow-Override:``. A line the base held, exactly, that one
side no longer holds was removed there, and the other side merely kept it: it
stays removed (a union of the two sides would bring the secret back
unannounced). Lines added on either side are never dropped, and every line is
taken whole, never merged inside.

Two agents that record the same text in one session write one episode id
(the id hashes type, content and session). Ids stay unique — ``episode add``
answers such a line "already stored", the gate refuses an appended repeat
(G703), every reader reads the first line of an id — so the merge keeps ours'
line and names the other side's record (its agent, tags and time) in a driver
note, never silently. Keeping one line rewrites the other branch's record, so
the gate refuses the merge commit (G708) until a person picks the true record
and commits it under an override.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flowgit.episodes import Episode

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


def removed_since_base(base: bytes, ours: bytes, theirs: bytes) -> set[bytes]:
    """The base's lines (without line endings) that one side no longer holds: removed there on purpose.

    A line counts as removed only where that side holds no line that begins with it, so a torn last line a
    side completed (appended onto) is not taken for a removal."""
    def held(data: bytes) -> list[bytes]:
        return [ln.rstrip(b"\r") for ln in _lines(data)]

    mine, other = held(ours), held(theirs)
    gone: set[bytes] = set()
    for line in set(held(base)):
        for side in (mine, other):
            if line not in side and not any(ln.startswith(line) for ln in side):
                gone.add(line)
    return gone


def merge_store(ours: bytes, theirs: bytes, base: bytes = b"") -> bytes:
    """Our lines, then theirs we lack, less what one side removed since ``base``; each episode once; every
    kept line ends with a newline.

    A line either side appended belongs in the result; a line of the base one
    side removed (a redaction) does not, though the other side kept it. Where two lines name one id and
    one of them is not a readable episode (a line torn by a crash, the same
    episode appended whole after it), the torn one is identified by its bytes:
    both stay, so neither the torn bytes nor the readable episode is lost. A blank line of ours (an editor's)
    stays in place; theirs add nothing.
    """
    kept: dict[bytes, int] = {}  # key -> where the line that holds it is in ``out``
    out: list[bytes] = []
    removed = removed_since_base(base, ours, theirs) if base else set()
    for line in (*_lines(ours, blank=True), *_lines(theirs)):
        if not line.strip():
            out.append(line)  # a blank line of ours stays where it is: ours is the result's first bytes, and a
            continue  # line gone from them is a store rewritten (G701), which refuses the merge itself
        if line.rstrip(b"\r") in removed:
            continue  # the base held it and one side removed it: a redaction stays done
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


def added_since_base(side: bytes, base: bytes) -> list[Episode]:
    """The episodes ``side``'s store holds that ``base``'s did not (by :func:`line_key`): what that side
    recorded since, which the pattern merge reads (a pattern they are about fired there)."""
    from flowgit.episodes import parse_store

    held = {line_key(ln) for ln in _lines(base)}
    return list(parse_store(b"\n".join(ln for ln in _lines(side) if line_key(ln) not in held))[0].values())


def _readable(line: bytes, key: bytes) -> bool:
    """Whether ``line`` is a JSON object whose id is the one ``key`` names (asked only of lines sharing an id)."""
    from flowgit.episodes import line_object

    try:
        data = line_object(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and isinstance(data.get("id"), str) and data["id"].encode() == key[3:]


def other_records(ours: bytes, theirs: bytes) -> list[str]:
    """A note per episode both sides recorded with other details (another agent, tags or time): the merge
    keeps ours' line, so theirs' record is named here rather than dropped without a word, and the merge
    stops for a person to choose (the gate's G708)."""
    from flowgit.episodes import line_object

    mine: dict[bytes, bytes] = {}
    for line in _lines(ours):
        mine.setdefault(line_key(line), line.rstrip(b"\r"))
    notes: list[str] = []
    for line in _lines(theirs):
        key, line = line_key(line), line.rstrip(b"\r")
        held = mine.get(key)
        if held is None or held == line or not (_readable(line, key) and _readable(held, key)):
            continue
        kept, other = line_object(held), line_object(line)  # (both read already: _readable)
        if kept == other:
            continue  # one record written with other spacing or key order
        notes.append(f"episode {key[3:].decode()} was recorded on both sides (one id: same type, content and "
                     f"session); kept ours ({_who(kept)}); theirs ({_who(other)}) stays in its commit's history. "
                     "Keeping either rewrites one branch's record (G708), so the merge stops for you to choose: "
                     "keep the line the shared (pushed) branch holds, `git add` the store and commit with "
                     "FLOWGIT_OVERRIDE=\"G708: <why that record is true>\"")
    return notes


def _who(record: dict) -> str:
    tags = ", ".join(t for t in record.get("tags") or [] if isinstance(t, str))
    return f"agent {record.get('agent') or '?'}, tags [{tags}], at {record.get('ts') or '?'}"
