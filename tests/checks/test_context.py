"""What the rules' context remembers across judgements is found again only for the very same bytes.

A history walk judges thousands of changes that share a store blob, so the
context keeps a store's id index and word weights per blob id. A stale entry
would judge one store's citations against another: these tests give two
different stores under one blob id (a caller's mistake) and expect each
judgement to see its own store.
"""

from __future__ import annotations

from flowgit.checks.judge import Side, context_for
from flowgit.config import load_config_from_blobs
from tests.checks.gate_fixtures import E_RETRY, base_text, ep

OTHER = [ep("queue depth alarms fired twice during the nightly batch window", "s9", tags=["queues"])]


def _store(episodes) -> bytes:
    return b"".join(e.to_json().encode() + b"\n" for e in episodes)


def _context(tmp_path, store: bytes, oid: str):
    cfg = load_config_from_blobs(tmp_path, {}, "HEAD")
    new = Side(base_text().encode(), store, "CONTINUITY.md", ".flow/episodes.jsonl", store_ref=(oid, len(store)))
    return context_for(cfg, None, new)


def test_episodes_are_looked_up_in_the_store_judged_not_one_remembered_under_its_id(tmp_path):
    wanted = [E_RETRY[0].id, OTHER[0].id]
    first = _context(tmp_path, _store(E_RETRY), "blob-1")
    assert {i for i in wanted if i in first.episodes(wanted)} == {E_RETRY[0].id}
    second = _context(tmp_path, _store(OTHER), "blob-1")  # same id, other bytes
    assert {i for i in wanted if i in second.episodes(wanted)} == {OTHER[0].id}
    grown = _context(tmp_path, _store(E_RETRY) + _store(OTHER), "blob-2")  # an append: the index is extended
    assert {i for i in wanted if i in grown.episodes(wanted)} == set(wanted)


def test_word_weights_are_those_of_the_store_judged(tmp_path):
    # "retry" is in every line of the first store (an everyday word there) and in no line of the second
    many = [ep(f"retry number {n} of the batch job went through", f"s{n}") for n in range(30)]
    dense = _context(tmp_path, _store(many), "blob-w")
    assert dense.word_weight("retry") < 1.0
    sparse = _context(tmp_path, _store([ep(f"queue number {n} of the batch job", f"t{n}") for n in range(30)]),
                      "blob-w")
    assert sparse.word_weight("retry") == 1.0
    assert _context(tmp_path, _store(many), "blob-w").word_weight("retry") < 1.0
