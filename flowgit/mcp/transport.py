"""What the stdio transport does before the SDK sees a message: every line read gets an answer, and a call,
once started, runs to its end and is answered.

The SDK's stdio reader hands the server an exception for a line it cannot read (not JSON, cut short, a lone
surrogate escape, nesting beyond its parser's limit, no JSON-RPC message), and the server drops it without a
word: the client waits forever for the reply. Here each such line is answered as JSON-RPC 2.0 asks (-32700
Parse error with id null; -32600 Invalid Request with the request's id when it can be read, id null for a
request whose id is no string or integer, which the SDK reads as a notification) and noted on stderr. A
``notifications/cancelled`` is not passed on: no call can be stopped halfway (the tools run in a worker
thread the SDK cannot interrupt, and a wrap that got to its commit has committed), so honouring it would only
withhold the answer saying what was done. MCP lets a receiver ignore a cancellation of a request that cannot
be cancelled; the client ignores the late answer if it wants to. When the client closes its end, the server
ends once every call it started is answered (:class:`Calls`).
"""

from __future__ import annotations

import contextvars
import json
import re
import sys
from collections import Counter
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp_types import (INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, JSONRPCNotification, JSONRPCRequest,
                       JSONRPCResponse, RequestId)
from pydantic import ValidationError

LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")


async def serve_stdio(server: MCPServer) -> None:
    """Serve ``server`` on stdin/stdout (as the SDK's ``run("stdio")``), its inbound stream answered here."""
    lowlevel = server._lowlevel_server  # (no public way to run it on streams of one's own)
    async with stdio_server() as (read, write):
        calls = Calls()
        outbound = Outbound(write, calls)
        await lowlevel.run(Inbound(read, outbound, calls), outbound, lowlevel.create_initialization_options())


class Calls:
    """The requests passed to the server and not answered yet: when the client closes its end, the server
    loop would end and cancel them (a wrap that committed would never say so); it ends once they are answered."""

    def __init__(self) -> None:
        self.open: Counter = Counter()  # id -> calls in flight under it (a client may reuse an id: each counts)
        self._idle = anyio.Event()
        self._idle.set()

    def started(self, request_id: RequestId) -> None:
        self.open[request_id] += 1
        if self._idle.is_set():
            self._idle = anyio.Event()

    def answered(self, request_id: RequestId) -> None:
        if self.open[request_id] > 1:
            self.open[request_id] -= 1
        else:
            del self.open[request_id]
        if not self.open:
            self._idle.set()

    async def all_answered(self) -> None:
        await self._idle.wait()


class Outbound:
    """The write stream the server answers on: the SDK's, noting each answer in :class:`Calls`."""

    def __init__(self, inner: WriteStream[SessionMessage], calls: Calls) -> None:
        self._inner = inner
        self._calls = calls

    async def send(self, item: SessionMessage) -> None:
        try:
            await self._inner.send(item)
        finally:
            if isinstance(item.message, (JSONRPCResponse, JSONRPCError)) and item.message.id is not None:
                self._calls.answered(item.message.id)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Outbound:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class Inbound:
    """The read stream the server loop reads: the SDK's, less what is answered or ignored here."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], write: WriteStream[SessionMessage],
                 calls: Calls | None = None) -> None:
        self._inner = inner
        self._write = write
        self._calls = calls or Calls()

    @property
    def last_context(self) -> contextvars.Context | None:
        """The sender context of the last message (the SDK reads it off the stream it serves)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage:
        """The next message the server is to handle; at the end of input, only once every call is answered."""
        while True:
            try:
                item = await self._inner.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                await self._calls.all_answered()
                raise
            if isinstance(item, Exception):
                answer = refusal(item)
                if answer is not None:
                    await self._answer(*answer)
            elif is_cancel(item.message):
                _note(f"request {(item.message.params or {}).get('requestId')!r} was cancelled by the client; a "
                      "call cannot be stopped halfway, so it runs to its end and its answer is sent")
            elif is_request_without_id(item.message):
                await self._answer(None, ErrorData(
                    code=INVALID_REQUEST, message=f"Invalid Request: `{item.message.method}` came without an id "
                    "the server can answer to (a string or an integer; 1.5, true, null or an object is none), so "
                    "it was not run"))
            else:
                if isinstance(item.message, JSONRPCRequest):
                    self._calls.started(item.message.id)
                return item

    async def _answer(self, request_id: RequestId | None, error: ErrorData) -> None:
        """Answer a line the server cannot read, and say so on stderr."""
        _note(f"answered a message it cannot read (id {request_id!r}): {error.message}")
        reply = JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        try:
            await self._write.send(SessionMessage(message=reply))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the client is gone: no one is waiting for the answer

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Inbound:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Inbound:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def is_cancel(message: Any) -> bool:
    """Whether ``message`` is a client's ``notifications/cancelled``."""
    return isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled"


def is_request_without_id(message: Any) -> bool:
    """Whether ``message`` reads as a notification but names a request's method: a request whose id is no
    string or integer parses so (the id dropped), and a notification gets no answer, so the client would wait
    forever. Every notification MCP defines is named ``notifications/…``."""
    return isinstance(message, JSONRPCNotification) and not message.method.startswith("notifications/")


def refusal(exc: Exception) -> tuple[RequestId | None, ErrorData] | None:
    """The id (None when it cannot be read) and the JSON-RPC error that answer a line the reader refused;
    None for a blank line, which is no message (nothing to answer)."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    if not errors or errors[0]["type"] != "json_invalid":
        problem = _first_problem(errors, exc)
        return _request_id(_whole_message(errors)), ErrorData(
            code=INVALID_REQUEST, message=f"Invalid Request: not a JSON-RPC 2.0 message: {problem}")
    line, parser_says = str(errors[0]["input"]), str(errors[0].get("ctx", {}).get("error", exc))
    if not line.strip():
        return None
    try:
        message = json.loads(line)  # JSON the SDK's parser refuses (lone surrogates, deep nesting) reads here
    except (ValueError, RecursionError):
        return None, ErrorData(code=PARSE_ERROR, message=f"Parse error: {parser_says}")
    why = ("a string holds a lone surrogate escape, which is no Unicode character: send text as UTF-8 or "
           "escape it in pairs" if LONE_SURROGATE_RE.search(json.dumps(message, ensure_ascii=False))
           else f"the server cannot read it ({parser_says}): is it nested too deep?")
    return _request_id(message), ErrorData(code=INVALID_REQUEST, message=f"Invalid Request: {why}")


def _whole_message(errors: list[Any]) -> Any:
    """The message as parsed, from a validation error's details: the input of an error about the whole (its
    type) or about a field missing from it."""
    for error in errors:
        if len(error["loc"]) == 1 or (error["type"] == "missing" and len(error["loc"]) == 2):
            return error["input"]
    return None


def _first_problem(errors: list[Any], exc: Exception) -> str:
    """What is wrong, read as a request (the message was most likely meant as one)."""
    as_request = [e for e in errors if e["loc"][:1] == ("JSONRPCRequest",)] or errors
    if not as_request:
        return str(exc)
    where = ".".join(str(part) for part in as_request[0]["loc"][1:])
    return f"`{where}`: {as_request[0]['msg']}" if where else as_request[0]["msg"]


def _request_id(message: Any) -> RequestId | None:
    """The message's id when it is one JSON-RPC allows (a string or an integer), else None."""
    found = message.get("id") if isinstance(message, dict) else None
    return found if isinstance(found, (str, int)) and not isinstance(found, bool) else None


def _note(text: str) -> None:
    """A line on stderr, where the client's log of the server shows it."""
    sys.stderr.write(f"flowgit mcp: {text}\n")
    sys.stderr.flush()
