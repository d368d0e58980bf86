"""Performance compression: the same items restated in fewer words.

Real compression changes the surface area (items archived, facts folded into
one graduated pattern, prose turned into FlowScript). Performance compression
keeps the surface area and only shortens the wording. Per section, items are
compared with markup normalised (bullet style, emphasis, inline code, evidence
ids, lifecycle fields such as ``seen:``/``next:`` and ``✓`` sub-tasks) and
paired old -> new by identity (patterns) or shared content words; a pair whose
new side is shorter, says nothing new and adds no FlowScript structure is a
restatement. Every surviving item counts: archiving others does not excuse it.
One or two small fixes (a typo, a doubled word) are edits; three restatements,
or two that each drop a tenth of the words, are performance compression.
REPLACE / REWRITE sections are rewritten by design and judged by the append
rules instead.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterator, NamedTuple

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.continuity.document import Item, SectionFacts, shared_ends
from flowgit.continuity.identity import name_key
from flowgit.continuity.patterns import parse_pattern
from flowgit.continuity.sections import Semantics
from flowgit.dates import parse_date
from flowgit.words import content_words, overlap, word_count

# The protocol's sections: a section of the user's own (a glossary, notes) is theirs to tighten as they like.
JUDGED = (Semantics.PATTERNS, Semantics.PROVEN, Semantics.LIFECYCLE, Semantics.PROTECTED)
# FlowScript notation an item gains when prose becomes structure (the protocol's "denser notation, fewer words
# for the same meaning"): a relation that points at something, a tension, a state, ``thought:``, a question.
# A modifier prefix (``!``, ``*``, ``~``, ``++``) says how sure or urgent, it replaces no words; a list bullet
# (``* `` is one, like ``- ``), a done mark (``✓`` is lifecycle) and an arrow pointing at nothing count neither.
STRUCTURE_RE = re.compile(r"(?:<->|->|<-)\s*\S|><\[|\[(?:decided|blocked|parking|exploring|[DBP]:)|\bthought:"
                          r"|^\s*\?\s")
LIST_MARK_RE = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
PAIR_MIN = 0.5          # content-word overlap to pair an old item with a new one
SAME_MEANING = 0.75     # share of the new item's words already in the old one
SHORTER = 0.9           # new word count at most this share of the old
MIN_RESTATED = 3        # restatements of any size: one or two are edits (a typo, a doubled word)
MIN_CLEAR = 2           # restatements that each drop at least a tenth of the words
MARKUP_RE = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+|[`*_~]+|\[evidence:[^\]]*\]", re.IGNORECASE)
LIFECYCLE_RE = re.compile(r"(?:[—–-]\s*)?\b(?:seen|next|due|since|until)\s*:\s*[^,;—–|\]]*[,;]?", re.IGNORECASE)
# A lifecycle field's keyword and colon, found by a scan that starts at one of four letters (a pattern that
# opens with a character set is scanned for that set in C; LIFECYCLE_RE, opening with an optional dash and a word
# boundary, is tried at every position). It matches wherever LIFECYCLE_RE does, and more: only a text it finds
# something in is given to LIFECYCLE_RE.
LIFECYCLE_HINT_RE = re.compile(r"[sndu](?:een|ext|ue|ince|ntil)\s*:", re.IGNORECASE)
DONE_RE = re.compile(r"✓[^✓]*$|\[x\][^\n]*$", re.IGNORECASE)


class Restatement(NamedTuple):
    """An old item and the shorter new item that says nothing more."""

    old: Item
    new: Item


def _structure(text: str) -> int:
    """How much FlowScript notation an item holds (see :data:`STRUCTURE_RE`), its bullet, done marks and
    lifecycle fields aside (``-> — next: Dec 1`` points at nothing)."""
    text = _without_lifecycle(LIST_MARK_RE.sub("", text, count=1).replace("✓", " "))
    return len(STRUCTURE_RE.findall(text))


def _without_lifecycle(text: str) -> str:
    """``text`` with each lifecycle field (``seen:``, ``next:`` …) replaced by a space when it holds a date;
    a field that holds words (``— next: verify the backups``, a step split off the item) keeps its words:
    they are the item's content, moved, not cut."""
    if ":" in text and LIFECYCLE_HINT_RE.search(text):
        return LIFECYCLE_RE.sub(_field_words, text)
    return text


def _field_words(field: re.Match) -> str:
    """A date field as a space; a field of words as its keyword and words (``next: verify …`` says "next,
    verify …": the field's name is part of what it says)."""
    key, value = field.group(0).split(":", 1)
    value = value.strip(" \t,;")
    if not value or parse_date(value) is not None:
        return " "
    return f" {key.strip(' —–-').strip()} {value} "


def _pattern_name(item: Item) -> str | None:
    if item.kind != "pattern":
        return None
    p = parse_pattern(item.text)
    return p.name if p else None


@lru_cache(maxsize=1 << 15)
def normalise(text: str) -> str:
    """An item's words without markup or lifecycle fields: what a restatement is measured on."""
    return _words(text, _field_words)


def _words(text: str, field) -> str:
    """``text`` without markup and done marks, each lifecycle field replaced by ``field`` (a string, or a
    function of the match as :func:`re.sub` takes), spacing collapsed."""
    text = MARKUP_RE.sub(" ", text)
    if ":" in text and LIFECYCLE_HINT_RE.search(text):
        text = LIFECYCLE_RE.sub(field, text)
    return " ".join(text.replace("✓", " ").split())


def _norm(item: Item) -> Item:
    return Item(item.start, item.end, normalise(item.text), item.kind)


def pair_items(old: list[Item], new: list[Item]) -> list[tuple[Item, Item]]:
    """Pair changed items: patterns by identity, the rest greedily by content-word overlap."""
    new_texts = {normalise(n.text) for n in new}
    old_texts = {normalise(o.text) for o in old}
    return _pair_changed([o for o in old if normalise(o.text) not in new_texts],
                         [n for n in new if normalise(n.text) not in old_texts])


def _pair_changed(old_left: list[Item], new_left: list[Item]) -> list[tuple[Item, Item]]:
    """:func:`pair_items` of the items whose normalised text the other side lacks (lists are consumed)."""
    pairs: list[tuple[Item, Item]] = []
    if not old_left or not new_left:
        return pairs  # a pair needs an item on each side
    by_name = {name_key(_pattern_name(o)): o for o in old_left if _pattern_name(o)}
    for n in list(new_left):
        name = _pattern_name(n) and name_key(_pattern_name(n))
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


def shortening(old: Item, new: Item) -> float | None:
    """How much shorter ``new`` says what ``old`` said (0.1 = a tenth fewer words); None if not a restatement."""
    if old.kind == "pattern" and new.kind == "pattern":
        po, pn = parse_pattern(old.text), parse_pattern(new.text)
        if po and pn and po.level != pn.level:
            return None  # a promotion or demotion is a real change
        old_text, new_text = (po.text if po else old.text), (pn.text if pn else new.text)
    else:
        old_text, new_text = old.text, new.text
    if _structure(new_text) > _structure(old_text):
        return None  # prose turned into FlowScript structure: real compression
    bare = _cut(_bare(DONE_RE.sub("", old_text)), _bare(new_text))
    if bare is None:
        return None  # only lifecycle fields' values changed (`next: schema review` dated, or dropped with `✓`)
    return _cut(normalise(DONE_RE.sub("", old_text)), normalise(new_text))


def _cut(old_text: str, new_text: str) -> float | None:
    """How much shorter ``new_text`` says what ``old_text`` said (both normalised); None when it is not shorter
    or says something else."""
    before, after = word_count(old_text), word_count(new_text)
    if not before or after >= before:
        return None
    new_words = content_words(new_text)
    if not new_words or len(new_words & content_words(old_text)) / len(new_words) < SAME_MEANING:
        return None
    return 1 - after / before


# FlowScript's state markers: where an item stands (blocked on what, decided on what), not what it says; an item
# unblocked drops its `[blocked(reason: …, since: …)]` as a done item gains its ✓
STATE_MARKER_RE = re.compile(r'\[(?:decided|blocked|parking|exploring)(?:\((?:"[^"]*"|[^)"])*\))?\]', re.IGNORECASE)


def _bare(text: str) -> str:
    """An item's words without markup and without its lifecycle fields and state markers, values and all: what
    the item says apart from where it stands in its lifecycle. A restatement is one read both ways: words moved
    into a field are not cut (:func:`normalise` keeps them), and a field's value or a state changed is no cut
    of the item."""
    if "[" in text:
        text = STATE_MARKER_RE.sub(" ", text)
    return _words(text, " ")


def is_restatement(old: Item, new: Item) -> bool:
    return shortening(old, new) is not None


class SectionCuts(NamedTuple):
    """A changed section's restatements: the items, how many are clear cuts, and the items it changed."""

    section: object
    restated: list
    clear: int
    changed: int
    old_count: int
    new_count: int


def performance_compression(ctx: CheckContext) -> Iterator[Finding]:
    """G301: the same items restated in fewer words, counted over the whole change.

    The thresholds are for the wrap, not for a section: two clear cuts made
    one in Action Items and one in Developing are the same compression as two
    in one section. A section that reaches them alone is named alone.
    """
    found = [cuts for cuts in (_cuts_in(ctx, before, section) for before, section in ctx.changed_pairs(*JUDGED))
             if cuts.restated]
    alone = [c for c in found if len(c.restated) >= MIN_RESTATED or c.clear >= MIN_CLEAR]
    for c in alone:
        yield Finding("G301", "performance-compression", "error", ctx.path, c.restated[0].new.first_line,
                      f"{c.section.label}: {len(c.restated)} of {c.changed} changed items restate the same "
                      f"content in fewer words while the section kept {c.new_count} items (was {c.old_count}): "
                      f"{_names(c.restated)}", _COMPRESSION_FIX)
    if alone or len(found) < 2:
        return
    restated = [r for c in found for r in c.restated]
    if len(restated) >= MIN_RESTATED or sum(c.clear for c in found) >= MIN_CLEAR:
        labels = ", ".join(c.section.label for c in found)
        yield Finding("G301", "performance-compression", "error", ctx.path, restated[0].new.first_line,
                      f"{len(restated)} changed items across {labels} restate the same content in fewer words "
                      f"(spread over sections, the same compression): {_names(restated)}", _COMPRESSION_FIX)


def _names(restated: list) -> str:
    return "; ".join(_label(r.new) for r in restated[:6]) + (" …" if len(restated) > 6 else "")


_COMPRESSION_FIX = ("compress for real: archive stale items, fold facts into one graduated pattern, or turn prose "
                    "into FlowScript structure; otherwise keep the original wording")


def _cuts_in(ctx: CheckContext, before, section) -> SectionCuts:
    """The restatements of one changed section against its version at HEAD."""
    old_facts, new_facts = ctx.old.facts(before), ctx.new.facts(section)
    new_facts.items_after(old_facts)  # the shared lines' items are the old body's, moved
    old_norm, new_norm = _normalised(old_facts), _normalised(new_facts)
    old_count, new_count = len(old_norm), len(new_norm)
    # items equal (normalised) at the same place from the top or the bottom are in both bodies: only those
    # between can be missing from the other side
    top, bottom = shared_ends(old_norm, new_norm)
    old_left = _missing(old_norm, top, old_count - bottom, new_norm, new_facts)
    new_left = _missing(new_norm, top, new_count - bottom, old_norm, old_facts)
    pairs = _pair_changed(_items_at(old_facts, old_left, before.body_start),
                          _items_at(new_facts, new_left, section.body_start))
    cuts = [(o, n, shortening(o, n)) for o, n in pairs]
    restated = [Restatement(o, n) for o, n, cut in cuts if cut is not None]
    clear = sum(1 for _, _, cut in cuts if cut is not None and cut >= 1 - SHORTER)
    return SectionCuts(section, restated, clear, len(new_left), old_count, new_count)


FEW = 8  # middle items looked up by a scan of the other side's texts; more use its set


def _missing(normalised: tuple[str, ...], start: int, stop: int, other: tuple[str, ...],
             other_facts: SectionFacts) -> list[int]:
    """Indices in ``start:stop`` of the items whose normalised text the other body lacks."""
    if stop - start > FEW:
        texts = _texts(other_facts)
        return [i for i in range(start, stop) if normalised[i] not in texts]
    return [i for i in range(start, stop) if normalised[i] not in other]


def _normalised(facts: SectionFacts) -> tuple[str, ...]:
    """Each item's normalised text, remembered with the section body (it reads the item's text alone)."""
    return facts.per_item("compression.normalised", _normalise_item)


def _normalise_item(text: str, kind: str) -> str:
    return normalise(text)


def _texts(facts: SectionFacts) -> frozenset[str]:
    return facts.derived("compression.texts", lambda f: frozenset(_normalised(f)))  # type: ignore[return-value]


def _items_at(facts: SectionFacts, indices: list[int], start: int) -> list[Item]:
    """The body's items at ``indices``, placed at the section's first body line ``start``."""
    out = []
    for index in indices:
        item = facts.item(index)
        out.append(Item(start + item.start, start + item.end, item.text, item.kind))
    return out


def _label(item: Item) -> str:
    name = _pattern_name(item)
    return f"`{name}` (line {item.first_line})" if name else f"line {item.first_line} \"{item.text[:40]}\""
