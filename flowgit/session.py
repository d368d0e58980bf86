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
    """The session id in force, or "" when nothing names one."""
    if explicit and explicit.strip():
        return explicit.strip()
    for name in SESSION_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    if hook_payload and isinstance(hook_payload.get("session_id"), str):
        return hook_payload["session_id"].strip()
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
