"""Model fields every room shares."""

from __future__ import annotations

from django.db import models

from core import clock


class ClockDateTimeField(models.DateTimeField):
    """A DateTimeField whose `auto_now` / `auto_now_add` stamp is the product's clock, not the wall clock.

    A row stamped by the wall clock while the product runs on another date (`CLOCK_TODAY`, a pinned test)
    would fall outside the days the dashboard, the rollups and the 24-hour window count.
    """

    def pre_save(self, model_instance, add):
        if self.auto_now or (self.auto_now_add and add):
            value = clock.now()
            setattr(model_instance, self.attname, value)
            return value
        return super().pre_save(model_instance, add)
