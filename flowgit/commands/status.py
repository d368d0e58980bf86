"""``flowgit status``: the facts ``flowgit prime`` gives an agent, laid out for a person like ``git status``."""

from __future__ import annotations

from flowgit.output import style
from flowgit.overview import RECOVER, Overview


UNWRAPPED_SHOWN = 20  # episodes listed by name in the human view (like `git status`, a page, not a log)


def _block(title: str, rows: list[str], colour: str) -> list[str]:
    if not rows:
        return []
    return ["", f"{title}:", *(f"  {style(r, colour)}" for r in rows)]


def _unpushed_lines(unpushed: dict) -> list[str]:
    count = unpushed["commits"]
    if unpushed["failing"] is None:
        return ["", style(f"{count:,} commit(s) no remote has yet, not audited here:", "yellow"),
                f"  (a push is refused if one fails the audit: {unpushed['fix']})"]
    shas = ", ".join(sha[:10] for sha in unpushed["failing"][:5]) + (" …" if len(unpushed["failing"]) > 5 else "")
    return ["", style(f"Commits no remote has yet fail the audit ({len(unpushed['failing'])} of {count:,}): "
                      "a push of them is refused", "red"),
            f"  {style(shas, 'red')}  ({', '.join(unpushed['codes'])})", f"  (fix: {unpushed['fix']})"]


def render(view: Overview) -> str:
    pending = view.interrupted_wrap
    missing = ("  (outside this sparse checkout: `git sparse-checkout add` its directory)" if view.outside_sparse
               else "  (missing: run `flowgit init`)")
    lines = [f"continuity file: {view.continuity}" + ("" if view.exists else style(missing, "red"))]
    if view.last_wrap:
        w = view.last_wrap
        lines.append(f"last wrap: {w.date} {w.commit[:10]} {w.subject}" + (f" (session {w.session})"
                                                                            if w.session else ""))
    else:
        lines.append("last wrap: none yet")
    if view.session:
        lines.append(f"this session ({view.session}): " + ("wrapped" if view.session_wrapped else "not wrapped yet"))
    if pending and pending.get("running"):
        lines += ["", style("A wrap is running now:", "yellow"),
                  f"  {pending['journal']}  ({pending['fix']}: it holds the repository lock, and its edits are "
                  "not committed yet)"]
    elif pending:
        lines += ["", style("An interrupted wrap awaits recovery:", "red"),
                  f"  {style(pending['journal'], 'red')}  ({pending['fix']}: the continuity file and the store "
                  "may hold its half-written changes)"]
    if view.interrupted_sync:
        lines += ["", style("An interrupted sync left a half-made merge:", "red"),
                  f"  {view.interrupted_sync['message']}", f"  (fix: {view.interrupted_sync['fix']})"]
    if view.merge_driver:
        lines += ["", style("The merge driver cannot start:", "red"), f"  {view.merge_driver}",
                  "  (fix: run `flowgit init` again in this clone: it registers the driver with the flowgit that "
                  "runs it; safe to repeat)"]
    if view.merge_attributes:
        lines += ["", style("A merge attribute overrides flowgit's driver:", "red"),
                  *(f"  {problem}" for problem in view.merge_attributes)]
    if view.clone_setup:
        lines += ["", style("This clone is not set up:", "red"), *(f"  {problem}" for problem in view.clone_setup),
                  f"  (fix: {view.clone_setup_fix})"]
    if view.mid_merge:
        m = view.mid_merge
        doing = f"{m['operation'][:1].upper()}{m['operation'][1:]} is in progress: " if m["operation"] else ""
        lines += ["", style(f"{doing}{m['file']} holds {m['markers']}:", "red"),
                  "  (nothing else is read from it until they are resolved; episodes listed as not wrapped may be "
                  "the other side's, which the merge brings)", f"  (fix: {m['fix']})"]
    if view.unpushed:
        lines += _unpushed_lines(view.unpushed)
    if view.continuity_modified and not view.mid_merge:  # (mid-merge: resolving it is the one thing to do)
        hint = (f"  ({pending['fix']} first)" if pending and pending.get("running") else
                f"  ({RECOVER} first)" if pending else "  (finish with `flowgit wrap`)")
        lines += ["", "Changes not wrapped:", f"  {style('modified: ' + view.continuity, 'red')}" + hint]
    shown = view.unwrapped[-UNWRAPPED_SHOWN:]  # the newest; --json lists every one
    rows = [f"{e.id}  {e.type:<11} {e.content[:70]}" + (f"  (session {e.session})" if e.session else "")
            for e in shown]
    if len(view.unwrapped) > len(shown):
        rows.insert(0, f"… {len(view.unwrapped) - len(shown)} earlier (`flowgit episode list` shows them all)")
    lines += _block(f"Episodes recorded but not wrapped ({len(view.unwrapped)})", rows, "red")
    lines += _block("Ready to graduate (wrap to promote)",
                    [f"{r['name']}: {r['independent']} independent episodes from {r['sources']} sources"
                     for r in view.ready], "green")
    lines += _block("Fired again (1x -> 2x candidates)", [f"{r['name']} (line {r['line']})" for r in view.fired_again],
                    "green")
    lines += _block("Overdue actions", [f"line {r['line']}: {r['text']} (next: {r['next']}, "
                                        f"{r['days_overdue']} day(s) overdue)" for r in view.overdue], "yellow")
    lines += _block("Stale (the next wrap archives them)", [f"{r['name']} in {r['section']}, last seen "
                                                            f"{r['last_seen']}" for r in view.stale], "yellow")
    lines += _block("Going stale next", [f"{r['name']} in {r['section']}: {r['days_left']} day(s) left"
                                         for r in view.stale_soon], "yellow")
    if len(lines) <= 3 and not view.continuity_modified and not pending and not view.interrupted_sync \
            and not view.merge_driver and not view.merge_attributes and not view.clone_setup \
            and not view.mid_merge:
        lines += ["", "nothing to wrap"]
    return "\n".join(lines)
