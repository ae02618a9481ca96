"""The template writer's help-center replies (bot/document_answers.py): the kind of question and the sentences chosen."""

import pytest

from bot.document_answers import AMOUNT, DURATION, LIST, PROCEDURE, Passage, compose, question_kind


@pytest.mark.parametrize(("query", "kind"), [
    ("what is the late fee?", AMOUNT),
    ("¿de cuánto es el recargo?", AMOUNT),
    ("¿en cuánto tiempo me devuelven la plata?", DURATION),
    ("¿qué formas de pago tienen?", LIST),
    ("¿cómo reporto una transferencia?", PROCEDURE),
])
def test_the_kind_of_fact_a_question_asks_for(query, kind):
    assert question_kind(query) == kind


def test_the_documents_title_says_what_a_sentence_is_about():
    # The fee sentence never says "late"; its document's title does. A discount sentence sharing one word of the
    # question ("fiber") and holding an amount, retrieved higher, must not win over it.
    late = Passage("E2", "Late Fees on Home Plans\nHow the fee is calculated\n\nThe fee is 5% of whatever part of "
                         "that invoice is still unpaid when the grace period ends.", doc="late-fees-en", language="en")
    welcome = Passage("E1", "Welcome Discount\nWhat you get\n\nNew customers on any Fiber plan billed monthly get 20% "
                            "off the monthly fee on their first three monthly invoices.", doc="welcome-discount-en",
                      language="en")
    composed = compose("how much extra do i pay if my home fiber bill is paid a week late", [welcome, late],
                       language="en")
    assert composed is not None and composed.evidence_ids == ["E2"] and "5%" in composed.reply


def test_a_worked_example_is_never_the_whole_answer_when_the_rule_is_there():
    passage = Passage("E1", "Late Fees on Home Plans\nHow the fee is calculated\n\nThe fee is 5% of the unpaid part "
                            "of the invoice. For example, an unpaid invoice of USD 32.48 produces a late fee of USD "
                            "1.62.", doc="late-fees-en", language="en")
    composed = compose("what is the late fee?", [passage], language="en")
    assert composed is not None and composed.reply.startswith("The fee is 5%")
