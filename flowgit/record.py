"""Value classes without dataclasses: equality, hashing, repr, pickling and ``replace`` from ``__slots__``.

The gate's hook imports its value types on every commit, and defining a
dataclass costs about a millisecond (it compiles the methods it generates). A
class that lists its fields in ``__slots__`` and writes its own ``__init__``
gets the rest from :class:`Record`, defined once. Named tuples serve where a
tuple is fine; a :class:`Record` is for values that JSON must see through
``to_dict`` (a tuple would be written as a list) or that need their own
``__init__``.
"""

from __future__ import annotations

from typing import Any


class Record:
    """What a frozen dataclass provides, for a subclass whose ``__slots__`` name its fields in order."""

    __slots__ = ()

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return self._values() == other._values() if type(other) is type(self) else NotImplemented  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self.__slots__, self._values()))
        return f"{type(self).__name__}({fields})"

    def __reduce__(self) -> tuple:  # forked workers send values back by pickle
        return (type(self), self._values())

    def replace(self, **changes: Any) -> Any:
        """A copy with some fields changed."""
        values = dict(zip(self.__slots__, self._values()))
        values.update(changes)
        return type(self)(**values)
