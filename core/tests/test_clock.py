"""The product's one clock: CLOCK_TODAY, pins for a block, and the stamps rows get from it."""

import datetime as dt
import time

import pytest
from django.core.exceptions import ImproperlyConfigured

from core import clock

CARACAS = dt.timezone(dt.timedelta(hours=-4))


def test_the_suite_runs_on_the_configured_date(settings):
    assert clock.today() == dt.date.fromisoformat(settings.CLOCK_TODAY)


@pytest.mark.parametrize("day", [dt.date(2026, 12, 31), dt.date(2027, 1, 31), dt.date(2027, 3, 1)])
def test_clock_today_moves_the_date_and_keeps_the_time_of_day(settings, day):
    settings.CLOCK_TODAY, settings.CLOCK_TIME_OF_DAY = day.isoformat(), ""
    wall = dt.datetime.now(dt.UTC)
    moved = clock.now()
    assert clock.today() == day and moved.tzinfo is not None
    # Same time of day (in TIME_ZONE) as the wall clock, give or take the moment between the two reads.
    assert abs((moved - wall) - dt.timedelta(days=(day - wall.astimezone(CARACAS).date()).days)) < dt.timedelta(
        seconds=5)


def test_clock_time_of_day_fixes_the_hour_and_the_clock_ticks_from_there(settings):
    settings.CLOCK_TODAY = "2027-01-31"
    settings.CLOCK_TIME_OF_DAY = f"12:00@{time.time() - 90:.0f}"  # the clock read noon a minute and a half ago
    moved = clock.now()
    noon = dt.datetime(2027, 1, 31, 12, 0, tzinfo=CARACAS)
    assert noon + dt.timedelta(seconds=89) <= moved < noon + dt.timedelta(seconds=95)
    assert moved.utcoffset() == dt.timedelta(0)  # UTC, like the wall clock's instant
    settings.CLOCK_TIME_OF_DAY = f"23:59@{time.time() - 90:.0f}"
    assert clock.today() == dt.date(2027, 1, 31)  # past midnight the date stays the configured one
    settings.CLOCK_TIME_OF_DAY = f"12:00@{time.time():.0f}"
    moved = clock.now()
    with clock.pinned(dt.date(2026, 12, 31)):  # a pinned date keeps the configured time of day
        assert clock.now() - dt.timedelta(days=31) - moved < dt.timedelta(seconds=5)


@pytest.mark.parametrize("value", ["noon@1700000000", "12:00", "12:00@yesterday"])
def test_a_time_of_day_that_is_not_written_hh_mm_at_a_moment_is_refused_by_name(settings, value):
    settings.CLOCK_TIME_OF_DAY = value
    with pytest.raises(ImproperlyConfigured, match="CLOCK_TIME_OF_DAY must be written HH:MM@<Unix time>"):
        clock.now()


def test_an_empty_setting_is_the_wall_clock(settings):
    settings.CLOCK_TODAY = ""
    assert abs(clock.now() - dt.datetime.now(dt.UTC)) < dt.timedelta(seconds=5)


@pytest.mark.parametrize("value", ["2026-02-30", "31/01/2027", "tomorrow"])
def test_a_setting_that_is_not_a_date_is_refused_by_name(settings, value):
    settings.CLOCK_TODAY = value
    with pytest.raises(ImproperlyConfigured, match="CLOCK_TODAY must be a date written YYYY-MM-DD"):
        clock.now()


def test_a_frozen_pin_stands_still_and_a_ticking_one_moves_forward():
    instant = dt.datetime(2027, 1, 31, 23, 59, 59, tzinfo=dt.UTC)
    with clock.pinned(instant, frozen=True):
        assert clock.now() == instant == clock.now()
    with clock.pinned(instant):
        first = clock.now()
        assert instant <= first <= clock.now() < instant + dt.timedelta(seconds=5)


def test_pins_nest_and_end_with_their_block():
    outside = clock.today()
    with clock.pinned(dt.date(2027, 1, 31)):
        with clock.pinned(dt.datetime(2026, 12, 31, 12, 0)):  # naive: read in TIME_ZONE (Caracas)
            assert clock.today() == dt.date(2026, 12, 31)
            assert clock.now() >= dt.datetime(2026, 12, 31, 16, 0, tzinfo=dt.UTC)
        assert clock.today() == dt.date(2027, 1, 31)
    assert clock.today() == outside


@pytest.mark.django_db
def test_rows_are_stamped_by_the_clock():
    from desk.models import Contact

    with clock.pinned(dt.datetime(2027, 1, 31, 10, 0, tzinfo=dt.UTC), frozen=True):
        contact = Contact.objects.create(name="Ana")
    contact.refresh_from_db()
    assert contact.created_at == dt.datetime(2027, 1, 31, 10, 0, tzinfo=dt.UTC)
