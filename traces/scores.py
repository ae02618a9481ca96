"""Scores the team defines and the values reviewers set on traces (writes and reads; the rules are traces/scoring.py)."""

from __future__ import annotations

from collections.abc import Mapping

from django.db import transaction
from django.db.models import QuerySet

from traces.models import ScoreDefinition, Trace, TraceScore
from traces.scoring import ScoreError, spec_check, value_number, value_parse

FAITHFUL = "faithful"  # the built-in score: the review's "was the model faithful to its context?"
DESCRIPTION_MAX = ScoreDefinition._meta.get_field("description").max_length


BUILT_IN = {FAITHFUL: {"name": "Faithful to its context", "kind": ScoreDefinition.Kind.BOOLEAN, "built_in": True,
                       "description": "Did the model say only what the context it was given supports? "
                                      "On an answer, also a judge-calibration label."}}


def score_definitions() -> QuerySet[ScoreDefinition]:
    """Return every score definition, built-in first, then by name.

    The built-in ones are created by a migration; a database flushed since (a transactional test, a fresh demo)
    gets them back here, like the roles in core/roles.py.
    """
    if not ScoreDefinition.objects.filter(key__in=BUILT_IN, built_in=True).count() == len(BUILT_IN):
        for key, fields in BUILT_IN.items():
            ScoreDefinition.objects.get_or_create(key=key, defaults=fields)
    return ScoreDefinition.objects.all()


@transaction.atomic
def score_definition_create(*, key: str, name: str, description: str, kind: str, values=(), low=None, high=None,
                            actor=None) -> tuple[ScoreDefinition, bool]:
    """Define a score; return it and whether it was created.

    The same definition sent twice (a double submit) returns the first; a key already used by a different
    definition is refused.
    """
    spec = spec_check(key=key, name=name, kind=kind, values=list(values), low=low, high=high)
    description = " ".join((description or "").split())
    if not description:
        raise ScoreError("Describe the score: what a reviewer should look at to set it.")
    if len(description) > DESCRIPTION_MAX:
        raise ScoreError(f"The description is longer than {DESCRIPTION_MAX} characters.")
    fields = {"name": spec.name, "description": description, "kind": spec.kind, "values": list(spec.values),
              "low": spec.low, "high": spec.high}
    definition, created = ScoreDefinition.objects.select_for_update().get_or_create(
        key=spec.key, defaults={**fields, "created_by": actor})
    if not created and any(getattr(definition, field) != value for field, value in fields.items()):
        raise ScoreError(f"The key “{spec.key}” is taken by the score “{definition.name}”: choose another key.")
    return definition, created


def values_parse(values: Mapping[str, str | None], definitions: list[ScoreDefinition] | None = None
                 ) -> dict[ScoreDefinition, str | None]:
    """Return each sent score's canonical value (None: cleared) by definition; raise ScoreError naming the
    first bad one. Keys that are no definition's are refused."""
    definitions = {d.key: d for d in (definitions if definitions is not None else score_definitions())}
    parsed = {}
    for key, raw in values.items():
        if key not in definitions:
            raise ScoreError(f"There is no score “{key}”.")
        parsed[definitions[key]] = value_parse(definitions[key].spec(), raw)
    return parsed


@transaction.atomic
def trace_scores_set(*, trace: Trace, author, values: Mapping[str, str | None]) -> dict[str, str | None]:
    """Set this reviewer's scores on a trace (an empty value clears one); return key → canonical value.

    All or nothing: a bad value refuses every score sent with it. Setting the same values again changes nothing.
    """
    parsed = values_parse(values)
    for definition, value in parsed.items():
        if value is None:
            TraceScore.objects.filter(definition=definition, trace=trace, author=author).delete()
            continue
        TraceScore.objects.update_or_create(
            definition=definition, trace=trace, author=author,
            defaults={"value": value, "number": value_number(definition.spec(), value)})
    return {definition.key: value for definition, value in parsed.items()}


def trace_scores_of(*, trace_ids, author=None) -> dict[tuple[int, int | None], dict[str, str]]:
    """Return {(trace id, author id): {score key: value}} for the traces (one author's only, when given)."""
    rows = TraceScore.objects.filter(trace_id__in=list(trace_ids))
    if author is not None:
        rows = rows.filter(author=author)
    found: dict[tuple[int, int | None], dict[str, str]] = {}
    for trace_id, author_id, key, value in rows.values_list("trace_id", "author_id", "definition__key", "value"):
        found.setdefault((trace_id, author_id), {})[key] = value
    return found
