import pytest

from bot.escalation import SUMMARIES, Reason, agent_summary, ask_for_identity, customer_notice


@pytest.mark.parametrize(
    "reason, summary",
    [
        (Reason.NO_CONTEXT, "The customer asked something that is not in the knowledge base."),
        (Reason.UNGROUNDED_OUTPUT, "The bot was about to give an unsupported figure; it was stopped for safety."),
        (Reason.USER_REQUEST, "The customer asked to speak to a person."),
        (Reason.TOOL_ERROR, "Could not query the billing system (possible outage)."),
        (Reason.CAPABILITY_MISSING, "The customer wants something the bot cannot do or read yet."),
    ],
)
def test_the_five_reasons_carry_their_agent_summary(reason, summary):
    assert agent_summary(reason).summary == summary


def test_every_reason_has_a_summary():
    assert set(SUMMARIES) == set(Reason)


def test_detail_quotes_the_customer_and_lists_specifics():
    note = agent_summary(Reason.TOOL_ERROR, query=" ¿por qué subió? ", details=["invoice_change failed: 503."])
    assert note.detail.splitlines() == ["Customer wrote: “¿por qué subió?”", "invoice_change failed: 503."]


@pytest.mark.parametrize("language, word", [("es", "persona"), ("en", "person"), ("fr", "persona")])
def test_customer_hears_about_the_person_in_their_language(language, word):
    assert word in customer_notice(language)


def test_identity_request_asks_for_account_or_national_id():
    assert "cédula" in ask_for_identity("es") and "account number" in ask_for_identity("en")
