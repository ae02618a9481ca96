"""The desk's one reader of typed identifiers (desk/identifiers.py): pure, no database."""

import pytest

from desk.identifiers import identifier_lookups, national_id, phone_e164, whatsapp_digits
from desk.labels import code_label


@pytest.mark.parametrize(("typed", "canonical"), [
    ("J-34472459-7", "J-34472459-7"), ("J344724597", "J-34472459-7"), ("j 34.472.459-7", "J-34472459-7"),
    ("V-12.345.678", "V-12345678"), ("v12345678", "V-12345678"), ("E-81234567", "E-81234567"),
    ("V-12345678-9", "V-12345678-9"), ("G200012345", "G-20001234-5"),
    ("V-1", None), ("X-12345678", None), ("J-1234567890-1", None), ("", None), ("Marisol", None),
])
def test_a_cedula_or_rif_is_read_with_or_without_dots_and_dashes(typed, canonical):
    assert national_id(typed) == canonical


@pytest.mark.parametrize("typed", ["0416-8386115", "04168386115", "+58 416 838 6115", "584168386115",
                                   "4168386115", "0058 416 8386115", "(0416) 838.61.15"])
def test_a_phone_in_local_national_or_international_form_is_one_number(typed):
    assert phone_e164(typed) == "+584168386115"
    assert whatsapp_digits(typed) == "584168386115"


@pytest.mark.parametrize("typed", ["88110842", "12", "0416-83", "+12", "abc", "", "416838611"])
def test_what_is_not_a_phone_is_not_read_as_one(typed):
    assert phone_e164(typed) is None


@pytest.mark.parametrize(("typed", "lookups"), [
    ("88110842", [("account_number", "88110842"), ("national_id", "V-88110842")]),
    ("J-34472459-7", [("national_id", "J-34472459-7")]),
    ("J344724597", [("national_id", "J-34472459-7")]),
    ("V-12.345.678", [("national_id", "V-12345678")]),
    ("0416-8386115", [("phone", "+584168386115")]),
    ("04168386115", [("phone", "+584168386115")]),
    ("+58 416 838 6115", [("phone", "+584168386115")]),
    ("584168386115", [("phone", "+584168386115")]),
    ("1234567", [("national_id", "V-1234567")]),
    ("+44 20 7946 0958", [("phone", "+442079460958")]),
    ("Marisol", []), ("", []), ("12", []),
])
def test_what_a_typed_identifier_is_looked_up_as(typed, lookups):
    assert identifier_lookups(typed) == lookups


@pytest.mark.parametrize(("code", "words"), [
    ("international_card", "International card"), ("pending_review", "Pending review"),
    ("pago_movil", "Pago Móvil"), ("technical_visit", "Technical visit"), ("succeeded", "Succeeded"),
    ("some_new_code", "Some new code"), ("weird-code", "Weird code"), ("", "—"), (None, "—"),
])
def test_every_code_reads_as_words(code, words):
    assert code_label(code) == words
