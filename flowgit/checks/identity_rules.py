"""Identity rules: how a pattern may enter, leave and change, and the protected zones.

* a new pattern enters at 1x in Developing (G204), a rename carries its level
  and evidence (renames are found by the context and judged as the pattern);
* a Proven pattern leaves only stale (``stale_proven_days``) or demoted to
  Developing with a reason (G205);
* a Proven claim is not reworded in place: demote it with a reason to change it (G404);
* Foundation, Partnership and Cross-Domain Discoveries (what a person wrote for
  the agent) change only with an override: added, altered, removed or hidden
  lines alike (G402).
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timezone
from functools import lru_cache
from typing import Callable, Iterator

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.continuity.identity import name_key
from flowgit.continuity.patterns import PatternAt, derivation_note_match, looks_like_pattern_loose, parse_pattern
from flowgit.dates import parse_date
from flowgit.continuity.sections import DEVELOPING, PROVEN, Semantics

DEMOTED_RE = re.compile(r"demot\w*\b\W*(\S.*)", re.IGNORECASE)


def new_patterns_enter_at_1x(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.old is None:
        return
    for at in ctx.changed_patterns:
        if ctx.old_for(at) is not None:
            continue
        if at.pattern.level > 1 or at.section != DEVELOPING:
            where = f"at {at.pattern.level}x" if at.pattern.level > 1 else f"in {at.section}"
            yield Finding("G204", "new-pattern", "error", ctx.path, at.lineno,
                          f"`{at.pattern.name}` is new and enters {where}: a new pattern enters at 1x in "
                          "Developing Knowledge",
                          f"add it as `! {at.pattern.name}: … | 1x` under Developing Knowledge; it rises one "
                          "level per wrap as independent evidence arrives")


def _demotion_reason(at: PatternAt) -> str:
    for note in at.pattern.notes:
        m = DEMOTED_RE.search(note)
        if m and len(m.group(1).split()) >= 2:
            return m.group(1)
    return ""


def _age_days(ctx: CheckContext, at: PatternAt, now: datetime) -> int | None:
    """Whole days since the pattern was last seen (:func:`flowgit.evidence.last_recorded`; None: unknown)."""
    from flowgit.evidence import last_recorded

    seen = last_recorded(at.pattern, ctx.episodes(at.pattern.evidence) if at.pattern.evidence else {},
                         reference=now.date(), until=now.date())  # (a yearless date: the change's year, not today's)
    return None if seen is None else (now.date() - seen).days


def proven_leaves_properly(ctx: CheckContext) -> Iterator[Finding]:
    now = ctx.when or datetime.now(timezone.utc)
    limit = ctx.cfg.thresholds.stale_proven_days
    for key, before, now_at in ctx.old_pattern_changes:  # a pattern left as it was stays where it was
        if before.section != PROVEN:
            yield from _demotion_kept(ctx, before, now_at)
            continue
        name = before.pattern.name
        if now_at is None:
            age = _age_days(ctx, before, now)
            if age is None or age < limit:
                told = "last seen " + (f"{age:.0f} day(s) ago" if age is not None else "on no recorded date")
                yield Finding("G205", "proven-exit", "error", ctx.path, None,
                              f"Proven `{name}` is removed but is not stale ({told}, by its date and its "
                              f"evidence; archival needs {limit} days)",
                              f"demote it to Developing with a reason (`[demoted {now:%Y-%m-%d}: contradicted "
                              "by ep-…]`) or keep it until it is stale")
        elif now_at.section == PROVEN and now_at.pattern.level < min(before.pattern.level, 3):
            yield Finding("G205", "proven-exit", "error", ctx.path, now_at.lineno,
                          f"Proven `{name}` is lowered to {now_at.pattern.level}x where it stands: a reader takes it "
                          "as demoted, with no reason and no contradicting episode (`flowgit patterns` lists it "
                          f"at {now_at.pattern.level}x)",
                          f"keep `| 3x`; to demote it, move it to Developing Knowledge with a reason (`[demoted "
                          f"{now:%Y-%m-%d}: contradicted by ep-…]`)")
        elif now_at.section != PROVEN and _still_proven(ctx, key):
            continue  # a second line of the same name (G112's): the Proven one did not leave
        elif now_at.section != PROVEN and not _demotion_reason(now_at):
            yield Finding("G205", "proven-exit", "error", ctx.path, now_at.lineno,
                          f"`{name}` left Proven without a demotion reason",
                          f"annotate why: `[demoted {now:%Y-%m-%d}: contradicted by ep-…]`")
        elif now_at.section != PROVEN:
            yield from _contradiction_holds(ctx, before, now_at, now)


def _still_proven(ctx: CheckContext, key: str) -> bool:
    """Whether a pattern of this identity still stands in Proven: the one outside it is a second line of the
    same name (G112's), not the Proven one leaving."""
    return any(at.section == PROVEN and name_key(at.pattern.name) == key for at in ctx.all_new_patterns)


def _demotion_notes(at: PatternAt) -> list[str]:
    """The pattern's own demotion notes; the wrap's re-check note on a pattern that derives from a demoted
    one (``derives from X, demoted DAY: re-check``) is not one: it goes once the re-check is done."""
    return [note for note in at.pattern.notes if DEMOTED_RE.search(note) and not derivation_note_match(note)]


def _demotion_kept(ctx: CheckContext, before: PatternAt, now_at: PatternAt | None) -> Iterator[Finding]:
    """G207: a demoted pattern keeps its demotion note while it stays out of Proven.

    The note is the record that its chain did not survive scrutiny: a promotion
    reads it (G208). It leaves with the pattern (archival) or with a graduation
    on a fresh chain, never on its own.
    """
    if now_at is None or now_at.section == PROVEN:
        return
    held = _demotion_notes(before)
    if not held:
        return
    kept = set(_demotion_notes(now_at))
    lost = [note for note in held if note not in kept]
    if lost:
        yield Finding("G207", "proven-exit", "error", ctx.path, now_at.lineno,
                      f"`{now_at.pattern.name}` lost or changed its demotion note `[{lost[0]}]`: it records that "
                      "its earlier evidence did not survive scrutiny",
                      f"restore `[{lost[0]}]`; it leaves with the pattern, or when a fresh chain graduates it")


def _contradiction_holds(ctx: CheckContext, before: PatternAt, now_at: PatternAt, now: datetime) -> Iterator[Finding]:
    """G206: a demotion stands on an episode that contradicts the pattern (Step 5), cited in its note.

    The episode must be in the staged store, be about the pattern, not be part
    of its evidence, and come from a session and agent its chain does not: a
    pattern is not demoted by a reason alone, nor by its own evidence.
    """
    from flowgit.evidence import EPISODE_REF_RE, demoted_on, independent_contradiction

    day = demoted_on(now_at.pattern, now.date())  # a yearless date: the one nearest this change
    if day is None:
        yield Finding("G206", "proven-exit", "error", ctx.path, now_at.lineno,
                      f"`{before.pattern.name}` is demoted with a note that gives no date: a promotion counts only "
                      "evidence recorded after the demotion, so the note must say when",
                      f"write it as `[demoted {now:%Y-%m-%d}: why (ep-…)]`")
        return
    against = [i for n in now_at.pattern.notes if DEMOTED_RE.search(n) for i in EPISODE_REF_RE.findall(n)]
    episodes = ctx.episodes([*against, *before.pattern.evidence]) if against else {}
    misdated = _demotion_misdated(day, now.date(), before.pattern, against, episodes,
                                  lambda: _recorded_about(ctx, before.pattern, day, now.date(), against))
    if misdated:
        yield Finding("G206", "proven-exit", "error", ctx.path, now_at.lineno,
                      f"`{before.pattern.name}` is demoted as of {day.isoformat()}, {misdated}",
                      f"date the note when the demotion happens: `[demoted {now:%Y-%m-%d}: why (ep-…)]`")
        return
    problems = independent_contradiction(before.pattern, against, episodes, now=now)
    if problems:
        reason = ("it cites no contradicting episode" if not against else problems[0])
        yield Finding("G206", "proven-exit", "error", ctx.path, now_at.lineno,
                      f"`{before.pattern.name}` is demoted without an independent contradicting episode: {reason}",
                      "record what contradicted it (`flowgit episode add --type tension …` in this session) and "
                      f"cite it in the note: `[demoted {now:%Y-%m-%d}: why (ep-…)]`")


DATE_SLACK_DAYS = 1  # a date written in one time zone and committed in another


def _demotion_misdated(day, today, pattern, against: list[str], episodes,
                       recorded_between: Callable[[], list[str]] = lambda: []) -> str | None:
    """Why a demotion's date cannot be true (None when it can): after the change (no evidence could ever come
    after it), before what the pattern rests on, or before the episode that contradicted it (either would
    make the discredited chain, or what was recorded in between, count as recorded since); or, dated any day
    before the change (a late wrap writes its session's day; a time zone a day behind), with episodes bearing
    on the pattern recorded in between (``recorded_between``): they would count as recorded since the
    demotion and re-graduate it on what came before it. (An episode whose ``ts`` is set ahead of its commit
    is read by its place in the store when the pattern is promoted again: see G208.)"""
    from flowgit.evidence import last_recorded, recorded_on

    if (day - today).days > DATE_SLACK_DAYS:
        return f"after this change ({today.isoformat()}): no evidence could ever be recorded after it"
    if day < today and (since := recorded_between()):  # (within the slack too: a day back would count a day)
        return (f"before this change ({today.isoformat()}), and episode(s) bearing on it were recorded in "
                f"between ({', '.join(since[:3])}): they would count as recorded since the demotion, though they "
                "came before it")
    floor = last_recorded(pattern, episodes, reference=today, until=today)  # not before what it demotes
    if floor is not None and day < floor:
        return (f"before what it rests on ({floor.isoformat()}: its graduation or its evidence): a promotion "
                "would count the discredited chain as recorded since")
    caused = [d for i in against if (d := recorded_on(episodes.get(i))) is not None]
    if caused and (min(caused) - day).days > DATE_SLACK_DAYS:  # the demotion cannot precede its own cause
        return (f"before the episode that contradicted it was recorded ({min(caused).isoformat()}): evidence "
                "recorded in between would count as recorded since the demotion")
    return None


def _recorded_about(ctx: CheckContext, pattern, day, today, against: list[str]) -> list[str]:
    """Ids of the staged store's episodes bearing on ``pattern`` dated after ``day`` and up to ``today`` (but
    the demotion's own cause): about it as G206 reads a contradiction, or as G104 would accept one as its
    evidence. Read only for a demotion dated before its change: the whole store is parsed."""
    from flowgit.episodes import parse_store
    from flowgit.evidence import bears_on, recorded_on

    found, _ = parse_store(bytes(ctx.new_store))
    return [i for i, ep in found.items() if i not in against and (d := recorded_on(ep)) is not None
            and day < d <= today and bears_on(pattern, ep, ctx.cfg.thresholds, ctx.word_weight)]


def graduations_dated(ctx: CheckContext) -> Iterator[Finding]:
    """G405 for a pattern entering Proven dated after the change: staleness and demotions count from that
    date, so a future one would lock the claim in (never stale, and no demotion could come after it)."""
    if ctx.old is None or ctx.when is None:
        return  # a first commit adopts a memory as it stands
    today = ctx.when.date()
    for at in ctx.changed_patterns:
        before = ctx.old_for(at)
        if at.section != PROVEN or before is None or before.section == PROVEN or not at.pattern.date:
            continue
        written = parse_date(at.pattern.date, reference=today)
        if written is None or (written - today).days <= DATE_SLACK_DAYS:
            continue
        yield Finding("G405", "proven-claim", "error", ctx.path, at.lineno,
                      f"`{at.pattern.name}` enters Proven dated {written.isoformat()}, after this change "
                      f"({today.isoformat()}): staleness and demotions count from that date",
                      f"date the graduation the day it happens: `| 3x (CATEGORY — {today.isoformat()})`")


def _rewording(ctx: CheckContext, before: PatternAt, now: PatternAt, demoted) -> str | None:
    """How a Proven pattern staying in Proven changed its claim in place (None: it did not). Its whole line
    is read (:mod:`flowgit.checks.claims`); a typo fixed is not a change (a word its evidence uses is none)."""
    from flowgit.checks.claims import claim_text, describe, evidence_words, lost_negations, name_gains, \
        new_words, only_respelled, pattern_names, relabelled

    named = pattern_names(ctx)
    was, said = claim_text(before.pattern, demoted, named), claim_text(now.pattern, demoted, named)
    known = evidence_words(ctx, before.pattern)
    renamed = name_gains(before.pattern, now.pattern, was, known)
    if (was != said and not only_respelled(was, said, known)) or renamed:
        told = describe(new_words(was, said, known=known) + renamed, lost_negations(was, said))
        return "is reworded in place" + (f" (it {told})" if told else "")
    if relabelled(before.pattern, now.pattern, in_place=True):
        return f"is recategorised in place (`{before.pattern.category}` -> `{now.pattern.category}`)"
    return None


def proven_claims_stay(ctx: CheckContext) -> Iterator[Finding]:
    yield from graduations_dated(ctx)
    yield from proven_takes_only_patterns(ctx)
    yield from _links_left_naming_nothing(ctx)
    from flowgit.checks.claims import demoted_names

    demoted = demoted_names(ctx)
    for key, before, now_at in ctx.old_pattern_changes:  # a pattern left as it was keeps its claim
        if before.section != PROVEN or now_at is None or now_at.section != PROVEN:
            continue
        how = _rewording(ctx, before, now_at, demoted)
        if how is not None:
            yield Finding("G404", "proven-claim", "error", ctx.path, now_at.lineno,
                          f"Proven `{before.pattern.name}` {how}; its evidence proved the old claim, not this one",
                          "keep the proven line as it was; to change the claim, demote it to Developing with a "
                          "reason and let the new wording earn its evidence")
        if before.pattern.date != now_at.pattern.date:
            yield Finding("G405", "proven-claim", "error", ctx.path, now_at.lineno,
                          f"Proven `{before.pattern.name}`'s graduation date is rewritten in place "
                          f"({before.pattern.date or 'none'} -> {now_at.pattern.date or 'none'}): archival and "
                          "staleness are measured from it",
                          f"restore `{before.pattern.date}`; the date is the wrap's record of when it graduated")


def _links_left_naming_nothing(ctx: CheckContext) -> Iterator[Finding]:
    """G404 for a Proven line whose link names a pattern this change takes out of the file: a link to a pattern
    is no change to the claim, but once the pattern is gone it names nothing and reads as a sentence
    (`[-> never-cap-retries]`): added beside a throwaway pattern and left when that pattern is archived, it
    would put in two commits what one commit may not write."""
    if ctx.old is None:
        return
    from flowgit.continuity.derivation import link_names
    from flowgit.continuity.identity import name_key
    from flowgit.continuity.patterns import document_patterns

    gone = {name_key(at.pattern.name) for at in document_patterns(ctx.old)} - {
        name_key(at.pattern.name) for at in document_patterns(ctx.new)}
    if gone:  # (a rename is the same pattern under a new name: only what the change archives names nothing)
        from flowgit.changes import RENAMED, diff_pattern_maps
        from flowgit.continuity.patterns import pattern_map

        gone -= {name_key(e.old_name) for e in diff_pattern_maps(pattern_map(ctx.old), pattern_map(ctx.new))
                 if e.kind == RENAMED and e.old_name}
    if not gone:
        return
    for at in document_patterns(ctx.new):
        if at.section != PROVEN:
            continue
        for link in (*at.pattern.links, *at.pattern.notes):
            dangling = [n for n in link_names(link)[1] if name_key(n) in gone]
            if dangling:
                yield Finding("G404", "proven-claim", "error", ctx.path, at.lineno,
                              f"Proven `{at.pattern.name}` links to `{dangling[0]}`, which this change takes out "
                              f"of the file: the link `[{link}]` then names no pattern and reads as words of the "
                              "proven claim",
                              f"keep `{dangling[0]}` while the proven line links to it, or take the link off the "
                              "proven line in the same commit")
                break


def proven_takes_only_patterns(ctx: CheckContext) -> Iterator[Finding]:
    """G406 for a line a reader sees in Proven that is not a pattern line, and for words its heading gains:
    Proven takes graduations only, so a bullet, a FlowScript line or prose there would read as proven
    knowledge that no evidence stands behind. A line HEAD's section held, restyled (bullet, spacing,
    emphasis), and a guidance comment in the template's words, are not new."""
    if ctx.old is None:
        return  # a first commit adopts a memory as it stands
    from flowgit.checks.claims import claim_tokens
    from flowgit.checks.recognition import CODE_SPAN_RE, judged_lines
    from flowgit.continuity.document import COMMENT_RE

    lines = ctx.new.lines
    for section in ctx.sections(ctx.new, Semantics.PROVEN):
        before = ctx.old_section(section.label)
        yield from _heading_says_more(ctx, before, section)
        if ctx.untouched(section):
            continue
        held = None  # (HEAD's lines, read only when a line that is not a pattern is judged: most never are)
        for index in judged_lines(ctx, section):
            line = lines[index]
            if not line.strip() or parse_pattern(line) is not None or \
                    looks_like_pattern_loose(CODE_SPAN_RE.sub(" ", line)):
                continue  # (a pattern look-alike is G110's to name; one only inside `code` G110 reads as an
                # example, but in Proven a reader reads the line as proven knowledge all the same)
            tokens = claim_tokens(line)
            said = tuple(word for word, _ in tokens) or (line.strip(),)  # (a tag alone says much)
            if (COMMENT_RE.match(line) and set(said) <= _guidance_words()) or _a_grouping_heading(line, tokens):
                continue
            held = _said_lines(ctx.old, before) if held is None else held
            if said in held:
                continue
            yield Finding("G406", "proven-claim", "error", ctx.path, index + 1,
                          f"{section.label} holds graduated pattern lines only; this line would read as proven "
                          "knowledge with no evidence behind it",
                          "move it to Recent Context or Developing Knowledge (as a 1x pattern), or graduate it "
                          "as `!! name: … | 3x (CATEGORY — date) [evidence: …]` when its evidence allows")


def _a_grouping_heading(line: str, tokens) -> bool:
    """A ``###`` heading that groups the patterns under it (`### Reliability`): up to three words, none of them
    a negation or a label that turns the patterns under it around (`### Refuted`, `### Disproved`). Anything
    longer is a sentence, and reads as knowledge. ``tokens``: the line's :func:`claim_tokens`."""
    from flowgit.checks.claims import NOT, negating_label

    return line.lstrip().startswith("###") and 0 < len(tokens) <= 3 and \
        all(word.isalpha() and word != NOT and not negating_label(written) for word, written in tokens) and \
        not any(negating_label(word) for word in line.lstrip().lstrip("#").split())  # (`### Dis-proved`)


def _heading_says_more(ctx: CheckContext, before, section) -> Iterator[Finding]:
    """G406 for words Proven's heading line gains (a `| never cap retries` suffix reads as proven too)."""
    from flowgit.checks.claims import claim_words

    now = ctx.new.lines[section.heading]
    was = ctx.old.lines[before.heading] if before is not None and ctx.old is not None else ""
    if now == was:
        return
    named = _section_name_words(ctx, section.label)  # (the section's name, or an alias: what any heading says)
    gained = (claim_words(now) - named) - (claim_words(was) - named)
    if gained:
        yield Finding("G406", "proven-claim", "error", ctx.path, section.heading + 1,
                      f"{section.label}'s heading says more than its name: a reader takes it as proven knowledge",
                      f"write the heading as `## {section.label}`")


def _section_name_words(ctx: CheckContext, label: str) -> Counter:
    """The words of a section's name and of each alias it goes by: a heading that says more than one of them
    (after a `|`, a dash, a colon, in parentheses or as plain words) says something of its own."""
    from flowgit.checks.claims import claim_words
    from flowgit.continuity.sections import alias_table

    names = [name for name, canonical in alias_table(ctx.cfg.aliases).items() if canonical == label]
    return claim_words(" ".join(names or [label]))


def _said_lines(doc, section) -> frozenset[tuple[str, ...]]:
    """The words of each line a section holds (restyled, a line says the same words)."""
    if doc is None or section is None:
        return frozenset()
    from flowgit.checks.claims import claim_tokens

    lines = doc.lines
    return frozenset(tuple(word for word, _ in claim_tokens(lines[i])) or (lines[i].strip(),)
                     for i in range(section.body_start, section.body_end) if parse_pattern(lines[i]) is None)


@lru_cache(maxsize=1)
def _guidance_words() -> frozenset[str]:
    """The words of the guidance comments the shipped template writes under its headings: a comment
    written with those words (the template's, shortened or put back) says nothing new."""
    from flowgit.checks.claims import claim_words
    from flowgit.continuity.document import COMMENT_RE
    from flowgit.resources import template

    return frozenset(w for line in template("continuity.md").splitlines() if COMMENT_RE.match(line)
                     for w in claim_words(line))


def _is_marker(text: str) -> bool:
    """A line that is one of git's conflict markers (``<<<<<<< ours``, ``=======``, ``>>>>>>> theirs``)."""
    from flowgit.merge.markers import MARKER_RE

    return text[:1] in "<=|>" and MARKER_RE.fullmatch(text.encode("utf-8", "surrogateescape")) is not None


def _zone_shape(doc, section) -> list[tuple[int, str]]:
    """The section as a reader takes its instructions: its heading (with any suffix after ``|``) and each
    non-blank line in order, with its indentation (nesting says which rule a line belongs to) and its text,
    spacing inside the line aside."""
    if section is None:
        return []
    lines = doc.lines
    return [(0, _composed(" ".join(lines[section.heading].split())))] + [
        (len(lines[i]) - len(lines[i].lstrip(" \t")), _composed(" ".join(lines[i].split())))
        for i in range(section.body_start, section.body_end) if lines[i].strip()]


def _composed(text: str) -> str:
    """``text`` with its accents composed (NFC): an editor that saves `é` as `e` and a combining accent has
    changed no word a person wrote."""
    if text.isascii():
        return text
    import unicodedata

    return unicodedata.normalize("NFC", text)


def protected_zone(ctx: CheckContext) -> Iterator[Finding]:
    """Foundation, Partnership and Cross-Domain Discoveries change only with an override."""
    if ctx.old is None:
        return
    labels = {s.label for s in ctx.sections(ctx.old, Semantics.PROTECTED)}
    labels |= {s.label for s in ctx.sections(ctx.new, Semantics.PROTECTED)}
    for label in sorted(labels):
        before, now = ctx.old.find(label), ctx.new.find(label)
        if before is not None and now is not None and ctx.same_body(before, now) \
                and ctx.old.lines[before.heading].split() == ctx.new.lines[now.heading].split():
            continue  # the same heading and lines: nothing lost or gained
        old_shape, new_shape = _zone_shape(ctx.old, before), _zone_shape(ctx.new, now)
        if not any(_is_marker(text) for _, text in new_shape):  # git's conflict markers taken out (each side's
            old_shape = [(i, t) for i, t in old_shape if not _is_marker(t)]  # lines kept) repair a merge
        old_lines, new_lines = Counter(t for _, t in old_shape), Counter(t for _, t in new_shape)
        lost, added = old_lines - new_lines, new_lines - old_lines
        moved = old_shape != new_shape
        if not lost and not added and not moved and (before is None) == (now is None):
            continue
        parts = [] if lost or added else ["kept its lines but moved or re-indented them (what a rule sits "
                                          "under says what it means)"]
        if lost:
            parts.append(f"lost {sum(lost.values())} line(s), e.g. \"{next(iter(lost))[:50]}\"")
        if added:
            parts.append(f"gained {sum(added.values())} line(s), e.g. \"{next(iter(added))[:50]}\"")
        if now is None:
            parts.append("the section is gone")
        yield Finding("G402", "protected-zone", "error", ctx.path, (now.heading + 1) if now else None,
                      f"{label} " + " and ".join(parts) + ": behavioural instructions a person wrote are "
                      "protected",
                      "restore the section; change it only in a deliberate commit with "
                      "FLOWGIT_OVERRIDE=\"<why>\" (recorded as a trailer)")
