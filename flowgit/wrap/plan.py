"""Loading a wrap plan (JSON or YAML, from a file or stdin) into typed operations."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from flowgit.errors import FlowgitError
from flowgit.jsonkeys import RepeatedKey, unique_object
from flowgit.wrap.schema import SchemaError, validate


@dataclass(frozen=True)
class PatternOp:
    op: str
    name: str
    text: str = ""
    category: str = ""
    evidence: tuple[str, ...] = ()
    reason: str = ""
    derives_from: tuple[str, ...] = ()  # add: the patterns it derives from (`[<- a, b]`)
    index: int = 0  # position in plan.patterns, for error messages


@dataclass
class Plan:
    session: str = ""
    agent: str = ""
    date: str = ""
    episodes: list[dict[str, Any]] = field(default_factory=list)
    state: str | None = None
    top_of_mind: list[str] | str | None = None
    actions: dict[str, Any] = field(default_factory=dict)
    recent: str | None = None
    patterns: list[PatternOp] = field(default_factory=list)
    source: str = "plan"

    @classmethod
    def from_data(cls, data: Any, source: str = "plan", text: str | None = None) -> "Plan":
        """The plan ``data`` describes; ``text``, the source it was read from, lets an error name its line."""
        try:
            validate(data)
        except SchemaError as exc:
            raise _schema_error(exc, source, text) from None
        from flowgit.wrap.freetext import refuse_structure

        refuse_structure(data, source, text)
        _refuse_undated(data, source, text)
        ops = [PatternOp(op=p["op"], name=p["name"], text=p.get("text", ""), category=p.get("category", ""),
                         evidence=tuple(p.get("evidence", ())), reason=p.get("reason", ""),
                         derives_from=tuple(dict.fromkeys(p.get("derives_from", ()))), index=i)
               for i, p in enumerate(data.get("patterns", []))]
        return cls(session=data.get("session", ""), agent=data.get("agent", ""), date=data.get("date", ""),
                   episodes=list(data.get("episodes", [])), state=data.get("state"),
                   top_of_mind=data.get("top_of_mind"), actions=dict(data.get("actions", {})),
                   recent=data.get("recent"), patterns=ops, source=source)


def _refuse_undated(data: dict[str, Any], source: str, text: str | None) -> None:
    """An ``actions.seen``/``actions.next`` value that is no date, named with its line (exit 2)."""
    from flowgit.wrap.freetext import undated_action

    found = undated_action(data)
    if found is None:
        return
    path, keys, value = found
    raise FlowgitError(f"field `{path}` is {value!r}, which is not a date", path=source,
                       line=field_line(text, ("actions", *keys)) if text is not None else None,
                       fix="write the date as 2026-12-10 or Dec 10 (it becomes the item's `seen:`/`next:`)")


MAX_PLAN_BYTES = 8 << 20  # a wrap's plan is a few kilobytes; more is a wrong file or a stream without end


def load_plan(spec: str) -> Plan:
    """Read a plan from a path, or from stdin when ``spec`` is ``-``; JSON or YAML by content.

    Only a regular file is read (a FIFO would block, a device never ends), and at most
    :data:`MAX_PLAN_BYTES` of it or of stdin.
    """
    from flowgit.fsio import read_regular

    if spec == "-":
        stream = getattr(sys.stdin, "buffer", None)
        data = stream.read(MAX_PLAN_BYTES + 1) if stream is not None else \
            sys.stdin.read(MAX_PLAN_BYTES + 1).encode("utf-8", "surrogateescape")
        source = "<stdin>"
    elif not os.path.lexists(spec):
        raise FlowgitError("no such plan file", path=spec, fix="write the plan first (see --schema)")
    else:
        data, source = read_regular(spec, max_bytes=MAX_PLAN_BYTES), spec
    if len(data) > MAX_PLAN_BYTES:
        raise FlowgitError(f"the plan goes on past {MAX_PLAN_BYTES:,} bytes", path=source,
                           fix="a plan is a small JSON or YAML object (see --schema)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FlowgitError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x})", path=source,
                           line=data[:exc.start].count(b"\n") + 1, fix="save the plan as UTF-8") from None
    return Plan.from_data(parse_plan_text(text, source), source, text)


def _schema_error(exc: SchemaError, source: str, text: str | None) -> FlowgitError:
    """A field that does not fit, named with the line it is on; a bare YAML value where text was wanted is
    told to be quoted (YAML reads `yes`, `2026`, `1.5` or nothing as a boolean, a number or null)."""
    line = field_line(text, exc.keys) if text is not None else None
    fix = "see `flowgit wrap --schema`"
    if exc.bare and text is not None and not _is_json(text, source):
        fix = "quote the value (`\"…\"`): YAML reads a bare `yes`, `2026`, `1.5` or an empty value as a " \
              "boolean, a number or null, not as text; " + fix
    return FlowgitError(f"field `{exc.path}` {exc.message}", path=source, line=line, fix=fix)


def _is_json(text: str, source: str) -> bool:
    """Whether ``text`` is read as JSON (as :func:`parse_plan_text` decides), not as YAML."""
    return text.lstrip().startswith(("{", "[")) or source.endswith(".json")


def field_line(text: str, keys: tuple[str | int, ...]) -> int | None:
    """The line (from 1) of the value at ``keys`` in a plan's source, or of the nearest field above it that
    is there (a required field missing: its object); None when the source cannot be read so.

    JSON is read as YAML for this (a JSON plan is a YAML document), so both name the line."""
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError):
        return None
    for key in keys:
        child = _child(node, key)
        if child is None:
            break
        node = child
    return node.start_mark.line + 1 if node is not None else None


def _child(node: Any, key: str | int) -> Any:
    """The node under ``key`` (a mapping's value, a sequence's item), or None."""
    import yaml

    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
        return node.value[key]
    if isinstance(node, yaml.MappingNode):
        return next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == str(key)), None)
    return None


def parse_plan_text(text: str, source: str) -> Any:
    if not text.strip():
        raise FlowgitError("the plan is empty", path=source, fix="see `flowgit wrap --schema`")
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")) or source.endswith(".json"):
        try:
            return json.loads(text, object_pairs_hook=unique_object)
        except RepeatedKey as exc:
            raise FlowgitError(f"the key `{exc.key}` is given twice in one object", path=source,
                               fix="give each field once (JSON keeps only the last, silently)") from None
        except RecursionError:
            raise FlowgitError("nested too deeply", path=source, fix="a plan is a flat object of lists") from None
        except json.JSONDecodeError as exc:
            raise FlowgitError(f"malformed JSON: {exc.msg} (column {exc.colno})", path=source,
                               line=exc.lineno, fix="correct the JSON there (a plan is one JSON object: "
                                                     "`flowgit wrap --schema` prints its shape)") from None
    import yaml

    try:
        return yaml.load(text, Loader=_strict_yaml_loader())
    except RepeatedKey as exc:
        raise FlowgitError(f"the key `{exc.key}` is given twice in one mapping", path=source,
                           fix="give each field once (YAML keeps only the last, silently)") from None
    except RecursionError:
        raise FlowgitError("nested too deeply", path=source, fix="a plan is a flat object of lists") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FlowgitError(f"malformed YAML: {problem}", path=source,
                           line=(mark.line + 1) if mark else None,
                           fix="correct the YAML at that line (a plan is one mapping: `flowgit wrap --schema` prints "
                               "its shape; JSON is YAML too)") from None


def _strict_yaml_loader():
    """YAML's safe loader, refusing a key given twice in one mapping (built when a YAML plan is read).

    A date or time written bare (``date: 2026-12-03``) stays the text written: YAML would make it a date
    object, which the plan's fields (ISO text, as JSON gives them) would refuse as not a string."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):  # type: ignore[override]
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise RepeatedKey(key)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_scalar)
    return StrictLoader
