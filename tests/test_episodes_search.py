"""Search streams the store: the byte prefilter never drops a match, output is printed as it goes and escaped."""

from __future__ import annotations

import json
import random
import re
import sys

import pytest

from flowgit import search as search_mod
from flowgit.episodes import EpisodeStore, filter_episodes, make_episode, parse_store

WORDS = ["retry", "Retry", "RETRY", "budget", "K", "\u212aelvin", "\u0130stanbul", "caf\u00e9", 'say "hi"',
         "a/b", "tab\there", "naïve", "outage", "straße", "\u00c9t\u00e9", "ﬁle"]


def random_store(rng: random.Random, n: int) -> bytes:
    lines = []
    for i in range(n):
        content = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5))) + f" #{i}"
        e = make_episode({"type": rng.choice(["finding", "decision", "outcome"]), "content": content,
                          "session": rng.choice(SESSIONS), "ts": "2026-11-30T10:00:00Z",
                          "tags": rng.sample(["Load", "load", "caf\u00e9", "q/a"], rng.randint(0, 2))})
        # other writers escape differently: ASCII-only JSON, escaped slashes
        text = json.dumps(e.to_dict(), ensure_ascii=rng.random() < 0.4)
        if rng.random() < 0.2:
            text = text.replace("/", "\\/")
        if rng.random() < 0.3:  # a session as other writers and hands leave it
            text = re.sub(r'"session": ("(?:[^"\\]|\\.)*")', lambda m: rng.choice(SESSION_FORMS)(m.group(1)), text)
        lines.append(text)
        if rng.random() < 0.05:
            lines.append('{"torn": ')
        if rng.random() < 0.05:
            lines.append(lines[rng.randrange(len(lines))])  # a duplicate line (merge=union)
    return ("\n".join(lines) + "\n").encode("utf-8")


# One session under many spellings (G103 folds them to one), and others that are not it.
SESSIONS = ["s1", "S1", "s\u00e92", "S-1", "s_1", "\u0455 1", "s12", "1s", "s 1 ."]
SESSION_FORMS = [
    lambda v: f'"session":{v}',                    # no space after the colon
    lambda v: f'"session" :\t {v}',                # other spacing
    lambda v: '"session": "\\u0073\\u0031"',        # escaped: `s1`
    lambda v: '"session": 1',                      # a number: read as its text, "1"
    lambda v: '"session": ["s1"]',                 # a list: read as its text, "['s1']", which folds to `s1`
    lambda v: f'"session": "x", "session": {v}',   # a key twice: the last one counts
    lambda v: f'"session": {v}, "session": "x"',
]

QUERIES = [dict(text="retry"), dict(text="k"), dict(text="KELVIN"), dict(text="i"), dict(text='"hi"'),
           dict(text="a/b"), dict(text="café"), dict(text="CAF"), dict(text="tab\there"), dict(text="é"),
           dict(tags=["load"]), dict(tags=["café"]), dict(tags=["q/a"]), dict(session="s1"), dict(session="sé2"),
           dict(session="S-1"), dict(session="1"), dict(session="s 1 2"), dict(session="s1", text="retry"),
           dict(type_="outcome", text="budget"), dict(text="#1"), dict(text="straße"), dict(text="ﬁle")]


@pytest.mark.parametrize("seed", range(6))
def test_the_streamed_search_finds_exactly_what_a_full_parse_finds(tmp_path, seed, monkeypatch):
    monkeypatch.setattr(search_mod, "CHUNK", 997)  # many chunk boundaries
    rng = random.Random(seed)
    data = random_store(rng, 300)
    path = tmp_path / "store.jsonl"
    path.write_bytes(data)
    everything, _ = parse_store(data)
    store = EpisodeStore(path)
    for query in QUERIES:
        expected = [e.id for e in filter_episodes(everything.values(), **query)]
        found, _ = store.search(**query)
        assert [e.id for e in found] == expected, query


def test_problems_name_the_right_line_across_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(search_mod, "CHUNK", 64)
    good = [make_episode({"type": "finding", "content": f"retry {i}", "session": "s"}).to_json() for i in range(9)]
    lines = good[:4] + ['{"retry": torn'] + good[4:] + ['{"id": "ep-x", "content": "retry", "type": "x"}']
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    found, problems = EpisodeStore(path).search(text="retry")
    assert len(found) == 9 and [p.line for p in problems] == [5, 11]


def test_deep_nesting_in_the_store_is_a_problem_not_a_crash(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"content": "retry", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    found, problems = EpisodeStore(path).search(text="retry")
    assert found == [] and "nested too deeply" in problems[0].message


def test_cli_streams_json_in_the_usual_layout_and_limit_keeps_the_last(run, repo):
    store = repo / ".flow" / "episodes.jsonl"
    store.parent.mkdir()
    eps = [make_episode({"type": "finding", "content": f"retry number {i} \u00e9 \"q\" \\ \x01",
                         "session": "s", "tags": ["a", "\u00e9"][: i % 3]}) for i in range(600)]
    store.write_text("".join(e.to_json() + "\n" for e in eps))
    res = run(repo, "episode", "search", "retry", "--json")
    assert res.code == 0
    assert res.out == json.dumps([e.to_dict() for e in eps], indent=2, ensure_ascii=False) + "\n"
    res = run(repo, "episode", "search", "retry", "--limit", "2", "--json")
    assert [d["content"] for d in json.loads(res.out)] == [eps[598].content, eps[599].content]
    assert run(repo, "episode", "search", "nothing-like-it", "--json").out == "[]\n"
    human = run(repo, "episode", "list", "--limit", "1")
    assert human.out.endswith("retry number 599 \u00e9 \"q\" \\ \\x01  #a #\u00e9  (session s)\n1 episode(s)\n")


def test_control_characters_are_escaped_for_people_and_kept_for_json(run, repo):
    store = repo / ".flow" / "episodes.jsonl"
    store.parent.mkdir()
    evil = {"id": "ep-evil", "ts": "2026-11-30T10:00:00Z", "type": "finding",
            "content": "ok \x1b]0;owned\x07 \x1b[2J\u202e gone", "session": "s\x1b[31m", "agent": "a", "tags": ["t\x9b"]}
    store.write_text(json.dumps(evil) + "\n")
    for args in (["episode", "list"], ["episode", "search", "ok"], ["episode", "show", "ep-evil"]):
        res = run(repo, *args)
        assert res.code == 0
        assert not any(ch in res.out for ch in "\x1b\x07\x9b\u202e"), args
        assert "\\x1b]0;owned\\x07" in res.out and "\\u202e" in res.out and "s\\x1b[31m" in res.out
    res = run(repo, "episode", "list", "--json")
    assert json.loads(res.out)[0]["content"] == evil["content"]


def test_bad_stdin_names_the_line(run, repo, monkeypatch):
    import io

    deep = "[" * 50_000 + "]" * 50_000
    for text, message in ((b'{"type": "finding", "content": "ok", "session": "s1"}\n\xff\xfe\n', "not valid UTF-8"),
                          (b'{"type": "finding", "content": "ok", "session": "s1"}\n' + deep.encode() + b"\n", "nested too deeply")):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text), encoding="utf-8"))
        res = run(repo, "episode", "add")
        assert res.code == 2 and message in res.err and "<stdin>:2" in res.err
    assert not (repo / ".flow" / "episodes.jsonl").exists()
