"""The labelled recall benchmark holds its targets: unit type right on 95% of recalls, member F1 at least 0.9,
on every corpus (deposits, transcripts only, a repository of 50+ wraps)."""

from __future__ import annotations

import pytest

from benchmarks.ascend_recall import evaluate, recalls


@pytest.mark.slow
def test_recall_targets_on_every_corpus(tmp_path):
    kinds = {r.kind for r in recalls()}
    assert kinds == {"chain", "cluster", "concept", "single", "none"}
    results = evaluate(tmp_path)
    assert [r["corpus"] for r in results] == ["deposits", "transcripts", "wraps"]
    assert sum(r["recalls"] for r in results) >= 40
    for r in results:
        assert r["type_accuracy"] >= 0.95, (r["corpus"], r["type_accuracy"])
        assert r["f1"] >= 0.9, (r["corpus"], r["f1"])
