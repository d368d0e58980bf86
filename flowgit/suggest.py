"""Did-you-mean for names people and agents type: pattern names, section names, episode types.

An agent that mistypes a name should learn the right one from the error itself,
not by listing everything and guessing again.
"""

from __future__ import annotations

import difflib
import unicodedata
from typing import Iterable, Mapping

from flowgit.errors import FlowgitError


def _key(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().replace("-", "_").replace(" ", "_")


def close_matches(word: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """The choices nearest to ``word`` (case-insensitive, ``-``/``_``/space alike), best first."""
    by_key: dict[str, str] = {}
    for choice in choices:
        by_key.setdefault(_key(choice), choice)
    keys = difflib.get_close_matches(_key(word), list(by_key), n=n, cutoff=0.6)
    prefixed = [k for k in by_key if k.startswith(_key(word)) and k not in keys] if len(word) >= 3 else []
    return [by_key[k] for k in keys + prefixed][:n]


def unknown(kind: str, word: str, choices: Iterable[str], *, path: str | None = None,
            listing: str | None = None) -> FlowgitError:
    """The error for a name that is not there, naming the nearest ones."""
    choices = list(dict.fromkeys(choices))
    near = close_matches(word, choices)
    if near:
        fix = "did you mean " + " or ".join(f"`{c}`" for c in near) + "?"
    elif listing:
        fix = f"list them with `{listing}`"
    elif choices:
        fix = "one of: " + ", ".join(choices[:12]) + (" …" if len(choices) > 12 else "")
    else:
        fix = f"there is no {kind} yet"
    return FlowgitError(f"no {kind} {word!r}", path=path, fix=fix)


def section_filter(name: str, table: Mapping[str, str], present: Iterable[str] = ()) -> str:
    """The section name to filter on: a known name or alias becomes its canonical name.

    ``table`` maps lower-cased names and aliases to canonical names; ``present``
    holds the section names the file actually has (custom sections count too).
    A name that matches neither, even as a part, is an error with suggestions.
    """
    lowered = name.strip().lower()
    if lowered in table:
        return table[lowered]
    names = list(dict.fromkeys([*table.values(), *present]))
    if any(lowered and lowered in n.lower() for n in names):
        return name.strip()
    near = close_matches(name, [*names, *table])  # aliases match too, and are shown as their section
    shown = list(dict.fromkeys(table.get(n.lower(), n) for n in near))
    fix = ("did you mean " + " or ".join(f"`{c}`" for c in shown) + "?") if shown else "one of: " + ", ".join(names)
    raise FlowgitError(f"no section {name!r}", path="--section", fix=fix)
