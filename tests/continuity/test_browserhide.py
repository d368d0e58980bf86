"""The browser's reading of raw HTML: what a comment, a raw-text element or a hiding element left open hides."""

from __future__ import annotations

import pytest

from flowgit.continuity.browserhide import HiddenState, inline_tags


def _after(*chunks: str, inline: bool = False) -> bool:
    state = HiddenState()
    for chunk in chunks:
        state.feed(chunk, complete_comments_only=inline)
    return state.hidden


@pytest.mark.parametrize("html", ["<!--", "<details>", "<details class='x'>", "<template>", "<style>",
                                  "<script>", "<textarea>", '<div hidden>', '<div style="display:none">',
                                  "<span style='visibility: hidden'>", "<!-- a --> <!--"])
def test_an_opener_left_open_hides_what_follows(html):
    assert _after(html)


@pytest.mark.parametrize("html", ["<!-- a comment -->", "<!-->", "<!--->", "<!--> <p>", "<details open>", "<details></details>",
                                  "<style>p { color: red }</style>", "<div>", "<br>", "<img src=x>",
                                  "<div hidden></div>", "</details>", "<activation>", "<p>text</p>"])
def test_what_is_closed_or_shows_its_content_hides_nothing(html):
    assert not _after(html)


def test_an_inner_end_tag_does_not_close_an_outer_hidden_element():
    assert _after("<div hidden><div>inner</div>")
    assert not _after("<div hidden><div>inner</div></div>")


def test_tags_inside_a_raw_text_element_or_a_comment_are_text():
    assert _after("<style></details>")  # the style is still open: its content is text
    assert _after("<!-- </details> -->", "<details>")
    assert not _after("<textarea><details></textarea>")


def test_a_comment_spanning_blocks_closes_where_its_end_stands():
    assert _after("<!-- opened here")
    assert not _after("<!-- opened here", "closed here -->")


def test_in_a_paragraph_an_unclosed_comment_is_text_but_a_tag_is_a_tag():
    assert not _after("a <!-- b", inline=True)  # CommonMark escapes it: no comment
    assert _after("a <details> b", inline=True)


def test_code_spans_open_nothing():
    assert not _after(inline_tags("use `<details>` and ``<!--`` in prose"), inline=True)
