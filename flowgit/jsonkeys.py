"""JSON objects read with each key once: a key given twice is refused, never silently kept as its last value.

Python's reader (like most) keeps the last of two equal keys and drops the
first without a word: in a wrap plan, an episode on stdin or a settings file
that flowgit writes back, the dropped value is something the user wrote and
would lose. Every reader of user JSON passes :func:`unique_object` as its
``object_pairs_hook`` and turns :class:`RepeatedKey` into an error of its own.
"""

from __future__ import annotations

from typing import Any


class RepeatedKey(Exception):
    """A key given twice in one object (or YAML mapping): ``key`` names it."""

    def __init__(self, key: object) -> None:
        super().__init__(key)
        self.key = key


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The object of ``pairs``, refusing a key given twice (``object_pairs_hook`` for ``json.loads``)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise RepeatedKey(key)
        out[key] = value
    return out
