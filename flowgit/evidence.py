"""The immune system: does the cited evidence earn a pattern its level?

One implementation serves the gate (``flowgit check``), the wrap and the audit:

* every cited id must exist in the store as it stands, and be the hash of its
  own content (a hand-made id is forged);
* a cited episode must be about the pattern: the stemmed content words they
  share, weighted by rarity (an everyday word, or one most of the store uses,
  weighs a quarter), must reach one rare word's weight;
* independence is the seed's: a different session *or* a different agent.
  Episodes sharing both count once, however worded; session and agent names
  compare as pattern names do (case, width, spacing and look-alike letters
  aside: ``SESS-SAT`` is ``sess-sat``); an episode without a session never
  counts; the episodes appended in the commit being judged count as one
  source whatever sessions or agents they name (a name is minted as easily as
  typed, and one sitting writes them all), and as one with any earlier
  episode whose session and agent one of them names; episodes dated after the
  change (beyond a little clock skew) do not count;
* 2x needs ``evidence_2x`` independent episodes; 3x (or anything in Proven)
  needs ``evidence_3x`` from at least ``sources_3x`` different sessions or agents.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Collection, Iterable, Mapping, NamedTuple, Sequence

from flowgit.config import Thresholds
from flowgit.dates import parse_date
from flowgit.episodes import Episode, episode_id, parse_ts
from flowgit.words import EVERYDAY_STEMS, content_words, is_character_pair, is_cluster_pair

if TYPE_CHECKING:
    from flowgit.continuity.patterns import Pattern, PatternAt

CLOCK_SKEW = timedelta(minutes=5)
RELEVANT_WEIGHT = 1.0   # one rare shared word, or four everyday ones
COMMON_WEIGHT = 0.25


class Requirement(NamedTuple):
    """What a level needs: independent episodes, and distinct sources among them."""

    independent: int
    sources: int


def requirement(level: int, thresholds: Thresholds) -> Requirement:
    if level >= 3:
        return Requirement(thresholds.evidence_3x, thresholds.sources_3x)
    if level == 2:
        return Requirement(thresholds.evidence_2x, 1)
    return Requirement(0, 0)


class Verdict:
    """What the evidence for one pattern at one level amounts to (filled in by :func:`judge_evidence`)."""

    def __init__(self, pattern: str, level: int, cited: list[str], needed: Requirement | None = None) -> None:
        self.pattern = pattern
        self.level = level
        self.cited = cited
        self.unknown: list[str] = []
        self.unrelated: list[str] = []
        self.forged: list[str] = []
        self.future: list[str] = []
        self.sessionless: list[str] = []
        self.counted: list[list[str]] = []  # groups: each group counts once
        self.sessions: list[str] = []
        self.agents: list[str] = []
        self.needed = needed or Requirement(0, 0)

    @property
    def independent(self) -> int:
        return len(self.counted)

    @property
    def sources(self) -> int:
        return max(len(self.sessions), len(self.agents))

    @property
    def enough(self) -> bool:
        return self.independent >= self.needed.independent and self.sources >= self.needed.sources

    @property
    def ok(self) -> bool:
        return not self.unknown and not self.unrelated and not self.forged and self.enough

    def problems(self) -> list[str]:
        """Plain sentences naming exactly what is missing."""
        out = []
        if self.unknown:
            out.append(not_in_store(self.unknown))
        if self.unrelated:
            out.append(f"cites episode(s) not about `{self.pattern}` (too little shared meaning; everyday words, "
                       f"and words most of the store uses, weigh little): "
                       f"{', '.join(self.unrelated)}")
        if self.forged:
            out.append(f"cites episode(s) whose id does not match their content (forged): {', '.join(self.forged)}")
        if not self.enough:
            collapsed = [g for g in self.counted if len(g) > 1]
            note = ""
            if collapsed:
                note = ("; episodes of one session and agent (or appended together in this change) count once: "
                        + "; ".join("+".join(g) for g in collapsed))
            if self.sessionless:
                note += f"; without a session (never counted): {', '.join(self.sessionless)}"
            if self.future:
                note += f"; dated after the change or without a date (not counted): {', '.join(self.future)}"
            src = f" from {self.needed.sources} different sessions or agents" if self.needed.sources > 1 else ""
            out.append(f"{self.level}x needs {self.needed.independent} independent episodes{src}; "
                       f"has {self.independent} from {self.sources} source(s){note}")
        return out

    def to_dict(self) -> dict:
        return {"pattern": self.pattern, "level": self.level, "cited": self.cited, "unknown": self.unknown,
                "unrelated": self.unrelated, "forged": self.forged, "future": self.future,
                "sessionless": self.sessionless, "independent": self.independent, "sources": self.sources,
                "needed_independent": self.needed.independent, "needed_sources": self.needed.sources,
                "ok": self.ok, "problems": self.problems()}


Weight = Callable[[str], float]  # never negative (relevance stops adding once the sum is reached)


def everyday_weight(word: str) -> float:
    return COMMON_WEIGHT if word in EVERYDAY_STEMS else 1.0


_FIELD_NAMES = frozenset(b"id ts type content session agent tags".split())
_TYPE_NAMES = frozenset(b"finding decision observation connection outcome tension".split())


class StoreWeight:
    """Rarity from a store: a word in most of a sample's lines weighs like an everyday one.

    Each word is counted once, when first weighed; ``floor`` is the least
    weight any word gets, so enough shared words decide relevance uncounted.
    The sample is given in parts (a large store's head and tail, lower-cased):
    a word never holds a newline, so it occurs in the sample exactly as often
    as in its parts together, and the head's counts are kept for the next
    version of the store, whose head is the same bytes.
    """

    floor = COMMON_WEIGHT

    def __init__(self, *parts: bytes, tail_at: int | None = None) -> None:
        self.parts = parts
        self.lines = max(1, sum(part.count(b"\n") for part in parts) + len(parts) - 1)  # (parts meet at a newline)
        self.cache: dict[str, float] = {}
        self._counts = _HeadCounts.for_head(parts[0]) if len(parts) > 1 else None
        # (``tail_at``: where the last part starts in the store, so the next version's tail can be told apart)
        self._tail = _TailCounts.for_tail(parts[1], tail_at) if len(parts) == 2 and tail_at is not None else None

    def __call__(self, word: str) -> float:
        found = self.cache.get(word)
        if found is None:
            needle = word.encode("utf-8")
            seen = self._count(needle) - self._structural(needle)
            if needle.endswith(b"y"):  # the stem of "retries"/"retried" is "retry": count the lines saying so too
                seen += self._count(needle[:-1] + b"i")
            common = self.lines >= 20 and seen > self.lines / 2
            found = self.cache[word] = COMMON_WEIGHT if common else everyday_weight(word)
        return found

    def _structural(self, needle: bytes) -> int:
        """Occurrences of ``needle`` that are the store's own structure, not what its episodes say: a field's
        name (``"session": …``, on every line) or an episode's type (``"type": "finding"``)."""
        if needle in _FIELD_NAMES:
            return self._count(b'"' + needle + b'":')
        if needle in _TYPE_NAMES:
            return self._count(b'"type": "' + needle + b'"')
        return 0

    def _count(self, needle: bytes) -> int:
        if self._counts is None or b"\n" in needle:
            return b"\n".join(self.parts).count(needle) if len(self.parts) > 1 else self.parts[0].count(needle)
        if self._tail is not None:
            return self._counts.count(needle) + self._tail.count(needle)
        return self._counts.count(needle) + sum(part.count(needle) for part in self.parts[1:])


class _HeadCounts:
    """Word counts in a store sample's head, kept while the head stays the same bytes (append-only: it does)."""

    _last: "_HeadCounts | None" = None

    def __init__(self, head: bytes) -> None:
        self.head = head
        self.counts: dict[bytes, int] = {}

    @classmethod
    def for_head(cls, head: bytes) -> "_HeadCounts":
        last = cls._last
        if last is None or last.head != head:
            last = cls._last = cls(head)
        return last

    def count(self, needle: bytes) -> int:
        found = self.counts.get(needle)
        if found is None:
            if len(self.counts) >= 1 << 14:
                self.counts.clear()
            found = self.counts[needle] = self.head.count(needle)
        return found


class _TailCounts:
    """Word counts in a store sample's tail, carried over from the previous version's tail.

    After an append the tail slides: it loses ``D`` at its start and gains
    ``A`` at its end, and the bytes ``R`` between are the same. A word holds no
    newline, so it is counted apart on each side of any newline: cutting ``R``
    at its first and its last newline, the count over the new tail is the old
    one minus the old tail's edges plus the new tail's (``R``'s inner lines are
    in both). Only those edges are read (the appended bytes and two partial
    lines, not 64 KB), and only for words the old tail counted; the others, and
    any tail that does not continue the previous one, are counted whole.
    """

    _last: "_TailCounts | None" = None

    def __init__(self, tail: bytes, at: int, before: "_TailCounts | None" = None) -> None:
        self.tail, self.at = tail, at
        self.counts: dict[bytes, int] = {}
        self._carried: dict[bytes, int] | None = None  # the previous tail's counts, when this one continues it
        self._edges: tuple[bytes, bytes, bytes, bytes] = (b"", b"", b"", b"")  # old start, old end, new start, new end
        shift = at - before.at if before is not None else 0
        if before is not None and 0 < shift < len(tail) and len(before.tail) == len(tail):
            shared = before.tail[shift:]
            first, last = shared.find(b"\n"), shared.rfind(b"\n")
            if first != -1 and tail.startswith(shared):
                self._carried = before.counts
                self._edges = (before.tail[:shift + first], before.tail[shift + last + 1:],
                               tail[:first], tail[last + 1:])

    @classmethod
    def for_tail(cls, tail: bytes, at: int) -> "_TailCounts":
        last = cls._last
        if last is None or last.at != at or last.tail != tail:
            last = cls._last = cls(tail, at, last)
        return last

    def count(self, needle: bytes) -> int:
        found = self.counts.get(needle)
        if found is None:
            if len(self.counts) >= 1 << 14:
                self.counts.clear()
            before = self._carried.get(needle) if self._carried is not None else None
            if before is None:
                found = self.tail.count(needle)
            else:
                old_start, old_end, new_start, new_end = self._edges
                found = before - old_start.count(needle) - old_end.count(needle) \
                    + new_start.count(needle) + new_end.count(needle)
            self.counts[needle] = found
        return found


def store_weight(store: bytes, sample: int = 1 << 16) -> Weight:
    """Rarity from the store itself: a word in most of a sample's lines weighs like an everyday one.

    A project's own topic words recur (that is what makes them evidence), so
    only a word most episodes share is discounted. A large store is sampled at
    its head and its tail.
    """
    if len(store) > 2 * sample:
        return StoreWeight(bytes(store[:sample]).lower(), bytes(store[-sample:]).lower(), tail_at=len(store) - sample)
    return StoreWeight(bytes(store[:]).lower())


@lru_cache(maxsize=4096)
def meaningful_words(text: str) -> frozenset[str]:
    """:func:`content_words`, remembered: a history judges the same patterns and episodes again and again."""
    return content_words(text)



def is_relevant(episode: Episode, pattern_words: frozenset[str], thresholds: Thresholds,
                weight: Weight = everyday_weight) -> bool:
    """Whether the episode shares enough rare meaning with the pattern (name, description).

    Weights are never negative, so the shared words are weighed only until
    their sum reaches :data:`RELEVANT_WEIGHT` (a word in a store is counted
    when first weighed), and not at all when so many are shared that even the
    least weight each (``weight.floor``) reaches it.
    """
    shared = meaningful_words(episode.content) & pattern_words  # what it says, not how it is filed
    if len(shared) < thresholds.relevance_min_shared:
        return False
    floor = COMMON_WEIGHT if weight is everyday_weight else getattr(weight, "floor", None)
    if floor is not None and sum(min(floor, _most(word)) for word in shared) >= RELEVANT_WEIGHT:
        return True
    total = 0.0
    for word in shared:
        total += min(weight(word), _most(word))
        if total >= RELEVANT_WEIGHT:
            return True
    return False


# A pair of ideographs or katakana weighs at most a quarter of a word: two texts share pairs by chance (`グイン`
# of `ログイン` and `プラグイン` is two, `了一` spans two words), so a few make no episode about a pattern; texts
# about one thing share many (a Japanese or Chinese sentence of twenty characters is nineteen pairs).
PAIR_WEIGHT = 0.25
# A pair of Thai, Lao or Khmer letter clusters spans about one syllable where a pair of ideographs (or of
# Burmese clusters) spans two: it weighs half as much, so one everyday word (`ทดสอบ`, "test": four pairs) is
# not enough either.
CLUSTER_PAIR_WEIGHT = PAIR_WEIGHT / 2


def _most(word: str) -> float:
    """The most a shared word can weigh: a word 1, a pair of characters or clusters a part of one."""
    if word.isascii():
        return 1.0
    if is_character_pair(word):
        return PAIR_WEIGHT
    return CLUSTER_PAIR_WEIGHT if is_cluster_pair(word) else 1.0


APPENDED_HERE = "(appended in this change)"


def source_key(ep: Episode) -> tuple[str, str]:
    """(session, agent) an episode names, each folded as a name is (:func:`source_name`)."""
    return source_name(ep.session), source_name(ep.agent)


@lru_cache(maxsize=4096)
def source_name(name: str) -> str:
    """A session or agent name as an identity: its letters and digits only, read as a reader reads them
    (NFKC, case, look-alike letters; :func:`flowgit.continuity.patterns.skeleton`): ``sess-sat``,
    ``SESS_SAT``, ``sess sat.`` and ``sеss-sat`` are one."""
    from flowgit.continuity.patterns import skeleton

    return "".join(ch for ch in skeleton(name) if ch.isalnum())


def same_source(a: str, b: str) -> bool:
    """Whether two session (or agent) names are one source to the immune system (:func:`source_name`):
    every command that asks "this session's episodes" asks it so, or a spelling would split one session."""
    return a == b or source_name(a) == source_name(b)


class Sources(NamedTuple):
    """How cited episodes count: groups that count once each, and the sessions and agents among them."""

    groups: list[list[str]]
    sessions: frozenset[str]
    agents: frozenset[str]


def sources_of(episodes: Sequence[Episode], batch: Collection[str] = ()) -> Sources:
    """Group ``episodes`` so that each group counts once.

    Episodes naming one (session, agent) are one group. The episodes this
    change appends (``batch``) are one group whatever they name: they are
    written in one sitting by whoever makes the change, and a session or agent
    name costs nothing to invent. So they count as one source, and as one with
    every earlier episode whose session and agent one of them names (an episode
    appended to a session's own earlier one is that session again). An episode
    that names no agent is one with every episode of its session. Sessions
    and agents are read from the earlier episodes only; appended ones that
    join no earlier group count as one new session and agent.
    """
    root: dict[tuple[str, str], tuple[str, str]] = {}

    def find(key: tuple[str, str]) -> tuple[str, str]:
        while root.setdefault(key, key) != key:
            root[key] = root[root[key]]
            key = root[key]
        return key

    keys = {ep.id: source_key(ep) for ep in episodes}
    appended = [keys[ep.id] for ep in episodes if ep.id in batch] if batch else []
    for key in appended[1:]:
        root[find(key)] = find(appended[0])
    by_session: dict[str, tuple[str, str]] = {}
    for key in sorted(set(keys.values()), key=lambda k: k[1] != ""):  # an episode naming no agent is any
        first = by_session.setdefault(key[0], key)  # agent of its session: it joins each of them
        if first != key and (first[1] == "" or key[1] == ""):
            root[find(key)] = find(first)
    grouped: dict[tuple[str, str], list[str]] = {}
    for ep in episodes:
        members = grouped.setdefault(find(keys[ep.id]), [])
        if ep.id not in members:
            members.append(ep.id)
    sessions: set[str] = set()
    agents: set[str] = set()
    for members in grouped.values():
        held = [keys[i] for i in members if i not in batch]
        if not held:
            sessions.add(APPENDED_HERE)
            agents.add(APPENDED_HERE)
        sessions.update(session for session, _ in held)
        agents.update(agent for _, agent in held if agent)
    return Sources(list(grouped.values()), frozenset(sessions), frozenset(agents))


def is_forged(ep: Episode) -> bool:
    return ep.id != _derived_id(ep.type, ep.content, ep.session)


@lru_cache(maxsize=4096)
def _derived_id(type_: str, content: str, session: str) -> str:
    """:func:`episode_id`, remembered: an episode cited by a pattern is checked at every change of it."""
    return episode_id(type_, content, session)


def assess(name: str, description: str, level: int, cited: Sequence[str], store: Mapping[str, Episode],
           thresholds: Thresholds, *, in_proven: bool = False, now: datetime | None = None,
           batch: Collection[str] = (), weight: Weight = everyday_weight,
           claim_only: bool = False) -> Verdict:
    """Judge the evidence ``cited`` for pattern ``name`` at ``level`` against ``store``.

    ``now`` is when the change is made; ``batch`` the ids the change appends
    (see :func:`source_key`); ``weight`` the rarity
    of a word (see :func:`store_weight`). ``claim_only``: an episode is about
    the pattern only by what its description says (the name kept for a new
    claim does not count).
    """
    effective = max(level, 3) if in_proven else level
    ids = list(dict.fromkeys(cited))
    verdict = Verdict(pattern=name, level=effective, cited=ids, needed=requirement(effective, thresholds))
    usable: list[Episode] = []
    for ident in ids:
        ep = store.get(ident)
        if ep is None:
            verdict.unknown.append(ident)
        elif is_forged(ep):
            verdict.forged.append(ident)
        elif not records_it(ep, name, description, thresholds, weight, claim_only=claim_only):
            verdict.unrelated.append(ident)
        elif not ep.session.strip():
            verdict.sessionless.append(ident)
        elif now is not None and _after(ep, now):
            verdict.future.append(ident)
        else:
            usable.append(ep)
    found = sources_of(usable, batch)
    verdict.counted = found.groups
    verdict.sessions = sorted(found.sessions)
    verdict.agents = sorted(found.agents)
    return verdict


def records_it(episode: Episode, name: str, description: str, thresholds: Thresholds,
               weight: Weight = everyday_weight, *, claim_only: bool = False) -> bool:
    """Whether an episode records the pattern firing: G104's one reading of "about", by what the episode says
    (never its tags, which file it): relevant by rare shared words, or naming the pattern with a word of its
    claim. The wrap's "fired this session" (what cleanup keeps), ``candidates``' "fired again" and the merge's
    "the other side fired it" read it too, so nothing is proposed as fired that the gate would refuse as
    evidence, nor archived as stale that the gate would accept as evidence of this session.
    ``claim_only``: by what its description says only (the name kept for a new claim does not count)."""
    words = meaningful_words(description if claim_only else f"{name} {description}")
    return is_relevant(episode, words, thresholds, weight) or not claim_only and names_it(episode, name, description)


def names_it(episode: Episode, name: str, description: str) -> bool:
    """Whether the episode's content says the pattern's name, of two or more words, as words in order
    (``retry budget`` for ``retry_budget``, ``retry budgets``), and shares a word of its description: it is
    about that pattern, however common its words are in a store whose project is that very topic (where
    rarity alone would weigh them as everyday). A name of everyday words only (``ran_tests``) names nothing,
    and an episode that says the name but nothing of the claim (a name chosen for what episodes say) is not
    about the claim."""
    words = _name_words(name)
    if len(words) < 2 or all(word in EVERYDAY_STEMS for word in words):
        return False
    if not (meaningful_words(episode.content) & meaningful_words(description)) - set(words):
        return False  # (the name's own words, repeated in the description, are not the claim's)
    said = _stemmed_tokens(episode.content)
    width = len(words)
    return any(said[i:i + width] == words for i in range(len(said) - width + 1))


@lru_cache(maxsize=4096)
def _name_words(name: str) -> tuple[str, ...]:
    from flowgit.words import STOP, stem, tokens

    return tuple(stem(t) for t in tokens(re.sub(r"[-./]", " ", name)) if t.lower() not in STOP)


@lru_cache(maxsize=4096)
def _stemmed_tokens(text: str) -> tuple[str, ...]:
    from flowgit.words import STOP, stem, tokens

    return tuple(stem(t) for t in tokens(text) if t.lower() not in STOP)


def _after(ep: Episode, now: datetime) -> bool:
    when = parse_ts(ep.ts)
    return when is None or when > now + CLOCK_SKEW


# ------------------------------------------------------------ what an episode is about, and demotion (Step 5)
ABOUT_MIN_SHARED = 2  # one shared everyday word does not make an episode "about" a pattern
EPISODE_REF_RE = re.compile(r"\bep-[0-9a-f]{6,64}\b")
DEMOTED_ON_RE = re.compile(r"^demoted\s+(\S+?):?(\s|$)", re.IGNORECASE)  # `[demoted DATE: …]`
DEMOTED_DATE_RE = re.compile(r"^demoted\s+([^:]+?)\s*(?::|$)", re.IGNORECASE)  # the text before the colon


def about(p: Pattern, ep: Episode) -> bool:
    """Whether an episode is about a pattern: what it says shares two meaningful words with the pattern, and
    they weigh one rare word as G104 weighs them (an everyday word a quarter: "the team had a short call"
    is not about "a short timeout on every call to the gateway"). The same for every store, so the gate
    and the wrap read a contradiction alike.

    Its tags file it; they do not say what happened (as for G104's relevance): an unrelated episode tagged
    with the pattern's name would otherwise demote a Proven pattern.
    """
    shared = content_words(p.words) & content_words(ep.content)
    return len(shared) >= ABOUT_MIN_SHARED and \
        sum(min(everyday_weight(word), _most(word)) for word in shared) >= RELEVANT_WEIGHT


def bears_on(p: Pattern, ep: Episode, thresholds: Thresholds, weight: Weight = everyday_weight) -> bool:
    """Whether an episode bears on a pattern in either direction: about it as a contradiction is read
    (:func:`about`), or relevant to it as G104 reads evidence (one rare shared word may do). What a demotion
    must come after: any such episode could otherwise be cited for its return as recorded since."""
    return about(p, ep) or is_relevant(ep, meaningful_words(f"{p.name} {p.text}"), thresholds, weight)


def _one_source(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """Whether two (session, agent) keys are one source, as G103 counts them (:func:`sources_of`): the same
    session and agent, or the same session where one names no agent."""
    return a[0] == b[0] and (a[1] == b[1] or not a[1] or not b[1])


def independent_contradiction(p: Pattern, against: Iterable[str], episodes: Mapping[str, Episode],
                              thresholds=None, *, now: datetime | None = None) -> list[str]:
    """Why ``against`` does not justify demoting ``p`` ([] when it does).

    At least one cited episode must exist, be what its id says (not forged),
    not be dated after ``now`` (the change), be about the pattern, not be part
    of its evidence, and come from a source (session and agent) none of the
    evidence episodes share: a pattern is not demoted by its own chain.
    """
    ids = list(dict.fromkeys(against))
    if not ids:
        return ["a demotion needs the contradicting episode: record it and cite it in `evidence`"]
    unknown = [i for i in ids if i not in episodes]
    if unknown:
        return [not_in_store(unknown)]
    unsound = [i for i in ids if is_forged(episodes[i]) or (now is not None and _after(episodes[i], now))]
    if unsound and len(unsound) == len(ids):
        return [f"cites episode(s) whose id is not the hash of their content, or dated after the change: "
                f"{', '.join(unsound)}"]
    chain = {source_key(e) for i in p.evidence if (e := episodes.get(i)) is not None}
    usable = [i for i in ids if i not in p.evidence and i not in unsound and about(p, episodes[i])
              and episodes[i].session.strip()  # a source G103 would not count vouches for no demotion either
              and not any(_one_source(source_key(episodes[i]), key) for key in chain)]
    if usable:
        return []
    return [f"no cited episode is both about `{p.name}` and independent of its own evidence (not cited by it, "
            f"recorded in a session, from another session or agent than its chain): {', '.join(ids)}"]


def demoted_on(p: Pattern, reference: date | None = None) -> date | None:
    """The date of the pattern's latest ``[demoted DATE: …]`` note, if it has one."""
    found = None
    for note in p.notes:
        day = _demotion_day(note.strip(), reference)
        if day and (found is None or day > found):
            found = day
    return found


DEMOTION_SKEW_DAYS = 2  # a yearless demotion date a day or two after the change it is read against (time zones)


def _demotion_day(note: str, reference: date | None) -> date | None:
    """The date a demotion note gives: the text before its colon (``Dec 2``, ``2 Dec 2026``), else its first
    word (``2026-12-02``). A yearless date is the latest one not after the day it is read against (a
    demotion is written about the past; read as the nearest one, ``Jan 5`` in December was next January,
    and a chain recorded since then was refused), allowing a day or two of clock and time-zone skew."""
    from flowgit import dates

    ref = (reference or dates.today()) + timedelta(days=DEMOTION_SKEW_DAYS)
    whole = DEMOTED_DATE_RE.match(note)
    day = parse_date(whole.group(1), reference=ref) if whole else None
    if day is None:
        first = DEMOTED_ON_RE.match(note)
        day = parse_date(first.group(1), reference=ref) if first else None
    return day


def recorded_on(ep: Episode | None) -> date | None:
    """The day (UTC, like every day the gate compares it with: the change's, a demotion's) an episode was
    recorded (None: unknown). Read in the offset it is written with, an instant hours before a demotion
    could fall on the next day (``T00:30+23:59``) and count as recorded after it."""
    when = parse_ts(ep.ts) if ep else None
    if when is None:
        return None
    try:
        return when.astimezone(timezone.utc).date()
    except OverflowError:  # the first or last day a datetime holds, shifted past it
        return date.min if when.year == 1 else date.max


def last_recorded(p: Pattern, episodes: Mapping[str, Episode], reference: date | None = None, *,
                  until: date | None = None) -> date | None:
    """The newest of the date written on a pattern and its evidence's recording dates (None: neither known).

    What a pattern rests on as of then: the gate's staleness (G205) and the
    floor under a demotion's date (G206) read it, and the wrap's cleanup reads
    it with the last commit to the line, so the gate never refuses what the
    cleanup archives. An episode dated after ``until`` (the change's day) is
    no evidence yet, so it is not what the pattern rests on either: cited once,
    an episode dated 2035 would otherwise keep the pattern "seen" until then,
    beyond demotion and archival.
    """
    days = [day for i in p.evidence if (day := recorded_on(episodes.get(i))) is not None
            and (until is None or day <= until)]
    written = parse_date(p.date, reference=reference) if p.date else None
    if written is not None:
        days.append(written)
    return max(days) if days else None


def after_demotion(p: Pattern, evidence: Iterable[str], episodes: Mapping[str, Episode],
                   reference: date | None = None) -> list[str]:
    """The cited ids recorded after the pattern's demotion (all of them when it was never demoted); a yearless
    demotion date is read against ``reference`` (the change's day: a history's verdict must not move with
    the calendar), else today."""
    since = demoted_on(p, reference)
    ids = list(dict.fromkeys(evidence))
    if since is None:
        return ids
    return [i for i in ids if (recorded_on(episodes.get(i)) or date.min) > since]


DEMOTION_MENTION_RE = re.compile(r"demot\w*\b", re.IGNORECASE)  # a note about the demotion, as G206/G207 read one


def contradictions(p: Pattern) -> set[str]:
    """The episode ids the pattern's demotion notes cite: what contradicted it. Every note that speaks of
    the demotion (`[demoted-by: ep-…]` as well as `[demoted DATE: why (ep-…)]`), as G206 reads the cause."""
    return {i for note in p.notes if DEMOTION_MENTION_RE.search(note) for i in EPISODE_REF_RE.findall(note)}


def demoted_twin(p: Pattern, patterns: Iterable[PatternAt]) -> PatternAt | None:
    """A demoted pattern among ``patterns`` that ``p`` is under another name: by the identity rule (the same
    description, or all its evidence), or because ``p``'s claim holds every word of the demoted claim (as the
    claim rules read words: stems, function words aside; one added "the" is no new claim). A claim demoted
    cannot come back on the discredited chain under any name (G208): the gate and the wrap both ask this."""
    from flowgit.continuity.identity import is_rename, name_key

    mine, key = meaningful_words(p.text), name_key(p.name)
    for other in patterns:
        if not other.pattern.notes or name_key(other.pattern.name) == key or demoted_on(other.pattern) is None:
            continue
        if is_rename(other.pattern, p) or _holds_the_claim(meaningful_words(other.pattern.text), mine):
            return other
    return None


TWIN_WORDS = 3  # a demoted claim of fewer meaningful words is too short to be recognised inside another


def _holds_the_claim(demoted: frozenset[str], words: frozenset[str]) -> bool:
    return len(demoted) >= TWIN_WORDS and demoted <= words


def post_demotion(p: Pattern, evidence: Iterable[str], episodes: Mapping[str, Episode], *, level: int | None = None,
                  thresholds: Thresholds | None = None, in_proven: bool = False,
                  reference: date | None = None, now: datetime | None = None, batch: Collection[str] = (),
                  weight: Weight = everyday_weight) -> list[str]:
    """Why a demoted pattern may not be promoted on ``evidence`` ([] when it may, or was never demoted).

    Its earlier chain did not survive scrutiny (Step 5), so only evidence
    recorded after the demotion counts, never its earlier chain nor the
    episode that contradicted it (the demotion's own citation), and that
    evidence alone must carry the ``level`` it is promoted to (when given,
    with ``thresholds``), counted as G103 counts it: ``now``, ``batch`` and
    ``weight`` as :func:`assess` reads them (an episode dated after the
    change is not counted; what the change appends counts once per agent).
    (An episode's date is what it was committed with: G705 refuses one set
    ahead of its commit, which would pass for one recorded after a demotion.)
    """
    since = demoted_on(p, reference)
    if since is None:
        return []
    # The discredited chain was recorded before the demotion's day (G206 refuses a note dated before what the
    # pattern rested on), so the date alone keeps it out; an episode recorded since counts wherever it is
    # cited, the ones a re-raised line already carries included. The contradiction never counts.
    discredited = contradictions(p)
    fresh = [i for i in after_demotion(p, evidence, episodes, reference) if i not in discredited]
    if not fresh:
        return [f"`{p.name}` was demoted on {since.isoformat()}: its earlier evidence did not survive scrutiny, so "
                f"a promotion needs evidence recorded after the demotion's day (the note gives a day, not a time: an "
                f"episode of {since.isoformat()} cannot be told from the chain it discredited)"]
    if level is None or thresholds is None:
        return []
    verdict = assess(p.name, p.text, level, fresh, episodes, thresholds, in_proven=in_proven, now=now, batch=batch,
                     weight=weight)
    if verdict.enough:
        return []
    return [f"`{p.name}` was demoted on {since.isoformat()}: only the evidence recorded since counts, and it "
            f"carries {verdict.independent} independent episode(s) from {verdict.sources} source(s); "
            f"{max(level, 3) if in_proven else level}x needs {verdict.needed.independent} from "
            f"{verdict.needed.sources}"]


def not_in_store(unknown) -> str:
    """The sentence for cited ids the store lacks; one too short to be the start of an id says so (a plan
    may name an episode by the start of its id, four characters or more after ``ep-``)."""
    from flowgit.episodes import SHORTEST_START

    short = [i for i in unknown if len(i.removeprefix("ep-")) < SHORTEST_START]
    said = f"cites episode(s) not in the store: {', '.join(unknown)}"
    if short:
        said += (f" ({', '.join(f'`{i}`' for i in short)} too short to name one: give {SHORTEST_START} characters "
                 "or more after `ep-`)")
    return said
