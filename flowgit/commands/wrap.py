"""``flowgit wrap`` and ``flowgit candidates``: rendering for people and agents."""

from __future__ import annotations

import json

from flowgit.config import Config
from flowgit.dates import option_date, today
from flowgit.output import counted, terminal_safe
from flowgit.wrap.candidates import Candidates, gather_candidates
from flowgit.wrap.run import WrapResult
from flowgit.wrap.schema import SCHEMA


def schema_text() -> str:
    return json.dumps(SCHEMA, indent=2, ensure_ascii=False)


def example_text() -> str:
    """The worked example plan the package ships (every field; the demo wraps with it), as an agent's project
    holds no copy of flowgit's templates."""
    from flowgit.resources import template

    return template("wrap-plan.example.json").rstrip("\n")


def render_wrap(result: WrapResult) -> str:
    out: list[str] = []
    if result.recovered:
        out.append(f"note: {result.recovered}")
    out += _attention(result)
    for refusal in result.refused:
        out.append(f"refused: {refusal.sentence()}")
        out.append(f"  fix: {refusal.fix}")
        if refusal.written and refusal.name in result.left_in_working_tree:
            out.append(f"  committed as HEAD had it; your line is left in the working tree as you wrote it: "
                       f"{terminal_safe(refusal.written)}")
        elif refusal.written:  # the edit's line went back to what HEAD had: show it, so nothing typed is lost
            out.append(f"  put back; your line was: {terminal_safe(refusal.written)}")
    for ignored in result.ignored:
        out.append(f"ignored: {terminal_safe(ignored)}")  # it may quote an item of the file
    for note in result.notes:
        out.append(f"note: {note}")
    for warning in result.warnings:
        out.append(f"warning: {warning}")
    if result.nothing_to_do:
        if result.refused and result.mode == "working tree":
            out.append("nothing to wrap once the refused edits are set aside: they are left in the working tree "
                       "as you wrote them (fix them as the refusals say and wrap again, or drop them with "
                       "`git restore` of the file)")
        else:
            out.append("nothing to wrap: the continuity file and the store are as HEAD has them")
        if result.refused or result.ignored:
            out.append("nothing was committed: every requested change was refused or ignored (exit 3)")
        return "\n".join(out)
    out += [f.format() for f in result.gate]
    if result.gate_refused:
        errors = sum(f.is_error for f in result.gate)
        out.append(f"flowgit wrap: the gate refuses this change ({errors} error(s)); nothing was written")
    if result.dry_run:
        out += ["--- dry run: nothing was written ---", result.diff.rstrip("\n"), "", "--- commit message ---",
                result.message.rstrip("\n")]
        return "\n".join(out)
    if result.gate_refused:
        return "\n".join(out)
    s = result.summary
    out.append(f"committed {result.committed[:12]}: {result.message.splitlines()[0]}")
    out.append(f"  State focus: {s['state_focus'] or '(empty)'}")
    for section, change in s["sections_changed"].items():
        out.append(f"  {section}: {change}")
    usual = ("added", "incremented", "graduated", "lowered", "demoted", "archived", "renamed")
    for kind in (*usual, *(k for k in s["patterns"] if k not in usual)):  # every event --json names, said too
        names = s["patterns"].get(kind)
        if names:
            out.append(f"  patterns {kind}: {', '.join(names)}")
    out.append(f"  episodes recorded: {len(result.episode_ids)} ({result.session_episodes} from this session)")
    out.append(f"  file: ~{s['lines']} lines, ~{s['approx_tokens']:,} tokens")
    return "\n".join(out)


def _attention(result: WrapResult) -> list[str]:
    """Step 5, said prominently: a tension or outcome of this session touches a Proven pattern."""
    if not result.attention:
        return []
    bar = "!" * 72
    lines = [bar]
    for a in result.attention:
        lines.append(f"ATTENTION: Proven `{a['name']}` (line {a['line']}) is touched by tension/outcome "
                     f"episode(s) {', '.join(a['episodes'])} of this session.")
    lines += ["Re-examine its evidence chain (Step 5): demote it with the contradicting episode if the chain",
              "does not survive (`--strict` stops the wrap on a tension episode until you have).", bar]
    return lines


def run_candidates(cfg: Config, session: str | None, day: str | None) -> Candidates:
    """``flowgit candidates [--session S] [--date D]``: the options read, the work done by the wrap package.

    The session is resolved as every other command resolves it (option, then ``FLOWGIT_SESSION``, then
    ``CLAUDE_CODE_SESSION_ID``): a session named only in the environment is still the session, and its
    episodes committed mid-session are still its evidence.
    """
    from flowgit.session import resolve_session

    when = option_date(day, "--date") or today()
    return gather_candidates(cfg, resolve_session(session) or None, when)


def _counted_evidence(entry: dict) -> str:
    """How the evidence suggested for a candidate counts: episodes of one session and agent count once, so four ids
    may be three independent episodes (said, or the list reads as miscounted)."""
    cited, independent = len(entry["evidence"]), entry["independent"]
    counted = f"{independent} independent episodes from {entry['sources']} sources"
    return counted if cited == independent else f"{cited} episodes suggested, {counted}"


def render_candidates(c: Candidates) -> str:
    out = [f"{len(c.session_episodes)} episode(s) from session {c.session}" if c.session else
           f"{len(c.session_episodes)} episode(s) recorded since the last commit, any session's (no session "
           "given: --session, FLOWGIT_SESSION or CLAUDE_CODE_SESSION_ID names one)"]

    def block(title: str, rows: list[str]) -> None:
        out.append(f"\n{title}:" + ("" if rows else " none"))
        out.extend(f"  - {r}" for r in rows)

    block("1x patterns that fired again", [f"{x['name']} (line {x['line']}): {', '.join(x['episodes'])} "
                                           f"share {', '.join(x['shared_words'])}" for x in c.fired_again])
    block("2x patterns ready to graduate", [f"{x['name']}: {_counted_evidence(x)} "
                                            f"[evidence: {', '.join(x['evidence'])}]" for x in c.ready_to_graduate])
    block("2x patterns not ready yet", [f"{x['name']}: {'; '.join(x['lacks'])}" for x in c.not_yet])
    block("near-duplicates", [f"{' ~ '.join(x['patterns'])}: {x['kind']} ({x['similarity']})"
                              for x in c.near_duplicates])
    block("demotion candidates", [f"{x['name']}: {x['why']} ({', '.join(x['episodes'])})" for x in c.demotion])
    block("stale (archived by the next wrap)", [f"{s.name} in {s.section}: last seen {s.last_seen} "
                                                f"({counted(s.days, 'day')})" for s in c.stale])
    block("action items to update (overdue, or done and still listed)",
          [f"line {x['line']}: {x['item']} — {x['why']}" for x in c.overdue])
    return "\n".join(out)


def push_after_wrap(cfg: Config, result: WrapResult, as_json: bool) -> int:
    """``flowgit wrap --push``: the wrap's Step 6 ends with a push, done by ``flowgit sync``.

    The wrap is committed before the sync starts, so no failure of the sync may read as "nothing was
    written" (exit 2): an agent told so wraps again. A sync that cannot start exits 5, one that fails
    with sync's own code (1); both say the wrap stands and that `flowgit sync` is what is left to do."""
    from flowgit.commands import sync
    from flowgit.output import emit

    from flowgit.errors import EXIT_NOT_SYNCED, EXIT_USAGE, FlowgitError

    try:
        code, synced = sync.run(cfg)
        if code:
            synced = {**synced, "started": True}
    except FlowgitError as exc:  # sync could not start (no remote, detached HEAD, no driver): the wrap stands
        # (with no wrap committed, this is sync's own usage error, as `flowgit sync` gives it)
        code = EXIT_NOT_SYNCED if result.committed else EXIT_USAGE
        synced = {"ok": False, "started": False, **exc.to_dict()}
    emit({"wrap": result, "sync": synced}, as_json, _render_pushed)
    return code


def _render_pushed(data: dict) -> str:
    from flowgit.commands import sync

    out = render_wrap(data["wrap"]) + "\n" + sync.render(data["sync"])
    failed = data["sync"] if isinstance(data["sync"], dict) else None
    if failed is not None and data["wrap"].committed:
        what = "failed" if failed.get("started") else "could not start"
        out += (f"\nthe wrap is committed ({data['wrap'].committed[:12]}) and stands; the sync {what}: "
                "fix that and run `flowgit sync` (wrapping again would add nothing)")
    return out
