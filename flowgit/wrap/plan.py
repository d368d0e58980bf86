"""Loading a wrap plan (JSON or YAML, from a file or stdin) into typed operations."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flowgit.errors import FlowgitError
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


def load_plan(spec: str) -> Plan:
    """Read a plan from a path, or from stdin when ``spec`` is ``-``; JSON or YAML by content."""
    if spec == "-":
        text, source = sys.stdin.read(), "<stdin>"
    else:
        path = Path(spec)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise FlowgitError("no such plan file", path=spec, fix="write the plan first (see --schema)") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise FlowgitError(f"cannot read the plan ({exc})", path=spec,
                               fix="name a readable UTF-8 JSON or YAML file, or - for stdin") from None
        source = spec
    return Plan.from_data(parse_plan_text(text, source), source)


def parse_plan_text(text: str, source: str) -> Any:
    if not text.strip():
        raise FlowgitError("the plan is empty", path=source, fix="see `flowgit wrap --schema`")
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")) or source.endswith(".json"):
        try:
            return json.loads(text)
        except RecursionError:
            raise FlowgitError("nested too deeply", path=source, fix="a plan is a flat object of lists") from None
        except json.JSONDecodeError as exc:
            raise FlowgitError(f"malformed JSON: {exc.msg} (column {exc.colno})", path=source,
                               line=exc.lineno, fix="fix the JSON syntax") from None
    import yaml

    try:
        return yaml.safe_load(text)
    except RecursionError:
        raise FlowgitError("nested too deeply", path=source, fix="a plan is a flat object of lists") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FlowgitError(f"malformed YAML: {problem}", path=source,
                           line=(mark.line + 1) if mark else None, fix="fix the YAML syntax") from None
