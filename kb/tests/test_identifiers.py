import pytest

from kb.identifiers import find_identifiers


@pytest.mark.parametrize(
    "text, expected",
    [
        ("cuenta 0102-0456-78-0001234567", "01020456780001234567"),
        ("RIF J-40123456-7.", "401234567"),
        ("el rif j40123456 7 va en la factura?", "401234567"),
        ("pago móvil 0414.555.0123", "04145550123"),
        ("transferí a la 01020456780001234567", "01020456780001234567"),
    ],
)
def test_identifiers_in_any_notation_normalize_to_their_digits(text, expected):
    assert expected in find_identifiers(text)


@pytest.mark.parametrize(
    "text",
    ["pagué Bs. 1.234.567,89", "USD 45,00 el 12/03/2026", "código 123456", "1 234 567,00 bolívares"],
)
def test_amounts_dates_and_short_numbers_are_not_identifiers(text):
    assert find_identifiers(text) == []
