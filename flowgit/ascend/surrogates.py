"""Lone surrogates out of what ascend reads, so that every output format can write it.

JSON and YAML may spell half of a UTF-16 surrogate pair (``\\ud83d``): a
JavaScript writer produces one when it cuts a string inside an emoji, and the
agent's session transcripts are written that way. The parsers hand such text
back as a Python string holding a lone surrogate, which no UTF-8 writer
accepts: one in a transcript made every format of ``flowgit ascend`` fail
with a traceback. The readers replace each with U+FFFD (what a lenient UTF-8
decoder shows for a broken character), and the command scrubs its output once
more for anything read elsewhere.
"""

from __future__ import annotations

import json
import re
from typing import Any

LONE = re.compile("[\ud800-\udfff]")   # a pair spelled in JSON is joined by the parser: any left is alone
REPLACEMENT = "\ufffd"


def scrub(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys included) replaced by U+FFFD."""
    if isinstance(value, str):
        return LONE.sub(REPLACEMENT, value) if LONE.search(value) else value
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, tuple):
        return tuple(scrub(v) for v in value)
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    return value


def may_hold(text: str | bytes) -> bool:
    """Whether JSON or YAML text spells a surrogate escape at all (the cheap test before a walk)."""
    if isinstance(text, bytes):
        return b"\\u" in text or b"\\U" in text
    return "\\u" in text or "\\U" in text


def loads(raw: str | bytes) -> Any:
    """``json.loads`` of one line, lone surrogates replaced (ValueError as json raises it).

    A line nested deeper than the parser (or :func:`scrub`) can recurse is a
    ValueError too: a transcript is untrusted input, and every reader already
    turns a ValueError into a skipped line, where a RecursionError would end
    the whole command with a traceback.
    """
    try:
        obj = json.loads(raw)
        return scrub(obj) if may_hold(raw) else obj
    except RecursionError:
        raise ValueError("a JSON value nested too deeply to read") from None
