"""The search scan: what it recognises without decoding must be what decoding gives; memory stays flat."""

from __future__ import annotations

import json
import mmap
import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowgit import search
from flowgit.episodes import EPISODE_TYPES, Episode, EpisodeStore, _episode_from_line
from flowgit.search import ROW, Query, Rows, recognise, split_tags

# Characters that matter to JSON and to the recognising expression, and a few that do not.
ALPHABET = st.sampled_from(list('ab Z09",\\/{}[]:\n\t\r\x00\x1f\x7f\x85\u2028\u202e\u00e9\u212a\U0001f642'))
TEXT = st.text(ALPHABET, max_size=8)


@st.composite
def episodes(draw) -> Episode:
    return Episode(id=draw(TEXT), ts=draw(TEXT), type=draw(st.sampled_from(EPISODE_TYPES)), content=draw(TEXT),
                   session=draw(TEXT), agent=draw(TEXT), tags=tuple(draw(st.lists(TEXT, max_size=3))))


@st.composite
def damaged(draw) -> str:
    """A line as flowgit writes it, then edited the way other tools and accidents edit lines."""
    line = draw(episodes()).to_json()
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(line)))
        kind = draw(st.sampled_from(["insert", "delete", "copy"]))
        if kind == "insert":
            line = line[:at] + draw(st.sampled_from(['"', " ", ",", "}", "{", "]", "[", ":", "\\", "x"])) + line[at:]
        elif kind == "delete":
            line = line[:at] + line[at + draw(st.integers(1, 4)):]
        else:
            line = line[:at] + line[at:at + draw(st.integers(1, 30))] + line[at:]
    return line


def fields(ep: Episode) -> tuple:
    return ep.id, ep.ts, ep.type, ep.content, ep.session, ep.agent, ep.tags


def recognised(groups: tuple[bytes, ...]) -> tuple:
    values = [g.decode("utf-8") for g in groups]
    return (*values[:6], split_tags(values[6]))


def alone(line: bytes) -> tuple[bytes, ...] | None:
    """What the line-by-line path takes from one line (the line must decode first)."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return None
    m = ROW.fullmatch(line)
    return m.groups() if m else None


@settings(max_examples=400, deadline=None)
@given(episodes())
def test_every_line_flowgit_writes_without_escapes_is_recognised_as_its_fields(ep):
    line = ep.to_json().encode("utf-8")
    if b"\\" in line:
        assert alone(line) is None and recognise(line, 1) is None  # something was escaped: json.loads reads it
    else:
        assert recognised(alone(line)) == fields(ep)
        assert recognise(line, 1) == [alone(line)]


@settings(max_examples=1500, deadline=None)
@given(damaged())
def test_whatever_is_recognised_is_exactly_what_json_decodes(line):
    raw = line.encode("utf-8")
    for groups in (alone(raw), *(recognise(raw, 1) or [None])):
        if groups is not None:
            assert recognised(groups) == fields(_episode_from_line(json.loads(line)))


RAW_DAMAGE = st.sampled_from([b"\xff", b"\xc3", b"\xe2\x84", b"\x00", b"\r", b"\x1f", b"\\", b'"', b"\n"])


@st.composite
def raw_lines(draw) -> list[bytes]:
    """Lines as bytes, some with bytes no writer of JSON text leaves (torn UTF-8, raw controls)."""
    line = draw(st.one_of(damaged(), episodes().map(Episode.to_json))).encode("utf-8")
    if draw(st.booleans()):
        at = draw(st.integers(0, len(line)))
        line = line[:at] + draw(RAW_DAMAGE) + line[at:]
    return line.split(b"\n")  # a batch holds whole lines


@settings(max_examples=600, deadline=None)
@given(st.lists(raw_lines(), min_size=1, max_size=6))
def test_a_batch_is_taken_whole_only_when_every_line_is_recognised_alone(parts):
    lines = [line for part in parts for line in part]
    rows = recognise(b"\n".join(lines), len(lines))
    if rows is not None:
        assert rows == [alone(line) for line in lines]
    else:
        assert any(alone(line) is None for line in lines)


def test_the_fold_list_is_every_non_ascii_character_that_lowers_to_ascii():
    folding = [c for c in map(chr, range(0x80, 0x110000))
               if not 0xD800 <= ord(c) <= 0xDFFF and any(ord(x) < 0x80 for x in c.lower())]
    assert sorted(folding) == sorted(search._FOLDS_TO_ASCII)


def test_rows_cut_to_the_last_n_and_become_episodes():
    eps = [Episode(f"ep-{i}", "2026-11-30T10:00:00Z", "finding", f"retry {i}", "s", "", ("a", "b, c")[: i % 3])
           for i in range(5)]
    rows = Rows([ROW.fullmatch(ep.to_json().encode()).groups() for ep in eps], b"")
    assert list(rows.last(2).episodes()) == eps[3:]
    assert split_tags("") == () and split_tags('"x, y", "z"') == ("x, y", "z")


def test_a_forged_duplicate_id_shows_the_first_matching_line(tmp_path):
    real = Episode("ep-1", "2026-11-30T10:00:00Z", "finding", "retry held", "s", "", ())
    forged = Episode("ep-1", "2026-11-30T10:00:00Z", "finding", "budget forged", "s", "", ())
    path = tmp_path / "e.jsonl"
    path.write_text("\n".join(e.to_json() for e in (forged, real, real, forged)) + "\n")
    found, _ = EpisodeStore(path).search(text="retry")
    assert found == [real]
    found, _ = EpisodeStore(path).search()
    assert found == [forged]


def test_a_byte_order_mark_before_the_first_line_is_read_as_every_store_reader_reads_it(tmp_path):
    """An editor on Windows saves the store with a BOM: list and search find its first episode, as show, the
    gate's evidence lookup and the whole-store reading do (one reading of a line everywhere)."""
    from flowgit.episodes import lookup, parse_store

    first = Episode("ep-1", "2026-11-30T10:00:00Z", "finding", "retry held", "s", "", ())
    second = Episode("ep-2", "2026-11-30T10:00:00Z", "finding", "budget held", "s", "", ())
    path = tmp_path / "e.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + f"{first.to_json()}\n{second.to_json()}\n".encode())
    store = EpisodeStore(path)
    listed, problems = store.search()
    assert listed == [first, second] and not problems
    assert store.search(text="retry")[0] == [first]
    assert store.show(["ep-1"]) == [first] and lookup(path.read_bytes(), ["ep-1"]) == {"ep-1": first}
    assert parse_store(path.read_bytes()) == ({"ep-1": first, "ep-2": second}, [])


def _rss_file_kb() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("RssFile:"):
                return int(line.split()[1])
    raise AssertionError("no RssFile")


@pytest.mark.skipif(not hasattr(mmap, "MADV_DONTNEED") or not hasattr(os, "posix_fadvise")
                    or not os.path.exists("/proc/self/status"), reason="resident pages are measured on Linux only")
def test_scanned_pages_are_handed_back_so_resident_memory_stays_flat(tmp_path, monkeypatch):
    monkeypatch.setattr(search, "CHUNK", 16 << 10)  # many chunks: pages left behind by each would add up
    rng = random.Random(3)
    path = tmp_path / "big.jsonl"
    lines = [Episode(f"ep-{i:012x}", "2026-11-30T10:00:00Z", "finding", f"{rng.random()} load #{i}", "s", "a",
                     ("x",)).to_json() for i in range(150_000)]
    path.write_text("\n".join(lines) + "\n")  # 21 MB
    fd = os.open(path, os.O_RDONLY)
    try:  # out of the page cache, so that it comes back as a read store's pages do (large folios and all)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    for text in ("#1", "LOAD #1"):  # the store's map searched as it is, and lowered a chunk at a time
        list(EpisodeStore(path).scan(Query(text=text)))  # reads it back in; maps the code's own pages once
        before, peak, found = _rss_file_kb(), 0, 0
        for batch in EpisodeStore(path).scan(Query(text=text)):  # hits in most chunks: a look after each
            found += len(batch) if isinstance(batch, Rows) else 1
            peak = max(peak, _rss_file_kb())
        assert found == sum(text.lower() in line for line in lines)
        assert peak - before < 1024, f"{peak - before} KB of the store stayed mapped"


def test_a_session_is_found_under_every_spelling_the_immune_system_takes_for_it(tmp_path):
    """`--session sess-1` finds `Sess-1`, `SESS_1` and a look-alike `ѕess 1` (as G103 counts them one session),
    and not `sess-12` or `sess-2`; in a store large enough to be read in chunks as in a small one."""
    store = tmp_path / "episodes.jsonl"
    spellings = ["sess-1", "Sess-1", "SESS_1", "\u0455ess 1", "sess-12", "sess-2", "s-ess1"]
    filler = [Episode(id=f"ep-{n:012x}", ts="2026-12-01T00:00:00Z", type="finding", content=f"filler {n}",
                      session="other", agent="a") for n in range(20000)]
    own = [Episode(id=f"ep-own{n:08x}", ts="2026-12-01T00:00:00Z", type="finding", content=f"spelled {s}",
                   session=s, agent="a") for n, s in enumerate(spellings)]
    store.write_text("".join(e.to_json() + "\n" for e in [*filler[:10000], *own, *filler[10000:]]))
    found, _ = EpisodeStore(store).search(session="sess-1")
    assert sorted(e.session for e in found) == sorted(["sess-1", "Sess-1", "SESS_1", "\u0455ess 1", "s-ess1"])
    assert Query(session="SESS-1").matches(own[0]) and not Query(session="sess-1").matches(own[4])
