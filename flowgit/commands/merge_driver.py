"""``flowgit merge-driver %O %A %B %P``: git's merge driver for the continuity file and the store."""

from __future__ import annotations

import sys

from flowgit.config import Config
from flowgit.merge.driver import DriverResult, render, run_driver


def main(cfg: Config, base: str, ours: str, theirs: str, path: str, as_json: bool) -> int:
    """Merge, write the result over ``ours``, report on stderr (git shows it); 0 merged, 1 conflict."""
    result: DriverResult = run_driver(cfg, base, ours, theirs, path)
    if as_json:
        from flowgit.output import emit_json

        emit_json(result.to_dict())
    else:
        text = render(result)
        if text:
            sys.stderr.write(text + "\n")
    return 0 if result.clean else 1
