"""Human output: what the repository's text holds is shown, never acted on by the terminal."""

from __future__ import annotations

from tests.checks.gate_fixtures import base_text, committed_base


def test_human_output_shows_the_repositorys_control_characters_as_escapes(monkeypatch):
    """A State, an episode or a deposit carrying ESC/BEL/bidi must not set a terminal's title, clear its screen
    or reorder a line; a colour flowgit adds on a terminal is kept, and elsewhere every escape is the text's."""
    import io
    import sys

    from flowgit.output import terminal_safe

    text = "Focus \x1b]0;PWN\x07 \x1b[2J \u202eevil \x1b[31mred\x1b[0m\ttab\nnext \r\x08"
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert terminal_safe(text) == ("Focus \\x1b]0;PWN\\x07 \\x1b[2J \\u202eevil \\x1b[31mred\\x1b[0m\ttab\n"
                                   "next \\x0d\\x08")

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert terminal_safe("a line\r\nthe next\r\n") == "a line\r\nthe next\r\n"  # CRLF endings as they are

    monkeypatch.setattr(sys, "stdout", Terminal())
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert "\x1b[31mred\x1b[0m" in terminal_safe(text) and "\\x1b]0;PWN" in terminal_safe(text)
    assert "\\x1b[31mred" in terminal_safe(text, io.StringIO())  # written elsewhere: the text's own escape
    # on a terminal, only the codes flowgit's own colours use pass: none that hides words (conceal, black on
    # black, a background, a 256-colour code) reaches it from the text
    for hiding in ("\x1b[8m", "\x1b[30;40m", "\x1b[30m", "\x1b[47m", "\x1b[38;5;16m", "\x1b[1;8m"):
        shown = hiding.replace("\x1b", "\\x1b")
        assert terminal_safe(f"a {hiding}secret\x1b[0m word") == f"a {shown}secret\x1b[0m word"


def test_prime_and_status_show_a_states_escape_sequences_as_text(run, repo):
    committed_base(repo, base_text(state="Focus \x1b]0;PWN\x07 the breaker \x1b[2J"))
    for args in (("prime",), ("status",), ("log",)):
        res = run(repo, *args)
        assert res.code == 0, res.err
        assert "\x1b" not in res.out and "\x07" not in res.out, args
    assert "\\x1b]0;PWN\\x07" in run(repo, "prime").out
