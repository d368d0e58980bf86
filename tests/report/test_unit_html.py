"""ascend's HTML graph: the drawn connection labels."""

from __future__ import annotations

import re

from flowgit.report.unit_html import render_unit


def _response(basis: str, topic: str = "t") -> dict:
    deposits = [{"partition": "claude", "slug": "-p", "session_id": sid, "date": f"2026-11-0{i}", "topic": topic}
                for i, sid in enumerate(["a", "b"], 1)]
    return {"status": "inline", "unit": {"type": "chain", "label": "x", "deposits": deposits, "connections": [
        {"a": "claude:-p:a", "b": "claude:-p:b", "role": "chain", "weight": 1.0, "basis": basis}]}}


def _drawn_labels(page: str) -> list[str]:
    """The text drawn on each edge (the full basis stays in its tooltip)."""
    return re.findall(r'<text class="axis"[^>]*>([^<]*)<title>', page)


def test_a_long_connection_label_is_clipped_at_a_word_with_an_ellipsis() -> None:
    """'… on a shar' cut mid-word, with nothing to say it was cut: the label ends on a whole word and '…'."""
    basis = "both refer to #412 in another project, on a shared provider outage window"
    page = render_unit(_response(basis), "html")
    [label] = _drawn_labels(page)
    assert label.endswith("…") and len(label) <= 48
    kept = label[:-1].rstrip()
    assert basis.startswith(kept) and basis[len(kept)] in " ,", label  # the next character ends a word
    assert f"<title>{basis}" in page  # all of it in the tooltip


def test_a_short_label_is_drawn_whole_and_one_long_word_is_still_cut_with_an_ellipsis() -> None:
    assert _drawn_labels(render_unit(_response("both refer to #412"), "html")) == ["both refer to #412"]
    [label] = _drawn_labels(render_unit(_response("x" * 80), "html"))
    assert label == "x" * 47 + "…"


def test_each_format_draws_the_answer_s_caveat_in_its_own_syntax_and_only_when_the_answer_has_one() -> None:
    """The re-check caveat is part of the graph (not spliced into rendered output): a note node in mermaid and
    DOT, a paragraph in the page's main part; an answer without one draws none."""
    caveat = 'This describes a past trajectory "to re-check" <now>'
    with_it = {**_response("both refer to #412"), "caveat": caveat}
    html = render_unit(with_it, "html")
    assert '<p class="meta caveat">This describes a past trajectory &quot;to re-check&quot; &lt;now&gt;</p></main>' \
        in html
    mermaid = render_unit(with_it, "mermaid").splitlines()
    assert mermaid[-2].startswith('    caveat["This describes a past trajectory') and "<now>" not in mermaid[-2]
    assert mermaid[-1] == "    style caveat stroke-dasharray: 4 2"
    dot = render_unit(with_it, "dot").splitlines()
    assert dot[-2] == '  caveat [shape=note, label="This describes a past trajectory \\"to re-check\\" <now>"];'
    assert dot[-1] == "}"
    for fmt in ("html", "mermaid", "dot"):
        assert "caveat" not in render_unit(_response("both refer to #412"), fmt)
