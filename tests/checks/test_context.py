"""What the rules' context remembers across judgements is found again only for the very same bytes.

A history walk judges thousands of changes that share a store blob, so the
context keeps a store's id index and word weights per blob id. A stale entry
would judge one store's citations against another: these tests give two
different stores under one blob id (a caller's mistake) and expect each
judgement to see its own store.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowgit.checks.judge import Side, context_for
from flowgit.config import load_config_from_blobs
from tests.checks.gate_fixtures import E_RETRY, base_text, ep
from tests.support.edits import edit_lists, edited_versions

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


def _forget_everything() -> None:
    """Empty every memo a judgement may leave behind (section facts, heading pieces, hidden lines, store
    indexes and weights, per-line caches), so the next judgement starts cold."""
    from flowgit.checks import compression, context, recognition
    from flowgit.continuity import document, identity, patterns, scan
    from flowgit import episodes

    for memo in (document._FACTS, document._SECTIONS_SEEN, document._LINES_SEEN, recognition._HIDDEN,
                 episodes._INDEXES, context._WEIGHTS, scan._cache):
        memo.clear()
    for cached in (document._line_kind, patterns.parse_pattern, compression.normalise, identity.name_key,
                   identity.is_mixed_script):
        cached.cache_clear()


EDITS = ["! new_one: a queue pattern about retries | 1x", "!! retry_budget: cap retries | 3x", "```",
         "<!-- ! hidden: x | 1x -->", "> quoted line", "thought: a -> b ><", "- a list item", "  continued text",
         "", "[decided(rationale: \"x\")]", "! p01: retries without budget multiply load | 1x", "## Notes",
         "!! p02: a circuit breaker opens | 2x (X) [evidence: " + E_RETRY[0].id + ", " + E_RETRY[1].id + "]"]


@pytest.mark.parametrize("seed", [3, 5, 8, 13])
def test_a_walk_with_every_memo_warm_judges_as_each_change_judged_cold(tmp_path, seed):
    """Consecutive versions judged in one process (every memo kept, documents reused as the next old side)
    give exactly the findings each change gets from a cold start: no memo answers for other lines."""
    import random

    from flowgit.checks.judge import judge_change
    from flowgit.repo import reusing_documents

    rnd = random.Random(seed)
    cfg = load_config_from_blobs(tmp_path, {}, "HEAD")
    store = _store(E_RETRY + OTHER)
    versions = [base_text()]
    for _ in range(60):
        lines = versions[-1].split("\n")
        for _ in range(rnd.randint(1, 3)):
            at = rnd.randrange(len(lines) + 1)
            if rnd.random() < 0.4 and lines:
                del lines[min(at, len(lines) - 1)]
            else:
                lines.insert(at, rnd.choice(EDITS))
        versions.append("\n".join(lines))

    def side(text):
        return Side(text.encode(), store, "CONTINUITY.md", ".flow/episodes.jsonl", store_ref=("blob", len(store)))

    def key(found):
        return [(f.code, f.line, f.message) for f in found]

    warm = []
    with reusing_documents():
        for old, new in zip(versions, versions[1:]):
            warm.append(key(judge_change(cfg, side(old), side(new))))
    cold = []
    for old, new in zip(versions, versions[1:]):
        _forget_everything()
        cold.append(key(judge_change(cfg, side(old), side(new))))
    assert warm == cold
    assert sum(map(len, warm)) > 20  # the edits are judged, not waved through


PATTERN_LINES = ["! p01: retries multiply load | 1x\n", "! P01: retries multiply load | 1x\n",
                 "!! p02: breakers open | 2x (X) [evidence: ep-a, ep-b]\n", "! p02: breakers open | 1x\n",
                 "!!! p03: caps hold | 3x (X) [evidence: ep-a, ep-b, ep-c]\n", "- fact\n", "\n",
                 "! p04: queues | 1x\n", "!! p04: queues | 2x (X) [evidence: ep-c, ep-d]\n"]
HEADINGS = ["## Developing Knowledge\n", "## Proven Knowledge\n", "## Foundation\n"]


def _changed_patterns_reference(ctx):
    """:attr:`CheckContext.changed_patterns` as first written: every staged pattern looked at."""
    held = set(map(id, ctx.old_patterns.values()))
    out = []
    for at in ctx.all_new_patterns:
        if id(at) in held:
            continue
        before = ctx.old_for(at)
        if before is None or before.section != at.section or (
                before.pattern is not at.pattern and before.pattern.render() != at.pattern.render()):
            out.append(at)
    return out


def _old_pattern_changes_reference(ctx):
    """:attr:`CheckContext.old_pattern_changes` as first written: every one of HEAD's identities looked at."""
    staged = ctx.new_patterns
    held = set(map(id, staged.values()))
    out = []
    for key, before in ctx.old_patterns.items():
        if id(before) in held:
            continue
        now = staged.get(key)
        if now is not None and now.pattern is before.pattern and now.section == before.section:
            continue
        out.append((key, before, now if now is not None else ctx.new_for(key)))
    return out


@pytest.mark.parametrize("heading", ["## Proven Knowledge\n", "## Cross-Domain Patterns\n", "## Notes\n"])
def test_a_body_moved_under_another_heading_is_a_change_of_section_for_each_of_its_patterns(tmp_path, heading):
    """The very same body (so the very same parsed lines) under another label: each pattern moved section.
    Only a body that keeps its label, moved up or down by an edit above it, is passed over whole."""
    from flowgit.repo import reusing_documents

    cfg = load_config_from_blobs(tmp_path, {}, "HEAD")
    body = ["! p01: retries multiply load | 1x\n", "!! p02: breakers open | 2x (X) [evidence: ep-a, ep-b]\n",
            "! p04: queues | 1x\n"]
    old = "".join(["## Current State\nFocus: a.\n", "## Developing Knowledge\n", *body, "## Foundation\n",
                   "- a foundation line\n"]).encode()
    new = "".join(["## Current State\nFocus: a.\nand more\n", heading, *body, "## Developing Knowledge\n",
                   "## Foundation\n", "- a foundation line\n"]).encode()
    kept = "".join(["## Current State\nFocus: a.\nand more\n", "## Developing Knowledge\n", *body,
                    "## Foundation\n", "- a foundation line\n"]).encode()

    def side(data):
        return Side(data, b"", "CONTINUITY.md", ".flow/episodes.jsonl")

    with reusing_documents():
        moved = context_for(cfg, side(old), side(new))
        assert moved.new.facts(moved.new.sections[1]) is moved.old.facts(moved.old.sections[1])  # one body
        assert [at.pattern.name for at in moved.changed_patterns] == ["p01", "p02", "p04"]
        assert [key for key, _, _ in moved.old_pattern_changes] == ["p01", "p02", "p04"]
        assert moved.changed_patterns == _changed_patterns_reference(moved)
        shifted = context_for(cfg, side(old), side(kept))
        assert shifted.new.sections[1].body_start != shifted.old.sections[1].body_start  # moved down a line
        assert shifted.changed_patterns == [] and shifted.old_pattern_changes == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PATTERN_LINES), max_size=10), st.lists(st.sampled_from(PATTERN_LINES), max_size=10),
       edit_lists(st.sampled_from(PATTERN_LINES + HEADINGS), 24))
def test_changed_patterns_skip_only_sections_both_versions_share(tmp_path_factory, developing, proven, edits):
    """Sections whose placed patterns are the very same objects on both sides are passed over only when each
    identity occurs once; with duplicates (a renamed case, a same name in two sections) every pattern is
    looked at. Either way the answers are those of looking at every pattern, and the identity map joined
    from the sections' own maps is the one built from every pattern, in the same order."""
    from flowgit.continuity.patterns import pattern_identity_map
    from flowgit.repo import reusing_documents

    cfg = load_config_from_blobs(tmp_path_factory.mktemp("cfg"), {}, "HEAD")
    lines = [HEADINGS[0], *developing, HEADINGS[1], *proven, HEADINGS[2], "- a foundation line\n"]
    versions = edited_versions(lines, edits, lambda ls: "".join(ls).encode())

    def side(data):
        return Side(data, b"", "CONTINUITY.md", ".flow/episodes.jsonl")

    with reusing_documents():
        for old, new in zip(versions, versions[1:]):
            ctx = context_for(cfg, side(old), side(new))
            assert ctx.changed_patterns == _changed_patterns_reference(ctx)
            assert ctx.old_pattern_changes == _old_pattern_changes_reference(ctx)
            # the identity map joined from the sections' maps, in the order of first occurrence
            assert list(ctx.new_patterns.items()) == list(pattern_identity_map(ctx.all_new_patterns).items())
