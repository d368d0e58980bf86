"""Judging a history in worker processes gives exactly the report one process gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowgit.config import load_config
from flowgit.errors import FlowgitError
from flowgit.history.audit import RangeSpec, run_audit
from flowgit.history.parallel import MIN_COMMITS_PER_JOB, jobs_for, slices
from tests.checks.gate_fixtures import base_text, committed_base
from tests.conftest import git
from tests.history.test_audit import E_FRESH, E_RETRY, commit_text, p01


@pytest.fixture
def mixed_history(repo: Path) -> Path:
    """Clean wraps, bypasses the audit must catch, a merge and an override, one commit after another."""
    committed_base(repo, episodes=[*E_RETRY, E_FRESH])
    commit_text(repo, p01(2), "ungrounded 2x", "--no-verify")
    commit_text(repo, p01(1), "back to 1x")
    git(repo, "checkout", "-q", "-b", "side")
    commit_text(repo, p01(2, E_RETRY[:2]), "p01 to 2x")
    commit_text(repo, p01(3, [*E_RETRY[:2], E_FRESH], proven=True), "p01 to 3x")
    git(repo, "checkout", "-q", "main")
    commit_text(repo, base_text(recent="The main line moved on: the breaker shipped."), "main moves")
    git(repo, "merge", "-q", "--no-edit", "side")
    for n in range(6):
        text = p01(3, [*E_RETRY[:2], E_FRESH], proven=True).replace("Focus: ship the gate.", f"Focus: step {n}.")
        commit_text(repo, text, f"step {n}")
    commit_text(repo, p01(1), "Proven p01 dropped to 1x without a reason", "--no-verify")
    return repo


@pytest.mark.parametrize("jobs", [2, 3, 5])
def test_workers_report_exactly_what_one_process_reports(mixed_history, jobs):
    cfg = load_config(mixed_history)
    alone = run_audit(cfg, jobs=1).to_dict()
    assert not alone["ok"] and alone["commits_judged"] >= 10  # the history really holds findings
    assert run_audit(cfg, jobs=jobs).to_dict() == alone


def test_workers_report_a_range_exactly_as_one_process(mixed_history):
    cfg = load_config(mixed_history)
    spec = RangeSpec.parse("HEAD~5..HEAD")
    assert run_audit(cfg, spec, jobs=2).to_dict() == run_audit(cfg, spec, jobs=1).to_dict()


def _partial_clone(tmp_path: Path) -> Path:
    from tests.history.test_blobstream import partial_clone

    return partial_clone(tmp_path)


def test_an_error_in_a_worker_is_the_same_clear_error(tmp_path):
    cfg = load_config(_partial_clone(tmp_path))
    with pytest.raises(FlowgitError) as alone:
        run_audit(cfg, jobs=1)
    with pytest.raises(FlowgitError) as workers:
        run_audit(cfg, jobs=2)
    assert "not in this clone" in alone.value.render()
    assert workers.value.render() == alone.value.render()


def test_an_unreadable_version_is_the_same_finding_in_workers(repo):
    """Bytes that are not text are a finding at their commit (A403), and the change read as text is judged
    too (the junk line lands in Partnership: G402), however many processes judge."""
    committed_base(repo)
    (repo / "CONTINUITY.md").write_bytes(base_text().encode() + b"\n\xff\xfe not text\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "binary junk", "--no-verify")
    cfg = load_config(repo)
    alone, workers = run_audit(cfg, jobs=1), run_audit(cfg, jobs=2)
    assert [f.code for f in alone.findings] == ["A403", "G402"] and "UTF-8" in alone.findings[0].message
    assert [f.to_dict() for f in workers.findings] == [f.to_dict() for f in alone.findings]


def test_slices_cover_every_commit_once_in_order():
    shas = [f"c{n}" for n in range(103)]
    parts = slices(shas, 3)
    assert [s for part in parts for s in part] == shas
    assert len(parts) == 12 and max(map(len, parts)) - min(map(len, parts)) <= 1
    assert slices(["a"], 4) == [["a"]]


def test_short_histories_are_judged_in_process():
    assert jobs_for(MIN_COMMITS_PER_JOB - 1) == 1
    assert jobs_for(10, requested=1) == 1
    assert jobs_for(10, requested=2) == 2  # asked for: honoured, whatever the length


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_an_audit_pending_while_the_history_is_read_reports_the_same(mixed_history, jobs):
    """The report starts the audit's workers, reads the history in the parent, then joins them."""
    from flowgit.history.audit import PendingAudit
    from flowgit.history.walk import read_history

    cfg = load_config(mixed_history)
    alone = run_audit(cfg, jobs=1).to_dict()
    with PendingAudit(cfg, jobs=jobs) as pending:
        history = read_history(cfg)  # the parent's own work meanwhile, with a git process of its own
        assert (pending._pending is not None) == (jobs > 1)
        assert pending.report().to_dict() == alone
    assert history.commits


def test_a_pending_audit_left_unread_leaves_no_worker_behind(mixed_history):
    import multiprocessing

    from flowgit.history.audit import PendingAudit

    with PendingAudit(load_config(mixed_history), jobs=2):
        assert multiprocessing.active_children()
    assert not multiprocessing.active_children()


def test_an_error_in_a_pending_audit_is_raised_when_its_report_is_asked_for(tmp_path):
    from flowgit.history.audit import PendingAudit

    with PendingAudit(load_config(_partial_clone(tmp_path)), jobs=2) as pending, \
            pytest.raises(FlowgitError) as raised:
        pending.report()
    assert "not in this clone" in raised.value.render()


def test_a_version_over_the_size_limit_is_a_finding_and_the_audit_goes_on(repo, run):
    """Over the size limit even read leniently: A403 at its commit, and the commit that shrinks it again and
    the ones after it are judged (the audit once stopped with exit 2 for the whole history)."""
    from flowgit.fsio import MAX_TEXT_BYTES

    committed_base(repo)
    (repo / "CONTINUITY.md").write_text(base_text() + ("a pasted log line\n" * (MAX_TEXT_BYTES // 17 + 10)))
    git(repo, "commit", "-qam", "pasted a log", "--no-verify")
    big = git(repo, "rev-parse", "HEAD").strip()
    (repo / "CONTINUITY.md").write_text(base_text())
    git(repo, "commit", "-qam", "log removed", "--no-verify")
    commit_text(repo, p01(2), "ungrounded 2x", "--no-verify")
    cfg = load_config(repo)
    alone, workers = run_audit(cfg, jobs=1), run_audit(cfg, jobs=2)
    codes = [(f.code, f.commit) for f in alone.findings]
    assert ("A403", big) in codes and "over the" in next(f.message for f in alone.findings if f.code == "A403")
    assert any(code == "G101" for code, _ in codes), codes  # judged after it
    assert [f.to_dict() for f in workers.findings] == [f.to_dict() for f in alone.findings]
    res = run(repo, "audit")
    assert res.code == 1 and "A403" in res.out, res.out + res.err
    assert run(repo, "report", "-o", str(repo.parent / "r.html")).code == 0
