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



@pytest.mark.parametrize("line, said", [
    ({"id": "ep-1", "type": "insight", "content": "x"},
     '`type` "insight" is not one of finding, decision, observation, connection, outcome, tension'),
    ({"id": "ep-1", "type": ["finding"], "content": "x"}, '`type` ["finding"] is not one of finding,'),
    ({"id": "ep-1", "type": "\x1b[8mfinding", "content": "x"}, '`type` "\\u001b[8mfinding" is not one of'),
    ({"id": "ep-1", "content": "x"}, "no `type`"),
    ({"id": "ep-1", "type": "finding"}, "no `content` text"),
    ({"id": "ep-1", "type": "finding", "content": 3}, "`content` is not a string"),
])
def test_a_line_that_is_no_episode_says_which_field_is_wrong(tmp_path, line, said):
    """A line skipped as no episode names the field at fault and, for a type, the types there are (before, a
    type outside them read "missing type or content", though both were there)."""
    path = tmp_path / "e.jsonl"
    path.write_text(json.dumps(line) + "\n")
    episodes, problems = EpisodeStore(path).read()
    assert episodes == {} and [p.line for p in problems] == [1]
    assert said in problems[0].message, problems[0].message

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


def test_many_ids_are_found_through_the_index_as_the_pattern_finds_them(monkeypatch):
    """Past MANY_IDS, :func:`locate` lists every key once instead of one alternative per id: same answers."""
    import random

    from flowgit import episodes

    rnd = random.Random(5)
    names = ["ep-a", "ep-ab", "ep-b", "id", 'ep-"a', ""] + [f"ep-{n}" for n in range(40)]
    hits = 0
    for _ in range(400):
        data = "".join(rnd.choice(STORE_PIECES + [f'{{"id": "ep-{n}", "type": "finding", "content": "x"}}\n'
                                                   for n in range(40)]) for _ in range(rnd.randint(0, 30))).encode()
        ids = rnd.sample(names, rnd.randint(4, len(names)))
        monkeypatch.setattr(episodes, "MANY_IDS", 10 ** 9)
        by_pattern = episodes.locate(data, ids)
        monkeypatch.setattr(episodes, "MANY_IDS", 0)
        assert episodes.locate(data, ids) == by_pattern, (data, ids)
        hits += len(by_pattern)
    assert hits > 400  # the stores held the ids asked for: the two searches were compared on finds


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


def test_store_indexes_that_share_a_table_each_answer_for_their_own_bytes():
    """A prefix extended twice in different ways (two branches of history), and extended again after a later
    extension: every index, old or new, answers exactly as :func:`locate` over its own bytes."""
    import random

    from flowgit import episodes

    rnd = random.Random(29)
    names = ["ep-a", "ep-ab", "ep-b", "id", 'ep-"a', ""]
    for _ in range(600):
        def piece() -> bytes:
            return "".join(rnd.choice(STORE_PIECES) for _ in range(rnd.randint(0, 6))).encode()

        base = episodes.StoreIndex(piece())
        indexes = [base]
        for _ in range(rnd.randint(2, 5)):  # each grows from any earlier index: the newest, or an older one
            parent = rnd.choice(indexes)
            indexes.append(episodes.StoreIndex(parent.data + piece(), parent))
        for index in indexes:
            ids = rnd.sample(names, rnd.randint(1, len(names)))
            assert index.locate(ids) == episodes.locate(index.data, ids), (index.data, ids)


def test_finds_remembered_by_one_index_answer_only_where_another_holds_those_bytes():
    """Indexes of one history remember what they found; asked in any order, each still answers exactly as
    :func:`locate` over its own bytes: a find on a line a longer store ended, on a last line an append then
    continued, or on a branch the asking index does not hold is never taken for its answer."""
    import random

    from flowgit import episodes

    rnd = random.Random(41)
    names = ["ep-a", "ep-ab", "ep-b", "id", 'ep-"a', ""]
    remembered = 0
    for _ in range(500):
        def piece() -> bytes:
            text = "".join(rnd.choice(STORE_PIECES) for _ in range(rnd.randint(0, 6))).encode()
            return text[:rnd.randint(0, len(text))] if rnd.random() < 0.3 else text  # cut inside a line

        indexes = [episodes.StoreIndex(piece())]
        for _ in range(rnd.randint(2, 5)):
            parent = rnd.choice(indexes)
            indexes.append(episodes.StoreIndex(parent.data + piece(), parent))
        for _ in range(12):  # each asked after others have remembered their finds
            index = rnd.choice(indexes)
            ids = rnd.sample(names, rnd.randint(1, len(names)))
            assert index.locate(ids) == episodes.locate(index.data, ids), (index.data, ids)
        remembered += sum(len(ix._shared.hits) for ix in indexes)
    assert remembered > 50  # finds were remembered and offered to the other indexes


def test_a_find_on_a_last_line_an_append_continues_is_not_taken_by_the_longer_store():
    from flowgit import episodes

    a = episode_id("finding", "first", "s1")
    line = json.dumps({"id": a, "type": "finding", "content": "first", "session": "s1"})
    short = line.encode()  # no newline: the next append may continue this very line
    index = episodes.StoreIndex(short)
    assert set(index.locate([a])) == {a}
    longer = short + b' trailing garbage"\n'  # the same line, now not an episode
    grown = episodes.StoreIndex(longer, index)
    assert grown.locate([a]) == episodes.locate(longer, [a]) == {}


def test_a_second_branch_of_a_store_takes_no_find_from_the_first_branch():
    from flowgit import episodes

    def line(content: str) -> bytes:
        ident = episode_id("finding", content, "s1")
        return (json.dumps({"id": ident, "type": "finding", "content": content, "session": "s1"}) + "\n").encode()

    prefix = line("shared")
    x = episode_id("finding", "only on one branch", "s1")
    base = episodes.StoreIndex(prefix)
    one = episodes.StoreIndex(prefix + line("only on one branch"), base)
    assert set(one.locate([x])) == {x}  # remembered by the chain ``base`` and ``one`` share
    other = prefix + line("the other branch: a longer line than the first one")
    two = episodes.StoreIndex(other, base)
    assert two.locate([x]) == episodes.locate(other, [x]) == {}
    assert base.locate([x]) == {}


def test_a_store_index_built_on_a_proven_prefix_answers_as_one_built_afresh():
    """The caller's word that ``data`` extends a remembered store is taken only for those very bytes: a
    remembered index of other bytes under the named id is passed over, and the answers stay exact."""
    from flowgit import episodes

    a = episode_id("finding", "first", "s1")
    b = episode_id("finding", "second", "s2")
    one = (json.dumps({"id": a, "type": "finding", "content": "first", "session": "s1"}) + "\n").encode()
    two = one + (json.dumps({"id": b, "type": "finding", "content": "second", "session": "s2"}) + "\n").encode()
    episodes._INDEXES.clear()
    first = episodes.store_index(one, "oid-one")
    grown = episodes.store_index(two, "oid-two", prefix=("oid-one", one))
    assert grown.locate([a, b]) == episodes.locate(two, [a, b]) and set(grown.locate([a, b])) == {a, b}
    assert first.locate([a, b]) == episodes.locate(one, [a, b])  # the prefix still answers for itself
    # The word is taken for the very bytes object only: here it names equal bytes, not the ones compared, and
    # the data does not extend them. Taken, the index would miss ``z``, whose line stands where ``a``'s was.
    z = "ep-" + "z" * (len(a) - 3)
    swapped = one.replace(a.encode(), z.encode())
    assert len(swapped) == len(one) and not (swapped + two).startswith(one)
    lied = episodes.store_index(swapped + two, "oid-three", prefix=("oid-one", one[:1] + one[1:]))
    assert lied.locate([z, a, b]) == episodes.locate(swapped + two, [z, a, b]) and z in lied.locate([z])


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


def test_show_takes_an_unambiguous_start_of_an_id_and_names_the_ambiguous(tmp_path):
    store = EpisodeStore(tmp_path / "e.jsonl")
    first, second = ep("one", type_="decision"), ep("two", type_="decision")
    store.append([first, second])
    assert [e.id for e in store.show([first.id])] == [first.id]
    assert [e.id for e in store.show([second.id[:8], first.id[3:11], second.id])] == [second.id, first.id]
    with pytest.raises(FlowgitError, match="no episode ep-zzzz"):
        store.show(["ep-zzzz"])
    with pytest.raises(FlowgitError, match="no episode ep-"):
        store.show(["ep-"])  # too short to be a start a person means
    line = json.dumps({"id": first.id[:9] + "ffff", "ts": "2026-11-01T00:00:00Z", "type": "decision",
                       "content": "twin", "session": "s1"})
    with (tmp_path / "e.jsonl").open("a", encoding="utf-8") as out:
        out.write(line + "\n")
    with pytest.raises(FlowgitError, match=f"`{first.id[:9]}` starts 2 episode ids"):
        store.show([first.id[:9]])
    assert [e.content for e in store.show([first.id[:9] + "ff"])] == ["twin"]


def test_show_of_an_id_whose_line_does_not_read_is_a_clear_error(tmp_path):
    store = EpisodeStore(tmp_path / "e.jsonl")
    good = ep("one", type_="decision")
    store.append([good])
    with (tmp_path / "e.jsonl").open("a", encoding="utf-8") as out:
        out.write('{"id": "ep-0123456789ab", "type": "finding", "content": "torn\n')
    with pytest.raises(FlowgitError, match="ep-0123456789ab is named in the store on a line that does not read"):
        store.show(["ep-0123456789ab"])
    with pytest.raises(FlowgitError, match="does not read"):
        store.show(["ep-0123"])
    assert [e.id for e in store.show([good.id])] == [good.id]


def test_a_lone_surrogate_escape_in_the_store_is_a_skipped_line_not_a_crash(tmp_path):
    """JSON's `\\ud800` decodes to a string no later print or write can encode: the line is unreadable."""
    path = tmp_path / "e.jsonl"
    store = EpisodeStore(path)
    store.append([ep("first")])
    with path.open("ab") as fh:
        fh.write(b'{"id": "ep-000000000000", "type": "finding", "content": "odd \\ud800 text", "session": "s"}\n')
    episodes, problems = store.read()
    assert [e.content for e in episodes.values()] == ["first"]
    assert [p.line for p in problems] == [2] and "lone surrogate" in problems[0].message
    paired = '{"id": "ep-000000000001", "type": "finding", "content": "smile \\ud83d\\ude00", "session": "s"}\n'
    with path.open("a") as fh:
        fh.write(paired)  # a pair is one character beyond U+FFFF: text
    assert [e.content for e in store.read()[0].values()] == ["first", "smile \U0001F600"]


@pytest.mark.parametrize("field, data", [
    ("content", {"type": "finding", "content": "bad \ud800 x"}),
    ("session", {"type": "finding", "content": "x", "session": "caf\udce9"}),  # argv bytes that are not UTF-8
    ("agent", {"type": "finding", "content": "x", "agent": "\udfff"}),
    ("tags", {"type": "finding", "content": "x", "tags": ["ok", "\ud801"]}),
])
def test_an_episode_field_that_is_not_text_is_named(field, data):
    with pytest.raises(FlowgitError, match=f"field `{field}` holds a character that is not text"):
        make_episode(data, where="<stdin>", line=1, default_session="s")


def test_an_episode_from_the_command_line_is_refused_by_the_option_typed():
    import pytest

    from flowgit.episodes import make_episode
    from flowgit.errors import FlowgitError

    with pytest.raises(FlowgitError) as caught:
        make_episode({"type": "finding", "content": "x", "session": "s", "ts": "yesterday"}, where="options")
    assert caught.value.message.startswith("option `--ts` is not an ISO-8601 time")
    with pytest.raises(FlowgitError) as caught:
        make_episode({"content": "x", "session": "s"}, where="<stdin>", line=3)
    assert caught.value.message == "field `type` is missing" and caught.value.line == 3


def test_an_id_from_the_command_line_names_its_option_and_one_from_the_environment_its_variable(monkeypatch):
    """`option` of the JSON error is the option typed (never "options"); a value the environment gave is blamed
    on the variable, not on an option nobody typed."""
    from flowgit.episodes import make_episode
    from flowgit.errors import FlowgitError, error_dict

    with pytest.raises(FlowgitError) as typed:
        make_episode({"type": "finding", "content": "x", "session": "a\nb"}, where="options")
    assert error_dict(typed.value.message, path=typed.value.path)["error"]["option"] == "--session"
    with pytest.raises(FlowgitError) as blank:
        make_episode({"type": "finding", "content": "x", "session": " "}, where="options")
    assert blank.value.path == "--session"
    monkeypatch.setenv("FLOWGIT_AGENT", "a\tb")
    with pytest.raises(FlowgitError) as env:
        make_episode({"type": "finding", "content": "x", "session": "s"}, where="options", default_agent="a\tb")
    assert "$FLOWGIT_AGENT" in env.value.message and env.value.path is None and "--agent" in env.value.fix


MULTILINE = ("Root cause of INC-12:\n- retries x5 per request\n- no jitter\n\n"
             "```python\nif attempt > MAX:\n    raise Budget()\n```")


def test_content_of_several_lines_is_stored_as_one_and_the_caller_is_told():
    notes: list[str] = []
    stored = make_episode({"type": "finding", "content": MULTILINE, "session": "s1"}, notes=notes)
    assert stored.content == " ".join(MULTILINE.split())  # the on-disk format is unchanged: one line of words
    assert stored.id == episode_id("finding", MULTILINE, "s1")
    assert notes == [f"{stored.id}: its content's 8 lines were joined into one line (an episode's content is "
                     "stored as one line of words: every word is kept, in order; line breaks, indentation and "
                     "list or code layout are not) — to keep layout, put it in a file and cite the file in the "
                     "episode"]
    make_episode({"type": "finding", "content": "  one line, spaced  \n", "session": "s1"}, notes=notes)
    assert len(notes) == 1  # one line with a trailing newline joins nothing


def test_episode_add_says_it_joined_the_lines_on_every_way_in(run, repo):
    run(repo, "init", "--no-hooks")
    by_argument = json.loads(run(repo, "episode", "add", "--json", "--type", "finding", "--session", "s1",
                                 MULTILINE).out)
    assert "8 lines were joined into one line" in by_argument["warnings"][0]
    assert by_argument["added"][0]["content"].startswith("Root cause of INC-12: - retries x5 per request - no")
    line = json.dumps({"type": "decision", "content": "steps:\n1. drain\n2. resize", "session": "s1"})
    human = run(repo, "episode", "add", stdin=line + "\n" + json.dumps({"type": "finding", "content": "flat",
                                                                        "session": "s1"}) + "\n")
    assert human.code == 0
    warnings = [ln for ln in human.out.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and "its content's 3 lines were joined" in warnings[0]


def test_a_wrap_says_it_joined_the_lines_of_a_plan_episode(run, repo):
    run(repo, "init", "--commit", "--no-hooks")
    plan = {"session": "s1", "state": "Focus: the incident.",
            "episodes": [{"type": "finding", "content": "the cause:\n- retries x5\n- no jitter"}]}
    data = json.loads(run(repo, "wrap", "--plan", "-", "--dry-run", "--json", stdin=json.dumps(plan)).out)
    assert any("its content's 3 lines were joined" in w for w in data["warnings"])
