"""document_from_bytes: the kept versions of a history walk are found by their bytes, and bounded."""

from __future__ import annotations

from flowgit.continuity.document import Document
from flowgit.repo import document_from_bytes, reusing_documents


class _Cfg:
    def __init__(self, aliases=None):
        self.aliases = aliases or {}


def _version(i: int) -> bytes:
    return f"## Current State\nFocus: wrap {i}.\n\n## Proven Knowledge\n!! p{i}: x | 2x\n".encode()


def test_equal_bytes_in_another_object_give_the_kept_document():
    with reusing_documents():
        first = document_from_bytes(_Cfg(), _version(1), "C")
        again = document_from_bytes(_Cfg(), bytes(bytearray(_version(1))), "base:C")
    assert again is first


def test_bytes_of_equal_length_that_differ_are_not_taken_for_a_kept_version():
    with reusing_documents():
        first = document_from_bytes(_Cfg(), _version(1), "C")
        second = document_from_bytes(_Cfg(), _version(2), "C")
    assert len(_version(1)) == len(_version(2))
    assert second is not first and "wrap 2" in second.text
    assert second == Document.parse(_version(2).decode(), aliases={}, path="C")


def test_only_the_last_few_versions_are_kept():
    with reusing_documents(keep=2):
        first = document_from_bytes(_Cfg(), _version(1), "C")
        document_from_bytes(_Cfg(), _version(2), "C")
        document_from_bytes(_Cfg(), _version(3), "C")
        assert document_from_bytes(_Cfg(), _version(1), "C") is not first  # read again, equal
        from flowgit import repo

        assert len(repo._REUSE) == 2


def test_outside_a_walk_nothing_is_kept_or_read_against():
    first = document_from_bytes(_Cfg(), _version(1), "C")
    second = document_from_bytes(_Cfg(), _version(1), "C")
    assert first is not second and first == second and second._base is None
