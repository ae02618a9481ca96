"""The text the routing rules read: folded, with regional words read as customers mean them. Pure: no Django.

Venezuelan and Colombian Spanish say "cancelar" for paying an amount ("¿cuánto debo cancelar?", "ya
cancelé la factura") and call a utility bill by what it bills ("la luz está carísima", "¿hasta cuándo
puedo pagar la luz?"). Read literally, the first asks to end the service and the second is about
electricity. The rules read the message as meant: "cancelar" about an amount or a bill is paying, and
"la luz" or "la energía" about paying, an amount or a bill is the bill — while a power cut ("se fue la
luz", "no hay luz") stays a power cut, which this assistant cannot help with. Putting in the service is installing
it ("¿cuánto cuesta que me pongan la fibra?", "cuando me montan el internet"). The service cut off is its suspension
and putting it back its reconnection ("si me cortan el servicio", "que me lo vuelvan a poner"), the words the help
center uses.

Retrieval, the classifier, the writer and the relevance check read the message as meant too when a regional word
was read (`for_search`), so "¿cuánto debo cancelar?" finds what paying says, not the cancellation page.
"""

from __future__ import annotations

import re

from core.text import fold

_REPEATS = re.compile(r"([a-z])\1{2,}")


def rx(*patterns: str) -> re.Pattern:
    return re.compile("|".join(f"(?:{p})" for p in patterns))


_CANCEL = r"cancel(?:ar|o|a|e|amos|aron|aste|ado|ada|ados|e|ando)"
_BILLED = (r"(?:la |el |mi |mis |los |las |lo que |todo lo que )?(?:factura|facturas|recibo|recibos|deuda|saldo|monto|"
           r"mensualidad|cuota|cuotas|pendiente|total|luz|energia|agua|gas|servicio de (?:la )?(?:luz|energia|agua|gas))")
_CANCEL_IS_PAY = rx(
    rf"\b(?:cuanto|monto|cuanto es lo que)\b[^.?!]{{0,25}}\b{_CANCEL}\b",
    rf"\b(?:debo|tengo que|hay que|me toca|voy a|puedo|quiero|necesito)\s+{_CANCEL}\b(?!\s+(?:el|mi)\s+"
    r"(?:plan|contrato|servicio de internet|suscripcion|cuenta)\b)",
    rf"\b{_CANCEL}\s+{_BILLED}\b",
    rf"\b(?:ya|se ha|se han|he|hemos|ya lo|ya la)\s+{_CANCEL}\b",
    rf"\b{_CANCEL}\s+(?:por|con|en|a tiempo|antes|ayer|hoy|anoche|esta (?:manana|tarde|semana)|el (?:lunes|martes|"
    r"miercoles|jueves|viernes|sabado|domingo|mes pasado|dia|\d+)|la semana|hace)\b",
)
# A power cut, and the power coming back, said of the power itself: "se nos fue la luz", "¿a qué hora vuelve la luz?".
POWER_CUT = rx(r"\b(?:se (?:me |nos |le |les )?(?:fue|va|corto|cae|quito)|sin|no hay|no tengo|no tenemos|corte de|"
               r"cortaron|(?:cuando|a que hora) (?:vuelve|llega|regresa|pondran)) (?:la )?(?:luz|energia|electricidad)\b",
               r"\b(?:apagon|apagones|power (?:cut|outage)s?|blackouts?)\b",
               r"\b(?:the |our |my )?(?:power|electricity|lights?) (?:is|are|went|has been|have been|'s) ?(?:out|off|gone|down)\b",
               r"\b(?:no|without) (?:power|electricity)\b")
_PUT_IN = rx(r"\b(?:pongan|ponga|ponen|pone|poner|ponerme|pusieron|puso|pondran|coloquen|colocan|colocar|monten|montan|"
             r"montar|montaron)\s+(?=(?:la |el |mi |una |un )?(?:fibra|internet|servicio|linea|conexion|router|modem|"
             r"antena)\b)")
# The service cut off for not paying is its suspension, and putting it back its reconnection: "si me cortan el
# servicio…", "me cortaron el internet", "sin cortarme", "después del corte", "¿cuánto pago para que me lo vuelvan a
# poner?". Cut said of the power, the water or the gas ("me cortaron la luz") is not the service; "fecha de corte" is
# a bill's closing date, not a cut.
_CUT_ENDINGS = {"ar": "er", "an": "en", "aron": "ieron", "en": "an", "o": "io", "ado": "ido", "ada": "ida",
                "aran": "eran", "ara": "era", "arme": "erme", "arnos": "ernos", "arle": "erle", "arles": "erles",
                "ando": "iendo"}
_CUT = rf"cort(?:{'|'.join(sorted(_CUT_ENDINGS, key=len, reverse=True))})"
_NOT_THE_SERVICE = (r"(?!\s+(?:(?:la|el|el servicio de|el servicio de la)\s+)?"
                    r"(?:luz|agua|gas|energia|electricidad|cable|telefono|pelo|cabello))")
_CUT_OFF = rx(
    rf"\b(?:me|nos|le|les|te|lo|la) (?:(?:van|iban|pueden|podrian|va|vayan) a )?{_CUT}\b{_NOT_THE_SERVICE}",
    rf"\b{_CUT}(?=\s+(?:el|mi|nuestro|la|nuestra|su)\s+(?:internet|servicio|linea|conexion|fibra|wifi)\b)",
    r"\bcort(?:arme|arnos|arle|arles)\b",
    rf"\b(?:tengo|tenemos|tiene|tienen|esta|estoy|estamos|estan|quede|quedo|quedamos)\s+(?:el (?:internet|servicio) )?"
    rf"{_CUT}\b{_NOT_THE_SERVICE}",
    r"\b(?:el|del) corte\b(?!\s+de\s+(?:luz|agua|gas|energia|electricidad|pelo|cabello))",
)
_PUT_BACK = rx(r"\b(?:vuelv(?:an|en|a)|volver|vuelvo)\s+a\s+(?:poner|conectar|activar|instalar|prender|dar)\b")
_PUT_BACK_VERBS = {"vuelvan": "reconecten", "vuelven": "reconectan", "vuelva": "reconecte", "volver": "reconectar",
                   "vuelvo": "reconecto"}


def _suspend(match: re.Match) -> str:
    said = match.group(0)
    if said.endswith(" corte"):  # the noun: "del corte" → "de la suspension"
        return "de la suspension" if said.startswith("del") else "la suspension"
    start = said.index("cort")
    return f"{said[:start]}suspend{_CUT_ENDINGS[said[start + 4:]]}"


# A speed said the way customers say it: "el plan de 300 megas", "100 megs", "50mb" is a speed in Mbps, as the plans
# are named and described ("Fibra 300 … 300 Mbps de bajada").
_MEGAS = rx(r"(?<=\d)\s*(?:megas?|megs?|mb|mbs|megabits?|mega bits?)\b")
# Spanish as typed in a chat: "k" for "qu" and "c", a silent "h" left out ("kiero ablar con alguien", "kuanto debo").
_CHAT_SPELLINGS = {"kiero": "quiero", "kieres": "quieres", "kiere": "quiere", "kieren": "quieren", "ke": "que",
                   "kien": "quien", "kuanto": "cuanto", "kuanta": "cuanta", "kuantos": "cuantos", "kuando": "cuando",
                   "kual": "cual", "ablar": "hablar", "ablame": "hablame", "ablarle": "hablarle", "ablen": "hablen",
                   "ablo": "hablo"}
_CHAT_SPELLING = re.compile(rf"\b(?:{'|'.join(_CHAT_SPELLINGS)})\b")
_UTILITY_BILL = rx(r"\b(?:la |el recibo de (?:la )?|el servicio de (?:la )?|la factura de (?:la )?)?(?:luz|energia)\b")


def _pay(match: re.Match) -> str:
    def verb(found: re.Match) -> str:
        ending = found.group(0)[len("cancel"):]
        return ("pagu" if ending.startswith("e") else "pag") + ending  # cancelé → pagué, cancelar → pagar

    return re.sub(_CANCEL, verb, match.group(0))


def _readings(folded: str) -> list[tuple[re.Pattern, object]]:
    """The regional words to read in a folded message and what each means, in order (a power cut keeps "la luz")."""
    steps: list[tuple[re.Pattern, object]] = [(_CHAT_SPELLING, lambda match: _CHAT_SPELLINGS[match.group(0)]),
                                              (_CANCEL_IS_PAY, _pay), (_PUT_IN, "instalen "), (_MEGAS, " Mbps"),
                                              (_CUT_OFF, _suspend),
                                              (_PUT_BACK, lambda match: _PUT_BACK_VERBS[match.group(0).split()[0]])]
    if not POWER_CUT.search(folded):
        steps.append((_UTILITY_BILL, "la factura"))
    return steps


def read_as_meant(text: str) -> str:
    """Return the message folded (lower case, no accents, ñ kept, letters not tripled), regional words read as meant."""
    folded = _REPEATS.sub(r"\1\1", fold(text, case="lower", keep_enye=True))
    for pattern, meaning in _readings(folded):
        folded = pattern.sub(meaning, folded)
    return folded


def for_search(text: str) -> str:
    """Return what retrieval should search for: the message as written, with a regional word in it read as meant
    ("¿cuánto debo cancelar?" → "¿cuánto debo pagar?"); accents and case are kept where nothing was read."""
    written, folded = text, fold(text, case="lower", keep_enye=True)
    if len(folded) != len(written):  # folding changed the length: its positions are not the message's
        meant = read_as_meant(text)
        return meant if meant != _REPEATS.sub(r"\1\1", folded) else text
    for pattern, meaning in _readings(folded):
        for match in reversed(list(pattern.finditer(folded))):
            said = meaning(match) if callable(meaning) else meaning
            written = written[:match.start()] + said + written[match.end():]
            folded = folded[:match.start()] + said + folded[match.end():]
    return written
