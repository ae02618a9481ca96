"""The shared fold and number key keep each caller's behaviour (pinned here before the copies went)."""

import pytest

from core.text import fold, number_key


@pytest.mark.parametrize("text, options, folded", [
    ("¿Cuánto cuesta la reconexión?", {}, "¿cuanto cuesta la reconexion?"),
    ("AÑO Año año", {"keep_enye": True, "case": "lower"}, "an\u0303o an\u0303o an\u0303o"),  # routing
    ("AÑO", {}, "ano"),
    ("Le “garantizo”  el  ’reembolso’", {"quotes": True, "spaces": True}, 'le "garantizo" el \'reembolso\''),
    ("  Te   GARANTIZO\tel reembolso ", {"spaces": True}, "te garantizo el reembolso"),  # grounding
    ("Straße", {}, "strasse"),  # casefold, the judge's and the verifier's
    ("Straße", {"case": "lower"}, "straße"),  # lower, the answer checks' and the writer's
    ("Canción Ñandú", {"case": None}, "Cancion Nandu"),  # variants keep the case
])
def test_fold_options(text, options, folded):
    assert fold(text, **options) == folded


@pytest.mark.parametrize("token, key", [
    ("350,00", "350"), ("350.00", "350"), ("350", "350"), ("1.234,56", "1234.56"), ("1,234.56", "1234.56"),
    ("0,5", "0.5"), ("1.500", "1500"), ("1.234.567", "1234567"), ("007", "7"), ("0", "0"), ("16", "16"),
    ("1.500,00", "1500"), ("1,500.00", "1500"),
])
def test_number_key_reads_every_notation_as_one_value(token, key):
    assert number_key(token) == key
