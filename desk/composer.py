"""What the composer offers once WhatsApp's 24-hour window has closed: the approved templates in the customer's
language, one input per variable pre-filled with what the desk knows, and the text the customer will read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from desk.account import account_summary
from desk.models import Conversation, CreditNoteRequest, MessageTemplate
from desk.template_text import (
    PARAMETER_MAX,
    language_matches,
    parameter_problem,
    template_render,
    template_variables,
)

MAX_VARIABLES = 20


@dataclass(frozen=True)
class VariableInput:
    number: int
    value: str
    source: str  # what pre-filled it, in words ('' when the agent types it)
    problem: str = ""


@dataclass(frozen=True)
class TemplateComposer:
    templates: list[MessageTemplate]
    template: MessageTemplate | None = None
    inputs: list[VariableInput] = field(default_factory=list)
    preview: str = ""

    @property
    def ready(self) -> bool:
        """Whether every variable has a value WhatsApp accepts."""
        return self.template is not None and not any(i.problem for i in self.inputs)


def typed_values(query: Mapping[str, str]) -> dict[int, str]:
    """Return the variable values a form sent (v1, v2…) as typed, without NUL; bounded in number and length."""
    values = {}
    for number in range(1, MAX_VARIABLES + 1):
        raw = query.get(f"v{number}")
        if raw is not None:
            values[number] = str(raw).replace("\x00", "")[:PARAMETER_MAX + 1]
    return values


def templates_offered(*, conversation: Conversation) -> list[MessageTemplate]:
    """Return the approved templates in the customer's language, by name."""
    language = conversation.contact.language
    return [t for t in MessageTemplate.objects.filter(status=MessageTemplate.Status.APPROVED).order_by("name")
            if language_matches(t.language, language)]


def template_composer(*, conversation: Conversation, template_id: int | None = None,
                      values: Mapping[int, str] | None = None) -> TemplateComposer:
    """Return the template composer: the chosen template (else the first), its inputs and the preview.

    `values` are what the agent typed (number → text); a variable the agent has not touched is pre-filled.
    """
    templates = templates_offered(conversation=conversation)
    template = next((t for t in templates if t.pk == template_id), templates[0] if templates else None)
    if template is None:
        return TemplateComposer(templates=templates)
    typed = values or {}
    known = _known_values(conversation, template)
    inputs = []
    for number in template_variables(template.body):
        source = (template.variable_sources or [])[number - 1] if number <= len(template.variable_sources or []) \
            else ""
        if number in typed:
            value = typed[number]
            inputs.append(VariableInput(number, value, "", parameter_problem(number, value) if value else ""))
        else:
            value = known.get(source, "")
            label = MessageTemplate.Source(source).label if value and source in MessageTemplate.Source.values else ""
            inputs.append(VariableInput(number, value, label))
    preview = template_render(template.body, {i.number: i.value for i in inputs})
    return TemplateComposer(templates=templates, template=template, inputs=inputs, preview=preview)


def _known_values(conversation: Conversation, template: MessageTemplate) -> dict[str, str]:
    """Return the values the desk knows for the sources this template asks for (billing only when needed)."""
    sources = set(template.variable_sources or [])
    contact = conversation.contact
    known = {MessageTemplate.Source.CUSTOMER_NAME: contact.name.strip()}
    if MessageTemplate.Source.AMOUNT_DUE in sources and contact.customer_id:
        account = account_summary(customer_id=contact.customer_id, language=contact.language)
        if account.state == "ok":
            known[MessageTemplate.Source.AMOUNT_DUE] = account.invoice_total
            if not known[MessageTemplate.Source.CUSTOMER_NAME] and account.customer:
                known[MessageTemplate.Source.CUSTOMER_NAME] = str(account.customer.get("name") or "")
    if MessageTemplate.Source.CREDIT_NOTE in sources:
        note = (CreditNoteRequest.objects.filter(conversation=conversation).exclude(billing_credit_note_id="")
                .order_by("-sent_at", "-pk").first())
        if note is not None:
            known[MessageTemplate.Source.CREDIT_NOTE] = note.billing_credit_note_id
    return {str(key): value for key, value in known.items()}
