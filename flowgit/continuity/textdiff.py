"""Where two versions of a text agree: the whole lines they share at the top and at the bottom.

A history walk reads thousands of versions of one file, each a few lines away
from the one read before it. Splitting a version into lines costs a new string
per line (for a non-ASCII text, a scan of each line too); finding what it
shares with the previous version costs a few block comparisons in C. So a
version is read as the previous version's line objects for the shared top and
bottom and a fresh split of the lines between (equal objects, and the same
objects: their hashes are already known and comparisons stop at identity).

Nothing here guesses: the shared parts are compared character for character,
and only whole lines (ending in ``\\n``, or the text's last line) are shared.
"""

from __future__ import annotations

from typing import NamedTuple, TypeVar

Text = TypeVar("Text", str, bytes)

FIRST_BLOCK = 512  # characters compared in the first step; each equal block doubles the next


class Shared(NamedTuple):
    """Whole lines two texts share: ``top`` lines from the start, ``bottom`` lines from the end.

    ``old_mid``/``new_mid`` are the character spans between them (start, end) in each text.
    """

    top: int
    bottom: int
    old_mid: tuple[int, int]
    new_mid: tuple[int, int]


def _common_prefix(old: Text, new: Text, limit: int) -> int:
    """How many leading characters ``old`` and ``new`` share (at most ``limit``)."""
    done, step = 0, FIRST_BLOCK
    while done < limit:
        upto = min(done + step, limit)
        if new.startswith(old[done:upto], done):
            done, step = upto, step * 2
            continue
        low, high = done, upto  # old[:low] == new[:low]; they differ somewhere in [low, high)
        while high - low > 1:
            mid = (low + high) // 2
            if new.startswith(old[low:mid], low):
                low = mid
            else:
                high = mid
        return low
    return done


def _common_suffix(old: Text, new: Text, limit: int) -> int:
    """How many trailing characters ``old`` and ``new`` share (at most ``limit``)."""
    end_old, end_new = len(old), len(new)
    done, step = 0, FIRST_BLOCK
    while done < limit:
        upto = min(done + step, limit)
        if new.endswith(old[end_old - upto:end_old - done], 0, end_new - done):
            done, step = upto, step * 2
            continue
        low, high = done, upto  # the last ``low`` characters agree; they differ within the last ``high``
        while high - low > 1:
            mid = (low + high) // 2
            if new.endswith(old[end_old - mid:end_old - low], 0, end_new - low):
                low = mid
            else:
                high = mid
        return low
    return done


def shared_lines(old: Text, new: Text, old_lines: int | None = None) -> Shared:
    """The whole lines ``new`` shares with ``old`` at the top, then at the bottom (never overlapping).

    Lines end at ``\\n`` (as :func:`flowgit.continuity.document.split_lines`
    cuts them; in UTF-8 the byte 0x0A is only ever that character, so bytes
    and their decoded text have the same lines). The top ends just after a
    newline both texts hold, and the bottom starts at a line start in both.
    ``old_lines``, when known, is how many lines ``old`` has (it saves a count).
    """
    nl = b"\n" if isinstance(old, bytes) else "\n"
    limit = min(len(old), len(new))
    head = _common_prefix(old, new, limit)
    head = old.rfind(nl, 0, head) + 1  # back to the start of the line the texts differ in (or end in)
    tail = _common_suffix(old, new, limit - head)
    start_old, start_new = len(old) - tail, len(new) - tail
    if tail and not (_line_start(old, start_old, nl) and _line_start(new, start_new, nl)):
        cut = new.find(nl, start_new, len(new))  # the next line start inside the shared bottom
        tail = 0 if cut == -1 else len(new) - (cut + 1)
        start_old, start_new = len(old) - tail, len(new) - tail
    top = old.count(nl, 0, head)
    if not tail:
        bottom = 0
    elif old_lines is not None:  # ``old`` has that many lines: count only those between (a long bottom is common)
        bottom = old_lines - top - old.count(nl, head, start_old)
    else:
        bottom = old.count(nl, start_old) + (0 if old.endswith(nl) else 1)
    return Shared(top, bottom, (head, start_old), (head, start_new))


def _line_start(text: Text, at: int, nl: Text) -> bool:
    return at == 0 or text[at - 1:at] == nl
