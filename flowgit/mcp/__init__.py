"""flowgit over the Model Context Protocol (``flowgit mcp``; needs the optional ``flowgit[mcp]`` extra).

The command line stays the primary path: every tool schema an agent loads costs
context, so the server offers the few operations an agent needs mid-session,
each returning exactly the JSON the CLI prints under ``--json``.
"""
