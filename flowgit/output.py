"""Rendering for people and for agents: one place decides text vs JSON."""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Callable, TextIO


def dumps(data: Any) -> str:
    """The JSON text of ``data`` exactly as ``--json`` prints it (the MCP server returns the same)."""
    return json.dumps(data, indent=2, ensure_ascii=False, default=_default)


def to_jsonable(data: Any) -> Any:
    """``data`` as plain JSON values (dicts, lists, strings, numbers), the same as ``--json`` would print."""
    return json.loads(dumps(data))


def emit_json(data: Any) -> None:
    """Write ``data`` as JSON; in ASCII escapes where stdout's encoding cannot spell every character (the
    same document to a JSON reader, where a replaced character would change it)."""
    encoding = (getattr(sys.stdout, "encoding", None) or "utf-8").lower().replace("-", "").replace("_", "")
    if encoding in ("utf8", "utf8sig"):
        sys.stdout.write(dumps(data) + "\n")
    else:
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=True, default=_default) + "\n")


def emit_bytes(data: bytes) -> None:
    """Write ``data`` to standard output as the bytes they are (a page that declares its own charset),
    whatever the terminal's encoding; as text where the stream takes no bytes."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stream
        sys.stdout.write(data.decode("utf-8"))
        return
    sys.stdout.flush()
    buffer.write(data)
    buffer.flush()


def _default(obj: Any) -> Any:
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if hasattr(obj, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(obj)
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


def emit(data: Any, as_json: bool, human: Callable[[Any], str]) -> None:
    """Print ``data`` as JSON for agents or through ``human`` for people."""
    if as_json:
        emit_json(data)
    else:
        text = terminal_safe(human(data))
        if text:
            sys.stdout.write(text if text.endswith("\n") else text + "\n")


# What a terminal acts on rather than shows: C0 and C1 controls (but the line break and the tab), DEL, and the
# bidirectional and line-separator marks. The only escape sequences a human rendering writes are flowgit's own
# colours (:func:`style`: one SGR code of :data:`_COLOURS`, or the reset): every other one came from the
# repository's text (a title set, a screen cleared, words concealed or painted black on black).
_ACTING_RE = re.compile("\x1b\\[[0-9;]*m|\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f"
                        "\u2028\u2029\u202a-\u202e\u2066-\u2069]")  # (a CRLF line ending is shown as it is)


def terminal_safe(text: str, stream: "TextIO | None" = None) -> str:
    """``text`` with every control character that came from the repository shown as an escape (``\\x1b``,
    ``\\u202e``): a State, an episode, a session id or a deposit's text must not set a terminal's title,
    clear its screen or reorder a line. Colours flowgit added for ``stream`` (default stdout) are kept."""
    if not text:
        return text
    colours = colour_enabled(stream)  # (flowgit colours only a terminal: elsewhere every escape is the text's)
    return _ACTING_RE.sub(lambda m: _shown_control(m, colours), text)


def _shown_control(match: "re.Match[str]", colours: bool) -> str:
    found = match.group()
    if len(found) > 1:
        own = colours and found in _OWN_SGR
        return found if own else found.replace("\x1b", "\\x1b")  # flowgit's own colour, on a terminal
    code = ord(found)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


class Progress:
    """A one-line progress counter on stderr, shown only when stderr is a terminal."""

    def __init__(self, label: str, total: int | None = None, *, every: int = 200) -> None:
        self.label, self.total, self.every = label, total, every
        self.enabled = sys.stderr.isatty()
        self.count = 0

    def step(self, n: int = 1) -> None:
        self.count += n
        if self.enabled and self.count % self.every == 0:
            of = f"/{self.total}" if self.total else ""
            sys.stderr.write(f"\r{self.label}: {self.count}{of}")
            sys.stderr.flush()

    def done(self) -> None:
        if self.enabled and self.count >= self.every:
            sys.stderr.write("\r" + " " * (len(self.label) + 24) + "\r")
            sys.stderr.flush()


_COLOURS = {"red": 31, "green": 32, "yellow": 33, "blue": 34, "magenta": 35, "cyan": 36, "dim": 2, "bold": 1}
_OWN_SGR = frozenset(f"\x1b[{code}m" for code in (*_COLOURS.values(), 0))  # what style() writes


def colour_enabled(stream: TextIO | None = None) -> bool:
    """Colour only on a terminal, and never when ``NO_COLOR`` is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR", "") != "":
        return False
    stream = sys.stdout if stream is None else stream
    try:
        return bool(stream.isatty()) and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


def style(text: str, colour: str, stream: TextIO | None = None) -> str:
    """``text`` in ``colour`` when ``stream`` (default stdout) is a colour terminal, else unchanged."""
    if not text or not colour_enabled(stream):
        return text
    return f"\x1b[{_COLOURS[colour]}m{text}\x1b[0m"


def counted(n: int, one: str, many: str | None = None) -> str:
    """``1 day``, ``2 days``, ``1 try``, ``3 tries``: a count with its noun in the right number."""
    return f"{n} {one if n == 1 else (many or one + 's')}"
