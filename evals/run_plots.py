"""Layout of the runs page's line plots (a metric over runs, with an optional interval): pure, no Django.

The page draws them as inline SVG, so the numbers here are pixel coordinates; a run without a value
breaks the line instead of being drawn as zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

LEFT, RIGHT, TOP, BOTTOM = 40, 12, 10, 24  # margins: room for the y ticks and the run labels


@dataclass(frozen=True)
class PlotValue:
    """One run's value of the metric (None: not measured), with its interval when it has one."""

    label: str
    value: float | None
    lower: float | None = None
    upper: float | None = None


@dataclass(frozen=True)
class PlotPoint:
    x: float
    y: float
    label: str
    value: float
    lower: float | None = None
    upper: float | None = None
    y_lower: float | None = None
    y_upper: float | None = None


@dataclass
class LinePlot:
    width: int
    height: int
    points: list[PlotPoint] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # SVG polyline "x,y x,y" per unbroken run of values
    bands: list[str] = field(default_factory=list)  # SVG polygon points of the interval per unbroken run
    y_ticks: list[tuple[float, str]] = field(default_factory=list)
    x_labels: list[tuple[float, str]] = field(default_factory=list)
    left: int = LEFT
    right_edge: int = 0
    bottom_edge: int = 0

    @property
    def empty(self) -> bool:
        return not self.points


def _fmt(x: float) -> str:
    return f"{x:.1f}"


def line_plot(values: Sequence[PlotValue], *, width: int = 560, height: int = 170,
              y_min: float = 0.0, y_max: float = 1.0) -> LinePlot:
    """Lay out a metric over runs (oldest first) on a fixed y range, clamping values that fall outside it."""
    plot = LinePlot(width=width, height=height, right_edge=width - RIGHT, bottom_edge=height - BOTTOM)
    inner_w, inner_h = width - LEFT - RIGHT, height - TOP - BOTTOM
    span = (y_max - y_min) or 1.0

    def y_of(v: float) -> float:
        v = min(max(v, y_min), y_max)
        return TOP + inner_h * (1 - (v - y_min) / span)

    step = inner_w / (len(values) - 1) if len(values) > 1 else 0
    plot.y_ticks = [(round(y_of(t), 1), f"{t:g}") for t in (y_min, (y_min + y_max) / 2, y_max)]
    every = max(1, -(-len(values) // 12))  # at most ~12 run labels under the axis
    segment: list[PlotPoint] = []
    segments: list[list[PlotPoint]] = []
    for i, value in enumerate(values):
        x = LEFT + (step * i if len(values) > 1 else inner_w / 2)
        if i % every == 0 or i == len(values) - 1:
            plot.x_labels.append((round(x, 1), value.label))
        if value.value is None:
            if segment:
                segments.append(segment)
            segment = []
            continue
        has_interval = value.lower is not None and value.upper is not None
        point = PlotPoint(x=round(x, 1), y=round(y_of(value.value), 1), label=value.label, value=value.value,
                          lower=value.lower if has_interval else None, upper=value.upper if has_interval else None,
                          y_lower=round(y_of(value.lower), 1) if has_interval else None,
                          y_upper=round(y_of(value.upper), 1) if has_interval else None)
        plot.points.append(point)
        segment.append(point)
    if segment:
        segments.append(segment)
    for seg in segments:
        plot.lines.append(" ".join(f"{_fmt(p.x)},{_fmt(p.y)}" for p in seg))
        banded = [p for p in seg if p.y_upper is not None]
        if len(banded) == len(seg) and len(seg) > 1:
            upper = [f"{_fmt(p.x)},{_fmt(p.y_upper)}" for p in seg]
            lower = [f"{_fmt(p.x)},{_fmt(p.y_lower)}" for p in reversed(seg)]
            plot.bands.append(" ".join(upper + lower))
    return plot
