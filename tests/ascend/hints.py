"""The commands a text answer gives to answer it without a terminal, read out of it as a user copies them."""

from __future__ import annotations

import re
import shlex


def terminal_free_commands(text: str) -> tuple[list[str], list[str]]:
    """(the first command's words, the `--state` answers it offers) of an ascend text answer's hint."""
    hint = re.search(r"To answer without a terminal: (.+?) > ascend\.json, then flowgit ascend --state "
                     r"ascend\.json (.+?)\. At most", text, re.S)
    assert hint is not None, text
    return shlex.split(hint[1]), hint[2].split(" | ")
