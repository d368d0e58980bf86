"""What a pattern line claims, read as a reader reads it (G209, and G404's reading of a Proven line).

A pattern earns 2x and 3x for what it says. The protocol lets a graduation
compress it ("FlowScript-compress": words dropped, markers added) and a typo
may be fixed; but a word the claim did not hold is a claim no cited episode
was recorded for: ``retries multiply load`` with ``never`` written in keeps
its level and its evidence while saying the opposite. A line says things in
more places than its description: words after its category or annotations,
its ``[…]`` notes, a link that is prose rather than names, a category that is
a phrase rather than a label, and a name that turns negative.

Words are compared as a reader reads them: case, stems, spacing, emphasis
and a few filler words aside. Negation is read in every form (``never``,
``n't``, ``!=``, ``¬``, ``❌``, a ``~~strike~~``) and counts both ways: a
compression that drops a ``not`` says the opposite too. Numbers are words as
written (``5``, ``5%``, ``-5`` and ``5.5`` differ; ``five`` is ``5``). Word
order is not read.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Callable, Iterator

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.continuity.patterns import (
    CATEGORY_LABEL_RE, DEFAULT_CATEGORY, DERIVATION_NOTE_RE, Pattern, free_notes, stray_text,
)
from flowgit.continuity.sections import PROVEN
from flowgit.words import stem

# Words that join a claim without making one: a compression may drop them and a rewrite may add them.
FILLER = frozenset("a an the of to in on at as its it this that is are be".split())  # (not `with`: `without`)
# FlowScript's state markers and their field names: a graduation's compression may write them in.
MARKERS = frozenset("decided blocked parking exploring rationale reason since why until".split())
NEGATIONS = frozenset("no not never none nothing nobody neither nor without cannot non nowhere".split())
NOT = "not"  # every negation is read as this one word: its count is what a claim says of it
NEGATING_RE = re.compile(r"[¬❌✗✘✖≠🚫⛔]|!=|!(?=\w)|~~[^~]+~~|n['’]t\b", re.IGNORECASE)
CLAIM_TOKEN_RE = re.compile(r"\d{4}-\d\d-\d\d|(?<![\w-])[-+−]?\d+(?:[.,]\d+)*%?|\d+|[^\W\d_]+")
NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
NAMES_RE = re.compile(r"\s*(?:<->|<-|->)\s*[^\W_][\w.\-/]*(?:\s*,\s*[^\W_][\w.\-/]*)*\s*")


# ---------------------------------------------------------------- reading
def claim_tokens(text: str) -> list[tuple[str, str]]:
    """(what the word is, as written) for each word of ``text`` that makes a claim, negations as ``not``."""
    out = []
    for match in CLAIM_TOKEN_RE.finditer(NEGATING_RE.sub(" ", text).replace("_", " ")):
        low = match.group().lower()
        if low[0].isdigit() or low[0] in "-+−":
            out.append((low.replace("−", "-"), low))
        elif low in NEGATIONS:
            out.append((NOT, low))
        elif len(low) >= 2 and low not in FILLER and low not in MARKERS:
            out.append((NUMBER_WORDS.get(low) or stem(low), low))
    out += [(NOT, m.group()) for m in NEGATING_RE.finditer(text)]
    return out


def claim_words(text: str) -> Counter[str]:
    return Counter(word for word, _ in claim_tokens(text))


def claim_text(pattern: Pattern, demoted: Callable[[str], bool] = lambda name: False) -> str:
    """Everything the pattern's line claims: its description, words outside the grammar's fields, its notes
    and links that say more than names, and a negation in its name. A demotion's note (what happened to the
    claim) and the wrap's derivation note naming a pattern ``demoted`` knows are not claims."""
    notes = [n for n in free_notes(pattern) if not n.lower().startswith("demoted")]
    notes += [m.group() for n in pattern.notes if (m := DERIVATION_NOTE_RE.fullmatch(n)) and not demoted(m["name"])]
    links = [link for link in pattern.links if not NAMES_RE.fullmatch(link)]
    name_negations = [w for w in re.split(r"[_\-./]", pattern.name.lower()) if w in NEGATIONS]
    return " ".join(filter(None, (pattern.text, stray_text(pattern), *notes, *links, *name_negations)))


# ---------------------------------------------------------------- comparing
def new_words(before: str, after: str, folded: frozenset[str] = frozenset()) -> list[str]:
    """What ``after`` claims that ``before`` did not, as written: a word it holds more often than before (a
    re-spelled or abbreviated word, and the words of ``folded``, aside), and a negation gained or lost."""
    old, new = claim_words(before), claim_words(after)
    written = {word: as_written for word, as_written in reversed(claim_tokens(after))}
    dropped = list((old - new).elements())
    out = []
    for word in (new - old).elements():
        if word != NOT and not (word in folded or any(_respelled(d, word) or _abbreviated(d, word)
                                                      for d in dropped)):
            out.append(written.get(word, word))
    if old[NOT] != new[NOT]:
        said_before, said_now = (Counter(w for word, w in claim_tokens(t) if word == NOT) for t in (before, after))
        gained, lost = list((said_now - said_before).elements()), list((said_before - said_now).elements())
        out += gained if old[NOT] < new[NOT] else [f"(without `{lost[0] if lost else 'a negation'}`)"]
    return list(dict.fromkeys(out))


def only_respelled(before: str, after: str) -> bool:
    """Whether ``after`` is ``before`` with typos fixed: the same words in the same order, each the same or
    re-spelled (a Proven claim in place: a word moved, dropped or added is a reworded claim)."""
    old, new = [w for w, _ in claim_tokens(before)], [w for w, _ in claim_tokens(after)]
    return len(old) == len(new) and all(a == b or _respelled(a, b) for a, b in zip(old, new))


def _respelled(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` spelled otherwise: the same first letter, neither a negation nor a number
    (``unsafe`` starts otherwise than ``safe``: it is a new word), and at most two edits apart (one, for
    a word of fewer than five letters)."""
    if a[0] != b[0] or NOT in (a, b) or not a[0].isalpha() or not b[0].isalpha():
        return False
    return _within_edits(a, b, 2 if min(len(a), len(b)) >= 5 else 1)


def _abbreviated(a: str, b: str) -> bool:
    """Whether ``b`` shortens ``a`` (``idem`` for ``idempotency``): four letters or more that ``a`` begins with."""
    return len(b) >= 4 and b != a and a.startswith(b) and NOT not in (a, b) and b[0].isalpha()


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


def relabelled(before: Pattern, now: Pattern, *, in_place: bool) -> bool:
    """Whether the category changed into a claim: to anything but a one-word label, or (for a Proven line in
    place) other than from none or the wrap's default (what a merge does when the other wrap chose one)."""
    was, is_ = before.category.casefold(), now.category.casefold()
    if was == is_:
        return False
    if now.category and not CATEGORY_LABEL_RE.fullmatch(now.category):
        return True
    return in_place and was not in ("", DEFAULT_CATEGORY.casefold())


# ---------------------------------------------------------------- the rule
def demoted_names(ctx: CheckContext) -> Callable[[str], bool]:
    """Whether a name is a pattern either side holds with a demotion note (worked out when first asked)."""
    def ask(name: str) -> bool:
        found = ctx.memo.get("claims.demoted")
        if found is None:
            from flowgit.continuity.identity import name_key
            from flowgit.continuity.patterns import document_patterns

            found = ctx.memo["claims.demoted"] = {
                name_key(at.pattern.name) for doc in (ctx.old, ctx.new) if doc is not None
                for at in document_patterns(doc) if any(n.lower().startswith("demoted") for n in at.pattern.notes)}
        from flowgit.continuity.identity import name_key

        return name_key(name) in found
    return ask


def raised_claims_keep_their_words(ctx: CheckContext) -> Iterator[Finding]:
    """G209 for a pattern at 2x or more (or entering or leaving Proven) whose claim gains a word, or loses a
    negation, while it keeps a raised level: lowered to 1x, a pattern may say anything anew. Raised
    patterns removed in the same change whose evidence the line cites lend it their words (facts folded
    into one). A Proven line staying in Proven is G404's."""
    if ctx.old is None:
        return
    changes = ctx.old_pattern_changes
    demoted = demoted_names(ctx)
    gone = [before for _, before, now in changes if now is None and before.pattern.level >= 2]
    for _, before, now in changes:
        if now is None or now.section == PROVEN and before.section == PROVEN:
            continue  # gone (other rules), or a Proven claim staying Proven (G404)
        raised = before.pattern.level >= 2 or before.section == PROVEN
        if not raised or (now.pattern.level < 2 and now.section != PROVEN):
            continue  # a 1x claim has no evidence to keep faith with; lowered to 1x, it starts again
        was, said = claim_text(before.pattern, demoted), claim_text(now.pattern, demoted)
        added = new_words(was, said, _folded_into(now, gone, demoted)) if was != said else []
        if relabelled(before.pattern, now.pattern, in_place=False):
            added.append(f"({now.pattern.category})")
        if added:
            level = "Proven" if now.section == PROVEN else f"{now.pattern.level}x"
            yield Finding("G209", "claim-kept", "error", ctx.path, now.lineno,
                          f"`{now.pattern.name}` says {', '.join(f'`{w}`' for w in added)} at {level}, which it did "
                          "not say before: its evidence was recorded for the old words",
                          "keep the words its evidence speaks to (dropping words, or FlowScript markers, is "
                          "fine; a negation is never dropped); to claim something new, lower it to 1x as you "
                          "reword it, or add a new 1x pattern")


def _folded_into(now, gone, demoted) -> frozenset[str]:
    """The claim words of raised patterns this change removes whose evidence the line now cites: facts
    folded into one pattern bring their evidenced words with them (never a negation: it is counted)."""
    cited = set(now.pattern.evidence)
    return frozenset(w for at in gone if cited.intersection(at.pattern.evidence)
                     for w in claim_words(claim_text(at.pattern, demoted)) if w != NOT)
