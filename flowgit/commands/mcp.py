"""``flowgit mcp``: start the stdio MCP server, or say how to install it."""

from __future__ import annotations

from pathlib import Path

from flowgit.errors import FlowgitError


def serve(*, continuity: str | None, store: str | None) -> None:
    try:
        from flowgit.mcp.server import serve as run
    except ImportError as exc:
        missing = getattr(exc, "name", None) or ""
        if missing != "mcp" and not missing.startswith("mcp."):
            raise  # a broken flowgit install is not a missing extra
        raise FlowgitError("the MCP server needs the official MCP SDK, which is not installed",
                           fix="install the `mcp` extra where flowgit is installed: "
                               "pip install '/path/to/flowgit[mcp]' (a clone of flowgit), "
                               "or `.venv/bin/pip install -e '.[mcp]'` inside one") from None
    run(Path.cwd(), continuity, store)
