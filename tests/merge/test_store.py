"""The store merge: every line of both sides once, ours first, duplicates of a union merge gone."""

from __future__ import annotations

from hypothesis import given, strategies as st

from flowgit.episodes import parse_store
from flowgit.merge.store import merge_store
from tests.merge.fixtures import EPISODES


def lines(*eps) -> bytes:
    return b"".join(e.to_json().encode() + b"\n" for e in eps)


def test_both_sides_appended_each_line_once_ours_first():
    base = lines(*EPISODES[:3])
    ours = base + lines(EPISODES[3], EPISODES[5])
    theirs = base + lines(EPISODES[4], EPISODES[5])  # EPISODES[5] written on both machines
    merged = merge_store(ours, theirs)
    assert merged == ours + lines(EPISODES[4])
    assert merged.startswith(base) and merged.startswith(ours)


def test_union_duplicates_and_unreadable_lines_are_kept_once():
    torn = b'{"id": "ep-broken", "content": "half'
    ours = lines(EPISODES[0], EPISODES[0]) + torn + b"\n" + b"not json\n"
    theirs = lines(EPISODES[1]) + b"not json\n" + torn
    merged = merge_store(ours, theirs)
    assert merged == lines(EPISODES[0]) + torn + b"\nnot json\n" + lines(EPISODES[1])


@given(st.lists(st.sampled_from(EPISODES), max_size=8), st.lists(st.sampled_from(EPISODES), max_size=8),
       st.lists(st.sampled_from(EPISODES), max_size=8))
def test_any_two_sides_merge_to_every_episode_exactly_once(base, ours_extra, theirs_extra):
    ours, theirs = lines(*base, *ours_extra), lines(*base, *theirs_extra)
    merged = merge_store(ours, theirs)
    ids = [ln.split(b'"id": "')[1].split(b'"')[0] for ln in merged.splitlines()]
    assert len(ids) == len(set(ids))
    assert set(parse_store(merged)[0]) == set(parse_store(ours)[0]) | set(parse_store(theirs)[0])
    assert merge_store(merged, merged) == merged


def test_a_torn_line_and_the_whole_episode_after_it_both_stay():
    """A crash tore the last line; the same episode was then appended whole. Keyed by the first id found,
    the merge kept the torn copy and dropped the readable one (and sync pushed that store)."""
    whole = b'{"id": "ep-59bf8f52f3f9", "ts": "2026-11-30T10:00:00Z", "type": "finding", "content": "noon"}'
    torn = whole[:40]
    ours = b"A\n" + torn + b"\n" + whole + b"\n"
    theirs = b"A\n" + b'{"id": "ep-a1178e42806f", "content": "theirs"}\n'
    merged = merge_store(ours, theirs)
    assert merged.startswith(ours)  # ours stays a prefix: nothing of it is dropped
    assert merged.count(whole) == 1 and merged.count(torn + b"\n") == 1 and b"ep-a1178e42806f" in merged


def test_the_whole_episode_is_kept_when_the_torn_copy_comes_first_from_theirs():
    whole = b'{"id": "ep-1", "content": "noon"}'
    merged = merge_store(b'{"id": "ep-1", "cont\n', whole + b"\n")
    assert merged == b'{"id": "ep-1", "cont\n' + whole + b"\n"


def test_two_readable_copies_of_one_episode_still_collapse():
    line = b'{"id": "ep-1", "content": "noon"}'
    assert merge_store(line + b"\n" + line + b"\n", line + b"\n") == line + b"\n"


def test_a_blank_line_of_ours_stays_where_it_is():
    """An editor left a blank line in the committed store (the gate accepts it): dropping it rewrote ours, the
    gate refused the merged result (G701) and no sync could integrate the two clones again."""
    ours = lines(EPISODES[0]) + b"\n" + lines(EPISODES[1]) + b"  \r\n"
    theirs = lines(EPISODES[0]) + b"\n" + lines(EPISODES[2]) + b"\n"
    merged = merge_store(ours, theirs)
    assert merged == ours + lines(EPISODES[2])  # ours is the first bytes, theirs' blank line adds nothing


def test_a_line_one_side_removed_since_the_base_stays_removed():
    """A redaction (a leaked secret's line removed with an override) on one side; the other side only kept the
    line and appended its own: a union brought the secret back, the three-way merge keeps it out."""
    base = lines(*EPISODES[:3])
    redacted = lines(EPISODES[0], EPISODES[2])
    appended = base + lines(EPISODES[3])
    assert merge_store(appended, redacted, base) == lines(EPISODES[0], EPISODES[2], EPISODES[3])
    assert merge_store(redacted, appended, base) == redacted + lines(EPISODES[3])


def test_lines_either_side_added_are_kept_whole_and_a_completed_torn_line_is_no_removal():
    torn = b'{"id": "ep-1", "cont'
    base = lines(EPISODES[0]) + torn + b"\n"
    ours = lines(EPISODES[0]) + torn + b'ent": "noon"}\n'  # a side that wrote onto the torn line
    theirs = base + lines(EPISODES[1])
    merged = merge_store(ours, theirs, base)
    assert merged.startswith(ours) and merged.count(torn) == 2 and lines(EPISODES[1]) in merged
