"""Gate rules for section semantics: replace, rewrite, and the protected zones."""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Iterator

from flowgit.checks.compression import LIST_MARK_RE
from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.continuity.document import COMMENT_RE, is_structural, shared_ends
from flowgit.continuity.patterns import parse_pattern
from flowgit.continuity.sections import PROVEN, Semantics
from flowgit.merge.notes import NOTE_LINES as MERGE_NOTE_LINES, QUOTE as MERGE_QUOTE  # the driver's note
from flowgit.words import stem

WORD_RE = re.compile(r"\w+")
COMMENT_MARKUP_RE = re.compile(r"^\s*#+|<!--|-->")
COPIED = 0.8  # meaningful words shared (of both lines' together) that make a comment a copy of a content line


RETAINED = 0.8      # share of the old text's words kept, in order, that makes a longer section an append
SHORT_TEXT = 20     # fewer old words than this: an append keeps all of them but one
MIN_ADDED = 4       # words added beyond the old text
POINTER_WORDS = 30  # a kept line this short is a momentum pointer, not the old narrative
ITEM_KEPT_INSIDE = 4  # words an old item needs to count as kept inside a longer new item


def _words(text: str) -> list[str]:
    """The text's words as the append rules compare them: as a reader sees them (:func:`_as_seen`),
    case-folded and stemmed (``reports`` is ``report``: a plural flipped or a tense changed is the old word
    kept)."""
    return [_folded(w) for w in WORD_RE.findall(_as_seen(text))]


MARKUP_RE = re.compile(r"<!--(.*?)-->|<[A-Za-z/][^<>]*>", re.DOTALL)
ATTRIBUTE_VALUE_RE = re.compile(r"=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s>]+))")
EDGE_UNDERSCORES_RE = re.compile(r"(?:(?<=\W)|^)_+|_+(?=\W|$)")  # `_italic_`, `__bold__`; not `snake_case`


def _as_seen(text: str) -> str:
    """``text`` as a reader of the file sees its words: what a comment or a tag's attribute says is text
    kept like any other (an agent reads the raw file), an empty tag or comment inside a word joins it
    (``fo<b></b>cus``), emphasis marks are no part of a word, and then
    :func:`~flowgit.continuity.identity.as_seen`, with look-alike letters read as the Latin ones they mimic:
    old text re-typed with a zero-width space, a Cyrillic ``е`` or ``&#32;`` for its spaces is the old text
    kept."""
    if text.isascii() and not any(mark in text for mark in "&<*`_"):
        return text
    from flowgit.continuity.identity import as_seen, fold_lookalikes

    if "<" in text:
        text = MARKUP_RE.sub(_markup_words, text)
    text = EDGE_UNDERSCORES_RE.sub("", text.replace("*", "").replace("`", "")) if "_" in text else \
        text.replace("*", "").replace("`", "")
    return fold_lookalikes(as_seen(text))


def _markup_words(found: re.Match) -> str:
    """A comment as its text, a tag as its attributes' values: words, set apart by spaces; nothing where
    there are none (an empty tag or comment inside a word draws nothing there)."""
    inner = found[1] if found[1] is not None else " ".join(
        "".join(value) for value in ATTRIBUTE_VALUE_RE.findall(found[0]))
    return f" {inner} " if inner.strip() else ""


@lru_cache(maxsize=1 << 14)
def _folded(word: str) -> str:
    """:func:`stem`, and a final ``e`` off any stem of four letters or more (the stem keeps it on a short word,
    so ``gate`` and ``gates`` would differ)."""
    found = stem(word.casefold())
    return found[:-1] if len(found) >= 4 and found.endswith("e") else found


def retained(old: list[str], new: list[str]) -> float:
    """Share of ``old``'s words found in ``new`` in the same order (a tweaked word barely lowers it)."""
    if not old:
        return 0.0
    from difflib import SequenceMatcher

    matcher = SequenceMatcher(None, old, new, autojunk=False)
    return sum(b.size for b in matcher.get_matching_blocks()) / len(old)


def _body_lines(doc, section) -> tuple[str, ...]:
    """The body's content lines with spacing collapsed, remembered with the body (it reads nothing else)."""
    return doc.facts(section).derived("semantics.body_lines", _content_lines)  # type: ignore[return-value]


def _content_lines(facts) -> tuple[str, ...]:
    return tuple(line for line in map(_content_line, facts.body) if line is not None)


@lru_cache(maxsize=1 << 12)
def _content_line(line: str) -> str | None:
    """A body line with its spacing collapsed, or None for scaffolding (remembered: most lines of a section
    rewritten each wrap are the last version's)."""
    return None if is_structural(line) else " ".join(line.split())


def _line_words(doc, section) -> tuple[tuple[str, ...], ...]:
    """The words of each of :func:`_body_lines` (case-folded), remembered with the body.

    A word never spans the space that joins two lines, so the words of lines
    joined are these, one line's after another's.
    """
    return doc.facts(section).derived("semantics.line_words", _words_of_lines)  # type: ignore[return-value]


def _words_of_lines(facts) -> tuple[tuple[str, ...], ...]:
    return tuple(map(_words_of_line, facts.derived("semantics.body_lines", _content_lines)))


@lru_cache(maxsize=1 << 12)
def _words_of_line(line: str) -> tuple[str, ...]:
    return tuple(_words(line))


def _commented_in(ctx: CheckContext, before, section) -> dict[int, str]:
    """Scaffolding lines of the staged body that hold text (``# …``, ``<!-- … -->``, ``### …``, ``##text``)
    and are read as content, by body offset, with their markup taken off.

    The replace and rewrite rules read content lines; a section's guidance
    comments are carried over from HEAD's body as they are. But text kept is
    kept whatever it is wrapped in, so such a line counts as content when HEAD's
    body does not have it (written this time: often the old text turned into a
    comment), or when its text is (near) one of HEAD's content lines (a comment
    planted beside the text it copies, carried on after the text itself left).
    """
    key = ("semantics.commented", section)
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = _scaffolding_read_as_content(ctx, before, section)
    return found


def _worded_scaffolding(facts) -> tuple[tuple[int, str, str], ...]:
    """(offset, line, its text without markup) of each scaffolding line of a body that holds text,
    remembered with the body (most bodies hold one guidance comment or none)."""
    return facts.derived("semantics.worded_scaffolding", _find_worded_scaffolding)  # type: ignore[return-value]


def _find_worded_scaffolding(facts) -> tuple[tuple[int, str, str], ...]:
    out = []
    for offset, line in enumerate(facts.body):
        if (COMMENT_RE.match(line) or line.lstrip().startswith("##")) and is_structural(line):
            text = " ".join(COMMENT_MARKUP_RE.sub(" ", line).split())
            if text:
                out.append((offset, line, text))
    return tuple(out)


def _scaffolding_read_as_content(ctx: CheckContext, before, section) -> dict[int, str]:
    found = _worded_scaffolding(ctx.new.facts(section))
    if not found or _body_lines(ctx.new, section) == _body_lines(ctx.old, before):
        return {}  # (the text itself is as it was: a comment added beside it appends nothing a wrap wrote)
    held = {line for _, line, _ in _worded_scaffolding(ctx.old.facts(before))}
    old_content = _body_lines(ctx.old, before)
    out: dict[int, str] = {}
    for offset, line, text in found:
        if ctx.merge_parents and line.startswith(MERGE_NOTE_LINES) and _note_of_this_merge(ctx, section, text):
            continue  # the merge driver's note: the other wrap's text, quoted to absorb in the next wrap
        if line not in held or _copies_content(text, old_content):
            out[offset] = text
    return out


def _note_of_this_merge(ctx: CheckContext, section, text: str) -> bool:
    """Whether a merge-note line is the merge's own record: its head or instruction, or a quote of text that
    some parent's section does not hold (another wrap's, brought in by the merge). A quote of what every
    parent holds records no merge: it is the old text kept, whatever the commit."""
    if not text.startswith("| "):
        return True
    quoted = text[2:]
    for parent in ctx.merge_parents:
        theirs = parent.find(section.label)
        if theirs is None or quoted not in _body_lines(parent, theirs):  # the driver quotes lines verbatim
            return True
    return False


@lru_cache(maxsize=1 << 12)
def _item_key(item: str) -> tuple[str, ...]:
    """An item as what it says: its words in order, case, punctuation, bullet and spacing aside (remembered:
    a State or Top of Mind item is the last version's in most changes)."""
    return _words_of_line(_item_text(item)) or (item.strip(),)


def _item_text(item: str) -> str:
    return " ".join(LIST_MARK_RE.sub("", item, count=1).split())


def _copies_content(text: str, content: tuple[str, ...]) -> bool:
    """Whether ``text`` is (near) one of ``content``'s lines: four in five of the meaningful words shared."""
    if text.startswith("| "):
        text = text[2:]  # a quote's mark
    if text in content:
        return True
    words = frozenset(_words_of_line(text))
    if not words:
        return False
    for line in content:
        other = frozenset(_words_of_line(line))
        if other and len(words & other) / len(words | other) >= COPIED:
            return True
    return False


def _quoted(ctx: CheckContext, before) -> tuple[str, ...]:
    """The other wrap's text a merge note in HEAD's body quotes (``# | `` lines), for the next wrap to absorb."""
    return tuple(text[2:] for _, line, text in _worded_scaffolding(ctx.old.facts(before))
                 if line.startswith(MERGE_QUOTE) and text.startswith("| "))


def _without(words: list[str], taken: list[str]) -> list[str]:
    """``words`` with each of ``taken`` removed once (its first occurrence), the order kept."""
    left = Counter(taken)
    out = []
    for word in words:
        if left[word] > 0:
            left[word] -= 1
        else:
            out.append(word)
    return out


def _new_content(ctx: CheckContext, before, section) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """(content lines, their words) of the staged body, comment lines it adds included (see above)."""
    lines, words = _body_lines(ctx.new, section), _line_words(ctx.new, section)
    commented = _commented_in(ctx, before, section)
    if not commented:
        return lines, words
    body = ctx.new.facts(section).body
    out = []
    for offset, line in enumerate(body):
        text = commented.get(offset)
        if text is None:
            text = _content_line(line)
        if text is not None:
            out.append(text)
    return tuple(out), tuple(map(_words_of_line, out))


def appended(ctx: CheckContext, before, section) -> bool:
    """The staged section is the old one (near word for word, one tweak allowed) plus new text.

    One short line kept verbatim (the momentum pointer the protocol asks for)
    is left out of the old text first. The words are counted before they are
    compared: a section that did not grow by :data:`MIN_ADDED` words is no append.
    """
    old_lines, old_words = _body_lines(ctx.old, before), _line_words(ctx.old, before)
    new_lines, new_words = _new_content(ctx, before, section)
    pointer = next((ln for ln in old_lines if ln in new_lines and len(ln.split()) <= POINTER_WORDS), None)
    if pointer is not None and len(old_lines) > 1:
        old_words = tuple(w for ln, w in zip(old_lines, old_words) if ln != pointer)
        new_words = tuple(w for ln, w in zip(new_lines, new_words) if ln != pointer)
    old_flat, new_flat = [w for ws in old_words for w in ws], [w for ws in new_words for w in ws]
    quoted = _quoted(ctx, before)
    if quoted:  # the other wrap's text a merge note asked to absorb is old text too, not an addition
        new_flat = _without(new_flat, [w for q in quoted for w in _words_of_line(q)])
    if len(old_flat) < MIN_ADDED or len(new_flat) < len(old_flat) + MIN_ADDED:
        return False
    if _kept_lines_words(old_lines, new_lines) > POINTER_WORDS:
        return True  # more of the old text kept line for line than a pointer, and more text: a log that grows
    allowed = _tweaks_allowed(len(old_flat))
    in_sentences = _sentences_kept_words([ln for ln in old_lines if ln != pointer or len(old_lines) == 1], new_flat)
    if len(old_flat) - in_sentences <= allowed:
        return True  # its sentences kept word for word, in whatever order, beside new text
    if len(old_flat) < SHORT_TEXT and _tweaks_within(old_flat, new_flat) > allowed:
        return False  # a short narrative kept with words put into it is rewritten: "reproduced in staging"
        # read as "never reproduced in production" keeps every old word, in order, and says the opposite
    return len(old_flat) - round(retained(old_flat, new_flat) * len(old_flat)) <= allowed


def _tweaks_within(old: list[str], new: list[str]) -> int:
    """The edits that make ``new`` of ``old`` where ``new`` holds it: old words lost, plus the places where new
    words were put between two old words kept side by side (an append adds around the old text, not inside)."""
    from difflib import SequenceMatcher

    blocks = [b for b in SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks() if b.size]
    lost = len(old) - sum(b.size for b in blocks)
    inserted = sum(1 for one, two in zip(blocks, blocks[1:]) if two.a == one.a + one.size and two.b > one.b + one.size)
    return lost + inserted


SENTENCE_END_RE = re.compile(r"(?<=[.!?;:])\s+")
SENTENCE_MIN_WORDS = 4  # a sentence this long found word for word is kept, not met by chance


def _sentences_kept_words(old_lines: list[str], new_flat: list[str]) -> int:
    """Words of the old text's sentences (of four words or more) that the new text holds word for word, in
    whatever order: the old sentences shuffled around a new one are still the old text plus more (the
    in-order count, :func:`retained`, loses a sentence moved to the end)."""
    within = f" {' '.join(new_flat)} "
    kept = 0
    for line in old_lines:
        for sentence in SENTENCE_END_RE.split(line):
            words = _words_of_line(sentence)
            if len(words) >= SENTENCE_MIN_WORDS and f" {' '.join(words)} " in within:
                kept += len(words)
    return kept


def _log_kept(ctx: CheckContext, before, section) -> bool:
    """Whether a rewritten narrative keeps more of the old one, line for line, than the one short pointer
    line the protocol keeps (three of four lines kept and the fourth replaced: a log that rolls on)."""
    old_lines = _body_lines(ctx.old, before)
    return len(old_lines) > 1 and _kept_lines_words(old_lines, _new_content(ctx, before, section)[0]) > POINTER_WORDS


def _kept_lines_words(old_lines: tuple[str, ...], new_lines: tuple[str, ...]) -> int:
    """Words of the old lines the new text keeps whole: dropping one line of four keeps the rest a log."""
    held = set(new_lines)
    return sum(len(line.split()) for line in old_lines if line in held)


def _tweaks_allowed(words: int) -> int:
    """Old words an append may have lost and still be the old text plus more: a fifth of a long text, one
    word of a short one (a short State that keeps its focus and replaces its critical path is replaced)."""
    return int(words * (1 - RETAINED)) if words >= SHORT_TEXT else 1


def planted_quotes(ctx: CheckContext, semantics: Semantics) -> Iterator[Finding]:
    """G304 for a merge-note quote (``# | …``) the change adds that quotes text no version it joins holds.

    A merge note quotes what the other wrap wrote (a parent's text), so the
    next wrap can absorb it, and absorbing it is not counted as an addition.
    A quote of new text is no note: planted beside unchanged content, then
    unquoted a commit later, it would append to State or Recent Context in
    two steps that each look harmless. So a quote the change brings must be
    held as content by HEAD's section or, in a merge, by a parent's; and
    only a merge brings one: a quote of HEAD's own text in a plain commit
    would be absorbed by the next wrap as the other wrap's text.
    """
    for before, section in ctx.changed_pairs(semantics):
        planted = [(offset, text[2:]) for offset, line, text in _worded_scaffolding(ctx.new.facts(section))
                   if line.startswith(MERGE_QUOTE) and text.startswith("| ")]
        if not planted:
            continue
        had = {line for _, line, _ in _worded_scaffolding(ctx.old.facts(before))}
        held = set(_held_with_heading(ctx.old, before))  # the driver quotes the other's heading too
        for parent in ctx.merge_parents:
            theirs = parent.find(section.label)
            if theirs is not None:
                held.update(_held_with_heading(parent, theirs))
        for offset, quoted in planted:
            if ctx.new.facts(section).body[offset] in had:
                continue
            if not ctx.merge_parents and quoted in held:
                yield Finding("G304", "append-not-replace" if semantics == Semantics.REPLACE else
                              "append-not-rewrite", "error", ctx.path, section.body_start + offset + 1,
                              f"{section.label}: a merge-note quote added outside a merge: \"{quoted[:60]}\" (a "
                              "note records what a merge brought; HEAD's own text quoted would be absorbed by the "
                              "next wrap as the other wrap's, and the section appended to in two steps)",
                              "remove the `# | ` line: only the merge driver writes merge notes, in a merge")
                continue
            if quoted in held:
                continue
            yield Finding("G304", "append-not-replace" if semantics == Semantics.REPLACE else "append-not-rewrite",
                          "error", ctx.path, section.body_start + offset + 1,
                          f"{section.label}: a merge-note quote of text no version holds: \"{quoted[:60]}\" (a "
                          "merge note quotes what the other wrap wrote; new text is content, judged as such)",
                          f"write new text as {section.label}'s content, not as a `# | ` quote; if a rebase "
                          "replayed a wrap with its own text as the note, integrate by merge instead (`git rebase "
                          "--abort`, then `flowgit sync` or `git pull --no-rebase`)")


def _held_with_heading(doc, section) -> tuple[str, ...]:
    """A section's content lines and its heading, spacing collapsed: what a merge note may quote of it."""
    return (" ".join(doc.lines[section.heading].split()),) + _body_lines(doc, section)


def _copied_while_unchanged(ctx: CheckContext, semantics: Semantics, code: str) -> Iterator[Finding]:
    """:func:`_kept_in_another_section` for a section this change leaves as it is: its text copied into a
    log now would be the old text kept once the next change replaces it (split over two commits)."""
    for before, section in ctx.section_pairs(semantics):
        if ctx.same_body(before, section):
            yield from _kept_in_another_section(ctx, before, section, code)


def append_not_replace(ctx: CheckContext) -> Iterator[Finding]:
    """State / Top of Mind that keep every old item and add more were appended to, not replaced."""
    yield from planted_quotes(ctx, Semantics.REPLACE)
    yield from _copied_while_unchanged(ctx, Semantics.REPLACE, "G302")
    for before, section in ctx.changed_pairs(Semantics.REPLACE):  # the same body adds nothing
        old = ctx.old.facts(before).columns.texts
        new = ctx.new.facts(section).columns.texts + tuple(_commented_in(ctx, before, section).values())
        quoted = _quoted(ctx, before)
        if quoted:  # an item that takes up the other wrap's quoted text absorbs it: it is not an addition
            new = tuple(item for item in new if not _copies_content(_item_text(item), quoted))
        kept_all = bool(old) and _says_more(old, new, quoted) and _kept_every_item(old, new)
        if kept_all or (section.label != "Top of Mind" and appended(ctx, before, section)):
            grew = len(new) - len(old)
            what = ((f"kept all {len(old)} old item(s) and added {grew}" if grew > 0 else
                     f"kept all {len(old)} old item(s) word for word inside the new ones and added text")
                    if kept_all else "kept the old text (near word for word) and added to it")
            yield Finding("G302", "append-not-replace", "error", ctx.path, section.heading + 1,
                          f"{section.label} {what}: it is REPLACED each wrap, not appended to",
                          _replace_fix(section.label))
        elif _heading_keeps_old_text(ctx, before, section):
            yield _heading_finding(ctx, section, "G302")
        else:
            yield from _kept_in_another_section(ctx, before, section, "G302")


HEADING_KEEPS = 5  # words of a heading's suffix, nearly all from HEAD's body, that are old text kept there


def _heading_keeps_old_text(ctx: CheckContext, before, section) -> bool:
    """Whether the heading the change writes carries HEAD's body text in its suffix (``## Current State |
    <the old State>``): a reader sees the old text kept above the new one, which no body rule reads."""
    if section.title == section.label or ctx.new.lines[section.heading] == ctx.old.lines[before.heading]:
        return False
    words = _without(list(_words_of_line(section.title)), list(_words_of_line(section.label)))
    if len(words) < HEADING_KEEPS:
        return False  # a headline: `| Nov 30 evening`
    old = {word for line in _line_words(ctx.old, before) for word in line}
    return sum(word in old for word in words) >= COPIED * len(words)


# Sections the protocol moves old State or Top of Mind text into, judged by rules of their own: State's
# unfinished work carried on as an Action Item
TAKES_UP_OLD_TEXT = (Semantics.LIFECYCLE,)
# Sections that take old text up as pattern lines only (a Top of Mind item taken into knowledge as a pattern):
# any other line brought there (a `### State log`, a bullet, prose) is read as text brought like any other
TAKES_UP_AS_PATTERNS = (Semantics.PATTERNS, Semantics.PROVEN)


def _kept_in_another_section(ctx: CheckContext, before, section, code: str) -> Iterator[Finding]:
    """The text of a section REPLACED or REWRITTEN, brought by the change into another section (``## Previous
    State`` added with the old State under it, the old State as the next heading, a `## State log` that grows
    each wrap, filled before or as State is replaced, State and Recent Context swapped): a log of past states
    under another name. Only what the change brings to that section is read; Recent Context may take up the
    old State, Action Items (:data:`TAKES_UP_OLD_TEXT`) and pattern lines (:data:`TAKES_UP_AS_PATTERNS`) what
    the protocol moves there."""
    receiving = [(other, was) for other, was in _touched_sections(ctx) if other is not section
                 and not (code == "G302" and other.semantics == Semantics.REWRITE)]
    if not receiving and not ctx.preamble_added:
        return
    old = [w for line in _line_words(ctx.old, before) for w in line]
    if len(old) < HEADING_KEEPS:
        return
    distinct = set(old)
    if _keeps(old, distinct, _preamble_words(ctx)):
        yield Finding(code, "append-not-replace" if code == "G302" else "append-not-rewrite", "error", ctx.path,
                      ctx.preamble_added[0] + 1,
                      f"this change brings {section.label}'s text above the first section: {section.label} is "
                      f"{'REPLACED' if code == 'G302' else 'REWRITTEN'} each wrap, not logged at the top of the file",
                      "take the old text out; move what still matters of it into Recent Context")
    for other, was in receiving:
        brought = _brought_words(ctx, was, other)
        if _keeps(old, distinct, brought):
            yield Finding(code, "append-not-replace" if code == "G302" else "append-not-rewrite", "error",
                          ctx.path, other.heading + 1,
                          f"this change brings {section.label}'s text into `{other.title[:50]}`: "
                          f"{section.label} is {'REPLACED' if code == 'G302' else 'REWRITTEN'} each wrap, not "
                          "logged under another heading",
                          "take the old text out; move what still matters of it into Recent Context"
                          + (" (as part of its one narrative)" if code == "G303" else ""))


def _keeps(old: list[str], distinct: set[str], brought: list[str]) -> bool:
    """Whether the words ``brought`` somewhere keep the old text ``old`` (its words, in order)."""
    if len(brought) < HEADING_KEEPS or len(distinct & set(brought)) < RETAINED * len(distinct):
        return False  # (most text a change brings shares little with the old text: no alignment needed)
    return retained(old, brought) >= RETAINED


def _preamble_words(ctx: CheckContext) -> list[str]:
    """The words of the lines the change brings above the first section (worked out once per change)."""
    found = ctx.memo.get("semantics.preamble")
    if found is None:
        lines = ctx.new.lines
        found = ctx.memo["semantics.preamble"] = [
            w for i in ctx.preamble_added if lines[i].strip() for w in _words_of_line(" ".join(lines[i].split()))]
    return found


def _touched_sections(ctx: CheckContext) -> list:
    """(staged section, HEAD's or None) for each section the change adds or alters that old text could be
    moved into (not :data:`TAKES_UP_OLD_TEXT`), worked out once per change."""
    found = ctx.memo.get("semantics.touched")
    if found is None:
        held = {ctx.old.lines[s.heading] for s in ctx.old.sections}
        found = ctx.memo["semantics.touched"] = []
        for other in ctx.new.sections:
            if other.semantics in TAKES_UP_OLD_TEXT:
                continue
            was = ctx.old.find(other.label) if ctx.new.lines[other.heading] in held else None
            if was is None or not ctx.same_body(was, other):
                found.append((other, was))
    return found


def _brought_words(ctx: CheckContext, was, other) -> list[str]:
    """The words of the lines the change brings to section ``other`` (HEAD's ``was``; None: the change adds it,
    heading and all): lines HEAD's body did not hold, each taken once, comments and subheadings included.
    Read from the raw lines, so a large section a change touches costs what the change brings, not its
    size. Worked out once per section and change: each section replaced or rewritten asks it."""
    key = ("semantics.brought", other)
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = _brought_words_of(ctx, was, other)
    return found


def _brought_words_of(ctx: CheckContext, was, other) -> list[str]:
    body = ctx.new.facts(other).body
    if was is None:
        brought, added = list(_words_of_line(other.title)), body
    else:
        old = ctx.old.facts(was).body
        top, bottom = shared_ends(old, body)  # (lines both hold at the ends match each other: only the middle
        left, brought, added = Counter(old[top:len(old) - bottom]), [], []  # is counted)
        for line in body[top:len(body) - bottom]:
            if left[line] > 0:
                left[line] -= 1
            else:
                added.append(line)
    if other.semantics in TAKES_UP_AS_PATTERNS:  # (a pattern line takes old text up as the protocol asks)
        added = [line for line in added if parse_pattern(line) is None]
    for line in added:  # (a comment or a heading holds kept text too: every line is read for its words)
        if line.strip() and not (ctx.merge_parents and _a_parents_own_line_quoted(ctx, other, line)):
            brought.extend(_words_of_line(" ".join(line.split())))
    return brought


def _a_parents_own_line_quoted(ctx: CheckContext, section, line: str) -> bool:
    """Whether ``line`` is the merge driver's note: its head or instruction, or a quote (``# | ``) of a line
    some parent holds in this very section (the other wrap's own text of it, kept for the next wrap to
    absorb). Such a quote moves nothing from another section, whatever words the two share; a quote no
    parent holds here is read as brought text."""
    if not line.startswith(MERGE_NOTE_LINES):
        return False
    if not line.startswith(MERGE_QUOTE):
        return True
    quoted = _content_line(line[len(MERGE_QUOTE):])  # compared as the parent's body lines are: spacing and
    if quoted is None:  # the line's end collapsed; a quoted heading or rule is read as brought text
        return False
    for parent in ctx.merge_parents:
        theirs = parent.find(section.label)
        if theirs is not None and quoted in _body_lines(parent, theirs):
            return True
    return False


def _heading_finding(ctx: CheckContext, section, code: str) -> Finding:
    return Finding(code, "append-not-replace" if code == "G302" else "append-not-rewrite", "error", ctx.path,
                   section.heading + 1,
                   f"the heading of {section.label} keeps HEAD's text (\"{section.title[:60]}\") above the new "
                   "body: the old text moved into the heading is the old text kept",
                   f"write the heading as `## {section.label}` (a short headline at most) and the body as what "
                   "is true now; move what still matters of the old text into Recent Context")


def _replace_fix(label: str) -> str:
    """How to replace State or Top of Mind: each holds what is true, or salient, now."""
    if label == "Top of Mind":
        return ("write Top of Mind as what should be in view at the next session start: drop the items completed "
                "or absorbed into Proven Knowledge (an old item wrapped in new words is the old item kept); a task "
                "still open belongs in Action Items, where its lifecycle is kept, and a fact that must stay in view "
                "every session in Proven Knowledge or Foundation, not carried here")
    return (f"rewrite {label} as what is true now (an old item wrapped in new words is the old item kept); move "
            "what still matters from the old text into Recent Context")


def _says_more(old: tuple[str, ...], new: tuple[str, ...], quoted: tuple[str, ...] = ()) -> bool:
    """Whether the new items are more, or hold :data:`MIN_ADDED` words more, than the old ones (the words of
    the other wrap's text a merge note quotes are old text too: taking them up adds nothing)."""
    if len(new) > len(old):
        return True
    new_words = [w for item in new for w in _item_key(item)]
    if quoted:
        new_words = _without(new_words, [w for q in quoted for w in _words_of_line(q)])
    return len(new_words) >= sum(map(len, map(_item_key, old))) + MIN_ADDED


def _kept_every_item(old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    """Whether each old item is still there: an item of its words (stemmed, so a plural flipped is the word
    kept; articles aside, so `The schema review` is `Schema review`), or, for an item of
    :data:`ITEM_KEPT_INSIDE` words or more, those words less one dropped, or in a row inside one new item
    (items merged into one, or one extended with more text). A short item ("tests") inside a longer new one
    is a new item: its words say too little to be the old one."""
    if not (Counter(map(_item_key, old)) - Counter(map(_item_key, new))):
        return True  # each old item is a new one, word for word
    new_keys = [_unarticled(_item_key(item)) for item in new]
    held = set(new_keys)
    return all(words in held or (len(words) >= ITEM_KEPT_INSIDE and (
        any(words[:at] + words[at + 1:] in held for at in range(len(words)))
        or any(_nearly_in_a_row(words, key) for key in new_keys)))
        for words in (_unarticled(_item_key(item)) for item in old))


ARTICLES = frozenset({"a", "an", "the"})


def _unarticled(words: tuple[str, ...]) -> tuple[str, ...]:
    """An item's words without its articles: an article dropped or swapped keeps the item what it was."""
    return tuple(word for word in words if word not in ARTICLES) or words


def _nearly_in_a_row(part: tuple[str, ...], whole: tuple[str, ...]) -> bool:
    """Whether ``part``'s words occur in ``whole`` in order, with at most one word put between them (``the
    budget caps`` in ``the budget still caps``)."""
    first = part[0]
    for at, word in enumerate(whole):
        if word != first:
            continue
        spare, k = 1, 1
        for later in whole[at + 1:]:
            if k == len(part):
                break
            if later == part[k]:
                k += 1
            elif spare:
                spare -= 1
            else:
                break
        if k == len(part):
            return True
    return False


def _prose(ctx_doc, section) -> str:
    lines = [ln for ln in ctx_doc.lines[section.body_start:section.body_end] if not is_structural(ln)]
    return " ".join(" ".join(lines).split())


def _new_prose(ctx: CheckContext, before, section) -> str:
    """:func:`_prose` of the staged section, comment lines it adds included (see :func:`_commented_in`)."""
    if not _commented_in(ctx, before, section):
        return _prose(ctx.new, section)
    return " ".join(_new_content(ctx, before, section)[0])


def append_not_rewrite(ctx: CheckContext) -> Iterator[Finding]:
    """Recent Context that keeps the old narrative (a word tweaked at most) plus new text was appended to."""
    yield from planted_quotes(ctx, Semantics.REWRITE)
    yield from _copied_while_unchanged(ctx, Semantics.REWRITE, "G303")
    for before, section in ctx.changed_pairs(Semantics.REWRITE):  # the same body is the same prose
        old, new = _prose(ctx.old, before), _new_prose(ctx, before, section)
        for text in _quoted(ctx, before):  # the other wrap's narrative, absorbed as the merge note asks
            new = " ".join(new.replace(text, " ").split())
        if old and new != old and (old in new or appended(ctx, before, section) or _log_kept(ctx, before, section)):
            yield Finding("G303", "append-not-rewrite", "error", ctx.path, section.heading + 1,
                          f"{section.label} contains the old narrative word for word plus new text: "
                          "it is REWRITTEN each wrap as one shape, never appended to",
                          "rewrite it as compressed prose: fold the old narrative into a momentum pointer in "
                          "fewer words than it had (a one-line narrative kept whole is the narrative, not a "
                          "pointer), or drop what was absorbed elsewhere")
        elif _heading_keeps_old_text(ctx, before, section):
            yield _heading_finding(ctx, section, "G303")
        else:
            yield from _kept_in_another_section(ctx, before, section, "G303")


def protected_evidence(ctx: CheckContext) -> Iterator[Finding]:
    """A Proven pattern's [evidence: …] may not be dropped or altered except by demotion or archival."""
    for name, before, now in ctx.old_pattern_changes:  # a pattern left as it was keeps its evidence
        if before.section != PROVEN or not before.pattern.evidence:
            continue
        if now is None:
            continue  # archived: git keeps its text, the wrap records it
        if now.section != PROVEN:
            continue  # demotion: judged by identity_rules.proven_leaves_properly
        dropped = [i for i in before.pattern.evidence if i not in now.pattern.evidence]
        if dropped:
            yield Finding("G401", "protected-evidence", "error", ctx.path, now.lineno,
                          f"`{name}` is Proven and its evidence annotation lost {', '.join(dropped)}",
                          "evidence on graduated patterns is the audit trail: restore it, or demote/archive "
                          "the pattern with a reason")
