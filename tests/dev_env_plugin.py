"""Pytest plugin (`-p tests.dev_env_plugin` in pyproject.toml): the development values and the date for the test run.

pytest-django loads the settings before any conftest.py is imported, so a conftest is too late; a `-p`
plugin is imported earlier. Subprocesses the tests start (a Celery worker, manage.py) inherit the values.
"""

import os
import time

from config.dev_env import use_development_defaults

# The date the suite runs on, whatever the wall clock says (core/clock.py). A test derives every month and
# "current invoice" it expects from the clock, so the suite also passes with CLOCK_TODAY set to another date
# (.ci/run runs the billing-dependent tests again on a month end in another year).
TEST_TODAY = "2026-11-20"
# And at noon when the run starts, ticking from there: a test that reads "today" or "the last hour" does not depend
# on the hour of the wall clock (at 00:10 in TIME_ZONE, "30 minutes ago" was yesterday).
TEST_TIME_OF_DAY = "12:00"

use_development_defaults()
os.environ.setdefault("CLOCK_TODAY", TEST_TODAY)
os.environ.setdefault("CLOCK_TIME_OF_DAY", f"{TEST_TIME_OF_DAY}@{time.time():.0f}")
