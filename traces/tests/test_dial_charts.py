"""Layout of the dashboard's SVG charts (no database)."""

from traces.dial_charts import HEIGHT, TOP, BOTTOM, DayValue, rate_chart, stacked_chart

DAYS = ["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"]


def test_a_day_without_turns_breaks_the_line_instead_of_drawing_zero():
    values = [DayValue(DAYS[0], 1, 10), DayValue(DAYS[1], 2, 10), DayValue(DAYS[2], 0, 0), DayValue(DAYS[3], 1, 4)]
    chart = rate_chart(DAYS, [("Escalation rate", values)])
    [series] = chart.series
    assert [p.day for p in series.points] == [DAYS[0], DAYS[1], DAYS[3]]
    assert len(series.lines) == 1  # the lone last point is a dot, not a line


def test_the_axis_tops_at_a_round_rate_above_the_highest_point_and_marks_sit_on_their_day():
    chart = rate_chart(DAYS, [("a", [DayValue(DAYS[0], 3, 10)]), ("b", [DayValue(DAYS[1], 1, 10)])],
                       marks=[(DAYS[1], "Writer prompt version: 7 → 8"), ("2026-12-01", "outside the range")])
    assert [label for _, label in chart.y_ticks] == ["0%", "25%", "50%"]
    highest = chart.series[0].points[0]
    assert TOP < highest.y < HEIGHT - BOTTOM
    assert [(m.x, m.text) for m in chart.marks] == [(chart.series[1].points[0].x, "Writer prompt version: 7 → 8")]


def test_stacked_columns_add_up_and_the_tallest_day_fills_the_height():
    counts = {(DAYS[0], "NO_CONTEXT"): 3, (DAYS[0], "TOOL_ERROR"): 1, (DAYS[1], "TOOL_ERROR"): 2}
    chart = stacked_chart(DAYS, counts, [("NO_CONTEXT", "Nothing relevant found"), ("TOOL_ERROR", "Billing down")])
    first, second = chart.columns[0], chart.columns[1]
    assert first.total == 4 and [s.count for s in first.segments] == [3, 1]
    assert round(sum(s.height for s in first.segments)) == HEIGHT - TOP - BOTTOM
    assert second.segments[0].height == round((HEIGHT - TOP - BOTTOM) / 2, 1)
    assert chart.columns[2].segments == () and [label for _, label, _ in chart.legend] == [
        "Nothing relevant found", "Billing down"]
