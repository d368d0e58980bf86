"""The plan's schema: a field it does not know is named, with the nearest known one."""

from __future__ import annotations

import pytest

from flowgit.wrap.schema import SchemaError, validate


def test_a_mistyped_field_is_named_with_the_nearest_known_one():
    with pytest.raises(SchemaError) as refused:
        validate({"sesion": "s1", "state": "x"})
    assert refused.value.path == "plan.sesion"
    assert "did you mean `session`?" in refused.value.message and "known: session" in refused.value.message


def test_a_field_like_none_of_them_lists_them_all():
    with pytest.raises(SchemaError) as refused:
        validate({"zzz": 1})
    assert "did you mean" not in refused.value.message and "known: session, agent" in refused.value.message


def test_a_known_plan_passes():
    validate({"session": "s1", "state": "Focus: the report.", "patterns": [{"op": "add", "name": "p", "text": "t"}]})


from tests.wrap.test_wrap import wrap_repo  # noqa: E402,F401 (the fixture)


def test_a_plan_names_a_pattern_in_any_script_the_grammar_reads(run, wrap_repo):  # noqa: F811
    """The plan takes the names the continuity file's grammar takes (`APIキー`, `прогрев_кэша`), so a pattern
    in another script is added and raised through the wrap, not only by hand; a name with a final newline is
    still refused."""
    from tests.wrap.test_wrap import wrap

    plan = {"session": "sess-c", "patterns": [{"op": "add", "name": "APIキー", "text": "rotate the API key monthly"},
                                              {"op": "add", "name": "прогрев_кэша", "text": "прогревать кэш до пика"}]}
    res = wrap(run, wrap_repo, plan)
    assert res.code == 0, res.out + res.err
    text = (wrap_repo / "CONTINUITY.md").read_text()
    assert "! APIキー: rotate the API key monthly | 1x" in text and "! прогрев_кэша: прогревать кэш до пика | 1x" in text
    res = wrap(run, wrap_repo, {"session": "sess-d", "patterns": [{"op": "add", "name": "key\n", "text": "x"}]})
    assert res.code == 2 and "plan.patterns[0].name" in res.err
