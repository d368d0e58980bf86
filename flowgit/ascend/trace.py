"""Phase 0: the recall trace, the granularity check and the unit type.

Silent: it reads the recall's words and the deposits' stored fields, and
decides whether one session answers the recall (then it is relayed as a
single-session recall) or the right unit is above a session, and of what shape.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta

from flowgit.ascend.graph import DepositIndex
from flowgit.ascend.model import CHAIN, CLUSTER, CONCEPT, Deposit, time_key
from flowgit.dates import MONTHS, today
from flowgit.words import content_words

# The trigger-signal table of the protocol, one expression per row that names a unit shape:
#   whole line of work / cross-session "where did it land" / overshooting one session -> a chain,
#   a topic spread over fragments -> a cluster, a named concept -> a concept node.
CHAIN_SIGNALS = re.compile(r"\b(whole (line|thread|arc|saga|story|effort)|line of work|thread|arc|saga|"
                           r"kept coming back|across (the )?sessions|"
                           r"where did .{0,80}?(land|end up|wind up|get to|finish)|where .{0,60}? ended up|"
                           r"how did .{0,80}?(evolve|develop|progress|unfold)|trajectory|from the start|all along|"
                           r"(more|bigger|larger) than (that|this|one|a single)( one)? session|not just (that|this|one)( one)? session|"
                           r"the rest of (that|the) (work|line)|what came (before|after|of it)|"
                           r"what (led|leads) (up )?to|leading up to|what followed|how we got (here|there))\b", re.I)
CLUSTER_SIGNALS = re.compile(r"\b(everything (we|i) (figured out|learned|know|found)|all (we|i) (know|learned)|"
                             r"everything about|all the .* (work|notes|findings)|topic|cluster)\b", re.I)
CONCEPT_SIGNALS = re.compile(r"\b(principle|concept|idea we (called|named)|(ended up|came to) call(ing)?|"
                             r"what we (called|named)|the term|coined|we called it|the rule we)\b", re.I)
# The words of those signals (never what they surround: "where did the retry budget land" keeps "retry budget").
SIGNAL_WORDS = re.compile(r"\b(whole|line of work|thread|arc|saga|story|effort|kept coming back|across (the )?sessions|"
                          r"where did|where|land(ed)?|end(ed)? up|wind up|get to|finish(ed)?|how did|evolve[ds]?|"
                          r"develop(ed)?|progress(ed)?|unfold(ed)?|trajectory|from the start|all along|"
                          r"(more|bigger|larger) than (that|one|a single) session|not just (that|one) session|"
                          r"the rest of|everything (we|i) (figured out|learned|know|found)|all (we|i) (know|learned)|"
                          r"everything about|all the|work|notes|findings|topic|cluster|principle|concept|"
                          r"idea we (called|named)|(ended up|came to) call(ing)?|what we (called|named)|the term|"
                          r"coined|we called it|the rule we|remember|recall|(that|the|one|a) (session|conversation|chat)|"
                          r"the time)\b", re.I)
SINGLE_SIGNALS = re.compile(r"\b(that|the|one) session\b|\bthe time (when|we)\b|\bthat conversation\b", re.I)
ANCHOR_RE = re.compile(r"(?:#|\bPR\s*#?|\bissue\s*#?)(\d+)", re.I)
QUOTED_RE = re.compile(r"[\"“'‘`]([^\"”'’`]{2,60})[\"”'’`]")
ISO_RE = re.compile(r"\b(\d{4}-\d{2}(?:-\d{2})?)\b")

SINGLE_DOMINANCE = 2.0


@dataclass
class RecallTrace:
    text: str
    keywords: list[str] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)
    quoted: list[str] = field(default_factory=list)
    temporal: str | None = None
    window: tuple[str, str] | None = None
    entry: list[str] = field(default_factory=list)   # deposit keys
    alternates: dict[str, str] = field(default_factory=dict)   # a keyword's other spelling in the deposits

    def to_dict(self) -> dict:
        data = asdict(self)
        data["window"] = list(self.window) if self.window else None
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "RecallTrace":
        from flowgit.ascend.typed import checked

        data = dict(data)
        found = checked(cls, data)
        found.window = tuple(data["window"]) if data.get("window") else None  # type: ignore[assignment]
        return found


def temporal_window(text: str, now: date | None = None) -> tuple[str | None, tuple[str, str] | None]:
    now = now or today()
    low = text.lower()
    if "last week" in low:
        return "last week", ((now - timedelta(days=14)).isoformat(), now.isoformat())
    if "last month" in low:
        return "last month", ((now - timedelta(days=62)).isoformat(), now.isoformat())
    iso = ISO_RE.search(text)
    if iso:
        value = iso.group(1)
        end = value + ("-31" if len(value) == 7 else "")
        start = value + ("-01" if len(value) == 7 else "")
        return value, (start, end)
    named = month_named(text)
    if named is None:
        return None, None
    month, given = named
    year = given or (now.year if month <= now.month else now.year - 1)
    name = next(k for k, v in MONTHS.items() if v == month).capitalize()
    return name + (f" {given}" if given else ""), (f"{year}-{month:02d}-01", f"{year}-{month:02d}-31")


# A month's name or its usual abbreviation as a word of its own ("marketplace", "decision" and "junk" name
# none), with the year when one follows. "may" is a verb far more often than a month: it names May only
# beside a day or a year ("May 3", "3rd of May", "May 2026").
MONTH_RE = re.compile(r"\b(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|june?|july?|aug(?:ust)?|"
                      r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?(?:,?\s+(\d{4})\b)?", re.I)
MAY_RE = re.compile(r"\bmay\b(?:\s+\d{1,2}(?:st|nd|rd|th)?\b(?:,?\s+(\d{4})\b)?|,?\s+(\d{4})\b)|"
                    r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?may\b(?:,?\s+(\d{4})\b)?", re.I)


def month_named(text: str) -> tuple[int, int | None] | None:
    """(month, year or None) of the first month the text names, or None."""
    found = [m for m in (MONTH_RE.search(text), MAY_RE.search(text)) if m is not None]
    if not found:
        return None
    first = min(found, key=lambda m: m.start())
    if first.re is MAY_RE:
        return 5, next((int(y) for y in first.groups() if y), None)
    return MONTHS[first.group(1)[:3].lower()], int(first.group(2)) if first.group(2) else None


REFERENCE_BREAK = re.compile(r"\s*(?:;|\band also\b|\bas well as\b|\bplus\b|\balso\b|,?\s*and\b|,)\s*", re.I)


def _signals(text: str) -> list[re.Match]:
    found = [m for rx in (CHAIN_SIGNALS, CLUSTER_SIGNALS, CONCEPT_SIGNALS) for m in rx.finditer(text)]
    return sorted(found, key=lambda m: m.start())


def split_references(text: str) -> tuple[str, list[str]]:
    """(the first vague reference, the others): several references bind to the first, the rest are noted.

    A second reference is a later clause that carries its own unit signal
    ("… and everything we figured out about the cache"), or a clause after an
    explicit separator (``;``, "and also", "as well as").
    """
    signals = _signals(text)
    cut = None
    if len(signals) >= 2:
        second = next((m for m in signals[1:] if m.start() >= signals[0].end() + 3), None)
        if second is not None:
            lead = [b for b in REFERENCE_BREAK.finditer(text, signals[0].end(), second.start() + 1)]
            cut = lead[-1] if lead else None
    if cut is None:
        hard = re.search(r"\s*(?:;|\band also\b|\bas well as\b)\s*", text)
        cut = hard if hard and hard.start() > 0 else None
    if cut is None:
        return text.strip(), []
    first, rest = text[:cut.start()].strip(" ,;"), text[cut.end():].strip(" ,;.")
    rest = re.sub(r"^(?:and|also|plus)\s+", "", rest, flags=re.I)
    if not content_words(first) or not content_words(rest):
        return text.strip(), []
    more, others = split_references(rest)
    return first, [more, *others]


def extract(text: str) -> RecallTrace:
    quoted = [q.strip() for q in QUOTED_RE.findall(text)]
    stripped = without_time_words(SIGNAL_WORDS.sub(" ", text))
    compounds = {w.lower() for w in re.findall(r"\b\w+(?:[-_]\w+)+\b", stripped)}
    words = sorted(content_words(stripped) | {q.lower() for q in quoted} | compounds)
    temporal, window = temporal_window(text)
    return RecallTrace(text=text, keywords=words, anchors=[f"#{n}" for n in ANCHOR_RE.findall(text)],
                       quoted=quoted, temporal=temporal, window=window)


# When the work happened, not what it was about: read into the trace's window, never matched as a topic
# ("last month" must not find the monthly invoice job).
TIME_WORDS_RE = re.compile(
    r"\b(?:last|this|next|past|previous|the other)\s+(?:weeks?|months?|years?|quarters?|sprints?|weekend|days?)\b|"
    r"\b(?:an?|one|two|three|four|few|several|couple(?:\s+of)?)\s+(?:days?|weeks?|months?|years?)\s+ago\b|"
    r"\b(?:yesterday|today|recently|earlier|lately)\b", re.I)


def without_time_words(text: str) -> str:
    """``text`` without the phrases that say when (time words, dates, month names): the trace's ``temporal``."""
    for rx in (TIME_WORDS_RE, ISO_RE, MONTH_RE, MAY_RE):
        text = rx.sub(" ", text)
    return text


def _stems(text: str) -> list[str]:
    from flowgit.words import stem, tokens

    return [stem(t) for t in tokens(text)]


def named_coined(trace: RecallTrace, index: DepositIndex) -> None:
    """A coined term the recall names in other spelling ("boring deploys" for ``boring-deploys``): the
    term's words, stemmed, in order in the recall. It is then treated as if quoted, but only where those words
    are the term's alone: words other sessions write without it ("the retry budget", which four sessions
    worked on and one wrap named ``retry_budget``) name their topic, not the term."""
    words = _stems(trace.text)
    joined = " " + " ".join(words) + " "
    for token in index.by_coined:
        parts = _stems(token)
        if len(parts) >= 2 and " " + " ".join(parts) + " " in joined and token not in (q.lower() for q in trace.quoted) \
                and index.word_holders(token) <= index.token_users(token):
            trace.quoted.append(token)


def bind_terms(trace: RecallTrace, index: DepositIndex) -> RecallTrace:
    """Meet the deposits' spelling where the light stemmer splits one word in two ("tracing" -> "trac"
    beside "trace"; "upgraded" -> "upgrad" beside "upgrade"): the ``e`` form joins the recall's words."""
    named_coined(trace, index)
    trace.alternates = {w: w + "e" for w in trace.keywords if w + "e" in index.by_term and not w.endswith("e")}
    return trace


def match_score(index: DepositIndex, d: Deposit, trace: RecallTrace) -> float:
    terms = index.terms[d.key]
    score = 0.0
    for w in trace.keywords:   # a word and its other spelling count once
        hit = w if w in terms else trace.alternates.get(w) if trace.alternates.get(w) in terms else None
        if hit:
            score += index.idf(hit) or 0.1
    refs = {a.ref.strip().lower() for a in d.anchors}
    score += 3.0 * sum(1 for a in trace.anchors if a.lower() in refs)
    if trace.window and d.date and not (trace.window[0] <= d.date <= trace.window[1]):
        score *= 0.5
    return score


def candidate_scores(index: DepositIndex, trace: RecallTrace, *, dropped: set[str] = frozenset(),
                     window: bool = True) -> dict[str, float]:
    """Each deposit the recall touches (by a word or an anchor) and how well it matches."""
    if not window and trace.window:
        trace = RecallTrace(**{**trace.__dict__, "window": None})
    candidates: set[str] = set()
    for w in [*trace.keywords, *trace.alternates.values()]:
        candidates.update(index.by_term.get(w, ()))
    for a in trace.anchors:
        candidates.update(index.by_anchor.get(f"ref:{a.lower()}", ()))
    scored = {k: match_score(index, index.by_key[k], trace) for k in candidates if k not in dropped}
    return {k: v for k, v in scored.items() if v > 0}


def rank_entries(index: DepositIndex, trace: RecallTrace, *, dropped: set[str] = frozenset()) -> list[tuple[float, Deposit]]:
    """Deposits the recall touches, best first (these are where traversal starts)."""
    scored = candidate_scores(index, trace, dropped=dropped)
    return sorted(((v, index.by_key[k]) for k, v in scored.items()), key=lambda s: (-s[0], *time_key(s[1].when, s[1].sid)))


def is_single_session(trace: RecallTrace, ranked: list[tuple[float, Deposit]], index: DepositIndex) -> bool:
    """One session answers it: no supra-session signal, and either the recall asks for one session ("the
    session where …") and one deposit leads, or one deposit clearly dominates and nothing larger joins it
    (a session that shares an issue or a continuation with others is a line's member, not the answer)."""
    if not ranked or has_supra_signal(trace.text):
        return False
    top = ranked[0][0]
    second = ranked[1][0] if len(ranked) > 1 else 0.0
    if SINGLE_SIGNALS.search(trace.text) and top > second:
        return True
    return top >= SINGLE_DOMINANCE * max(second, 1e-9) and not joined(index, ranked[0][1])


WORK_ITEMS = frozenset({"github_issue", "github_pr", "ticket", "legacy"})  # anchors that name one piece of work


def joined(index: DepositIndex, d: Deposit, kinds: frozenset[str] | None = None) -> bool:
    """Whether another session is tied to ``d`` by a stored link: a continuation, or an anchor both name (of
    ``kinds`` only, when given: a shared issue ties a line of work, a shared pattern name a topic)."""
    if d.continues or index.continued_by.get(d.sid):
        return True
    return any(index.by_key[key].sid != d.sid for a in d.anchors if kinds is None or a.kind in kinds
               for key in index.by_anchor.get(a.key, ()))


def has_supra_signal(text: str) -> bool:
    return bool(CHAIN_SIGNALS.search(text) or CLUSTER_SIGNALS.search(text) or CONCEPT_SIGNALS.search(text))


def ambiguity(trace: RecallTrace, has_entries: bool, *, explicit: bool = False) -> str:
    """Phase 0's trace ambiguity: low (a unit-shape signal and entry deposits), moderate (only one of them:
    traverse more broadly), high (neither: traverse the dispatched type, ready to reorient)."""
    signal = explicit or has_supra_signal(trace.text)
    if signal and has_entries:
        return "low"
    if signal or has_entries:
        return "moderate"
    return "high"


def classify(trace: RecallTrace, index: DepositIndex, default: str = CLUSTER) -> str:
    """Chain, cluster or concept, from the recall's own words first, then what the deposits hold.

    A signal word for a shape wins over a coined term the recall happens to name: "that whole line of
    work on the retry budget" asks for the line even where ``retry_budget`` is a pattern's name."""
    if CONCEPT_SIGNALS.search(trace.text):
        return CONCEPT
    if CHAIN_SIGNALS.search(trace.text) or trace.anchors:
        return CHAIN
    if CLUSTER_SIGNALS.search(trace.text):
        return CLUSTER
    if any(q.lower() in index.by_coined for q in trace.quoted) or any(w in index.by_coined for w in trace.keywords):
        return CONCEPT
    return default
