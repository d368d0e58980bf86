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
