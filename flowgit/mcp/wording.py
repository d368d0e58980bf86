"""A CLI error told in the terms of the MCP tool that met it.

The tools call the functions the CLI calls, so their errors name what the command line has: options
(``--date``), the positional ``TEXT`` ("give it as the argument"), whole commands (``flowgit episode add
--type finding "…"``). An MCP caller has none of those; it has the tool's arguments. One mapping, applied to
every tool's error on its way out, renames each to the argument the tool takes (``--date`` -> ``date``, ``--tag``
-> ``tags``, ``TEXT`` -> ``text``) and a command that is this tool's into a call of it; what has no counterpart
(another command, an option no tool takes) is left as it was.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Collection
from typing import Any

POSITIONAL = "TEXT"  # the CLI's name for the argument it takes without an option (the episode's text)
OPTION = r"(?<![\w-])--[a-z][a-z-]*"
NAMED_OPTION_RE = re.compile(rf"\boption (`?)({OPTION})\1")  # "option `--session` holds …"
OPTION_RE = re.compile(OPTION)
CODE_RE = re.compile(r"(`[^`]*`)")  # a code span: a command of its own, renamed only when it is one option
COMMAND_RE = re.compile(r"(`?)flowgit ([^`]+)\1")
THE_ARGUMENT_RE = re.compile(r"\bthe argument\b")
RESOURCES = {"wrap --schema": "the resource `flowgit://wrap-plan-schema`"}  # commands the server has as a resource


def in_tool_terms(body: dict, tool: str, takes: Collection[str]) -> dict:
    """``body`` (``{"error": {"message", "fix", "option", …}}``) renamed for ``tool``, which takes ``takes``."""
    error = dict(body["error"])
    for key in ("message", "fix"):
        if error.get(key):
            error[key] = _reworded(error[key], tool, takes)
    if error.get("option") is not None:
        error["option"] = _option(error["option"], takes)
    return {**body, "error": error}


def argument_for(cli_name: str, takes: Collection[str]) -> str | None:
    """The tool's argument the CLI calls ``cli_name`` (``--since-ref`` -> ``since_ref``, ``--tag`` ->
    ``tags``, ``TEXT`` -> ``text``), or None when the tool takes none."""
    name = _bare(cli_name)
    return next((taken for taken in (name, name + "s") if taken in takes), None)


def _bare(cli_name: str) -> str:
    """``cli_name`` spelled as an argument is (``--since-ref`` -> ``since_ref``; ``TEXT`` -> ``text``)."""
    return "text" if cli_name == POSITIONAL else cli_name.lstrip("-").replace("-", "_")


def _option(option: str, takes: Collection[str]) -> str | None:
    """The ``option`` field: the argument it names; ``options`` (the call as a whole) names none."""
    if option == "options":
        return None
    if option == POSITIONAL or option.startswith("-"):
        return argument_for(option, takes) or option
    return option  # `plan` and the like: already the tool's own name


def _reworded(text: str, tool: str, takes: Collection[str]) -> str:
    """``text`` with this tool's commands as calls, then options and the positional as its arguments (inside
    another command's code span, nothing is renamed: ``git log --since`` stays as it is)."""
    text = COMMAND_RE.sub(lambda m: _as_call(m, tool, takes), text)
    text = NAMED_OPTION_RE.sub(lambda m: _renamed(m.group(2), takes, "argument `{}`", m.group(0)), text)
    return "".join(_part_reworded(part, takes) for part in CODE_RE.split(text))


def _part_reworded(part: str, takes: Collection[str]) -> str:
    """One code span (renamed if it is just an option) or one stretch of prose between them."""
    if CODE_RE.fullmatch(part):
        return _renamed(part[1:-1], takes, "`{}`", part) if OPTION_RE.fullmatch(part[1:-1]) else part
    part = OPTION_RE.sub(lambda m: _renamed(m.group(0), takes, "`{}`", m.group(0)), part)
    positional = argument_for(POSITIONAL, takes)
    return THE_ARGUMENT_RE.sub(f"`{positional}`", part) if positional else part


def _renamed(cli_name: str, takes: Collection[str], form: str, unchanged: str) -> str:
    """``form`` filled with the argument the CLI calls ``cli_name``, or ``unchanged`` when the tool has none."""
    argument = argument_for(cli_name, takes)
    return form.format(argument) if argument is not None else unchanged


def _as_call(match: re.Match, tool: str, takes: Collection[str]) -> str:
    """A ``flowgit …`` command line that runs ``tool`` as the tool call doing the same (or the resource
    holding what it prints), or as it was."""
    if match.group(2).strip() in RESOURCES:
        return RESOURCES[match.group(2).strip()]
    arguments = _call_arguments(match.group(2), tool.split("_"), takes)
    if arguments is None:
        return match.group(0)
    quote = match.group(1)
    return f"{quote}{tool} {json.dumps(arguments, ensure_ascii=False)}{quote}"


def _call_arguments(command: str, words: list[str], takes: Collection[str]) -> dict[str, Any] | None:
    """The arguments of ``command`` (what follows ``flowgit``) when it is the command ``words`` and every part
    of it is an argument the tool takes; else None."""
    try:
        tokens = shlex.split(command)
    except ValueError:
        return None
    if tokens[:len(words)] != words:
        return None
    rest, arguments = tokens[len(words):], {}
    while rest:
        token = rest.pop(0)
        cli_name = token if token.startswith("--") else POSITIONAL
        value: Any = token if cli_name == POSITIONAL else (rest.pop(0) if rest and not rest[0].startswith("--")
                                                           else True)
        argument = argument_for(cli_name, takes)
        if argument is None or argument in arguments:
            return None
        arguments[argument] = [value] if argument == _bare(cli_name) + "s" else value  # (`--tag x`: tags ["x"])
    return arguments
