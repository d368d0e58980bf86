"""What the evidence rules remember and where they stop weighing never changes a verdict."""

from __future__ import annotations

import json

import random

from flowgit.config import Thresholds
from flowgit.episodes import make_episode
from flowgit.evidence import RELEVANT_WEIGHT, assess, everyday_weight, is_forged, is_relevant, store_weight
from flowgit.words import content_words

WORDS = ["retry", "budget", "provider", "load", "outage", "time", "work", "fix", "queue", "jitter", "backoff",
         "cache", "ledger", "test", "data"]


def _ep(content: str, session: str = "s1", tags=()):
    return make_episode({"type": "finding", "content": content, "session": session, "agent": "a",
                         "tags": list(tags)})


def _summed(episode, pattern_words, thresholds, weight) -> bool:
    """The definition: every word the content shares weighed, then summed (tags file an episode; they do
    not say what happened)."""
    shared = content_words(episode.content) & pattern_words
    if len(shared) < thresholds.relevance_min_shared:
        return False
    return sum(weight(w) for w in shared) >= RELEVANT_WEIGHT


def test_relevance_stopped_early_is_the_sum_of_every_shared_word():
    rnd = random.Random(5)
    store = "".join(f'{{"content": "{" ".join(rnd.sample(WORDS, 4))}"}}\n' for _ in range(60)).encode()
    for _ in range(400):
        episode = _ep(" ".join(rnd.sample(WORDS, rnd.randint(1, 6))), tags=rnd.sample(WORDS, rnd.randint(0, 2)))
        pattern = content_words(" ".join(rnd.sample(WORDS, rnd.randint(1, 6))))
        thresholds = Thresholds(relevance_min_shared=rnd.choice([1, 2, 3]))
        for weight in (everyday_weight, store_weight(store)):
            assert is_relevant(episode, pattern, thresholds, weight) == \
                _summed(episode, pattern, thresholds, store_weight(store) if weight is not everyday_weight
                        else everyday_weight)


def test_a_weight_without_a_floor_is_summed_word_by_word():
    episode = _ep("retry budget provider load outage")
    pattern = content_words("retry budget provider load outage")
    assert not is_relevant(episode, pattern, Thresholds(), lambda w: 0.1)  # five words at 0.1: not enough
    assert is_relevant(episode, pattern, Thresholds(), lambda w: 0.2)  # 5 x 0.2 reaches it


def test_an_edited_episode_under_a_known_id_is_forged_after_the_genuine_one_was_checked():
    genuine = _ep("the retry budget held provider load flat during the outage", "s2")
    assert not is_forged(genuine)
    edited = genuine.replace(content="the retry budget held provider load flat during the outage, mostly")
    assert edited.id == genuine.id and is_forged(edited)
    other_session = genuine.replace(session="s3")
    assert is_forged(other_session)
    verdict = assess("retry_budget", "cap retries per request", 2, [edited.id], {edited.id: edited}, Thresholds())
    assert verdict.forged == [edited.id]


def _defined_weight(store: bytes, sample: int, word: str) -> float:
    """The weight as defined: counted over head, newline and tail, lower-cased, joined."""
    text = (store[:sample] + b"\n" + store[-sample:]).lower()
    lines = max(1, text.count(b"\n"))
    return 0.25 if lines >= 20 and text.count(word.encode()) > lines / 2 else everyday_weight(word)


def test_store_weights_remembered_per_word_are_those_of_the_sample():
    """Each word weighed once per store, the answer the count over the head, a newline and the tail."""
    rnd = random.Random(11)
    sample = 2048
    store = "\n".join([*("Retry " + " ".join(rnd.choice(WORDS) for _ in range(5)) for _ in range(400)),
                       *("Omega omega " + " ".join(rnd.choice(WORDS) for _ in range(4)) for _ in range(200))]).encode()
    words = WORDS + ["omega", "retri", "y\nretry", "e"]
    first = store
    for _ in range(4):
        weight = store_weight(store, sample)
        answers = {word: weight(word) for word in words}
        assert answers == {word: _defined_weight(store, sample, word) for word in words}
        assert set(answers.values()) == {0.25, 1.0}
        store += ("\n" + " ".join(rnd.sample(WORDS, 5))).encode() * 7  # an append
    other = first.replace(b"Retry", b"Other")  # a store of the same size, weighed after
    assert store_weight(first, sample)("retry") == _defined_weight(first, sample, "retry") == 0.25
    assert store_weight(other, sample)("retry") == _defined_weight(other, sample, "retry") == 1.0
    assert store_weight(first, sample)("omega") == 0.25  # common in the tail alone



def test_tail_counts_carried_across_appends_equal_counting_each_tail_afresh():
    """A word's count in the tail of each version of a growing store, carried over from the version before
    (the appended bytes and the partial lines at both ends read), equals counting that tail whole: appends
    of any size, cut inside a line or a word, words that overlap themselves, tails with one newline or none,
    and versions that rewrite the tail instead of appending to it."""
    from flowgit import evidence

    rnd = random.Random(17)
    words = [b"aa", b"aba", b"retry", b"a", b"ab", b"queue", b"x", b""]
    letters = [b"a", b"b", b"a", b" ", b"\n", b"retry", b"queue ", b"aa", b"x"]
    carried = 0
    for _ in range(300):
        sample = rnd.choice([8, 16, 64])
        store = b"".join(rnd.choice(letters) for _ in range(rnd.randint(sample, 3 * sample)))
        evidence._TailCounts._last = None
        for _ in range(rnd.randint(2, 8)):
            tail = store[-sample:]
            counts = evidence._TailCounts.for_tail(tail, len(store) - sample)
            carried += counts._carried is not None
            for word in rnd.sample(words, rnd.randint(1, len(words))):
                assert counts.count(word) == tail.count(word), (store, sample, word)
            if rnd.random() < 0.2:  # not an append: a rewritten line near the end (another branch, a rebase)
                at = rnd.randrange(max(1, len(store) - sample), len(store))
                store = store[:at] + rnd.choice([b"a", b"b", b"\n", b"x"]) + store[at + 1:] + rnd.choice(letters)
                continue
            store += b"".join(rnd.choice(letters) for _ in range(rnd.randint(0, sample + 4)))
    assert carried > 150  # many versions continued the tail before them: the carried counts were compared


def test_store_weights_of_a_growing_store_stay_those_of_its_sample():
    rnd = random.Random(23)
    sample = 512
    store = "\n".join(" ".join(rnd.choice(WORDS) for _ in range(6)) for _ in range(300)).encode() + b"\n"
    for _ in range(30):
        weight = store_weight(store, sample)
        for word in rnd.sample(WORDS + ["omega"], 6):
            assert weight(word) == _defined_weight(store, sample, word), word
        line = ("omega " * rnd.randint(1, 4) + " ".join(rnd.sample(WORDS, 3))).encode()
        store += (line + b"\n") * rnd.randint(1, 9)


def _episode(content: str, session: str, agent: str):
    return make_episode({"type": "finding", "content": content, "session": session, "agent": agent, "tags": []})


RETRIES = ("retries multiplied provider load", "outage retries multiplied the provider load",
           "provider load multiplied by retries again")


def test_the_episodes_a_change_appends_are_one_source_whatever_agents_or_sessions_they_name():
    th = Thresholds()
    a, b, c = (_episode(text, f"s{n}", f"agent-{n}") for n, text in enumerate(RETRIES))
    store = {e.id: e for e in (a, b, c)}
    appended = assess("p", "retries multiply provider load", 2, [a.id, b.id], store, th, batch={a.id, b.id})
    assert not appended.enough and appended.independent == 1
    committed = assess("p", "retries multiply provider load", 2, [a.id, b.id], store, th)
    assert committed.enough and committed.independent == 2  # the same episodes, committed earlier: two sources
    mixed = assess("p", "retries multiply provider load", 3, [a.id, b.id, c.id], store, th, batch={c.id})
    assert mixed.enough and mixed.independent == 3  # two committed sources and this change's


def test_session_and_agent_names_compare_as_identities():
    from flowgit.evidence import independent_contradiction, source_key
    from flowgit.continuity.patterns import parse_pattern

    th = Thresholds()
    spellings = ["sess-sat", "SESS-SAT", " sess-sat ", "s\u0435ss-sat", "ｓｅｓｓ-sat", "sess\u200b-sat", "sess.sat",
                 "SESS_SAT", "sess\u00a0sat", "sess\u2063-sat"]
    eps = [_episode(RETRIES[n % 3] + f" #{n}", session, "agent-a") for n, session in enumerate(spellings)]
    assert len({source_key(e) for e in eps}) == 1
    store = {e.id: e for e in eps}
    assert assess("p", "retries multiply provider load", 2, [e.id for e in eps], store, th).independent == 1
    other = _episode(RETRIES[0] + " elsewhere", "sess-sun", "agent-a")
    store[other.id] = other
    assert assess("p", "retries multiply provider load", 2, [eps[0].id, other.id], store, th).enough
    proven = parse_pattern(f"!! retry: retries multiply provider load | 3x (R) [evidence: {eps[0].id}]")
    echo = _episode("retries multiply provider load broke down after all", "SESS-SAT", "Agent-A")
    fresh = _episode("retries multiply provider load broke down after all", "sess-mon", "agent-a")
    store.update({echo.id: echo, fresh.id: fresh})
    assert independent_contradiction(proven, [echo.id], store)  # the chain's own source, typed differently
    assert independent_contradiction(proven, [fresh.id], store) == []  # another session: independent


def test_an_appended_episode_naming_an_earlier_episodes_source_is_that_source_again():
    """A wrap that appends to the session (and agent) of an episode already in the store adds no source:
    two episodes of ``solo``/``bob`` stay one, however the second one arrived."""
    th = Thresholds()
    first = _episode(RETRIES[0], "solo", "bob")
    again = _episode(RETRIES[1], "solo", "bob")
    other = _episode(RETRIES[2], "s-a", "alice")
    store = {e.id: e for e in (first, again, other)}
    both = assess("p", "retries multiply provider load", 2, [first.id, again.id], store, th, batch={again.id})
    assert not both.enough and both.independent == 1
    three = assess("p", "retries multiply provider load", 3, [first.id, again.id, other.id], store, th,
                   batch={again.id})
    assert three.independent == 2 and not three.enough and three.sources == 2
    # and the batch joins every earlier source it names: all of those count once together
    mixed = _episode(RETRIES[2] + " too", "s-a", "alice")
    store[mixed.id] = mixed
    joined = assess("p", "retries multiply provider load", 3, [first.id, other.id, again.id, mixed.id], store, th,
                    batch={again.id, mixed.id})
    assert joined.independent == 1


def test_an_episode_naming_no_agent_is_one_with_its_sessions_other_episodes():
    th = Thresholds()
    named = _episode(RETRIES[0], "S1", "claude")
    bare = _episode(RETRIES[1], "S1", "")
    other = _episode(RETRIES[2], "S2", "")
    store = {e.id: e for e in (named, bare, other)}
    assert assess("p", "retries multiply provider load", 2, [named.id, bare.id], store, th).independent == 1
    assert assess("p", "retries multiply provider load", 2, [named.id, other.id], store, th).enough


def test_a_yearless_demotion_date_is_read_against_the_change_not_the_calendar(monkeypatch):
    """A history's verdict must not move with the clock: `[demoted Dec 2: …]` written on 2026-12-02 is that
    day when audited a year later, and a note written a day ahead of the commit's zone is still that day."""
    from datetime import date

    import flowgit.dates as dates
    from flowgit.continuity.patterns import parse_pattern
    from flowgit.evidence import demoted_on

    p = parse_pattern("!! retry_budget: cap retries | 2x (RELIABILITY) [evidence: ep-1] "
                      "[demoted Dec 2: the cap did not hold (ep-2)]")
    monkeypatch.setattr(dates, "today", lambda: date(2027, 12, 5))
    assert demoted_on(p, date(2026, 12, 2)) == date(2026, 12, 2)
    assert demoted_on(p, date(2026, 12, 1)) == date(2026, 12, 2)
    assert demoted_on(p) == date(2027, 12, 2)  # without a change to read against: the nearest to today


def test_an_episode_is_recorded_on_its_utc_day_whatever_offset_it_is_written_with():
    """Demotions, the change's day and staleness are all UTC days: an instant hours before a demotion,
    written as the next day at +23:59, must not count as recorded after it."""
    from datetime import date

    from flowgit.continuity.patterns import parse_pattern
    from flowgit.evidence import after_demotion, recorded_on

    def at(ts: str):
        return make_episode({"type": "finding", "content": "retry budget held", "session": "s9", "agent": "a",
                             "ts": ts})

    early = at("2026-12-03T00:30:00+23:59")  # 2026-12-02 00:31 UTC
    assert recorded_on(early) == date(2026, 12, 2)
    assert recorded_on(at("2026-12-02T00:31:00Z")) == date(2026, 12, 2)
    assert recorded_on(at("2026-12-01T23:00:00-05:00")) == date(2026, 12, 2)  # 04:00 UTC the next day
    assert recorded_on(at("0001-01-01T00:00:00+23:59")) == date.min  # shifted before the first day: kept
    assert recorded_on(at("9999-12-31T23:59:00-23:59")) == date.max
    demoted = parse_pattern("! retry_budget: cap retries per request | 1x [demoted 2026-12-02: ep-0123456789ab]")
    late = at("2026-12-03T00:30:00Z")
    assert after_demotion(demoted, [early.id, late.id], {early.id: early, late.id: late}) == [late.id]


def test_a_stem_is_counted_in_the_store_in_every_form_it_stands_for():
    """"retries" and "retried" stem to "retry": a store whose every line says one of them makes "retry" an
    everyday word there, though no line holds the bytes `retry`."""
    from flowgit.evidence import COMMON_WEIGHT, store_weight

    lines = [f'{{"content": "the client retries call {n} and retried it"}}' for n in range(30)]
    weight = store_weight(("\n".join(lines) + "\n").encode())
    assert weight("retry") == COMMON_WEIGHT
    assert weight("budget") > COMMON_WEIGHT  # a word the store does not say stays rare


def test_a_yearless_demotion_date_is_never_read_as_next_year():
    """`[demoted Jan 5: …]` read on a December day is the January before it, not the next one: a chain
    recorded since then counts, as it should."""
    from datetime import date

    from flowgit.continuity.patterns import parse_pattern
    from flowgit.evidence import demoted_on

    p = parse_pattern("!! retry_budget: cap retries | 2x (RELIABILITY) [evidence: ep-1] "
                      "[demoted Jan 5: the cap did not hold (ep-2)]")
    assert demoted_on(p, date(2026, 12, 2)) == date(2026, 1, 5)
    assert demoted_on(p, date(2027, 1, 4)) == date(2027, 1, 5)  # a day or two ahead: time zones, not a year back


def _dated(content: str, session: str, agent: str, ts: str):
    return make_episode({"type": "finding", "content": content, "session": session, "agent": agent, "tags": [],
                         "ts": ts})


def test_evidence_since_a_demotion_is_counted_as_g103_counts_it():
    """G208 counted a batch of this change's episodes as three sessions, and episodes dated after the change
    as recorded since: both carried a re-graduation G103 alone would not let through."""
    from datetime import datetime, timezone

    from flowgit.continuity.patterns import parse_pattern
    from flowgit.evidence import post_demotion

    th = Thresholds()
    demoted = parse_pattern("!! p: retries multiply provider load | 2x (R) [evidence: ep-0123456789ab] "
                            "[demoted 2026-11-20: it did not hold (ep-0123456789ac)]")
    now = datetime(2026, 12, 2, 12, tzinfo=timezone.utc)
    batch = [_dated(text, f"x{n}", "agent-a", "2026-12-02T10:00:00Z") for n, text in enumerate(RETRIES)]
    store = {e.id: e for e in batch}
    ids = [e.id for e in batch]
    assert post_demotion(demoted, ids, store, level=3, thresholds=th, in_proven=True, now=now) == []
    one_source = post_demotion(demoted, ids, store, level=3, thresholds=th, in_proven=True, now=now, batch=set(ids))
    assert one_source and "from 1 source(s)" in one_source[0]
    future = [_dated(text, f"f{n}", f"agent-{n}", "2027-06-01T10:00:00Z") for n, text in enumerate(RETRIES)]
    store.update({e.id: e for e in future})
    later = post_demotion(demoted, [e.id for e in future], store, level=3, thresholds=th, in_proven=True, now=now)
    assert later and "0 independent" in later[0]


def test_evidence_recorded_since_a_demotion_counts_though_the_re_raised_line_already_cites_it():
    """Re-raised to 2x on two episodes recorded since its demotion, a pattern graduates on a third: all three
    count. G208 read every id on HEAD's line as the discredited chain, so only the newest one counted; the
    chain from before the demotion, and the contradiction, still count for nothing."""
    from datetime import datetime, timezone

    from flowgit.continuity.patterns import parse_pattern
    from flowgit.evidence import post_demotion

    old = _dated(RETRIES[0], "s0", "agent-0", "2026-11-10T10:00:00Z")
    fresh = [_dated(text, f"s{n}", f"agent-{n}", f"2026-11-2{n + 2}T10:00:00Z") for n, text in enumerate(RETRIES)]
    store = {e.id: e for e in (old, *fresh)}
    raised = parse_pattern(f"!! p: retries multiply provider load | 2x (R) [evidence: {fresh[0].id}, {fresh[1].id}] "
                           f"[demoted 2026-11-20: it did not hold (ep-0123456789ac)]")
    now = datetime(2026, 12, 2, 12, tzinfo=timezone.utc)
    ids = [e.id for e in fresh]
    assert post_demotion(raised, ids, store, level=3, thresholds=Thresholds(), in_proven=True, now=now) == []
    with_old = post_demotion(raised, [old.id, *ids[:2]], store, level=3, thresholds=Thresholds(), in_proven=True,
                             now=now)
    assert with_old and "2 independent episode(s)" in with_old[0]


def test_a_contradiction_recorded_without_a_session_demotes_nothing():
    from flowgit.continuity.patterns import parse_pattern
    from flowgit.evidence import independent_contradiction

    chain = _episode(RETRIES[0], "s1", "agent-a")
    proven = parse_pattern(f"!! retry: retries multiply provider load | 3x (R) [evidence: {chain.id}]")
    from flowgit.episodes import Episode, episode_id

    said = "retries multiply provider load broke down after all"  # written by hand: `episode add` refuses it
    nobody = Episode(episode_id("finding", said, ""), "2026-12-01T10:00:00Z", "finding", said, "", "agent-z")
    somebody = _episode("retries multiply provider load broke down after all", "s7", "agent-z")
    store = {e.id: e for e in (chain, nobody, somebody)}
    assert independent_contradiction(proven, [nobody.id], store)
    assert independent_contradiction(proven, [somebody.id], store) == []


def test_a_demotion_dated_days_before_its_change_is_refused_when_evidence_was_recorded_in_between():
    """A backdated note made the episodes recorded between its date and the demoting commit count as
    recorded since the demotion; a late wrap's note (its session's day) with nothing in between stands."""
    from datetime import date

    from flowgit.checks.identity_rules import _demotion_misdated
    from flowgit.continuity.patterns import parse_pattern

    proven = parse_pattern("!! retry: retries multiply provider load | 3x (R — 2026-11-01) "
                           "[evidence: ep-0123456789ab]")
    today, day = date(2026, 12, 2), date(2026, 11, 23)
    between = _demotion_misdated(day, today, proven, [], {}, lambda: ["ep-4", "ep-5"])
    assert between and "ep-4, ep-5" in between and "recorded since the demotion" in between
    assert _demotion_misdated(day, today, proven, [], {}, lambda: []) is None
    # a day back (inside the time-zone slack) too: today's episodes would count as recorded since
    assert "ep-4" in _demotion_misdated(date(2026, 12, 1), today, proven, [], {}, lambda: ["ep-4"])
    asked = []
    assert _demotion_misdated(today, today, proven, [], {}, lambda: asked.append(1) or ["ep-4"]) is None
    assert not asked  # dated the day of the change: the store is not read (a `ts` set ahead: see G208)


def test_the_stores_own_field_names_and_types_are_not_what_its_episodes_say():
    """Every line says `"session":` and `"type": "finding"`: counted as words, a pattern about sessions lost its
    evidence's relevance (G104) once the store held twenty lines. What the episodes say is still counted."""
    from flowgit.evidence import COMMON_WEIGHT, store_weight

    lines = [json.dumps({"id": f"ep-{n:012x}", "ts": "2026-11-30T10:00:00Z", "type": "finding",
                         "content": f"the cache warmed in run {n}", "session": f"s{n}", "agent": "a",
                         "tags": []}) for n in range(30)]
    weight = store_weight(("\n".join(lines) + "\n").encode())
    for word in ("session", "agent", "type", "tags", "finding", "content"):
        assert weight(word) > COMMON_WEIGHT, word
    assert weight("cache") == COMMON_WEIGHT  # said by every episode: an everyday word here


def test_the_cause_of_a_demotion_is_read_from_every_note_that_speaks_of_it():
    """G206 reads the contradicting episode from any note about the demotion: G208 must read the same cause
    (a cause in a second note, `[demoted-by: ep-…]`, used to leave G208 none)."""
    from flowgit.continuity.patterns import parse_pattern
    from flowgit.evidence import contradictions

    p = parse_pattern("! retry: retries multiply provider load | 2x (R) [evidence: ep-0123456789ab] "
                      "[demoted 2026-10-07: batch traffic broke it] [demoted-by: ep-cccccccccccc]")
    assert p is not None and contradictions(p) == {"ep-cccccccccccc"}


def test_an_id_too_short_to_name_an_episode_says_so():
    from flowgit.evidence import not_in_store

    said = not_in_store(["ep-6e", "ep-000000000000"])
    assert said.startswith("cites episode(s) not in the store: ep-6e, ep-000000000000")
    assert "`ep-6e` too short to name one: give 4 characters or more after `ep-`" in said
    assert "too short" not in not_in_store(["ep-000000000000"])


# Per script: a pattern, an episode recording it fire, and one about something else.
IN_OTHER_SCRIPTS = {
    "russian": ("прогрев_кэша: прогревать кэш товаров до утреннего пика, тогда промахов меньше",
                "снова прогрели кэш товаров до утреннего пика: промахов почти нет",
                "починили кофемашину в офисе во вторник"),
    "japanese": ("キャッシュ予熱: 朝のピーク前に商品キャッシュを予熱するとミスが減る",
                 "今日も朝のピーク前に商品キャッシュを予熱した：ミスが減る",
                 "火曜日にオフィスのコーヒーメーカーを修理した"),
    "chinese": ("预热缓存: 早高峰前预热商品缓存可以减少未命中",
                "今天早高峰前再次预热商品缓存，未命中减少",
                "周二修好了办公室的咖啡机"),
    "korean": ("캐시_예열: 아침 피크 전에 상품 캐시를 예열하면 미스가 줄어든다",
               "오늘도 아침 피크 전에 상품 캐시를 예열했다 미스가 줄었다",
               "화요일에 사무실 커피 머신을 고쳤다"),
    # written without spaces: read as pairs of letter clusters (see flowgit.words)
    "thai": ("อุ่น_แคช: อุ่นแคชก่อนดีพลอยเพื่อให้ดีพลอยเร็วขึ้น",
             "เราอุ่นแคชก่อนดีพลอยแล้วดีพลอยเร็วขึ้นมาก",
             "ซ่อมเครื่องชงกาแฟในออฟฟิศเมื่อวันอังคาร"),
    "lao": ("ອຸ່ນແຄຊ: ອຸ່ນແຄຊກ່ອນປ່ອຍລະບົບເພື່ອໃຫ້ໄວຂຶ້ນ",
            "ພວກເຮົາອຸ່ນແຄຊກ່ອນປ່ອຍລະບົບ ແລະມັນໄວຂຶ້ນຫຼາຍ",
            "ສ້ອມແປງເຄື່ອງກາເຟໃນຫ້ອງການມື້ວັນອັງຄານ"),
    "khmer": ("កំដៅឃ្លាំងសម្ងាត់: កំដៅឃ្លាំងសម្ងាត់មុនពេលដាក់ឱ្យប្រើ ដើម្បីឱ្យលឿនជាងមុន",
              "យើងបានកំដៅឃ្លាំងសម្ងាត់មុនពេលដាក់ឱ្យប្រើ ហើយវាលឿនជាងមុនច្រើន",
              "បានជួសជុលម៉ាស៊ីនកាហ្វេនៅការិយាល័យកាលពីថ្ងៃអង្គារ"),
    "burmese": ("ကက်ရှ်_နွှေး: ထုတ်ဝေမီ ကက်ရှ်ကို ကြိုနွှေးထားလျှင် ပိုမြန်သည်",
                "ထုတ်ဝေမီ ကက်ရှ်ကို ကြိုနွှေးခဲ့ပြီး ပိုမြန်လာသည်",
                "အင်္ဂါနေ့က ရုံးရှိ ကော်ဖီစက်ကို ပြင်ခဲ့သည်"),
}


def test_an_episode_in_another_script_is_about_the_pattern_that_it_records():
    """The words of relevance are letters of any script (Chinese and Japanese read as pairs of characters):
    an episode that records the pattern firing is about it, and one about the office coffee machine is not."""
    for language, (pattern, fired, unrelated) in IN_OTHER_SCRIPTS.items():
        words = content_words(pattern)
        assert is_relevant(_ep(fired), words, Thresholds()), language
        assert not is_relevant(_ep(unrelated), words, Thresholds()), language


def test_an_episode_that_says_the_patterns_name_is_about_it_in_a_store_whose_topic_it_is():
    """In a project about the retry budget, most episodes say `retry` and `budget`, so rarity weighs them as
    everyday words; an episode that says the name and a word of the claim beside it (`the retry budget held,
    capped per request`) is still about `retry_budget`.
    A name of one word, a name's words apart or out of order, and a new claim under the old name are not."""
    from flowgit.evidence import names_it

    store = "\n".join(json.dumps({"content": f"rolled the retry budget out to service {i}, capped per request"})
                      for i in range(30)).encode()
    weight = store_weight(store)
    fired = [_ep("the retry budget held in the outage, capped", "x1"), _ep("retry budgets capped again", "x2")]
    for ep in fired:
        assert not is_relevant(ep, content_words("retry_budget cap retries per request with a budget"),
                               Thresholds(), weight)  # (rarity alone: every shared word is the store's topic)
        assert names_it(ep, "retry_budget", "cap retries per request with a budget")
    verdict = assess("retry_budget", "cap retries per request with a budget", 2, [e.id for e in fired],
                     {e.id: e for e in fired}, Thresholds(), weight=weight)
    assert not verdict.unrelated and verdict.enough
    assert not names_it(_ep("a budget for each retry"), "retry_budget", "cap retries")  # apart, out of order
    assert not names_it(_ep("the cache held"), "cache", "cache balances")  # one word: rarity decides
    # a name of everyday words, or one an episode says without a word of the claim, names nothing
    assert not names_it(_ep("ran tests on the footer"), "ran_tests", "auth tokens in localStorage are safe")
    assert not names_it(_ep("the retry budget meeting moved"), "retry_budget", "auth tokens are safe from XSS")
    # the name's own words, said again in the claim, are not a word of the claim
    assert not names_it(_ep("the retry budget meeting moved"), "retry_budget", "the retry budget can be disabled")
    ran = [_ep("ran tests on the css tweak for the footer", "s1"), _ep("we ran tests for the footer again", "s2")]
    assert assess("ran_tests", "auth tokens in localStorage are safe from XSS", 2, [e.id for e in ran],
                  {e.id: e for e in ran}, Thresholds(), weight=weight).unrelated == [e.id for e in ran]
    claim = assess("retry_budget", "never cap retries", 2, [e.id for e in fired], {e.id: e for e in fired},
                   Thresholds(), weight=weight, claim_only=True)
    assert claim.unrelated  # a new claim kept under the old name is not proved by the name


def test_function_words_and_chance_character_pairs_make_no_episode_about_a_pattern():
    """What two unrelated texts share by chance is no evidence: a function word of another language (Polish
    `jest`/`dla`, Turkish `için`/`bir`, Korean `그리고`, Russian `для`), or a few character pairs (`ログイン` and
    `プラグイン` share `グイン`)."""
    for pattern, unrelated in [("Limit ponowień jest stały dla każdego żądania", "raport jest gotowy dla klienta"),
                               ("Yeniden deneme bütçesi için sabit bir sınır koy", "müşteri için bir rapor hazır"),
                               ("캐시 만료를 줄이고 그리고 재시도 한도를 둔다", "회의를 옮기고 그리고 커피를 샀다"),
                               ("хранить токены сессий для браузера", "купил кофе для команды"),
                               ("プラグインのリトライ回数を制限する", "ログイン画面の色を変えた")]:
        assert not is_relevant(_ep(unrelated), content_words(pattern), Thresholds()), (pattern, unrelated)


def test_one_or_two_everyday_words_of_thai_make_no_episode_about_a_pattern():
    """A Thai word is several pairs of clusters (`ทดสอบ`, "test", is four): each pair weighs an eighth of a word,
    so an episode sharing "test" and "new" (`ใหม่`) with a pattern is not about it, in any store."""
    pattern = content_words("ทดสอบการจำกัดจำนวนการลองใหม่ต่อคำขอ")  # tested limiting retries per request
    unrelated = _ep("ทดสอบเครื่องชงกาแฟใหม่ในออฟฟิศ")  # tested the office's new coffee machine
    assert len(content_words(unrelated.content) & pattern) == 6
    store = "\n".join(json.dumps({"content": f"episode {i} about something else"}) for i in range(30)).encode()
    for weight in (everyday_weight, store_weight(store)):
        assert not is_relevant(unrelated, pattern, Thresholds(), weight)
        assert is_relevant(_ep("ทดสอบการจำกัดจำนวนการลองใหม่ต่อคำขออีกครั้ง"), pattern, Thresholds(), weight)


def test_an_episode_in_hindi_or_saved_decomposed_is_about_a_pattern_in_the_same_words():
    import unicodedata

    thresholds = Thresholds()
    hindi = content_words("प्रति अनुरोध पुनःप्रयास सीमित करें")
    assert is_relevant(_ep("पुनःप्रयास सीमित करने से प्रदाता पर भार स्थिर रहा"), hindi, thresholds, everyday_weight)
    german = content_words("Größenänderung bei Lastspitzen")
    saved = unicodedata.normalize("NFD", "die Größenänderung hielt die Lastspitzen ab")
    assert is_relevant(_ep(saved), german, thresholds, everyday_weight)


def test_russian_episodes_in_other_forms_of_the_pattern_s_words_are_about_it():
    pattern = content_words("ограничить повторные запросы на один запрос")
    for text in ("Повторные запросы умножили нагрузку на провайдера",
                 "Ограничение повторных запросов удержало нагрузку на провайдера ровной"):
        assert is_relevant(_ep(text), pattern, Thresholds(), everyday_weight)
    assert not is_relevant(_ep("Команда обсудила бюджет на праздник"), pattern, Thresholds(), everyday_weight)


def test_a_contradiction_must_share_rare_meaning_with_the_pattern_not_two_everyday_words():
    """Demotion's "about the pattern" weighs shared words as G104 does: `short` and `call` are everyday words
    (half of one rare word together), so a chat about a short call is no contradiction of a short-timeout
    rule; an episode sharing `timeout` and `gateway` is."""
    from flowgit.continuity.patterns import Pattern
    from flowgit.evidence import about, independent_contradiction

    rule = Pattern(name="short_timeouts", text="use a short timeout on every call to the payment gateway",
                   level=3, evidence=("ep-1", "ep-2", "ep-3"))
    chat = make_episode({"type": "tension", "content": "the team had a short call about the system today",
                         "session": "s9", "agent": "c"})
    real = make_episode({"type": "tension", "content": "a short gateway timeout aborted slow 3-D Secure checks",
                         "session": "s9", "agent": "c"})
    assert not about(rule, chat) and about(rule, real)
    assert independent_contradiction(rule, [chat.id], {chat.id: chat})[0].startswith("no cited episode is both")
    assert independent_contradiction(rule, [real.id], {real.id: real}) == []
