"""The report's inline SVG: the size charts."""

from __future__ import annotations

import re

from flowgit.report.model import SizePoint
from flowgit.report.sizes import Size
from flowgit.report.svg import size_chart


def test_a_single_version_draws_a_point_not_an_empty_line() -> None:
    """One version of the file (right after `flowgit init --commit`): a one-point polyline draws nothing."""
    point = SizePoint("a" * 40, 0, "2026-11-01", Size(1398, 40, 200, 3))
    chart = size_chart([point], "chars", "the file", "characters", 117_000, 140_000, 1)
    assert re.search(r'<circle class="series-point" cx="[\d.]+" cy="[\d.]+" r="\d', chart), chart
    two = size_chart([point, SizePoint("b" * 40, 1, "2026-11-02", Size(1500, 41, 200, 3))], "chars", "the file",
                     "characters", 117_000, 140_000, 2)
    assert "series-point" not in two and '<polyline class="series"' in two


def test_a_chart_far_under_its_budgets_draws_the_zero_its_heights_are_measured_from() -> None:
    """With no budget line within reach the series sits near the top: the zero line says where the floor is."""
    points = [SizePoint(f"{n:040x}", n, "2026-11-01", Size(1400 + n, 40, 200, 3)) for n in range(3)]
    chart = size_chart(points, "chars", "the file", "characters", 117_000, 140_000, 3)
    assert "budget target" not in chart and "well under its target 117,000" in chart
    zero = re.search(r'<line class="baseline" x1="0" x2="\d+" y1="([\d.]+)"', chart)
    heights = [float(y) for y in re.findall(r"[\d.]+,([\d.]+)", re.search(r'points="([^"]+)"', chart)[1])]
    assert zero and all(h < float(zero[1]) for h in heights)  # every point above the floor, none below
