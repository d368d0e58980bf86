"""Repositories the report tests share (built once per module: real git, real flowgit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report.history import Expected, build


@pytest.fixture(scope="module")
def forty(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Expected]:
    """A continuity file through 40 wraps, every kind of event in it."""
    root = tmp_path_factory.mktemp("forty") / "repo"
    root.mkdir()
    return root, build(root, 40)


HOSTILE = '<img src=x onerror=alert(1)></script><script>alert(2)</script> "q" \'a\' & http://evil.invalid/x.png'


@pytest.fixture(scope="module")
def hostile_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Markup, quotes and a URL in commit subjects, episode text and an override's reason."""
    root = tmp_path_factory.mktemp("hostile") / "repo"
    root.mkdir()
    build(root, 26, hostile=HOSTILE)  # the override (with its hostile reason) is wrap 23
    return root


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository `flowgit demo` builds, scene by scene."""
    from flowgit.commands.demo import SCENES, Demo, _git

    root = tmp_path_factory.mktemp("demo") / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    demo = Demo(root, as_json=True)
    for scene in SCENES:
        scene(demo)
    return root
