"""Team-defined scores on golden answers: the value each score has on a golden case's expected answer."""

from __future__ import annotations

from collections.abc import Mapping

from django.db import transaction

from evals.models import GoldenCase, GoldenCaseScore
from traces.scores import values_parse


@transaction.atomic
def golden_case_scores_set(*, case: GoldenCase, author, values: Mapping[str, str | None]) -> dict[str, str | None]:
    """Set scores on a golden case (an empty value clears one); all or nothing (ScoreError names a bad value).
    Setting the same values again changes nothing."""
    parsed = values_parse(values)
    for definition, value in parsed.items():
        if value is None:
            GoldenCaseScore.objects.filter(definition=definition, golden_case=case).delete()
        else:
            GoldenCaseScore.objects.update_or_create(definition=definition, golden_case=case,
                                                     defaults={"value": value, "author": author})
    return {definition.key: value for definition, value in parsed.items()}


def golden_case_scores(*, case: GoldenCase) -> dict[str, str]:
    """Return the case's scores by key."""
    return dict(case.scores.values_list("definition__key", "value"))
