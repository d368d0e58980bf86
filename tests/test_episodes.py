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
