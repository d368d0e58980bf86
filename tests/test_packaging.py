"""What an installed (not editable) flowgit holds: every subpackage and the Claude Code templates."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_every_subpackage_and_the_claude_templates_are_packaged():
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(tool["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "flowgit").rglob("__init__.py")
             if "sample" not in p.parts[len(ROOT.parts) + 1:]}
    assert found <= listed, found - listed
    data = tool["package-data"]["flowgit.templates"]
    templates = ROOT / "templates"
    for path in (templates / "claude").rglob("*.md"):
        rel = path.relative_to(templates).as_posix()
        assert any(Path(rel).match(glob) or (glob.endswith("/**/*") and rel.startswith(glob[:-4]))
                   for glob in data), rel


def test_data_folders_with_importable_names_are_named_so_the_build_does_not_warn():
    """setuptools warns "Package would be ignored" for a data folder whose name could be imported and that is
    not listed; the first install a newcomer runs should not print that wall of text."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(tool["packages"])
    roots = {"flowgit.sample": ROOT / "flowgit" / "sample", "flowgit.templates": ROOT / "templates"}
    unlisted = set()
    for package, folder in roots.items():
        for globbed in tool["package-data"][package]:
            for path in folder.glob(globbed):
                parts = path.parent.relative_to(folder).parts
                names = [package]
                for part in parts:
                    if not part.isidentifier():
                        break
                    names.append(part)
                    if ".".join(names) not in listed:
                        unlisted.add(".".join(names))
    assert not unlisted, sorted(unlisted)
