"""The humanizer: customer messages that sound like a robot or promise outcomes are sent back."""

import json

import pytest

from bot import humanizer
from bot.humanizer import PHRASES_PATH, check

REJECTED = [
    # (language, message, phrase found, words in the reason)
    ("es", "¡Claro! Su factura de abril es de USD 45,00.", "¡claro!", "robotic formula"),
    ("es", "Estimado cliente: su factura vence el 15/04/2024.", "estimado cliente", "robotic formula"),
    ("es", "Gracias por comunicarse con nosotros. Su saldo es Bs. 0,00.", "gracias por comunicarse",
     "robotic formula"),
    ("en", "Certainly! Your April bill is USD 45.00.", "certainly!", "robotic formula"),
    ("en", "**Great question** — your bill is due on 2024-04-15.", "great question", "robotic formula"),
    ("en", "Thank you for reaching out. Your balance is zero.", "thank you for reaching out", "robotic formula"),
    ("es", "Como modelo de lenguaje no tengo acceso a su cuenta.", "como modelo de lenguaje", "as an AI"),
    ("es", "Su saldo es cero; soy una inteligencia artificial y no veo más.", "soy una inteligencia artificial",
     "as an AI"),
    ("en", "As an AI, I cannot see your account.", "as an ai", "as an AI"),
    ("en", "I’m an AI, so I can't change plans.", "i'm an ai", "as an AI"),
    ("es", "Lo siento mucho. Disculpe la demora con su factura.", "disculpe", "too many apologies"),
    ("es", "Lamentamos el error. Perdón por las molestias. Lo sentimos.", "perdon", "too many apologies"),
    ("en", "Sorry for the delay. We apologize for the error.", "apologize", "too many apologies"),
    ("es", "Le reembolsaremos el cobro duplicado.", "le reembolsaremos", "promises a refund"),
    ("es", "Su reembolso llegará mañana a su cuenta.", "reembolso llegara manana", "promises a refund"),
    ("es", "En 3 días hábiles se le devolverá el monto.", "se le devolvera", "promises a refund"),
    ("es", "Hoy mismo procesamos su reembolso.", "hoy mismo procesamos su reembolso", "promises a refund"),
    ("en", "We will refund the duplicate charge.", "we will refund", "promises a refund"),
    ("en", "Your refund will arrive within 3 days.", "refund will arrive within 3 days", "promises a refund"),
    ("en", "Tomorrow you get your money back.", "tomorrow you get your money back", "promises a refund"),
    ("es", "Le garantizamos el reembolso del cargo.", "le garantizamos el reembolso", "banned promise"),
    ("en", "Your payment has been refunded.", "has been refunded", "banned promise"),
]


@pytest.mark.parametrize(("language", "message", "phrase", "reason"), REJECTED)
def test_forbidden_phrases_are_rejected_with_the_reason(language, message, phrase, reason):
    verdict = check(message, language=language)
    assert not verdict.ok
    assert verdict.phrase == phrase
    assert reason in verdict.reason
    assert f'"{phrase}"' in verdict.reason


ACCEPTED = [
    ("es", "Su factura de abril es de USD 45,00 y vence el 15/04/2024."),
    ("es", "Lo siento, su factura de abril es de USD 45,00."),
    ("es", "Un agente revisará el cobro duplicado y le confirmará el resultado."),
    ("es", "Los pagos por transferencia se reflejan en 24 a 48 horas hábiles."),
    ("es", "Claramente el cargo aparece dos veces; un agente lo revisará."),
    ("en", "Your April bill is USD 45.00, due on 2024-04-15."),
    ("en", "Sorry about that: an agent will review the duplicate charge."),
    ("en", "Refund requests are reviewed by an agent."),
    ("es-VE", "Su cuenta está activa."),
]


@pytest.mark.parametrize(("language", "message"), ACCEPTED)
def test_plain_helpful_messages_pass(language, message):
    assert check(message, language=language).ok


def test_an_opener_only_counts_at_the_start():
    assert check("Su factura es de USD 45,00. Por supuesto, puede pagar en línea.", language="es").ok
    verdict = check("¡Por supuesto! Su factura es de USD 45,00.", language="es")
    assert (verdict.ok, verdict.phrase) == (False, "¡por supuesto!")


def test_a_long_phrase_is_not_counted_again_as_its_shorter_part():
    # "disculpas" must not also count as "disculpa": one apology only.
    assert check("Le pedimos disculpas por el cobro.", language="es").ok


def test_an_unknown_language_is_checked_against_every_list():
    assert not check("As an AI, 我无法查看您的账户。", language="zh").ok
    assert not check("Como modelo de lenguaje, 我无法查看。", language="zh").ok
    assert check("您的账单是 26.02 美元。", language="zh").ok


def test_the_language_selects_its_own_lists():
    assert check("Sorry. Sorry.", language="es").ok
    assert not check("Sorry. Sorry.", language="en").ok


def test_extra_banned_phrases_are_checked():
    message = "Su caso quedó resuelto para siempre."
    assert check(message, language="es").ok
    verdict = check(message, language="es", banned_phrases=["Resuelto para siempre"])
    assert (verdict.ok, verdict.phrase) == (False, "resuelto para siempre")


def test_the_phrase_lists_are_data_read_once(tmp_path, monkeypatch):
    data = json.loads(PHRASES_PATH.read_text(encoding="utf-8"))
    data["languages"]["en"]["openers"].append("howdy partner")
    data["max_apologies"] = 0
    custom = tmp_path / "phrases.json"
    custom.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(humanizer, "PHRASES_PATH", custom)
    humanizer._data.cache_clear()
    try:
        assert check("Howdy partner, your bill is USD 45.00.", language="en").phrase == "howdy partner"
        assert check("Sorry, your bill is USD 45.00.", language="en").reason == (
            'the message has too many apologies ("sorry"): at most 0 per message.'
        )
        custom.unlink()  # loaded once: later checks do not read the file again
        assert not check("Howdy partner!", language="en").ok
    finally:
        humanizer._data.cache_clear()


def test_every_list_in_the_data_has_both_languages():
    data = json.loads(PHRASES_PATH.read_text(encoding="utf-8"))
    keys = {"openers", "ai_self_reference", "apologies", "refund_promises", "refund_promise_patterns"}
    assert set(data["languages"]) == {"es", "en"}
    for lists in data["languages"].values():
        assert set(lists) == keys and all(lists[k] for k in keys)
