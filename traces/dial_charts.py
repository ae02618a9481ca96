"""Layout of the dashboard's server-rendered SVG charts: rates per day with change marks, stacked bars per day.

Pure: no Django. Numbers in, pixel coordinates out; the template draws them. Like the taxonomy's bars
(traces/taxonomy.py), the charts scale with their viewBox, so one layout reads at 390 px and at 1,440 px.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from traces.rollup_stats import Proportion

WIDTH, HEIGHT = 720, 240
# Room for the labels at the size a phone needs: at 390 px the chart is drawn at about half its size, so its
# labels are set at 23 units there (app.css) to read at ~10 px; the y labels ("100%") need ~60 units on the
# left, and the last date, centred on the right edge of the plot, half its width (~35) on the right.
LEFT, RIGHT, TOP, BOTTOM = 64, 36, 16, 38
PALETTE = ("#3b6ea5", "#a5553b", "#6a8f3b", "#8a5aa5", "#b08a2e", "#3b9a9a", "#a53b6e", "#666666")


@dataclass(frozen=True)
class DayValue:
    """One day's rate of one series: events over trials (None: no trials that day)."""

    day: str
    events: int
    trials: int

    @property
    def rate(self) -> float | None:
        return Proportion(self.events, self.trials).rate


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    day: str
    events: int
    trials: int
    rate: float


@dataclass(frozen=True)
class Series:
    name: str
    colour: str
    points: tuple[Point, ...]
    lines: tuple[str, ...]  # SVG polyline points, one per unbroken run of days


@dataclass(frozen=True)
class Mark:
    """A vertical line where the configuration changed, and what changed (the tooltip)."""

    x: float
    day: str
    text: str


@dataclass
class RateChart:
    width: int = WIDTH
    height: int = HEIGHT
    series: list[Series] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    y_ticks: list[tuple[float, str]] = field(default_factory=list)
    x_labels: list[tuple[float, str]] = field(default_factory=list)
    left: int = LEFT
    right_edge: int = WIDTH - RIGHT
    bottom_edge: int = HEIGHT - BOTTOM


def _nice_top(value: float) -> float:
    """Return a round upper bound for the y axis (1 %, 2 %, 5 %, 10 %, 20 %, 50 %, 100 %)."""
    for top in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0):
        if value <= top:
            return top
    return 1.0


def _day_x(days: Sequence[str]):
    inner = WIDTH - LEFT - RIGHT
    step = inner / (len(days) - 1) if len(days) > 1 else 0
    return {day: round(LEFT + (step * i if len(days) > 1 else inner / 2), 1) for i, day in enumerate(days)}


def _x_labels(days: Sequence[str], xs) -> list[tuple[float, str]]:
    every = max(1, math.ceil(len(days) / 8))  # at most ~8 dates under the axis
    # The last day is labelled too, unless it would sit on top of the label before it.
    return [(xs[day], day[5:]) for i, day in enumerate(days)
            if i % every == 0 or (i == len(days) - 1 and i % every > every // 2)]


def rate_chart(days: Sequence[str], series: Sequence[tuple[str, Sequence[DayValue]]],
               marks: Sequence[tuple[str, str]] = ()) -> RateChart:
    """Lay out rates per day (one line per series) on a shared y axis, with marks at (day, text)."""
    chart = RateChart()
    xs = _day_x(days)
    rates = [v.rate for _, values in series for v in values if v.rate is not None]
    top = _nice_top(max(rates, default=0.0))
    inner_h = HEIGHT - TOP - BOTTOM

    def y_of(rate: float) -> float:
        return round(TOP + inner_h * (1 - min(rate, top) / top), 1)

    chart.y_ticks = [(y_of(t), f"{t:.0%}" if top >= 0.05 else f"{t:.1%}") for t in (0, top / 2, top)]
    chart.x_labels = _x_labels(days, xs)
    for index, (name, values) in enumerate(series):
        points, runs, run = [], [], []
        for value in values:
            if value.day not in xs or value.rate is None:
                if run:
                    runs.append(run)
                run = []
                continue
            point = Point(x=xs[value.day], y=y_of(value.rate), day=value.day, events=value.events,
                          trials=value.trials, rate=value.rate)
            points.append(point)
            run.append(point)
        if run:
            runs.append(run)
        chart.series.append(Series(name=name, colour=PALETTE[index % len(PALETTE)], points=tuple(points),
                                   lines=tuple(" ".join(f"{p.x},{p.y}" for p in r) for r in runs if len(r) > 1)))
    chart.marks = [Mark(x=xs[day], day=day, text=text) for day, text in marks if day in xs]
    return chart


@dataclass(frozen=True)
class Segment:
    key: str
    label: str
    colour: str
    day: str
    count: int
    y: float
    height: float


@dataclass(frozen=True)
class Column:
    day: str
    x: float
    width: float
    total: int
    segments: tuple[Segment, ...]


@dataclass
class StackedChart:
    width: int = WIDTH
    height: int = HEIGHT
    columns: list[Column] = field(default_factory=list)
    legend: list[tuple[str, str, str]] = field(default_factory=list)  # key, label, colour
    y_ticks: list[tuple[float, str]] = field(default_factory=list)
    x_labels: list[tuple[float, str]] = field(default_factory=list)
    left: int = LEFT
    right_edge: int = WIDTH - RIGHT
    bottom_edge: int = HEIGHT - BOTTOM


def stacked_chart(days: Sequence[str], counts: dict[tuple[str, str], int], keys: Sequence[tuple[str, str]]
                  ) -> StackedChart:
    """Lay out one column per day, stacked by key (counts[(day, key)]), keys as (key, label) in legend order."""
    chart = StackedChart()
    colours = {key: PALETTE[i % len(PALETTE)] for i, (key, _) in enumerate(keys)}
    chart.legend = [(key, label, colours[key]) for key, label in keys]
    totals = {day: sum(counts.get((day, key), 0) for key, _ in keys) for day in days}
    top = max(totals.values(), default=0) or 1
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = inner_w / max(1, len(days))
    bar = max(1.0, round(slot * 0.7, 1))
    chart.y_ticks = [(round(TOP + inner_h * (1 - t / top), 1), str(t)) for t in sorted({0, top // 2, top})]
    for i, day in enumerate(days):
        x = round(LEFT + slot * i + (slot - bar) / 2, 1)
        bottom = TOP + inner_h
        segments = []
        for key, label in keys:
            count = counts.get((day, key), 0)
            if not count:
                continue
            height = inner_h * count / top
            bottom -= height
            segments.append(Segment(key=key, label=label, colour=colours[key], day=day, count=count,
                                    y=round(bottom, 1), height=round(height, 1)))
        chart.columns.append(Column(day=day, x=x, width=bar, total=totals[day], segments=tuple(segments)))
    centres = {c.day: round(c.x + c.width / 2, 1) for c in chart.columns}
    chart.x_labels = _x_labels(days, centres)
    return chart
