"""``flowgit sync``: fetch, integrate through the merge driver, gate, push (see :mod:`flowgit.merge.sync`).

Exit codes: 0 pushed (or nothing to push); 1 integration, gate or push failed
and the branch is as it was before the attempt; 2 cannot start (not a
repository, a merge in progress, uncommitted changes, no remote). After
``flowgit wrap --push`` the wrap is committed whatever the sync does, so a sync
that cannot start exits 5 there, not 2 (see :func:`flowgit.commands.wrap.push_after_wrap`).
"""

from __future__ import annotations

import sys

from flowgit.config import Config
from flowgit.merge.sync import SyncFailed, SyncResult, run_sync


def run(cfg: Config, retries: int = 8) -> tuple[int, SyncResult | dict]:
    """The exit code and what to show: the result, or the failure as data."""
    try:
        return 0, run_sync(cfg, retries=retries)
    except SyncFailed as exc:
        return 1, {"ok": False, **exc.to_dict()}  # the one error shape: {"error": {"message", "fix", …}}


def render(data: SyncResult | dict) -> str:
    if isinstance(data, dict):
        error = data["error"]
        return f"sync failed: {error['message']}" + (f"\n  fix: {error['fix']}" if error.get("fix") else "")
    lines = [f"note: {n}" for n in data.notes]
    lines += [f"  {step}" for step in data.steps]
    tries = f" after {data.attempts} attempts" if data.attempts > 1 else ""
    done = f"pushed {data.head[:12]}" if data.pushed else f"at {data.head[:12]}"
    how = f" ({data.integrated})" if data.integrated else ""  # what was done, not what git is set to do
    lines.append(f"synced {data.branch} with {data.remote}{how}{tries}: {done}")
    return "\n".join(lines)


def main(cfg: Config, as_json: bool, retries: int) -> int:
    from flowgit.output import emit

    code, data = run(cfg, retries)
    if code and not as_json:
        sys.stderr.write(f"flowgit: {render(data)}\n")
    else:
        emit(data, as_json, render)
    return code
