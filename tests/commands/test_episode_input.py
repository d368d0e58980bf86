"""`flowgit episode add` input that is not text, or never ends: exit 2, the line named, nothing appended."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _flowgit(repo: Path, *args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flowgit", *args], cwd=repo, capture_output=True, timeout=60,
                          env={**os.environ, "FLOWGIT_SESSION": "s1"}, **kw)


@pytest.fixture
def initialised(repo: Path) -> Path:
    assert _flowgit(repo, "init", "--no-hooks").returncode == 0
    return repo


def _store(repo: Path) -> bytes:
    return (repo / ".flow" / "episodes.jsonl").read_bytes()


def test_an_argument_of_bytes_that_are_not_utf8_is_refused_with_json(initialised):
    before = _store(initialised)
    result = _flowgit(initialised, "--json", "episode", "add", "--type", "finding", b"caf\xe9 latin-1")
    assert result.returncode == 2
    error = json.loads(result.stdout)["error"]
    assert "option `TEXT` holds a character that is not text" in error["message"]  # named as typed
    assert _store(initialised) == before


def test_a_lone_surrogate_escape_on_stdin_names_the_line(initialised):
    before = _store(initialised)
    lines = b'{"type": "finding", "content": "fine"}\n{"type": "finding", "content": "bad \\ud800 x"}\n'
    result = _flowgit(initialised, "episode", "add", input=lines)
    assert result.returncode == 2 and b"<stdin>:2:" in result.stderr and b"not text" in result.stderr
    assert _store(initialised) == before  # one bad line rejects the batch


def test_a_cut_off_json_line_is_named_at_the_column_where_it_ends(initialised):
    before = _store(initialised)
    result = _flowgit(initialised, "episode", "add", input=b'{"type":"finding","content":"a"}\n'
                                                          b'{"type":"finding","content":"b"\n')
    assert result.returncode == 2 and b"<stdin>:2: invalid JSON at column 32" in result.stderr, result.stderr
    assert _store(initialised) == before


def test_a_key_given_twice_on_stdin_is_refused_with_its_line_not_silently_kept_last(initialised):
    """JSON keeps the last of two equal keys: the first `content` would be lost without a word."""
    before = _store(initialised)
    lines = (b'{"type": "finding", "content": "fine"}\n'
             b'{"type": "finding", "content": "the retry budget held during the outage", "content": "ok"}\n')
    result = _flowgit(initialised, "--json", "episode", "add", input=lines)
    error = json.loads(result.stdout)["error"]
    assert result.returncode == 2 and error["file"] == "<stdin>" and error["line"] == 2
    assert error["message"] == "the key `content` is given twice in one object"
    assert _store(initialised) == before


def test_stdin_without_end_is_cut_off(initialised):
    before = _store(initialised)
    with open("/dev/zero", "rb") as zero:
        result = _flowgit(initialised, "episode", "add", stdin=zero)
    assert result.returncode == 2 and b"the line goes on past" in result.stderr
    assert b"Traceback" not in result.stderr and _store(initialised) == before


def test_an_episode_dated_in_the_future_is_refused_and_nothing_is_written(initialised):
    """The gate refuses to commit it before its date (G705) and every wrap commits what the store appends:
    recorded, it would stop every wrap in the clone, and its id (which holds no date) could not be recorded
    again with the right one. So it is refused up front, the store as it was."""
    before = _store(initialised)
    result = _flowgit(initialised, "episode", "add", "--type", "finding", "--ts", "2030-01-01T00:00:00Z",
                      "the budget held")
    assert result.returncode == 2 and b"more than an hour ahead of now" in result.stderr
    assert b"leave --ts out" in result.stderr and b"Traceback" not in result.stderr
    assert _store(initialised) == before
    data = json.loads(_flowgit(initialised, "episode", "add", "--json", "--type", "finding", "now it held").stdout)
    assert data["warnings"] == [] and len(data["added"]) == 1
    soon = _flowgit(initialised, "episode", "add", "--type", "finding", "--ts",
                    (datetime.now(timezone.utc) + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "a clock a little ahead")
    assert soon.returncode == 0  # within the skew clocks have


def test_a_byte_order_mark_before_the_first_line_is_no_part_of_the_json(initialised):
    """A Windows pipe starts with one; a mark anywhere else is still refused, with its line."""
    piped = '\ufeff{"type": "finding", "content": "read past the mark"}\n'.encode("utf-8")
    result = _flowgit(initialised, "episode", "add", input=piped)
    assert result.returncode == 0 and b"read past the mark" in _store(initialised), result.stderr
    before = _store(initialised)
    later = '{"type": "finding", "content": "first"}\n\ufeff{"type": "finding", "content": "x"}\n'.encode("utf-8")
    result = _flowgit(initialised, "episode", "add", input=later)
    assert result.returncode == 2 and b"<stdin>:2" in result.stderr and _store(initialised) == before
