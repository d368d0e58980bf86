"""``flowgit ascend``: from a vague recall to the higher unit, for people (interactive) and agents (--json)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from flowgit.ascend.engine import MAX_ATTEMPTS, Ascend, Response, State
from flowgit.ascend.partitions import PARTITIONS, claude_config_dir
from flowgit.ascend.surrogates import scrub
from flowgit.config import Config
from flowgit.errors import FlowgitError


def load_state(spec: str) -> State:
    text = sys.stdin.read() if spec == "-" else _read(spec)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FlowgitError(f"the state is not JSON ({exc.msg})", path=spec, line=exc.lineno,
                           fix="pass back the `state` object of the previous --json answer") from None
    return State.from_dict(data.get("state", data) if isinstance(data, dict) else data)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        raise FlowgitError(f"cannot read the state ({exc.strerror})", path=path) from None


def run(cfg: Config, *, recall: str, unit_type: str | None, from_sid: str | None, partitions: list[str],
        claude_dir: str | None, state_spec: str | None, answer: tuple[str, str | None] | None) -> tuple[Ascend, Response]:
    if claude_dir and not Path(claude_dir).expanduser().is_dir():
        raise FlowgitError("no such directory", path=claude_dir,
                           fix="pass the directory that holds projects/ (e.g. ~/.claude)")
    state = load_state(state_spec) if state_spec else None
    chosen = state.scope.partitions if state else (partitions or list(PARTITIONS))
    engine = Ascend(cfg, claude_config_dir(claude_dir, cfg.claude_dir), chosen)
    if state is not None:
        if answer is None:
            raise FlowgitError("--state needs an answer", fix="add --recognize, --refine X, --reorient X or --rescope X")
        return engine, engine.answer(state, *answer)
    return engine, engine.start(recall, unit_type=unit_type, from_sid=from_sid, partitions=chosen)


def interactive(engine: Ascend, response: Response, prompt, echo) -> Response:
    """The loop on a terminal: ask, answer, until it converges or the tries run out."""
    while response.status in ("gate", "rescope"):
        echo(scrub(response.text))
        if response.status == "rescope":
            choices = response.options[0]["choices"]
            picked = prompt("Choose 1-%d (or q to stop)" % len(choices))
            if picked.strip().lower() in ("q", "quit", ""):
                return response
            try:
                value = choices[int(picked) - 1]["value"]
            except (ValueError, IndexError):
                echo("Please answer with one of the numbers.")
                continue
            response = engine.answer(response.state, "rescope", value)
            continue
        picked = prompt("1 recognize, 2 refine, or describe what you meant (q to stop)")
        low = picked.strip().lower()
        if low in ("q", "quit", ""):
            return response
        try:
            if low in ("1", "recognize", "yes", "y"):
                response = engine.answer(response.state, "recognize")
            elif low in ("2", "refine"):
                refine = response.options[1]["choices"]
                choice = prompt("Refine how? " + ", ".join(c for c in refine if c != "add:SID") + " (or add:SID)")
                response = engine.answer(response.state, "refine", choice.strip())
            else:
                response = engine.answer(response.state, "reorient", picked.strip())
        except FlowgitError as exc:  # a mistyped answer: say so and ask again
            echo(f"{exc.render()}")
    echo(scrub(response.text))
    return response


def render(response: Response, fmt: str = "text"):
    """The one place a response becomes output: ``text`` (str) or ``json`` (a dict for emit_json).

    The response is built without any rendering concern (``Response.to_dict``
    holds the unit, its sessions, sources and connections); another format is
    one more branch here, reading that structure. Lone surrogates are scrubbed
    here too (the readers already replace those they meet): no writer takes them.
    """
    if fmt == "json":
        return scrub(response.to_dict())
    if fmt == "text":
        return scrub(response.text + hint(response))
    raise FlowgitError(f"unknown output format {fmt!r}", fix="text or json")


def hint(response: Response) -> str:
    if response.status not in ("gate", "rescope"):
        return ""
    return ("\n(To answer without a terminal: rerun with --json, then pass its `state` back with "
            "--state FILE and --recognize, --refine X, --reorient X or --rescope X. "
            f"At most {MAX_ATTEMPTS} searches per recall.)")


def render_format(response: Response, fmt: str) -> str:
    """``--format html|mermaid|dot``: the unit as a graph, drawn from the response's JSON shape."""
    from flowgit.report.unit_html import render_unit

    return render_unit(scrub(response.to_dict()), fmt)
