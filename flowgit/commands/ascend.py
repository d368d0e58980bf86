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


STATE_LIMIT = 8 << 20     # a state is a few kilobytes; far more is not one ascend returned
STATE_FIX = "pass back the `state` object of the previous --json answer unchanged"
RESAVE_FIX = ("save the previous --json answer as UTF-8 (PowerShell: `| Out-File -Encoding utf8`), or pipe it "
              "to --state -")


def load_state(spec: str) -> State:
    """The state an agent passed back, or a FlowgitError naming the file (and line) and the fix.

    The file comes from outside (an agent's shell may save it as UTF-16, an
    editor as Latin-1; it may not be ascend's at all): every way it can be
    unreadable is exit 2 with a message, never a traceback.
    """
    where = "<stdin>" if spec == "-" else spec
    text = _decode(_stdin() if spec == "-" else _read(spec), where)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FlowgitError(f"the state is not JSON ({exc.msg})", path=where, line=exc.lineno,
                           fix=STATE_FIX) from None
    except RecursionError:   # (the parser recurses once per level: thousands of `[` exhaust the stack)
        raise FlowgitError("the state is JSON nested too deeply to be one ascend returned", path=where,
                           fix=STATE_FIX) from None
    return State.from_dict(data.get("state", data) if isinstance(data, dict) else data)


def _read(path: str) -> bytes:
    """The state file's bytes, bounded; a FIFO, socket or device is refused, never waited on."""
    from flowgit.fsio import read_regular

    try:
        return read_regular(path, max_bytes=STATE_LIMIT)
    except FlowgitError as exc:
        own = exc.fix if exc.fix and "flowgit init" not in exc.fix else None  # (no memory is missing here)
        raise FlowgitError(f"cannot read the state ({exc.message})", path=path,
                           fix=own or f"check the path; {STATE_FIX}") from None


def _stdin() -> bytes:
    buffer = getattr(sys.stdin, "buffer", None)   # (a text-only stream where a caller replaced stdin)
    return buffer.read(STATE_LIMIT + 1) if buffer is not None else sys.stdin.read(STATE_LIMIT + 1).encode()


def _decode(data: bytes, where: str) -> str:
    """The state's text: UTF-8 (a byte order mark is allowed); UTF-16, another encoding or binary is refused."""
    if len(data) > STATE_LIMIT:
        raise FlowgitError(f"the state is larger than {STATE_LIMIT >> 20} MB, so not one ascend returned",
                           path=where, fix=STATE_FIX)
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in data[:8192]:
        raise FlowgitError("the state is UTF-16 text (or binary), not UTF-8", path=where, fix=RESAVE_FIX)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FlowgitError(f"the state is not UTF-8 (byte 0x{data[exc.start]:02x})", path=where, line=line,
                           fix=RESAVE_FIX) from None


def _deposit_tree(cfg: Config, claude_dir: str | None, state) -> Path:
    """The deposit tree to read: the one the state was read from, when it names one (an answer that named
    none would read another tree and refine a unit it never showed); a different one named is refused."""
    if state is None or not state.claude_dir:
        return claude_config_dir(claude_dir, cfg.claude_dir)
    kept = Path(state.claude_dir)
    named = Path(claude_dir).expanduser() if claude_dir else None
    if named is not None and named.resolve() != kept.resolve():
        raise FlowgitError(f"the state was read from {kept}, and this answer names {named}", path="--claude-dir",
                           fix=f"answer with --claude-dir {kept} or without it (the state keeps its tree)")
    return kept


def run(cfg: Config, *, recall: str, unit_type: str | None, from_sid: str | None, partitions: list[str],
        claude_dir: str | None, state_spec: str | None, answer: tuple[str, str | None] | None) -> tuple[Ascend, Response]:
    if claude_dir and not Path(claude_dir).expanduser().is_dir():
        raise FlowgitError("no such directory", path=claude_dir,
                           fix="pass the directory that holds projects/ (e.g. ~/.claude)")
    if answer is not None and not state_spec:  # an answer to nothing: a fresh recall would silently drop it
        raise FlowgitError(f"--{answer[0]} answers a presented unit, and no --state says which",
                           fix="pass back the `state` object of the previous --json answer with --state FILE "
                               "(or `-` for stdin), or drop the answer to start a new recall")
    state = load_state(state_spec) if state_spec else None
    chosen = state.scope.partitions if state else (partitions or list(PARTITIONS))
    engine = Ascend(cfg, _deposit_tree(cfg, claude_dir, state), chosen)
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
    """How to answer a presented unit without a terminal, as commands ready to run: the same recall again with
    --json (its `state`), then that state with one answer."""
    if response.status not in ("gate", "rescope", "inline"):
        return ""
    first = _json_rerun(response.state) + " > ascend.json"
    if response.status == "rescope":
        answers = ["--rescope widen"]
    else:
        refine = next((o for o in response.options if o.get("answer") == "refine"), None)
        drop = refine["choices"][0] if refine else "widen"
        answers = [f"--refine {drop}", "--refine widen", "--reorient 'what you meant'"]
        if response.status == "gate":
            answers.insert(0, "--recognize")
    lead = "Not it? " if response.status == "inline" else ""
    return (f"\n({lead}To answer without a terminal: {first}, then flowgit ascend --state ascend.json "
            f"{' | '.join(answers)}. At most {MAX_ATTEMPTS} searches per recall.)")


def _json_rerun(state: State) -> str:
    """The command that asks the same recall again with --json (the same type, partitions and tree).

    The recall comes last, after ``--``: a recall that begins with ``-`` (``--claude-dir=/other …``) would
    otherwise be read as an option, and name another tree or run something else."""
    import shlex

    parts = ["flowgit", "ascend", "--type", state.unit_type]
    if state.from_sid:
        parts += ["--from", shlex.quote(state.from_sid)]
    if sorted(state.scope.partitions) != sorted(PARTITIONS):
        for name in state.scope.partitions:
            parts += ["--partition", shlex.quote(name)]
    if state.claude_dir and set(state.scope.partitions) & TREE_PARTITIONS:
        parts += ["--claude-dir", shlex.quote(state.claude_dir)]  # (a history or store alone reads no tree)
    return " ".join(parts + ["--json", "--", shlex.quote(state.recall)])


TREE_PARTITIONS = {"claude", "transcripts"}  # the partitions read from the deposit tree --claude-dir names


def render_format(response: Response, fmt: str) -> str:
    """``--format html|mermaid|dot``: the unit as a graph, drawn from the response's JSON shape, each session
    labelled as its record has it (:mod:`flowgit.ascend.graphview`); each format draws the caveat itself."""
    from flowgit.ascend.graphview import checked
    from flowgit.report.unit_html import render_unit

    members = response.unit.members if response.unit else []
    return render_unit(scrub(checked(response.to_dict(), members, response.single, response.claims)), fmt)
