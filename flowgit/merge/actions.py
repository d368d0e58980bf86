"""Action items merged one by one: done wins, ``seen:`` / ``next:`` take the later date.

An item is identified by its text without the lifecycle marks (bullet, ``✓``,
``seen:`` and ``next:`` fields), so the same item re-dated on one side and
ticked on the other is recognised as one item and gets both changes.
"""

from __future__ import annotations

import re

from flowgit.continuity.document import BULLET_RE, strip_eol
from flowgit.dates import parse_date

FIELD_RE = re.compile(r"(?:\s*[—–,;]\s*|\s+)?\b(seen|next):\s*([^,;\]—–]+?)\s*(?=[,;\]—–]|$)")
DONE_RE = re.compile(r"^\s*✓\s*")


def is_item_start(line: str) -> bool:
    return bool(BULLET_RE.match(line))


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def is_continuation(line: str, top: int | None) -> bool:
    """Whether ``line`` belongs to the item above it: indented deeper than the section's items (a sub-task, a
    wrapped line). Such lines merge with their item, never on their own (else a sub-task one side added under
    an item the other removed lands under the item before it)."""
    return bool(line.strip()) and top is not None and indent(line) > top


def item_key(line: str) -> str:
    """The item's identity: its words without bullet, tick and lifecycle fields."""
    text = strip_eol(line)
    m = BULLET_RE.match(text)
    text = text[m.end():] if m else text
    text = DONE_RE.sub("", text)
    text = FIELD_RE.sub(lambda f: "" if _a_field(f) else f.group(), text)
    return " ".join(text.split()).rstrip(" —–,;").casefold()


def fields(line: str) -> dict[str, str]:
    return {m.group(1): m.group(2).strip() for m in FIELD_RE.finditer(strip_eol(line)) if _a_field(m)}


def _a_field(found: "re.Match[str]") -> bool:
    """Whether a `seen:`/`next:` found in an item is its lifecycle field: set off by a dash, comma or
    semicolon (as the wrap writes it), or holding a date; `Plan next: Q1 roadmap` is the item's own words."""
    from flowgit.dates import parse_date

    return bool(re.match(r"\s*[—–,;]", found.group())) or parse_date(found.group(2)) is not None


def is_done(line: str) -> bool:
    text = strip_eol(line)
    m = BULLET_RE.match(text)
    return (text[m.end():] if m else text).lstrip().startswith("✓")


def _later(a: str | None, b: str | None) -> str | None:
    if not a or not b:
        return a or b
    da, db = parse_date(a), parse_date(b)
    if da is None or db is None:
        return a
    return b if db > da else a


def merge_item(ours: str, theirs: str) -> str:
    """One item changed on both sides: ours as the template, ticked if either ticked, later dates."""
    from flowgit.wrap.apply import _mark_done, _set_field  # the wrap's own lifecycle edits, loaded when needed

    eol = ours[len(strip_eol(ours)):]
    line = strip_eol(ours)
    if is_done(theirs) and not is_done(line):
        line = _mark_done(line)
    mine, other = fields(ours), fields(theirs)
    for key in ("seen", "next"):
        value = _later(mine.get(key), other.get(key))
        if value and value != mine.get(key):
            line = _set_field(line, key, value)
    return line + eol


def merge_block(base: str | None, ours: str, theirs: str) -> str:
    """An item with its sub-lines changed on both sides: the item line by :func:`merge_item`, the sub-lines
    three ways (ours' in order, less what theirs removed; then what theirs added)."""
    o_first, _, o_rest = ours.partition("\n")
    t_first, _, t_rest = theirs.partition("\n")
    b_rest = (base or "").partition("\n")[2]
    eol = "\n" if o_first != ours else ""
    first = o_first + eol if o_first == t_first else merge_item(o_first + eol, t_first + eol)
    o_sub, t_sub, b_sub = (_sub_lines(x) for x in (o_rest, t_rest, b_rest))
    kept = [ln for ln in o_sub if ln in t_sub or ln not in b_sub]
    kept += [ln for ln in t_sub if ln not in o_sub and ln not in b_sub]
    return first + "".join(kept)


def _sub_lines(rest: str) -> list[str]:
    return [ln + "\n" for ln in rest.split("\n") if ln] if rest else []
