"""Performance compression: the same items restated in fewer words.

Real compression changes the surface area (items archived, facts folded into
one graduated pattern, prose turned into FlowScript). Performance compression
keeps the surface area and only shortens the wording. Per section, items are
paired old -> new by shared content words (patterns by name); a pair whose new
side is shorter, says the same thing and adds no FlowScript structure is a
restatement. A section whose item count did not drop while most of its changed
items are restatements is rejected. REPLACE / REWRITE sections are rewritten by
design and judged by the append rules instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.continuity.document import Item
from flowgit.continuity.patterns import parse_pattern
from flowgit.continuity.sections import Semantics
from flowgit.words import content_words, overlap, word_count

JUDGED = (Semantics.PATTERNS, Semantics.PROVEN, Semantics.LIFECYCLE, Semantics.PROTECTED, Semantics.FREE)
STRUCTURE_RE = re.compile(r"->|<-|<->|><\[|\[(?:decided|blocked|parking|exploring|[DBP]:)|✓|\bthought:|^\s*[?!*~]")
PAIR_MIN = 0.5          # content-word overlap to pair an old item with a new one
SAME_MEANING = 0.75     # share of the new item's words already in the old one
SHORTER = 0.9           # new word count at most this share of the old
MIN_RESTATED = 2        # one shortened item is an edit, not a pattern


@dataclass(frozen=True)
class Restatement:
    old: Item
    new: Item


def _structure(text: str) -> int:
    return len(STRUCTURE_RE.findall(text))


def _pattern_name(item: Item) -> str | None:
    if item.kind != "pattern":
        return None
    p = parse_pattern(item.text)
    return p.name if p else None


def pair_items(old: list[Item], new: list[Item]) -> list[tuple[Item, Item]]:
    """Pair changed items: patterns by name, the rest greedily by content-word overlap."""
    new_texts = {n.text for n in new}
    old_texts = {o.text for o in old}
    old_left = [o for o in old if o.text not in new_texts]
    new_left = [n for n in new if n.text not in old_texts]
    pairs: list[tuple[Item, Item]] = []
    by_name = {_pattern_name(o): o for o in old_left if _pattern_name(o)}
    for n in list(new_left):
        name = _pattern_name(n)
        if name and name in by_name:
            o = by_name.pop(name)
            pairs.append((o, n))
            old_left.remove(o)
            new_left.remove(n)
    scored = sorted(((overlap(content_words(o.text), content_words(n.text)), i, j)
                     for i, o in enumerate(old_left) for j, n in enumerate(new_left)), reverse=True)
    used_o: set[int] = set()
    used_n: set[int] = set()
    for score, i, j in scored:
        if score < PAIR_MIN:
            break
        if i in used_o or j in used_n:
            continue
        used_o.add(i)
        used_n.add(j)
        pairs.append((old_left[i], new_left[j]))
    return pairs


def is_restatement(old: Item, new: Item) -> bool:
    if old.kind == "pattern" and new.kind == "pattern":
        po, pn = parse_pattern(old.text), parse_pattern(new.text)
        if po and pn and (po.level != pn.level or po.evidence != pn.evidence):
            return False  # a promotion or new evidence is a real change
        old_text, new_text = (po.text if po else old.text), (pn.text if pn else new.text)
    else:
        old_text, new_text = old.text, new.text
    if word_count(new_text) > SHORTER * word_count(old_text):
        return False
    if _structure(new_text) > _structure(old_text):
        return False
    new_words = content_words(new_text)
    if not new_words:
        return False
    return len(new_words & content_words(old_text)) / len(new_words) >= SAME_MEANING


def performance_compression(ctx: CheckContext) -> Iterator[Finding]:
    for before, section in ctx.section_pairs(*JUDGED):
        old_items, new_items = ctx.old.items(before), ctx.new.items(section)
        if len(new_items) < len(old_items):
            continue  # the surface area shrank: real compression
        pairs = pair_items(old_items, new_items)
        old_texts = {o.text for o in old_items}
        changed = sum(1 for n in new_items if n.text not in old_texts)
        restated = [Restatement(o, n) for o, n in pairs if is_restatement(o, n)]
        if len(restated) >= MIN_RESTATED and len(restated) * 2 > changed:
            names = "; ".join(_label(r.new) for r in restated[:6]) + (" …" if len(restated) > 6 else "")
            yield Finding("G301", "performance-compression", "error", ctx.path, restated[0].new.first_line,
                          f"{section.label}: {len(restated)} of {changed} changed items restate the same content "
                          f"in fewer words while the section kept {len(new_items)} items (was {len(old_items)}): "
                          f"{names}",
                          "compress for real: archive stale items, fold facts into one graduated pattern, or "
                          "turn prose into FlowScript structure; otherwise keep the original wording")


def _label(item: Item) -> str:
    name = _pattern_name(item)
    return f"`{name}` (line {item.first_line})" if name else f"line {item.first_line} \"{item.text[:40]}\""
