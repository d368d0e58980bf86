"""One function per operation, returning exactly what the CLI prints under ``--json``.

The command line and the MCP server are two doors to the same rooms: both call
these functions and serialise the result with :func:`flowgit.output.to_jsonable`,
so an agent reads the same JSON whichever door it used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from flowgit.config import Config
from flowgit.episodes import Episode
from flowgit.errors import FlowgitError


def add_episodes(cfg: Config, episodes: list[Episode], notes: Iterable[str] = ()) -> dict:
    """Append ``episodes`` to the store: ``{"added": [...], "already_present": [...], "warnings": [...]}``;
    ``notes`` are what making them changed in what was written (:func:`flowgit.episodes.make_episode`)."""
    from flowgit.episodes import EpisodeStore

    ahead = future_dated(episodes)
    if ahead:
        raise FlowgitError("; ".join(ahead) + ": nothing was written", path=cfg.store,
                           fix="give the time it happened (now or earlier), or leave --ts out: an episode is "
                               "recorded when it happens")
    added, already = EpisodeStore(cfg.store).append(episodes, guard=lambda: refuse_where_git_would_drop(cfg))
    return {"added": added, "already_present": already,
            "warnings": list(notes) + _not_recorded_again(episodes, already)}


def _not_recorded_again(given: list[Episode], stored: list[Episode]) -> list[str]:
    """What a call gave for an episode already recorded that the store does not hold: its id is made of its
    type, text and session, so an agent or tags given again are not recorded (the agent counts toward
    independent evidence, so the caller is told which one stands)."""
    asked = {e.id: e for e in given}
    out = []
    for kept in stored:
        again = asked.get(kept.id)
        if again is None:
            continue
        if again.agent != kept.agent or list(again.tags) != list(kept.tags):
            out.append(f"{kept.id} was recorded already, with agent {kept.agent or '(none)'!r} and tags "
                       f"{list(kept.tags)}: the agent {again.agent or '(none)'!r} and tags {list(again.tags)} "
                       "given now are not recorded (an episode's id is of its type, text and session)")
    return out


def refuse_stray_store(cfg: Config, store_named: bool) -> None:
    """Refuse to record outside a git repository unless the store was named (``--store``): the project's
    store lives in its repository, and an append anywhere else would leave a stray ``.flow/`` no commit ever
    holds. The CLI and the MCP server ask the same question here, so they refuse alike."""
    from flowgit.git import require_repo

    if not store_named:
        require_repo(cfg.root)


def refuse_where_git_would_drop(cfg: Config) -> None:
    """Refuse an append (asked under the repository lock) where the next ordinary git step would drop it: a
    stopped rebase, whose ``--abort`` resets the tree hard, or a killed sync's half-merged store, whose way
    out puts back what the merge wrote (a merge's, cherry-pick's or revert's abort keeps a line the tree
    adds: it refuses to overwrite it); or where the store lies outside a sparse checkout (a store of one new
    line would replace HEAD's)."""
    from flowgit.git import enclosing_git_dir, operation_in_progress, refuse_outside_sparse_checkout
    from flowgit.merge.sync import settle_interrupted_sync

    root = cfg.root
    if root is None or enclosing_git_dir(root) is None:
        return  # a store outside any repository: no git operation owns it
    if not cfg.store.exists():
        try:
            rel = cfg.store.resolve().relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            rel = None  # a store named outside the repository: no checkout of it to be sparse
        if rel is not None:
            refuse_outside_sparse_checkout(root, [rel])
    found = operation_in_progress(root)
    if found is not None and found[0].startswith("a rebase"):
        raise FlowgitError(f"{found[0]} is in progress in this repository: `git rebase --abort` resets the working "
                           "tree and would drop the episode with it, so nothing was written", path=root,
                           fix=f"{found[1]}, then record the episode")
    settle_interrupted_sync(root)


FUTURE_SKEW_SECONDS = 3600  # clocks disagree a little; an hour ahead is a date, not a skew


def future_dated(episodes: list) -> list[str]:
    """A sentence per episode dated more than a clock's skew ahead of now, which is refused: the gate
    refuses to commit it before its date (G705), and a wrap commits every episode the store appends, so
    every wrap in the clone would be refused until then; and its id does not hold its date, so it could not
    be recorded again with the right one."""
    from datetime import datetime, timedelta, timezone

    from flowgit.episodes import parse_ts

    ahead = datetime.now(timezone.utc) + timedelta(seconds=FUTURE_SKEW_SECONDS)
    out = []
    for e in episodes:
        when = parse_ts(e.ts)
        if when is not None and when > ahead:
            out.append(f"episode \"{e.content[:40]}\" is dated {e.ts}, more than an hour ahead of now: the gate "
                       "refuses to commit an episode before its date (G705), so every wrap in this clone would be "
                       "refused until then")
    return out


def episode_from(text: str | None, type_: str | None, *, content: str | None = None, tags: Iterable[str] = (),
                 session: str | None = None, agent: str | None = None, ts: str | None = None,
                 notes: list[str] | None = None) -> Episode:
    """One episode from its parts, with the session and agent resolved the one shared way (``notes``: as
    :func:`flowgit.episodes.make_episode` takes them)."""
    from flowgit.commands.episode import default_agent, default_session, episode_text
    from flowgit.episodes import make_episode

    content = episode_text(text, content, type_)
    if content is None or type_ is None:
        raise FlowgitError("an episode needs a type and a text",
                           fix='e.g. type "finding" and text "what happened"')
    data = {k: v for k, v in {"type": type_, "content": content, "tags": list(tags), "session": session,
                              "agent": agent, "ts": ts}.items() if v is not None}
    return make_episode(data, where="options", default_session=default_session(), default_agent=default_agent(),
                        notes=notes)


def search_episodes(cfg: Config, text: str | None = None, *, type_: str | None = None, tags: Iterable[str] = (),
                    session: str | None = None, since: str | None = None, until: str | None = None,
                    limit: int = 0) -> list[Episode]:
    """Episodes matching every filter given, in store order (the newest ``limit`` when set)."""
    from flowgit.commands import episode as cmd
    from flowgit.episodes import EPISODE_TYPES, EpisodeStore

    if type_ and type_ not in EPISODE_TYPES:
        from flowgit.suggest import unknown

        raise unknown("episode type", type_, EPISODE_TYPES, path="--type")
    if limit < 0:  # found[-limit:] would silently drop the oldest matches instead
        from flowgit.errors import FlowgitError

        raise FlowgitError(f"limit must be 0 (all) or more, not {limit}", path="--limit",
                           fix="give the number of newest matches wanted, or 0 for all")
    store = EpisodeStore(cfg.store)
    found, problems = store.search(type_=type_, tags=tuple(tags), session=session,
                                   since=cmd.parse_when(since, "--since"), until=cmd.parse_when(until, "--until"),
                                   text=text)
    cmd.warn_problems(store, problems)
    return found[-limit:] if limit else found


def wrap(cfg: Config, plan: Any = None, *, session: str | None = None, day: str | None = None,
         strict: bool = False, dry_run: bool = False, cleanup: bool = True, source: str = "plan") -> Any:
    """Run the wrap from a plan (a :class:`~flowgit.wrap.plan.Plan`, or its JSON data) or from the working tree."""
    from flowgit.wrap.plan import Plan
    from flowgit.wrap.run import run_wrap

    if plan is not None and not isinstance(plan, Plan):
        plan = Plan.from_data(plan, source)
    # only an explicit session goes in: run_wrap ranks it over the plan's, and the environment's below both
    return run_wrap(cfg, plan, session=(session or "").strip() or None, day=day, strict=strict, dry_run=dry_run,
                    cleanup=cleanup)


UNIT_TYPES = ("chain", "cluster", "concept")
ANSWERS = ("recognize", "refine", "reorient", "rescope")


def ascend(cfg: Config, recall: str = "", *, unit_type: str | None = None, from_sid: str | None = None,
           partitions: Iterable[str] = (), claude_dir: str | None = None, state: dict | None = None,
           answer: tuple[str, str | None] | None = None) -> dict:
    """One step of the ascend state machine: a new recall, or an answer carried back with its ``state``."""
    from flowgit.commands import ascend as cmd
    from flowgit.suggest import unknown

    if unit_type is not None and unit_type not in UNIT_TYPES:
        raise unknown("unit type", unit_type, UNIT_TYPES)
    if answer is not None and answer[0] not in ANSWERS:
        raise unknown("answer", answer[0], ANSWERS)
    if state is None:
        _, response = cmd.run(cfg, recall=recall, unit_type=unit_type, from_sid=from_sid,
                              partitions=list(partitions), claude_dir=claude_dir, state_spec=None, answer=answer)
        return response.to_dict()
    from flowgit.ascend.engine import Ascend, State
    from flowgit.ascend.partitions import claude_config_dir

    if answer is None:
        raise FlowgitError("a state needs an answer", fix="answer recognize, refine, reorient or rescope")
    parsed = State.from_dict(state.get("state", state) if isinstance(state, dict) else state)
    engine = Ascend(cfg, claude_config_dir(claude_dir, cfg.claude_dir), parsed.scope.partitions)
    return engine.answer(parsed, *answer).to_dict()
