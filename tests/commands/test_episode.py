"""``episode search/list`` output, byte for byte, against a plain reference on a store made to be awkward.

The reference decodes every line with ``json.loads`` and keeps the first line of
each matching id, exactly the semantics the command has always had; the command
itself takes shortcuts (a byte prefilter, recognising the form flowgit writes
without decoding it, rendering batches at once). Whatever shortcut it takes, its
stdout (JSON and human) and its warnings must be what the reference gives.
"""

from __future__ import annotations

import io
import json
import random
import re
from datetime import datetime, timezone

import pytest

from flowgit.commands.episode import render_episode, stream_search
from flowgit.episodes import Episode, EpisodeStore, _episode_from_line, filter_episodes, make_episode

WORDS = ["retry", "Retry", "RETRY", "budget", "K", "\u212aelvin", "\u0130stanbul", "caf\u00e9", "CAF\u00c9",
         "stra\u00dfe",
         "STRASSE", "\ufb01le", "\u039f\u0394\u039f\u03a3", "\u03bf\u03b4\u03bf\u03c2", "\u65e5\u672c", "\U0001f642",
         'say "hi"', "back\\slash", "a/b", "tab\there", "bell\x07", "esc\x1b[2J", "del\x7f", "c1\x85", "rtl\u202egone",
         "line\u2028sep", "x, y", "#12", "content", "session", "tags", "ep-", "finding", "  spaced  ", "naïve"]
TAGS = ["load", "Load", "caf\u00e9", "q/a", "x, y", "\u212a", "", "retry", 'q"t', "t\x01"]
SESSIONS = ["s1", "S1", "s\u00e92", "retry-session", ""]
QUERIES = [
    {}, dict(text="retry"), dict(text="RETRY"), dict(text="k"), dict(text="KELVIN"), dict(text="i"), dict(text="caf"),
    dict(text="caf\u00e9"), dict(text="\u00c9"), dict(text="\u00df"), dict(text="ss"), dict(text="\u03c3"),
    dict(text="\u03c2"), dict(text="\u03a3"), dict(text='"'), dict(text='"hi"'), dict(text="\\"), dict(text="a/b"),
    dict(text="#1"), dict(text="#12"), dict(text=","), dict(text=", "), dict(text=" "), dict(text="content"),
    dict(text="session"), dict(text="tags"), dict(text="id"), dict(text="ep-"), dict(text="ts"),
    dict(text="finding"), dict(text="\ufb01"), dict(text="fi"), dict(text="\t"), dict(text="\u202e"),
    dict(text="\x07"), dict(text="\u65e5\u672c"), dict(text="\U0001f642"), dict(text="2026"),
    dict(text="nothing-like-it"), dict(tags=["load"]), dict(tags=["LOAD", "caf\u00e9"]), dict(tags=["x, y"]),
    dict(tags=["\u212a"]), dict(session="s1"),
    dict(session="s\u00e92"), dict(type_="outcome"), dict(type_="decision", text="budget"),
    dict(text="retry", tags=["load"]), dict(text="retry", session="S1"),
    dict(since=datetime(2026, 11, 15, tzinfo=timezone.utc)), dict(until=datetime(2026, 11, 15, tzinfo=timezone.utc)),
    dict(text="retry", since=datetime(2026, 11, 10, tzinfo=timezone.utc),
         until=datetime(2026, 11, 20, 23, 59, 59, tzinfo=timezone.utc)),
]


def awkward_store(rng: random.Random, n: int) -> bytes:
    """Lines as flowgit writes them, and every other way a line can look (foreign writers, damage)."""
    lines: list[bytes] = []
    for i in range(n):
        content = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4))) + f" #{i}"
        tags = rng.sample(TAGS, rng.randint(0, 3))
        d = {"id": "", "ts": f"2026-11-{rng.randint(1, 30):02d}T{rng.randint(0, 23):02d}:00:00Z",
             "type": rng.choice(["finding", "decision", "outcome"]), "content": content,
             "session": rng.choice(SESSIONS), "agent": rng.choice(["", "agent-1", "\u00e9crivain", "retry-bot"]),
             "tags": tags}
        real_id = rng.random() < 0.5
        d["id"] = make_episode({**d, "id": None, "session": d["session"] or "s"}).id if real_id else f"ep-{i:012x}"
        lines.append(_variant(rng, d))
        if rng.random() < 0.06:
            lines.append(rng.choice(lines))  # a duplicate line, as merge=union leaves
        if rng.random() < 0.04:  # the same id with other content: whichever line matches first is the one shown
            forged = {**d, "content": "retry forged " + d["content"][::-1]}
            lines.append(json.dumps(forged, ensure_ascii=False).encode())
        if rng.random() < 0.08:
            lines.append(rng.choice(DAMAGED))
        if rng.random() < 0.03:  # two episodes on one line, or one torn across two
            canonical = json.dumps(d, ensure_ascii=False).encode()
            cut = rng.randrange(1, len(canonical))
            lines += [canonical + rng.choice([b"", b" "]) + canonical] if rng.random() < 0.5 else \
                [canonical[:cut], canonical[cut:]]
    return b"\n".join(lines) + (b"\n" if rng.random() < 0.5 else b"")


def _variant(rng: random.Random, d: dict) -> bytes:
    roll = rng.random()
    if roll < 0.55:
        return json.dumps(d, ensure_ascii=False).encode()  # exactly what Episode.to_json writes
    if roll < 0.62:
        return json.dumps(d).encode()  # ASCII-only JSON: \u escapes
    if roll < 0.67:
        return json.dumps(d, ensure_ascii=False).replace("/", "\\/").encode()
    if roll < 0.72:
        return json.dumps(d, ensure_ascii=False, separators=(",", ":")).encode()
    if roll < 0.76:
        return json.dumps(dict(reversed(list(d.items()))), ensure_ascii=False).encode()
    if roll < 0.79:
        return json.dumps({**d, "extra": [1, {"retry": True}]}, ensure_ascii=False).encode()
    if roll < 0.82:
        return json.dumps({k: v for k, v in d.items() if k not in ("session", "tags")}, ensure_ascii=False).encode()
    if roll < 0.85:
        odd_tags = rng.choice(["retry", None, [1, "load", ["x"]], {"a": 1}])
        return json.dumps({**d, "tags": odd_tags}, ensure_ascii=False).encode()
    if roll < 0.88:
        return json.dumps({**d, "session": rng.choice([None, 7, ["s1"]]), "agent": rng.choice([None, 0])}).encode()
    if roll < 0.90:
        return json.dumps({**d, "type": rng.choice(["rumour", "Finding", None])}, ensure_ascii=False).encode()
    if roll < 0.92:
        return json.dumps({**d, "content": rng.choice([None, 42, ["retry"], ""])}, ensure_ascii=False).encode()
    if roll < 0.94:
        return b"  " + json.dumps(d, ensure_ascii=False).encode() + rng.choice([b"  ", b"\r", b"\t"])
    if roll < 0.96:
        return json.dumps(d, ensure_ascii=False, indent=None).replace(", ", " , ").encode()
    if roll < 0.98:
        return json.dumps({**d, "ts": rng.choice(["yesterday", 5, ""])}, ensure_ascii=False).encode()
    return json.dumps({**d, "id": rng.choice([None, 12, ""])}, ensure_ascii=False).encode()


DAMAGED = [b'{"id": "ep-torn", "type": "find', b'{"retry": torn', b"", b"   ", b"\t", b"[]", b'"retry"', b"null",
           b"\xef\xbb\xbf" + json.dumps({"id": "ep-bom", "ts": "", "type": "finding", "content": "retry bom"}).encode(),
           b'{"id": "ep-bad", "type": "finding", "content": "retry \xff\xfe"}',
           b'{"id": "ep-raw", "type": "finding", "content": "retry raw\x01control"}',
           b'{"content": "retry", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}",
           b'{"id": "ep-dupkey", "type": "finding", "content": "retry one", "content": "two"}',
           b'{"id": "ep-nan", "ts": NaN, "type": "finding", "content": "retry nan"}']


def reference(data: bytes, *, limit: int, as_json: bool, **query) -> str:
    """What the command prints: every line decoded (a byte order mark before it skipped), first matching line
    of each id, last ``limit`` kept."""
    seen: set[str] = set()
    found = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            ep = _episode_from_line(json.loads(raw.decode("utf-8").removeprefix("\ufeff")))
        except (ValueError, UnicodeDecodeError, RecursionError):
            continue
        if ep.id in seen or not list(filter_episodes([ep], **query)):
            continue
        seen.add(ep.id)
        found.append(ep)
    if limit:
        found = found[-limit:]
    if as_json:
        return json.dumps([ep.to_dict() for ep in found], indent=2, ensure_ascii=False) + "\n"
    return "".join(render_episode(ep) + "\n" for ep in found) + (f"{len(found)} episode(s)\n" if found else
                                                                   "no episodes\n")


@pytest.fixture(params=[997, 64, 1 << 18], ids=["chunk997", "chunk64", "chunk256k"])
def chunk(request, monkeypatch):
    from flowgit import search

    monkeypatch.setattr(search, "CHUNK", request.param)
    return request.param


@pytest.mark.parametrize("seed", range(4))
def test_output_is_byte_identical_to_decoding_every_line(tmp_path, seed, chunk, capsys):
    rng = random.Random(seed)
    data = awkward_store(rng, 400)
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(data)
    store = EpisodeStore(path)
    for query in QUERIES:
        for as_json in (True, False):
            for limit in (0, 3):
                out = io.StringIO()
                count = stream_search(store, limit=limit, as_json=as_json, out=out, **query)
                expected = reference(data, limit=limit, as_json=as_json, **query)
                assert out.getvalue() == expected, (query, as_json, limit)
                assert count == (len(json.loads(expected)) if as_json else count)
    capsys.readouterr()


def test_warnings_name_each_unreadable_candidate_line_once_in_order(tmp_path, chunk, capsys):
    from flowgit.search import Query, SessionLines, needles

    rng = random.Random(7)
    data = awkward_store(rng, 300)
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(data)
    for query in QUERIES:
        stream_search(EpisodeStore(path), limit=0, as_json=True, out=io.StringIO(), **query)
        expected = []
        asked = Query(**query)
        wanted = needles(asked)
        # a candidate holds every needle and, for a session, may name it (whether the narrowing drops a match is
        # tests/test_episodes_search.py's question: here, that each candidate's problem is told once, in order)
        may_name = SessionLines(asked.session_key).lines if asked.session_key else None
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip() or not all(n.in_line(raw) for n in wanted):
                continue
            if may_name is not None and may_name(raw + b"\n", 0, len(raw) + 1, []) is None:
                continue
            try:
                _episode_from_line(json.loads(raw.decode("utf-8").removeprefix("\ufeff")))
            except (ValueError, UnicodeDecodeError, RecursionError):
                expected.append(number)
        warned = [int(m) for m in re.findall(r"episodes\.jsonl:(\d+): ", capsys.readouterr().err)]
        assert warned == expected, query


GOLDEN_JSON = '''[
  {
    "id": "ep-000000000001",
    "ts": "2026-11-30T10:00:00Z",
    "type": "finding",
    "content": "retry storm after deploy",
    "session": "s1",
    "agent": "agent-1",
    "tags": [
      "load",
      "retry"
    ]
  },
  {
    "id": "ep-000000000002",
    "ts": "2026-11-30T11:00:00Z",
    "type": "decision",
    "content": "cap RETRY count at 3",
    "session": "",
    "agent": "",
    "tags": []
  },
  {
    "id": "ep-000000000003",
    "ts": "2026-11-30T12:00:00Z",
    "type": "outcome",
    "content": "Retry \\u001b[2J budget caf\u00e9",
    "session": "s2",
    "agent": "",
    "tags": [
      "q/a"
    ]
  },
  {
    "id": "ep-000000000004",
    "ts": "",
    "type": "tension",
    "content": "retry \u00e9scaped",
    "session": "",
    "agent": "",
    "tags": []
  }
]
'''
GOLDEN_HUMAN = (
    "ep-000000000001  2026-11-30T10:00:00Z  finding     retry storm after deploy  #load #retry  (session s1 by agent-1)\n"
    "ep-000000000002  2026-11-30T11:00:00Z  decision    cap RETRY count at 3\n"
    "ep-000000000003  2026-11-30T12:00:00Z  outcome     Retry \\x1b[2J budget caf\u00e9  #q/a  (session s2)\n"
    "ep-000000000004    tension     retry \u00e9scaped\n"
    "4 episode(s)\n")


def test_both_layouts_are_pinned_byte_for_byte(run, repo):
    """The exact bytes people and scripts have always read, whichever path a line takes inside."""
    eps = [Episode("ep-000000000001", "2026-11-30T10:00:00Z", "finding", "retry storm after deploy", "s1", "agent-1",
                   ("load", "retry")),
           Episode("ep-000000000002", "2026-11-30T11:00:00Z", "decision", "cap RETRY count at 3", "", "", ()),
           Episode("ep-000000000003", "2026-11-30T12:00:00Z", "outcome", "Retry \x1b[2J budget caf\u00e9", "s2", "",
                   ("q/a",))]
    store = repo / ".flow" / "episodes.jsonl"
    store.parent.mkdir()
    store.write_text("".join(e.to_json() + "\n" for e in eps)  # flowgit's own lines, then another writer's
                     + '{"id": "ep-000000000004", "ts": "", "type": "tension", "content": "retry \\u00e9scaped"}\n',
                     encoding="utf-8")
    assert run(repo, "episode", "search", "retry", "--json").out == GOLDEN_JSON
    assert run(repo, "episode", "search", "retry").out == GOLDEN_HUMAN


def test_an_episode_is_refused_while_a_rebase_stands_whose_abort_would_drop_it(run, repo):
    """`git rebase --abort` resets the tree hard: an append acknowledged during the stopped rebase would be
    gone by the next ordinary step. A stopped merge keeps it (its abort refuses to overwrite the line)."""
    from tests.conftest import git

    assert run(repo, "init", "--commit").code == 0
    (repo / "notes.txt").write_text("base\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "base")
    main = git(repo, "branch", "--show-current").strip()
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "notes.txt").write_text("feature wording\n")
    git(repo, "commit", "-qam", "feature")
    git(repo, "checkout", "-q", main)
    (repo / "notes.txt").write_text("main wording\n")
    git(repo, "commit", "-qam", "main")
    store = repo / ".flow" / "episodes.jsonl"
    for stop in (["checkout", "-q", "feature"], ["rebase", main]):
        __import__("subprocess").run(["git", *stop], cwd=repo, capture_output=True)
    held = store.read_bytes()
    for argv in (("episode", "add", "--type", "decision", "--session", "s1", "keep the feature wording"),
                 ("episode", "add")):
        res = run(repo, *argv, stdin='{"type": "decision", "content": "keep it", "session": "s1"}\n')
        assert res.code == 2 and "a rebase is in progress" in res.err and "git rebase --abort" in res.err, res.err
        assert store.read_bytes() == held
    git(repo, "rebase", "--abort")
    git(repo, "checkout", "-q", main)
    __import__("subprocess").run(["git", "merge", "feature"], cwd=repo, capture_output=True)  # stops: conflict
    assert (repo / ".git" / "MERGE_HEAD").exists()
    res = run(repo, "episode", "add", "--type", "decision", "--session", "s1", "keep the main wording")
    assert res.code == 0, res.err
    git(repo, "merge", "--abort")
    assert b"keep the main wording" in store.read_bytes()


def test_a_stream_that_cannot_spell_every_character_gets_json_escaped_and_blocks_split_anywhere():
    """JSON to a Latin-1 stream stays the same document (ASCII escapes, never `?`), and rendered bytes handed
    over in blocks that end inside a character (the worker's output is copied a megabyte at a time) decode."""
    from flowgit.commands.episode import _byte_sink

    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="latin-1", errors="replace")
    write, _, _ = _byte_sink(out, as_json=True)
    data = json.dumps([{"content": "caf\u00e9 \u2192 \U0001f9e0"}], ensure_ascii=False).encode("utf-8")
    cut = data.index("\u2192".encode("utf-8")) + 1
    write(data[:cut])
    write(data[cut:])
    out.flush()
    assert raw.getvalue().isascii() and json.loads(raw.getvalue()) == [{"content": "caf\u00e9 \u2192 \U0001f9e0"}]
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="latin-1", errors="replace")
    write, _, _ = _byte_sink(out)
    write(data[:cut])
    write(data[cut:])
    out.flush()
    assert raw.getvalue().decode("latin-1") == '[{"content": "caf\u00e9 ? ?"}]'


@pytest.mark.parametrize("argv", [["list", "--until", "2026-11-30"],
                                  ["list", "--since", "2026-11-30", "--until", "2026-11-30"],
                                  ["list", "--until", "Nov 30, 2026"],
                                  ["search", "pool", "--until", "2026-11-30"],
                                  ["search", "pool", "--since", "2026-11-30", "--until", " 2026-11-30 "]])
def test_until_a_day_includes_that_whole_day_whichever_way_the_day_is_written(run, repo, argv):
    run(repo, "init", "--no-hooks")
    lines = [{"type": "finding", "content": content, "session": "s1", "ts": ts} for content, ts in [
        ("pool saturated at 20", "2026-11-30T09:00:00Z"), ("pool saturated again at 20", "2026-11-30T23:59:59.5Z"),
        ("pool resized to 40", "2026-12-01T00:00:00Z")]]
    assert run(repo, "episode", "add", stdin="\n".join(json.dumps(x) for x in lines) + "\n").code == 0
    found = json.loads(run(repo, "episode", *argv, "--json").out)
    assert [e["content"] for e in found] == ["pool saturated at 20", "pool saturated again at 20"]


def test_until_a_moment_is_that_moment():
    from flowgit.commands.episode import parse_when

    assert parse_when("2026-11-30T17:00:00Z", "--until") == datetime(2026, 11, 30, 17, tzinfo=timezone.utc)
    assert parse_when("2026-11-30", "--since") == datetime(2026, 11, 30, tzinfo=timezone.utc)


def test_an_episode_given_again_is_shown_as_stored_and_what_was_not_recorded_is_said(run, repo):
    """The id is of type, text and session: given again with another agent and tags, nothing is written, the
    answer shows the stored episode (its agent counts toward independence), and a warning says what was not
    recorded."""
    assert run(repo, "episode", "add", "--session", "s1", "--type", "finding", "the pool drains at noon").code == 0
    store = (repo / ".flow" / "episodes.jsonl").read_bytes()
    again = run(repo, "episode", "add", "--session", "s1", "--type", "finding", "--agent", "zed", "--tag",
                "important", "the pool drains at noon", "--json")
    assert again.code == 0
    data = json.loads(again.out)
    assert data["added"] == [] and [e["agent"] for e in data["already_present"]] == [""]
    assert data["already_present"][0]["tags"] == []
    assert len(data["warnings"]) == 1 and "'zed'" in data["warnings"][0] and "not recorded" in data["warnings"][0]
    assert (repo / ".flow" / "episodes.jsonl").read_bytes() == store
