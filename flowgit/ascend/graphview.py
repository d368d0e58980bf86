"""The unit drawn as a graph (``--format html|mermaid|dot``) saying what the text says of it.

The graph renderers draw each session with the ``topic`` of the response's
deposit and nothing else; that topic is the index's, unchecked. Here each
session is labelled with what its own record makes of it — where it arrived
(its outcome or topic, the claim the text checks), else where it began — led
by its verdict where the record does not confirm it (``provisional:``,
``corrected:``, first, so a label cut short keeps it), and every graph ends
with the text's reminder that this is a past trajectory to re-check.
"""

from __future__ import annotations

from typing import Any

from flowgit.ascend.model import Claim, Deposit
from flowgit.ascend.render import CAVEAT, find_claim, marked


def label(d: Deposit, claims: list[Claim]) -> str:
    """A session's label as its record has it: where it arrived when that was checked, else where it began."""
    standing = find_claim(claims, d.key, "standing")
    if standing is not None:
        return marked(standing, d.outcome or d.topic)
    return marked(find_claim(claims, d.key, "origin"), d.initial_request or d.topic)


def checked(data: dict[str, Any], members: list[Deposit], single: Deposit | None, claims: list[Claim]) -> dict:
    """The response dict with each drawn session's ``topic`` replaced by its checked :func:`label`."""
    out = dict(data)
    if out.get("unit"):
        deposits = [{**drawn, "topic": label(d, claims)} for drawn, d in zip(out["unit"]["deposits"], members)]
        out["unit"] = {**out["unit"], "deposits": deposits}
    if out.get("single_session") and single is not None:
        out["single_session"] = {**out["single_session"], "topic": label(single, claims)}
    return out


def with_caveat(drawn: str, fmt: str) -> str:
    """The graph with the caveat the text ends with, in the format's own syntax: a note node (mermaid, DOT),
    a paragraph under the page's body (HTML)."""
    from flowgit.report.dot import dot_string
    from flowgit.report.mermaid import label as mermaid_label
    from flowgit.report.svg import esc

    if fmt == "mermaid":
        return drawn + f'    caveat["{mermaid_label(CAVEAT, len(CAVEAT))}"]\n    style caveat stroke-dasharray: 4 2\n'
    if fmt == "dot":
        head, _, _ = drawn.rstrip().rpartition("}")
        return head + f"  caveat [shape=note, label={dot_string(CAVEAT, len(CAVEAT))}];\n}}\n"
    head, end, tail = drawn.rpartition("</main>")
    return head + f'<p class="meta caveat">{esc(CAVEAT)}</p>' + end + tail
