"""The blob stream: answers in the planned order, git a bounded distance ahead, always reaped.

Every test runs a real ``git cat-file --batch`` on a real repository; the
answers are compared with what ``git cat-file blob`` prints for the same id.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from flowgit.config import load_config
from flowgit.errors import FlowgitError
from flowgit.history import blobstream
from flowgit.history.audit import run_audit
from flowgit.history.blobstream import (MAX_AHEAD, BlobStream, BlobStreamError, PlannedReads, planned_reads)
from flowgit.history.walk import open_repo, read_history
from tests.conftest import git


def store(root: Path, payloads: list[bytes]) -> list[str]:
    """Write ``payloads`` as blobs of ``root``; their ids."""
    return [subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=root, input=p, capture_output=True,
                           check=True).stdout.decode().strip() for p in payloads]


def cat(root: Path, oid: str) -> bytes:
    return subprocess.run(["git", "cat-file", "blob", oid], cwd=root, capture_output=True, check=True).stdout


def reaped(pid: int) -> bool:
    """The process is gone and no zombie is left (this process reaped it)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return not Path(f"/proc/{pid}").exists() or _state(pid) != "Z"
    return False


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


@contextmanager
def deadline(seconds: int):
    """Fail instead of hanging: a deadlocked pipe would otherwise stop the suite."""
    def expired(*_):
        raise TimeoutError(f"no answer within {seconds} s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def blobs(repo: Path) -> tuple[Path, list[str], list[bytes]]:
    """Blobs of every kind of size: empty, one byte, no final newline, binary, and larger than any pipe."""
    payloads = [b"", b"x", b"no newline at the end", bytes(range(256)) * 40, b"line\n" * 10,
                b"big " * (3 << 18), b"# C\n\n## State\nFocus: one.\n"]
    return repo, store(repo, payloads), payloads


def test_answers_come_in_the_planned_order_byte_for_byte(blobs):
    root, ids, payloads = blobs
    plan = ids[::-1] + ids + [ids[5], ids[0], ids[5]]  # any order, repeats included
    with deadline(60), BlobStream(root / ".git", plan) as stream:
        answers = list(stream)
    assert [oid for oid, _ in answers] == plan
    assert [data for _, data in answers] == [cat(root, oid) for oid in plan]
    assert answers[len(ids) + 5][1] == payloads[5] and len(payloads[5]) > 1 << 20  # more than the pipe holds


def test_git_is_asked_at_most_ahead_ids_before_they_are_taken(blobs):
    root, ids, _ = blobs
    pulled = 0

    def plan():
        nonlocal pulled
        for n in range(5_000):
            pulled += 1
            yield ids[n % len(ids)]

    with deadline(60), BlobStream(root / ".git", plan(), ahead=8) as stream:
        assert pulled <= 8
        taken = 0
        for oid, data in stream:
            taken += 1
            assert data == cat(root, oid) if taken % 500 == 0 else data is not None
            assert len(stream.upcoming) <= 8 and pulled - taken <= 8  # the lazy plan is pulled a few ids ahead
            if taken == 1_000:
                break
    assert taken == 1_000 and pulled < 1_010  # closing early left the rest of the plan unasked


def test_the_look_ahead_never_exceeds_what_a_pipe_page_holds():
    assert MAX_AHEAD * 65 <= 4096  # ids in flight always fit the smallest pipe: a write never blocks


def test_a_missing_object_is_answered_none_and_the_stream_stays_in_step(blobs):
    root, ids, payloads = blobs
    absent = "0123456789abcdef" * 2 + "01234567"
    with BlobStream(root / ".git", [ids[2], absent, ids[6]]) as stream:
        assert list(stream) == [(ids[2], payloads[2]), (absent, None), (ids[6], payloads[6])]


def test_only_full_object_ids_are_ever_written_to_git(blobs):
    root, ids, _ = blobs
    for spec in ("HEAD:CONTINUITY.md", ids[0][:12], ids[0].upper(), "$HOME", ids[0] + "\n" + ids[1]):
        with pytest.raises(ValueError):
            BlobStream(root / ".git", [spec])


@pytest.mark.parametrize("how", ["close", "exception", "interrupt", "garbage"])
def test_git_is_reaped_however_reading_stops(blobs, how):
    root, ids, _ = blobs
    stream = BlobStream(root / ".git", ids * 200)
    pid = stream._proc.pid
    next(stream)
    if how == "close":
        stream.close()
        stream.close()  # twice is fine
    elif how == "garbage":
        del stream  # dropped half-read: reaped when collected
    else:
        error = KeyboardInterrupt if how == "interrupt" else RuntimeError
        with pytest.raises(error):
            with stream:
                next(stream)
                raise error()
    assert reaped(pid)


def test_a_finished_stream_reaps_git_by_itself(blobs):
    root, ids, _ = blobs
    stream = BlobStream(root / ".git", ids)
    pid = stream._proc.pid
    assert len(list(stream)) == len(ids)
    assert reaped(pid)


def test_sha256_repository(tmp_path):
    root = tmp_path / "s256"
    root.mkdir()
    git(root, "init", "-q", "--object-format=sha256")
    payloads = [b"sha-256 blob\n", b"", b"z" * 100_000]
    ids = store(root, payloads)
    assert all(len(oid) == 64 for oid in ids)
    with BlobStream(root / ".git", ids + ["f" * 64]) as stream:
        assert list(stream) == [*zip(ids, payloads), ("f" * 64, None)]


def test_a_git_that_cannot_answer_is_an_error_not_an_answer(tmp_path, blobs):
    _, ids, _ = blobs
    with pytest.raises(BlobStreamError):
        with BlobStream(tmp_path / "not-a-repository", ids) as stream:
            next(stream)


# ------------------------------------------------------------------ PlannedReads
def test_planned_reads_take_answers_a_little_out_of_order_and_read_the_rest_in_process(blobs):
    root, ids, payloads = blobs
    fallen_back: list[str] = []

    def fallback(oid: str) -> bytes:
        fallen_back.append(oid)
        return cat(root, oid)

    with PlannedReads(BlobStream(root / ".git", ids[:4]), fallback) as reads:
        assert reads.read(ids[1]) == payloads[1]  # ids[0] is passed on the way, and kept
        assert reads.read(ids[0]) == payloads[0]
        assert reads.read(ids[6]) == payloads[6]  # never planned
        assert reads.read(ids[3]) == payloads[3]
        assert reads.read(ids[1]) == payloads[1]  # planned once, read twice
    assert fallen_back == [ids[6], ids[1]] and reads.streamed == 2


def test_planned_reads_fall_back_when_git_stops(blobs):
    root, ids, payloads = blobs
    stream = BlobStream(root / ".git", ids)
    with PlannedReads(stream, lambda oid: cat(root, oid)) as reads:
        assert reads.read(ids[0]) == payloads[0]
        stream._proc.kill()
        stream._proc.wait()
        assert [reads.read(oid) for oid in ids[1:]] == payloads[1:]


# ------------------------------------------------------------------ in the walk and the audit
def wraps(root: Path, versions: int) -> None:
    """``versions`` commits of a continuity file, each adding a pattern, and a store that grows."""
    for n in range(versions):
        dev = "".join(f"! p{k}: pattern {k} | 1x\n" for k in range(n + 1))
        (root / "CONTINUITY.md").write_text(f"# C\n\n## Current State\nFocus: {n}.\n\n## Developing Knowledge\n{dev}")
        (root / ".flow").mkdir(exist_ok=True)
        with (root / ".flow" / "episodes.jsonl").open("a") as fh:
            fh.write(json.dumps({"id": f"ep-{n:012x}", "ts": "2026-11-30T00:00:00Z", "type": "finding",
                                 "content": f"seen {n}", "session": f"s{n}", "agent": "t", "tags": []}) + "\n")
        git(root, "add", "-A")
        git(root, "commit", "-qm", f"wrap {n}", "--no-verify")


@pytest.fixture
def counted(monkeypatch):
    """Every PlannedReads the walk or the audit opens, to see how many answers came from git."""
    made: list[PlannedReads] = []
    real = blobstream.planned_reads

    def spy(repo, plan):
        made.append(real(repo, plan))
        return made[-1]
    monkeypatch.setattr(blobstream, "planned_reads", spy)
    import flowgit.history.audit as audit
    monkeypatch.setattr(audit, "planned_reads", spy)
    return made


def without_stream(monkeypatch):
    def refuse(*_a, **_k):
        raise BlobStreamError("no git here")
    monkeypatch.setattr(blobstream, "BlobStream", refuse)


def test_the_walk_reads_every_version_from_git_and_answers_as_libgit2_does(repo, counted, monkeypatch):
    wraps(repo, 12)
    cfg = load_config(repo)
    streamed = read_history(cfg)
    assert sum(r.streamed for r in counted) == 12  # each version scanned once, every one from the stream
    without_stream(monkeypatch)
    alone = read_history(cfg)
    assert [(e.commit.sha, e.event.to_dict()) for e in streamed.events] == \
           [(e.commit.sha, e.event.to_dict()) for e in alone.events]
    assert len(alone.events) == 12


def test_the_audit_reads_its_blobs_from_git_and_reports_as_libgit2_does(repo, counted, monkeypatch):
    wraps(repo, 8)
    cfg = load_config(repo)
    streamed = run_audit(cfg, jobs=1).to_dict()
    assert sum(r.streamed for r in counted) >= 8
    without_stream(monkeypatch)
    assert run_audit(cfg, jobs=1).to_dict() == streamed


def test_a_slice_from_the_middle_of_the_history_reads_every_blob_from_git(repo, monkeypatch):
    """A worker's slice starts at a commit whose parent it does not judge: that parent's blobs are planned
    too, so libgit2 (which hashes every object it reads, a store of megabytes included) reads none of them."""
    import flowgit.history.audit as audit

    wraps(repo, 8)
    fell_back: list[str] = []
    real = blobstream.planned_reads

    def spy(repo_, plan):
        reads = real(repo_, plan)
        fallback = reads._fallback
        reads._fallback = lambda oid: fell_back.append(oid) or fallback(oid)
        return reads
    monkeypatch.setattr(audit, "planned_reads", spy)
    cfg = load_config(repo)
    history = audit.open_any(cfg.root)
    shas = git(repo, "rev-list", "--reverse", "HEAD").split()
    sliced = audit.judge_commits(cfg, history, [history[sha] for sha in shas[4:]], None)
    assert sliced.judged == 4 and fell_back == []
    whole = audit.judge_commits(cfg, history, [history[sha] for sha in shas], None)
    assert [f.to_dict() for f in sliced.findings] == [f.to_dict() for f in whole.findings
                                                      if f.commit in shas[4:]]


def partial_clone(tmp_path: Path) -> Path:
    """A blobless clone of three wraps: reading their versions needs blobs this clone does not have."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q")
    wraps(origin, 3)
    git(origin, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--filter=blob:none", "--no-checkout", origin.as_uri(), str(clone))
    return clone


def test_a_partial_clone_is_read_as_before_and_nothing_is_fetched(tmp_path, monkeypatch):
    clone = partial_clone(tmp_path)
    missing = {line[1:] for line in git(clone, "rev-list", "--objects", "--missing=print", "HEAD").split()
               if line.startswith("?")}
    assert missing  # the blobs are not here
    cfg = load_config(clone)
    outcomes = []
    for streamed in (True, False):
        if not streamed:
            without_stream(monkeypatch)
        for read in (read_history, lambda c: run_audit(c, jobs=1)):
            with pytest.raises(FlowgitError) as failed:  # a clear error, the same however the blob was asked for
                read(cfg)
            assert "not in this clone" in failed.value.render() and "--refetch" in failed.value.render()
            outcomes.append((type(failed.value), str(failed.value)))
    assert outcomes[:2] == outcomes[2:]
    for command in ("log", "audit"):  # the commands say so and exit 2, with no traceback
        done = subprocess.run([sys.executable, "-m", "flowgit", command], cwd=clone, capture_output=True, text=True)
        assert done.returncode == 2 and "not in this clone" in done.stderr and "Traceback" not in done.stderr
    repo = open_repo(clone)
    assert all(oid not in repo.odb for oid in missing)  # git fetched nothing behind the user's back
