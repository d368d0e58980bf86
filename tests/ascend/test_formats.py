"""The deposit files' on-disk formats: a re-indexed narrative's blocks, and a body's own horizontal rules."""

from __future__ import annotations

from flowgit.ascend.formats import split_blocks

FIRST = "---\nsession_id: s1\ncwd: /home/dev/p\nforks: [s9]\n---\n## 2026-11-02 — Initial Narrative\n"
REINDEX = "---\nsession_id: s1\ncwd: /home/dev/p\n---\n## 2026-11-03 — Re-indexed\n### Outcome\nShipped.\n"


def test_a_reindex_appends_a_block_that_is_read_as_the_latest():
    blocks = split_blocks(FIRST + "### Origin\nAsked.\n" + REINDEX)
    assert [fm.splitlines()[0] for fm, _ in blocks] == ["session_id: s1", "session_id: s1"]
    assert "Shipped." in blocks[-1][1] and "forks" in blocks[0][0]


def test_horizontal_rules_in_a_body_are_body_not_a_reindex():
    """Text between two `---` lines of a body would otherwise win over the real frontmatter (its forks and
    continuations dropped) and count as a re-index that never was."""
    body = "### Direction\nFirst we measured.\n\n---\n\nThen we capped retries.\n\n---\n\n### Outcome\nDone.\n"
    blocks = split_blocks(FIRST + body)
    assert len(blocks) == 1 and blocks[0][0].startswith("session_id: s1") and "forks: [s9]" in blocks[0][0]
    assert "Then we capped retries." in blocks[0][1] and "### Outcome" in blocks[0][1]
    assert len(split_blocks(FIRST + body + REINDEX)) == 2  # a real re-index after such a body still counts
