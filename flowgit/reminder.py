"""The wrap reminder Claude Code's ``Stop`` and ``PreCompact`` hooks run (``flowgit remind --hook``).

It speaks once per session and event, and only when something is left to wrap:
episodes of this session no commit holds yet, or uncommitted edits to the
continuity file. It is silent when the session already wrapped (a commit carries
its ``Flow-Session`` trailer), when ``stop_hook_active`` says the agent is already
continuing because of a Stop hook, and after it has reminded once at that event
(a marker per event in the repository's git directory, never in the working
tree). A Stop reminder blocks the stop once with the reason: the one answer that
reaches the agent. A PreCompact one is a message to the user, since compaction
cannot wait for a wrap, so it has a marker of its own: it must not use up the
Stop reminder, or a session compacted once would end without being asked to wrap.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from flowgit.config import Config
from flowgit.errors import FlowgitError

MARKER_DIR = ("flowgit", "reminded")


def _safe(name: str) -> str:
    """``name`` as one file name (a session id or event name comes from the agent, unchecked)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)[:120].lstrip(".") or "_"


def _marker(root: Path, session: str, event: str) -> Path:
    """The marker that ``session`` was reminded at ``event``: one per event, so no event uses up another's."""
    from flowgit.git import git_dir

    return git_dir(root).joinpath(*MARKER_DIR, _safe(event), _safe(session))


def _claim(marker: Path) -> bool:
    """Create the marker; False when it was already there (this session has been reminded), or when it cannot
    be made (an unwritable git directory, a file where its directory goes): a reminder that could not be
    marked as given would block every stop of the session, so it is not given."""
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        return True
    except OSError:  # (FileExistsError among them: reminded already)
        return False


def pending(cfg: Config, session: str) -> tuple[list[str], bool]:
    """What is left to wrap for ``session``: its unwrapped episode ids, and whether it already wrapped.

    A continuity file mid-merge (conflict markers) is an error here, as a file flowgit cannot read is: a
    wrap refuses it, so the answer is the markers and how to finish, never "wrap the session"."""
    from flowgit.overview import gather

    view = gather(cfg, session=session, light=True)
    if view.mid_merge is not None:
        merge = view.mid_merge
        raise FlowgitError(f"{merge['markers']} (a merge left it conflicted)", path=merge["file"],
                           line=merge["line"], fix=merge["fix"])
    from flowgit.evidence import same_source

    mine = [e.id for e in view.unwrapped if same_source(e.session, session)]
    left = list(mine)
    if view.continuity_modified:
        left.append(cfg.continuity_rel)
    return left, view.session_wrapped


def remind(cfg: Config, payload: dict, session: str, *, once: bool = True) -> dict | None:
    """The hook's JSON answer, or None to stay silent; ``once=False`` asks without using up the reminder."""
    from flowgit.git import require_repo

    require_repo(cfg.root)
    event = str(payload.get("hook_event_name") or "Stop")
    if payload.get("stop_hook_active") or not session:
        return None
    left, wrapped = pending(cfg, session)
    if wrapped or not left:
        return None
    if once and not _claim(_marker(cfg.root, session, event)):
        return None
    episodes = sum(1 for x in left if x.startswith("ep-"))
    parts = [f"{episodes} episode(s) of this session are not wrapped"] if episodes else []
    if cfg.continuity_rel in left:
        parts.append(f"{cfg.continuity_rel} has uncommitted edits")
    what = " and ".join(parts)
    return _answer(event, f"flowgit: {what}. Wrap the session before it ends: run /wrap (the flowgit-wrap skill).")


def unreadable(root: Path, payload: dict, session: str, exc: FlowgitError) -> dict | None:
    """The hook's answer inside a repository whose memory flowgit cannot read (an invalid ``.flowgit.toml``,
    conflict markers): whether the session is wrapped cannot be told, so it says why and the fix, once per
    session and event (a marker of its own: once the fix is in, the ordinary reminder still comes), instead of
    the silence that let a session end unwrapped with nobody told why."""
    event = str(payload.get("hook_event_name") or "Stop")
    if payload.get("stop_hook_active") or not _claim(_marker(root, session or "_", f"{event}-unreadable")):
        return None
    return _answer(event, f"flowgit cannot read this project's memory, so it cannot tell whether this session "
                          f"is wrapped: {exc.render()}. Fix that, then wrap the session: run /wrap (the "
                          "flowgit-wrap skill).")


def _answer(event: str, message: str) -> dict:
    """A Stop answer blocks the stop once with the reason (the one answer that reaches the agent); any other
    event's is a message to the person."""
    if event == "Stop":
        return {"decision": "block", "reason": message + " If this session was trivial, say so and stop; this "
                                                         "reminder is shown once."}
    return {"systemMessage": message + " (Shown once before compaction; the agent is asked once more when the "
                                       "session stops.)"}
