"""A store searched in two halves prints exactly what one scan prints: output, count and warnings, in order."""

from __future__ import annotations

import io
import json
import os
import random
import re

import pytest

from flowgit import search_split
from flowgit.commands import episode as cmd
from flowgit.episodes import Episode, EpisodeStore
from tests.commands.test_episode import QUERIES, awkward_store, reference

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the worker is forked (POSIX)")


@pytest.fixture
def split(monkeypatch):
    """Every store is split (the real threshold is megabytes); counts each way the halves were joined."""
    monkeypatch.setattr(search_split, "MIN_BYTES", 0)
    monkeypatch.setattr(search_split, "_cores", lambda: 2)
    joined = {"spliced": 0, "redone": 0}
    copy_to = search_split.Worker.copy_to

    def counting_copy(self, write, fd=None):
        joined["spliced"] += 1
        return copy_to(self, write, fd)

    monkeypatch.setattr(search_split.Worker, "copy_to", counting_copy)
    return joined


def run(path, capsys, **kw) -> tuple[str, int, str]:
    out = io.StringIO()
    count = cmd.stream_search(EpisodeStore(path), out=out, **kw)
    return out.getvalue(), count, capsys.readouterr().err


def one_scan(path, capsys, monkeypatch, **kw) -> tuple[str, int, str]:
    with monkeypatch.context() as m:
        m.setattr(search_split, "split_point", lambda data: None)
        return run(path, capsys, **kw)


@pytest.mark.parametrize("seed", range(2))
def test_halves_print_what_one_scan_prints_on_an_awkward_store(tmp_path, seed, split, capsys, monkeypatch):
    data = awkward_store(random.Random(seed), 300)  # duplicates, forged ids, damaged lines, foreign writers
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(data)
    for query in QUERIES:
        for as_json in (True, False):
            halves = run(path, capsys, limit=0, as_json=as_json, **query)
            assert halves == one_scan(path, capsys, monkeypatch, limit=0, as_json=as_json, **query), query
            assert halves[0] == reference(data, limit=0, as_json=as_json, **query)
    assert split["spliced"] > 0  # some queries matched no id in both halves: the worker's output was used


def test_an_id_matched_in_both_halves_is_shown_once_from_the_first(tmp_path, split, capsys, monkeypatch):
    eps = [Episode(f"ep-{i:012x}", "2026-11-30T10:00:00Z", "finding", f"retry {i}", "s", "", ()) for i in range(40)]
    lines = [e.to_json() for e in eps] + [eps[3].to_json().replace("retry 3", "retry again")] + \
            [e.to_json() for e in eps[:2]]
    path = tmp_path / "episodes.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out, count, err = run(path, capsys, limit=0, as_json=True, text="retry")
    assert [e["content"] for e in json.loads(out)] == [f"retry {i}" for i in range(40)] and count == 40
    assert split["spliced"] == 0  # the worker's half repeated ids from the first: this process redid it
    assert (out, count, err) == one_scan(path, capsys, monkeypatch, limit=0, as_json=True, text="retry")


def test_problems_in_the_worker_half_are_warned_after_the_first_half_with_their_lines(tmp_path, split, capsys,
                                                                                     monkeypatch):
    good = [Episode(f"ep-{i:012x}", "2026-11-30T10:00:00Z", "finding", f"retry {i}", "s", "", ()).to_json()
            for i in range(30)]
    lines = good[:5] + ['{"retry": torn'] + good[5:25] + ['{"retry": torn too'] + good[25:]
    path = tmp_path / "episodes.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out, count, err = run(path, capsys, limit=0, as_json=False, text="retry")
    assert [int(n) for n in re.findall(r"episodes\.jsonl:(\d+): ", err)] == [6, 27]
    assert count == 30 and split["spliced"] == 1
    assert (out, count, err) == one_scan(path, capsys, monkeypatch, limit=0, as_json=False, text="retry")


def _fails(exc: OSError):
    def fail(*args, **kwargs):
        raise exc
    return fail


@pytest.mark.parametrize("where, name, exc, seed", [
    (cmd, "_render_half", OSError(28, "No space left on device"), 5),  # the worker fails (a full temporary dir)
    (os, "fork", OSError(11, "Resource temporarily unavailable"), 6),  # no worker to be had (a process limit)
], ids=["worker-fails", "no-fork"])
def test_a_worker_that_fails_or_cannot_start_costs_time_not_output(tmp_path, split, capsys, monkeypatch,
                                                                     where, name, exc, seed):
    monkeypatch.setattr(where, name, _fails(exc))
    data = awkward_store(random.Random(seed), 200)
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(data)
    out, count, err = run(path, capsys, limit=0, as_json=True, text="retry")
    assert out == reference(data, limit=0, as_json=True, text="retry") and split["spliced"] == 0
    assert (out, count, err) == one_scan(path, capsys, monkeypatch, limit=0, as_json=True, text="retry")


def test_small_stores_and_single_cores_are_not_split(monkeypatch):
    assert search_split.split_point(b"x\n" * 1000) is None  # far below the threshold
    monkeypatch.setattr(search_split, "MIN_BYTES", 0)
    monkeypatch.setattr(search_split, "_cores", lambda: 1)
    assert search_split.split_point(b"x\n" * 1000) is None
    monkeypatch.setattr(search_split, "_cores", lambda: 2)
    assert search_split.split_point(b"ab\ncd\nef\n") == 6  # the line start after the middle
    assert search_split.split_point(b"one line, no newline after its middle") is None


def _big_store(path, lines: int) -> bytes:
    """A store past the real threshold, quickly: lines as flowgit writes them, every third holding "retry"."""
    words = ["retry budget", "cache outage", "Retry jitter", "ledger", "RETRY storm", "pool"]
    data = "".join(
        Episode(f"ep-{i:012x}", "2026-11-30T10:00:00Z", "finding", f"{words[i % 6]} #{i}", f"s{i % 7}", "agent-1",
                ("load", "retry") if i % 11 == 0 else ()).to_json() + "\n" for i in range(lines)).encode()
    path.write_bytes(data)
    return data


def test_the_command_splits_a_store_and_prints_it_whole_to_a_file_and_a_pipe(tmp_path, monkeypatch):
    import subprocess
    import sys

    path = tmp_path / "episodes.jsonl"
    _big_store(path, 30_000)
    split_everything = ("import sys; from flowgit import search_split; search_split.MIN_BYTES = 0; "
                        "from flowgit.entry import main; sys.exit(main())")  # the real command, any store split
    argv = [sys.executable, "-c", split_everything, "--store", str(path), "episode", "search", "retry", "--json"]
    with open(tmp_path / "out.json", "wb") as out:  # a file: the worker's half is sent by the kernel
        assert subprocess.run(argv, stdout=out, check=False).returncode == 0
    piped = subprocess.run(argv, capture_output=True, check=False)  # a pipe
    monkeypatch.setattr(search_split, "split_point", lambda data: None)
    expected = io.StringIO()
    count = cmd.stream_search(EpisodeStore(path), limit=0, as_json=True, out=expected, text="retry")
    assert count == sum(1 for i in range(30_000) if i % 6 in (0, 2, 4) or i % 11 == 0)
    assert (tmp_path / "out.json").read_text() == piped.stdout.decode() == expected.getvalue()
    assert piped.stderr == b""


def test_a_text_stream_with_a_file_behind_it_gets_the_same_bytes(tmp_path, split, capsys, monkeypatch):
    path = tmp_path / "episodes.jsonl"
    data = _big_store(path, 300)  # no id in both halves: the worker's half is spliced in by the kernel
    with open(tmp_path / "out", "wb") as raw:
        stream = io.TextIOWrapper(raw, encoding="utf-8")
        cmd.stream_search(EpisodeStore(path), limit=0, as_json=False, out=stream, text="retry")
        stream.flush()
    assert (tmp_path / "out").read_text(encoding="utf-8") == reference(data, limit=0, as_json=False, text="retry")
    assert split["spliced"] == 1


def test_the_worker_ids_are_checked_whatever_bytes_they_hold():
    ids = {b"ep-%012x" % i for i in range(200_000)} | {b"", b"x, y"}  # past one packed megabyte
    packed = search_split.HalfResult(1, b"\0".join(sorted(ids)) + b"\0", None, [])
    assert not packed.overlaps({b"ep-", b"ep-x", b"ep-%012x" % 200_000})
    for one in (b"ep-%012x" % 0, b"ep-%012x" % 199_999, b"", b"x, y"):
        assert packed.overlaps({b"other", one})
    as_set = search_split.HalfResult(1, b"", {b"a\0b"}, [])  # an id holding a NUL (decoded from \u0000)
    assert as_set.overlaps({b"a\0b"}) and not as_set.overlaps({b"a", b"b"})


def test_an_id_with_a_nul_matched_in_both_halves_is_still_shown_once(tmp_path, split, capsys, monkeypatch):
    line = '{"id": "ep-\\u0000", "ts": "", "type": "finding", "content": "retry nul"}'
    good = [Episode(f"ep-{i:012x}", "2026-11-30T10:00:00Z", "finding", f"retry {i}", "s", "", ()).to_json()
            for i in range(20)]
    path = tmp_path / "episodes.jsonl"
    path.write_text("\n".join([line] + good + [line]) + "\n")
    out, count, err = run(path, capsys, limit=0, as_json=True, text="retry")
    assert count == 21 and split["spliced"] == 0
    assert (out, count, err) == one_scan(path, capsys, monkeypatch, limit=0, as_json=True, text="retry")


def _exiting_slowly(monkeypatch, seconds: float = 0.5):
    """The worker lingers before it exits, as a forked copy of a large address space does while torn down."""
    import time

    real_exit = os._exit

    def slow_exit(code):
        time.sleep(seconds)
        real_exit(code)

    monkeypatch.setattr(os, "_exit", slow_exit)  # (only the forked worker calls it)


def test_the_result_is_taken_while_the_worker_is_still_exiting_and_it_is_reaped_on_close(monkeypatch):
    _exiting_slowly(monkeypatch)
    worker = search_split.Worker(lambda out: (out.write(b"half") and 1, {b"ep-1"}, []))
    try:
        half = worker.result()
        assert half is not None and half.count == 1 and half.overlaps({b"ep-1"})
        assert os.waitpid(worker.pid, os.WNOHANG) == (0, 0)  # handed back before it exited: not waited for
        chunks: list[bytes] = []
        worker.copy_to(chunks.append)
        assert b"".join(chunks) == b"half"
    finally:
        pid = worker.pid
        worker.close()
    with pytest.raises(ChildProcessError):  # reaped by close: no zombie left behind
        os.waitpid(pid, os.WNOHANG)


def test_a_result_cut_short_is_no_result(monkeypatch):
    real_write = os.write

    def half_then_fail(fd, data):  # the worker's pipe takes half the frame, then breaks
        written = real_write(fd, bytes(data[:max(1, len(data) // 2)]))
        monkeypatch.setattr(os, "write", lambda *a: (_ for _ in ()).throw(BrokenPipeError(32, "Broken pipe")))
        return written

    monkeypatch.setattr(os, "write", half_then_fail)
    worker = search_split.Worker(lambda out: (1, {b"ep-1"}, []))
    monkeypatch.setattr(os, "write", real_write)
    try:
        assert worker.result() is None  # the parent then scans the second half itself
    finally:
        worker.close()
