"""The stdio MCP server: flowgit's operations as tools, the continuity file as a resource.

Every tool calls the function the CLI calls (:mod:`flowgit.api` and the command
modules' core functions) and returns its ``--json`` text; a user error comes
back as a tool error (``isError``) whose text is the CLI's JSON error,
``{"error": {"message", "fix", "file", "line", "option"}}``, so the agent can correct
itself from the fix; its options and commands are named as the tool's arguments
(:mod:`flowgit.mcp.wording`). Configuration is read afresh on every call, from the
directory the server was started in. What reaches the tools over stdio is sorted
first (:mod:`flowgit.mcp.transport`): every line gets an answer.
"""

# No ``from __future__ import annotations`` here: the SDK reads the tool
# signatures' annotations at registration to build their JSON schemas.

from pathlib import Path
from typing import Annotated, Any, Callable, Optional

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from flowgit import __version__
from flowgit.errors import FlowgitError
from flowgit.mcp.transport import LONE_SURROGATE_RE
from flowgit.mcp.wording import in_tool_terms

INSTRUCTIONS = (
    "flowgit keeps this project's continuity file (compressed memory) and an append-only episodic store. "
    "Record facts with episode_add as they happen; at the end of meaningful work, call candidates, then wrap "
    "with a plan (dry_run first). Read the continuity file as the resource flowgit://continuity. "
    "Errors carry a `fix`: follow it."
)


def _result(data: Any) -> CallToolResult:
    from flowgit.output import to_jsonable

    text, plain = _transportable(to_jsonable(data))
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=plain if isinstance(plain, dict) else None)


def _error(exc: FlowgitError, tool: str, takes: list[str]) -> CallToolResult:
    """The tool error for ``exc``, in the terms of ``tool`` (which takes ``takes``)."""
    text, body = _transportable(in_tool_terms(exc.to_dict(), tool, takes))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=body, is_error=True)


def _transportable(plain: Any) -> tuple[str, Any]:
    """The JSON text of ``plain`` as the CLI prints it, and the value for structured content, both valid
    UTF-8 (the transport's encoding). A name of bytes that are not UTF-8 (a directory `caf\\xe9`, read as a
    lone surrogate) cannot be sent as it is, and the server would die sending it: the text then escapes it
    as JSON does (`\\udce9`, the same document to a JSON reader), and the structured value shows U+FFFD."""
    import json

    from flowgit.output import dumps

    text = dumps(plain)
    if not LONE_SURROGATE_RE.search(text):
        return text, plain
    return json.dumps(plain, indent=2, ensure_ascii=True), json.loads(LONE_SURROGATE_RE.sub("\ufffd", text))


def build_server(start: Path, continuity: Optional[str] = None, store: Optional[str] = None) -> MCPServer:
    """The server for the repository at ``start`` (``--file``/``--store`` as the CLI takes them)."""
    server = MCPServer("flowgit", version=__version__, instructions=INSTRUCTIONS)

    def cfg() -> Any:
        from flowgit.config import load_config

        return load_config(start, continuity=continuity, store=store)

    def judging_cfg() -> Any:
        """As the CLI's check and audit read it: the working tree's configuration judges nothing there, so an
        invalid one gives the defaults and a warning (on the server's stderr), never a refusal."""
        from flowgit.config import load_judging_config

        return load_judging_config(continuity=continuity, store=store, start=start)

    def store_cfg() -> Any:
        """As the CLI's episode commands read it: outside a repository, with no store named (``--store``),
        there is no project store to read or append to, and "no episodes" would say the wrong thing."""
        from flowgit import api

        where = cfg()
        api.refuse_stray_store(where, store_named=store is not None)  # as the CLI: no stray .flow/, no empty []
        return where

    def call(fn: Callable[[], Any]) -> CallToolResult:
        """The tool's answer; a FlowgitError raised goes on to ``_answered_in_tool_terms``."""
        return _result(fn())

    @server.tool(description="Record one episode (a fact of this session) in the append-only store.")
    def episode_add(type: Annotated[str, Field(description=EPISODE_TYPE)],
                    content: Annotated[Optional[str], Field(description="what happened, in a sentence or two "
                                                                        "(the store's `content` field)")] = None,
                    text: Annotated[Optional[str], Field(description="the same as `content` (its older name)")] = None,
                    tags: Annotated[Optional[list[str]], Field(description="words to file it under")] = None,
                    session: Annotated[Optional[str], Field(description=SESSION)] = None,
                    agent: Annotated[Optional[str], Field(description=AGENT)] = None) -> CallToolResult:
        from flowgit import api

        def add() -> dict:
            notes: list[str] = []  # what storing it changed (lines joined), said in `warnings`
            episode = api.episode_from(text, type, content=content, tags=tags or (), session=session, agent=agent,
                                       notes=notes)
            return api.add_episodes(store_cfg(), [episode], notes)

        return call(add)

    @server.tool(description="Search episodes by text, type, tag, session and time (ISO dates).")
    def episode_search(text: Annotated[Optional[str], Field(description="words the content or a tag holds "
                                                                        "(case-insensitive)")] = None,
                       type: Annotated[Optional[str], Field(description=EPISODE_TYPE)] = None,
                       tags: Annotated[Optional[list[str]], Field(description="every one of these tags")] = None,
                       session: Annotated[Optional[str], Field(description="this session's episodes only")] = None,
                       since: Annotated[Optional[str], Field(description="recorded on or after (ISO date)")] = None,
                       until: Annotated[Optional[str], Field(description="recorded on or before (ISO date)")] = None,
                       limit: Annotated[int, Field(description="at most this many, the newest, listed in store "
                                                               "order (oldest first; 0: all)")] = 0
                       ) -> CallToolResult:
        from flowgit import api

        return call(lambda: api.search_episodes(store_cfg(), text, type_=type, tags=tags or (), session=session,
                                                since=since, until=until, limit=limit))

    @server.tool(description="Wrap step 2: patterns that fired again, ready to graduate, duplicates, demotions, "
                             "stale.")
    def candidates(session: Annotated[Optional[str], Field(description=SESSION + "; with none, the episodes added "
                                                                         "since HEAD")] = None,
                   date: Annotated[Optional[str], Field(description="judge staleness as of this day (ISO date, "
                                                                    "YYYY-MM-DD; default today)")] = None
                   ) -> CallToolResult:
        from flowgit.commands.wrap import run_candidates

        return call(lambda: run_candidates(cfg(), session, date))

    @server.tool(description="Run the six-step wrap from a plan (see resource flowgit://wrap-plan-schema) and "
                             "commit it; dry_run shows the diff and message and writes nothing.")
    def wrap(plan: Annotated[Optional[dict[str, Any]], Field(description="the wrap plan (resource "
                                                                    "flowgit://wrap-plan-schema)")] = None,
             dry_run: Annotated[bool, Field(description="show the diff, message and findings; write "
                                                        "nothing")] = False,
             strict: Annotated[bool, Field(description="abort the whole wrap if any promotion is refused, or "
                                                       "a Proven pattern is touched by this session's "
                                                       "tension or outcome episodes")] = False,
             session: Annotated[Optional[str], Field(description=SESSION)] = None,
             date: Annotated[Optional[str], Field(description="the wrap's day (ISO date; default today)")] = None,
             cleanup: Annotated[bool, Field(description="archive what went stale (Step 5)")] = True
             ) -> CallToolResult:
        from flowgit import api

        return call(lambda: api.wrap(cfg(), plan, session=session, day=date, strict=strict, dry_run=dry_run,
                                     cleanup=cleanup))

    @server.tool(description="The gate: judge the staged continuity file and store against HEAD.")
    def check() -> CallToolResult:
        from flowgit.commands.check import run_check

        return call(lambda: run_check(judging_cfg()))

    @server.tool(description="Each pattern's timeline through git history (newest `limit` events).")
    def log(names: Annotated[Optional[list[str]], Field(description="only these patterns (default: every "
                                                                    "pattern)")] = None,
            since: Annotated[Optional[str], Field(description="only events on or after this day (ISO date, "
                                                              "YYYY-MM-DD)")] = None,
            until: Annotated[Optional[str], Field(description="only events on or before this day (ISO date, "
                                                              "YYYY-MM-DD)")] = None,
            section: Annotated[Optional[str], Field(description="only events in this section of the continuity "
                                                                "file (e.g. Proven)")] = None,
            graduated: Annotated[bool, Field(description="only patterns that ever graduated")] = False,
            limit: Annotated[Optional[int], Field(description="only the newest this many events, all patterns "
                                                              "together (1 or more; default all)")] = None
            ) -> CallToolResult:
        from flowgit.commands.history import build_timeline

        return call(lambda: build_timeline(cfg(), tuple(names or ()), since, until, section, graduated, limit))

    @server.tool(description="Re-derive every graduation from history and check its evidence as of its commit.")
    def audit(range: Annotated[Optional[str], Field(description="only these commits, as git reads a range "
                                                                 "(`A..B`)")] = None,
              since_ref: Annotated[Optional[str], Field(description="only the commits after this ref "
                                                                    "(`origin/main`)")] = None) -> CallToolResult:
        from flowgit.history.audit import RangeSpec, run_audit

        return call(lambda: run_audit(judging_cfg(), RangeSpec.parse(range, since_ref)))

    @server.tool(description="Ascend a vague recall to a line of work, topic or concept (read-only). Start with "
                             "`recall` (type: chain, cluster or concept); answer a gate by passing back `state` with "
                             "one `answer` (recognize, refine, reorient, rescope) and its `value`.")
    def ascend(recall: Annotated[str, Field(description="what you remember, in your own words (to start a "
                                                        "recall; leave it out when answering with `state`)")] = "",
               type: Annotated[Optional[str], Field(description="the kind of unit to look for: chain, cluster or "
                                                                "concept (default: read from the recall)")] = None,
               from_sid: Annotated[Optional[str], Field(description="start from this session's deposit (a "
                                                                    "session id)")] = None,
               partitions: Annotated[Optional[list[str]], Field(description="where to look: claude, transcripts, "
                                                                             "git or episodes (default all)")] = None,
               state: Annotated[Optional[dict[str, Any]], Field(description="the `state` the previous ascend "
                                                                            "answer returned, passed back "
                                                                            "unchanged with an `answer`")] = None,
               answer: Annotated[Optional[str], Field(description="the answer to the gate: recognize (this is the "
                                                                  "unit), refine, reorient or rescope")] = None,
               value: Annotated[Optional[str], Field(description="the answer's argument: for refine drop:SID, "
                                                                 "add:SID, widen or narrow; for reorient chain, "
                                                                 "cluster, concept or another angle; for rescope "
                                                                 "widen, type:KIND or partitions:all; none for "
                                                                 "recognize")] = None) -> CallToolResult:
        from flowgit import api

        return call(lambda: api.ascend(cfg(), recall, unit_type=type, from_sid=from_sid,
                                       partitions=partitions or (), state=state,
                                       answer=(answer, value) if answer else None))

    @server.tool(description="Continuity status: last wrap, unwrapped episodes, ready patterns, overdue, stale.")
    def status(session: Annotated[Optional[str], Field(description="also say whether this session wrapped ("
                                                                   + SESSION + ")")] = None) -> CallToolResult:
        from flowgit.overview import gather
        from flowgit.session import resolve_session

        return call(lambda: gather(cfg(), session=resolve_session(session)))

    @server.resource("flowgit://continuity", name="continuity", mime_type="text/markdown",
                     description="The continuity file as it is on disk.")
    def continuity_file() -> str:
        from flowgit.fsio import read_text

        try:
            return read_text(cfg().continuity)
        except FlowgitError as exc:
            raise ResourceError(exc.render()) from None

    @server.resource("flowgit://wrap-plan-schema", name="wrap-plan-schema", mime_type="application/json",
                     description="The JSON Schema of a wrap plan (what `flowgit wrap --schema` prints).")
    def wrap_plan_schema() -> str:
        from flowgit.commands.wrap import schema_text

        return schema_text()

    _refuse_unknown_arguments(server)
    _answered_in_tool_terms(server)
    return server


EPISODE_TYPE = "finding, decision, observation, connection, outcome or tension"
SESSION = "the session id (default: the running session's, from the environment)"
AGENT = "who recorded it (default: $FLOWGIT_AGENT)"


def _refuse_unknown_arguments(server: MCPServer) -> None:
    """Every tool refuses an argument it does not take, instead of dropping it: `query` for `text` searched
    the whole store, and `dryrun` for `dry_run` would have committed a wrap meant as a rehearsal.

    The SDK builds each tool's argument model with unknown fields ignored and offers no switch for it, so
    the models are closed here (and their schemas say so); tests/mcp holds the SDK to it.
    """
    for tool in server._tool_manager.list_tools():  # (no public accessor for the registered tools)
        model = tool.fn_metadata.arg_model
        model.model_config["extra"] = "forbid"
        model.model_rebuild(force=True)
        tool.parameters["additionalProperties"] = False


def _answered_in_tool_terms(server: MCPServer) -> None:
    """Every failure of a call comes back as a tool error whose text is the CLI's JSON error, told in the
    tool's own terms (its arguments, not the command line's options): a FlowgitError a tool raised, and
    arguments the tool's model refuses (missing, mistyped, unknown; the SDK returns pydantic's own text, which
    is not JSON and names no fix). So do an unknown tool and a failure inside a tool that is no mistake of the
    call (the SDK's text for those is not JSON either)."""
    from mcp.server.mcpserver.exceptions import ToolError

    call_tool = server.call_tool

    async def checked(name: str, arguments: dict, context: Any = None) -> Any:
        try:
            return await call_tool(name, arguments, context)
        except ToolError as exc:
            return _error(_failure(server, name, exc), name, _takes(server, name))

    server.call_tool = checked  # type: ignore[method-assign]


def _failure(server: MCPServer, name: str, exc: BaseException) -> FlowgitError:
    """What went wrong in a call of tool ``name``, as a FlowgitError."""
    from pydantic import ValidationError

    cause = exc.__cause__
    if isinstance(cause, FlowgitError):
        return cause
    if isinstance(cause, ValidationError):
        return _argument_error(server, name, cause)
    if server._tool_manager.get_tool(name) is None:
        return FlowgitError(f"no tool `{name}`", fix="the tools are: " + ", ".join(
            sorted(t.name for t in server._tool_manager.list_tools())))
    return _internal_error(name, cause or exc)


def _internal_error(name: str, cause: BaseException) -> FlowgitError:
    """A failure that is no mistake of the call (a bug, an unforeseen OS error), as the same JSON error every
    other failure comes as: an agent parsing the tool's text gets JSON whatever went wrong."""
    return FlowgitError(f"`{name}` failed inside flowgit: {type(cause).__name__}: {cause}",
                        fix=f"this is not a mistake in the call: run the same operation with the command line "
                            f"(`flowgit {name.replace('_', ' ')} --json`) to see the whole error, and report it")


def _argument_error(server: MCPServer, name: str, error: Any) -> FlowgitError:
    """The first refused argument of a tool call, as a FlowgitError: what was wrong and what the tool takes."""
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "arguments"
    what = {"missing": "is missing", "extra_forbidden": "is not an argument of this tool"}.get(
        first["type"], f"is not valid: {first['msg'].lower()}")
    tool = server._tool_manager.get_tool(name)  # (no public accessor for a registered tool)
    takes = _takes(server, name)
    required = tool.parameters.get("required", []) if tool is not None else []
    takes_text = f"{name} takes: {', '.join(takes)}" if takes else f"{name} takes no arguments"
    return FlowgitError(f"`{name}`: argument `{field}` {what}",
                        fix=takes_text + (f" (required: {', '.join(required)})" if required else ""))


def _takes(server: MCPServer, name: str) -> list[str]:
    """The arguments tool ``name`` takes (none for a tool the server does not have)."""
    tool = server._tool_manager.get_tool(name)  # (no public accessor for a registered tool)
    return sorted(tool.parameters.get("properties", {})) if tool is not None else []


def serve(start: Path, continuity: Optional[str] = None, store: Optional[str] = None) -> None:
    """Serve on stdin/stdout until the client closes the connection."""
    import anyio

    from flowgit.mcp.transport import serve_stdio

    anyio.run(serve_stdio, build_server(start, continuity, store))
