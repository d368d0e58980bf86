"""A raised pattern says what its evidence was recorded for (G209).

A pattern earns 2x and 3x for what its description says. The protocol lets a
graduation compress it ("FlowScript-compress": words dropped, markers added),
and a typo may be fixed; but a word the description did not hold is a claim
no cited episode was recorded for: ``retries multiply load`` with ``never``
written in keeps its level and its evidence while saying the opposite, at 2x
in Developing or on its way into Proven. (A Proven claim reworded in place is
G404's.) The words are compared as a reader reads them: case, stems, spacing,
punctuation, emphasis and a few filler words aside; negations and numbers are
words like any other.
"""

from __future__ import annotations

import re
from typing import Iterator

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.continuity.patterns import CATEGORY_LABEL_RE, Pattern, free_notes, stray_text
from flowgit.continuity.sections import PROVEN
from flowgit.words import TOKEN_RE, stem

# Words that join a claim without making one: a compression may drop them and a rewrite may add them.
FILLER = frozenset("a an the of to in on at as its it this that is are be".split())  # (not `with`: `without`)
# FlowScript's state markers and their field names: a graduation's compression may write them in.
MARKERS = frozenset("decided blocked parking exploring rationale reason since why until".split())
# A word whose re-spelling is never a typo fix: each turns a claim around.
NEGATIONS = frozenset("no not never none nothing nobody neither nor without cannot non nowhere".split())
NOT_CONTRACTION_RE = re.compile(r"n['’]t\b", re.IGNORECASE)


def claim_words(text: str) -> dict[str, str]:
    """{stem (a number as written): the word as first written} of what the description claims."""
    out: dict[str, str] = {}
    for token in TOKEN_RE.findall(text.replace("_", " ")):
        low = token.lower()
        if (len(low) < 2 and not low.isdigit()) or low in FILLER or low in MARKERS:
            continue
        out.setdefault(low if low.isdigit() else stem(low), low)
    if NOT_CONTRACTION_RE.search(text):
        out.setdefault("not", "n't")
    return out


def new_words(before: str, after: str, folded: frozenset[str] = frozenset()) -> list[str]:
    """The words ``after`` claims that ``before`` did not (a re-spelled word, a typo fixed, and the words of
    ``folded``, aside), as written."""
    old, new = claim_words(before), claim_words(after)
    dropped = [w for w in old if w not in new]
    return [written for w, written in new.items()
            if w not in old and w not in folded and not any(_respelled(d, w) for d in dropped)]


def _respelled(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` spelled otherwise: the same first letter, neither a negation nor a number
    (``unsafe`` starts otherwise than ``safe``: it is a new word), and at most two edits apart (one, for
    a word of fewer than five letters)."""
    if a[0] != b[0] or a in NEGATIONS or b in NEGATIONS or a.isdigit() or b.isdigit():
        return False
    return _within_edits(a, b, 2 if min(len(a), len(b)) >= 5 else 1)


def _within_edits(a: str, b: str, most: int) -> bool:
    if abs(len(a) - len(b)) > most:
        return False
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > most:
            return False
        previous = current
    return previous[-1] <= most


def raised_claims_keep_their_words(ctx: CheckContext) -> Iterator[Finding]:
    """G209 for a pattern at 2x or more, or leaving Proven, whose description gains a word while it keeps a
    raised level (in Developing, or entering Proven): lowered to 1x, a pattern may say anything anew. Raised
    patterns removed in the same change whose evidence the line cites lend it their words (facts folded
    into one)."""
    if ctx.old is None:
        return
    changes = ctx.old_pattern_changes
    gone = [before for _, before, now in changes if now is None and before.pattern.level >= 2]
    for _, before, now in changes:
        if now is None or now.section == PROVEN and before.section == PROVEN:
            continue  # gone (other rules), or a Proven claim staying Proven (G404)
        raised = before.pattern.level >= 2 or before.section == PROVEN
        if not raised or (now.pattern.level < 2 and now.section != PROVEN):
            continue  # a 1x claim has no evidence to keep faith with; lowered to 1x, it starts again
        was, said = claim_text(before.pattern), claim_text(now.pattern)
        if was == said and not _relabelled(before.pattern, now.pattern):
            continue
        added = new_words(was, said, _folded_into(now, gone))
        if not added and _relabelled(before.pattern, now.pattern):
            added = [now.pattern.category]
        if added:
            level = "Proven" if now.section == PROVEN else f"{now.pattern.level}x"
            yield Finding("G209", "claim-kept", "error", ctx.path, now.lineno,
                          f"`{now.pattern.name}` says {', '.join(f'`{w}`' for w in added)} at {level}, which its "
                          "description did not: its evidence was recorded for the old words",
                          "keep the words its evidence speaks to (dropping words, or FlowScript markers, is "
                          "fine); to claim something new, lower it to 1x as you reword it, or add a new 1x "
                          "pattern")


def claim_text(pattern: Pattern) -> str:
    """What a pattern line claims: its description, the words it holds outside the grammar's fields, and its
    notes (the wrap's derivation notes and a demotion's note aside: they say what happened to the claim)."""
    notes = [n for n in free_notes(pattern) if not n.lower().startswith("demoted")]
    return " ".join(filter(None, (pattern.text, stray_text(pattern), *notes)))


def _relabelled(before: Pattern, now: Pattern) -> bool:
    """Whether the category changed to one that is not a plain label (up to three plain words): a category
    is free text, read with the claim."""
    return before.category != now.category and bool(now.category) and \
        not CATEGORY_LABEL_RE.fullmatch(now.category)


def _folded_into(now, gone) -> frozenset[str]:
    """The claim words of raised patterns this change removes whose evidence the line now cites: facts
    folded into one pattern bring their evidenced words with them."""
    cited = set(now.pattern.evidence)
    return frozenset(w for at in gone if cited.intersection(at.pattern.evidence)
                     for w in claim_words(claim_text(at.pattern)))
