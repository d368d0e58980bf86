"""The ``flowgit`` command line: parse options, call one core function, render text or JSON.

Heavy modules are imported inside each command, so ``flowgit check`` (run by the
pre-commit hook on every commit) pays only for what it uses.

Exit codes: 0 success; 1 findings (lint errors, gate errors, audit findings,
a refused promotion under --strict); 2 bad input or usage (the message names the
file, the line and the fix); 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

import click

from flowgit import __version__
from flowgit.errors import EXIT_FINDINGS, EXIT_USAGE, FlowgitError

EXIT_CODES = """Exit codes: 0 ok; 1 findings (lint/gate errors, audit findings, refused
promotions with --strict, a wrap the gate refuses); 2 bad input or usage; 3 wrap: nothing
committed because every requested change was refused or ignored; 4 the work is done but its
output could not be written (a full disk, a closed output): what it did stands; 5 wrap --push: the wrap
is committed but the sync could not start (run `flowgit sync` once fixed); 130 interrupted. Under --json
every error is JSON on stdout: {"error": {"message", "fix", "file", "line", "option"}}, with the same exit code."""


def _root_obj(ctx: click.Context) -> dict:
    root = ctx.find_root()
    if root.obj is None:
        root.obj = {}
    return root.obj


def _json_default(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """``--json`` given after the command, or before it (``flowgit --json patterns``)."""
    return bool(value) or bool(_root_obj(ctx).get("json"))


json_option = click.option("--json", "as_json", is_flag=True, callback=_json_default,
                           help="Machine-readable output for agents.")


def _to_root(key: str):
    def callback(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
        if value is not None:
            _root_obj(ctx)[key] = value
    return callback


class FlowCommand(click.Command):
    """A command that also accepts the global ``--file``/``--store`` after its name.

    Agents put options wherever they like (``flowgit patterns --file X``); refusing
    that costs a round trip for nothing, so every command takes them.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        taken = {opt for p in self.params for opt in getattr(p, "opts", ())}
        for opt, key in (("--file", "continuity"), ("--store", "store")):
            if opt not in taken:
                self.params.append(click.Option([opt, f"_global_{key}"], metavar="PATH", hidden=True,
                                                expose_value=False, callback=_to_root(key)))


class FlowGroup(click.Group):
    """Every command and sub-group made from here is a :class:`FlowCommand`/:class:`FlowGroup`."""

    command_class = FlowCommand
    group_class = type


def _wants_json(argv: list[str]) -> bool:
    """Whether the caller asked for JSON anywhere on the line (errors then go out as JSON too)."""
    args = argv[:argv.index("--")] if "--" in argv else argv
    return "--json" in args


def terminal_safe(text: str, stream: Any = None) -> str:
    """:func:`flowgit.output.terminal_safe` (imported when output is written: the hook starts without it)."""
    from flowgit.output import terminal_safe as safe

    return safe(text, stream)


def _fail(exc_dict: dict, text: str, code: int, as_json: bool) -> int:
    """Report an error: JSON on stdout under ``--json``, else one line on stderr."""
    if as_json:
        from flowgit.output import emit_json

        emit_json(exc_dict)
    else:
        from flowgit.output import style

        click.echo(f"flowgit: {style('error', 'red', sys.stderr)}: {terminal_safe(text, sys.stderr)}", err=True)
    return code


def _cfg(ctx: click.Context) -> Any:
    from flowgit.config import load_config

    obj = _root_obj(ctx)
    return load_config(continuity=obj.get("continuity"), store=obj.get("store"))


def _reading_cfg(ctx: click.Context, *, store_only: bool = False) -> Any:
    """The configuration for a command that only reads the memory: a ``--file`` or ``--store`` given on the
    command line must name an existing file (a typo would otherwise read as "no memory", exit 0).
    ``store_only`` (the episode commands): outside a repository, with no ``--store`` naming one, there is no
    store to read, and "no episodes" would say the wrong thing."""
    from pathlib import Path

    obj = _root_obj(ctx)
    cfg = _cfg(ctx)
    if store_only and not obj.get("store"):
        from flowgit.config import find_root
        from flowgit.git import inside_git_dir, require_repo

        require_repo(find_root(cfg.root) or inside_git_dir(cfg.root))  # (a bare repository is named as one)
    for option, given, path in (("--file", obj.get("continuity"), cfg.continuity),
                                ("--store", obj.get("store"), cfg.store)):
        if given and not Path(path).exists():
            raise FlowgitError(f"{option} {given}: no such file", path=path,
                               fix="check the path (`flowgit init` creates the continuity file and the store)")
        if given and Path(path).is_dir():
            raise FlowgitError(f"{option} {given}: is a directory, not a file", path=path,
                               fix=f"name the file itself in {option}")
    return cfg


def _history_cfg(ctx: click.Context, judging: bool = False) -> Any:
    """The configuration for a command that reads the memory's history (audit, log, report): a ``--file``
    or ``--store`` given on the command line must name a path the working tree or some commit holds (a typo
    would otherwise audit nothing and call it clean)."""
    from flowgit.git import git

    obj = _root_obj(ctx)
    cfg = _judging_cfg(ctx) if judging else _cfg(ctx)
    for option, given, path, rel in (("--file", obj.get("continuity"), cfg.continuity, cfg.continuity_rel),
                                     ("--store", obj.get("store"), cfg.store, cfg.store_rel)):
        if given and not path.exists() and not git(cfg.root, "log", "-1", "--format=%H", "--all", "--", rel,
                                                   check=False).strip():
            raise FlowgitError(f"{option} {given}: no such file, here or in any commit", path=option,
                               fix="check the path (the continuity file and store as the configuration names "
                                   "them are the default)")
    return cfg


def _judging_cfg(ctx: click.Context) -> Any:
    """The configuration for check, check-msg and audit (:func:`flowgit.config.load_judging_config`)."""
    from flowgit.config import load_judging_config

    obj = _root_obj(ctx)
    return load_judging_config(continuity=obj.get("continuity"), store=obj.get("store"))


@click.group(cls=FlowGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             epilog=EXIT_CODES)
@click.version_option(__version__, prog_name="flowgit")
@click.option("--file", "continuity", metavar="PATH", help="Continuity file (default from config: CONTINUITY.md).")
@click.option("--store", metavar="PATH", help="Episodic store (default .flow/episodes.jsonl).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (also accepted after the command).")
@click.pass_context
def cli(ctx: click.Context, continuity: str | None, store: str | None, as_json: bool) -> None:
    """Version-controlled continuity: wrap sessions, gate commits, audit graduations, ascend recalls."""
    ctx.obj = {"continuity": continuity, "store": store, "json": as_json}


@cli.command(short_help="Set up a team-safe repository (safe to repeat).")
@click.option("--no-hooks", is_flag=True, help="Do not install flowgit's git hooks (pre-commit, pre-merge-commit, "
                                                "commit-msg, pre-push; use this beside the pre-commit framework).")
@click.option("--commit", "commit_", is_flag=True, help="Commit the set-up files.")
@click.option("--shared-hooks", is_flag=True, help="Install the hooks even where core.hooksPath is shared (global or "
                                                    "system config, or outside the repository): they will gate "
                                                    "every repository that uses it.")
@json_option
@click.pass_context
def init(ctx: click.Context, no_hooks: bool, commit_: bool, shared_hooks: bool, as_json: bool) -> None:
    """Write (or adopt) the continuity file and the store, register the merge driver, install the hooks."""
    from flowgit.commands import init as cmd
    from flowgit.output import emit

    explicit = bool((ctx.find_root().obj or {}).get("continuity"))
    emit(cmd.run_init(_cfg(ctx), hooks=not no_hooks, commit=commit_, explicit=explicit, shared_hooks=shared_hooks),
         as_json, cmd.render)


# --- Wired into the agent's life: setup claude, prime, status, remind, mcp -------------------------------

@cli.group(short_help="Wire flowgit into an agent (Claude Code).")
def setup() -> None:
    """Install flowgit's skills, slash commands and hooks for an agent."""


@setup.command("claude", short_help="Skills, /wrap, /ascend and hooks for Claude Code.")
@click.option("--user", "user", is_flag=True, help="Into $CLAUDE_CONFIG_DIR or ~/.claude (every project).")
@click.option("--project", "project", is_flag=True, help="Into this repository's .claude/ (the default).")
@click.option("--dry-run", is_flag=True, help="Show the diff; write nothing.")
@click.option("--remove", is_flag=True, help="Undo exactly what setup added.")
@click.option("--exe", default="flowgit", show_default=True, metavar="CMD",
              help="How the hooks call flowgit (an absolute path when it is not on PATH).")
@json_option
@click.pass_context
def setup_claude(ctx: click.Context, user: bool, project: bool, dry_run: bool, remove: bool, exe: str,
                 as_json: bool) -> None:
    """Install the wrap and ascend skills, /wrap and /ascend, and the SessionStart/PreCompact/Stop hooks."""
    if user and project:  # two places: the last one given would silently win
        raise click.UsageError("--user and --project name two places to set up: give one (--project is the "
                               "default)", ctx=ctx)
    scope = "user" if user else "project"
    from flowgit import claude_setup
    from flowgit.commands import setup as cmd
    from flowgit.output import emit

    from flowgit.config import find_root

    root = None if scope == "user" else find_root()
    base = claude_setup.claude_dir(scope, root)
    if remove:
        report = claude_setup.remove(base, scope, dry_run=dry_run)
    else:
        explicit = ctx.get_parameter_source("exe") is not click.core.ParameterSource.DEFAULT
        report = claude_setup.setup(base, scope, exe, dry_run=dry_run, explicit_exe=explicit)
    refused = claude_setup.refusal(report) if report.dry_run and report.warnings else None
    # the real run refuses (exit 2): the dry run says so the same way, under --json with the `error` object
    emit({**report.to_dict(), **refused.to_dict()} if refused and as_json else report, as_json, cmd.render)
    if refused:
        ctx.exit(2)


def _day(text: str | None) -> Any:
    from flowgit.dates import option_date

    return option_date(text, "--date")


def _hook_start(payload: dict) -> str | None:
    """The directory a hook works in: the payload's ``cwd`` when it is a path. Anything else there (a number, a
    list, a NUL byte) is no ``cwd``, as a payload the hook cannot read is no payload: the hook then works where
    the agent started it, which is the project, rather than breaking the session on a traceback."""
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not cwd or "\x00" in cwd:
        return None
    try:
        cwd.encode("utf-8")  # (`\ud800` in JSON: a lone surrogate names no directory)
    except UnicodeEncodeError:
        return None
    return cwd


def _hook_cfg(ctx: click.Context, payload: dict) -> Any:
    """The configuration a hook works in: the payload's ``cwd`` when Claude Code names one."""
    from flowgit.config import load_config

    obj = _root_obj(ctx)
    return load_config(_hook_start(payload), continuity=obj.get("continuity"), store=obj.get("store"))


def _never_break_the_session(body: Callable[[], None]) -> None:
    """Run a session hook so that it never breaks the session it serves: a failure no check foresaw (a bug, an
    OS error) is one line on stderr and exit 0, never a traceback in the agent's session. A failure to write
    the answer itself still goes to :func:`main`, which turns it into its exit code."""
    try:
        body()
    except FlowgitError:
        raise
    except Exception as exc:  # noqa: BLE001  (the point: nothing escapes a hook)
        if isinstance(exc, OSError) and _raised_writing_output(exc):
            raise
        click.echo(f"flowgit: the hook could not run ({type(exc).__name__}: {exc}); the session goes on "
                   "without it", err=True)


@cli.command(short_help="What an agent should read first, within a token budget.")
@click.option("--max-tokens", type=click.IntRange(min=100), default=4000, show_default=True,
              help="Budget for the whole output (about 4 characters a token).")
@click.option("--session", help="Session id (default: the hook's stdin with --hook, then $FLOWGIT_SESSION, "
              "$CLAUDE_CODE_SESSION_ID).")
@click.option("--hook", is_flag=True, help="Run as Claude Code's SessionStart hook: payload on stdin, hook JSON out.")
@click.option("--date", "day", help="Judge overdue and stale as of this date (default today).")
@json_option
@click.pass_context
def prime(ctx: click.Context, max_tokens: int, session: str | None, hook: bool, day: str | None,
          as_json: bool) -> None:
    """The continuity file's activation-critical sections, then a short status, within --max-tokens."""
    from flowgit.commands import prime as cmd
    from flowgit.output import emit
    from flowgit.overview import gather
    from flowgit.primer import build
    from flowgit.session import resolve_session

    if hook:
        _never_break_the_session(lambda: _prime_hook(ctx, max_tokens, session, day))
        return
    primer = build(gather(_reading_cfg(ctx), session=resolve_session(session), when=_day(day)), max_tokens)
    emit(primer, as_json, cmd.render)


def _prime_hook(ctx: click.Context, max_tokens: int, session: str | None, day: str | None) -> None:
    """``prime --hook``: the payload on stdin, the SessionStart answer (or silence) on stdout."""
    from flowgit.commands import prime as cmd
    from flowgit.commands.hookio import read_payload
    from flowgit.config import find_root
    from flowgit.git import require_repo
    from flowgit.output import emit_json
    from flowgit.overview import gather
    from flowgit.primer import build
    from flowgit.session import resolve_session

    payload = read_payload()
    try:
        require_repo(find_root(_hook_start(payload)))
    except FlowgitError:
        return  # not a flowgit project (not a repository): a hook must not break the session
    try:
        cfg = _hook_cfg(ctx, payload)  # an invalid .flowgit.toml is a flowgit project whose memory is not read
        primer = build(gather(cfg, session=resolve_session(session, payload), when=_day(day)), max_tokens)
    except FlowgitError as exc:  # a memory that cannot be read: the session is told why it starts without it
        emit_json(cmd.hook_problem(exc))
        return
    emit_json(cmd.hook_answer(primer))


@cli.command(short_help="Continuity status for a person, like git status.")
@click.option("--session", help="Also say whether this session wrapped (default from the environment).")
@click.option("--date", "day", help="Judge overdue and stale as of this date (default today).")
@json_option
@click.pass_context
def status(ctx: click.Context, session: str | None, day: str | None, as_json: bool) -> None:
    """Last wrap, episodes not yet wrapped, patterns ready, overdue actions, what goes stale next."""
    from flowgit.commands import status as cmd
    from flowgit.output import emit
    from flowgit.overview import gather
    from flowgit.session import resolve_session

    emit(gather(_reading_cfg(ctx), session=resolve_session(session), when=_day(day)), as_json, cmd.render)


@cli.command(short_help="Claude Code's Stop/PreCompact hook: remind once to wrap.")
@click.option("--session", help="Session id (default: the hook's stdin with --hook, then $FLOWGIT_SESSION, "
              "$CLAUDE_CODE_SESSION_ID).")
@click.option("--hook", is_flag=True, help="Read the hook payload on stdin (as Claude Code runs it).")
@json_option
@click.pass_context
def remind(ctx: click.Context, session: str | None, hook: bool, as_json: bool) -> None:
    """Remind once per session to wrap, never when the session already wrapped or a Stop hook is active."""
    from flowgit.output import emit_json
    from flowgit.reminder import remind as do_remind
    from flowgit.session import resolve_session

    if hook:
        _never_break_the_session(lambda: _remind_hook(ctx, session, as_json))
        return
    answer = do_remind(_hook_cfg(ctx, {}), {}, resolve_session(session, {}), once=False)
    if as_json:
        emit_json(answer or {})
        return
    click.echo(answer.get("reason") or answer.get("systemMessage") if answer else "nothing to remind")


def _remind_hook(ctx: click.Context, session: str | None, as_json: bool = False) -> None:
    """``remind --hook``: the payload on stdin, the Stop/PreCompact answer (or silence) on stdout; with --json,
    ``{}`` for the silence (an empty object asks the agent for nothing), so the output is always JSON."""
    from flowgit.commands.hookio import read_payload
    from flowgit.config import find_root
    from flowgit.git import require_repo
    from flowgit.output import emit_json
    from flowgit.reminder import remind as do_remind
    from flowgit.reminder import unreadable
    from flowgit.session import resolve_session

    payload = read_payload()
    try:
        root = require_repo(find_root(_hook_start(payload)))
    except FlowgitError:
        if as_json:
            emit_json({})
        return  # not a flowgit project (not a repository): a hook must not break the session
    who = resolve_session(session, payload)
    try:
        answer = do_remind(_hook_cfg(ctx, payload), payload, who, once=True)
    except FlowgitError as exc:  # a memory that cannot be read: the session is told why, as prime --hook does
        answer = unreadable(root, payload, who, exc)
    if answer is not None or as_json:
        emit_json(answer or {})


@cli.command(short_help="Serve flowgit's tools over MCP (stdio).")
@json_option
@click.pass_context
def mcp(ctx: click.Context, as_json: bool) -> None:
    """A stdio MCP server: episodes, candidates, wrap, check, log, audit, ascend; the continuity file as a resource.

    Tools answer with the JSON the CLI prints under --json (so --json changes nothing here but error output
    before the server starts). Needs the optional extra: pip install '/path/to/flowgit[mcp]'.
    """
    from flowgit.commands import mcp as cmd

    obj = _root_obj(ctx)
    cmd.serve(continuity=obj.get("continuity"), store=obj.get("store"))


@cli.command()
@click.argument("path", required=False)
@json_option
@click.pass_context
def lint(ctx: click.Context, path: str | None, as_json: bool) -> None:
    """Lint FlowScript markers (E001-E003, W001-W002)."""
    from flowgit.commands import lint as cmd
    from flowgit.output import emit_json

    shown, findings, misread = cmd.run_lint(_cfg(ctx), path)
    if as_json:
        emit_json(cmd.to_json(shown, findings))
    else:
        click.echo(terminal_safe(cmd.render(shown, findings, len(misread))))
    for warning in misread:
        click.echo(terminal_safe(warning), err=True)
    if any(f.is_error for f in findings):
        ctx.exit(EXIT_FINDINGS)


@cli.command(short_help="List pattern lines with their level and evidence.")
@click.argument("path", required=False)
@click.option("--section", metavar="NAME", help="Only patterns in this section (name or alias, e.g. Developing).")
@click.option("--level", type=click.IntRange(1, 3), help="Only patterns at this level (1, 2 or 3).")
@json_option
@click.pass_context
def patterns(ctx: click.Context, path: str | None, section: str | None, level: int | None, as_json: bool) -> None:
    """List pattern lines: name, level, section, evidence, line."""
    from flowgit.commands import patterns as cmd
    from flowgit.output import emit_json

    cfg = _cfg(ctx)
    found = cmd.run_patterns(cfg, path, section=section, level=level)
    if as_json:
        emit_json(cmd.to_json(found))
    else:
        click.echo(terminal_safe(cmd.render(found)))
    for warning in cmd.misread_warnings(cfg, path):
        click.echo(terminal_safe(warning), err=True)


@cli.group()
def episode() -> None:
    """Record and query the append-only episodic store."""


@episode.command("add")
@click.argument("text", required=False)
@click.option("--type", "type_", help="finding, decision, observation, connection, outcome or tension (required).")
@click.option("--content", help="What happened (or give it as the argument). Without either, JSON lines are read "
                                "from stdin.")
@click.option("--tag", "tags", multiple=True, help="A domain keyword (repeatable).")
@click.option("--session", help="Session id (default $FLOWGIT_SESSION, then $CLAUDE_CODE_SESSION_ID); for JSON lines "
                                "on stdin, of each line that names none.")
@click.option("--agent", help="Who wrote it (default $FLOWGIT_AGENT); for stdin, of each line that names none.")
@click.option("--ts", help="ISO-8601 time (default now).")
@json_option
@click.pass_context
def episode_add(ctx: click.Context, text: str | None, type_: str | None, content: str | None, tags: tuple[str, ...],
                session: str | None, agent: str | None, ts: str | None, as_json: bool) -> None:
    """Append an episode: `flowgit episode add --type finding "what happened"` (or JSON lines on stdin)."""
    from flowgit import api
    from flowgit.commands import episode as cmd
    from flowgit.output import emit

    if text is None and content is None and type_ is None:
        if sys.stdin.isatty():
            raise FlowgitError("nothing to add", fix='flowgit episode add --type finding "what happened" '
                                                     "(or pipe JSON lines to it)")
        notes: list[str] = []
        episodes = cmd.episodes_from_stdin(sys.stdin, session=session, agent=agent, notes=notes)
    else:
        notes = []
        episodes = [api.episode_from(text, type_, content=content, tags=tags, session=session, agent=agent, ts=ts,
                                     notes=notes)]
    cfg = _cfg(ctx)
    api.refuse_stray_store(cfg, store_named=_root_obj(ctx).get("store") is not None)
    emit(api.add_episodes(cfg, episodes, notes), as_json,
         lambda d: cmd.render_added(d["added"], d["already_present"], d["warnings"]))


def _search_options(f: Any) -> Any:
    for opt in reversed([
        click.option("--type", "type_", help="Only this episode type."),
        click.option("--tag", "tags", multiple=True, help="Only episodes with this tag (repeatable: all must match)."),
        click.option("--session", help="Only this session."),
        click.option("--since", help="From this date/time (inclusive)."),
        click.option("--until", help="Up to this date/time (inclusive)."),
        click.option("--limit", type=click.IntRange(min=0), default=0, help="Show at most N (newest last)."),
        json_option,
    ]):
        f = opt(f)
    return f


def _search(ctx: click.Context, text: str | None, type_: str | None, tags: tuple[str, ...], session: str | None,
            since: str | None, until: str | None, limit: int, as_json: bool) -> None:
    from flowgit.commands import episode as cmd
    from flowgit.episodes import EPISODE_TYPES, EpisodeStore

    if type_ and type_ not in EPISODE_TYPES:
        from flowgit.suggest import unknown

        raise unknown("episode type", type_, EPISODE_TYPES, path="--type")
    store = EpisodeStore(_reading_cfg(ctx, store_only=True).store)
    cmd.stream_search(store, limit=limit, as_json=as_json, type_=type_, tags=tags, session=session, since=cmd.parse_when(since, "--since"),
                      until=cmd.parse_when(until, "--until"), text=text)


@episode.command("list")
@_search_options
@click.pass_context
def episode_list(ctx: click.Context, **kw: Any) -> None:
    """List episodes in store order."""
    _search(ctx, None, **kw)


@episode.command("search")
@click.argument("text", required=False)
@_search_options
@click.pass_context
def episode_search(ctx: click.Context, text: str | None, **kw: Any) -> None:
    """Find episodes by text, type, tag, session and time.

    TEXT is one phrase, found as written in an episode's content or a tag (letter case aside):
    `"budget retry"` finds "budget retry", not "retry budget". Narrow it with --type, --tag, --session.
    """
    _search(ctx, text, **kw)


@episode.command("show")
@click.argument("ids", nargs=-1, required=True)
@json_option
@click.pass_context
def episode_show(ctx: click.Context, ids: tuple[str, ...], as_json: bool) -> None:
    """Show episodes by id (or an unambiguous start of one: ep-3ef9)."""
    from flowgit.commands import episode as cmd
    from flowgit.episodes import EpisodeStore
    from flowgit.output import emit

    store = EpisodeStore(_reading_cfg(ctx, store_only=True).store)
    cmd.refuse_bare_store(store)
    emit(store.show(ids), as_json, cmd.render_list)


@cli.command(short_help="The gate: staged continuity and store vs HEAD.")
@json_option
@click.pass_context
def check(ctx: click.Context, as_json: bool) -> None:
    """Gate the staged continuity file and store against HEAD (the pre-commit hook)."""
    from flowgit.commands import check as cmd

    ctx.exit(cmd.main(_judging_cfg(ctx), as_json))


@cli.command("check-msg", short_help="Wrap trailers must agree with the change.")
@click.argument("message_file")
@json_option
@click.pass_context
def check_msg(ctx: click.Context, message_file: str, as_json: bool) -> None:
    """Check a wrap commit's trailers against the staged change (the commit-msg hook)."""
    from flowgit.commands import check_msg as cmd
    from flowgit.output import emit

    report = cmd.run_check_msg(_judging_cfg(ctx), message_file)
    emit(report, as_json, cmd.render)
    if report.problems:
        ctx.exit(EXIT_FINDINGS)


@cli.command("install-hook", short_help="Install the plain-git hooks (chains old ones).")
@click.option("--server", "server", metavar="BARE_REPO",
              help="Install the server-side pre-receive hook into this bare repository instead.")
@click.option("--shared-hooks", is_flag=True, help="Install even where core.hooksPath is shared (global or system "
                                                    "config, or outside the repository).")
@json_option
@click.pass_context
def install_hook(ctx: click.Context, server: str | None, shared_hooks: bool, as_json: bool) -> None:
    """Install flowgit's git hooks for plain git: pre-commit and pre-merge-commit (the gate), commit-msg
    (trailers, overrides), pre-push (the audit of what is pushed); an existing hook is chained, run first.
    With --server, the pre-receive hook of a self-hosted bare repository, with this interpreter baked in."""
    from flowgit.commands import install_hook as cmd
    from flowgit.output import emit

    if server is not None:
        from pathlib import Path

        result = cmd.run_install_server(Path(server))
    else:
        result = cmd.run_install(_cfg(ctx), shared=shared_hooks)
    emit(result, as_json, cmd.render)


@cli.command(short_help="The six-step wrap, committed.")
@click.option("--plan", "plan_spec", metavar="FILE|-", help="A wrap plan (JSON or YAML); - reads stdin.")
@click.option("--session", help="Session id (default: plan.session, $FLOWGIT_SESSION, $CLAUDE_CODE_SESSION_ID).")
@click.option("--date", "day", help="The wrap's date (default today, UTC).")
@click.option("--strict", is_flag=True, help="Abort the whole wrap if any promotion is refused, if a pattern is "
                                             "raised on no episode of this session (Step 2), or if a tension "
                                             "episode of this session touches a Proven pattern (Step 5).")
@click.option("--dry-run", is_flag=True, help="Print the diff and the message; write nothing.")
@click.option("--no-cleanup", is_flag=True, help="Skip the temporal cleanup (archival of stale patterns).")
@click.option("--schema", is_flag=True, help="Print the plan's JSON Schema and exit.")
@click.option("--example", is_flag=True, help="Print a worked example plan (every field) and exit.")
@click.option("--recover", is_flag=True, help="Roll back a wrap that was interrupted, then exit.")
@click.option("--push", is_flag=True, help="After committing, `flowgit sync` (fetch, merge by meaning, push).")
@json_option
@click.pass_context
def wrap(ctx: click.Context, plan_spec: str | None, session: str | None, day: str | None, strict: bool,
         dry_run: bool, no_cleanup: bool, schema: bool, example: bool, recover: bool, push: bool,
         as_json: bool) -> None:
    """Run the six-step wrap and commit it (from a plan, or from the edited working tree)."""
    from flowgit.commands import wrap as cmd

    if schema or example:
        click.echo(cmd.schema_text() if schema else cmd.example_text())
        return
    cfg = _cfg(ctx)
    if recover:
        from flowgit.wrap.transaction import recover as do_recover

        done = do_recover(cfg)
        from flowgit.output import emit

        emit({"recovered": done is not None, "message": done or "no interrupted wrap"}, as_json,
             lambda d: d["message"])
        return
    from flowgit import api
    from flowgit.output import emit
    from flowgit.wrap.plan import load_plan
    from flowgit.wrap.run import PromotionsRefused

    plan = load_plan(plan_spec) if plan_spec else None
    try:
        result = api.wrap(cfg, plan, session=session, day=day, strict=strict, dry_run=dry_run,
                          cleanup=not no_cleanup)
    except PromotionsRefused as exc:  # findings (exit 1), reported as every error is: JSON under --json
        ctx.exit(_fail(exc.to_dict(), exc.render(), EXIT_FINDINGS, as_json))
    if push and not dry_run and not result.exit_code:  # a refused wrap pushes nothing and says why below
        ctx.exit(cmd.push_after_wrap(cfg, result, as_json))
    emit(result, as_json, cmd.render_wrap)
    if result.exit_code:
        ctx.exit(result.exit_code)


@cli.command(short_help="Step 2 alone: what the session's episodes suggest.")
@click.option("--session", help="Only this session's episodes (default: FLOWGIT_SESSION, then CLAUDE_CODE_SESSION_ID; "
                                "with none, the episodes added since HEAD).")
@click.option("--date", "day", help="Judge staleness as of this date (default today).")
@json_option
@click.pass_context
def candidates(ctx: click.Context, session: str | None, day: str | None, as_json: bool) -> None:
    """Step 2 alone: what this session's episodes suggest (fired again, ready, duplicates, demotions, stale)."""
    from flowgit.commands import wrap as cmd
    from flowgit.output import emit

    emit(cmd.run_candidates(_reading_cfg(ctx), session, day), as_json, cmd.render_candidates)


@cli.command("log", short_help="Each pattern's timeline through git history.")
@click.argument("names", nargs=-1)
@click.option("--since", help="Only events on or after this date.")
@click.option("--until", help="Only events on or before this date.")
@click.option("--section", help="Only events in this section (e.g. Proven).")
@click.option("--graduated", "graduated_only", is_flag=True, help="Only patterns that ever graduated.")
@click.option("--format", "fmt", type=click.Choice(["text", "mermaid"]), default="text",
              help="mermaid: each pattern's life as a mermaid gantt chart.")
@click.option("--limit", type=click.IntRange(min=1), help="Only the newest N events (all patterns together).")
@json_option
@click.pass_context
def log_cmd(ctx: click.Context, names: tuple[str, ...], since: str | None, until: str | None,
            section: str | None, graduated_only: bool, fmt: str, limit: int | None, as_json: bool) -> None:
    """Each pattern's timeline across the continuity file's git history."""
    from flowgit.commands import history as cmd
    from flowgit.output import emit

    _refuse_graph_with_json(fmt if fmt != "text" else None, as_json)
    timeline = cmd.build_timeline(_history_cfg(ctx), names, since, until, section, graduated_only, limit)
    emit(timeline, as_json, cmd.render_mermaid if fmt == "mermaid" else cmd.render_timeline)


def _refuse_graph_with_json(fmt: str | None, as_json: bool) -> None:
    """``--format`` draws a graph and ``--json`` prints the data: one of them would be dropped without a word."""
    if fmt and as_json:
        raise FlowgitError(f"--format {fmt} draws a graph and --json prints the data as JSON: give one",
                           path="--format", fix=f"drop --json to get the {fmt}, or drop --format for the JSON "
                                                "(which holds everything the graph is drawn from)")


@cli.command(short_help="Every gate rule on every commit of the history (or a range).")
@click.option("--range", "range_text", metavar="A..B", help="Only the commits B has that A does not (CI, pre-push).")
@click.option("--since-ref", metavar="REF", help="Only the commits HEAD has that REF does not (REF..HEAD).")
@click.option("--not", "exclude", metavar="REV", multiple=True, help="Also leave out what REV reaches (repeatable).")
@click.option("--pushed", is_flag=True, help="The commits being pushed (the pre-commit framework's pre-push stage).")
@click.option("--replaces", is_flag=True, help="The range A..B is a branch's update (a push): B may not drop "
                                               "episodes A's store held (A501).")
@click.option("--root-base", metavar="REV", help="A range without a base (a new branch): judge a commit without a "
                                                 "parent at the root of its tip's first-parent line against REV.")
@click.option("--jobs", type=click.IntRange(min=1), metavar="N",
              help="Worker processes (default: one per core once each gets 500 commits; 1: judge in-process).")
@json_option
@click.pass_context
def audit(ctx: click.Context, range_text: str | None, since_ref: str | None, exclude: tuple[str, ...],
          pushed: bool, replaces: bool, root_base: str | None, jobs: int | None, as_json: bool) -> None:
    """Judge every commit of the continuity file and store against each parent with every gate rule."""
    from flowgit.commands import history as cmd
    from flowgit.output import emit

    spec = cmd.pushed_spec(range_text, exclude, root_base) if pushed else None
    report = cmd.audit(_history_cfg(ctx, judging=True), range_text, since_ref, exclude, ctx.find_root().obj or {},
                       jobs=jobs, root_base=root_base, replaces=replaces, spec=spec)
    emit(report, as_json, cmd.render_audit)
    if report.errors:
        ctx.exit(EXIT_FINDINGS)
    if report.incomplete:
        ctx.exit(EXIT_USAGE)  # not a finding, not a pass: fetch the history the range sits on


@cli.command("show-archived", short_help="The last text of an archived pattern.")
@click.argument("name")
@json_option
@click.pass_context
def show_archived(ctx: click.Context, name: str, as_json: bool) -> None:
    """Print the last text of an archived pattern and the commit that archived it."""
    from flowgit.commands import history as cmd
    from flowgit.output import emit

    emit(cmd.show_archived(_cfg(ctx), name), as_json, cmd.render_archived)


@cli.command(short_help="Recall a line of work, topic or concept (read-only).")
@click.argument("recall", required=False, default="")
@click.option("--type", "unit_type", type=click.Choice(["chain", "cluster", "concept"]),
              help="The kind of unit to look for (default: read from the recall).")
@click.option("--from", "from_sid", metavar="SID", help="Start from this session's deposit.")
@click.option("--partition", "partitions", multiple=True, metavar="NAME",
              help="claude, transcripts, git or episodes (repeatable; default all).")
@click.option("--claude-dir", metavar="DIR", help="Config directory holding projects/ (default $CLAUDE_CONFIG_DIR or ~/.claude).")
@click.option("--state", "state_spec", metavar="FILE|-", help="The state a previous --json answer returned.")
@click.option("--recognize", is_flag=True, help="Answer: this is the unit.")
@click.option("--refine", metavar="X", help="Answer: adjust the boundary (drop:SID, add:SID, widen, narrow).")
@click.option("--reorient", metavar="X", help="Answer: another kind of unit (chain/cluster/concept) or another angle.")
@click.option("--rescope", metavar="X", help="Answer an empty search: widen, type:KIND or partitions:all.")
@click.option("--interactive/--no-interactive", default=None, help="Ask on the terminal (default: when attached).")
@click.option("--format", "fmt", type=click.Choice(["html", "mermaid", "dot"]),
              help="Print the unit as a graph (sessions in time order, connections labelled) instead.")
@json_option
@click.pass_context
def ascend(ctx: click.Context, recall: str, unit_type: str | None, from_sid: str | None, partitions: tuple[str, ...],
           claude_dir: str | None, state_spec: str | None, recognize: bool, refine: str | None, reorient: str | None,
           rescope: str | None, interactive: bool | None, fmt: str | None, as_json: bool) -> None:
    """Lead a vague recall up to the line of work, topic or concept that many sessions imply (writes nothing)."""
    from flowgit.commands import ascend as cmd
    from flowgit.output import emit_json

    _refuse_graph_with_json(fmt, as_json)
    answers = [a for a in (("recognize", None) if recognize else None, ("refine", refine) if refine else None,
                           ("reorient", reorient) if reorient else None, ("rescope", rescope) if rescope else None) if a]
    if len(answers) > 1:
        raise FlowgitError("give one answer at a time", fix="one of --recognize, --refine, --reorient, --rescope")
    engine, response = cmd.run(_cfg(ctx), recall=recall, unit_type=unit_type, from_sid=from_sid,
                               partitions=list(partitions), claude_dir=claude_dir, state_spec=state_spec,
                               answer=answers[0] if answers else None)
    if fmt:
        click.echo(cmd.render_format(response, fmt), nl=False)
        return
    if as_json:
        emit_json(cmd.render(response, "json"))
        return
    attached = sys.stdin.isatty() and sys.stdout.isatty()
    if interactive or (interactive is None and attached):
        cmd.interactive(engine, response, lambda q: click.prompt(q, default="", show_default=False),
                        lambda text: click.echo(terminal_safe(text)))
    else:
        click.echo(terminal_safe(cmd.render(response, "text")))


@cli.command(short_help="Walk through flowgit in a throwaway repository.")
@click.option("--keep", is_flag=True, help="Keep the temporary repository and print its path.")
@json_option
def demo(keep: bool, as_json: bool) -> None:
    """Walk through flowgit in a temporary repository with the shipped sample data."""
    from flowgit.commands import demo as cmd

    cmd.run_demo(keep=keep, as_json=as_json)


@cli.command(short_help="The memory's life as one self-contained HTML page.")
@click.option("-o", "--output", default="report.html", show_default=True, metavar="FILE",
              help="Where to write the page (replaced atomically; - for standard output). The memory, the store, "
                   "git's files and a file flowgit did not draw are never replaced.")
@click.option("--since", help="Only commits on or after this date.")
@click.option("--until", help="Only commits on or before this date.")
@click.option("--pattern", "patterns", multiple=True, metavar="NAME", help="Only this pattern (repeatable).")
@json_option
@click.pass_context
def report(ctx: click.Context, output: str, since: str | None, until: str | None, patterns: tuple[str, ...],
           as_json: bool) -> None:
    """Write the continuity file's history as one HTML page: lanes, evidence, sizes, audit, tables.

    Exit 0 when the page is written (audit findings are drawn on it, not failed on; `flowgit audit`
    gates), 2 for bad input (a date that is not one, an unwritable path, no repository).
    """
    from flowgit.commands import report as cmd
    from flowgit.output import emit

    emit(cmd.run_report(_history_cfg(ctx), output=output, since=since, until=until, patterns=patterns, as_json=as_json),
         as_json, cmd.render)


@cli.command("merge-driver", short_help="git merge driver: continuity and store by meaning.")
@click.argument("base", metavar="%O")
@click.argument("ours", metavar="%A")
@click.argument("theirs", metavar="%B")
@click.argument("path", metavar="%P")
@json_option
@click.pass_context
def merge_driver(ctx: click.Context, base: str, ours: str, theirs: str, path: str, as_json: bool) -> None:
    """Merge by meaning (run by git through `merge=flowgit`; `flowgit init` registers it). Exit 1: conflict."""
    from flowgit.commands import merge_driver as cmd

    ctx.exit(cmd.main(_cfg(ctx), base, ours, theirs, path, as_json))


@cli.command(short_help="Fetch, merge by meaning, gate, push.")
@click.option("--retries", type=click.IntRange(0, 50), default=8, show_default=True,
              help="How many times to integrate again after a rejected push.")
@json_option
@click.pass_context
def sync(ctx: click.Context, retries: int, as_json: bool) -> None:
    """Fetch the upstream, integrate it through the merge driver, re-run the gate, push; never force.

    Exit 1: integration, gate or push failed and the branch is as it was. Exit 2: it cannot start (not a
    repository, uncommitted changes, a merge or rebase in progress, no upstream remote).
    """
    from flowgit.commands import sync as cmd

    ctx.exit(cmd.main(_cfg(ctx), as_json, retries))


@cli.command("prepare-commit-msg", short_help="Hook: note an amend for the commit-msg gate.")
@click.argument("message_file", required=False, default="")
@click.argument("source", required=False, default="")
@click.argument("sha", required=False, default="")
@click.pass_context
def prepare_commit_msg(ctx: click.Context, message_file: str, source: str, sha: str) -> None:
    """Record whether this commit is an amend (git's prepare-commit-msg hook; the pre-commit framework
    passes SOURCE and SHA in PRE_COMMIT_COMMIT_MSG_SOURCE / PRE_COMMIT_COMMIT_OBJECT_NAME)."""
    import os

    from flowgit.checks.staged import record_amend
    from flowgit.git import require_repo

    source = source or os.environ.get("PRE_COMMIT_COMMIT_MSG_SOURCE", "")
    sha = sha or os.environ.get("PRE_COMMIT_COMMIT_OBJECT_NAME", "")
    record_amend(require_repo(_cfg(ctx).root), source, sha)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI and turn user errors into one line and exit code 2."""
    from flowgit.errors import error_dict

    args = sys.argv[1:] if argv is None else list(argv)
    as_json = _wants_json(args)
    try:
        rv = cli.main(args=args, prog_name="flowgit", standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except FlowgitError as exc:
        from flowgit.errors import CommitRejected

        return _fail(exc.to_dict(), exc.render(), EXIT_FINDINGS if isinstance(exc, CommitRejected) else EXIT_USAGE,
                     as_json)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        where = exc.ctx.command_path if isinstance(exc, click.UsageError) and exc.ctx else "flowgit"
        fix = f"see `{where} --help`"
        if not as_json:
            exc.show()
            click.echo(f"  fix: {fix}", err=True)
            return EXIT_USAGE
        param = getattr(exc, "param", None)  # a bad option value: named, so an agent knows what to change
        option = max(param.opts, key=len) if param is not None and getattr(param, "opts", None) else \
            getattr(exc, "option_name", None)  # (an option the command does not have: named as typed)
        return _fail(error_dict(exc.format_message(), fix=fix, path=option if option and option.startswith("-")
                                else None), exc.format_message(), EXIT_USAGE, as_json)
    except click.Abort:
        if as_json:
            return _fail(error_dict("aborted"), "aborted", 130, as_json)
        click.echo("flowgit: aborted", err=True)
        return 130
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        if not _raised_writing_output(exc):
            raise
        return _output_failed(exc, args)
    except Exception as exc:  # noqa: BLE001 (only libgit2's refusals are turned into an error here)
        if type(exc).__module__.lstrip("_") != "pygit2":
            raise
        message = f"git's object database holds something libgit2 cannot read: {exc}"
        fix = ("`git fsck` names what is wrong with it; flowgit reads history through libgit2, which refuses "
               "the object (repair or rewrite that commit, then run this again)")
        return _fail(error_dict(message, fix=fix), FlowgitError(message, fix=fix).render(), EXIT_USAGE, as_json)


OUTPUT_WRITERS = {"emit", "emit_json", "emit_bytes", "echo", "write", "write_text", "flush", "splice", "close"}


def _raised_writing_output(exc: OSError) -> bool:
    """Whether the error came from writing the command's output (the innermost frame is one of the output
    layer's writers: flowgit's own, or click's echo), not from the work, which must still be a traceback."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    where = code.co_filename.replace(os.sep, "/")
    return code.co_name in OUTPUT_WRITERS and where.endswith(
        ("flowgit/output.py", "flowgit/commands/episode.py", "click/utils.py", "click/_compat.py"))


# Commands that only read (and `episode` subcommands that only read): a lost output lost nothing else
READING_COMMANDS = frozenset({"log", "audit", "show-archived", "status", "prime", "patterns", "candidates", "check",
                              "ascend"})
READING_EPISODE_COMMANDS = frozenset({"list", "search", "show"})


def _output_failed(exc: OSError, args: list[str] | None = None) -> int:
    """Say (on stderr, if it can take it) that the output was lost, not the work: exit 4, not a traceback
    and not 1, which would read as a wrap the gate refused. A command that only reads says it changed nothing."""
    from flowgit.errors import EXIT_OUTPUT

    words = [a for a in (args or []) if not a.startswith("-")]
    reading = bool(words) and (words[0] in READING_COMMANDS or (
        words[0] == "episode" and len(words) > 1 and words[1] in READING_EPISODE_COMMANDS))
    after = ("it only reads, and changed nothing: run it again with the output going somewhere that takes it"
             if reading else "what the command did stands (see `flowgit status`, `git log -1`)")
    try:
        sys.stderr.write(f"flowgit: error: could not write the output ({exc.strerror or exc}); {after}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    try:  # nothing more can reach the stream: drop what it holds, so the interpreter's exit does not retry it
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    except OSError:
        pass
    return EXIT_OUTPUT


if __name__ == "__main__":
    raise SystemExit(main())
