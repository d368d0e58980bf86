"""``flowgit merge-driver %O %A %B %P``: git's merge driver for the continuity file and the store.

git runs the driver once per conflicting file of every merge, rebase step and
pull, so ``flowgit init`` registers ``python -m flowgit.commands.merge_driver``:
this module run directly, without the click command tree (a third of the
start-up). Both forms take the same arguments and behave the same.
"""

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


def _direct(argv: list[str]) -> int:
    """``python -m flowgit.commands.merge_driver [--json] %O %A %B %P``."""
    from flowgit.config import load_config
    from flowgit.errors import EXIT_USAGE, FlowgitError

    as_json = "--json" in argv
    args = [a for a in argv if a != "--json"]
    if len(args) != 4:
        sys.stderr.write("usage: python -m flowgit.commands.merge_driver [--json] %O %A %B %P\n")
        return EXIT_USAGE
    try:
        cfg = load_config()
    except FlowgitError as exc:  # no configuration to merge by: git's text merge, so the conflict shows
        import subprocess

        sys.stderr.write(f"flowgit: error: {exc.render()}; merged as plain text\n")
        base, ours, theirs, _ = args
        return 1 if subprocess.run(["git", "merge-file", ours, base, theirs]).returncode else 0
    try:
        return main(cfg, *args, as_json)
    except FlowgitError as exc:
        sys.stderr.write(f"flowgit: error: {exc.render()}\n")
        return EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(_direct(sys.argv[1:]))
