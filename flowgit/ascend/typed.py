"""Reading ascend's own state back: each value held to the type its dataclass field declares.

The state travels through the caller (``--state FILE``): an agent may hand
back one it edited. A value of the wrong type deep inside (a number where a
list of keys is, a list where a weight is) must be refused at the door as "not
a state ascend returned", not crash a step later.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, TypeVar

T = TypeVar("T")


def checked(cls: type[T], data: Any) -> T:
    """``cls(**data)`` once every field of ``data`` has the type ``cls`` declares for it (ValueError if not)."""
    if not isinstance(data, dict):
        raise ValueError(f"{cls.__name__} must be an object")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = set(data) - names
    if unknown:
        raise ValueError(f"{cls.__name__} has no field {sorted(unknown)[0]!r}")
    for name, value in data.items():
        if not conforms(value, hints[name]):
            raise ValueError(f"{cls.__name__}.{name} is not {_shown(hints[name])}")
    return cls(**data)


def conforms(value: Any, hint: Any) -> bool:
    """Whether a JSON value fits a type hint of the forms the state uses."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(conforms(value, a) for a in args)
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint in (int, str, bool):
        return isinstance(value, hint) and (hint is bool or not isinstance(value, bool))
    if origin is list:
        return isinstance(value, list) and all(conforms(v, args[0]) for v in value) if args else isinstance(value,
                                                                                                              list)
    if origin is tuple:
        return isinstance(value, (list, tuple)) and len(value) == len(args) and all(
            conforms(v, a) for v, a in zip(value, args))
    if origin is dict:
        return isinstance(value, dict) and all(conforms(k, args[0]) and conforms(v, args[1])
                                               for k, v in value.items()) if args else isinstance(value, dict)
    if hint is dict:
        return isinstance(value, dict)
    if hint is list:
        return isinstance(value, list)
    return isinstance(value, hint) if isinstance(hint, type) else True


def _shown(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")
