"""A follow-up leans on the turn before it: read it with the question it follows. Pure: no Django.

"¿y el mes pasado?", "why is it lower?", "and for a business?", "y eso cuánto es en bolívares?" name no topic of
their own, or only half of one: alone they route to the wrong place, retrieve nothing that fits, or get the
previous reply again. A message that opens with a connective ("y", "and", "what about", "pero"), refers back ("eso",
"la otra", "it", "those", "mine") or is a short why/how question without a subject is read together with the
customer's previous question; the rules that read the message alone (a request for a person, courtesy, media)
still come first.

A correction ("sorry, I meant the installation", "no, quise decir la instalación") keeps what the previous question
asked (how much, how long) but not what it asked it about: what it names is read after the previous question's
asking words only ("how much is the installation"), so it finds that thing instead of the previous answer again.
"""

from __future__ import annotations

import re

from bot.document_answers import STOPWORDS
from bot.joined import joined
from bot.routing.language import detect_language
from core.text import fold

_OPENS = re.compile(
    r"^\W*(y|e|and|n|what about|how about|pero|but|also|tambien|so|ok so|okay so|entonces|es que|o sea|sorry,? i meant|"
    r"i meant|quise decir|me referia|that'?s|eso|esa|ese|esos|esas|la del|el del|la de|el de|las del|los del|"
    r"la otra|el otro|the other|the one|la anterior|el anterior|and if|y si|what if|y para|and for|y con|and with|"
    r"y cuanto|and how)\b")
_REFERS = re.compile(r"\b(eso|esa|ese|esos|esas|esto|it|that|those|these|them|la otra|el otro|the other|mine|la mia|"
                     r"el mio|lo mismo|the same|de esos|of those|ellos|ellas)\b")
_CORRECTS = re.compile(
    r"^\W*(?:(?:no|sorry|perdon|disculpa|oops)\W+)*(?:i meant|i mean|what i meant was|i was asking about|quise decir|"
    r"me referia a|me refiero a|te preguntaba por|preguntaba por)\b")
# The words that say how a question asks, not what about ("cuánto cuesta", "how much is the").
_ASKING_WORDS = STOPWORDS | {"cuesta", "cuestan", "cobran", "cost", "costs", "vale", "valen", "tarda", "demora", "take",
                             "takes", "dias", "days", "horas", "hours"}
_BARE_WHY = re.compile(r"^\W*(por ?que|why|how come|como asi)\b")
# "The other one" or "mine": a thing the previous turn did not name, or named among others.
_OPEN_REFERENCE = re.compile(r"\b(el otro|la otra|los otros|las otras|the other ones?|the others|the other|mine|el mio|"
                             r"la mia|los mios|las mias|my one)\b")
_LEADS = frozenset({"y", "e", "and", "ok", "okay", "so", "pero", "but", "entonces", "about", "also", "tambien", "what",
                    "for", "para", "well", "bueno", "vale", "hey", "oye"})
_WORD = re.compile(r"\w+")
SHORT = 10  # words: longer messages carry their own topic


def follows_up(text: str) -> bool:
    """Whether a message leans on the previous turn (see the module's docstring)."""
    folded = fold(text, case="lower").strip()
    words = _WORD.findall(folded)
    if not words or len(words) > SHORT * 2:
        return False
    if _OPENS.search(folded) or _CORRECTS.search(folded):
        return True
    return len(words) <= SHORT and bool(_REFERS.search(folded) or _BARE_WHY.search(folded))


def leaves_referent_open(text: str) -> bool:
    """Whether a follow-up points at "the other one" or "mine" and names nothing else ("¿y el otro?", "¿y la otra?",
    "ok so how long for mine?"): which one it means is the customer's to say, not the bot's to guess."""
    folded = fold(text, case="lower")
    if not _OPEN_REFERENCE.search(folded):
        return False
    rest = _WORD.findall(_OPEN_REFERENCE.sub(" ", folded))
    return len(rest) <= SHORT and all(word in _ASKING_WORDS or word in _LEADS for word in rest)


def previous_question(history: list[tuple[str, str]]) -> str:
    """Return the customer's last message that names what it is about ("" when none): a bare "¿y el otro?" the bot
    answered with a question is skipped, so the reply that names the thing is read with the question before it."""
    return next((said for role, said in reversed(history)
                 if role == "user" and said.strip() and not leaves_referent_open(said)), "")


# Things a follow-up may swap for the one the previous question named: a plan's speed ("n the 1000 one?" after the
# Fiber 300's annual price), a kind of plan ("and for the trial?" after the annual plan's refund). Each group's words
# (folded), and the word that replaces the previous question's in each language.
_SPEED = re.compile(r"\b(100|300|600|1000)\b")
_TERMS = (
    (re.compile(r"\b(annual|yearly|anual|anuales)\b"), {"en": "annual", "es": "anual"}),
    (re.compile(r"\b(trial|prueba)\b"), {"en": "trial", "es": "de prueba"}),
    (re.compile(r"\b(monthly|mensual|mensuales)\b"), {"en": "monthly", "es": "mensual"}),
)
# ...or a way of paying ("¿pago IGTF si pago por pago móvil?" → "y x zelle?").
_METHODS = (
    (re.compile(r"\b(pago movil|mobile payment)\b"), {"en": "pago móvil", "es": "pago móvil"}),
    (re.compile(r"\b(zelle)\b"), {"en": "Zelle", "es": "Zelle"}),
    (re.compile(r"\b(transferencia|transfer|bank transfer)\b"), {"en": "bank transfer", "es": "transferencia"}),
    (re.compile(r"\b(tarjeta|card)\b"), {"en": "card", "es": "tarjeta"}),
    (re.compile(r"\b(efectivo|cash)\b"), {"en": "cash", "es": "efectivo"}),
    (re.compile(r"\b(domiciliacion|direct debit)\b"), {"en": "direct debit", "es": "domiciliación"}),
)


def _swapped(text: str, previous: str) -> str:
    """Return the previous question with the thing it named swapped for the one the follow-up names ("" when the
    follow-up names none, or the same one)."""
    said, before = fold(text, case="lower"), fold(previous, case="lower")
    if len(before) != len(previous):
        return ""  # folding moved the positions: the previous question cannot be edited where it was written
    new, old = _SPEED.findall(said), _SPEED.findall(before)
    if len(set(new)) == 1 and len(set(old)) == 1 and new[0] != old[0]:
        return _SPEED.sub(new[0], previous)
    language = detect_language(previous)
    for group in (_TERMS, _METHODS):
        named = [index for index, (pattern, _) in enumerate(group) if pattern.search(said)]
        held = [(index, found) for index, (pattern, _) in enumerate(group) if (found := pattern.search(before))]
        if len(named) == 1 and len(held) == 1 and named[0] != held[0][0]:
            found, word = held[0][1], group[named[0]][1][language]
            return f"{previous[:found.start()]}{word}{previous[found.end():]}"
    return ""


def with_previous(text: str, history: list[tuple[str, str]]) -> str:
    """Return the message joined with the customer's previous question, or the message itself when there is none.

    A follow-up that swaps the thing the previous question named for another ("¿y el de 600?", "and for the
    trial?") is the previous question about that other thing."""
    previous = previous_question(history)
    if not previous or not follows_up(text):
        return text
    swapped = _swapped(text, previous)
    if swapped:
        return swapped
    folded = fold(text, case="lower")
    correction = _CORRECTS.search(folded)
    if correction:
        asking = [word for word in _WORD.findall(fold(previous, case="lower")) if word in _ASKING_WORDS]
        # Where folding kept the length (accents dropped one for one), the match ends at the same place as written.
        meant = (text[correction.end():] if len(folded) == len(text) else text).strip(" ,.:;!?¿¡")
        return f"{' '.join(asking)} {meant}".strip() if asking and meant else text
    return joined(text, previous)
