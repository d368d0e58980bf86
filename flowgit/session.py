"""Which session and agent an action belongs to.

Independence of evidence is judged by session and agent, so every writer must
resolve them the same way. The order is fixed: an explicit option, then
``FLOWGIT_SESSION``, then ``CLAUDE_CODE_SESSION_ID`` (which Claude Code exposes
to the commands its tools run), then the ``session_id`` a hook receives in its
JSON payload on stdin.
"""

from __future__ import annotations

import os

SESSION_VARIABLES = ("FLOWGIT_SESSION", "CLAUDE_CODE_SESSION_ID")
AGENT_VARIABLES = ("FLOWGIT_AGENT",)


def resolve_session(explicit: str | None = None, hook_payload: dict | None = None) -> str:
    """The session id in force, or "" when nothing names one.

    A hook's payload names the session that fired it, so it wins over the
    environment: a ``FLOWGIT_SESSION`` exported in a shell days ago would
    otherwise answer for every later session (a Stop hook silent for good once
    that old session wrapped)."""
    if explicit and explicit.strip():
        return explicit.strip()
    if hook_payload and isinstance(hook_payload.get("session_id"), str) and hook_payload["session_id"].strip():
        return hook_payload["session_id"].strip()
    for name in SESSION_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return ""


def resolve_agent(explicit: str | None = None) -> str:
    """The agent in force, or "" (callers that need one fall back to the commit author)."""
    if explicit and explicit.strip():
        return explicit.strip()
    for name in AGENT_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return ""


# What may not stand in a session or agent id: a line break or any other control character. The id goes
# into the store and, in a wrap, into the commit's `Flow-Session:` trailer, where a line break would start a
# trailer of its own (a forged `Flow-Override:`, say).
# Bidirectional controls go too: in a trailer they make one id display as another (`sess-production-1`).
_NOT_PLAIN = (frozenset(chr(c) for c in range(32)) | {"\x7f", "\x85", "\u2028", "\u2029", "\u200e", "\u200f",
                                                      "\u061c"}
              | frozenset(chr(c) for c in range(0x202A, 0x202F)) | frozenset(chr(c) for c in range(0x2066, 0x206A)))


def unplain(value: str) -> str | None:
    """The first control character (or bidirectional control) in ``value`` as an escape (``\\n``), or None."""
    for char in value:
        if char in _NOT_PLAIN:
            return repr(char)[1:-1]
    return None


def require_plain(value: str, what: str, where: str = "session") -> str:
    """``value`` when it holds no control character, else a FlowgitError naming it."""
    bad = unplain(value)
    if bad is not None:
        from flowgit.errors import FlowgitError

        raise FlowgitError(f"the {what} {value!r} holds a control character ({bad}): it would break the "
                           "line it is written on (the store's, and a wrap's `Flow-Session:` trailer)",
                           path=where, fix=f"give a {what} of plain text on one line")
    return value
