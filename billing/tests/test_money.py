"""One money notation: `money_text` and the amount and rate notation it is built on. Pure."""

from decimal import Decimal as D

import pytest

from billing.answers.money import LANGUAGES, amount_text, money_text, rate_text
from billing.answers.phrases import PHRASES


@pytest.mark.parametrize(
    ("amount", "currency", "language", "text"),
    [
        ("1624.00", "VES", "es", "Bs. 1.624,00"),
        ("10", "USD", "es", "USD 10,00"),
        ("1624.00", "VES", "en", "Bs. 1,624.00"),
        ("10", "USD", "en", "USD 10.00"),
        ("1234567.8", "VES", "es", "Bs. 1.234.567,80"),
        ("1234567.8", "USD", "en", "USD 1,234,567.80"),
        ("999.99", "VES", "es", "Bs. 999,99"),
        ("0", "USD", "es", "USD 0,00"),
        ("0.005", "USD", "en", "USD 0.01"),  # half up, the way invoices round
        ("2.845", "VES", "es", "Bs. 2,85"),
        ("-280", "VES", "es", "-Bs. 280,00"),  # the sign before the currency
        ("-7.74", "USD", "en", "-USD 7.74"),
        ("-1234.5", "USD", "es", "-USD 1.234,50"),
    ],
)
def test_money_text(amount, currency, language, text):
    assert money_text(D(amount), currency, language) == text


@pytest.mark.parametrize(
    ("amount", "language", "text"),
    [
        ("1234.56", "es", "1.234,56"),
        ("1234.56", "en", "1,234.56"),
        ("-5.6", "es", "-5,60"),
        ("12", "en", "12.00"),
    ],
)
def test_amount_text(amount, language, text):
    assert amount_text(D(amount), language) == text


@pytest.mark.parametrize(
    ("rate", "language", "text"),
    [("16.00", "es", "16 %"), ("2.50", "es", "2,5 %"), ("16.00", "en", "16%"), ("2.50", "en", "2.5%")],
)
def test_rate_text(rate, language, text):
    assert rate_text(D(rate), language) == text


@pytest.mark.parametrize("notation", [amount_text, rate_text])
def test_a_language_without_notation_is_refused(notation):
    with pytest.raises(ValueError, match="unsupported language 'pt'"):
        notation(D("1.00"), "pt")
    with pytest.raises(ValueError, match="unsupported language"):
        money_text(D("1.00"), "USD", "pt")


def test_every_language_with_a_notation_has_a_phrase_table():
    assert set(LANGUAGES) == set(PHRASES)


@pytest.mark.parametrize(
    ("language", "currency", "one_notation"),
    [
        ("es", "VES", True),  # `Bs. 1.624,00` in evidence since the start
        ("en", "USD", True),  # `USD 10.00`
        # Evidence has always written these another way; kept so no evidence line changed:
        ("es", "USD", False),  # `10,00 USD`, not `USD 10,00`
        ("en", "VES", False),  # `VES 1,624.00`, not `Bs. 1,624.00`
    ],
)
def test_evidence_money_is_money_text_except_the_kept_notations(language, currency, one_notation):
    amount = D("1624.00")
    evidence = PHRASES[language].money(amount, currency)
    assert (evidence == money_text(amount, currency, language)) is one_notation
    assert amount_text(amount, language) in evidence
