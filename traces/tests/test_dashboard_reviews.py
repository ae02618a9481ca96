"""The dashboard's review numbers: fallback turns per day, and the team's scores per day and per configuration."""

import csv
import io

import pytest
from django.urls import reverse

from traces.models import Trace
from traces.rollups import rollups_rebuild
from traces.scores import score_definition_create, trace_scores_set
from traces.tests.test_dashboard import NOW, URL, at_now, days_ago, page  # noqa: F401 - at_now is a fixture
from traces.tests.turns import CONFIG_A, CONFIG_B, turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewed(at_now, make_staff):
    ana = make_staff("ana", "analyst")
    score_definition_create(key="answered", name="Answered the question", kind="boolean",
                            description="Did the reply answer what was asked?")
    turns = {}
    for days, fallback, answered, configuration in ((3, "template", "no", CONFIG_A), (3, "quote", "no", CONFIG_A),
                                                    (3, "", "yes", CONFIG_A), (1, "escalated", "", CONFIG_B),
                                                    (1, "", "yes", CONFIG_B), (1, "", "yes", CONFIG_B)):
        trace = turn(when=days_ago(days), configuration=configuration)
        Trace.objects.filter(pk=trace.pk).update(fallback=fallback)
        if answered:
            trace_scores_set(trace=trace, author=ana, values={"answered": answered})
        turns.setdefault(days, []).append(trace)
    rollups_rebuild(start=days_ago(10), end=NOW, now=NOW)
    return turns


def test_fallbacks_are_counted_per_day_and_link_their_traces(reviewed, client, make_staff):
    client.force_login(make_staff("luz", "analyst"))
    html = page(client, range="7d")
    assert 'data-fallback="template">1<' in html and 'data-fallback="quote">1<' in html
    assert 'data-fallback="escalated">1<' in html and "3 turns in this range ended in a fallback" in html
    assert "fallback=yes" in html and "Answered by the verified-only fallback, per day" in html


def test_scores_are_charted_per_day_and_compared_per_configuration(reviewed, client, make_staff):
    client.force_login(make_staff("luz", "analyst"))
    response = client.get(URL, {"range": "7d"})
    [chart] = [c for c in response.context["score_charts"] if c["definition"].key == "answered"]
    assert chart["total"] == 5
    per_configuration = {row["fingerprint"]: (row["n"], dict(row["counts"]), row["mean"])
                         for row in chart["per_configuration"]}
    assert per_configuration[CONFIG_A.fingerprint] == (3, {"yes": 1, "no": 2}, "33% yes")
    assert per_configuration[CONFIG_B.fingerprint] == (2, {"yes": 2, "no": 0}, "100% yes")
    assert "score=answered%3Ano" in response.content.decode()  # a segment opens its traces in the browser
    rows = list(csv.reader(io.StringIO(client.get(reverse("dashboard:csv"), {"range": "7d"}).content.decode())))
    assert ["scores", days_ago(3).date().isoformat(), "answered=no", "2"] in rows
    assert ["fallbacks", days_ago(1).date().isoformat(), "escalated", "1"] in rows
