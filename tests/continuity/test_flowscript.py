"""The FlowScript linter: each code at the right line and column, silence on clean lines."""

from __future__ import annotations

from flowgit.continuity.flowscript import lint_text
from tests.conftest import DATA


def test_codes_at_line_and_column():
    text = (DATA / "lint_fixture.md").read_text()
    got = {(f.line, f.col, f.code) for f in lint_text(text)}
    assert got == {
        (4, 21, "E001"),
        (5, 24, "E002"),
        (6, 24, "E002"),
        (7, 53, "E003"),
        (8, 25, "W001"),
        (10, 31, "E002"),
        (11, 12, "W002"),
    }


def test_clean_flow_file_is_silent():
    findings = lint_text((DATA / "flow_template.md").read_text())
    assert findings == []


def test_fenced_code_is_not_linted():
    assert lint_text("```\n>< [decided]\n```\n") == []
    assert [f.code for f in lint_text("```\nx\n```\n><\n")] == ["E001"]


def test_messages_say_the_fix():
    (f,) = lint_text("a >< b\n")
    assert "><[axis]" in f.message and f.is_error
