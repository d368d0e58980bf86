"""The episodic store: content ids, append-only, concurrent writers, torn lines."""

from __future__ import annotations

import json
import multiprocessing
import os

import pytest

from flowgit.episodes import EpisodeStore, episode_id, lookup, make_episode
from flowgit.errors import FlowgitError


def ep(content: str, session: str = "s1", type_: str = "finding", **kw):
    return make_episode({"type": type_, "content": content, "session": session, **kw})


def test_same_episode_twice_is_one(tmp_path):
    store = EpisodeStore(tmp_path / "e.jsonl")
    added, already = store.append([ep("retries cascade")])
    assert len(added) == 1 and not already
    added, already = store.append([ep("retries   cascade"), ep("retries cascade")])
    assert not added and len(already) == 1
    assert len(store.raw().splitlines()) == 1
    assert ep("retries cascade").id == episode_id("finding", "retries cascade", "s1")
    assert ep("retries cascade", session="s2").id != ep("retries cascade").id


def test_torn_line_is_reported_skipped_and_kept(tmp_path):
    path = tmp_path / "e.jsonl"
    store = EpisodeStore(path)
    store.append([ep("first")])
    with path.open("ab") as fh:
        fh.write(b'{"id": "ep-torn", "type": "find')  # a crash mid-write
    store.append([ep("second")])
    episodes, problems = store.read()
    assert [e.content for e in episodes.values()] == ["first", "second"]
    assert [p.line for p in problems] == [2]
    assert b'{"id": "ep-torn", "type": "find\n' in path.read_bytes()  # never rewritten away


def test_lookup_finds_only_real_ids(tmp_path):
    a, b = ep("alpha"), ep(f"mentions {ep('alpha').id} in content")
    data = (a.to_json() + "\n" + b.to_json() + "\n").encode()
    assert set(lookup(data, [a.id, b.id, "ep-nothere"])) == {a.id, b.id}


@pytest.mark.parametrize("bad, field", [
    ({"type": "rumour", "content": "x"}, "type"),
    ({"type": "finding", "content": ""}, "content"),
    ({"type": "finding", "content": "x", "tags": [1]}, "tags"),
    ({"type": "finding", "content": "x", "ts": "yesterday"}, "ts"),
    ({"type": "finding", "content": "x", "colour": "red"}, "colour"),
])
def test_bad_episodes_name_the_field(bad, field):
    with pytest.raises(FlowgitError) as info:
        make_episode(bad, where="<stdin>", line=3)
    assert field in str(info.value) and "<stdin>:3" in str(info.value)


def _writer(args):
    path, worker, count = args
    from flowgit.cli import main

    os.environ["FLOWGIT_SESSION"] = f"w{worker}"
    for i in range(count):
        rc = main(["--store", path, "episode", "add", "--type", "finding", "--content", f"fact {worker}-{i}"])
        assert rc == 0
    return worker


def test_eight_processes_times_500_lose_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = str(tmp_path / ".flow" / "episodes.jsonl")
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(8) as pool:
        assert sorted(pool.map(_writer, [(path, w, 500) for w in range(8)])) == list(range(8))
    lines = open(path, "rb").read().split(b"\n")
    assert lines[-1] == b""
    records = [json.loads(line) for line in lines[:-1]]
    assert len(records) == 4000
    assert len({r["id"] for r in records}) == 4000


def test_locating_a_few_ids_by_substring_search_matches_the_pattern_scan(monkeypatch):
    """A few ids are found one substring search each; the answer is the regular expression's, byte for byte."""
    import random

    from flowgit import episodes

    pieces = ['{"id": "ep-a", "type": "finding", "content": "c", "session": "s"}',
              '{"id":"ep-ab","type":"outcome","content":"d"}', '{"type": "finding", "content": "\\"ep-a\\"", "id" :\n "ep-b"}',
              '"id": "ep-a"', '"ep-a"', '{"id":', ' "ep-b"}', '{"id": "id": "ep-a"}', "\n", "\n", " ", ":", '"id"',
              '{"id": "ep-a", "type": "nope", "content": "c"}', '{"id": "ep-b", "type": "tension", "content": ""}']
    rnd = random.Random(9)
    for _ in range(3000):
        data = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 10))).encode()
        ids = rnd.sample(["ep-a", "ep-ab", "ep-b", "id"], rnd.randint(1, 3))
        fast = episodes.locate(data, ids)
        monkeypatch.setattr(episodes, "FEW_IDS", 0)
        assert fast == episodes.locate(data, ids), (data, ids)
        monkeypatch.undo()


STORE_PIECES = ['{"id": "ep-a", "type": "finding", "content": "c", "session": "s"}',
                '{"id":"ep-ab","type":"outcome","content":"d"}',
                '{"type": "finding", "content": "\\"ep-a\\"", "id" :\n "ep-b"}',
                '"id": "ep-a"', '"ep-a"', '{"id":', ' "ep-b"}', '{"id": "id": "ep-a"}', "\n", "\n", "\n", " ", ":",
                '"id"', '{"id": "ep-a", "type": "nope", "content": "c"}',
                '{"id": "ep-b", "type": "tension", "content": ""}', '{"id": "ep-b", "type": "decision", "content": "x"}',
                '{"content": "\\"id\\": \\"ep-ab\\"", "type": "finding", "id": "ep-ab"}', '"', '\\', 'id"']


def test_the_store_index_answers_as_locate_on_any_bytes_and_on_any_append():
    """The index's lookups equal :func:`locate`'s, for a store built whole and for one extended by appends cut
    anywhere (inside a key, a value, or a line), for a few ids and for many."""
    import random

    from flowgit import episodes

    rnd = random.Random(11)
    names = ["ep-a", "ep-ab", "ep-b", "id", 'ep-"a', ""]
    for _ in range(1500):
        data = "".join(rnd.choice(STORE_PIECES) for _ in range(rnd.randint(0, 14))).encode()
        index = None
        for cut in sorted(rnd.sample(range(len(data) + 1), min(len(data) + 1, rnd.randint(1, 4)))) + [len(data)]:
            part = data[:cut]
            index = episodes.StoreIndex(part, index if index is not None and index.extends(part) else None)
            for size in (1, 3, 6):
                ids = rnd.sample(names, min(size, len(names)))
                assert index.locate(ids) == episodes.locate(part, ids), (part, ids)
        assert index.locate(names) == episodes.StoreIndex(data).locate(names)


def test_a_remembered_store_index_is_used_only_for_its_own_bytes():
    """An index is found again by blob id, but a different store under the same id (a caller's mistake) is
    indexed afresh: a stale index never answers for other bytes."""
    from flowgit import episodes

    a = episode_id("finding", "first", "s1")
    b = episode_id("finding", "second", "s2")
    one = (json.dumps({"id": a, "type": "finding", "content": "first", "session": "s1"}) + "\n").encode()
    two = one + (json.dumps({"id": b, "type": "finding", "content": "second", "session": "s2"}) + "\n").encode()
    first = episodes.store_index(one, "same-oid")
    assert set(first.locate([a, b])) == {a}
    again = episodes.store_index(two, "same-oid")
    assert again is not first and set(again.locate([a, b])) == {a, b}
    assert episodes.store_index(two, "same-oid") is again
    extended = episodes.store_index(two + b"garbage\n", "other-oid")  # built on the remembered prefix
    assert set(extended.locate([a, b])) == {a, b}
