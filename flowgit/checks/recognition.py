"""Recognition: every pattern a reader sees is a pattern the gate judges.

A pattern the parser does not read is a pattern no rule judges, so in the
sections that hold patterns (Developing, Proven, Cross-Domain) a changed line
that *looks like* a pattern (a ``!`` name marker, a ``| Nx``-like level in any
case or with ``×``, an ``[evidence:`` annotation) but does not parse as the one
canonical grammar is an error that names the fix (G110); the same content
hidden in a code fence, an HTML comment or a blockquote is an error too (G111).
Names are identities: two patterns whose names fold to one key are a duplicate
(G112), and a name that mixes scripts is refused (G113).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter, OrderedDict, defaultdict
from functools import lru_cache
from operator import attrgetter
from typing import Iterator

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.continuity.document import fence_step, has_fence_run
from flowgit.continuity.identity import INVISIBLE_RE, is_mixed_script, name_key, scripts_named
from flowgit.continuity.patterns import (EVIDENCE_RE, claims_a_raised_pattern, grammar_fix, level_marks,
                                         looks_like_pattern_loose, parse_pattern, skeleton)
from flowgit.continuity.sections import Semantics

HOLDS_PATTERNS = (Semantics.PATTERNS, Semantics.PROVEN)
# Where a pattern-like line that does not parse is refused (G110): the protocol's sections, since the agent
# reads State, Top of Mind and Action Items first, and a section of the user's own, where only what claims a
# raised pattern is (a `!` name with a level, or evidence: tables and notes stay as the user likes; a parsed
# pattern there is G204's). The protected zone has its own rule.
READ_FOR_PATTERNS = (Semantics.PATTERNS, Semantics.PROVEN, Semantics.REPLACE, Semantics.LIFECYCLE,
                     Semantics.REWRITE, Semantics.FREE)
HIDES = (Semantics.PATTERNS, Semantics.PROVEN, Semantics.PROTECTED)
COMMENT_OPEN, COMMENT_CLOSE = "<!--", "-->"
QUOTE_RE = re.compile(r"^\s{0,3}>")
CODE_SPAN_RE = re.compile(r"`[^`]*`")
COMMENT_LINE_RE = re.compile(r"^\s{0,3}#(?:\s|$)")


_HIDDEN: "OrderedDict[tuple[str, ...], dict[int, str]]" = OrderedDict()


def _hidden_lines(ctx: CheckContext, section) -> dict[int, str]:
    """{index: how} for the body lines of ``section`` inside a fence, an HTML comment or a blockquote."""
    body = ctx.new._body(section)
    found = _HIDDEN.get(body)
    if found is None:
        found = _HIDDEN[body] = dict(_hidden_in(body))
        if len(_HIDDEN) > 64:
            _HIDDEN.popitem(last=False)
    start = section.body_start
    return {start + offset: how for offset, how in found.items()}


def _hidden_among(ctx: CheckContext, section, fresh: list[int]) -> dict[int, str]:
    """:func:`_hidden_lines` of the lines ``fresh`` (indices in the staged file) of ``section``'s body.

    Without a fence in the body and an HTML comment opener anywhere in the
    file, the only way a line hides is a blockquote, which each line shows on
    its own: then only ``fresh`` is read, not the body.
    """
    if ctx.new.facts(section).fenced or _has_comment(ctx.new):
        hidden = _hidden_lines(ctx, section)
        return {index: hidden[index] for index in fresh if index in hidden}
    lines = ctx.new.lines
    return {index: "a blockquote" for index in fresh if QUOTE_RE.match(lines[index])}


def _has_comment(doc) -> bool:
    """Whether the document holds an HTML comment opener anywhere (remembered with it)."""
    found = doc.memo.get("recognition.comment")
    if found is None:
        found = doc.memo["recognition.comment"] = holds(doc.text, COMMENT_OPEN)
    return found


def holds(text: str, needle: str, patience: int = 32) -> bool:
    """``needle in text``, found from each occurrence of its first character (a ``memchr``, several times
    faster than a substring search on a long text in which that character is rare); a character that keeps
    recurring hands the rest to the substring search, so any text costs at most about that search."""
    first = needle[0]
    pos = text.find(first)
    for _ in range(patience):
        if pos == -1:
            return False
        if text.startswith(needle, pos):
            return True
        pos = text.find(first, pos + 1)
    return pos != -1 and text.find(needle, pos) != -1


def _hidden_in(body: tuple[str, ...]) -> Iterator[tuple[int, str]]:
    """(offset, how) for lines of a section body that a reader does not see as content."""
    joined = "".join(body)
    if not has_fence_run(joined) and COMMENT_OPEN not in joined and ">" not in joined:
        return  # no fence, comment or quote can open: every line is content (one search, not one per line)
    fence: str | None = None
    in_comment = False
    for index, line in enumerate(body):
        fence, is_fence = fence_step(line, fence)
        if is_fence:
            continue
        if fence is not None:
            yield index, "a code fence"
            continue
        if in_comment or COMMENT_OPEN in line:
            opened = COMMENT_OPEN in line
            yield index, "an HTML comment"
            tail = line.split(COMMENT_OPEN)[-1] if opened else line
            in_comment = COMMENT_CLOSE not in tail
            continue
        if QUOTE_RE.match(line):
            yield index, "a blockquote"


def _bare(line: str) -> str:
    return line.replace(COMMENT_OPEN, "").replace(COMMENT_CLOSE, "").strip().lstrip(">").strip()


def _visible_before(ctx: CheckContext, label: str) -> set[str]:
    before = ctx.old_section(label)
    if before is None:
        return set()
    return {ctx.old.lines[i].strip() for i in ctx.old.content_indices(before) if ctx.old.lines[i].strip()}


def _seen_texts(facts) -> tuple[frozenset[str], frozenset[str]]:
    """(the stripped lines a reader sees as content, those hidden) of one body: read from the body alone."""
    hidden = dict(_hidden_in(facts.body))
    if not hidden:  # (most bodies: no fence, comment or quote)
        return frozenset(map(str.strip, facts.body)), frozenset()
    shown = frozenset(line.strip() for offset, line in enumerate(facts.body) if offset not in hidden)
    return shown, frozenset(facts.body[offset].strip() for offset in hidden)


def _texts(doc, section) -> tuple[frozenset[str], frozenset[str]]:
    return doc.facts(section).derived("recognition.seen", _seen_texts)  # type: ignore[return-value]


def _a_pattern_in_code(line: str) -> bool:
    """Whether the line is, besides a bullet, one `code` span holding a whole pattern line: in a section of
    patterns a reader reads it as one (an example is quoted inside a sentence, not as the line itself)."""
    inner = re.fullmatch(r"\s*(?:[-*+]\s+)?`([^`]+)`\s*", line)
    return inner is not None and parse_pattern(inner.group(1)) is not None


def judged_lines(ctx: CheckContext, section, hidden: bool = False) -> list[int]:
    """:func:`_judged_lines_of` (asked by both recognition rules: worked out once per section and change)."""
    memo = ctx.memo
    key = ("recognition.judged", section, hidden)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _judged_lines_of(ctx, section, hidden)
    return found


def _judged_lines_of(ctx: CheckContext, section, hidden: bool) -> list[int]:
    """The lines of a changed section the recognition rules read, in order.

    A line is new when HEAD has no line with its text; but a line also changes
    meaning by its place: moved in from another section, or out of a fence or
    comment (``hidden=False``: lines a reader now sees that HEAD's section of
    the same label did not show), or into hiding (``hidden=True``: lines now
    hidden that HEAD's section did not hide). Those are read too, so content
    cannot be parked where no rule looks and then moved where one should.
    """
    fresh = ctx.new_lines_in(section)
    before = ctx.old_section(section.label) if ctx.old is not None else None
    if not _hides(ctx.new, section) and (before is None or not _hides(ctx.old, before)):
        if hidden:  # nothing hides on either side
            return fresh
        return _moved_in_plain(ctx, section, before, fresh)
    now = _texts(ctx.new, section)[hidden]
    was = _texts(ctx.old, before)[hidden] if before is not None else frozenset()
    lines = ctx.new.lines
    moved = now - was - {lines[i].strip() for i in fresh}
    if not moved:
        return fresh
    where = _hidden_lines(ctx, section)
    extra = [i for i in range(section.body_start, section.body_end)
             if lines[i].strip() in moved and (i in where) == hidden]
    return sorted(set(fresh).union(extra))


def _moved_in_plain(ctx: CheckContext, section, before, fresh: list[int]) -> list[int]:
    """:func:`judged_lines` where neither body hides a line: a line HEAD's section did not hold differs from
    it where it stands, so it lies among the candidate lines; only those HEAD holds elsewhere are looked up."""
    ordered = ctx.candidate_lines
    span = ordered[bisect_left(ordered, section.body_start):bisect_left(ordered, section.body_end)]
    if len(span) == len(fresh):
        return fresh  # every candidate line is new
    held = _texts(ctx.old, before)[0] if before is not None else frozenset()
    lines = ctx.new.lines
    moved = [i for i in span if not ctx.line_is_new(i) and lines[i].strip() not in held]
    return sorted(fresh + moved) if moved else fresh


def _hides(doc, section) -> bool:
    """Whether a line of the section's body is in a fence, an HTML comment or a blockquote (remembered)."""
    facts = doc.facts(section)
    if facts.derived("recognition.plain", _plain):
        return False
    return facts.derived("recognition.hides", lambda facts: next(_hidden_in(facts.body), None)
                         is not None)  # type: ignore[return-value]


def _plain(facts) -> bool:
    """Whether no line of the body can hide anything: no fence-like run, no comment opener, no quote line.

    Each of those is decided by a line alone, so a body read as an edit of a
    plain one is plain when the lines between the shared ends are.
    """
    earlier = facts.earlier("recognition.plain")
    if earlier is not None and earlier[0]:
        _, top, bottom = earlier
        return _plain_lines(facts.body[top:len(facts.body) - bottom])
    return _plain_lines(facts.body)


def _plain_lines(lines) -> bool:
    joined = "".join(lines)
    if has_fence_run(joined) or COMMENT_OPEN in joined:
        return False
    return ">" not in joined or not any(QUOTE_RE.match(line) for line in lines if ">" in line)


def _judged_pattern_lines(ctx: CheckContext) -> set[int]:
    """:func:`judged_lines` of every section that holds a pattern and differs from HEAD's (a section HEAD
    has as it is has none; the names rules ask only about pattern lines, so a section without one is not read)."""
    starts = _pattern_starts(ctx)
    out: set[int] = set()
    for section in ctx.new.sections:
        first = bisect_left(starts, section.body_start)
        if first == len(starts) or starts[first] >= section.body_end:
            continue
        if not ctx.untouched(section):
            out.update(judged_lines(ctx, section))
    return out


def unreadable_patterns(ctx: CheckContext) -> Iterator[Finding]:
    """G110/G111 on new lines and lines that changed section or visibility (a section identical to HEAD's has none)."""
    yield from _headings_placed_otherwise(ctx)
    yield from _headings_seen_in_the_raw_file(ctx)
    yield from _repeated_sections(ctx)
    yield from _vanished_sections(ctx)
    yield from _line_breaks_inside_lines(ctx)
    yield from _bidi_controls(ctx)
    yield from _headings_carrying_content(ctx)
    yield from _patterns_above_the_sections(ctx)
    hidden_at: dict[int, str] = {}
    for section in ctx.sections(ctx.new, *HIDES):
        if ctx.untouched(section):
            continue
        fresh = judged_lines(ctx, section, hidden=True)
        if not fresh:
            continue
        hidden = _hidden_among(ctx, section, fresh)
        hidden_at.update(hidden)
        visible = None
        for index in fresh:
            how = hidden.get(index)
            if how is None:
                continue
            line = ctx.new.lines[index]
            if visible is None:
                visible = _visible_before(ctx, section.label)
            if looks_like_pattern_loose(line) or (_bare(line) and _bare(line) in visible):
                yield Finding("G111", "recognition", "error", ctx.path, index + 1,
                              f"{section.label}: content hidden in {how} is not judged: "
                              f"\"{line.strip()[:60]}\"",
                              "take it out of the fence/comment/quote as a plain line, or delete it "
                              "(a Proven pattern leaves only by archival or demotion)")
    for section in ctx.sections(ctx.new, *READ_FOR_PATTERNS):
        if ctx.untouched(section):
            continue
        fenced = ctx.new.facts(section).fenced  # without a fence line every line is content
        holds = section.semantics in HOLDS_PATTERNS
        for index in judged_lines(ctx, section):
            if index in hidden_at or (fenced and not ctx.new.is_content(section, index)):
                continue
            line = ctx.new.lines[index]
            if holds and _a_pattern_in_code(line):
                yield Finding("G111", "recognition", "error", ctx.path, index + 1,
                              f"{section.label}: a pattern line written as `code` is read as a pattern and "
                              f"judged by no rule: \"{line.strip()[:60]}\"",
                              "write it as a plain pattern line (it is then judged), or delete it")
                continue
            misread = pattern_misread(line, section.semantics)
            if misread == COMMENTED:
                yield Finding("G111", "recognition", "error", ctx.path, index + 1,
                              f"{section.label}: a pattern hidden in a `#` comment line is not judged: "
                              f"\"{line.strip()[:60]}\"",
                              "write it as a plain pattern line, or delete it")
            elif misread == UNPARSED:
                yield Finding("G110", "recognition", "error", ctx.path, index + 1,
                              f"{section.label}: this line looks like a pattern but does not parse, so the "
                              f"gate cannot judge it: \"{line.strip()[:70]}\"",
                              ("" if holds else "if it is prose, write it without the pattern marks (`2x "
                               "faster`, no `!!` in front); if it is a pattern, it belongs under Developing "
                               "Knowledge: ") + grammar_fix(line) + " — canonical form: `!! name: description "
                              "| 2x (CATEGORY) [evidence: ep-…, ep-…]`")
            elif misread == LEVELS:
                levels = max(2, level_marks(CODE_SPAN_RE.sub(" ", line)))
                yield Finding("G110", "recognition", "error", ctx.path, index + 1,
                              f"{section.label}: this pattern line shows {levels} levels; the gate "
                              f"judges one, a reader may take another: \"{line.strip()[:70]}\"",
                              "keep one `| Nx` on the line: the pattern's level")


COMMENTED, UNPARSED, LEVELS = "commented", "unparsed", "levels"  # how a line misreads as a pattern


def misread_lines(doc) -> list[tuple[int, str, str]]:
    """(line index, section label, how) of every line of the file that reads as a pattern to a person but
    that the gate cannot judge (:func:`pattern_misread`): what G110/G111 refuse when a change brings such a
    line, asked of the whole file, so a listing of patterns can say what it leaves out."""
    found = []
    for section in doc.sections:
        if section.semantics not in READ_FOR_PATTERNS:
            continue
        fenced = doc.facts(section).fenced
        for index in range(section.body_start, section.body_end):
            if fenced and not doc.is_content(section, index):
                continue
            how = pattern_misread(doc.lines[index], section.semantics)
            if how is not None:
                found.append((index, section.label, how))
    return found


def pattern_misread(line: str, semantics: Semantics) -> str | None:
    """How a line of a section of ``semantics`` is a pattern the gate cannot judge: :data:`COMMENTED` (hidden in
    a `#` comment line, G111), :data:`UNPARSED` (a reader takes it for one, the parser does not, G110: look-alike
    marks such as a full-width `｜` too), :data:`LEVELS` (a pattern line showing two levels, G110); None when it
    reads as what it is. The wrap asks the same of a plan's free text, so it is refused as the plan's field."""
    holds = semantics in HOLDS_PATTERNS
    if not holds and line.lstrip().startswith("|"):
        return None  # a table row in State or Action Items (`| speed | 2x |`): no pattern starts so
    shown = CODE_SPAN_RE.sub(" ", line)  # `! name: … | 1x` quoted in guidance is an example, not a pattern
    if COMMENT_LINE_RE.match(line):
        hides = looks_like_pattern_loose(shown) and (semantics != Semantics.FREE or
                                                     claims_a_raised_pattern(_as_read(line).lstrip()[1:]))
        return COMMENTED if hides else None
    if looks_like_pattern_loose(shown) and parse_pattern(line) is None \
            and not _urgent_flowscript(shown, semantics) \
            and (semantics != Semantics.FREE or claims_a_raised_pattern(_as_read(line))) \
            and not (not holds and _prose_with_a_ratio(line)):
        return UNPARSED
    if (level_marks(shown) > 1 or _level_after_the_level(shown)) and parse_pattern(line) is not None:
        return LEVELS
    return None


# A level as a reader sees it without a bar before it (`3x`, `3 ×`): after a pattern's own level (`| 1x → 3x`,
# `| 1x (3x)`) the parser reads nothing of it, a reader reads the pattern graduated
BARE_LEVEL_RE = re.compile(r"(?<![\w.])[0-9]+\s*[xX×✕✖](?!\w)")


def _level_after_the_level(line: str) -> bool:
    """Whether a second level stands after the line's own level, outside its `[…]` fields (evidence, notes)."""
    from flowgit.continuity.patterns import ANNOTATION_RE, LEVEL_RE

    last = None
    for last in LEVEL_RE.finditer(line):
        pass
    if last is None:
        return False
    return BARE_LEVEL_RE.search(ANNOTATION_RE.sub(" ", line[last.end():])) is not None


def headings_a_reader_sees(text: str) -> list[int]:
    """The lines (from 0) of ``text`` a renderer shows as a section heading that the gate does not read as one
    (underlined with `---`, an HTML `<h2>`, a heading of another level naming a section), and ``len(lines)`` when
    the text leaves an HTML block or comment open that would hide the heading after it: what G111 refuses in the
    file, asked of text about to be written into one section."""
    from flowgit.continuity.document import rendered_structure

    lines = text.splitlines()
    if not _risky_lines(lines):
        return []
    shown, _ = rendered_structure("\n".join(lines) + "\n\n## Foundation\n")
    after = len(lines) + 1  # the sentinel heading's line
    return sorted(shown - {after}) + ([] if after in shown else [len(lines)])


LEADING_MARKS_RE = re.compile(r"^[^\w!]+")
# A list item's or a task's opening, read as seen (LEADING_MARKS_RE leaves a number or a box's `x` on)
LIST_OPENER_RE = re.compile(r"^(?:\d{1,9}[.)]\s*|[\[(]?[ xX✓✔][\])]\s*)+")
# A `!` before a word anywhere in the line (`Proven !! retry_budget: …`): a pattern's marker, wherever it stands
BANG_BEFORE_A_WORD_RE = re.compile(r"!+\s*\w")
# How a pattern line opens, read as seen: a name of one word and its colon (`retry_budget:`, `Load:`), or a word
# shaped as a name (`retry_budget`)
NAMED_HEAD_RE = re.compile(r"^[^\W_][\w.\-/]*\s*:|^[^\W_]\w*[_.\-/][\w.\-/]*")


def _prose_with_a_ratio(line: str) -> bool:
    """Whether a line of State, Top of Mind, Action Items or Recent Context that shows a level (`| 2x faster`,
    `Load | 3x, latency | 2x`) reads as prose, not as a pattern: as a reader sees it, no `!` stands before a
    word anywhere in it (`Proven !! retry_budget: …`), it cites no evidence, and, a list item's or a task's
    opening aside, it does not open with a one-word name and a colon, as every pattern line does, nor with a
    word shaped as a name (`retry_budget | 3x`)."""
    from flowgit.continuity.identity import fold_lookalikes

    seen = fold_lookalikes(skeleton(_as_read(line))).lstrip()  # (`ǃǃ` or `‼` open a line as `!!` does)
    opened = LIST_OPENER_RE.sub("", seen, count=1)  # (`1) `, `- [x] ` before it: the line still opens there)
    return BANG_BEFORE_A_WORD_RE.search(seen) is None and not EVIDENCE_RE.search(seen) and \
        NAMED_HEAD_RE.match(opened) is None


def _as_read(line: str) -> str:
    """A line of a section of one's own as an agent reads it for a claimed pattern: tags, comments and
    entities as a reader sees them, backticks gone (`` `!!` `` and `` `3x` `` read as the marks they show),
    and whatever opens it before its first word or `!` (a check mark, a bullet) aside."""
    from flowgit.continuity.identity import as_seen

    return LEADING_MARKS_RE.sub("", as_seen(line).replace("`", ""))


def _patterns_above_the_sections(ctx: CheckContext) -> Iterator[Finding]:
    """G111 for a pattern-like line the change brings above the first section: the preamble is the first
    thing an agent reads, and no pattern rule reads it (a `| 3x` claim there, without evidence, would pass)."""
    lines = ctx.new.lines
    for index in ctx.preamble_added:
        line = lines[index]
        shown = CODE_SPAN_RE.sub(" ", line)  # `! name: … | 1x` quoted in guidance is an example, not a pattern
        if looks_like_pattern_loose(shown) or parse_pattern(line) is not None:
            yield Finding("G111", "recognition", "error", ctx.path, index + 1,
                          f"a pattern above the first section is judged by no rule: \"{line.strip()[:60]}\"",
                          "add it as `! name: … | 1x` under Developing Knowledge, or delete it")


# FlowScript's words a line may open with after its urgent `!` (`! thought: …`): a marker, not a pattern name
FLOWSCRIPT_WORDS = frozenset("thought question idea note todo urgent decided decision blocked parking exploring "
                             "tension risk".split())
URGENT_LABEL_RE = re.compile(r"^\s*(?:(?:[-*+]|\d{1,3}[.)])\s+)?(?:\[[ xX]\]\s+)?!\s*([^\s:|!]+)\s*:\s")


def _urgent_flowscript(line: str, semantics: Semantics) -> bool:
    """Whether a ``! label: …`` line is FlowScript's urgent modifier, not a pattern missing its level: one
    `!`, then an Action Item's label (`- [ ] ! CVE-2026-1234: … — next: Dec 4`) or, outside Proven Knowledge,
    where a reader takes every `!` line for a claim, a FlowScript word (`! thought: …`); and, read as a reader
    sees it (markup, entities and characters that draw nothing aside), no bar, level or evidence anywhere."""
    from flowgit.continuity.identity import as_seen, fold_lookalikes

    if semantics == Semantics.PROVEN:
        return False
    label = URGENT_LABEL_RE.match(line)
    if label is None or (semantics != Semantics.LIFECYCLE and label[1].casefold() not in FLOWSCRIPT_WORDS):
        return False
    seen = fold_lookalikes(skeleton(as_seen(line.replace("`", "").replace("*", ""))))
    return not (CLAIM_MARK_RE.search(seen) or level_marks(line) or level_marks(seen))


# What shows a claim on a line, read as seen: a bar, a level with or without one (`3x`, `2 ×`), evidence, or
# an episode id
CLAIM_MARK_RE = re.compile(r"\||\b\d+\s*[x×]\b|evidence|\bep-[0-9a-f]{4,}")


def _pattern_starts(ctx: CheckContext) -> list[int]:
    """The line of each staged pattern, in document order (so ascending), worked out once per change."""
    memo = ctx.memo
    found = memo.get("recognition.starts")
    if found is None:
        found = memo["recognition.starts"] = list(map(_LINE, ctx.all_new_patterns))
    return found


_LINE = attrgetter("line")


def _repeated_sections(ctx: CheckContext) -> Iterator[Finding]:
    """G114 for a second section of a protocol label (a second ``## Current State`` or ``## Foundation``) the
    change introduces: every rule reads a label's first section, so the second would escape them."""
    held = Counter(s.label for s in ctx.old.sections) if ctx.old is not None else Counter()
    seen: Counter[str] = Counter()
    for section in ctx.new.sections:
        if section.semantics == Semantics.FREE:
            continue
        seen[section.label] += 1
        if seen[section.label] == 1 or held[section.label] >= seen[section.label]:
            continue  # the first of its label, or one HEAD had too (judged when it came in)
        yield Finding("G114", "recognition", "error", ctx.path, section.heading + 1,
                      f"a second `{section.label}` section: the rules read the first one, so what this one "
                      "holds is judged by none of them",
                      f"merge it into the first `{section.label}` section if it belongs there; a section of "
                      f"your own gets a heading that does not begin with `{section.label}` (a heading beginning "
                      "with a protocol section's name reads as that section: `## Notes on foundation models`, "
                      "not `## Foundation models`)")


# Bidirectional embeddings, overrides and isolates: they reorder how a line is shown, not what it holds
BIDI_CONTROL_RE = re.compile("[\u202a-\u202e\u2066-\u2069]")


def _bidi_controls(ctx: CheckContext) -> Iterator[Finding]:
    """G111 for a bidirectional control character in a line the change brings: a viewer that applies the
    Unicode bidi rules shows the words in another order (``deploy before drain`` for ``drain before deploy``)
    while every rule reads them as stored, so a claim reordered for its reader is judged unchanged."""
    lines = ctx.new.lines
    for index in ctx.candidate_lines:
        line = lines[index]
        if BIDI_CONTROL_RE.search(line) and ctx.line_is_new(index):
            shown = BIDI_CONTROL_RE.sub(lambda m: f"<U+{ord(m.group()):04X}>", line.strip())
            yield Finding("G111", "recognition", "error", ctx.path, index + 1,
                          f"a bidirectional control character reorders what a reader is shown, not what the "
                          f"rules read: \"{shown[:70]}\"", "remove it; write the words in the order they mean")


# What breaks a line for some reader inside what the gate reads as one line: a carriage return (a renderer, a
# terminal, a text-mode reader), and the vertical tab, form feed, file/group/record separators, NEL and the
# Unicode line and paragraph separators (Python's ``str.splitlines``, editors and tokenizers that follow Unicode)
LINE_BREAKS_INSIDE = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
LINE_BREAK_INSIDE_RE = re.compile(f"[{LINE_BREAKS_INSIDE}]")
_SHOWN_AS = {"\r": "⏎"}


def _line_breaks_inside_lines(ctx: CheckContext) -> Iterator[Finding]:
    """G111 for a line the change brings that another reader breaks where the gate does not, with something
    after the break: a section heading or a pattern there is judged by no rule (a `## Foundation` after a
    U+2028 inside a State line is a second Foundation section to every reader that splits lines as Unicode
    does). A page-break line of its own (a lone form feed) carries nothing after the break and passes. (Only
    the lines the change brings are read: one HEAD holds as it is was judged when it came.)"""
    lines = ctx.new.lines
    for index in ctx.candidate_lines:
        line = lines[index]
        body = line.rstrip("\r\n")
        if LINE_BREAK_INSIDE_RE.search(body) is None:
            continue
        if not any(part.strip() for part in LINE_BREAK_INSIDE_RE.split(body)[1:]):
            continue  # nothing after the break: no line of its own for any reader
        if not ctx.line_is_new(index):
            continue
        shown = LINE_BREAK_INSIDE_RE.sub(lambda m: _SHOWN_AS.get(m.group(), f"<U+{ord(m.group()):04X}>"), body)
        yield Finding("G111", "recognition", "error", ctx.path, index + 1,
                      f"a line break inside the line ({_break_named(body)}) breaks it for a reader but not "
                      f"for the gate: \"{shown[:70]}\"", "put a line break (\\n) where it is, or delete it")


def _break_named(body: str) -> str:
    char = LINE_BREAK_INSIDE_RE.search(body).group()  # type: ignore[union-attr]
    return "a carriage return" if char == "\r" else f"U+{ord(char):04X}"


HEADLINE_MAX = 100  # characters of a heading's text: a name and a short headline (`## State | Nov 30 evening`)


def _headings_carrying_content(ctx: CheckContext) -> Iterator[Finding]:
    """G116 for a heading the change writes that carries content: a pattern-like text, or more than a headline.

    A heading's suffix is read by no section rule (the body is what State's
    REPLACE, the budgets and the pattern rules read), and every reader shows it:
    State kept in its own heading would grow past REPLACE, a claim written there
    would be judged as nothing.
    """
    held = {ctx.old.lines[s.heading] for s in ctx.old.sections} if ctx.old is not None else set()
    for section in ctx.new.sections:
        line = ctx.new.lines[section.heading]
        if line in held:
            continue
        text = line.strip().lstrip("#").strip()
        if section.canonical is None:
            yield from _named_otherwise(ctx, section, text)
        claim = looks_like_pattern_loose(text)
        if claim or len(text) > HEADLINE_MAX:
            why = "looks like a pattern" if claim else f"is {len(text)} characters long"
            yield Finding("G116", "recognition", "error", ctx.path, section.heading + 1,
                          f"the heading of {section.label} {why}: a heading names its section (with a short "
                          "headline at most), and no rule reads what it carries",
                          f"move the text into the section's body; keep the heading under {HEADLINE_MAX} characters")


def _named_otherwise(ctx: CheckContext, section, text: str) -> Iterator[Finding]:
    """G111 for a heading the gate reads as a section of its own that a reader reads as a protocol section's
    (`## Pr&#111;ven Knowledge`, a zero-width character or a look-alike letter inside, `## ✅ Proven Knowledge`,
    `## 1. Proven Knowledge`): its lines would be judged as free notes."""
    from flowgit.continuity.document import section_seen_in

    named = section_seen_in(text)
    if named is not None:
        yield Finding("G111", "recognition", "error", ctx.path, section.heading + 1,
                      f"a reader sees `{named}` in the heading `{text[:60]}`, which the gate reads as a section of "
                      "another name: the lines under it would be judged by no rule of that section",
                      f"write the heading as `## {named}` in plain letters, with no number or symbol before it "
                      "(or name a section of your own with other words)")
    elif any(is_mixed_script(word) for word in re.findall(r"[^\W\d_]+", text)):
        yield Finding("G111", "recognition", "error", ctx.path, section.heading + 1,
                      f"a word of the heading `{text[:60]}` mixes scripts (a letter of another alphabet that "
                      "looks Latin): a reader may take it for a protocol section the gate does not read it as",
                      "type the heading's words in one script each")


def _vanished_sections(ctx: CheckContext) -> Iterator[Finding]:
    """G115 for a protocol section HEAD had that the change leaves without a section of its label.

    A section renamed to a name no rule knows (``## Current Status``) is judged
    by none of them: renamed back a commit later with an append inside, it
    would look new and be judged by nothing either. So the section stays
    under its name or an alias; an empty body says there is nothing in it.
    """
    if ctx.old is None:
        return
    now = {s.label for s in ctx.new.sections}
    for section in ctx.old.sections:
        if section.semantics != Semantics.FREE and section.label not in now:
            now.add(section.label)  # once per label
            yield Finding("G115", "recognition", "error", ctx.path, None,
                          f"the `{section.label}` section is gone (renamed or deleted): what it holds would be "
                          "judged by none of its rules",
                          f"keep `## {section.label}` (or an alias of it); leave its body empty if nothing is in "
                          "it, and move content out by the section's own rules")


# A heading as the raw file shows it, what draws nothing read as a space: marks, then any spacing, then its text
RAW_HEADING_RE = re.compile(r"(#{1,6})([ \t]*)([^#\s].*?)[ \t#]*")
# The spaces and the Braille blank that draw as spaces: between a heading's marks and its text, each is the
# space a reader sees.
DRAWS_A_SPACE_RE = re.compile("[\u00a0\u2800\u3000]")


def as_a_raw_reader_sees(line: str) -> str:
    """``line`` as a reader of the raw file sees it: what draws nothing is gone (`#<U+200B># Foundation` reads
    `## Foundation`, and `##<U+200B>Foundation` reads `##Foundation`), a space drawn as a space is one, and
    look-alike letters read as the Latin ones they mimic (:func:`~flowgit.continuity.identity.as_seen`)."""
    from flowgit.continuity.identity import as_seen

    return as_seen(DRAWS_A_SPACE_RE.sub(" ", INVISIBLE_RE.sub("", line)))


def _atx_marks(line: str) -> bool:
    """Whether the line opens as CommonMark's headings do: at most three spaces, one to six ``#``, then a
    space, a tab or the end of the line."""
    body = line.lstrip(" ")
    marks = len(body) - len(body.lstrip("#"))
    return len(line) - len(body) <= 3 and 1 <= marks <= 6 and \
        body[marks:marks + 1] in ("", " ", "\t", "\r", "\n")


def _headings_seen_in_the_raw_file(ctx: CheckContext) -> Iterator[Finding]:
    """G111 for a line the change brings that a reader of the raw file takes for a protocol section's
    heading, and that neither the gate nor a renderer reads as one: `## Foundation` behind an invisible
    character, a tab or a form feed, or with a no-break space, a blank letter or nothing after its marks. An
    agent reads its memory raw (``flowgit prime`` prints it so): the lines under it would be read as that
    section's and judged as the section above's. (A heading of another level, or one a renderer shows, is
    :func:`_headings_placed_otherwise`'s.)"""
    from flowgit.continuity.document import section_seen_in

    lines, headings = ctx.new.lines, None
    for index in ctx.candidate_lines:
        line = lines[index]
        if "#" not in line or _atx_marks(line):
            continue  # (no marks, or marks as the gate and a renderer read them: theirs to judge)
        seen = RAW_HEADING_RE.fullmatch(as_a_raw_reader_sees(line.rstrip("\r\n")).strip())
        if seen is None or not (seen[2] or len(seen[1]) > 1):
            continue  # (`#413 Foundation tests`: one mark against the text is a ticket or a tag, no heading)
        if (named := section_seen_in(seen[3])) is None or not ctx.line_is_new(index):
            continue
        if headings is None:
            headings = {s.heading for s in ctx.new.sections}
        section = ctx.new.section_at(index)
        if index in headings or section is not None and not ctx.new.is_content(section, index):
            continue  # a heading after all, or a line of code
        yield Finding("G111", "recognition", "error", ctx.path, index + 1,
                      f"a reader of the raw file sees a `{named}` heading here (\"{line.strip()[:60]}\"), which "
                      "is no heading to the gate or a renderer: the lines under it would be read as that section's "
                      "and judged as the section above's",
                      f"write a heading as `## {named}` at the start of its line, with a plain space after the "
                      "marks, or write the line without the marks")


def _headings_placed_otherwise(ctx: CheckContext) -> Iterator[Finding]:
    """G111 for a section heading a reader does not see, or a heading a reader sees that the gate does not.

    The gate's parser reads ``## Notes`` as a heading wherever it stands
    outside code; a renderer does not when it lies inside an HTML block (a
    comment, ``<style>``, ``<details>`` …) or in code inside a list item, so
    the lines under it read as part of the section above: a ``| 3x`` line
    that looks Proven would be judged as a free note. The other way round, a
    line underlined with ``---`` is a heading to a renderer and plain text to
    the gate. Either is refused where the change puts it (one HEAD already
    had stays as it was).
    """
    hidden, unread = _heading_mismatch(ctx.new)
    if not hidden and not unread:
        return
    old_hidden, old_unread = _heading_mismatch(ctx.old) if ctx.old is not None else ({}, {})
    lines = ctx.new.lines
    for text, at in hidden.items():
        if text not in old_hidden:
            yield Finding("G111", "recognition", "error", ctx.path, at + 1,
                          f"the heading `{text[:60]}` is not a heading to a reader (it lies inside an HTML "
                          "block, or code in a list item, or after an HTML comment or element left open above "
                          "it, which a browser hides it in): a reader reads the lines under it as part of the "
                          "section above, or sees none of them",
                          "close the comment or HTML block before the heading (or put a blank line after a tag "
                          "that opens one), or take the heading out")
    for text, at in unread.items():
        if text not in old_unread:
            yield Finding("G111", "recognition", "error", ctx.path, at + 1,
                          f"a reader sees `{lines[at].strip()[:60]}` as a heading (underlined, of another level, or "
                          "an HTML heading) that the gate does not read as a section: the lines under it are "
                          "judged as part of the section above",
                          "write sections as `## Name`; put a blank line between a text line and a `---` rule")


def _heading_mismatch(doc) -> tuple[dict[str, int], dict[str, int]]:
    """({heading text: line} of the gate's headings a renderer does not show, {text: line} of the level-2
    headings a renderer shows that the gate does not read), remembered with the document.

    Only a document with a line that may open an HTML block or underline a
    heading, or a heading indented (which a list item above it may hold as
    code), is read again by a full CommonMark parser (with HTML, as a
    renderer reads it): any other reads as the gate reads it.
    """
    found = doc.memo.get("recognition.heading_mismatch")
    if found is None:
        found = _read_as_rendered(doc) if _may_render_otherwise(doc) else ({}, {})
        doc.memo["recognition.heading_mismatch"] = found
    return found


def _may_render_otherwise(doc) -> bool:
    """Whether a renderer may place a section boundary elsewhere than the gate (remembered with the
    document): a line that may open a hiding HTML block or underline a heading, or an indented heading.

    Each line decides on its own, so a version read as an edit of one that had none is decided by the lines
    between what the two share.
    """
    found = doc.memo.get("recognition.render_risk")
    if found is None:
        earlier = doc.earlier("recognition.render_risk")
        start, stop = (earlier[1], earlier[2]) if earlier is not None and not earlier[0] else (0, len(doc.lines))
        found = doc.memo["recognition.render_risk"] = _risky_lines(doc.lines[start:stop]) or any(
            start <= section.heading < stop and doc.lines[section.heading][:1] in (" ", "\t")
            for section in doc.sections)
    return found


def _risky_lines(lines) -> bool:
    """Whether a line may open an HTML block of a hiding kind, or is a run of ``-`` or ``=`` alone (which
    underlines the text above it into a heading)."""
    return any(map(_risky_line, lines))


NESTED_HEADING_RE = re.compile(r"^\s{0,3}(?:(?:[-*+]|\d{1,9}[.)])\s+|>\s*)+(?P<text>#{1,6}(?:\s.*)?)$")


@lru_cache(maxsize=1 << 14)
def _risky_line(line: str) -> bool:
    """:func:`_risky_lines` of one line (remembered: a version shares almost every line with the last)."""
    from flowgit.continuity.document import HIDING_HTML_RE

    if "<" in line and _may_hide(line):
        return True  # raw HTML a browser may hide what follows behind (`<details>` in a line of text too)
    nested = NESTED_HEADING_RE.match(line) if "#" in line else None
    if nested:  # a heading inside a list item or a quote is one to a reader too
        from flowgit.continuity.document import names_a_section

        return names_a_section(nested["text"].strip(" \t\r\n#"))
    body = line.lstrip(" ")
    if len(line) - len(body) > 3 or not body or body[0] not in "<-=#":
        return False
    if body[0] == "#":  # an ATX heading of another level than the gate's that names a section reads as one
        from flowgit.continuity.document import names_a_section

        level = len(body) - len(body.lstrip("#"))
        return (level != 2 or body[2:3] not in (" ", "\t")) and names_a_section(body.strip(" \t\r\n#"))
    if body[0] == "<":
        return HIDING_HTML_RE.match(line) is not None or body[1:2] in ("h", "H") or _may_hide(line)
    return not body.rstrip(" \t\r\n").strip(body[0])


def _may_hide(line: str) -> bool:
    from flowgit.continuity.browserhide import may_hide

    return may_hide(line)


def _read_as_rendered(doc) -> tuple[dict[str, int], dict[str, int]]:
    from flowgit.continuity.document import rendered_structure

    shown, own_tags = rendered_structure(doc.text)
    gate = {section.heading for section in doc.sections}
    lines = doc.lines
    hidden = {lines[at].strip(): at for at in sorted(gate - shown) if not any(a <= at < b for a, b in own_tags)}
    unread = {lines[at].strip(): at for at in sorted(shown - gate) if not _names_its_own_section(doc, at)}
    return hidden, unread


def _names_its_own_section(doc, at: int) -> bool:
    """Whether the heading at ``at`` names the section the gate reads it in (a `# Developing Knowledge`
    under `## Developing Knowledge` misleads nobody)."""
    from flowgit.continuity.document import section_named

    named = section_named(doc.lines[at].lstrip(" ->*+0123456789.)>").strip("#= \t\r\n"))
    return named is not None and any(s.heading < at < s.body_end and s.label == named for s in doc.sections)


def names(ctx: CheckContext) -> Iterator[Finding]:
    """G113 for a new or changed line's mixed-script name, G112 for a duplicate with a new or changed line.

    Only the patterns on judged lines can be reported for their own name, so
    those are found by their line (a change judges a few lines of a file that
    holds hundreds of patterns); the duplicate check reads every pattern, and
    only when the identity map holds fewer than there are.
    """
    judged = _judged_pattern_lines(ctx)
    patterns = ctx.all_new_patterns
    if judged:
        starts = _pattern_starts(ctx)
        for line in sorted(judged):
            at_index = bisect_left(starts, line)
            if at_index == len(starts) or starts[at_index] != line:
                continue  # a judged line that is not a pattern
            at = patterns[at_index]
            if is_mixed_script(at.pattern.name):
                yield Finding("G113", "names", "error", ctx.path, at.lineno,
                              f"`{at.pattern.name}` mixes letters of {scripts_named(at.pattern.name)}, which no "
                              "language writes together: a look-alike letter makes a name that reads as another",
                              "type every letter of the name in one script (a look-alike is usually a Cyrillic or "
                              "Greek letter in a Latin name)")
    if len(ctx.new_patterns) == len(patterns):
        return  # the identity map keeps one per key: no two share one
    by_key: dict[str, list] = defaultdict(list)
    for at in patterns:
        by_key[name_key(at.pattern.name)].append(at)
    for key, ats in by_key.items():
        if len(ats) > 1 and any(a.line in judged for a in ats):
            lines = ", ".join(str(a.lineno) for a in ats)
            yield Finding("G112", "names", "error", ctx.path, ats[1].lineno,
                          f"`{ats[1].pattern.name}` is the same name as `{ats[0].pattern.name}` "
                          f"(lines {lines}): a name is one pattern's identity",
                          "merge the two into one pattern, or give the new one a distinct name")


