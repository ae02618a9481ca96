"""Phrase tables: every language says the same things, and rewording touches no arithmetic. Pure."""

import string
from dataclasses import replace
from types import MappingProxyType

import pytest

from billing.answers import computations as calc
from billing.answers.phrases import EN, ES, PHRASES, phrases_for
from billing.records import LINE_TYPES, PAYMENT_METHODS
from billing.simulator import build_dataset
from billing.tests.evidence_snapshot import AS_OF


def fields(template: str) -> set[str]:
    return {name for _text, name, _spec, _conv in string.Formatter().parse(template) if name}


OTHERS = [phrases for language, phrases in PHRASES.items() if language != "es"]


@pytest.mark.parametrize("phrases", OTHERS, ids=[phrases.language for phrases in OTHERS])
def test_every_language_has_the_same_phrases_with_the_same_fields(phrases):
    assert phrases.text.keys() == ES.text.keys()
    for key, template in ES.text.items():
        assert fields(phrases.text[key]) == fields(template), key
    assert phrases.plurals.keys() == ES.plurals.keys()
    for key, forms in phrases.plurals.items():
        assert all(fields(form) == {"n"} for form in forms), key
    assert set(phrases.line_types) == set(LINE_TYPES)
    assert set(phrases.methods) == set(PAYMENT_METHODS)
    assert set(phrases.failures) == set(ES.failures)


def test_tables_cannot_be_changed_at_run_time():
    with pytest.raises(TypeError):
        ES.text["delta"] = "x"


def test_an_unknown_language_is_refused():
    with pytest.raises(ValueError, match="unsupported language 'fr'"):
        phrases_for("fr")


def the_current_bills():
    data = build_dataset(as_of=AS_OF)
    for account in data.accounts.values():
        if len(account.invoices) < 2:
            continue
        current, previous = account.invoices[0], account.invoices[1]
        yield {
            "current": current,
            "previous": previous,
            "invoices": account.invoices,
            "promotions": account.promotions,
            "payments": account.payments,
            "plan": account.plan,
            "today": AS_OF,
        }


def test_rewording_every_line_changes_texts_only(monkeypatch):
    reworded = replace(EN, text=MappingProxyType({key: "» " + template for key, template in EN.text.items()}))
    for bill in the_current_bills():
        before = calc.invoice_change_sheet(**bill, language="en")
        monkeypatch.setitem(PHRASES, "en", reworded)
        after = calc.invoice_change_sheet(**bill, language="en")
        monkeypatch.setitem(PHRASES, "en", EN)
        assert after.key_figures == before.key_figures
        assert [(f.value, f.currency, f.kind, f.derivation) for f in after.facts] == [
            (f.value, f.currency, f.kind, f.derivation) for f in before.facts
        ]
        assert all(a.text.startswith("» ") and a.text != b.text for a, b in zip(after.facts, before.facts))


def test_both_languages_state_the_same_facts_and_key_figures():
    for bill in the_current_bills():
        spanish, english = (calc.invoice_change_sheet(**bill, language=lang) for lang in ("es", "en"))
        assert spanish.key_figures == english.key_figures
        assert [(f.value, f.kind, f.derivation) for f in spanish.facts] == [
            (f.value, f.kind, f.derivation) for f in english.facts
        ]
