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
    def from_data(cls, data: Any, source: str = "plan") -> "Plan":
        try:
            validate(data)
        except SchemaError as exc:
            raise FlowgitError(f"field `{exc.path}` {exc.message}", path=source,
                               fix="see `flowgit wrap --schema`") from None
        from flowgit.wrap.freetext import refuse_structure

        refuse_structure(data, source)
        ops = [PatternOp(op=p["op"], name=p["name"], text=p.get("text", ""), category=p.get("category", ""),
                         evidence=tuple(p.get("evidence", ())), reason=p.get("reason", ""), index=i)
               for i, p in enumerate(data.get("patterns", []))]
        return cls(session=data.get("session", ""), agent=data.get("agent", ""), date=data.get("date", ""),
                   episodes=list(data.get("episodes", [])), state=data.get("state"),
                   top_of_mind=data.get("top_of_mind"), actions=dict(data.get("actions", {})),
                   recent=data.get("recent"), patterns=ops, source=source)


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
    return Plan.from_data(parse_plan_text(text, source), source)


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
