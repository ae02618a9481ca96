"""The note form that session and queue review share: verdict, first failure, stage, class, chunk and scores."""

from __future__ import annotations

from core import params
from traces.models import ReviewNote, ScoreDefinition, Trace
from traces.scores import FAITHFUL, score_definitions, trace_scores_of
from traces.services import ReviewError

FIRST_FAILURE_MAX = ReviewNote._meta.get_field("first_failure").max_length


def field_name(definition: ScoreDefinition) -> str:
    """Return a score's form field: the built-in faithfulness keeps the review's former name."""
    return "model_faithful" if definition.key == FAITHFUL else f"score_{definition.key}"


def review_chunks(trace: Trace) -> list[dict]:
    """Return the chunks a trace retrieved, each marked when its answer cited it (the note's chunk choices)."""
    cited_chunks = {e.get("chunk_id") for e in (trace.evidence or []) if isinstance(e, dict)
                    and e.get("id") in set(trace.citations or [])}
    return [{**row, "cited": row.get("chunk_id") in cited_chunks} for row in (trace.retrieval or [])
            if isinstance(row, dict) and isinstance(row.get("chunk_id"), int)]


def review_form_context(*, trace: Trace, author, post=None) -> dict:
    """Return what the note form shows: each score with this reviewer's value (or what they just sent)."""
    mine = trace_scores_of(trace_ids=[trace.pk], author=author).get((trace.pk, author.pk), {})
    fields = []
    for definition in score_definitions():
        name = field_name(definition)
        spec = definition.spec()
        fields.append({"definition": definition, "name": name, "choices": spec.choices(),
                       "low": spec.low if spec.low is None else f"{spec.low:g}",
                       "high": spec.high if spec.high is None else f"{spec.high:g}",
                       "value": post.get(name, "") if post is not None else mine.get(definition.key, "")})
    return {"score_fields": fields, "review_chunks": review_chunks(trace)}


def read_review_post(post) -> dict:
    """Return review_note_save's arguments from a posted note form; raise ReviewError naming a bad value."""
    first_failure = params.text(post.get("first_failure"), label="The first upstream failure",
                                max_length=FIRST_FAILURE_MAX)
    failure_class = params.integer(post.get("failure_class"), label="The failure class")
    chunk = params.integer(post.get("chunk"), label="The chunk")
    for parsed in (first_failure, failure_class, chunk):
        if parsed.error:
            raise ReviewError(parsed.error)
    scores = {}
    for definition in score_definitions():
        name = field_name(definition)
        if name in post:
            value = params.text(post.get(name), label=definition.name, max_length=60)
            if value.error:
                raise ReviewError(value.error)
            scores[definition.key] = value.value
    return {"verdict": post.get("verdict", ""), "first_failure": first_failure.value,
            "stage": post.get("stage", ""), "failure_class_id": failure_class.value, "chunk_id": chunk.value,
            "scores": scores}
