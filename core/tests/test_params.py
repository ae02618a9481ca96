"""Every parameter reader returns a value or its default with a message, whatever it is sent; it never raises."""

import datetime as dt
from decimal import Decimal

import pytest
from django.core.exceptions import BadRequest

from core import params

HOSTILE = ["²", "٣", "9999-12-31", "0001-01-01", "2026-13-45", "2026-13-45T10:00:00", "a\x00b", "x" * 60_000,
           "-1", "9" * 30, "1e26", "NaN", "inf", "-", " ", "[]", "{", "1_000", "0x10", "１２"]
READERS = [
    lambda raw: params.integer(raw),
    lambda raw: params.number(raw),
    lambda raw: params.decimal(raw),
    lambda raw: params.day(raw),
    lambda raw: params.moment(raw),
    lambda raw: params.moment(raw, end=True),
    lambda raw: params.choice(raw, ["a", "b"]),
    lambda raw: params.boolean(raw),
    lambda raw: params.text(raw),
    lambda raw: params.cursor(raw),
    lambda raw: params.json_document(raw),
]


@pytest.mark.parametrize("raw", HOSTILE)
@pytest.mark.parametrize("read", READERS)
def test_no_reader_raises_on_hostile_input(read, raw):
    parsed = read(raw)
    assert isinstance(parsed, params.Parsed)
    assert len(parsed.error) < 300  # a 60,000-character value is not echoed back


@pytest.mark.parametrize("raw, value", [("42", 42), (" 7 ", 7), ("-3", None), ("0", 0), (None, None), ("", None)])
def test_an_integer_is_ascii_digits_within_its_range(raw, value):
    assert params.integer(raw).value == value


@pytest.mark.parametrize("raw", ["²", "٣", "１２", "1e3", "9" * 30, "3.0", "0x10", "1_000"])
def test_anything_but_ascii_digits_is_refused_with_a_message(raw):
    parsed = params.integer(raw, label="The golden set", default=5)
    assert (parsed.value, parsed.ok) == (5, False)
    assert parsed.error.startswith("The golden set ")


def test_an_integer_out_of_range_is_refused_or_clamped():
    assert params.integer("50", high=20).error == "The value must be between 0 and 20."
    assert params.integer("50", high=20, clamp=True) == params.Parsed(20)
    assert params.integer("-5", low=-10) == params.Parsed(-5)


@pytest.mark.parametrize("raw, error", [("NaN", "must be a number"), ("inf", "must be a number"),
                                        ("1e400", "must be a number"), ("-1", "between 0 and")])
def test_a_number_is_finite_and_in_range(raw, error):
    assert error in params.number(raw).error
    assert params.number("12.5").value == 12.5


@pytest.mark.parametrize("raw, value", [("5", Decimal("5.00")), ("5,5", Decimal("5.50")), ("0.01", Decimal("0.01")),
                                        ("9999999999.99", Decimal("9999999999.99"))])
def test_a_decimal_reads_a_comma_as_the_decimal_mark(raw, value):
    assert params.decimal(raw) == params.Parsed(value)


@pytest.mark.parametrize("raw, error", [
    ("1e26", "more than 10 digits before the decimal point"),
    ("10000000000", "more than 10 digits before the decimal point"),
    ("1.005", "at most two decimals"),
    ("NaN", "not a number"), ("sNaN", "not a number"), ("Infinity", "not a number"), ("cinco", "not a number"),
])
def test_a_decimal_that_cannot_be_an_amount_is_refused_before_any_arithmetic(raw, error):
    assert error in params.decimal(raw).error


def test_a_decimal_below_or_above_its_bounds_is_refused():
    assert params.decimal("0", low=Decimal("0.01")).error == "The amount must be at least 0.01."
    assert params.decimal("100", high=Decimal("99")).error == "The amount must be at most 99."


@pytest.mark.parametrize("raw", ["9999-12-31", "0001-01-01", "2026-13-45", "2026-02-30", "٢٠٢٦-٠١-٠١", "2026-1-1"])
def test_an_impossible_or_far_date_is_refused(raw):
    assert params.day(raw).value is None and params.day(raw).error
    assert params.moment(raw, end=True).value is None and params.moment(raw, end=True).error


def test_a_bare_date_ending_a_range_includes_the_whole_day():
    start = params.moment("2026-03-31").value
    end = params.moment("2026-03-31", end=True).value
    assert (end - start) == dt.timedelta(days=1) and start.tzinfo is not None
    assert params.moment("2026-03-31T14:30").value.hour == 14
    assert params.moment("2026-03-31T14:30:00+02:00").value.utcoffset() == dt.timedelta(hours=2)
    assert params.moment("2026-13-45T10:00:00").error


def test_choices_booleans_and_text():
    assert params.choice("b", [("a", "A"), ("b", "B")]) == params.Parsed("b")
    assert params.choice("c", ["a", "b"], default="a").error == "The value must be one of a, b."
    assert [params.boolean(v).value for v in ("yes", "NO", "1", "off", "", "maybe")] == [True, False, True, False,
                                                                                          None, None]
    assert params.text(" hola ") == params.Parsed("hola")
    assert params.text("a\x00b", label="The query").error == "The query contains a NUL character; remove it."
    assert params.text("x" * 11, max_length=10).error == "The text is longer than 10 characters."


def test_a_bad_cursor_means_the_first_page():
    assert params.cursor("2026-13-45T10:00:00_1") == params.Parsed(None, "That page link is out of date; "
                                                                         "showing the first page.")
    assert params.cursor("2026-11-30T10:00:00+00:00_42").value[1] == 42


@pytest.mark.parametrize("raw, error", [
    ("[" * 5_000 + "]" * 5_000, "nests deeper than 20 levels"),
    ('{"a": ' * 5_000 + "1" + "}" * 5_000, "nests deeper than 20 levels"),
    ("x" * 300_000, "longer than 200,000 characters"),
    ('[{"value": NaN}]', "not valid JSON"),
    ("[1, 2", "not valid JSON"),
    ('["a\\u0000b"]', "NUL character"),
])
def test_json_is_refused_before_parsing_when_too_deep_or_too_long(raw, error):
    assert error in params.json_document(raw).error


def test_json_depth_skips_brackets_inside_strings():
    assert params.json_depth('[{"text": "[[[[{{{{"}]') == 2
    assert params.json_document('[{"value": 45.00}]').value == [{"value": Decimal("45.00")}]


def test_or_bad_request_raises_the_message_as_a_400():
    with pytest.raises(BadRequest, match="must be a whole number"):
        params.integer("²").or_bad_request()
    assert params.integer("3").or_bad_request() == 3
