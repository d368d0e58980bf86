"""Files the package ships: templates and the demo's sample data."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def template(name: str) -> str:
    return resources.files("flowgit.templates").joinpath(name).read_text(encoding="utf-8")


def sample_dir() -> Path:
    """The shipped sample deposit tree (a real directory inside the installed package)."""
    return Path(str(resources.files("flowgit.sample")))
