"""Small talk: a message that holds nothing but courtesy — a greeting, thanks, an acknowledgement, a goodbye.

Pure: no Django. A complaint, a one-word topic ("factura", "pagar") or a greeting around a question is not
small talk: any word outside the courtesy vocabulary makes the message a request.
"""

from __future__ import annotations

import re

from bot.routing.types import Courtesy
from core.text import fold

_GREETING_WORDS = {
    "hola", "ola", "holi", "buenas", "buenos", "buen", "dia", "dias", "tardes", "noches", "saludos", "epa", "que",
    "mas", "tal", "como", "estas", "estan", "esta", "va", "les", "te", "todo", "bien", "chamo", "pana", "hi",
    "hello", "hey", "there", "good", "morning", "afternoon", "evening", "how", "are", "you", "guys", "doing",
    "whats", "up", "sup", "hiya", "yo", "y", "tu", "usted", "ustedes", "amigo", "amiga", "q", "alla", "aca",
    "andas", "r", "u", "saludo", "un", "abrazo", "bendiciones", "tio", "tia", "che", "mate", "chevere", "everyone",
    "everybody", "friend", "friends", "amanecio", "amaneciste", "amanecieron", "dios", "bendiga", "bendigan", "le",
}
_THANKS_WORDS = {
    "gracias", "grasias", "mil", "muchas", "muchisimas", "thanks", "thank", "thx", "ty", "tks", "so", "much",
    "appreciate", "it", "appreciated", "de", "nada", "a", "lot", "very", "muy", "amable", "genial", "great",
    "awesome", "perfect", "perfecto", "excelente", "super", "buenisimo", "cheers", "gentil", "amables", "gentiles",
    "agradecido", "agradecida", "kind", "kindly", "x", "por", "la", "info", "todo", "eres", "lo", "maximo", "grax",
    "ayuda", "help", "atencion", "mi", "ti", "to", "for", "the", "your", "tu", "su",
}
_ACK_WORDS = {
    "ok", "okay", "okey", "oki", "vale", "listo", "perfecto", "fino", "bueno", "entendido", "si", "sip", "ya",
    "dale", "claro", "de", "acuerdo", "esta", "cool", "got", "it", "noted", "sure", "yes", "yep", "yeah", "k",
    "sounds", "good", "alright", "all", "right", "fine", "perfect", "great", "ah", "oh", "aja", "jaja", "jajaja",
    "jajajaja", "lol", "haha", "jeje", "understood", "i", "see", "bien", "va", "genial", "okis", "pues", "entonces",
    "entendi", "then", "dokey", "doki", "dokie", "okie", "eso", "era", "es", "todo", "quedo", "that's", "thats",
}
_FAREWELL_WORDS = {
    "chao", "chau", "adios", "hasta", "luego", "pronto", "manana", "nos", "vemos", "bye", "goodbye", "see", "ya",
    "you", "later", "have", "a", "nice", "good", "day", "feliz", "dia", "night", "take", "care", "cuidate",
    "goodnight", "nite", "one", "weekend", "fin", "semana", "navidad", "equipo", "todos", "tengan", "tenga",
    "que", "buena", "buen", "lindo", "merry", "christmas", "tengas", "cuidense", "cuidese", "cuidate", "week", "evening",
}
# Words of address that go with any courtesy ("listo pana", "dale chamo", "cheers mate").
_VOCATIVES = {"chamo", "pana", "tio", "tia", "che", "mate", "amigo", "amiga", "guys", "bro", "hermano", "vecino"}
_COURTESY_WORDS = _GREETING_WORDS | _THANKS_WORDS | _ACK_WORDS | _FAREWELL_WORDS | _VOCATIVES | {
    "sos", "genio", "crack", "that", "s", "sorted", "paciencia", "el", "today", "r", "u", "bro", "hermano", "vecino"}
_DOUBLED = re.compile(r"([a-z])\1")
_STUTTER = re.compile(r"^([a-z]{1,4}?)\1+$")  # "okok", "sisi"


def _known(word: str) -> str:
    """Return the courtesy word a typed word stands for ("holaa" → "hola", "okok" → "ok"), or the word itself."""
    if word in _COURTESY_WORDS:
        return word
    for candidate in (_DOUBLED.sub(r"\1", word), _STUTTER.sub(r"\1", word)):
        if candidate in _COURTESY_WORDS:
            return candidate
    return word
# What a longer social message holds (thanks for help already given, "nothing needed", "never mind, it's
# sorted", season's greetings): a classifier's small talk stands only with one of these and no request in sight.
SOCIAL_MARKERS = re.compile(
    r"\b(gracias|thanks|thank you|appreciate|agradec\w*|saludos|saludar|un saludo|bendiciones|feliz|merry|"
    r"nothing (urgent|needed)|no (necesito|hace falta)|ya no hace falta|never ?mind|nvm|olvidalo|ignore my|"
    r"(ya )?(se|lo|me lo) (resolvio|soluciono|arregle|resolvieron|arreglo)|sorted|fixed itself|resuelto|"
    r"solo (queria|para|pasaba)|just (wanted|dropping)|que (tengan?|esten) (un |una )?(buen|lindo|bonito|feliz)|"
    r"have a (good|great|nice)|hola|hello|hey|hi|good (morning|evening|night|afternoon)|buen(os|as)? (dia|dias|tardes|"
    r"noches)|bendig\w*|dios|cuid\w+|hasta luego|chao|bye|okey|okis|alright|listo|dale|grax|thx|de nada|"
    r"(eso|that'?s) (era|es|was|is) (todo|all)|ya (quedo|esta)|todo bien|all good|all set)\b")
# A question, a complaint or a plea in the message: not small talk, whatever else it says.
REQUEST_MARKERS = re.compile(
    r"[?¿]|\b(cuant[oa]s?|por que|porque|how much|why|what|como (hago|puedo)|caro|cara|carisim[oa]|expensive|"
    r"mal[oa]?|pesim[oa]|terrible|awful|horrible|estafa|robo|no funciona|doesn'?t work|not working|sigue sin|"
    r"todavia no|still (no|not)|(?<!por la )(?<!por tu )(?<!por su )(?<!for the )(?<!for your )(?:ayuda|help)|"
    r"necesito|i need|quiero|i want|puede[ns]?|could you|can you)\b")
_WORD = re.compile(r"[a-zñ']+")
_REPEATS = re.compile(r"(.)\1{2,}")


def courtesy_of(text: str) -> Courtesy | None:
    """Return the kind of small talk a message is when it holds nothing but courtesy, None otherwise.

    Emoji- and punctuation-only messages are acknowledgements. A question mark keeps "¿cómo están?" a
    greeting, but any word outside the courtesy vocabulary makes the message a request.
    """
    if any(ch.isdigit() for ch in text):
        return None  # a number is about something ("¿y el de 600?"): the words around it are not all there is
    folded = _REPEATS.sub(r"\1", fold(text, case="lower", keep_enye=True))  # "holaaa" → "hola"
    words = [_known(w.strip("'")) for w in _WORD.findall(folded)]
    words = [w for w in words if w]
    if not words:
        return Courtesy.ACK if text.strip() else None
    if any(w not in _COURTESY_WORDS for w in words) or len(words) > 8:
        return None
    present = set(words)
    if present & {"gracias", "grasias", "thanks", "thank", "thx", "ty", "tks", "appreciate", "cheers", "amable",
                  "amables", "gentil", "gentiles", "agradecido", "agradecida", "kind", "genio", "crack", "grax"}:
        return Courtesy.THANKS
    if present & {"chao", "chau", "adios", "hasta", "vemos", "bye", "goodbye", "later", "care", "cuidate",
                  "feliz", "nice", "goodnight", "nite", "weekend", "navidad", "christmas", "cuidense", "cuidese",
                  "tengas"} or (present >= {"see", "ya"}):
        return Courtesy.FAREWELL
    if present & {"hola", "ola", "holi", "buenas", "buenos", "saludos", "epa", "hi", "hello", "hey", "morning",
                  "afternoon", "evening", "hiya", "sup", "tal", "estas", "estan", "doing", "andas", "amanecio"} \
            or present >= {"how", "are"} or present >= {"que", "mas"}:
        return Courtesy.GREETING
    if present <= _ACK_WORDS | _VOCATIVES:
        return Courtesy.ACK
    return Courtesy.THANKS  # warm words with no marker of their own ("un abrazo", "bendiciones", "de nada")
