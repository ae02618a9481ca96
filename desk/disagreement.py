"""Does a subscriber's message complain about the bot's answer? Pure rules: no Django.

Two signals come from the customer without an agent:
- a negative reaction (👎, 😡, 😠 …) on a bot message — `negative_reaction(emoji)`;
- a message written soon after a bot answer that disputes it, says it was not understood, or is
  sarcastic or angry about it — `suspected_complaint(...)`. It is only *suspected*: the rules below
  read words, not intent.

The rules were chosen on the dev split of evals/fixtures/labels/followups.jsonl only; the test split
measures them (docs/desk.md has both figures, desk/tests/test_disagreement.py guards the test ones).
Each rule has a name, stored with the signal, so an analyst sees why a message was suspected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.text import fold

# A follow-up counts only this soon after the bot's answer: later, it is about something else.
FOLLOWUP_WINDOW = timedelta(minutes=10)

# Reactions that say "this answer is bad". Skin tones and the emoji variation selector are ignored.
NEGATIVE_REACTIONS = frozenset({"\U0001F44E", "\U0001F621", "\U0001F620", "\U0001F92C", "\U0001F644",
                                "\U0001F612", "\U0001F624"})  # 👎 😡 😠 🤬 🙄 😒 😤
_EMOJI_NOISE = re.compile("[\U0001F3FB-\U0001F3FF\uFE0E\uFE0F]")


def negative_reaction(emoji: str) -> bool:
    """Whether a WhatsApp reaction emoji says the customer disliked the message ('' is a removed reaction)."""
    return _EMOJI_NOISE.sub("", emoji or "").strip() in NEGATIVE_REACTIONS


def _any(*patterns: str) -> re.Pattern:
    return re.compile("|".join(f"(?:{p})" for p in patterns))


# Each family reads the folded text (lower case, no accents, straight quotes, single spaces).
RULES: dict[str, re.Pattern] = {
    # "eso no es cierto", "that's wrong", "falso", "no cuadra", "doesn't add up".
    "contradicts": _any(
        r"\beso no es\b", r"\bno es (cierto|verdad|asi|correcto|real)\b", r"\beso (esta|estas) mal\b",
        r"\b(esta|estan|estas) mal\b", r"\bno cuadra", r"\bfalso\b", r"\bmentira\b", r"\bmintiendo\b",
        r"\bequivocad[oa]s?\b", r"\bte equivocas\b", r"\bincorrect[oa]?\b", r"\bno estoy de acuerdo\b",
        r"\bmal calculad", r"\bno tiene (ninguna )?logica\b", r"\b(absurdo|ridiculo|estafa|ladrones)\b",
        r"\bno puede ser\b", r"\btomando el pelo\b", r"\bno tiene (ningun )?sentido\b",
        r"\b(that'?s|thats|that is|this is|it'?s|its|you'?re|youre|you are|is|are|was) (so |all |just )?"
        r"(wrong|incorrect|false|a lie|not (right|true|correct|accurate))\b",
        r"\bnot (right|true|correct)\b", r"\bwrong again\b", r"\b(doesn'?t|does not|dont|don'?t) add up\b",
        r"\b(makes?|made) (zero|no) sense\b", r"\bnonsense\b", r"\blying\b", r"\bi disagree\b",
        r"\b(ridiculous|absurd|scam|rip ?off)\b", r"\b(can'?t|cannot) be (right|true)\b", r"\bno way\b", r"\bare (you|u) (serious|kidding)\b",
    ),
    # "no entendí", "didn't understand", "you're not understanding me".
    "not_understood": _any(
        r"\bno (te |le |les )?(entendi|entiendo|comprendo|comprendi|capto)\b", r"\bno se entiende\b",
        r"\bno (me )?(quedo|queda) claro\b",
        r"\bno entendiste\b",
        r"\bni papa\b", r"\bno me (estas |estan )?entend", r"\b(didn'?t|didnt|don'?t|dont|do not|did not) "
        r"(understand|get (it|that|this))\b", r"\bnot understanding\b", r"\bconfus(ed|ing)\b",
        r"\b(not|isn'?t|wasn'?t) clear\b", r"\bunclear\b", r"\byou (don'?t|dont) get it\b",
    ),
    # "no respondiste lo que pregunté", "eso no me sirve", "useless bot", "that's not what I asked".
    "missed_the_question": _any(
        r"\bno (me )?(respond|contest)", r"\bno me (resolv|ayud)", r"\bno me sirve", r"\bno sirve(s|n)?\b",
        r"\b(yo |te |les )?pregunte (otra cosa|por|si)\b", r"\blo que (te |les )?pregunte\b",
        r"\bno (era|es|fue) mi pregunta\b", r"\bque tiene que ver\b", r"\bpara que me (dices|dicen)\b",
        r"\b(leeme|lee|lean|revisa|revisen|fijate) bien\b", r"\binutil(es)?\b", r"\bpor nada\b",
        r"\bsiempre me dicen lo mismo\b", r"\botra vez lo mismo\b",
        r"\bpor que tengo que\b", r"\b(ustedes|uds) deberian\b", r"\bno me (estas|estan) ayudando\b",
        r"\b(pesimo|malisimo|pesima)\b", r"\bte (estoy diciendo|dije)\b",
        r"\bnot what i (asked|meant|said)\b", r"\bi (asked|said) (about|for|if)\b", r"\b(didn'?t|didnt) "
        r"(help|answer)\b", r"\b(useless|pointless|worthless)\b", r"\bfor nothing\b", r"\bwhat are (you|u) for\b",
        r"\b(doesn'?t|does not|not) help(ful)?\b", r"\bcheck again\b", r"\bi'?m telling you\b",
        r"\bwhy (do|should) i have to\b", r"\bwaste of (my )?time\b", r"\b(terrible|awful|stupid)\b",
        r"\bsame thing again\b",
    ),
    # The customer sets their own facts against the answer: "ya pagué", "i already did", "mi recibo dice".
    "own_facts": _any(
        r"\bya (lo |la |les |te )?(pague|cancele|hice|llame|envie|mande|intente)\b",
        r"\bya me (descontaron|cobraron|debitaron|quitaron)\b", r"\b(si |pero )(yo )?(ya )?pague\b",
        r"^pero (si )?(yo|a mi|mi)\b", r"\b(mil|tres|cuatro|\d+) veces\b", r"\bnunca me\b",
        r"\byo no (pedi|solicite|contrate|autorice)\b", r"\bno voy a pagar\b", r"\bllevo (meses|semanas|dias)\b",
        r"\bsiempre ha sido\b", r"\bme dijeron\b", r"\btengo el (capture|comprobante|recibo|capture)\b",
        r"\bmi recibo\b", r"^no,? (mi|yo|a mi|i|my)\b",
        r"\bi (already )?(paid|did)\b", r"\balready (paid|did|left)\b", r"\bi have the (receipt|proof|screenshot)\b",
        r"\bwas never\b", r"\bnever (cut|suspended|asked|requested|ordered)\b", r"\b\d+ times\b",
        r"\b(website|bill|receipt|invoice|statement|app) says\b", r"\bnot what my\b",
    ),
    # Sarcasm or anger the words alone may not carry.
    "angry_emoji": re.compile("[\U0001F644\U0001F621\U0001F620\U0001F92C\U0001F612\U0001F624\U0001F44E]"),
}

# What the thread says of a suspected complaint, per rule: "the customer's next message …".
RULE_LABELS = {
    "contradicts": "says the answer is wrong",
    "not_understood": "says they did not understand it",
    "missed_the_question": "says it missed their question or did not help",
    "own_facts": "sets the customer's own facts against it",
    "angry_emoji": "carries an angry or eye-rolling emoji",
    "questions_a_figure": "throws a figure of the answer back as a question",
    "corrects_a_figure": "corrects a figure with another",
}

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# A figure of the answer thrown back as a question: "5%?", "¿70?", "el 15??", "$35? your website says $30".
_ECHO = re.compile(r"^\W*(?:el |la |los |las |the )?\$?(\d+(?:[.,]\d+)*)\s*(?:%|\$|usd|bs\.?|dias|days|horas|hours)?"
                   r"\s*\?")
# "40, no 20" / "3 times not 2": the customer corrects one figure with another.
_CORRECTION = re.compile(r"\d[^.?!]{0,20}\b(?:no|not)\s+\d")


@dataclass(frozen=True)
class Disagreement:
    """Why a follow-up reads as a complaint: the rule's name ('' when it does not)."""

    rule: str = ""

    def __bool__(self) -> bool:
        return bool(self.rule)


def disagreement(text: str, answer: str = "") -> Disagreement:
    """Return the first rule by which `text`, written in reply to the bot's `answer`, disputes it."""
    folded = fold(text or "", quotes=True, spaces=True)
    for name, pattern in RULES.items():
        if pattern.search(folded):
            return Disagreement(name)
    echo = _ECHO.search(folded)
    if echo and echo.group(1) in _NUMBER.findall(fold(answer or "")):
        return Disagreement("questions_a_figure")
    if _CORRECTION.search(folded):
        return Disagreement("corrects_a_figure")
    return Disagreement()


def may_disagree(text: str) -> bool:
    """Whether any rule could fire on `text` whatever the answer was (lets the caller skip loading the answer)."""
    folded = fold(text or "", quotes=True, spaces=True)
    return bool(disagreement(text) or _ECHO.search(folded))


def suspected_complaint(*, text: str, answer: str, answered_at: datetime, written_at: datetime,
                        window: timedelta = FOLLOWUP_WINDOW) -> Disagreement:
    """Return why a customer's message is a suspected complaint about the bot answer before it, if it is.

    Time comes from the two messages' own timestamps (the answer recorded, the customer's message sent),
    never from the clock: a message written more than `window` after the answer is not about it.
    """
    if not timedelta(0) <= written_at - answered_at <= window:
        return Disagreement()
    return disagreement(text, answer)
