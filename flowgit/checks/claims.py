"""What a pattern line claims, read as a reader reads it (G209, and G404's reading of a Proven line).

A pattern earns 2x and 3x for what it says. The protocol lets a graduation
compress it ("FlowScript-compress": words dropped, markers added) and a typo
may be fixed; but a word the claim did not hold is a claim no cited episode
was recorded for: ``retries multiply load`` with ``never`` written in keeps
its level and its evidence while saying the opposite. A line says things in
more places than its description: words after its category or annotations,
its ``[…]`` notes, a link that is prose rather than names, a category that is
a phrase rather than a label, and a name that turns negative.

Words are compared as a reader reads them (:func:`as_read`): entities
decoded, tags and comments dropped (and a tag other than plain formatting read
as a word of its own, as an agent given the raw line reads it), a link as its
text, an image or autolink
as the words of its address; case, stems, spacing, emphasis and a few filler
words aside. Negation is read in every form (``never``, ``n't``, ``avoid``,
``!=``, ``¬``, ``👎``, a ``~~strike~~``) and counts both ways: a compression
that drops a ``not`` says the opposite too. Doubt (``?``, a leading ``~``,
``[exploring]``) and symbols are words of their own. Numbers are read as
written, with their unit (``5``, ``5%``, ``5s`` and ``5.5`` differ; ``five``
is ``5``). Word order is read only for a Proven claim in place
(:func:`only_respelled`).
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Callable, Iterator

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.continuity.patterns import (
    CATEGORY_LABEL_RE, DEFAULT_CATEGORY, Pattern, derivation_note_match, free_notes, stray_text,
)
from flowgit.continuity.sections import PROVEN
from flowgit.words import stem


class LazyPattern:
    """A regular expression compiled when first used: the pre-commit hook imports this module on every
    commit, and most commits read no claim (compiling these at import costs about two milliseconds)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)
        self._compiled: re.Pattern | None = None

    def __getattr__(self, name: str):
        if self._compiled is None:
            self._compiled = re.compile(*self._source)
        return getattr(self._compiled, name)


# Words that join a claim without making one: a compression may drop them and a rewrite may add them.
FILLER = frozenset("a an the of to in on at as its it this that is are be do does did".split())  # (not `with`)
# FlowScript's state markers and their field names: a graduation's compression may write them in.
MARKERS = frozenset("decided rationale reason since why until thought action completed".split())
# Words that turn a claim around (by the word or its stem): each is read as `not`, and counted.
NEGATIONS = frozenset((
    "no not never none nothing nobody neither nor without cannot non nowhere avoid prevent disable stop forbid "
    "refuse skip unless except instead rarely seldom hardly barely zero lack missing deny reject ban").split())
NOT = "not"  # every negation is read as this one word: its count is what a claim says of it
# Labels that turn a claim around when its category says them.
NEGATING_LABELS = frozenset(("anti antipattern disproven refuted debunked false wrong myth invalid deprecated "
                             "obsolete harmful unsafe broken bad dont never not none disabled off unlimited "
                             "unproven unverified doubtful questionable tentative suspect retracted revoked "
                             "superseded review disproved incorrect untrue withdrawn falsified discredited erroneous "
                             "mistaken inaccurate outdated overturned contradicted rejected dubious misleading flawed "
                             "bogus fake fallacy").split())
# FlowScript's and a writer's marks of doubt: `?`, a leading `~`, `[exploring]`, `[parking …]`, `[blocked …]`.
UNSURE = "?"
UNSURE_RE = LazyPattern(r"\?|(?<![~\w])~(?=\w)|\[(?:exploring|parking|blocked)\b")
NEGATING_LABEL_PREFIXES = ("no", "non", "un", "dis", "anti")
NEGATING_RE = LazyPattern(r"[¬❌✗✘✖≠🚫⛔👎🙅🛑]|!=|!(?=\w)")
STRUCK_RE = LazyPattern(r"~~[^~]+~~|(?<![~\w])~(?![~\s])[^~]*?(?<!\s)~(?![~\w])"
                       r"|<(s|del|strike)\b[^>]*>.*?</\1\s*>|(?:\w?[\u0335\u0336\u0338])+\w?", re.IGNORECASE)
HIDDEN_RE = LazyPattern(r"<!--.*?-->|</?[A-Za-z][^<>]*>")  # a comment, a tag: a person reading it rendered
# sees neither. But an agent is given the raw line: a tag other than plain formatting (a made-up `<never>`)
# reads as words to it, and one with attributes may hide or strike for the person (`<span hidden>`,
# `<template>`, `style="display:none"`, `line-through`). Each such tag is a word of the claim of its own
# (:func:`claim_tokens`), so writing one in says something new, as both readers read it.
PLAIN_TAGS = frozenset("b strong i em u ins mark code kbd samp var sup sub small big tt cite q span br wbr "
                       "s del strike img image".split())  # (strikes and images are read elsewhere)
OPEN_TAG_RE = LazyPattern(r"<([A-Za-z][\w-]*)(\s[^<>]*?)?\s*/?>")
SHOWN_TAG_RE = LazyPattern(r"<(?:img|image)\b([^<>]*)>|<((?:https?|mailto|ftp):[^<>\s]*)>", re.IGNORECASE)
IMAGE_RE = LazyPattern(r"!\[([^\]]*)\]\(([^)\s]*)[^)]*\)")  # an image shows what its address names
LINK_RE = LazyPattern(r"\[([^\]]*)\]\([^)]*\)")  # a link reads as its text
CONTRACTION_RE = LazyPattern(r"\b(\w+?)n['’]t\b|\b(do|does|did|is|are|was|were|has|have|had|should|would|could|"
                            r"must|need|ca|wo)nt\b", re.IGNORECASE)
CAMEL_RE = LazyPattern(r"(?<=[a-z])(?=[A-Z])")
# ASCII operators a reader reads as words: arrows (FlowScript's `->` leads to, `<-` derives from), comparisons
# and logic. (`!=` is a negation, read above; `><` is FlowScript's tension mark, which a compression may add.)
ASCII_OPERATORS = r"<->|<=>|->|<-|=>|<=|>=|==|&&|\|\||(?<![<>=!-])[<>](?![<>=-])"
OPERATOR_WORDS = {"&&": "and", "||": "or", "==": "equals"}  # read as the word they are written for
# Units written apart from their number read as written together (`5 MB` is `5MB`, as `90 %` is `90%`).
UNIT_APART_RE = LazyPattern(r"(\d)\s+((?:[kKMGTP]i?B|[kMGT]?bit|bits|bytes?|[mµμun]s|sec|min|hrs?|[kKMGT]|Hz|kHz|MHz|"
                            r"GHz|[kKMGT]?bps|[kKMGT]b|rps|qps|rpm|px|s|h|d|x)\b)")
# A unit spelled out after a number reads as its symbol (`5 minutes` is `5min`, `ten times` is `10x`).
UNIT_WORDS = {"times": "x", "minutes": "min", "minute": "min", "mins": "min", "seconds": "s", "second": "s",
              "secs": "s", "milliseconds": "ms", "millisecond": "ms", "hours": "h", "hour": "h", "hrs": "h",
              "days": "d", "day": "d", "kilobytes": "kB", "kilobyte": "kB", "megabytes": "MB", "megabyte": "MB",
              "gigabytes": "GB", "gigabyte": "GB", "percent": "%", "per cent": "%"}
UNIT_WORD_RE = LazyPattern(r"\b(\d+|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|"
                           r"thirty|forty|fifty|sixty|hundred|thousand)\s*(" + "|".join(
                               sorted(UNIT_WORDS, key=len, reverse=True)) + r")\b", re.IGNORECASE)
# What a writer says in words and a compression in a mark, read as the mark on both sides: a bound and a
# direction of cause are claims either way (`more than three` is `> 3`, `leads to` is `->`).
CLAIM_PHRASES = (
    (r"\b(?:no|not|never)\s+(?:more|greater|higher|larger|bigger|longer)\s+than\b|\bat\s+most\b|\bup\s+to\b", " <= "),
    (r"\b(?:no|not|never)\s+(?:fewer|less|lower|smaller|shorter)\s+than\b|\bat\s+least\b", " >= "),
    (r"\b(?:more|greater|higher|larger|bigger|longer)\s+than\b", " > "),
    (r"\b(?:fewer|less|lower|smaller|shorter)\s+than\b", " < "),
    (r"\b(?:leads?|led)\s+to\b|\bresults?\s+in\b|\bcauses\b|\btriggers\b|\bso\s+that\b|\btherefore\b|"
     r"\bhence\b|[→⟶⇒⟹]", " -> "),
    (r"\bbecause(?:\s+of)?\b|\bcaused\s+by\b|\bdue\s+to\b|\bderives?\s+from\b|\bresults?\s+from\b|[←⟵⇐⟸]", " <- "),
    (r"[↔⇔⟷⟺]", " <-> "), (r"[≥⩾]", " >= "), (r"[≤⩽]", " <= "),
)
ABBREVIATION_RE = LazyPattern(r"\b(?:e\.g|i\.e|etc|cf|viz)\.", re.IGNORECASE)  # (no letters of a claim)
ARTICLE_RE = LazyPattern(r"(?:^|[.:;!?]\s+)A(?= [a-z])")  # a sentence's `A` before a word: the article
CLAIM_PHRASES_RE = LazyPattern("|".join(f"({pattern})" for pattern, _ in CLAIM_PHRASES), re.IGNORECASE)
SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
POWER_RE = LazyPattern(r"(?<=\w)[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")  # `10⁶` is a million, not the `106` NFKC would make of it
CLAIM_TOKEN_RE = LazyPattern(r"\d{4}-\d\d-\d\d|\d+\^[-+]?\d+|" + ASCII_OPERATORS +
                              r"|(?<![\w-])[-+−]?\d+(?:[.,]\d+)*(?:%|[^\W\d_]+)?|\d+[^\W\d_]*"
                              r"|[^\W\d_]+|[^\w\s\x00-\x7f¬❌✗✘✖≠🚫⛔👎🙅🛑\u2013\u2014\u2018\u2019\u201c\u201d\u2026·•"
                              r"←→↔⇐⇒⇔↑↓\ufe00-\ufe0f]")
ROMAN_RE = LazyPattern(r"m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})")
_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
NUMBER_WORDS = {**{w: str(i) for i, w in enumerate(_UNITS)}, **{w: str(20 + 10 * i) for i, w in enumerate(_TENS)},
                "hundred": "100", "thousand": "1000", "million": "1000000", "billion": "1000000000",
                "first": "1st", "second": "2nd", "third": "3rd", "fourth": "4th", "fifth": "5th", "sixth": "6th",
                "seventh": "7th", "eighth": "8th", "ninth": "9th", "tenth": "10th", "half": "1/2", "once": "1x",
                "twice": "2x", "dozen": "12"}
NAMES_RE = LazyPattern(r"\s*(?:<->|<-|->|[←→↔⟵⟶⟷])\s*[^\W_][\w.\-/]*(?:\s*,\s*[^\W_][\w.\-/]*)*\s*")


# ---------------------------------------------------------------- reading
def as_read(text: str) -> str:
    """``text`` as a reader sees it: entities decoded, comments and tags gone, links as their text, struck
    words as one negation, contractions and ``w/o`` spelled out, invisible characters dropped."""
    import html
    import unicodedata

    text = html.unescape(text)
    if not text.isascii():
        text = POWER_RE.sub(lambda m: "^" + m.group().translate(SUPERSCRIPTS), text)
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    text = STRUCK_RE.sub(" ¬ ", text)
    text = SHOWN_TAG_RE.sub(lambda m: f" {_shown(m[1] or m[2])} ", text)  # an image or an autolink is seen
    text = IMAGE_RE.sub(lambda m: f" {m[1]} {_shown(m[2])} ", text)
    text = LINK_RE.sub(r" \1 ", HIDDEN_RE.sub(" ", text))
    text = ABBREVIATION_RE.sub(" ", CLAIM_PHRASES_RE.sub(_as_mark, text))
    text = UNIT_WORD_RE.sub(lambda m: NUMBER_WORDS.get(m[1].lower(), m[1]) + UNIT_WORDS[m[2].lower()], text)
    text = UNIT_APART_RE.sub(r"\1\2", re.sub(r"(\d)\s+%", r"\1%", text))
    text = re.sub(r"\bw/o\b", " without ", re.sub(r"\bw/(?=\s)", " with ", text, flags=re.I), flags=re.I)
    text = re.sub(r"\bcannot\b", "can not", text, flags=re.I)
    return CONTRACTION_RE.sub(lambda m: f" {_uncontracted(m[1] or m[2])} not ", text)


def _as_mark(found: re.Match) -> str:
    """The mark a phrase of :data:`CLAIM_PHRASES` reads as."""
    return CLAIM_PHRASES[found.lastindex - 1][1]


def _shown(address: str) -> str:
    """The words an image's or a link's address shows a reader (a badge reads `status disproven`)."""
    return re.sub(r"[^\w]+", " ", re.sub(r"^\w+://[^/]*", "", address))


def _uncontracted(stem_: str) -> str:
    return {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}.get(stem_.lower(), stem_)


@lru_cache(maxsize=1 << 13)
def claim_tokens(text: str) -> tuple[tuple[str, str], ...]:
    """(what the word is, as written) for each word of ``text`` that makes a claim, as a reader reads it:
    every negation as ``not``, numbers as written (a number word as its digits, a roman numeral marked).
    Remembered by text: a history walk meets the same lines in thousands of versions."""
    out = []
    read = as_read(text)
    read = ARTICLE_RE.sub(lambda m: m.group()[:-1] + "a", read) if "A " in read else read
    for match in CLAIM_TOKEN_RE.finditer(CAMEL_RE.sub(" ", NEGATING_RE.sub(" ", read)).replace("_", " ")):
        written = match.group()
        low = written.lower()
        if low[0].isdigit() or low[0] in "-+−":  # a number keeps its unit's case: `5MB` is not `5Mb`
            out.append((written.replace("−", "-"), written))
        elif low in NEGATIONS or stem(low) in NEGATIONS:
            out.append((NOT, low))
        elif low in NUMBER_WORDS:
            out.append((NUMBER_WORDS[low], low))
        elif len(low) >= 2 and ROMAN_RE.fullmatch(low) and len(low) <= 6 and match.group().isupper():
            out.append(("#" + low, low))
        elif low in OPERATOR_WORDS:
            out.append((OPERATOR_WORDS[low], low))
        elif not low[0].isalnum():
            out.append((low, low))  # a symbol a reader reads (👍, ⚠, †): a word of its own
        elif len(low) == 1 and written != "a":  # a letter names something (replica `B`, plan `A`)
            out.append((low, written))
        elif len(low) >= 2 and low not in FILLER and low not in MARKERS:
            out.append((stem(low), low))
    out += [(NOT, m.group()) for m in NEGATING_RE.finditer(read)]
    out += [(UNSURE, m.group()) for m in UNSURE_RE.finditer(read)]
    if "<" in text:
        out += _tag_tokens(text)
    return tuple(out)


def _tag_tokens(text: str) -> list[tuple[str, str]]:
    """A word for each tag that is not plain formatting (see :data:`HIDDEN_RE`): ``<never>``, ``<span
    hidden>``, ``<b style="…">``, read as the tag's name and attributes."""
    out = []
    for match in OPEN_TAG_RE.finditer(text):
        name, attributes = match[1].lower(), (match[2] or "").strip()
        if name in PLAIN_TAGS and not attributes:
            continue
        if name in ("img", "image") or match.group().startswith(("<http", "<mailto", "<ftp")):
            continue  # an image or an autolink is read as the words of its address
        out.append(("<" + " ".join([name, *re.findall(r"\w+", attributes.lower())]) + ">", match.group()))
    return out


def claim_words(text: str) -> Counter[str]:
    return Counter(word for word, _ in claim_tokens(text))


def claim_text(pattern: Pattern, demoted: Callable[[str], bool] = lambda name: False,
               named: Callable[[str], bool] = lambda name: False) -> str:
    """Everything the pattern's line claims besides its name: its description, words outside the grammar's
    fields, its notes and links that say more than names. A demotion's note (what happened to the claim)
    and the wrap's derivation note naming a pattern ``demoted`` knows are not claims; a link is only names
    when each one is a pattern's (``named``): `[-> never-cap-retries]` naming none is a sentence."""
    notes = [n for n in free_notes(pattern) if not n.lower().startswith("demoted")  # (`[→ name]`: a link too)
             and not (NAMES_RE.fullmatch(n) and all(map(named, _linked(n))))]
    notes += [m.group() for n in pattern.notes if (m := derivation_note_match(n))
              and not (demoted(m["name"]) and _derives_from(pattern, m["name"]))]  # (the wrap writes it only there)
    links = [link for link in pattern.links if not (NAMES_RE.fullmatch(link) and all(map(named, _linked(link))))]
    return " ".join(filter(None, (pattern.text, stray_text(pattern), *notes, *links)))


def _derives_from(pattern: Pattern, name: str) -> bool:
    """Whether the pattern's own links derive it from ``name`` (by identity)."""
    from flowgit.continuity.derivation import derives_from
    from flowgit.continuity.identity import name_key

    return name_key(name) in {name_key(n) for n in derives_from(pattern)}


def _linked(link: str) -> list[str]:
    """The names a link of names (`-> a, b`) names."""
    from flowgit.continuity.derivation import link_names

    return link_names(link)[1]


def _name_read(name: str) -> str:
    return re.sub(r"[_\-./]", " ", CAMEL_RE.sub(" ", name))


# ---------------------------------------------------------------- comparing
def new_words(before: str, after: str, folded: Counter[str] | None = None,
              known: Callable[[str], bool] | None = None) -> list[str]:
    """What ``after`` claims that ``before`` did not, as written: a word (a negation too) it holds more often
    than ``before`` and ``folded`` together, unless it re-spells or abbreviates a word ``before`` dropped
    (``known``: words that are no typo, see :func:`_typo_of`). A mark written for words (``->`` for
    `leads to`, ``>`` for `more than`) is those words (:data:`CLAIM_PHRASES`), so it is no new claim."""
    old_tokens, new_tokens = claim_tokens(before), claim_tokens(after)
    old, new = Counter(w for w, _ in old_tokens), Counter(w for w, _ in new_tokens)
    gained = new - (old + (folded or Counter()))
    dropped = [(word, w) for word, w in old_tokens if word in old - new]
    out = []
    left = dict(gained)
    for word, written in new_tokens:  # in the order written, each extra occurrence once (negations below)
        if word == NOT or left.get(word, 0) <= 0:
            continue
        left[word] -= 1
        if _written_arrow(word, old, new):
            continue
        if not any(_typo_of(d, (word, written), known) or _shortens(d, (word, written)) for d in dropped):
            out.append(written)
    if gained[NOT]:  # the negations written anew (the same negation once more: itself)
        said = [Counter(w for word, w in tokens if word == NOT) for tokens in (old_tokens, new_tokens)]
        fresh = list((said[1] - said[0]).elements()) or [w for word, w in new_tokens if word == NOT]
        out += fresh[:gained[NOT]]
    return list(dict.fromkeys(out))


def lost_negations(before: str, after: str) -> list[str]:
    """The negations ``before`` says that ``after`` no longer does, as written (a compression may not drop
    one: without it the claim says the opposite)."""
    said = [Counter(w for word, w in claim_tokens(t) if word == NOT) for t in (before, after)]
    if sum(said[0].values()) <= sum(said[1].values()):
        return []
    return list(dict.fromkeys((said[0] - said[1]).elements())) or ["a negation"]


VERSION_SUFFIX_RE = re.compile(r"[_.\-/]?[vV]\d{1,3}$")  # a version at the end of a name: `…_v2`


def name_gains(before: Pattern, now: Pattern, claim: str = "",
               known: Callable[[str], bool] | None = None) -> list[str]:
    """What a rename writes into a raised claim's name: a negation (`never_…`, `dont_…`, `NeverX`,
    `…_is_wrong`), or a word that neither the old name, the old ``claim`` nor its evidence (``known``) holds
    (`cap_retries_at_three` renamed `retry_storms_are_harmless`). A name is the first thing a reader reads of
    a claim (`prime`, `patterns`, links, trailers); a typo fixed in it, or words its description or episodes
    already say, are no new claim."""
    if before.name == now.name:
        return []
    old_name, new_name = _name_read(before.name), _name_read(now.name)
    held = {word for word, _ in claim_tokens(old_name + " " + before.text)}
    old = [w for word, w in claim_tokens(old_name) if _negating(word, w, held)]
    out = []
    for word, written in claim_tokens(new_name):
        if _negating(word, written, held):
            if written in old:
                old.remove(written)
            else:
                out.append(written)
    if known is not None:  # (the caller's question: a raised claim, whose evidence speaks for its words)
        said = f"{old_name} {claim or before.text}"
        versioned = VERSION_SUFFIX_RE.sub("", now.name)  # (`breaker_threshold_v2`: a name's version is no claim)
        out += [w for w in new_words(said, _name_read(versioned), known=known)  # (a word said before is held)
                if w not in out and not known(w.lower()) and not _negating(w.lower(), w, held)]
    return out


LABEL_MARKS_RE = LazyPattern(r"[\W_]+")  # what a label may be broken up with (`DIS-PROVED`)


def negating_label(word: str) -> bool:
    """Whether ``word`` is one of :data:`NEGATING_LABELS` in any of its forms (`DISPROVES`, `### Myths`), its
    look-alike letters read as the Latin ones (`RЕFUTED` with a Cyrillic `Е`) and a hyphen or other mark inside
    it dropped (`DIS-PROVED`): one reading for a category (G404), a grouping heading in Proven (G406) and a
    claim's words."""
    from flowgit.continuity.identity import fold_lookalikes

    folded = fold_lookalikes(word)
    joined = LABEL_MARKS_RE.sub("", folded)
    return any(form in NEGATING_LABELS or stem(form) in _negating_stems() for form in {folded, joined} if form)


@lru_cache(maxsize=None)
def _negating_stems() -> frozenset[str]:
    """The labels' stems (`review` is left out: its stem names `reviewed`, which says nothing against a claim)."""
    return frozenset(stem(label) for label in NEGATING_LABELS if label != "review")


def _negating(word: str, written: str, held: set[str] = frozenset()) -> bool:
    """A negation, a negating label, or a held word with a negating prefix (`nocache` of a `cache` claim)."""
    if word == NOT or negating_label(written) or word in NEGATING_LABELS:
        return True
    return any(written.startswith(prefix) and len(written) - len(prefix) >= 3 and stem(written[len(prefix):]) in held
               for prefix in NEGATING_LABEL_PREFIXES)


FORWARD, BACKWARD = frozenset({"->", "=>"}), frozenset({"<-"})


def _written_arrow(word: str, old: Counter[str], new: Counter[str]) -> bool:
    """Whether ``word`` is a FlowScript arrow a compression writes in (a graduation's markers), the claim's
    direction kept: no arrow the other way is lost (`a -> b` written `a <- b`, or `b because a` written
    `b -> a`, says the effect is the cause). A comparison gets no such leave: `run 2 replicas` made
    `run < 2 replicas` is a new bound; written for words, a comparison is those words already."""
    against = BACKWARD if word in FORWARD else FORWARD if word in BACKWARD else None
    return against is not None and all(new[a] >= old[a] for a in against)


def only_respelled(before: str, after: str, known: Callable[[str], bool] | None = None) -> bool:
    """Whether ``after`` is ``before`` with typos fixed: the same words in the same order, each the same or
    re-spelled, or a word written twice in a row written once (`per per`); a Proven claim in place: a word
    moved, dropped, added, joined to its neighbour or split is a reworded claim (`use less`, `useless`)."""
    new = claim_tokens(after)
    doubled = _doubled_words(before)
    if _aligned(claim_tokens(before), new, known, doubled):
        return True
    fixed = _function_words_fixed(before)  # (`so taht` reads as nothing, `so that` as `->`: fixed, as meant)
    return fixed != before and _aligned(claim_tokens(fixed), new, known, doubled)


def _aligned(old: tuple, new: tuple, known: Callable[[str], bool] | None, doubled: frozenset[str]) -> bool:
    """:func:`only_respelled` of two claims' tokens (``doubled``: the words ``before`` writes twice in a row)."""
    i = j = 0
    while i < len(old) and j < len(new):
        a, b = old[i], new[j]
        if a[0] == b[0] or _typo_of(a, b, known):
            i, j = i + 1, j + 1
        elif i and a == old[i - 1] and _is_word(a[0]) and a[1].lower() in doubled:
            i += 1  # a word written twice in a row, written once
        else:
            return False
    return i == len(old) and j == len(new)


DOUBLED_RE = re.compile(r"\b([^\W\d_]+)\s+\1\b", re.IGNORECASE)


def _doubled_words(text: str) -> frozenset[str]:
    """The words ``text`` writes twice in a row with only spaces between (`per per`): a slip, not two words
    read apart (`service to service`, where a word the claim reading drops stands between)."""
    return frozenset(word.lower() for word in DOUBLED_RE.findall(text))


SHORT_WORD_RE = re.compile(r"\b[A-Za-z]{3,5}\b")


def _function_words_fixed(text: str) -> str:
    """``text`` with each misspelled function word (two letters swapped: `teh`, `taht`, `adn`) written right."""
    def fixed(found: re.Match) -> str:
        word = found.group()
        low = word.lower()
        if low in FUNCTION_WORDS or low in REAL_ANAGRAMS or low in NUMBER_WORDS:
            return word
        for right in FUNCTION_WORDS:
            if len(right) == len(low) and sorted(right) == sorted(low) and _one_edit(low, right):
                return right
        return word

    return SHORT_WORD_RE.sub(fixed, text)


def _typo_of(old: tuple[str, str], new: tuple[str, str], known: Callable[[str], bool] | None = None) -> bool:
    """Whether the token ``new`` is ``old`` with a typo fixed (never a number, a numeral or a negation).

    A word the claim's evidence itself uses (``known``) was no typo: only its ending may change (`wave`,
    `waves`); one letter inside it is another word and another claim (`stale`, `stable`)."""
    if not (_is_word(old[0]) and _is_word(new[0]) and _respelled(old[1], new[1])):
        return False
    if known is None or not known(old[1].lower()):
        return True
    return _inflected(old[1].lower(), new[1].lower())


def _inflected(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` (one edit from it, see :func:`_respelled`) with another ending of the same word:
    a letter added or dropped at its end (`wave`, `waves`), or `-is` for `-es` (`analysis`, `analyses`)."""
    if a.startswith(b) or b.startswith(a):
        return True
    return len(a) == len(b) > 3 and a[:-2] == b[:-2] and {a[-2:], b[-2:]} == {"is", "es"}


def _shortens(old: tuple[str, str], new: tuple[str, str]) -> bool:
    return _is_word(old[0]) and _is_word(new[0]) and _abbreviated(old[1], new[1])


def _is_word(word: str) -> bool:
    return word != NOT and word[:1].isalpha()


def _respelled(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with a typo fixed: the same first letter, neither a negation nor a number, one
    letter added, dropped, changed or two swapped (in a word of fewer than five letters, only one added or
    dropped: `safe` and `sale` are two words)."""
    if NOT in (a, b) or not (a.isalpha() and b.isalpha()):
        return False
    if b.lower() in FUNCTION_WORDS and a.lower() not in REAL_ANAGRAMS and len(a) == len(b) and \
            sorted(a.lower()) == sorted(b.lower()) and _one_edit(a.lower(), b.lower()):
        return True  # two letters swapped into a word that carries no claim (`teh`, `adn`, `taht`)
    if a[0] != b[0]:
        return False
    if min(len(a), len(b)) < 5:
        return abs(len(a) - len(b)) == 1 and _one_edit(a, b)
    return _one_edit(a, b)


# Words that carry no claim of their own (articles, conjunctions, prepositions, pronouns): a word with two
# neighbouring letters swapped into one of them is a typo fixed (`teh`, `adn`, `taht`), unless it is a word
# itself: REAL_ANAGRAMS are every such swap that is an English word (`form` is a verb: `timeouts form storms`
# written `from` turns cause into effect; `three` is a number), and a number word never is one.
# (Quantifiers, comparisons and negations are claims, never function words here.)
REAL_ANAGRAMS = frozenset({"form", "three", "fro", "tis", "thees", "aws", "rae", "weer"})
FUNCTION_WORDS = frozenset("""the and that with for from this these those then there their they them what when
where which while who whom whose have has had was were are its into onto upon your our his her him she you
""".split())


def _one_edit(a: str, b: str) -> bool:
    """One letter inserted, deleted or substituted, or two neighbours swapped."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def _abbreviated(a: str, b: str) -> bool:
    """Whether ``b`` shortens ``a`` (``req`` for ``request``): three letters or more that ``a`` begins with."""
    return len(b) >= 3 and b != a and a.startswith(b) and NOT not in (a, b) and b.isalpha()


def relabelled(before: Pattern, now: Pattern, *, in_place: bool) -> bool:
    """Whether the category changed into a claim: to anything but a one-word label, to a label that turns the
    claim around (`ANTIPATTERN`, `DISPROVEN`), or (a Proven line in place) other than from none or the
    wrap's default (a merge choosing the other wrap's category is judged as a merge)."""
    was, is_ = before.category.casefold(), now.category.casefold()
    if was == is_:
        return False
    if now.category and not CATEGORY_LABEL_RE.fullmatch(now.category):
        return True
    if negating_label(is_) or any(negating_label(part) for part in re.split(r"[\-/&+.]", is_) if part) or \
            claim_words(now.category)[NOT]:
        return True
    return in_place and was not in ("", DEFAULT_CATEGORY.casefold())


# ---------------------------------------------------------------- the rule
def demoted_names(ctx: CheckContext) -> Callable[[str], bool]:
    """Whether a name is a pattern either side holds with a demotion note (worked out when first asked)."""
    from flowgit.continuity.identity import name_key

    def ask(name: str) -> bool:
        found = ctx.memo.get("claims.demoted")
        if found is None:
            from flowgit.continuity.patterns import document_patterns

            found = ctx.memo["claims.demoted"] = {
                name_key(at.pattern.name) for doc in (ctx.old, ctx.new) if doc is not None
                for at in document_patterns(doc) if any(n.lower().startswith("demoted") for n in at.pattern.notes)}
        return name_key(name) in found
    return ask


def pattern_names(ctx: CheckContext) -> Callable[[str], bool]:
    """Whether a name is a pattern's on either side of the change (worked out when first asked)."""
    from flowgit.continuity.identity import name_key

    def ask(name: str) -> bool:
        found = ctx.memo.get("claims.names")
        if found is None:
            from flowgit.continuity.patterns import document_patterns

            found = ctx.memo["claims.names"] = {name_key(at.pattern.name) for doc in (ctx.old, ctx.new)
                                                if doc is not None for at in document_patterns(doc)}
        return name_key(name) in found
    return ask


def evidence_words(ctx: CheckContext, pattern: Pattern) -> Callable[[str], bool]:
    """Whether a word (lower case) is one the pattern's cited episodes use: a word its evidence speaks in is
    a word, never a typo to be fixed."""
    def ask(word: str) -> bool:
        key = ("claims.evidence_words", pattern.evidence)
        found = ctx.memo.get(key)
        if found is None:
            held = ctx.episodes(pattern.evidence)
            found = ctx.memo[key] = frozenset(w for i in pattern.evidence if i in held
                                              for w in re.findall(r"[^\W\d_]+", held[i].content.lower()))
        return word in found
    return ask


def claims_kept(ctx: CheckContext) -> Iterator[Finding]:
    """G209: a raised pattern's line, and the lines under it that a reader reads as part of it."""
    yield from raised_claims_keep_their_words(ctx)
    yield from raised_claims_gain_no_lines(ctx)


def raised_claims_keep_their_words(ctx: CheckContext) -> Iterator[Finding]:
    """G209 for a pattern at 2x or more (or entering or leaving Proven) whose claim gains a word, or loses a
    negation, while it keeps a raised level: lowered to 1x, a pattern may say anything anew. Raised
    patterns removed in the same change whose evidence the line cites lend it their words (facts folded
    into one). A Proven line staying in Proven is G404's."""
    if ctx.old is None:
        return
    changes = ctx.old_pattern_changes
    demoted, named = demoted_names(ctx), pattern_names(ctx)
    gone = [before for _, before, now in changes if now is None and before.pattern.level >= 2]
    for _, before, now in changes:
        if now is None or now.section == PROVEN and before.section == PROVEN:
            continue  # gone (other rules), or a Proven claim staying Proven (G404)
        raised = before.pattern.level >= 2 or before.section == PROVEN
        if not raised or (now.pattern.level < 2 and now.section != PROVEN):
            continue  # a 1x claim has no evidence to keep faith with; lowered to 1x, it starts again
        was, said = claim_text(before.pattern, demoted, named), claim_text(now.pattern, demoted, named)
        added = new_words(was, said, _folded_into(now, gone, demoted),
                          evidence_words(ctx, before.pattern)) if was != said else []
        added += [w for w in name_gains(before.pattern, now.pattern, was, evidence_words(ctx, before.pattern))
                  if w not in added]
        if relabelled(before.pattern, now.pattern, in_place=False):
            added.append(f"({now.pattern.category})")
        lost = lost_negations(was, said) if was != said else []
        if added or lost:
            yield _claim_changed(ctx, now, added, lost, "", "keep the words its evidence speaks to (dropping "
                                 "words, or FlowScript markers, is fine; a negation is never dropped)")


def raised_claims_gain_no_lines(ctx: CheckContext) -> Iterator[Finding]:
    """G209 for the lines under a raised pattern's line that continue its item (a nested bullet, an indented
    or directly following line: :mod:`flowgit.continuity.attached`): a reader reads them as part of the
    claim, so words they bring, or a negation they take away, change what the evidence stands behind, as
    on the line itself. Only what they add to the line's own reading is named here (the line is G209's
    other half)."""
    if ctx.old is None:
        return
    from flowgit.continuity.attached import attached_text, attachments
    from flowgit.continuity.patterns import PatternAt
    from flowgit.continuity.sections import Semantics

    demoted, named = demoted_names(ctx), pattern_names(ctx)
    for section in ctx.sections(ctx.new, Semantics.PATTERNS):  # (a line under one in Proven is G406's)
        if ctx.untouched(section):
            continue
        facts = ctx.new.facts(section)
        found = attachments(facts)
        if not found and not any(attachments(ctx.old.facts(s)) for s in
                                 ctx.sections(ctx.old, Semantics.PATTERNS, Semantics.PROVEN)):
            continue  # no line under a pattern on either side (nearly every file): nothing to compare
        for offset, pattern in facts.patterns:
            if pattern.level < 2:
                continue  # a 1x claim has no evidence to keep faith with
            now = PatternAt(pattern, section.body_start + offset, section.label)
            before = ctx.old_for(now)
            if before is None or (before.pattern.level < 2 and before.section != PROVEN):
                continue
            said_under = attached_text(ctx.new, now.line) if offset in found else ""
            was_under = attached_text(ctx.old, before.line)
            if said_under == was_under:
                continue
            yield from _gained_under(ctx, before, now, (was_under, said_under), (demoted, named))


def _gained_under(ctx: CheckContext, before, now, under: tuple[str, str], readers) -> Iterator[Finding]:
    """The G209 finding for what the lines under ``now`` add to its line's claim, if anything."""
    was, said = (claim_text(at.pattern, *readers) for at in (before, now))
    known = evidence_words(ctx, before.pattern)
    on_the_line = set(new_words(was, said, None, known)) if was != said else set()
    added = [w for w in new_words(f"{was}\n{under[0]}", f"{said}\n{under[1]}", None, known)
             if w not in on_the_line]
    lost_on_line = set(lost_negations(was, said))
    lost = [w for w in lost_negations(f"{was}\n{under[0]}", f"{said}\n{under[1]}") if w not in lost_on_line]
    if added or lost:
        yield _claim_changed(ctx, now, added, lost, ", in the lines under it (a reader reads them as part of it)",
                             "put a blank line before a note of your own and start it at the pattern's "
                             "indentation (or write it elsewhere)")


def _claim_changed(ctx: CheckContext, now, added: list[str], lost: list[str], where: str, keep: str) -> Finding:
    """G209's finding: what the claim gained or lost (``where``: in which lines), what to do instead."""
    level = "Proven" if now.section == PROVEN else f"{now.pattern.level}x"
    return Finding("G209", "claim-kept", "error", ctx.path, now.lineno,
                   f"`{now.pattern.name}` {describe(added, lost)} at {level}{where}: its evidence was recorded "
                   "for the old words",
                   f"{keep}; to claim something new, lower it to 1x as you reword it, or add a new 1x pattern")


def _folded_into(now, gone, demoted) -> Counter[str]:
    """The claim words of raised patterns this change removes whose evidence the line now cites: facts
    folded into one pattern bring their evidenced words with them, negations too."""
    cited = set(now.pattern.evidence)
    out: Counter[str] = Counter()
    for at in gone:
        if cited.intersection(at.pattern.evidence):
            out += claim_words(claim_text(at.pattern, demoted))
    return out


def describe(added: list[str], lost: list[str]) -> str:
    """``says `x`, `y` and no longer says `never``` (what a claim gained and the negations it lost)."""
    parts = []
    if added:
        parts.append("says " + ", ".join(f"`{w}`" for w in added) + ", which it did not say before")
    if lost:
        parts.append("no longer says " + ", ".join(f"`{w}`" for w in lost))
    return " and ".join(parts)
