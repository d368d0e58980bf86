"""What a browser hides after raw HTML a renderer passes through: the part of a rendered page a reader never sees.

A markdown renderer copies raw HTML into the page as it is and goes on
rendering what follows: a heading after `<!--` left open is still a heading to
the renderer, but the browser reads everything after the `<!--` as one comment,
and everything after an unclosed `<details>`, `<template>` or `<style>`, or a
`<div hidden>`, as collapsed, inert or invisible. So the Foundation and Proven
sections below such a line vanish from every rendered view (a forge's file
page, an editor's preview) while the gate still reads them.

:class:`HiddenState` follows the raw HTML of a page in order, as a browser's
tokenizer reads it, and says at any point whether what comes next is hidden.
It is a model of the few things that hide, not a browser: comments, the
raw-text elements (whose content is text up to their own end tag), elements
that hide their content, and any element marked hidden or styled away.
"""

from __future__ import annotations

import re

# Content read as text up to the element's own end tag (a browser with scripting on, as every viewer is)
RAW_TEXT = frozenset("script style textarea title xmp iframe noembed noframes noscript plaintext".split())
# Elements whose content a reader does not see: inert (`template`), collapsed (`details` without `open`),
# or not drawn (`select`'s options as text, `object`'s fallback)
HIDING = frozenset("template details object select".split())
VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
HIDDEN_ATTRIBUTE_RE = re.compile(r"(?:^|\s)hidden(?:\s|=|/|$)|display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)",
                                 re.IGNORECASE)
TAG_START_RE = re.compile(r"<!--|</?[A-Za-z]")
# A tag as a browser reads raw HTML: up to the first `>` outside quotes.
TAG_RE = re.compile(r"<!--|<(/?)([A-Za-z][A-Za-z0-9-]*)((?:(?:[^A-Za-z0-9>\"'-]|\"[^\"]*\"|'[^']*')"
                    r"(?:[^>\"']|\"[^\"]*\"|'[^']*')*)?)>")
# A tag as CommonMark reads one inside a paragraph: no `<` outside quotes (`<a <b>` is text, then a tag).
INLINE_TAG_RE = re.compile(r"<!--|<(/?)([A-Za-z][A-Za-z0-9-]*)((?:(?:[^A-Za-z0-9<>\"'-]|\"[^\"]*\"|'[^']*')"
                           r"(?:[^<>\"']|\"[^\"]*\"|'[^']*')*)?)>")
# (In both, what follows the name starts with a character that cannot continue it: the name is read whole,
# once. A name and the attributes after it that could match the same letters backtracked quadratically on a
# long name left open.)
# A line that may open something hidden: what decides whether a document is read with this model at all
OPENS_HIDDEN_RE = re.compile(r"<!--|<(?:" + "|".join(sorted(RAW_TEXT | HIDING)) + r")\b", re.IGNORECASE)
TAG_SPAN_RE = re.compile(r"<[A-Za-z][^>]*")  # a tag's start up to its `>` (or the text's end)
STYLED_AWAY_RE = re.compile(r"\bhidden\b|display\s*:|visibility\s*:", re.IGNORECASE)


def may_hide(text: str) -> bool:
    """Whether ``text`` may open something hidden: a comment, a raw-text or hiding element, or a tag marked
    hidden or styled away (a cheap over-estimate; :class:`HiddenState` decides).

    Each tag's span is searched once: one pattern for "a tag start, then anything but `>`, then `hidden`" tried
    again at every `<a` of a line holding thousands and no `>` took quadratic time (a minute for 60 KB)."""
    if OPENS_HIDDEN_RE.search(text):
        return True
    return any(STYLED_AWAY_RE.search(tag) or not tag.endswith(">") or "\"" in tag or "'" in tag
               for tag in map(_span_text, TAG_SPAN_RE.finditer(text)))  # (a tag left open, or a quote that may
    # run past its `>`, may hide what follows)


def _span_text(span: "re.Match[str]") -> str:
    """A tag's span with its `>` when it has one (the span pattern stops before it)."""
    end = span.end()
    return span.string[span.start():end + 1] if span.string.startswith(">", end) else span.group()


class HiddenState:
    """Where a browser stands in the raw HTML fed so far: inside a comment, a raw-text element, or an element
    that hides its content (each element's nesting counted by name, so an inner `</div>` does not close an
    outer hidden one)."""

    def __init__(self) -> None:
        self.comment = False
        self.raw: str | None = None
        self.depth: dict[str, int] = {}
        self.hiding: list[tuple[str, int]] = []
        self.tag_quote: str | None = None  # inside a tag raw HTML left open: "" between attributes, or its quote

    @property
    def hidden(self) -> bool:
        return self.comment or self.raw is not None or bool(self.hiding) or self.tag_quote is not None

    def feed(self, html: str, *, complete_comments_only: bool = False) -> None:
        """Read ``html`` (a raw HTML block, or the tags of a paragraph: there a `<!--` that does not close
        is text, as CommonMark escapes it, so ``complete_comments_only``)."""
        at = 0
        while at < len(html):
            if self.tag_quote is not None:  # what follows a tag left open is its attributes up to its `>`
                if complete_comments_only:  # a paragraph: rendered, its quotes are `&quot;`, so only raw HTML
                    if self.tag_quote:  # can close an open quote; between attributes, its `<p>`'s `>` ends the tag
                        return
                    self.tag_quote = None
                    continue
                end, self.tag_quote = _tag_end(html, at, self.tag_quote)
                if end is None:
                    return
                at = end
                continue
            if self.comment:
                end = html.find("-->", at)
                if end < 0:
                    return
                self.comment, at = False, end + 3
                continue
            if self.raw is not None:
                end = re.compile(rf"</{self.raw}\s*>", re.IGNORECASE).search(html, at)
                if end is None or self.raw == "plaintext":
                    return
                self._close(self.raw)
                self.raw, at = None, end.end()
                continue
            tag = _next_tag(html, at, inline=complete_comments_only)
            if tag is None:
                return
            if isinstance(tag, int):  # raw HTML: a tag left open, read on in what follows
                _, self.tag_quote = _tag_end(html, tag, "")
                return
            at = tag.end()
            if tag.group() == "<!--":
                if html.startswith((">", "->"), at):  # `<!-->`, `<!--->`: an empty comment, closed at once
                    at = html.index(">", at) + 1
                    continue
                end = html.find("-->", at)
                if end >= 0:
                    at = end + 3
                elif not complete_comments_only:
                    self.comment = True
                    return
                continue
            self._tag(tag[1] == "/", tag[2].lower(), tag[3] or "")

    def _tag(self, closing: bool, name: str, attributes: str) -> None:
        if closing:
            self._close(name)
            return
        if name in VOID or attributes.rstrip().endswith("/"):
            return
        depth = self.depth[name] = self.depth.get(name, 0) + 1
        if name in RAW_TEXT:
            self.raw = name
        if name in RAW_TEXT or (name in HIDING and not (name == "details" and re.search(r"\bopen\b", attributes))) \
                or HIDDEN_ATTRIBUTE_RE.search(attributes):
            self.hiding.append((name, depth))

    def _close(self, name: str) -> None:
        depth = self.depth.get(name, 0)
        if depth <= 0:
            return  # an end tag with no start: a browser ignores it
        self.hiding = [(n, d) for n, d in self.hiding if not (n == name and d >= depth)]
        self.depth[name] = depth - 1


def _next_tag(html: str, at: int, *, inline: bool) -> "re.Match[str] | int | None":
    """The next tag from ``at``, each candidate `<` tried once (a search for the whole tag tried again from
    every `<` of a line of thousands with no `>` took quadratic time).

    In a paragraph, a `<` that opens no complete tag is text, and the next one is tried. In raw HTML a tag
    left open runs on: the browser reads what follows as its attributes, hidden, up to a `>` outside quotes
    (its position after the tag's name is returned for :func:`_tag_end`).
    """
    pattern = INLINE_TAG_RE if inline else TAG_RE
    while True:
        start = TAG_START_RE.search(html, at)
        if start is None:
            return None
        tag = pattern.match(html, start.start())
        if tag is not None:
            return tag
        if not inline:
            return start.end()
        at = start.start() + 1


TAG_REST_RE = re.compile(r"[>\"']")


def _tag_end(html: str, at: int, quote: str) -> tuple[int | None, str | None]:
    """Where a tag read from ``at`` ends (after its `>`), with ``quote`` open there ("" for none): (end, None);
    or (None, the quote open at the text's end) when it runs past it."""
    while True:
        if quote:
            close = html.find(quote, at)
            if close < 0:
                return None, quote
            at, quote = close + 1, ""
        mark = TAG_REST_RE.search(html, at)
        if mark is None:
            return None, ""
        if mark.group() == ">":
            return mark.end(), None
        quote, at = mark.group(), mark.end()


CODE_SPAN_RE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)


def inline_tags(text: str) -> str:
    """A paragraph's text without its code spans (`` `<details>` `` shown as code opens nothing)."""
    return CODE_SPAN_RE.sub(" ", text)
