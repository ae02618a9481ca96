"""A keyset cursor round-trips, and a malformed one is ignored (the first page), never an error."""

import datetime as dt

import pytest

from core.keyset import cursor_decode, cursor_encode


def test_a_cursor_round_trips():
    moment = dt.datetime(2026, 11, 30, 15, 4, 5, 123456, tzinfo=dt.UTC)
    assert cursor_decode(cursor_encode(moment, 42)) == (moment, 42)


@pytest.mark.parametrize("raw", ["", "_", "x_1", "2026-11-30T10:00:00_²", "2026-11-30T10:00:00_-1",
                                 "2026-13-45T10:00:00_1", "9999-99-99T99:99:99_1", "2026-11-30T10:00:00_" + "9" * 40,
                                 "2026-11-30T10:00:00\x00_1"])
def test_a_malformed_cursor_is_ignored(raw):
    assert cursor_decode(raw) is None
