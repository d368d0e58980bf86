"""Gate rules for graduations: grounding, evidence that holds, reuse, level jumps."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterator

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.continuity.patterns import PatternAt, evidence_marks
from flowgit.continuity.sections import PROVEN
from flowgit.evidence import assess, demoted_on, demoted_twin, meaningful_words, post_demotion


def _needs_evidence(at: PatternAt) -> bool:
    return at.pattern.level >= 2 or at.section == PROVEN


def ungrounded(ctx: CheckContext) -> Iterator[Finding]:
    for at in ctx.changed_patterns:
        if _needs_evidence(at) and not at.pattern.evidence:
            where = "in Proven" if at.section == PROVEN else f"at {at.pattern.level}x"
            yield Finding("G101", "ungrounded-graduation", "error", ctx.path, at.lineno,
                          f"`{at.pattern.name}` is {where} without [evidence: …]",
                          "record the episodes (`flowgit episode add`) and cite them: "
                          "`[evidence: ep-…, ep-…]`, or keep the pattern at 1x")


def _claim_changed(ctx: CheckContext, at: PatternAt) -> bool:
    """Whether the staged pattern keeps HEAD's name but its description says something else now.

    The name alone then no longer ties the evidence to what the pattern
    claims, and a claim can drift a little per commit until it says something
    its evidence never saw: whenever the description changes, the evidence is
    judged against the new description only.
    """
    before = ctx.old_for(at)
    return before is not None and meaningful_words(before.pattern.text) != meaningful_words(at.pattern.text)


def _batch(ctx: CheckContext) -> frozenset[str]:
    """The episodes this change appends, which count as one source; none in the memory's first commit.

    A memory's first commit (adopted with ``flowgit init --commit``, or the
    first commit of all) brings a store of episodes recorded over many
    sessions before git saw them: they count by session and agent, as the
    protocol says, not as one batch. Once HEAD holds the memory (the
    continuity file or the store), a store committed later only appends to
    what it held (nothing): a commit that adds the store after the file, or
    brings a deleted one back, cannot mint sessions either.
    """
    return ctx.appended_ids if ctx.old_store_entry is not None or ctx.old is not None else frozenset()


def evidence_holds(ctx: CheckContext) -> Iterator[Finding]:
    for at in ctx.changed_patterns:
        p = at.pattern
        if not _needs_evidence(at) or not p.evidence:
            continue
        if marks := evidence_marks(p.render()):
            proven = at.section == PROVEN
            yield Finding("G401" if proven else "G103", "protected-evidence" if proven else "evidence", "error",
                          ctx.path, at.lineno,
                          f"`{p.name}`'s evidence annotation holds `{marks[:12]}` besides its ids: a reader reads "
                          "an id struck through or marked in doubt as withdrawn, while every rule counts it",
                          "write the ids alone, separated by commas; evidence that no longer holds is answered by "
                          "demoting the pattern with a reason (or lowering its level), not by marking the id")
        found = ctx.episodes(p.evidence)
        swapped = _claim_changed(ctx, at)
        verdict = assess(p.name, p.text, p.level, p.evidence, found, ctx.cfg.thresholds,
                         in_proven=at.section == PROVEN, now=ctx.when, batch=_batch(ctx),
                         weight=ctx.word_weight, claim_only=swapped)
        if verdict.forged:
            yield Finding("G107", "evidence", "error", ctx.path, at.lineno,
                          f"`{p.name}` cites episode(s) whose id is not the hash of their content (forged or "
                          f"edited): {', '.join(verdict.forged)}",
                          "write episodes with `flowgit episode add`, which derives the id, and cite those ids")
        if verdict.unknown:
            starts = _whole_ids_of(ctx, verdict.unknown)
            yield Finding("G102", "evidence", "error", ctx.path, at.lineno,
                          f"`{p.name}` cites episode(s) not in the staged store {ctx.store_path}: "
                          f"{', '.join(verdict.unknown)}" + (
                              f" ({'; '.join(f'`{s}` is the start of `{w}`' for s, w in starts.items())}: the "
                              "file cites whole ids; a plan may name a start, and the wrap writes the id whole)"
                              if starts else ""),
                          "write each id whole" if starts else
                          f"stage the store (`git add {ctx.store_path}`) or fix the ids")
        if verdict.unrelated and swapped:
            yield Finding("G104", "evidence", "error", ctx.path, at.lineno,
                          f"`{p.name}`'s description changed, and its cited episode(s) are not about what it "
                          f"says now (the name alone does not tie them to it): "
                          f"{', '.join(verdict.unrelated)}",
                          "a new claim is a new pattern: add it at 1x (under a new name), or cite episodes "
                          "about the new wording")
        elif verdict.unrelated:
            yield Finding("G104", "evidence", "error", ctx.path, at.lineno,
                          f"`{p.name}` cites episode(s) that are not about it (too little shared meaning; everyday "
                          "words weigh little): "
                          f"{', '.join(verdict.unrelated)}",
                          "cite episodes that record this pattern firing")
        if not verdict.enough:
            yield Finding("G103", "evidence", "error", ctx.path, at.lineno,
                          f"`{p.name}`: {verdict.problems()[-1]}",
                          f"cite more independent episodes, or keep `{p.name}` at "
                          f"{max(1, verdict.level - 1)}x")


def _whole_ids_of(ctx: CheckContext, unknown) -> dict[str, str]:
    """{cited: the one stored id it is the start of}, for a refusal to name (a person copies a short id from a
    listing; only the wrap's plan resolves one)."""
    from flowgit.episodes import whole_ids
    from flowgit.errors import FlowgitError

    try:
        return whole_ids(ctx.new_store, unknown)
    except FlowgitError:  # the start of several ids: "fix the ids" says enough
        return {}


def evidence_reuse(ctx: CheckContext) -> Iterator[Finding]:
    changed = {at.pattern.name for at in ctx.changed_patterns}
    # Only an episode cited by a pattern of a changed name can be reported, so only those are counted.
    watched = {ident for at in ctx.all_new_patterns if at.pattern.name in changed for ident in at.pattern.evidence}
    if not watched:
        return
    cited_by: dict[str, list[PatternAt]] = defaultdict(list)
    for at in ctx.all_new_patterns:
        evidence = at.pattern.evidence
        if evidence and not watched.isdisjoint(evidence):
            for ident in set(evidence):
                if ident in watched:
                    cited_by[ident].append(at)
    limit = ctx.cfg.thresholds.evidence_reuse_warn
    for ident, users in cited_by.items():
        if len(users) >= limit and any(u.pattern.name in changed for u in users):
            names = ", ".join(u.pattern.name for u in users)
            yield Finding("G105", "evidence-reuse", "warning", ctx.path, users[0].lineno,
                          f"episode {ident} is cited by {len(users)} patterns ({names})",
                          "one fact rarely proves many patterns: cite the episodes specific to each")


def _effective_level(at: PatternAt) -> int:
    """The level a pattern stands at: anything in Proven stands at 3x, whatever its line says."""
    return max(at.pattern.level, 3) if at.section == PROVEN else at.pattern.level


MAX_LEVEL = 3  # 1x -> 2x -> 3x: graduation is the last step


def level_jumps(ctx: CheckContext) -> Iterator[Finding]:
    for at in ctx.changed_patterns:
        if at.pattern.level > MAX_LEVEL:
            yield Finding("G203", "level-jump", "error", ctx.path, at.lineno,
                          f"`{at.pattern.name}` is written at {at.pattern.level}x: the levels are 1x, 2x and 3x "
                          "(a level above 3x claims more evidence than any graduation asks, and no rule reads it)",
                          "write the level the evidence carries: 1x, 2x, or 3x in Proven Knowledge")
        before = ctx.old_for(at)
        if before is None:
            continue
        old, new = before.pattern, at.pattern
        was, now = _effective_level(before), _effective_level(at)
        if now >= MAX_LEVEL > was and at.section != PROVEN:
            yield _graduated_in_place(ctx.path, at)
        if now - was >= 2:
            where = f"{now}x" if at.section != PROVEN or new.level >= 3 else f"Proven (written {new.level}x)"
            yield Finding("G201", "level-jump", "error", ctx.path, at.lineno,
                          f"`{new.name}` jumps from {was}x to {where} in one commit",
                          "promote one level per wrap: 1x -> 2x now, 3x when new independent evidence arrives")
        elif (now > was or (at.section == PROVEN and before.section != PROVEN)) and old.notes \
                and demoted_on(old) is not None:  # the more telling verdict for a demoted pattern (a merge's loss)
            yield from _after_demotion(ctx, at, before)
        elif now > was and new.evidence and not set(new.evidence) - set(old.evidence):
            yield Finding("G202", "level-jump", "error", ctx.path, at.lineno,
                          f"`{new.name}` goes {was}x -> {now}x without any new evidence",
                          "cite the new episodes that justify the promotion")
        elif now > was and (twin := _demoted_twin(ctx, at)) is not None:
            yield from _after_demotion(ctx, at, twin, twin_of=True)


def _graduated_in_place(path: str, at: PatternAt) -> Finding:
    """G210: a pattern raised to 3x where it stands, outside Proven. 3x *is* graduation (Step 4: extracted
    from Developing, placed in Proven), so the line claims a graduation the file does not show: every reader
    of Proven, and every rule that guards Proven claims, would pass it by."""
    name = at.pattern.name
    return Finding("G210", "level-jump", "error", path, at.lineno,
                   f"`{name}` reaches 3x in {at.section}: 3x is graduation, and a graduated pattern stands "
                   "in Proven Knowledge",
                   f"move it to Proven Knowledge with a `Graduated: {name} [evidence: …]` trailer (`flowgit wrap` "
                   "with a `graduate` operation does both), or keep it at 2x until it graduates")


def _after_demotion(ctx: CheckContext, at: PatternAt, before: PatternAt, twin_of: bool = False) -> Iterator[Finding]:
    """G208 for a pattern HEAD has demoted: promoted again only on evidence recorded after the demotion,
    never on the episode that contradicted it (Step 5: its earlier chain did not survive scrutiny).
    ``twin_of``: ``before`` is a demoted pattern this one would be by the identity rule (the same claim, or
    all its evidence, under another name), which the demotion binds as well."""
    problems = post_demotion(before.pattern, at.pattern.evidence, ctx.episodes(at.pattern.evidence),
                             level=at.pattern.level, thresholds=ctx.cfg.thresholds, in_proven=at.section == PROVEN,
                             reference=ctx.when.date() if ctx.when else None, now=ctx.when, batch=_batch(ctx),
                             weight=ctx.word_weight)
    if problems:
        message = problems[0] if not twin_of else (f"`{at.pattern.name}` is the claim of `{before.pattern.name}` "
                                                    f"(the same description or evidence) — {problems[0]}")
        yield Finding("G208", "level-jump", "error", ctx.path, at.lineno, message,
                      "record what happened since the demotion (`flowgit episode add`) and cite that")


def _demoted_twin(ctx: CheckContext, at: PatternAt) -> PatternAt | None:
    """:func:`~flowgit.evidence.demoted_twin` of ``at`` in the staged file and in HEAD's, so a demoted line
    removed in the very commit that folds its words and chain into another pattern still binds it."""
    from flowgit.continuity.patterns import document_patterns

    held = document_patterns(ctx.old) if ctx.old is not None else ()
    return demoted_twin(at.pattern, (*ctx.all_new_patterns, *held))
