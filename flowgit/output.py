"""Rendering for people and for agents: one place decides text vs JSON."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=_default) + "\n")


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
        text = human(data)
        if text:
            sys.stdout.write(text if text.endswith("\n") else text + "\n")


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
