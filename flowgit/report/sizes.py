"""The continuity file's size at one version, measured the way the gate's budget rules measure it.

A report over 10,000 wraps cannot afford a full :class:`Document` parse per
version, so this reads lines with the history scanner's cached line classes
(``##`` heading, fence, other) and applies the gate's definitions: the State
section counts the characters of its non-structural lines, Developing counts
its non-structural lines outside code fences. Tests hold these figures equal
to :mod:`flowgit.checks.size` on every fixture.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from flowgit.continuity.document import fence_step, is_structural
from flowgit.continuity.scan import FENCE, HEADING, classify
from flowgit.continuity.sections import DEVELOPING, STATE


@dataclass(frozen=True)
class Size:
    """One version's measures (None: the section is not there)."""

    chars: int
    lines: int
    state_chars: int | None
    developing_lines: int | None

    def to_dict(self) -> dict:
        return {"chars": self.chars, "lines": self.lines, "state_chars": self.state_chars,
                "developing_lines": self.developing_lines}


def measure(text: str, table: Mapping[str, str]) -> Size:
    """Measure one version of the file; ``table`` maps lower-cased names and aliases to canonical names."""
    raw_lines = text.split("\n")
    if raw_lines and raw_lines[-1] == "":
        raw_lines.pop()
    state: int | None = None
    developing: int | None = None
    seen: set[str] = set()
    current: str | None = None  # the canonical section we are measuring, if it is State or Developing
    fence: str | None = None
    for line in raw_lines:
        line = line.rstrip("\r")
        kind, payload = classify(line)
        if kind == HEADING and fence is None:
            name = str(payload)
            canonical = table.get(name.lower(), name)
            current = canonical if canonical in (STATE, DEVELOPING) and canonical not in seen else None
            if current is not None:
                seen.add(current)
                if current == STATE:
                    state = 0
                else:
                    developing = 0
            continue
        if kind == FENCE or fence is not None:
            fence, is_fence = fence_step(line, fence)
            if current == STATE:
                state = (state or 0) + (0 if is_structural(line) else len(line))
            continue
        if current is None or is_structural(line):
            continue
        if current == STATE:
            state = (state or 0) + len(line)
        else:
            developing = (developing or 0) + 1
    return Size(chars=len(text), lines=len(raw_lines), state_chars=state, developing_lines=developing)
