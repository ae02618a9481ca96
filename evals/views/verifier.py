import json

from django.conf import settings
from django.contrib.auth.decorators import login_required, permission_required
from django.shortcuts import render

from bot.grounding import Evidence, TokenCheck, evidence_from_data, verify
from core import params

review_traces_required = permission_required("traces.review_traces", raise_exception=True)

# Two slips on purpose: the reconnection fee is cited to the invoice instead of E3, and the last
# sentence swaps its two citations (each figure answers to the citation that follows it).
EXAMPLE_ANSWER = (
    "Su factura F-1002 de abril es de USD 45,00 [E2] y vence el 15/04/2024 [E2]. "
    "La reconexión cuesta USD 31,00 [E2]. "
    "En total debe USD 76,00 [E2][E3] y el IVA aplicado es 16% [E4]. "
    "La de marzo fue Bs. 1.234,56 [E3] y la reconexión USD 31,00 [E1]."
)
EXAMPLE_EVIDENCE = json.dumps(
    [
        {"id": "E1", "text": "Factura F-1001 de marzo: monto Bs. 1.234,56, vence el 2024-03-15.", "value": "1234.56"},
        {"id": "E2", "text": "Factura F-1002 de abril: monto USD 45,00, vence el 2024-04-15.", "value": "45.00"},
        {"id": "E3", "text": "Cargo por reconexión: USD 31,00.", "value": "31.00"},
        {"id": "E4", "text": "El IVA aplicado es 16% sobre el monto base del plan.", "value": None},
    ],
    ensure_ascii=False,
    indent=2,
)


ANSWER_MAX = 10_000  # a WhatsApp message is at most 4,096 characters
EVIDENCE_MAX = 200_000
EVIDENCE_DEPTH = 5  # a list of objects whose values are scalars: 2 would do, 5 leaves room for a mistake to be named


def _parse_evidence(raw: str) -> list[Evidence]:
    """Return the pasted evidence; raise ValueError with a message for the analyst."""
    # Decimal keeps a value as the system of record wrote it: 45.00 stays "45.00", not "45.0".
    data = params.json_document(raw, label="The evidence", max_bytes=EVIDENCE_MAX, max_depth=EVIDENCE_DEPTH)
    if data.error:
        raise ValueError(data.error)
    try:
        return evidence_from_data(data.value)
    except ValueError as error:
        raise ValueError(f"The evidence is malformed: {error}.") from None


def _segments(answer: str, checks: list[TokenCheck]) -> list[dict]:
    """Split the answer into plain text and judged tokens, in order, for highlighting."""
    segments = []
    position = 0
    for check in checks:
        segments.append({"text": answer[position:check.start], "check": None})
        title = f"{check.rule} · {check.kind} · {', '.join(check.evidence)}" if check.ok else check.reason
        if check.cited:
            title += f" (checked against {' '.join(f'[{i}]' for i in check.cited)})"
        segments.append({"text": answer[check.start:check.end], "check": check, "title": title})
        position = check.end
    segments.append({"text": answer[position:], "check": None})
    return segments


@login_required
@review_traces_required
def verifier_playground(request):
    """Verify a pasted answer against pasted evidence and show the rule or the reason for each token."""
    context = {"answer": EXAMPLE_ANSWER, "evidence_json": EXAMPLE_EVIDENCE, "customer_view": True}
    template_name = "traces/verifier_playground.html"
    if request.method == "POST":
        context.update(
            answer=request.POST.get("answer", ""),
            evidence_json=request.POST.get("evidence", ""),
            customer_view=bool(request.POST.get("customer_view")),
        )
        answer = params.text(context["answer"], label="The answer", max_length=ANSWER_MAX, strip=False)
        try:
            if answer.error:
                raise ValueError(answer.error)
            evidence = _parse_evidence(context["evidence_json"])
        except ValueError as error:
            context["error"] = str(error)
        else:
            verdict = verify(
                context["answer"],
                evidence,
                customer_view=context["customer_view"],
                banned_phrases=list(getattr(settings, "GROUNDING_BANNED_PHRASES", [])),
            )
            context.update(verdict=verdict, segments=_segments(context["answer"], verdict.tokens))
        if request.htmx:
            template_name += "#result"
    return render(request, template_name, context)
