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
TAG_RE = re.compile(r"<!--|<(/?)([A-Za-z][A-Za-z0-9-]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>")
# A line that may open something hidden: what decides whether a document is read with this model at all
MAY_HIDE_RE = re.compile(r"<!--|<(?:" + "|".join(sorted(RAW_TEXT | HIDING)) + r")\b|<[A-Za-z][^>]*(?:\bhidden\b|"
                         r"display\s*:|visibility\s*:)", re.IGNORECASE)


class HiddenState:
    """Where a browser stands in the raw HTML fed so far: inside a comment, a raw-text element, or an element
    that hides its content (each element's nesting counted by name, so an inner `</div>` does not close an
    outer hidden one)."""

    def __init__(self) -> None:
        self.comment = False
        self.raw: str | None = None
        self.depth: dict[str, int] = {}
        self.hiding: list[tuple[str, int]] = []

    @property
    def hidden(self) -> bool:
        return self.comment or self.raw is not None or bool(self.hiding)

    def feed(self, html: str, *, complete_comments_only: bool = False) -> None:
        """Read ``html`` (a raw HTML block, or the tags of a paragraph: there a `<!--` that does not close
        is text, as CommonMark escapes it, so ``complete_comments_only``)."""
        at = 0
        while at < len(html):
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
            tag = TAG_RE.search(html, at)
            if tag is None:
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


CODE_SPAN_RE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)


def inline_tags(text: str) -> str:
    """A paragraph's text without its code spans (`` `<details>` `` shown as code opens nothing)."""
    return CODE_SPAN_RE.sub(" ", text)
