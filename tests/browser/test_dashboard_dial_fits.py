"""The dashboard's dial on a phone (390 px) and a desktop (1,440 px): every label is drawn at a readable size
and none is cut off at the chart's edges."""

import datetime as dt

import pytest

from core import clock
from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, assert_no_sideways_scroll, log_in

pytestmark = BROWSER_MARKS
READABLE_PX = 9.5

LABELS = """() => [...document.querySelectorAll('#dial svg text, #reasons svg text')].map(text => {
  const svg = text.ownerSVGElement.getBoundingClientRect(), box = text.getBoundingClientRect();
  return {label: text.textContent, size: parseFloat(getComputedStyle(text).fontSize)
            * text.ownerSVGElement.getScreenCTM().a,
          left: box.left - svg.left, right: svg.right - box.right};
})"""


@pytest.mark.parametrize("width", [390, 1440])
def test_the_dials_labels_read_on_a_phone_and_the_last_is_whole(live_server, browser_page, make_staff, width):
    from traces.tests.turns import turn

    make_staff("luz", "analyst", password="pw-luz-12345")
    now = clock.now()
    for days in range(7):
        turn(when=now - dt.timedelta(days=days), outcome="escalated", reason="TOOL_ERROR")
        turn(when=now - dt.timedelta(days=days))
    page = browser_page
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server.url, "luz", "pw-luz-12345", "/dashboard/")
    labels = page.evaluate(LABELS)
    assert len(labels) > 8
    for label in labels:
        assert label["size"] >= READABLE_PX, f"{label['label']!r} is drawn at {label['size']:.1f} px at {width} px"
        assert label["left"] >= -0.5 and label["right"] >= -0.5, f"{label['label']!r} is cut off: {label}"
    assert_no_sideways_scroll(page)
    page.screenshot(path=str(SCREENSHOTS / f"dashboard-dial-{width}.png"), full_page=True)
