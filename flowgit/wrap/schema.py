"""The wrap plan's JSON Schema, and the small validator that enforces it.

The schema is the single source of truth: ``flowgit wrap --schema`` prints it
for agents, and :func:`validate` walks the same dictionary (the subset of JSON
Schema it uses: type, properties, required, additionalProperties, enum, const,
items, minLength, oneOf discriminated by ``op``) to report the first problem
with the exact path of the offending field.
"""

from __future__ import annotations

from typing import Any

from flowgit.episodes import EPISODE_TYPES, is_text

EVIDENCE = {
    "type": "array",
    "description": "Episode ids (ep-…) or references to this plan's episodes by position (#0, #1, …).",
    "items": {"type": "string", "minLength": 1},
}
# The grammar's name (flowgit.continuity.patterns.HEAD_RE): a letter or digit of any script, then letters,
# digits, `_ . - /` (`retry_budget`, `APIキー`, `прогрев_кэша`); names that mix scripts are the gate's (G113).
NAME = {"type": "string", "minLength": 1,
        "pattern": "^[^\\W_][\\w.\\-/]*$",
        "description": "The pattern's name: its identity across the whole history (letters of any script, "
                       "digits, _ . - /)."}


def _op(op: str, description: str, required: list[str], **props: Any) -> dict[str, Any]:
    return {"type": "object", "description": description, "required": ["op", *required],
            "additionalProperties": False,
            "properties": {"op": {"const": op}, "name": NAME, **props}}


SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "flowgit wrap plan",
    "description": "What one session's wrap does, step by step. Every key is optional except where noted; "
                   "a section left out is left alone.",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "session": {"type": "string", "minLength": 1,
                    "description": "Session id: recorded on the episodes and as the Flow-Session trailer."},
        "agent": {"type": "string", "description": "Who wrote the episodes."},
        "date": {"type": "string", "description": "The wrap's date (2026-11-30); default today (UTC)."},
        "episodes": {
            "type": "array", "description": "Step 1: the session's facts, recorded before anything else.",
            "items": {"type": "object", "required": ["type", "content"], "additionalProperties": False,
                      "properties": {"type": {"enum": list(EPISODE_TYPES)},
                                     "content": {"type": "string", "minLength": 1},
                                     "tags": {"type": "array", "items": {"type": "string"}},
                                     "ts": {"type": "string", "description": "ISO-8601; default now."}}},
        },
        "state": {"type": "string", "description": "Current State, REPLACED entirely."},
        "top_of_mind": {"type": ["string", "array"], "items": {"type": "string"},
                        "description": "Top of Mind, REPLACED (a list becomes bullets)."},
        "actions": {
            "type": "object", "additionalProperties": False,
            "description": "Action Items lifecycle. Items are matched by a case-insensitive part of their text.",
            "properties": {
                "done": {"type": "array", "items": {"type": "string", "minLength": 1}},
                "add": {"type": "array", "items": {"type": "string", "minLength": 1}},
                "remove": {"type": "array", "items": {"type": "string", "minLength": 1}},
                "seen": {"type": "object", "additionalProperties": {"type": "string"}},
                "next": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
        "recent": {"type": "string", "description": "Recent Context, REWRITTEN as prose."},
        "patterns": {
            "type": "array", "description": "Steps 4-5: Developing and Proven Knowledge operations.",
            "items": {"oneOf": [
                _op("add", "A new pattern at 1x in Developing Knowledge.", ["name", "text"],
                    text={"type": "string", "minLength": 1}, category={"type": "string"},
                    derives_from={"type": "array", "items": NAME,
                                  "description": "Patterns of the file it derives from, written `[<- a, b]`: "
                                                 "when one is demoted, the wrap asks to re-check this one."}),
                _op("increment", "1x -> 2x with at least 2 independent episodes.", ["name", "evidence"],
                    evidence=EVIDENCE, category={"type": "string"}),
                _op("graduate", "2x -> 3x, moved to Proven, with 3 independent episodes from 2+ sources.",
                    ["name", "evidence"], evidence=EVIDENCE, category={"type": "string"},
                    text={"type": "string", "minLength": 1, "description": "Compressed wording for Proven."}),
                _op("demote", "Back from Proven to Developing, with the reason annotated.", ["name", "reason"],
                    reason={"type": "string", "minLength": 1}, evidence=EVIDENCE),
                _op("archive", "Removed from the file (git keeps its text).", ["name"],
                    reason={"type": "string"}),
            ]},
        },
    },
}

TYPES = {"object": dict, "array": list, "string": str, "integer": int, "boolean": bool}


class SchemaError(Exception):
    """The first field that does not fit: ``path`` as people read it (``plan.actions.next.breaker ADR``),
    ``keys`` the same as the keys and indices walked to it (to find the field in the plan's source, where a
    key may hold a dot), ``bare`` whether text was wanted and a bare scalar given (YAML's ``yes``, ``null``)."""

    def __init__(self, path: str, message: str, keys: tuple[str | int, ...] = (), bare: bool = False) -> None:
        self.path, self.message, self.keys, self.bare = path, message, keys, bare
        super().__init__(f"{path}: {message}")


def validate(value: Any, schema: dict[str, Any] = SCHEMA, path: str = "plan") -> None:
    """Raise :class:`SchemaError` naming the first field that does not fit ``schema``."""
    _validate(value, schema, path, ())


def _validate(value: Any, schema: dict[str, Any], path: str, keys: tuple[str | int, ...]) -> None:
    if "oneOf" in schema:
        _one_of(value, schema["oneOf"], path, keys)
        return
    if "const" in schema and value != schema["const"]:
        raise SchemaError(path, f"must be {schema['const']!r}", keys)
    if "enum" in schema and value not in schema["enum"]:
        raise SchemaError(path, f"is {value!r}; use one of {', '.join(map(str, schema['enum']))}", keys)
    types = schema.get("type")
    if types:
        allowed = types if isinstance(types, list) else [types]
        if not any(isinstance(value, TYPES[t]) and not (t == "integer" and isinstance(value, bool))
                   for t in allowed):
            whole = "" if "." in path or "[" in path else " (the whole plan is one JSON or YAML object: "\
                "`{\"session\": …, \"state\": …}`)"
            bare = "string" in allowed and (value is None or isinstance(value, (bool, int, float)))
            raise SchemaError(path, f"must be {' or '.join(allowed)}, got {type(value).__name__}{whole}", keys,
                              bare=bare)
    if isinstance(value, str) and not is_text(value):
        raise SchemaError(path, "holds a character that is not text (a lone surrogate, `\\ud800`–`\\udfff`); "
                                "write it in UTF-8", keys)
    if isinstance(value, str) and ("\x00" in value or "\x7f" in value):
        raise SchemaError(path, "holds a NUL or DEL character, which the continuity file cannot hold as text; "
                                "take it out", keys)
    if isinstance(value, str) and len(value.strip()) < schema.get("minLength", 0):
        raise SchemaError(path, "must not be empty", keys)
    if isinstance(value, str) and "pattern" in schema:
        import re

        from flowgit.continuity.patterns import is_pattern_name

        if not re.fullmatch(schema["pattern"], value) and not (schema is NAME and is_pattern_name(value)):
            # (`$` alone lets a final newline through; marks on a name's letters are the grammar's, not JSON's)
            raise SchemaError(path, f"{value!r} is not a valid name (letters, digits, _ . - /)", keys)
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            _validate(item, schema["items"], f"{path}[{index}]", (*keys, index))
    if isinstance(value, dict):
        _object(value, schema, path, keys)


def _object(value: dict, schema: dict[str, Any], path: str, keys: tuple[str | int, ...]) -> None:
    props = schema.get("properties", {})
    for key in schema.get("required", []):
        if key not in value:
            raise SchemaError(f"{path}.{key}", "is required", (*keys, key))
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in props:
            _validate(item, props[key], f"{path}.{key}", (*keys, key))
        elif extra is False:
            from flowgit.suggest import close_matches

            near = close_matches(key, props, n=1)
            hint = f"did you mean `{near[0]}`? " if near else ""
            known = ", ".join(props) or "none"
            raise SchemaError(f"{path}.{key}", f"is not a known field ({hint}known: {known})", (*keys, key))
        elif isinstance(extra, dict):
            _validate(item, extra, f"{path}.{key}", (*keys, key))


def _one_of(value: Any, branches: list[dict[str, Any]], path: str, keys: tuple[str | int, ...]) -> None:
    if not isinstance(value, dict):
        raise SchemaError(path, f"must be object, got {type(value).__name__}", keys)
    ops = [b["properties"]["op"]["const"] for b in branches]
    op = value.get("op")
    if op not in ops:
        raise SchemaError(f"{path}.op", f"is {op!r}; use one of {', '.join(ops)}", (*keys, "op"))
    _validate(value, branches[ops.index(op)], path, keys)
