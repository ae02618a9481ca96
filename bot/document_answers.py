"""Answer a help-center question with the sentences that answer its kind, not the one that shares most words.

Pure: no Django. A customer who asks "what payment methods are allowed?" wants the list, "what is the late
fee?" the rule and its figure, "how long does a refund take?" the time, "how do I report a transfer?" the
steps, "what is IGTF?" what it is, "is there a fee if I cancel?" when it applies. The template writer reads
the question's kind (`question_kind`), scores every sentence and list item of the retrieved passages for the
question's words and for the kind of fact it asks for, never lets a worked example ("Por ejemplo…", "For
example…") be the whole answer, and writes at most three short sentences from at most two passages, each
cited. The reply still goes through the grounding verifier and the relevance check (bot/relevance.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from bot.compose import MONTHS
from core.text import fold

LIST, AMOUNT, DURATION, PROCEDURE, DEFINITION, CONDITION, CONTACT, OTHER = (
    "list", "amount", "duration", "procedure", "definition", "condition", "contact", "other")
KINDS = (LIST, AMOUNT, DURATION, PROCEDURE, DEFINITION, CONDITION, CONTACT, OTHER)
MAX_SENTENCES = 3
MAX_CHARS = 420  # WhatsApp: three short sentences read on a phone

_WORD = re.compile(r"\w+", re.UNICODE)
# A sentence ends at . ! ? followed by a capital or an opening mark — not inside "Bs. 350,00" or "Sr. Pérez".
_SENTENCE = re.compile(r"(?<![A-Z][a-z]\.)(?<=[.!?])\s+(?=[A-ZÁÉÍÓÚÑ¿¡\"(])")
STOPWORDS = frozenset({
    "el", "la", "los", "las", "de", "del", "que", "por", "para", "con", "una", "uno", "unos", "unas", "y", "o",
    "en", "mi", "me", "se", "su", "sus", "es", "al", "lo", "le", "si", "no", "ya", "como", "cuanto", "cuando",
    "the", "a", "an", "of", "to", "in", "on", "for", "my", "is", "are", "and", "or", "it", "do", "i", "you",
    "how", "what", "much", "does", "can", "your", "be", "if", "at", "este", "esta", "hay", "tengo", "have",
    "puedo", "hago", "tienen", "ustedes", "cual", "cuales", "which", "there", "that", "this", "with", "will",
    "would", "qué", "cuál", "me", "nos", "pasa", "happens", "hacer", "tiene", "get", "from", "about", "many",
    "cuantos", "cuantas", "long", "do", "does", "did", "was", "were", "son", "está", "esta", "estan", "bien",
    # Question words and the halves of English contractions ("don't" → "don", "t"): how a question is put.
    "when", "where", "why", "who", "donde", "quien", "don", "doesn", "didn", "isn", "aren", "won", "wasn", "haven",
})
# The verbs of a price question say how it is asked, not what about: the amount kind stands for them when a sentence
# is chosen ("Cuesta USD 15,00." is not an answer to "¿cuánto cuesta la reconexión?").
PRICE_VERBS = frozenset({"cuesta", "cuestan", "costo", "cost", "costs", "vale", "valen"})

# A question that names a plan term: the annual plan, the trial, paying by the year or by the month.
_NAMES_A_TERM = re.compile(r"\b(anual|anuales|annual|yearly|year|ano|prueba|trial|mensual|monthly|12 meses|"
                           r"doce meses)\b")


def names_a_term(query: str) -> bool:
    """Whether a question names a plan term (the annual plan, the trial, paying by the year or by the month)."""
    return bool(_NAMES_A_TERM.search(fold(query, case="lower")))

_KIND_CUES = (
    # Where to write or call: an e-mail address, a phone number, a web address ("¿a qué correo mando el comprobante?").
    (CONTACT, re.compile(
        r"\b(?:(?:a|al|en) )?(?:que|cual) (?:es (?:el|la|su) )?(?:correo|e-?mail|mail|direccion de correo|telefono|"
        r"pagina web|sitio web|web)\b|\ba que numero (?:llamo|escribo|marco|mando)\b|"
        r"\b(?:what|which)(?:'s| is)? (?:the |your )?(?:e-?mail(?: address)?|phone(?: number)?|telephone(?: number)?|"
        r"website|web site|url)\b|\b(?:what|which) number (?:do|should|can) i (?:call|text|write)\b|"
        r"\b(?:numero|telefono) de (?:contacto|atencion|whatsapp)\b|\bcontact (?:number|e-?mail|phone)\b")),
    (DURATION, re.compile(
        r"\b(cuanto (tiempo|tarda|demora|dura|se tarda)|cuantos (dias|meses|horas|minutos|semanas)|how long|"
        r"how (fast|soon|quickly)|que tan (rapido|pronto)|"
        r"how many (days|hours|months|weeks|minutes)|hasta cuando|by when|until when|cuando (me |te |nos |se )?(lo |la |los |"
        r"las )?(llega|llegan|vence|"
        r"se acredita|se refleja|reconectan|vuelve|devuelven|pagan|reembolsan)|when (will|do|does|is) .{0,30}"
        r"(arrive|come|show|back|due|refund|reconnect|post|paid|reflect|take)|plazo|deadline|en cuanto tiempo)\b")),
    # A list: what or which, then a plural of kinds of thing, maybe after "other" and one more word ("a qué otras
    # cosas le cobran IVA", "which dollar bills"); "all the ways"; "what kind of".
    (LIST, re.compile(
        r"\b((que|cuales) (otr[oa]s )?(formas|metodos|medios|opciones|planes|bancos|canales|oficinas|billetes|"
        r"documentos|datos|requisitos|restricciones|condiciones|servicios|cosas|tipos)|que tipo de|"
        r"(what|which) (other )?(\w+ )?(methods|options|plans|banks|channels|ways|documents|kinds|types|bills|services|"
        r"restrictions|things)|what (kind|type|sort)s? of|all (the |your )?(ways|options|methods)|where are "
        r"your|donde (estan|quedan) (sus|las)|list|lista de|formas de pago|payment (methods|options|modalities))\b")),
    (AMOUNT, re.compile(
        r"\b(cuanto (me |nos |te |le )?(cuesta|cobran|es|sale|vale|pago|hay que pagar|queda|seria|sería|toca|saldria|"
        r"saldra|costaria|costara|quedaria|pagaria)|how much|"
        r"(what|how much) do you charge|what('s| is| are) the (charges?|fees?|costs?|prices?)|que cobran|"
        r"(what|que) (is|es) (the|el|la) (fee|price|cost|rate|charge|tarifa|precio|costo|recargo|monto|tasa|"
        r"porcentaje)|what('s| is) the (late )?fee|(que|cual es el) (precio|costo|tarifa|porcentaje)|de cuanto (es|son)|"
        r"how much|cuanto (descuentan|devuelven|me devuelven|cobran de|me ahorro|ahorro|pagaria))\b")),
    (PROCEDURE, re.compile(
        r"\b(como (hago|puedo|se|pago|solicito|reclamo|reporto|activo|cambio|consigo|contrato|cancelo|le pago|"
        r"hacer|envio|mando|obtengo)|how (do|can|should|could) (i|we)|how to|que (tengo|debo|hay) que hacer|what "
        r"(do|should) i do|pasos|steps|procedure|procedimiento|donde (pago|reporto|reclamo|hago))\b")),
    (DEFINITION, re.compile(
        r"\b(que (es|son|significa|quiere decir)|what (is|are|does) (a |an |the )?\w+( \w+)? (mean|stand)|what "
        r"(is|are) (a |an |the )?\w+( \w+)?( exactly)?\??$|meaning of|significado|que es eso|what does)\b")),
    (CONDITION, re.compile(
        r"\b(si |what happens if|que pasa (si|con)|(can|may) i\b|puedo\b|se puede|do i (have|need)|tengo que|hay "
        r"(algun|alguna|multa|recargo|penalidad)|is there (a|any)|do you (charge|accept|offer)|cobran (algo|por)|"
        r"me (devuelven|cobran|reconectan|descuentan)|aplica|applies|eligible|valid)")),
)

_AMOUNT = re.compile(r"(?:Bs\.?|USD|US\$|\$)\s?\d|\d[\d.,]*\s?(?:USD|Bs\b|bol[ií]vares|d[oó]lares|%|dollars)|"
                     r"\b\d+[.,]\d{2}\b|\b\d+ ?(%|por ciento|percent)", re.IGNORECASE)
_DURATION = re.compile(
    r"\b(\d+|un|una|uno|dos|tres|cuatro|cinco|seis|siete|ocho|diez|quince|treinta|one|two|three|four|five|six|"
    r"seven|ten|fifteen|thirty|24|48|72)\s+(d[ií]as?|horas?|hours?|days?|meses|mes|months?|semanas?|weeks?|"
    r"minutos|minutes|h[aá]biles|business|calendar|continuos)|\b(inmediat\w*|al instante|el mismo d[ií]a|same day|"
    r"immediately|within|dentro de|hasta (el|la) \w+|antes (del|de la))\b|"
    # A point in time counted in days: "al día 15 después del vencimiento", "on day 30", "al décimo día".
    r"\b(al|el|del|on|by|from) (d[ií]a|day) \d+\b|"
    r"\b(primer|segundo|tercer|quinto|d[eé]cimo|decimoquinto)\s+d[ií]a\b", re.IGNORECASE)
_STEP = re.compile(r"^\s*(\d+[.)]|entra|ingresa|env[ií]a|coloca|escribe|elige|selecciona|llama|ve |visita|usa|"
                   r"reporta|adjunta|go to|open|send|enter|choose|select|call|visit|use|report|attach|write|log in|"
                   r"first|primero|luego|then|después)\b|\b(opci[oó]n|option|portal|formulario|form|app|ticket)\b",
                   re.IGNORECASE)
_DEFINES = re.compile(r"\b(es (un|una|el|la)|son (los|las)|significa|quiere decir|se refiere|is (a|an|the)|are the|"
                      r"means|refers to|stands for)\b", re.IGNORECASE)
_CONDITIONAL = re.compile(r"\b(si|cuando|solo|s[oó]lo|siempre que|mientras|excepto|salvo|a menos|no se cobra|no hay|"
                          r"sin (costo|cargo|penalidad|recargo|multa)|there is no|there's no|without (a |any )?"
                          r"(fee|charge|penalty)|"
                          r"exent\w*|if|when|only|unless|as long as|except|waived|exempt|no fee|free of charge|"
                          r"gratis|free)\b", re.IGNORECASE)
_EXAMPLE = re.compile(r"^\s*(por ejemplo|for example|e\.g\.|ejemplo|example|para un|on a |en una factura de|"
                      r"with a due date of|con fecha de|si la pagas|if you pay it|paying by|pagando (por|con)|"
                      r"en (el|un) ciclo [ab], con|on cycle [ab], with)\b", re.IGNORECASE)
# A worked example is one case, not the rule: it computes ("(28,00 − 20,00) × 11 ÷ 31 = USD 2,84"), names a calendar
# date ("05/03/2026", "March 21", "5 de marzo", a year) or a made-up invoice ("For a Fiber 600 invoice of USD 38.00…").
# A rule may hold many figures — opening hours, a list of notes, each plan's price — and is still the rule. Months
# are the bill explanations' (bot/compose.py), matched as each language writes them (English capitalised, Spanish in
# lower case, "setiembre" too): "avenida 5 de Julio" is a street.
_INSTANCE = re.compile(
    r"\d(?:[\d.,]*\d)?\s*[×÷=]|[×÷=]\s*\(?\d|"
    r"\b\d{2}/\d{2}(?:/\d{2,4})?\b|\b(?:19|20)\d{2}\b|"
    rf"\b(?:{'|'.join(MONTHS['en'])}) \d{{1,2}}\b|"
    rf"\b\d{{1,2}} de (?:{'|'.join((*MONTHS['es'], 'setiembre'))})\b|"
    r"^\s*(?:[Ff]or|[Oo]n|[Ww]ith) an? [\w\s]{0,25}?(?:invoice|bill) of\b")
_CONTACT = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?<![\d-])(?:\+\d{2} ?)?0?\d{3}[- ]\d{3}[- ]?\d{4}(?![\d-])|"
                      r"\b(?:https?://|www\.)\S+|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org)(?:\.[a-z]{2})?\b",
                      re.IGNORECASE)
# A rule states a figure ("cuesta", "es del 5 %", "is charged"); a worked example strings several together.
_STATES = re.compile(r"\b(cuesta|cuestan|es de|es del|son|se cobra|cobra|se suma|se aplica|vale|is|are|costs?|"
                     r"is charged|charges|adds?|applies)\b", re.IGNORECASE)


_OPENS_WITH_A_CONDITION = re.compile(r"^\s*(si|cuando|if|when|unless|a menos que)\b", re.IGNORECASE)
_WHY = re.compile(r"\b(por ?que|xq|why|how come)\b")

# The words a sentence names one kind of customer with ("Las cuentas empresariales deben avisar…", "No hay
# penalidad por cancelar un plan mensual residencial"), folded. A section written for everyone may still hold a
# sentence for one kind only: a customer of the other kind is never answered with it.
# "business days", "business hours": working time, not the business kind of customer.
NOT_A_WORKING_DAY = r"(?!\s+(?:days?|hours?|weeks?)\b)"
SEGMENT_WORDS = {
    "business": re.compile(r"\b(empresa|empresas|empresarial|empresariales|corporativ\w*|business(es)?|"
                           r"corporate|companies|company)\b" + NOT_A_WORKING_DAY),
    "home": re.compile(r"\b(hogar|hogares|residencial|residenciales|casa|home|homes|household|residential)\b"),
}


def segments_named(text: str) -> set[str]:
    """Return the kinds of customer ("home", "business") a sentence names."""
    folded = fold(text)
    return {kind for kind, words in SEGMENT_WORDS.items() if words.search(folded)}


_CLAUSE_END = re.compile(r"(?<=[.;!?])\s+")


def gives_each_kinds_rule(text: str) -> bool:
    """Whether a reply states one rule for home and another for business customers: a sentence (or a clause after a
    semicolon) that names only home customers and one that names only business customers ("Cuentas residenciales:
    5 %… Cuentas empresariales: USD 3,00…"; "Hogar: 5 %…; Empresas: USD 3,00…"). A sentence that names both ("el
    equipo que queda en tu hogar o negocio", "ningún plan de hogar trae IP fija: solo los Empresariales") does not."""
    named = [segments_named(clause) for clause in _CLAUSE_END.split(text)]
    return {"home"} in named and {"business"} in named


def for_other_segment(text: str, segment: str) -> bool:
    """Whether a sentence names only the other kind of customer than `segment` ("home" or "business")."""
    if segment not in SEGMENT_WORDS:
        return False
    names = segments_named(text)
    return bool(names) and segment not in names


def one_kinds_rule(composed: Composed, passages: list[Passage]) -> bool:
    """Whether a reply composed from `passages` states one kind of customer's rule: a sentence from a section
    written for home or business customers only, or one that names a single kind. A reply from sections for
    everyone that names no kind, or both, applies to whoever asks."""
    written_for = {passage.id: passage.segment for passage in passages}
    return any(written_for.get(sentence.passage) or len(segments_named(sentence.text)) == 1
               for sentence in composed.sentences)


# Kinds a question may ask for beside its first ("¿cuánto cuesta y en cuántos días vienen?": an amount and a time). Only
# kinds a sentence shows on its face: a condition or a definition is in nearly every question's words.
_SECOND_KINDS = (AMOUNT, DURATION, CONTACT)
# Kinds a sentence shows on its face (a figure, a time, an address): one without it never answers. A condition or
# a definition may be stated in any words ("cuenta como pagado a tiempo"), so its cue only weighs in the score.
ON_ITS_FACE = (*_SECOND_KINDS, LIST)


def asked_kinds(query: str) -> tuple[str, ...]:
    """Return every kind of fact a question asks for: its kind (question_kind) first, then any amount, time or contact
    it also asks for."""
    first = question_kind(query)
    if first == OTHER:
        return (first,)
    folded = fold(query, case="lower")
    return (first, *(kind for kind, cue in _KIND_CUES if kind != first and kind in _SECOND_KINDS
                     and first in _SECOND_KINDS and cue.search(folded)))


def question_kind(query: str) -> str:
    """Return what kind of fact a question asks for: list, amount, duration, procedure, definition, condition, contact
    (an address or a number to write or call), other.

    A "why" question asks for a reason, whatever amount it mentions ("¿por qué el monto en bolívares es distinto?").
    """
    folded = fold(query, case="lower")
    if _WHY.search(folded) and not re.search(r"\b(cuanto|how much|how long)\b", folded):
        return OTHER
    for kind, cue in _KIND_CUES:
        if cue.search(folded):
            return kind
    return OTHER


# A one-letter code after the word it names ("ciclo B", "plan A"): the letter is what tells the thing apart, and a
# one-letter word is no content word on its own. "I" is the English pronoun, never a code.
_CODE = re.compile(r"\b([^\W\d_]{3,})\s+([A-HJ-Z])\b(?![.,]?\w)")


# Spanish verbs that change their stressed vowel: "devuelven" / "devolución", "cuesta" / "costo", "cierra" / "cerrar".
_DIPHTHONG = re.compile(r"(?<=[bcdfjlmnprstvz])(?:ue(?=[lnrsv])|ie(?=[nrt]))")


# Words for the same bound, read as one ("is there a limit?" / "the maximum is USD 30.00" / "¿hay un tope?").
_SAME_STEM = {"maxim": "limit", "tope": "limit", "topes": "limit"}


def _stem(word: str) -> str:
    stem = _DIPHTHONG.sub(lambda m: "o" if m.group(0) == "ue" else "e", word[:7], count=1)[:5]
    return _SAME_STEM.get(stem, stem)


def stems(text: str) -> set[str]:
    """Return the content words of a text, folded and cut to five letters ("pagos"/"pagar" → "pagos"/"pagar"), a
    Spanish changed stem vowel read as the unchanged one ("devuelven" → "devol", as "devolución"), and each lettered
    name it holds as one word ("ciclo B" → "ciclo b")."""
    found = {_stem(w) for w in _WORD.findall(fold(text, case="lower"))
             if w not in STOPWORDS and w not in PRICE_VERBS and len(w) > 2}
    for word, letter in _CODE.findall(text):
        folded = fold(word, case="lower")
        if folded not in STOPWORDS:
            found.add(f"{folded[:5]} {letter.lower()}")
    return found


@dataclass(frozen=True)
class Passage:
    """A retrieved chunk: its evidence id, its text (title, heading, body) and the document it comes from."""

    id: str
    text: str
    doc: str = ""
    language: str = ""
    segment: str = ""  # the kind of customer its section is written for ("" for everyone)
    term: str = ""  # the plan term its rules hold on ("annual", "trial"; "" for every plan)


@dataclass(frozen=True)
class Sentence:
    passage: str  # the evidence id
    text: str
    heading: str
    order: int  # position in the passage
    list_item: bool = False
    lead: bool = False  # the sentence that introduces a list ("…:")
    before: str = ""  # the sentence before it in its paragraph, which may hold the subject it leaves out

    @property
    def example(self) -> bool:
        """A worked example: it says so, or it works one case out (a calculation, a calendar date, a made-up
        invoice)."""
        return bool(_EXAMPLE.search(self.text)) or bool(_INSTANCE.search(self.text))

    def has(self, kind: str) -> bool:
        """Whether the sentence holds the kind of fact a question of `kind` asks for."""
        if kind == AMOUNT:
            return bool(_AMOUNT.search(self.text))
        if kind == DURATION:
            return bool(_DURATION.search(self.text))
        if kind == PROCEDURE:
            return bool(_STEP.search(self.text))
        if kind == DEFINITION:
            return bool(_DEFINES.search(self.text))
        if kind == CONDITION:
            return bool(_CONDITIONAL.search(self.text))
        if kind == CONTACT:
            return bool(_CONTACT.search(self.text))
        if kind == LIST:
            return self.list_item or self.lead or self.text.count(",") >= 2
        return False


@dataclass(frozen=True)
class Composed:
    reply: str  # with [E#] after each sentence
    evidence_ids: list[str]
    sentences: list[Sentence]
    kind: str


_ITEM = re.compile(r"^([-•*]|\d+[.)])\s+")


def sentences_of(passage: Passage) -> list[Sentence]:
    """Split a passage into its sentences and list items, each with the section heading it sits under."""
    # A chunk's text is "title\nheading\n\nbody": the lines before the first blank one are the document's title and
    # the section's heading, both saying what its sentences are about ("Late Fees on Home Plans / How the fee is
    # calculated": the fee sentence is about late fees although it never says "late").
    head, _, body = passage.text.partition("\n\n")
    heading = " / ".join(line.strip() for line in head.strip().split("\n") if line.strip()) if body else ""
    body = body or passage.text
    found: list[Sentence] = []
    blocks = [[row.strip() for row in block.split("\n") if row.strip()] for block in re.split(r"\n\s*\n", body)]
    for number, rows in enumerate(blocks):
        items = [row for row in rows if _ITEM.match(row)]
        # A list may start after a blank line: the sentence before it still introduces it.
        list_follows = bool(items) or (number + 1 < len(blocks) and bool(blocks[number + 1])
                                       and bool(_ITEM.match(blocks[number + 1][0])))
        for row in rows:
            if row in items:
                found.append(Sentence(passage.id, _ITEM.sub("", row), heading, len(found), list_item=True))
                continue
            before = ""
            for piece in _SENTENCE.split(row):
                piece = piece.strip()
                if len(piece) >= 12 and not piece.startswith("#"):
                    found.append(Sentence(passage.id, piece, heading, len(found),
                                          lead=piece.endswith(":") and list_follows, before=before))
                    before = piece
    return found


# Fees with a name of their own. A figure right after one is that fee's ("pagar el saldo vencido más los recargos
# fijos de USD 3,00"): it is not the price of what a question asks about unless the question names that fee too.
# "Cargo", "charge" and "fee" are not here: they name whatever follows them ("el cargo por reconexión").
_NAMED_FEE = re.compile(r"\b(recargos?|multas?|dep[oó]sitos?|deposits?|late fees?|igtf|iva|vat|descuentos?|"
                        r"discounts?|penalidad(?:es)?|penalt(?:y|ies)|reposici[oó]n|replacement|mora|intereses|"
                        r"interest)\b[^.;:]{0,20}$", re.IGNORECASE)


def amount_of_another_fee(text: str, wanted: set[str]) -> bool:
    """Whether every amount in a sentence is a named fee's that the question (`wanted`, its stems) does not name."""
    owners = []
    for amount in _AMOUNT.finditer(text):
        fee = _NAMED_FEE.search(text[max(0, amount.start() - 40):amount.start()])
        owners.append(stems(fee.group(1)) if fee else set())
    return bool(owners) and all(owner and not owner & wanted for owner in owners)


def score(sentence: Sentence, wanted: set[str], kind: str, also: tuple[str, ...] = ()) -> float:
    """Score a sentence for a question: shared words (its title's and heading's count half), the asked-for kind of fact
    (or one of the kinds it `also` asks for; once), and a worked example worth less than the rule it illustrates. A
    sentence whose only amounts are another named fee's does not hold the amount a price question asks for."""
    overlap = len(wanted & stems(sentence.text)) + 0.5 * len(wanted & stems(sentence.heading))
    holds = {k for k in (kind, *also) if k != OTHER and sentence.has(k)}
    if AMOUNT in holds and amount_of_another_fee(sentence.text, wanted):
        holds.discard(AMOUNT)
    value = overlap + (2.0 if holds else 0.0)
    if AMOUNT in holds and _STATES.search(sentence.text):
        value += 0.5  # the rule and its figure, before a figure mentioned in passing
    if kind == DEFINITION and sentence.has(DEFINITION) and wanted & stems(sentence.text[:60]):
        value += 1.0  # "IGTF es el impuesto…": the thing asked about, then what it is
    if kind == DEFINITION and _OPENS_WITH_A_CONDITION.match(sentence.text):
        value -= 1.0  # "Si el técnico instala entre el día 1 y el 15, quedas en el ciclo B" says when, not what
    return value * (0.3 if sentence.example else 1.0)


def compose(query: str, passages: list[Passage], *, language: str, kind: str | None = None,
            segment: str = "", said: str = "") -> Composed | None:
    """Compose the reply to a help-center question from the retrieved passages, best first; None when nothing fits.

    Passages in the customer's language come first; a second passage is used only when the first does not hold
    the asked-for kind of fact (or, for a list, to add items the first does not name). With the customer's
    `segment` known, a sentence that names only the other kind of customer is left out. `said` is the reply the
    question follows up on: a sentence that only repeats it is left out while another answers (`_not_said_again`).
    """
    kinds = (kind,) if kind else asked_kinds(query)
    kind, also = kinds[0], kinds[1:]
    wanted = stems(query)
    if not wanted or not passages:
        return None
    # A rule that holds on one plan term only (the annual plan's yearly prices, the trial's refund) answers a question
    # that names that term; for one that names none, a passage for every plan comes first at a near-tie ("¿cuánto
    # cuesta el plan Fibra 600?" is the monthly price, not the annual plan's "Fibra 600: USD 387,60").
    general = not names_a_term(query)
    ordered = sorted(passages, key=lambda p: (p.language != language, general and bool(p.term)))
    everywhere, answering = [], {passage.id for passage in ordered[:4]}
    own = {passage.id: sentences_of(passage) for passage in ordered}  # each passage's sentences, in its order
    for rank, passage in enumerate(ordered):
        for sentence in own[passage.id]:
            if segment and (for_other_segment(sentence.text, segment)
                            or _points_back(sentence) and for_other_segment(sentence.before, segment)):
                continue  # the other kind's rule, or a sentence about it ("Este cargo…" after the home fee)
            value = score(sentence, wanted, kind, also) - 0.25 * rank  # retrieval's order breaks near-ties
            if value > 0:
                everywhere.append((value, sentence))
    # The answer comes from the best four passages; the other kind of customer's rule may come from any retrieved
    # passage, since whose rule ranks fifth is a near-tie of the embedder's, not a judgement on the rule.
    written_for = {passage.id: passage.segment for passage in ordered}
    if not segment:
        everywhere = _for_whoever_asks(everywhere, ordered, written_for, wanted, kind)
    if said:
        everywhere = _not_said_again(everywhere, said, answering)
    everywhere.sort(key=lambda pair: (-pair[0], pair[1].passage, pair[1].order))
    scored = [pair for pair in everywhere if pair[1].passage in answering]
    if not scored:
        return None
    if kind == LIST:
        chosen = _list(scored, own)
    elif kind == PROCEDURE:
        chosen = _steps(scored, own)
    else:
        chosen = _best(scored, own, kind, wanted, both_kinds=not segment, also=also)
        if chosen and not segment:
            chosen = _each_kinds_rule(chosen, everywhere, written_for, kind, also)
    if not chosen:
        return None
    chosen = _with_the_rate(query, chosen, own)
    if not segment:
        chosen = _labelled(chosen, written_for, language)
    return _written(chosen, kind)


# Whose rule a sentence states, said in front of it for a customer whose kind is unknown.
KIND_LABELS = {"es": {"home": "Cuentas residenciales", "business": "Cuentas empresariales"},
               "en": {"home": "Home accounts", "business": "Business accounts"}}


def _each_kinds_rule(chosen: list[Sentence], retrieved: list[tuple[float, Sentence]], written_for: dict[str, str],
                     kind: str, also: tuple[str, ...]) -> list[Sentence]:
    """For a customer whose kind is unknown, answered from a section written for one kind of customer: that kind's
    rule, then the other kind's, when a section written for the other kind holds the asked-for fact in one of the
    `retrieved` sentences (scored, best first, from every passage retrieval returned)
    ("Cuentas residenciales: 5 % del saldo vencido… Cuentas empresariales: USD 3,00 por factura vencida."). The
    customer may be either; each rule is labelled (`_labelled`) and the turn asks which is theirs. The first kind's
    rule keeps its best sentence only: two rules in three short sentences."""
    kinds = {written_for.get(sentence.passage, "") for sentence in chosen} - {""}
    if kinds not in ({"home"}, {"business"}) or any(len(segments_named(sentence.text)) == 2 for sentence in chosen):
        return chosen
    other_kind = "business" if kinds == {"home"} else "home"
    other = next((sentence for value, sentence in retrieved
                  if written_for.get(sentence.passage) == other_kind and not sentence.example and value >= 1
                  and (kind not in ON_ITS_FACE or any(sentence.has(k) for k in (kind, *also)))), None)
    return chosen if other is None else [chosen[0], other]


def _labelled(chosen: list[Sentence], written_for: dict[str, str], language: str) -> list[Sentence]:
    """For a customer whose kind is unknown, label the first sentence taken from a section written for one kind,
    unless it says which ("Cuentas residenciales: Al día 15 después del vencimiento el servicio se suspende."): that
    rule is given as that kind's, never as everyone's — also when no passage of the other kind was retrieved, since
    retrieval not finding the other kind's rule does not mean it has none ("how long does it take to get my service
    back?" reaches the English home reconnection page, not the Spanish business one, whose rule is two hours)."""
    labels = KIND_LABELS.get(language, KIND_LABELS["es"])
    out, done = [], set()
    for sentence in chosen:
        kind = written_for.get(sentence.passage, "")
        if (kind in labels and sentence.passage not in done and not sentence.list_item
                and not segments_named(sentence.text)):
            sentence = replace(sentence, text=f"{labels[kind]}: {sentence.text}")
            done.add(sentence.passage)
        out.append(sentence)
    return out


_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")


def _not_said_again(scored: list[tuple[float, Sentence]], said: str,
                    answering: set[str]) -> list[tuple[float, Sentence]]:
    """Leave out the sentences that repeat the reply a follow-up follows ("and how long do you take to reply?" after
    "30 calendar days from the invoice's issue date" asks for the next figure, not the same one), unless nothing
    else of the answering passages scores. A sentence repeats the reply when the reply holds every figure of it and
    half or more of its content words (the bot's own reply, repeated, holds all of them); a sentence that brings a
    figure of its own, or mostly words of its own ("If you upgrade while the discount is running, the 20% carries
    over…" after "20% off the monthly fee…"), says something new."""
    figures_said, words_said = set(_FIGURE.findall(said)), stems(said)

    def repeats(sentence: Sentence) -> bool:
        words = stems(sentence.text)
        return (set(_FIGURE.findall(sentence.text)) <= figures_said and bool(words)
                and 2 * len(words & words_said) >= len(words))

    fresh = [(value, sentence) for value, sentence in scored if not repeats(sentence)]
    return fresh if any(sentence.passage in answering for _v, sentence in fresh) else scored


def _for_whoever_asks(scored: list[tuple[float, Sentence]], passages: list[Passage], written_for: dict[str, str],
                      wanted: set[str], kind: str) -> list[tuple[float, Sentence]]:
    """For a customer whose kind is unknown, leave out a sentence of a section written for one kind of customer when a
    passage for everyone that retrieval ranked above it holds the asked-for fact in a sentence saying as much of the
    question: the rule for everyone is true for whoever asks ("el monto reclamado no genera recargo por mora", ranked
    first, beside the home late-fee page's "no se cobra recargo sobre montos en reclamo")."""
    rank = {passage.id: position for position, passage in enumerate(passages)}

    def said(sentence: Sentence) -> int:
        return len(wanted & stems(sentence.text))

    general = [(rank[s.passage], said(s)) for _v, s in scored
               if not written_for.get(s.passage) and not s.example and (kind == OTHER or s.has(kind))]
    if not general:
        return scored

    def outsaid(sentence: Sentence) -> bool:
        return any(position < rank[sentence.passage] and says >= said(sentence) for position, says in general)

    return [(v, s) for v, s in scored if not written_for.get(s.passage) or not outsaid(s)]


# A sentence that leaves its subject to the one before it ("La instalación de fibra cuesta USD 30,00. La de Hogar
# Básico, USD 20,00, y la empresarial USD 60,00."): the same rule for other plans or customers, read with it.
_CONTINUES = re.compile(r"^(?:y\s+)?(?:la|el|las|los)\s+(?:de|del|para)\b", re.IGNORECASE)
# A sentence that opens with a pronoun or a demonstrative standing for what the sentence before it said ("Eso no
# cambia…", "That does not…", "Este beneficio no se suma…", "These fees…").
_LEANS_BACK = re.compile(r"^(?:eso|esto|ello|este|esta|estos|estas|ese|esa|esos|esas|that|this|these|those|it)\b",
                         re.IGNORECASE)


def _points_back(sentence: Sentence) -> bool:
    """Whether a sentence opens by pointing back at the sentence before it in its paragraph."""
    return bool(sentence.before) and bool(_LEANS_BACK.match(sentence.text))


def _with_what_it_points_to(sentence: Sentence, own: dict[str, list[Sentence]]) -> list[Sentence]:
    """A sentence as it can be quoted: one that points back ("Este beneficio no se suma…") after the sentence it points
    to ("…recibes un descuento de USD 1,00…"), never alone."""
    return [own[sentence.passage][sentence.order - 1], sentence] if _points_back(sentence) else [sentence]


def _best(scored: list[tuple[float, Sentence]], own: dict[str, list[Sentence]], kind: str, wanted: set[str], *,
          both_kinds: bool = False, also: tuple[str, ...] = ()) -> list[Sentence]:
    """The best sentence holding the asked-for fact when the fact shows on a sentence's face (`ON_ITS_FACE`), else
    the best sentence (a rule before an example in either case) — after the sentence it points back to, when it
    opens by pointing back —, then one that adds to it: the next
    sentence when it only continues the first's subject ("La de Hogar Básico…"); with `both_kinds` (whoever asks
    may be either kind of customer), the other kind's rule beside a sentence that names one kind ("For home plans …
    USD 25.00. For business plans it is USD 60.00."); else one that qualifies it, or, for an amount or a time, the
    very next sentence of its paragraph when it gives the same kind of fact for another case ("… within four hours.
    From other banks it can take up to one business day."): the customer may be in either case."""
    top = [s for _v, s in scored if not s.example]
    with_fact = [s for s in top if kind not in ON_ITS_FACE or any(s.has(k) for k in (kind, *also))]
    first = (with_fact or top or [s for _v, s in scored])[0]
    if first.lead:  # "Los precios… antes de IVA:" says nothing without its list: the list is the answer
        return _written_out(first, own)
    if _points_back(first):  # "Este beneficio no se suma…" after the benefit it names
        return _with_what_it_points_to(first, own)
    chosen = [first]
    if not wanted & stems(first.text) and wanted & stems(first.before):
        # It names nothing the question asks about; the sentence before does: it goes with it.
        previous = next((s for _v, s in scored if s.passage == first.passage and s.order == first.order - 1), None)
        if previous is not None:
            return [previous, first]
    continued = next((s for _v, s in scored if s.passage == first.passage and s.order == first.order + 1
                      and _CONTINUES.match(s.text)), None)
    if continued is not None:
        return [first, continued]
    named = segments_named(first.text)
    if both_kinds and len(named) == 1:
        other = next((s for _v, s in scored if s.passage == first.passage and abs(s.order - first.order) <= 2
                      and not s.example and segments_named(s.text) == {"home", "business"} - named
                      and (kind == OTHER or s.has(kind))), None)
        if other is not None:
            return sorted([first, other], key=lambda s: s.order)
    # A second sentence from the same passage, when it holds the kind of fact the first lacks or qualifies it.
    for value, sentence in scored:
        if sentence is first or sentence.passage != first.passage or value < 1 or sentence.example:
            continue
        if _LEANS_BACK.match(sentence.text) and sentence.before != first.text:
            continue  # "Eso no cambia…" speaks of a sentence that is not in the reply
        adds = any(k != OTHER and sentence.has(k) and not first.has(k) for k in (kind, *also)) or (
            kind in (CONDITION, AMOUNT, DURATION) and bool(_CONDITIONAL.search(sentence.text))) or (
            kind in (AMOUNT, DURATION) and sentence.before == first.text and sentence.has(kind))
        if adds and abs(sentence.order - first.order) <= 2:
            chosen.append(sentence)
            break
    return sorted(chosen, key=lambda s: s.order)


def _steps(scored: list[tuple[float, Sentence]], own: dict[str, list[Sentence]]) -> list[Sentence]:
    """A procedure: the best sentence that reads as a step, then the sentences that follow it in its paragraph, in
    order. A procedure runs on, and its later steps need not carry a step's words ("Primero verificamos la cobertura…
    Con cobertura confirmada, firmas el contrato digital, pagas el depósito y agendamos la instalación."). A step with
    nothing after it in its paragraph (a numbered item, a paragraph's last sentence) brings the step sentences near
    it in its passage."""
    top = [s for _v, s in scored if not s.example]
    best = next((s for s in top if s.has(PROCEDURE)), top[0] if top else scored[0][1])
    if best.list_item or best.lead:
        return _written_out(best, own)  # numbered steps, or the ways to do it: the whole list
    if best.has(PROCEDURE):
        run = [best]
        for sentence in own[best.passage][best.order + 1:]:
            if sentence.before != run[-1].text or sentence.example or len(run) == MAX_SENTENCES:
                break
            run.append(sentence)
        if len(run) > 1:
            return run
    same = sorted((s for v, s in scored if s.passage == best.passage and not s.example and (v >= 1 or s.has(PROCEDURE))),
                  key=lambda s: s.order)
    steps = [s for s in same if s.has(PROCEDURE)] or same
    around = [s for s in steps if abs(s.order - best.order) <= 3]
    return (around or [best])[:MAX_SENTENCES]


def _written_out(item: Sentence, own: dict[str, list[Sentence]]) -> list[Sentence]:
    """The list an item (or the sentence that introduces it) belongs to, as its passage writes it: the sentence that
    introduces it and all its items."""
    sentences = own[item.passage]
    items = [s for s in sentences if s.list_item]
    if not items:
        return [item]
    lead = [s for s in sentences if s.lead and s.order < items[0].order]
    return lead[-1:] + items


def _list(scored: list[tuple[float, Sentence]], own: dict[str, list[Sentence]]) -> list[Sentence]:
    """A list the help center writes out (its lead and all its items) when one of the best sentences is one of its
    items; else the best sentence of each of up to two passages (a sentence that enumerates counts as a list)."""
    for position, (_value, sentence) in enumerate(scored[:3]):
        if sentence.list_item and all(above.passage == sentence.passage for _v, above in scored[:position]):
            # The best passage writes the list out; an item of another passage's list, under a better sentence
            # ("Pago móvil." in the ways-to-pay page, below the pago móvil page's own details), is not the answer.
            return _written_out(sentence, own)
    picked: list[Sentence] = []
    for _value, sentence in scored:
        if (sentence.example or sentence.list_item or sentence.lead
                or any(p.passage == sentence.passage for p in picked)):  # a list's lead says nothing without it
            continue
        picked.extend(_with_what_it_points_to(sentence, own))
        if len({p.passage for p in picked}) == 2:
            break
    return picked


# A question for an amount in bolívares, and the sentence of a page that says which exchange rate its bolívar figures
# use. The help center's bolívar figures are worked out at a reference rate; the invoice uses the official rate of
# its day: a subscriber who checks "Bs. 1.400,00" against the invoice must be told which rate it is at.
_IN_BOLIVARES = re.compile(r"\b(bolivares|bolivar|bs|in vef|in ves)\b")
_NAMES_THE_BCV = re.compile(r"\bBCV\b")
_BOLIVAR_FIGURE = re.compile(r"\bBs\.?\s?\d")


def _with_the_rate(query: str, chosen: list[Sentence], own: dict[str, list[Sentence]]) -> list[Sentence]:
    """Add, to a reply that gives a bolívar figure asked for in bolívares, its page's sentence on the exchange rate."""
    if (not _IN_BOLIVARES.search(fold(query, case="lower")) or len(chosen) >= MAX_SENTENCES
            or not any(_BOLIVAR_FIGURE.search(sentence.text) for sentence in chosen)):
        return chosen
    rate = next((sentence for sentence in own.get(chosen[0].passage, []) if sentence not in chosen
                 and _NAMES_THE_BCV.search(sentence.text) and not sentence.example), None)
    return chosen if rate is None else [*chosen, rate]


def _written(chosen: list[Sentence], kind: str) -> Composed:
    """Join the chosen sentences with their citations; a list's items (after their lead) in one sentence."""
    parts: list[str] = []
    items = [s for s in chosen if s.list_item]
    if items:
        lead = [s for s in chosen if not s.list_item]
        joined = "; ".join(item.text.rstrip(".") for item in items)
        text = f"{lead[0].text} {joined}." if lead else f"{joined}."
        parts.append(f"{text} [{items[0].passage}]")
    else:
        for sentence in chosen:
            text = sentence.text if sentence.text.endswith((".", "!", "?")) else sentence.text.rstrip(":;,") + "."
            parts.append(f"{text} [{sentence.passage}]")
    while len(parts) > 1 and sum(len(p) for p in parts) > MAX_CHARS:
        parts.pop()
    used = chosen if items else chosen[:len(parts)]
    ids = list(dict.fromkeys(s.passage for s in used))
    return Composed(reply=" ".join(parts[:MAX_SENTENCES]), evidence_ids=ids, sentences=used, kind=kind)
