"""Which language a message is written in: Spanish or English, by counting marker words. Pure: no Django."""

from __future__ import annotations

import re

_SPANISH_MARKERS = re.compile(
    r"[¿¡ñáéíóú]|\b(el|la|los|las|de|del|que|por|para|mi|me|cuanto|cuando|como|porque|factura|cobro|pago|"
    r"quiero|hola|gracias|tengo|estoy|es|una|un|con|no|si|ya|pero|y|buenas|buenos|vale|listo)\b"
)
_ENGLISH_MARKERS = re.compile(
    r"\b(the|my|is|are|what|why|how|when|bill|invoice|payment|want|please|hello|hi|thanks|i|you|your|do|does|"
    r"can|to|of|and|a|an|with|it|me|thank|hey|good|morning)\b"
)


def detect_language(text: str, default: str = "es") -> str:
    """Return 'es' or 'en' by counting marker words; ties keep the default."""
    lowered = text.lower()
    spanish = len(_SPANISH_MARKERS.findall(lowered))
    english = len(_ENGLISH_MARKERS.findall(lowered))
    if spanish == english:
        return default
    return "es" if spanish > english else "en"
