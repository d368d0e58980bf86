"""What a Claude Code hook receives: a JSON object on stdin (``session_id``, ``cwd``, ``hook_event_name`` …)."""

from __future__ import annotations

import json
import sys
from typing import TextIO


def read_payload(stream: TextIO | None = None) -> dict:
    """The hook payload, or ``{}`` when stdin is a terminal, empty or not a JSON object.

    A hook must never break the session it serves, so a payload it cannot read
    is treated as no payload rather than as an error.
    """
    stream = sys.stdin if stream is None else stream
    try:
        if stream.isatty():
            return {}
        text = stream.read()
    except (OSError, ValueError):
        return {}
    try:
        value = json.loads(text) if text.strip() else {}
    except (ValueError, RecursionError):  # (bad JSON; an integer past Python's digit limit; nested deeper than
        return {}                          # the parser's stack: no payload)
    return value if isinstance(value, dict) else {}
