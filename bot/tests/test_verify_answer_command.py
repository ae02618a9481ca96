"""python manage.py verify_answer: the verdict of one answer, JSON in and JSON out."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

# JSON text, not Python: the billing value 45.00 is a JSON number written with its two decimals.
EVIDENCE = """[
    {"id": "E1", "text": "Factura F-1001 de marzo: monto Bs. 1.234,56, vence el 2024-03-15.", "value": "1234.56"},
    {"id": "E2", "text": "Factura F-1002 de abril", "value": 45.00},
    {"id": "E3", "text": "Cargo por reconexión: USD 31,00.", "value": null}
]"""


def run(monkeypatch, payload):
    """Feed the payload on stdin (evidence spliced in as JSON text) and return the parsed stdout."""
    raw = json.dumps(payload).replace('"EVIDENCE"', EVIDENCE)
    monkeypatch.setattr("sys.stdin", io.StringIO(raw))
    out = io.StringIO()
    call_command("verify_answer", stdout=out)
    return json.loads(out.getvalue())


def test_a_grounded_answer_prints_the_verdict(monkeypatch):
    verdict = run(monkeypatch, {
        "answer": "Su factura de abril es de USD 45,00 [E2]; con la reconexión suma USD 76,00 [E2][E3].",
        "evidence": "EVIDENCE",
        "customer_view": True,
    })
    assert verdict == {
        "grounded": True,
        "problems": [],
        "warnings": [],
        "derived": [{"token": "76,00", "value": "76.00", "expression": "45.00 (E2) + 31,00 (E3)",
                     "evidence": ["E2", "E3"]}],
    }


def test_an_ungrounded_answer_is_not_an_error(monkeypatch):
    verdict = run(monkeypatch, {
        "answer": "Su factura de marzo es de Bs. 1.235 [E1]. Vence el 16/03/2024 [E1].",
        "evidence": "EVIDENCE",
        "customer_view": False,
    })
    assert verdict["grounded"] is False
    assert [(p["token"], p["sentence"]) for p in verdict["problems"]] == [
        ("1.235", "Su factura de marzo es de Bs. 1.235 [E1]."),
        ("16/03/2024", "Vence el 16/03/2024 [E1]."),
    ]
    assert "it looks like 1.234,56 (E1) rounded" in verdict["problems"][0]["reason"]


def test_swapped_citations_are_reported_as_the_wrong_item(monkeypatch):
    verdict = run(monkeypatch, {
        "answer": "Abril USD 31,00 [E2] y reconexión USD 45,00 [E3].",
        "evidence": "EVIDENCE",
        "customer_view": True,
    })
    assert [(p["token"], "cited the wrong item" in p["reason"]) for p in verdict["problems"]] == [
        ("31,00", True), ("45,00", True)]


def test_a_json_number_value_keeps_its_decimals(monkeypatch):
    # 45.00 must not become 45.0 on the way in: the derived expression shows the value exactly as the
    # system of record wrote it.
    raw = EVIDENCE[:-2] + ',\n    {"id": "E4", "text": "Otro cargo", "value": 45.00}\n]'
    monkeypatch.setattr("sys.stdin", io.StringIO(f'{{"answer": "Debe 90.00 [E2][E4].", "evidence": {raw}}}'))
    out = io.StringIO()
    call_command("verify_answer", stdout=out)
    assert json.loads(out.getvalue())["derived"][0]["expression"] == "45.00 (E2) + 45.00 (E4)"


def test_the_customer_view_is_the_default(monkeypatch):
    verdict = run(monkeypatch, {"answer": "Revise su timezone_change_date.", "evidence": []})
    assert verdict["grounded"] is False
    assert verdict["problems"][0]["token"] == "timezone_change_date"


def test_banned_phrases_from_settings_extend_the_defaults(monkeypatch, settings):
    payload = {"answer": "Su caso quedó resuelto para siempre.", "evidence": [], "customer_view": True}
    assert run(monkeypatch, payload)["grounded"] is True
    settings.GROUNDING_BANNED_PHRASES = ["resuelto para siempre"]
    assert [p["token"] for p in run(monkeypatch, payload)["problems"]] == ["resuelto para siempre"]


def test_key_figures_can_be_required(monkeypatch):
    payload = {"answer": "Su factura es de USD 45,00 [E2].", "evidence": "EVIDENCE", "customer_view": True,
               "key_figures": ["31,00"]}
    assert [p["token"] for p in run(monkeypatch, payload)["problems"]] == ["31,00"]


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("", "stdin is not JSON"),
        ("{answer:", "stdin is not JSON"),
        ("[]", 'expected an object {"answer", "evidence", "customer_view"}'),
        ("[" * 5_000 + "]" * 5_000, "stdin nests deeper than 20 levels"),
        ('{"evidence": []}', '"answer" must be a string'),
        ('{"answer": "Hola"}', 'evidence must be a list of {"id", "text", "value"}'),
        ('{"answer": "Hola", "evidence": {"id": "E1"}}', "evidence must be a list"),
        ('{"answer": "Hola", "evidence": [], "customer_view": "yes"}', '"customer_view" must be true or false'),
        ('{"answer": "Hola", "evidence": ["E1"]}', "evidence[0] must be an object"),
        ('{"answer": "Hola", "evidence": [{"text": "x"}]}', 'evidence[0].id must be a string such as "E1"'),
        ('{"answer": "Hola", "evidence": [{"id": "chunk-3", "text": "x"}]}', "not 'chunk-3'"),
        ('{"answer": "Hola", "evidence": [{"id": "E1", "text": 5}]}', "evidence[0].text must be a string"),
        ('{"answer": "Hola", "evidence": [{"id": "E1", "text": "x", "value": true}]}',
         "evidence[0].value must be a string, a number or null"),
        ('{"answer": "Hola", "evidence": [{"id": "E1", "text": "x", "value": [1]}]}',
         "evidence[0].value must be a string, a number or null"),
        ('{"answer": "Hola", "evidence": [], "key_figures": "45,00"}', '"key_figures" must be a list of strings'),
        ('{"answer": "Hola", "evidence": [], "key_figures": ["el sobrecargo"]}', "holds no number"),
    ],
)
def test_malformed_input_fails_with_a_one_line_message(monkeypatch, stdin, message):
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    out = io.StringIO()
    with pytest.raises(CommandError) as raised:
        call_command("verify_answer", stdout=out)
    text = str(raised.value)
    assert text.startswith("malformed input: ") and message in text
    assert "\n" not in text
    assert raised.value.returncode != 0
    assert out.getvalue() == ""
