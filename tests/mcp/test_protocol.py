"""`flowgit mcp` over its stdio wire, line by line: what no SDK client would send (a line that is not JSON, a
request cut short), and a cancellation sent while a wrap commits."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from tests.commands.agent_fixtures import BIN, hook_env  # noqa: E402
from tests.conftest import git  # noqa: E402


class Wire:
    """The server as a subprocess, spoken to in raw lines; each line it writes is read as one JSON message."""

    def __init__(self, where: Path) -> None:
        self.proc = subprocess.Popen([str(BIN / "flowgit"), "mcp"], cwd=where, env=hook_env(FLOWGIT_SESSION="s1"),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.proc.stdout], daemon=True).start()
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "wire", "version": "0"}}})
        assert self.answer(0)["result"]["serverInfo"]["name"] == "flowgit"
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict | bytes) -> None:
        self.proc.stdin.write(message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def next(self, timeout: float = 30) -> dict | None:
        """The next message the server writes, or None if it writes none in ``timeout`` seconds."""
        try:
            return json.loads(self.lines.get(timeout=timeout))
        except queue.Empty:
            return None

    def answer(self, request_id: int, timeout: float = 60) -> dict:
        """The answer to request ``request_id`` (messages before it, such as log notices, skipped)."""
        deadline = time.monotonic() + timeout
        while (message := self.next(max(deadline - time.monotonic(), 0.1))) is not None:
            if message.get("id") == request_id:
                return message
        raise AssertionError(f"no answer to request {request_id}")

    def call(self, request_id: int, name: str, arguments: dict) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                   "params": {"name": name, "arguments": arguments}})

    def close_input(self) -> None:
        """End what the server reads (as a client does that sent its last request), leaving it to answer."""
        self.proc.stdin.close()

    def close(self) -> str:
        """Close the connection and wait for the server to end; what it wrote on stderr."""
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(30)
        finally:
            self.proc.kill()
        return self.proc.stderr.read().decode()


@pytest.fixture
def initialized(repo: Path, run) -> Path:
    assert run(repo, "init", "--commit", "--no-hooks").code == 0
    return repo


def test_every_line_the_server_cannot_read_is_answered_and_the_server_goes_on(initialized):
    """JSON-RPC 2.0: a Parse error (-32700, id null) for what is not JSON, an Invalid Request (-32600, with its
    id) for a request the server cannot take. The server dropped all of these without a word, and the client
    waited for ever."""
    store = (initialized / ".flow" / "episodes.jsonl").read_bytes()
    wire = Wire(initialized)
    nested = "[" * 300 + "]" * 300
    try:
        for line in (b"this is not json\n", b'{"jsonrpc": "2.0", "id": 50, "method": "tools/list"\n'):
            wire.send(line)
            refused = wire.next()
            assert refused and refused["id"] is None and refused["error"]["code"] == -32700, line
        wire.call(51, "episode_add", {"type": "finding", "content": "lone \ud800 surrogate"})  # (json escapes it)
        wire.send(('{"jsonrpc":"2.0","id":52,"method":"tools/call","params":{"name":"wrap","arguments":'
                   '{"plan":{"state":' + nested + '},"dry_run":true}}}\n').encode())
        wire.send({"jsonrpc": "2.0", "id": 53})
        answers = [wire.next() for _ in range(3)]
        assert [(a["id"], a["error"]["code"]) for a in answers] == [(51, -32600), (52, -32600), (53, -32600)]
        assert "lone surrogate" in answers[0]["error"]["message"]
        assert "`method`" in answers[2]["error"]["message"]
        wire.call(54, "status", {})
        assert wire.answer(54)["result"]["isError"] is False  # still serving
    finally:
        logged = wire.close()
    assert logged.count("answered a message it cannot read") == 5
    assert (initialized / ".flow" / "episodes.jsonl").read_bytes() == store  # nothing refused was recorded


@pytest.mark.parametrize("bad_id", ["1.5", "true", "null", '{"a": 1}'])
def test_a_request_whose_id_is_no_string_or_integer_is_answered_and_not_run(initialized, bad_id):
    """The SDK reads such a request as a notification (the id dropped) and answers nothing: the client waited
    for ever. It is an Invalid Request with id null, noted on stderr, and the tool is not run."""
    store = (initialized / ".flow" / "episodes.jsonl").read_bytes()
    wire = Wire(initialized)
    try:
        wire.send(('{"jsonrpc":"2.0","id":' + bad_id + ',"method":"tools/call","params":{"name":"episode_add",'
                   '"arguments":{"type":"finding","content":"never recorded"}}}\n').encode())
        refused = wire.next()
        assert refused and refused["id"] is None and refused["error"]["code"] == -32600, refused
        assert "`tools/call` came without an id" in refused["error"]["message"]
        wire.call(9, "status", {})
        assert wire.answer(9)["result"]["isError"] is False  # still serving
    finally:
        logged = wire.close()
    assert "answered a message it cannot read" in logged
    assert (initialized / ".flow" / "episodes.jsonl").read_bytes() == store


def test_calls_sent_before_the_client_closes_its_end_are_all_answered(initialized):
    """`printf … | flowgit mcp`: the server loop ended at the end of input and cancelled the calls still
    running, so a wrap committed and never said so. Every call is answered before the server ends."""
    head = git(initialized, "rev-parse", "HEAD").strip()
    wire = Wire(initialized)
    wire.call(2, "wrap", {"plan": {"state": "Focus: the retry budget.",
                                   "episodes": [{"type": "finding", "content": "retries multiplied load"}]}})
    wire.call(3, "status", {})
    wire.close_input()
    answers = {}
    while not {2, 3} <= set(answers) and (message := wire.next(60)) is not None:
        answers[message.get("id")] = message
    wire.close()
    assert set(answers) >= {2, 3}, answers
    committed = json.loads(answers[2]["result"]["content"][0]["text"])["committed"]
    assert committed == git(initialized, "rev-parse", "HEAD").strip() != head


def test_a_wrap_cancelled_while_it_commits_is_answered_with_what_it_committed(initialized, tmp_path):
    """A cancellation cannot stop a wrap halfway (its call runs in a thread, and one that got to git commit
    has committed): the server used to finish the wrap and send nothing, so the client never learnt of the
    commit. It now ignores the cancellation, as MCP allows for what cannot be cancelled, and answers."""
    started = tmp_path / "hook-started"
    hook = initialized / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\n: > '{started}'\nsleep 2\n")
    hook.chmod(0o755)
    head = git(initialized, "rev-parse", "HEAD").strip()
    wire = Wire(initialized)
    try:
        wire.call(77, "wrap", {"plan": {"state": "Focus: this wrap was cancelled.",
                                        "episodes": [{"type": "finding", "content": "cancel this wrap"}]}})
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), "the wrap never reached its commit"
        wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 77, "reason": "the user stopped it"}})
        answered = json.loads(wire.answer(77)["result"]["content"][0]["text"])
        assert _lock_is_free(initialized / ".git" / "flowgit.lock")  # (while the server still runs)
    finally:
        logged = wire.close()
    assert answered["committed"] == git(initialized, "rev-parse", "HEAD").strip() != head
    assert "request 77 was cancelled by the client" in logged
    assert git(initialized, "status", "--porcelain") == ""  # the wrap whole: nothing half-written
    assert list((initialized / ".git").glob("flowgit-wrap*")) == []  # no journal left behind


def _lock_is_free(path: Path) -> bool:
    """Whether the repository lock (an OS lock on ``path``) can be taken now."""
    import fcntl

    with path.open("a") as held:
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(held, fcntl.LOCK_UN)
    return True
