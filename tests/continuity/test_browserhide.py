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


@pytest.mark.parametrize("html, inline, hidden", [
    ("<div hidden <b>", False, True),  # raw HTML: a `<` among a tag's attributes is one more attribute
    ("<a <div hidden>", True, True),  # a paragraph: `<a ` opens no tag (text), the next `<` does
    ("<a title='<div hidden>'>", True, False),  # quoted: an attribute's value, not a tag
    ("<a title=\"x <div hidden>", False, True),  # raw HTML, a quote left open: the rest is that tag's, unseen
    ("<img src=x", False, True),  # a tag left open in raw HTML swallows what follows, up to its `>`
])
def test_a_tag_is_read_as_a_browser_or_a_paragraph_reads_it(html, inline, hidden):
    assert _after(html, inline=inline) is hidden


@pytest.mark.parametrize("inline", [False, True])
def test_thousands_of_unclosed_tag_starts_are_read_once_each(inline):
    """A line of `<a ` with no `>` took quadratic time (each `<` searched to the end again); a hidden element
    after them is still found in a paragraph."""
    from flowgit.continuity.browserhide import may_hide

    flood = "<a " * 40_000
    assert may_hide(flood) and may_hide("<a href=x>" * 40_000) is False  # (a tag left open may hide)
    assert _after(flood + "<div hidden>", inline=inline)  # (raw HTML: one `<a` whose attributes end in `hidden`)
    assert _after(flood, inline=inline) is not inline  # (raw HTML: an `<a` left open hides what follows)


def test_a_tag_left_open_in_raw_html_ends_at_its_first_bracket_outside_quotes_in_what_follows():
    assert _after("<a title='x", "still ' the title", "and > here it ends") is False
    assert _after("<a title='x", "a > inside the quote", "still inside") is True


def test_a_long_tag_name_left_open_is_read_once():
    """`<` and 20,000 letters with no `>`: the name and the attributes after it matched the same letters and
    the pattern backtracked quadratically (seconds for 20 KB)."""
    assert _after("<" + "a" * 200_000) and _after("<" + "a" * 200_000, inline=True) is False


def test_a_quote_left_open_in_raw_html_is_closed_by_raw_html_only():
    """A paragraph's `"` is rendered `&quot;`: it closes no attribute a raw HTML block left open."""
    def raw_then(paragraph: str, *, inline: bool = True) -> bool:
        state = HiddenState()
        state.feed('<div title="x', complete_comments_only=False) if paragraph != "unquoted" else \
            state.feed("<div title=x", complete_comments_only=False)
        state.feed("a paragraph" if paragraph == "unquoted" else paragraph, complete_comments_only=inline)
        return state.hidden

    assert raw_then('The 5" panel') is True
    assert raw_then('The 5" panel>', inline=False) is False  # raw HTML: its quote and `>` close the tag
    assert raw_then("unquoted") is False  # between attributes, the paragraph's `<p>` ends the tag


def test_a_file_whose_only_html_is_a_tag_left_open_is_read_with_the_model():
    from flowgit.continuity.browserhide import may_hide

    assert may_hide('Focus: x\n\n<div title="\n\n## Proven Knowledge\n')
    assert not may_hide("Focus: x <b>bold</b> and <br> plain\n")
