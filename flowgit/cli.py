"""The ``flowgit`` command line: parse options, call one core function, render text or JSON.

Heavy modules are imported inside each command, so ``flowgit check`` (run by the
pre-commit hook on every commit) pays only for what it uses.

Exit codes: 0 success; 1 findings (lint errors, gate errors, audit findings,
a refused promotion under --strict); 2 bad input or usage (the message names the
file, the line and the fix); 130 interrupted.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from flowgit import __version__
from flowgit.errors import EXIT_FINDINGS, EXIT_USAGE, FlowgitError

EXIT_CODES = """Exit codes: 0 ok; 1 findings (lint/gate errors, audit findings, refused
promotions with --strict); 2 bad input or usage; 130 interrupted."""

json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output for agents.")


def _cfg(ctx: click.Context) -> Any:
    from flowgit.config import load_config

    obj = ctx.find_root().obj or {}
    return load_config(continuity=obj.get("continuity"), store=obj.get("store"))


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             epilog=EXIT_CODES)
@click.version_option(__version__, prog_name="flowgit")
@click.option("--file", "continuity", metavar="PATH", help="Continuity file (default from config: CONTINUITY.md).")
@click.option("--store", metavar="PATH", help="Episodic store (default .flow/episodes.jsonl).")
@click.pass_context
def cli(ctx: click.Context, continuity: str | None, store: str | None) -> None:
    """Version-controlled continuity: wrap sessions, gate commits, audit graduations, ascend recalls."""
    ctx.obj = {"continuity": continuity, "store": store}


@cli.command(short_help="Write the continuity skeleton and the store.")
@json_option
@click.pass_context
def init(ctx: click.Context, as_json: bool) -> None:
    """Write the continuity skeleton and create the episodic store."""
    from flowgit.commands import init as cmd
    from flowgit.output import emit

    emit(cmd.run_init(_cfg(ctx)), as_json, cmd.render)


@cli.command()
@click.argument("path", required=False)
@json_option
@click.pass_context
def lint(ctx: click.Context, path: str | None, as_json: bool) -> None:
    """Lint FlowScript markers (E001-E003, W001-W002)."""
    from flowgit.commands import lint as cmd
    from flowgit.output import emit_json

    shown, findings = cmd.run_lint(_cfg(ctx), path)
    if as_json:
        emit_json(cmd.to_json(shown, findings))
    else:
        click.echo(cmd.render(shown, findings))
    if any(f.is_error for f in findings):
        ctx.exit(EXIT_FINDINGS)


@cli.command()
@click.argument("path", required=False)
@json_option
@click.pass_context
def patterns(ctx: click.Context, path: str | None, as_json: bool) -> None:
    """List pattern lines: name, level, section, evidence, line."""
    from flowgit.commands import patterns as cmd
    from flowgit.output import emit_json

    found = cmd.run_patterns(_cfg(ctx), path)
    if as_json:
        emit_json(cmd.to_json(found))
    else:
        click.echo(cmd.render(found))


@cli.group()
def episode() -> None:
    """Record and query the append-only episodic store."""


@episode.command("add")
@click.option("--type", "type_", help="finding, decision, observation, connection, outcome or tension.")
@click.option("--content", help="What happened. Without it, JSON lines are read from stdin.")
@click.option("--tag", "tags", multiple=True, help="A domain keyword (repeatable).")
@click.option("--session", help="Session id (default $FLOWGIT_SESSION).")
@click.option("--agent", help="Who wrote it (default $FLOWGIT_AGENT).")
@click.option("--ts", help="ISO-8601 time (default now).")
@json_option
@click.pass_context
def episode_add(ctx: click.Context, type_: str | None, content: str | None, tags: tuple[str, ...],
                session: str | None, agent: str | None, ts: str | None, as_json: bool) -> None:
    """Append episodes (from options, or many as JSON lines on stdin)."""
    from flowgit.commands import episode as cmd
    from flowgit.episodes import EpisodeStore, make_episode
    from flowgit.output import emit

    if content is None and type_ is None:
        episodes = cmd.episodes_from_stdin(sys.stdin)
    else:
        data = {k: v for k, v in {"type": type_, "content": content, "tags": list(tags), "session": session,
                                  "agent": agent, "ts": ts}.items() if v is not None}
        episodes = [make_episode(data, where="options", default_session=cmd.default_session(),
                                 default_agent=cmd.default_agent())]
    store = EpisodeStore(_cfg(ctx).store)
    added, already = store.append(episodes)
    emit({"added": added, "already_present": already}, as_json,
         lambda d: cmd.render_added(d["added"], d["already_present"]))


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
    from flowgit.output import emit

    if type_ and type_ not in EPISODE_TYPES:
        raise FlowgitError(f"--type {type_!r} is not an episode type", fix="use one of " + ", ".join(EPISODE_TYPES))
    store = EpisodeStore(_cfg(ctx).store)
    found, problems = store.search(type_=type_, tags=tags, session=session,
                                   since=cmd.parse_when(since, "--since"), until=cmd.parse_when(until, "--until"),
                                   text=text)
    cmd.warn_problems(store, problems)
    if limit:
        found = found[-limit:]
    emit(found, as_json, cmd.render_list)


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
    """Find episodes by text, type, tag, session and time."""
    _search(ctx, text, **kw)


@episode.command("show")
@click.argument("ids", nargs=-1, required=True)
@json_option
@click.pass_context
def episode_show(ctx: click.Context, ids: tuple[str, ...], as_json: bool) -> None:
    """Show episodes by id."""
    from flowgit.commands import episode as cmd
    from flowgit.episodes import EpisodeStore
    from flowgit.output import emit

    store = EpisodeStore(_cfg(ctx).store)
    found = store.get(ids)
    missing = [i for i in ids if i not in found]
    if missing:
        raise FlowgitError(f"no episode {', '.join(missing)}", path=store.path,
                           fix="list ids with `flowgit episode list`")
    emit([found[i] for i in dict.fromkeys(ids)], as_json, cmd.render_list)


@cli.command(short_help="The gate: staged continuity and store vs HEAD.")
@json_option
@click.pass_context
def check(ctx: click.Context, as_json: bool) -> None:
    """Gate the staged continuity file and store against HEAD (the pre-commit hook)."""
    from flowgit.commands import check as cmd

    ctx.exit(cmd.main(_cfg(ctx), as_json))


@cli.command("check-msg", short_help="Wrap trailers must agree with the change.")
@click.argument("message_file")
@json_option
@click.pass_context
def check_msg(ctx: click.Context, message_file: str, as_json: bool) -> None:
    """Check a wrap commit's trailers against the staged change (the commit-msg hook)."""
    from flowgit.commands import check_msg as cmd
    from flowgit.output import emit

    report = cmd.run_check_msg(_cfg(ctx), message_file)
    emit(report, as_json, cmd.render)
    if report.problems:
        ctx.exit(EXIT_FINDINGS)


@cli.command("install-hook", short_help="Install the plain-git hooks (chains old ones).")
@json_option
@click.pass_context
def install_hook(ctx: click.Context, as_json: bool) -> None:
    """Install the pre-commit and commit-msg hooks for plain git (chains existing hooks)."""
    from flowgit.commands import install_hook as cmd
    from flowgit.output import emit

    emit(cmd.run_install(_cfg(ctx)), as_json, cmd.render)


@cli.command(short_help="The six-step wrap, committed.")
@click.option("--plan", "plan_spec", metavar="FILE|-", help="A wrap plan (JSON or YAML); - reads stdin.")
@click.option("--session", help="Session id (default: plan.session or $FLOWGIT_SESSION).")
@click.option("--date", "day", help="The wrap's date (default today, UTC).")
@click.option("--strict", is_flag=True, help="Abort the whole wrap if any promotion is refused.")
@click.option("--dry-run", is_flag=True, help="Print the diff and the message; write nothing.")
@click.option("--no-cleanup", is_flag=True, help="Skip the temporal cleanup (archival of stale patterns).")
@click.option("--schema", is_flag=True, help="Print the plan's JSON Schema and exit.")
@click.option("--recover", is_flag=True, help="Roll back a wrap that was interrupted, then exit.")
@json_option
@click.pass_context
def wrap(ctx: click.Context, plan_spec: str | None, session: str | None, day: str | None, strict: bool,
         dry_run: bool, no_cleanup: bool, schema: bool, recover: bool, as_json: bool) -> None:
    """Run the six-step wrap and commit it (from a plan, or from the edited working tree)."""
    from flowgit.commands import wrap as cmd

    if schema:
        click.echo(cmd.schema_text())
        return
    cfg = _cfg(ctx)
    if recover:
        from flowgit.wrap.transaction import recover as do_recover

        done = do_recover(cfg) or "no interrupted wrap"
        from flowgit.output import emit

        emit({"recovered": done}, as_json, lambda d: d["recovered"])
        return
    from flowgit.output import emit
    from flowgit.wrap.plan import load_plan
    from flowgit.wrap.run import PromotionsRefused, run_wrap

    plan = load_plan(plan_spec) if plan_spec else None
    try:
        result = run_wrap(cfg, plan, session=session, day=day, strict=strict, dry_run=dry_run,
                          cleanup=not no_cleanup)
    except PromotionsRefused as exc:
        click.echo(f"flowgit: {exc.render()}", err=True)
        ctx.exit(EXIT_FINDINGS)
    emit(result, as_json, cmd.render_wrap)


@cli.command(short_help="Step 2 alone: what the session's episodes suggest.")
@click.option("--session", help="Only this session's episodes (default: episodes added since HEAD).")
@click.option("--date", "day", help="Judge staleness as of this date (default today).")
@json_option
@click.pass_context
def candidates(ctx: click.Context, session: str | None, day: str | None, as_json: bool) -> None:
    """Step 2 alone: what this session's episodes suggest (fired again, ready, duplicates, demotions, stale)."""
    from flowgit.commands import wrap as cmd
    from flowgit.output import emit

    emit(cmd.run_candidates(_cfg(ctx), session, day), as_json, cmd.render_candidates)


@cli.command("log", short_help="Each pattern's timeline through git history.")
@click.argument("names", nargs=-1)
@click.option("--since", help="Only events on or after this date.")
@click.option("--until", help="Only events on or before this date.")
@click.option("--section", help="Only events in this section (e.g. Proven).")
@click.option("--graduated", "graduated_only", is_flag=True, help="Only patterns that ever graduated.")
@json_option
@click.pass_context
def log_cmd(ctx: click.Context, names: tuple[str, ...], since: str | None, until: str | None,
            section: str | None, graduated_only: bool, as_json: bool) -> None:
    """Each pattern's timeline across the continuity file's git history."""
    from flowgit.commands import history as cmd
    from flowgit.output import emit

    emit(cmd.build_timeline(_cfg(ctx), names, since, until, section, graduated_only), as_json,
         cmd.render_timeline)


@cli.command(short_help="Re-check every graduation as of its commit.")
@json_option
@click.pass_context
def audit(ctx: click.Context, as_json: bool) -> None:
    """Re-derive every graduation from history and check its evidence as of its commit."""
    from flowgit.commands import history as cmd
    from flowgit.history.audit import run_audit
    from flowgit.output import emit

    report = run_audit(_cfg(ctx))
    emit(report, as_json, cmd.render_audit)
    if report.findings:
        ctx.exit(EXIT_FINDINGS)


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
              help="claude, git or episodes (repeatable; default all).")
@click.option("--claude-dir", metavar="DIR", help="Config directory holding projects/ (default $CLAUDE_CONFIG_DIR or ~/.claude).")
@click.option("--state", "state_spec", metavar="FILE|-", help="The state a previous --json answer returned.")
@click.option("--recognize", is_flag=True, help="Answer: this is the unit.")
@click.option("--refine", metavar="X", help="Answer: adjust the boundary (drop:SID, add:SID, widen, narrow).")
@click.option("--reorient", metavar="X", help="Answer: another kind of unit (chain/cluster/concept) or another angle.")
@click.option("--rescope", metavar="X", help="Answer an empty search: widen, type:KIND or partitions:all.")
@click.option("--interactive/--no-interactive", default=None, help="Ask on the terminal (default: when attached).")
@json_option
@click.pass_context
def ascend(ctx: click.Context, recall: str, unit_type: str | None, from_sid: str | None, partitions: tuple[str, ...],
           claude_dir: str | None, state_spec: str | None, recognize: bool, refine: str | None, reorient: str | None,
           rescope: str | None, interactive: bool | None, as_json: bool) -> None:
    """Lead a vague recall up to the line of work, topic or concept that many sessions imply (writes nothing)."""
    from flowgit.commands import ascend as cmd
    from flowgit.output import emit_json

    answers = [a for a in (("recognize", None) if recognize else None, ("refine", refine) if refine else None,
                           ("reorient", reorient) if reorient else None, ("rescope", rescope) if rescope else None) if a]
    if len(answers) > 1:
        raise FlowgitError("give one answer at a time", fix="one of --recognize, --refine, --reorient, --rescope")
    engine, response = cmd.run(_cfg(ctx), recall=recall, unit_type=unit_type, from_sid=from_sid,
                               partitions=list(partitions), claude_dir=claude_dir, state_spec=state_spec,
                               answer=answers[0] if answers else None)
    if as_json:
        emit_json(response.to_dict())
        return
    attached = sys.stdin.isatty() and sys.stdout.isatty()
    if interactive or (interactive is None and attached):
        cmd.interactive(engine, response, lambda q: click.prompt(q, default="", show_default=False), click.echo)
    else:
        click.echo(response.text + cmd.hint(response))


@cli.command(short_help="Walk through flowgit in a throwaway repository.")
@click.option("--keep", is_flag=True, help="Keep the temporary repository and print its path.")
@json_option
def demo(keep: bool, as_json: bool) -> None:
    """Walk through flowgit in a temporary repository with the shipped sample data."""
    from flowgit.commands import demo as cmd

    cmd.run_demo(keep=keep, as_json=as_json)


@cli.command("prepare-commit-msg", hidden=True, short_help="Hook: note an amend for the commit-msg gate.")
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
    try:
        rv = cli.main(args=argv, prog_name="flowgit", standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except FlowgitError as exc:
        from flowgit.wrap.run import CommitRejected

        click.echo(f"flowgit: error: {exc.render()}", err=True)
        return EXIT_FINDINGS if isinstance(exc, CommitRejected) else EXIT_USAGE
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return EXIT_USAGE
    except click.Abort:
        click.echo("flowgit: aborted", err=True)
        return 130
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
