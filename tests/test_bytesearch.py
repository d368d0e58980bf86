"""libc's memmem answers exactly as ``bytes.find`` does, and the store lookup built on it finds the same episodes."""

from __future__ import annotations

import mmap
import random

import pytest

from flowgit import bytesearch, episodes


def test_memmem_is_used_here():
    assert bytesearch.fast()  # this suite runs on Linux: the fast path below is really exercised


@pytest.mark.parametrize("seed", range(6))
def test_find_agrees_with_bytes_find_on_large_buffers(seed):
    rng = random.Random(seed)
    size = bytesearch.LARGE + rng.randrange(1 << 18)
    alphabet = b'abcdef0123456789"{}: ,\n'
    data = bytearray(rng.choice(alphabet) for _ in range(4096)) * (size // 4096 + 1)
    needles = [b'"ep-%012x"' % rng.getrandbits(48) for _ in range(4)]
    for needle, at in zip(needles, (0, len(data) // 2, len(data) - len(needles[2]), None)):
        if at is not None:
            data[at:at + len(needle)] = needle
    blob = bytes(data)
    for needle in needles + [b"a", b"\n", b'f"', blob[-5:], blob[:9], b"zz-absent"]:
        for start in (0, 1, len(blob) // 3, len(blob) - bytesearch.LARGE, len(blob) - 3):
            assert bytesearch.find(blob, needle, start) == blob.find(needle, start), (needle, start)


def test_small_odd_and_non_bytes_inputs_fall_back_to_find(tmp_path):
    assert bytesearch.find(b"abcabc", b"c", 3) == 5
    assert bytesearch.find(b"abc", b"", 1) == 1
    big = b"x" * bytesearch.LARGE + b"needle"
    assert bytesearch.find(big, b"needle", -10) == big.find(b"needle", -10)
    path = tmp_path / "big"
    path.write_bytes(big)
    with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        assert bytesearch.find(mapped, b"needle") == len(big) - 6


def _store(rng: random.Random, count: int) -> tuple[bytes, list[str]]:
    ids = [f"ep-{rng.getrandbits(48):012x}" for _ in range(count)]
    lines = []
    for n, ident in enumerate(ids):
        spacing = rng.choice(['"id": "{}"', '"id" : "{}"', '"id":"{}"'])
        later = ids[min(n + 50, count - 1)]  # a later episode's id, quoted, before its own line: not a hit
        lines.append("{" + spacing.format(ident) + f', "ts": "2026-01-01T00:00:00Z", "type": "finding", '
                     f'"content": "fact {n}", "tags": ["{later}"], "session": "s{n}"' + "}")
    dup = lines[len(lines) // 3]  # a duplicate id later on: the first line is the one found
    lines.append(dup.replace('"session": "s', '"session": "late-s'))
    return ("\n".join(lines) + "\n").encode(), ids


def test_locate_by_memmem_equals_the_single_regex_pass(monkeypatch):
    rng = random.Random(7)
    data, ids = _store(rng, 12_000)
    assert len(data) >= bytesearch.LARGE
    wanted = rng.sample(ids, 9) + [ids[len(ids) // 3], ids[-1], "ep-absent000000"]
    by_search = episodes.locate(data, wanted)
    monkeypatch.setattr(episodes, "FEW_IDS_MEMMEM", 0)
    monkeypatch.setattr(episodes, "FEW_IDS", 0)
    by_regex = episodes.locate(data, wanted)
    assert by_search == by_regex and len(by_search) == len(wanted) - 1
    assert by_search[ids[len(ids) // 3]][0].session.startswith("s")  # the first of the two lines
