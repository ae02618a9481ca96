"""Celery tasks of the traces room: thin — call one service.

`traces.apps` imports this module so the names are registered in every process, web and worker alike.
"""

from celery import shared_task

from traces.rollups import rollups_roll_recent


@shared_task(name="traces.roll_hours", ignore_result=True)
def roll_hours() -> int:
    """Roll the completed hours into the dashboard's rollups (run hourly by Celery beat); return rows written."""
    return rollups_roll_recent().rows
