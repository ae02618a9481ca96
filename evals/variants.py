"""Synthetic golden cases: variants of the queries behind a taxonomy class, kept out of the numbers until reviewed.

With a model configured, the writer's model paraphrases each query (same language, every number and
identifier kept; a paraphrase that drops or invents a number is discarded). Without one, or when the model
fails or answers garbage, deterministic rewrites stand in: accents stripped, lowercase without punctuation, a
polite or informal opening in the query's language, a common typo (two letters swapped) — numbers never change.
"""

from __future__ import annotations

import json
import re
import unicodedata

from django.db import transaction
from django.db.models import Case, IntegerField, Value, When
from django.utils.text import slugify

from bot.llm import ModelCallError, openai_client, structured_completion
from core.text import fold
from evals.models import GoldenCase, GoldenSet
from evals.services import GoldenSetError, golden_set_bump, golden_set_require_open, kept_docs
from traces.models import FailureClass, ReviewNote, Trace

VARIANTS_SCHEMA = {
    "type": "object",
    "properties": {"variants": {"type": "array", "items": {"type": "string"}}},
    "required": ["variants"],
    "additionalProperties": False,
}
VARIANTS_PROMPT = """\
You write test questions for the regression suite of a billing assistant of an internet provider. Rewrite the \
customer's message as {count} different messages a real customer might send instead: the same language as the \
original, the same request, and every number, amount, date, plan name and identifier exactly as written. Vary \
the wording, the word order and the register (formal, casual, hurried). Reply with the JSON object only: \
{{"variants": ["...", ...]}}."""

_PREFIXES = {
    "es": ("Buenas tardes, disculpe, ", "hola una pregunta "),
    "en": ("Good afternoon, could you tell me: ", "hey quick question "),
}
_NUMBER_RE = re.compile(r"\d+(?:[.,\-/]\d+)*")
# Punctuation goes, except next to a digit ("350,00", "2026-10" and "V-12345678" keep theirs).
_PUNCTUATION_RE = re.compile(r"(?<!\d)[^\w\s](?!\d)")
_WORD_RE = re.compile(r"[^\W\d_]{5,}")
_MAX_SLUG = 50  # case ids are at most 64 characters: slug + "-v" + a number


class VariantError(GoldenSetError):
    """A variant request or review the rules refuse."""


def survivor_of(failure_class: FailureClass) -> FailureClass:
    """Return the live class a (possibly merged) class ended up in."""
    seen = {failure_class.pk}
    while failure_class.merged_into_id is not None and failure_class.merged_into_id not in seen:
        seen.add(failure_class.merged_into_id)
        failure_class = failure_class.merged_into
    return failure_class


def class_traces(failure_class: FailureClass) -> list[Trace]:
    """Return the traces whose review notes are in the class, counting the classes merged into its survivor."""
    survivor = survivor_of(failure_class)
    members, frontier = {survivor.pk}, [survivor.pk]
    while frontier:
        frontier = list(FailureClass.objects.filter(merged_into__in=frontier).exclude(pk__in=members)
                        .values_list("pk", flat=True))
        members.update(frontier)
    trace_ids = ReviewNote.objects.filter(failure_class__in=members).values("trace_id")
    return list(Trace.objects.filter(pk__in=trace_ids).order_by("pk"))


def variants_generate(*, failure_class: FailureClass, golden_set: GoldenSet, per_trace: int = 3, user=None,
                      writer_client=None, model: str | None = None) -> list[GoldenCase]:
    """Add up to `per_trace` unreviewed synthetic variants of each query behind a failure class; bump the set once.

    `writer_client` is an `openai` client (built from the settings when a model is configured and none is
    given); `model` defaults to OPENAI_MODEL. Model calls happen before the write transaction opens.
    """
    if per_trace < 1:
        raise VariantError("Ask for at least one variant per trace.")
    golden_set_require_open(golden_set, to="add cases to it")
    survivor = survivor_of(failure_class)
    client, model = _client(writer_client, model)
    proposals = [(trace, _proposals(trace, per_trace=per_trace, client=client, model=model))
                 for trace in class_traces(survivor) if trace.query.strip()]
    return _variants_save(survivor=survivor, golden_set=golden_set, proposals=proposals, per_trace=per_trace,
                          user=user)


@transaction.atomic
def variant_review(*, case: GoldenCase, approve: bool, user) -> GoldenCase | None:
    """Approve a case awaiting review — a synthetic variant, a case bulk-added from a trace — (it counts from now
    on) or reject it (deleted); the set's version moves either way."""
    if case.reviewed:
        raise VariantError(f"{case.case_id} is not awaiting review: edit it instead of reviewing it.")
    golden_set, case_id = case.golden_set, case.case_id
    if approve:
        case.reviewed = True
        case.save(update_fields=["reviewed", "updated"])
        golden_set_bump(golden_set=golden_set, user=user, note=f"approve {'variant ' if case.synthetic else ''}{case_id}")
        return case
    case.delete()
    golden_set_bump(golden_set=golden_set, user=user, note=f"reject {case_id}")
    return None


@transaction.atomic
def _variants_save(*, survivor: FailureClass, golden_set: GoldenSet, proposals, per_trace: int,
                   user) -> list[GoldenCase]:
    golden_set = GoldenSet.objects.select_for_update().get(pk=golden_set.pk)  # case ids and dedupe under a lock
    seen = {normalized_query(query) for query in golden_set.cases.values_list("query", flat=True)}
    slug = (slugify(survivor.name) or "class")[:_MAX_SLUG].strip("-") or "class"
    pattern = re.compile(rf"{re.escape(slug)}-v(\d+)")
    numbers = [int(m.group(1)) for case_id in golden_set.cases.values_list("case_id", flat=True)
               if (m := pattern.fullmatch(case_id))]
    next_number = max(numbers, default=0) + 1
    created = []
    for trace, candidates in proposals:
        template = _template_case(trace, golden_set)
        seen.add(normalized_query(trace.query))  # a variant is never the query itself
        made = 0
        for query in candidates:
            key = normalized_query(query)
            if made == per_trace or not key or key in seen:
                continue
            seen.add(key)
            created.append(GoldenCase.objects.create(
                golden_set=golden_set, case_id=f"{slug}-v{next_number}", query=query, synthetic=True,
                reviewed=False, origin=GoldenCase.Origin.VARIANT, failure_class=survivor, trace=trace,
                must_pass=False, **template))
            next_number += 1
            made += 1
    if created:
        golden_set_bump(golden_set=golden_set, user=user,
                        note=f"{len(created)} variants of class {survivor.name!r} to review")
    return created


def normalized_query(query: str) -> str:
    """Return the query as compared for duplicates: case-folded, single-spaced (accents and punctuation kept)."""
    return " ".join(unicodedata.normalize("NFC", query).casefold().split())


def rewrites(query: str, *, language: str = "es") -> list[str]:
    """Return deterministic rewrites of a query, in order of preference, each keeping every number as written."""
    query = " ".join(query.split())
    polite, informal = _PREFIXES.get(language, _PREFIXES["es"])
    no_accents = fold(query, case=None)
    plain = " ".join(_PUNCTUATION_RE.sub(" ", query.lower()).split())
    # "¿Cuánto…" stays, "Cuánto…" becomes "cuánto…" after the prefix; "USD…" keeps its capitals.
    body = query[:1].lower() + query[1:] if query[:1].isupper() and not query[1:2].isupper() else query
    candidates = [no_accents, plain, polite + body, _typo(query), informal + plain]
    return [c for c in candidates if c and c != query]


def _typo(query: str) -> str:
    """Swap two neighbouring letters in the middle of the query's longest word (no digits are touched)."""
    longest = max(_WORD_RE.finditer(query), key=lambda m: len(m.group()), default=None)  # the first of them
    if longest is None:
        return ""
    word = longest.group()
    for i in range(len(word) // 2 - 1, len(word) - 1):
        if word[i] != word[i + 1]:
            typo = word[:i] + word[i + 1] + word[i] + word[i + 2:]
            return query[:longest.start()] + typo + query[longest.end():]
    return ""


def _numbers(text: str) -> list[str]:
    return sorted(_NUMBER_RE.findall(text))


def _proposals(trace: Trace, *, per_trace: int, client, model: str) -> list[str]:
    """Return the model's paraphrases that keep every number (if a model is set), then the deterministic rewrites."""
    language = trace.language or "es"
    paraphrases = _paraphrases(trace.query, count=per_trace, client=client, model=model) if client else []
    return paraphrases + rewrites(trace.query, language=language)


def _paraphrases(query: str, *, count: int, client, model: str) -> list[str]:
    messages = [{"role": "system", "content": VARIANTS_PROMPT.format(count=count)},
                {"role": "user", "content": query}]
    try:
        raw, _ = structured_completion(client, model=model, messages=messages, schema_name="query_variants",
                                       schema=VARIANTS_SCHEMA)
        payload = json.loads(raw)
    except (ModelCallError, json.JSONDecodeError, TypeError):
        return []  # the deterministic rewrites stand in
    variants = payload.get("variants") if isinstance(payload, dict) else None
    if not isinstance(variants, list):
        return []
    wanted = _numbers(query)
    # A paraphrase that drops, changes or invents a number tests a different question: discard it.
    return [" ".join(v.split()) for v in variants if isinstance(v, str) and v.strip() and _numbers(v) == wanted]


def _client(writer_client, model: str | None):
    from django.conf import settings

    if writer_client is None and (settings.OPENAI_API_KEY or settings.OPENAI_BASE_URL):
        writer_client = openai_client(api_key=settings.OPENAI_API_KEY, base_url=settings.OPENAI_BASE_URL,
                                      timeout=settings.OPENAI_TIMEOUT_S)
    return writer_client, model or settings.OPENAI_MODEL


def _template_case(trace: Trace, golden_set: GoldenSet) -> dict:
    """Return what a variant copies: from the golden case made from the trace (this set's first), else the trace."""
    made = (GoldenCase.objects.filter(trace=trace, synthetic=False)
            .order_by(_not_in(golden_set), "-updated", "-pk").first())
    if made is not None:
        return {"hits": list(made.hits), "hard_negatives": list(made.hard_negatives), "facts": list(made.facts),
                "customer_id": made.customer_id, "context": list(made.context),
                "clarification_expected": made.clarification_expected}
    return {"hits": kept_docs(trace), "hard_negatives": [], "facts": [], "customer_id": trace.customer_id or "", "context": []}


def _not_in(golden_set: GoldenSet) -> Case:
    return Case(When(golden_set=golden_set, then=Value(0)), default=Value(1), output_field=IntegerField())
