"""The offline judges: faithfulness by word overlap and, for bill explanations, by reading the billing findings.

Used when no model is configured (the demo and CI). Each is a measuring instrument with its own blind spots, so
each has a version, and its TPR/TNR are measured against human labels under that version like a model judge's.
`LexicalJudge` ("lexical-support-1") checks every claim's numbers and words against the passages.
`LexicalBillJudge` (`LEXICAL_JUDGE_VERSION`, the one in use) reads a claim about a bill the way a person checks it
against the turn's billing findings (evals/bill_reading.py) — the change and its sign, the causes, the months,
a payment's state — and counts the figures the grounding verifier derived from two evidence amounts as
supported; other claims it checks as version 1 does, and a claim that negates the passage it copies, puts a
figure on the wrong thing, or gives a rule while leaving out the exception the question asks about fails.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.escalation import ASK_FOR_IDENTITY, CUSTOMER_NOTICE
from core.text import fold, number_key
from evals.answer_checks import NUMBER_WORDS
from evals.bill_reading import MONTHS, Finding, bill_problems, has_words, names_the_bill
from evals.judgement import EvidenceItem, Judgement

LEXICAL_JUDGE_VERSION = "lexical-support-6"  # the offline judge in use: LexicalBillJudge
# A claim is supported when at least this share of its content words occurs in ONE passage.
LEXICAL_MIN_SHARE = 0.6
_STEM = 5  # words compare on their first 5 letters: "reconexion" ~ "reconexiones", "cobran" ~ "cobrar"

_STOP_WORDS = frozenset("""
a al algo algun alguna algunas alguno algunos ante antes aqui asi aun bien cada como con contra cual cuales cuando
de del desde donde dos durante e el ella ellas ellos en entre era es esa esas ese eso esos esta estan estar estas
este esto estos fue ha hay hasta la las le les lo los mas me mi mis muy nada ni no nos nuestra nuestro o otra otro
para pero poco por porque puede pueden que se sea ser si sin sobre solo son su sus tambien te tiene tienen tu tus
un una unas uno unos usted ustedes va y ya
about after all also am an and any are as at be been before but by can could did do does each for from had has
have he her his how i if in into is it its just may me more most my no not now of on once only or other our out
over own same she should so some such than that the their them then there these they this those through to too
under until up very was we were what when where which while who why will with would you your
hola gracias saludos favor buenos buenas dias tardes noches estimado estimada hello hi thanks thank please dear
""".split())
_CITATION_RE = re.compile(r"\[\s*E\d+(?:\s*[,;]\s*E\d+)*\s*\]")
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_CITED_ID_RE = re.compile(r"E\d+")
_WORD_RE = re.compile(r"[^\W\d_]+")
# A sentence ends at . ! ? followed by a capital or an opening mark — not inside "Bs. 350,00"; or at a newline.
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[¿¡\"“(A-ZÁÉÍÓÚÑ])|\n+")
_PEOPLE_RE = re.compile(r"\b(persona|personas|agente|agentes|asesor|asesora|operador|equipo|humano|person|people|"
                        r"agent|agents|representative|team|human|colleague|colega)\b")
_HANDOVER_RE = re.compile(r"\b(paso|pasamos|pasar|comunic\w*|transfier\w*|transfer\w*|deriv\w*|contactar\w*|"
                          r"respond\w*|atender\w*|atendera|confirm\w*|pass\w*|connect\w*|reply|get back|"
                          r"follow up|will help|ayudar\w*)\b")


def _numbers(text: str) -> set[str]:
    return {number_key(token) for token in _NUMBER_RE.findall(text)}


def _content_stems(text: str) -> set[str]:
    return {w[:_STEM] for w in _WORD_RE.findall(fold(text)) if len(w) > 2 and w not in _STOP_WORDS}


def _claim_sentences(answer: str) -> list[str]:
    """Return the answer's claims: its sentences, cut after each citation marker (the writer cites each claim)."""
    return [claim for claim, _ in cited_claims(answer)]


def cited_claims(answer: str) -> list[tuple[str, frozenset[str]]]:
    """Return the answer's claims (see `_claim_sentences`), each with the evidence ids its markers cite."""
    text = answer
    # The bot's own hand-over and identity requests make no claim about billing.
    for notice in (*CUSTOMER_NOTICE.values(), *ASK_FOR_IDENTITY.values()):
        text = text.replace(notice, "\n")
    pieces: list[tuple[str, frozenset[str]]] = []
    for sentence in _SENTENCE_RE.split(text):
        parts = _CITATION_RE.split(sentence)
        markers = [frozenset(_CITED_ID_RE.findall(marker)) for marker in _CITATION_RE.findall(sentence)]
        cites = markers + [frozenset()]  # part n ends at marker n; the words after the last marker cite nothing
        # The words after a sentence's last citation finish the claim before it ("… cuesta Bs. 1.400,00 [E6] al mes
        # antes de IVA."): joined to it, not judged alone, unless they state a figure of their own.
        if len(parts) > 1 and not _NUMBER_RE.search(parts[-1]):
            parts[-2:] = [f"{parts[-2].rstrip()} {parts[-1].strip()}".rstrip(" .!?")]
            cites[-2:] = [cites[-2]]
        pieces += zip(parts, cites)
    claims = []
    for sentence, cited in ((piece.strip(" \t\n,;:"), cited) for piece, cited in pieces):
        folded = fold(sentence)
        if not sentence or (not _NUMBER_RE.search(sentence) and len(_content_stems(sentence)) < 2):
            continue  # a greeting or a word of thanks
        if not _NUMBER_RE.search(sentence) and _PEOPLE_RE.search(folded) and _HANDOVER_RE.search(folded):
            continue  # "a person on our team will reply here": a hand-over, not a claim
        claims.append((sentence, cited))
    return claims


class LexicalJudge:
    """An offline faithfulness judge by word overlap, for when no model is configured (the demo and CI).

    It passes an answer only when every claim — a sentence, cut after each citation marker since the writer
    cites claim by claim; markers removed — is supported by the evidence: every number in the claim occurs
    somewhere in the evidence (text or value, compared as values: "350,00" = "350.00" = "350"), and at least
    LEXICAL_MIN_SHARE (0.6) of its content words — accent-folded, lowercase, Spanish and English stop words
    and greetings dropped, compared on their first five letters — occur in ONE passage. Sentences that only hand over to a person, ask for the customer's
    identity or greet make no claim, so an answer that only hands over passes. The reason lists the
    unsupported sentences and why.

    It is a measuring instrument like any judge, with its own blind spots (a paraphrase with new words fails,
    a contradiction built from the passage's own words passes): its TPR/TNR are measured against human labels
    under its own version, "lexical-support-1", and its pass rate is corrected with them like a model judge's.
    """

    version = "lexical-support-1"
    model = "offline"

    def judge(self, *, answer: str, evidence: Sequence[EvidenceItem], question: str = "",
              verified: Sequence[str] = ()) -> Judgement:
        """Return pass when every claim of `answer` is supported by some passage of `evidence` (this version
        reads no billing finding and no verified figure)."""
        passages = [(item.id, f"{item.text}\n{getattr(item, 'value', None) or ''}") for item in evidence]
        evidence_numbers = set().union(*(_numbers(text) for _, text in passages)) if passages else set()
        passage_stems = [(passage_id, _content_stems(text)) for passage_id, text in passages]
        claims = _claim_sentences(answer)
        unsupported = []
        for sentence in claims:
            problems = []
            missing = sorted(_numbers(sentence) - evidence_numbers)
            if missing:
                problems.append(f"numbers not in the evidence: {', '.join(missing)}")
            stems = _content_stems(sentence)
            if stems:
                best_id, best = max(((pid, len(stems & words) / len(stems)) for pid, words in passage_stems),
                                    key=lambda pair: pair[1], default=("", 0.0))
                if best < LEXICAL_MIN_SHARE:
                    where = f"best passage {best_id}" if best_id else "no evidence"
                    problems.append(f"{best:.0%} of its content words in one passage ({where}; "
                                    f"needs {LEXICAL_MIN_SHARE:.0%})")
            if problems:
                unsupported.append(f"«{sentence}»: {'; '.join(problems)}")
        if not claims:
            verdict, reason = "pass", "no factual claim (a hand-over, a greeting or an empty answer)"
        elif unsupported:
            verdict = "fail"
            reason = f"{len(unsupported)} of {len(claims)} claims unsupported: " + " | ".join(unsupported)
        else:
            verdict, reason = "pass", f"all {len(claims)} claims supported by the evidence"
        return Judgement(verdict=verdict, reason=reason, judge_version=self.version, model=self.model,
                         attempts=1, raw="")


# Words a bill explanation uses around the findings' figures ("tu factura subió … respecto a la de …"): they
# name no fact, so a bill claim is not faulted for them.
_BILL_PHRASING = frozenset(_content_stems(
    "factura facturas recibo bill invoice respecto compared comparada anterior resto rest corresponde monto "
    "cobrado cobro cobraron charged charge cargo diferencia difference mes month mensual monthly actual current "
    "plan cuesta costs aplico applied pago payment pagaste intento attempt earlier antes tiene tienes saldo "
    "balance dias days vencida overdue calculado calculated sobre seguian terminar plazo gracia grace periodo "
    "period descontaba took off each cada also tambien incluye includes servicio service lleva subio bajo aumento "
    "went up down increased decreased higher lower vence vencimiento due ademas besides nuevo nueva new alta alto "
    + " ".join(MONTHS)))
BILL_MIN_SHARE = 0.5  # of a bill claim's content words, in the findings or the bill's phrasing

# A plan or offer whose rules differ from the others': a rule of its passage holds for it alone.
SCOPES = (("prueba", "trial"), ("anual", "annual", "year"), ("bienvenida", "welcome", "descuento", "discount"))
_SCOPE_TITLES = (("plan de prueba", "trial"), ("plan anual", "annual plan"),
                 ("descuento de bienvenida", "welcome discount"))


def scope_problem(claim: str, *, passage: str, question: str) -> str:
    """Return why a claim copies a rule of a passage about one plan or offer (its title says which) without
    naming it, when the question does not name it either ("" when it names it or the passage is general)."""
    title = fold(passage.split("\n", 1)[0])
    said = f"{fold(claim)} {fold(question)}"
    for titles, words in zip(_SCOPE_TITLES, SCOPES):
        if any(name in title for name in titles) and not has_words(said, [f"{word}*" for word in words]):
            return f"states a rule of «{passage.split(chr(10), 1)[0].strip()}» without saying it is that one's"
    return ""


_PAIR = re.compile(r"(usd|us\$|\$|bs\.?|ves|bolivares|dolares)\s*(\d+(?:[.,]\d+)*)"
                   r"|(\d+(?:[.,]\d+)*)\s*(usd|dolares|bolivares|ves\b|bs\b)")


def currency_pairs(text: str) -> set[tuple[str, str]]:
    """Return the (currency, amount) pairs of a text: "USD 28,00", "23,20 USD", "Bs. 1.400,00", "VES 1,400.00" (the
    English findings' code for the bolívar)."""
    pairs = set()
    for match in _PAIR.finditer(fold(text)):
        unit, amount = (match.group(1), match.group(2)) if match.group(1) else (match.group(4), match.group(3))
        pairs.add(("VES" if unit.startswith(("bs", "boli", "ves")) else "USD", number_key(amount)))
    return pairs


_NEGATION_RE = re.compile(r"\b(no|not|cannot|can't|nunca|never|tampoco|ningun|ninguna|nadie|nothing|nada)\b")


class LexicalBillJudge(LexicalJudge):
    """The offline judge that reads bills (version 2 read "VES 440.80" as no amount, judged the words after a
    sentence's last citation as a claim of their own, and faulted a cause the finding itself names; version 4 added
        the figure put on the wrong thing; version 5 the exception the question asks about and the answer leaves out;
    version 6 reads a negation clause by clause with the words it governs, where version 5 compared whole sentences
    and failed a faithful paraphrase that joined two of them, and adds the figure taken from another passage than the
    one the claim speaks from, the customer's own figures and small numbers written in words).

    A claim that speaks of the bill — it states a figure of a billing finding, or names the bill's change, a
    cause or a payment's state — is checked against the findings the way a person reads them
    (evals/bill_reading.py): the change's amount and sign, each cause named, each month named, a paid or pending
    state, and the figures given for a cause. Its numbers must be in the evidence or among the figures the
    grounding verifier derived from two evidence amounts (`verified`), and at least half of its content words
    must be in the findings or be the words a bill explanation is phrased with. Any other claim is checked as
    version 1 checks it (numbers in the evidence, 60 % of its content words in one passage), and fails when it
    takes a figure from another passage than the one its words come from or it cites, negates what no passage
    negates or says what the passage clause it copies denies, gives its rule while leaving out
    the passage's exception to it that the question asks about, or copies a rule of a passage about one plan or
    offer (the trial, the annual plan, the welcome discount) without naming it when the
    question does not. Every claim fails that gives an amount in a currency the evidence never gives it in.

    Its rules were chosen on the train and dev splits of the committed human labels; docs/evals.md reports its
    TPR/TNR on dev and on the test split, read once for this version.
    """

    version = LEXICAL_JUDGE_VERSION

    def judge(self, *, answer: str, evidence: Sequence[EvidenceItem], question: str = "",
              verified: Sequence[str] = ()) -> Judgement:
        """Return pass when every claim of `answer` is supported by the evidence, bill claims read as bills."""
        passages = [(item.id, f"{item.text}\n{getattr(item, 'value', None) or ''}") for item in evidence]
        stated = set().union(*(_numbers(text) for _, text in passages)) if passages else set()
        derived = {number_key(figure) for figure in verified if _NUMBER_RE.fullmatch(figure.strip())}
        asked = _numbers(question)  # the customer's own figures ("con 2 meses de servicio")
        # Each passage's figures, in digits or in words ("tres días hábiles").
        figures = {pid: _numbers(text) | _spelled_numbers(text) for pid, text in passages}
        known = set().union(stated, derived, asked, *figures.values())
        clauses = _clause_rows(passages)
        findings = [Finding.of(kind=item.fact_kind, text=item.text, value=getattr(item, "value", None))
                    for item in evidence if getattr(item, "fact_kind", "")]
        finding_stems = set().union(*(_content_stems(item.text) for item in evidence
                                      if getattr(item, "fact_kind", ""))) if findings else set()
        finding_numbers = set().union(*(finding.numbers for finding in findings)) if findings else set()
        pairs = set().union(*(currency_pairs(text) for _, text in passages)) if passages else set()
        cited = cited_claims(answer)
        claims = [claim for claim, _ in cited]
        unsupported = []
        for sentence, cites in cited:
            problems = []
            missing = sorted(_numbers(sentence) - known)
            if missing:
                problems.append(f"numbers not in the evidence: {', '.join(missing)}")
            problems += [f"gives {amount} in {unit}; the evidence never does" for unit, amount in
                         sorted(currency_pairs(sentence) - pairs) if amount in stated]
            if findings and (_numbers(sentence) & (finding_numbers | derived) or names_the_bill(sentence)):
                problems += bill_problems(sentence, findings)
                problems += _bill_words(sentence, finding_stems)
            else:
                problems += _passage_words(sentence, passages, question=question, answer=answer, cites=cites,
                                           free=derived | asked, figures=figures, clauses=clauses)
            if problems:
                unsupported.append(f"«{sentence}»: {'; '.join(problems)}")
        return _verdict(self, claims, unsupported)


def _bill_words(sentence: str, finding_stems: set[str]) -> list[str]:
    stems = _content_stems(sentence)
    if not stems:
        return []
    share = len(stems & (finding_stems | _BILL_PHRASING)) / len(stems)
    return [] if share >= BILL_MIN_SHARE else [
        f"{share:.0%} of its words in the billing findings (needs {BILL_MIN_SHARE:.0%})"]


def _passage_words(sentence: str, passages: list[tuple[str, str]], *, question: str, answer: str,
                   cites: frozenset[str], free: set[str], figures: dict[str, set[str]],
                   clauses: list[_Clause]) -> list[str]:
    """Return why a claim is not supported by one passage: too few of its words there, a figure taken from another
    passage than the one its words and its marker come from, a negation turned, or a rule of one plan given without
    naming the plan. `free` are figures that need no passage (the question's, the verifier's derived ones);
    `figures` each passage's figures and `clauses` the passages' clauses, read once per answer."""
    stems = _content_stems(sentence)
    if not stems:
        return []
    best_id, best = max(((pid, len(stems & _content_stems(text)) / len(stems)) for pid, text in passages),
                        key=lambda pair: pair[1], default=("", 0.0))
    if best < LEXICAL_MIN_SHARE:
        where = f"best passage {best_id}" if best_id else "no evidence"
        return [f"{best:.0%} of its content words in one passage ({where}; needs {LEXICAL_MIN_SHARE:.0%})"]
    borrowed = _borrowed_figures(sentence, figures, sources={best_id, *cites}, free=free)
    if borrowed:
        return borrowed
    turned = _turned_negation(sentence, clauses)
    if turned:
        return [turned]
    passage = dict(passages)[best_id]
    scope = scope_problem(sentence, passage=passage, question=question)
    return [scope] if scope else misattributed(sentence, passage) + left_out_exception(answer, passage,
                                                                                      question=question)


# A passage sentence that takes something out of its rule ("Lo único que no se devuelve es el IGTF…").
_EXCEPTION_RE = re.compile(r"\b(lo unico que no|excepto|salvo que|salvo|a excepcion|except|unless|other than|"
                           r"the only thing not|is not refunded|no se devuelve|no se reembolsa)\b")


def left_out_exception(answer: str, passage: str, *, question: str) -> list[str]:
    """Return why an answer gives a passage's rule but leaves out the exception the question asks about: a sentence
    of the passage excepting something is the only one that speaks of a word of the question, and the answer never
    says it ("¿me devuelven el IGTF?" answered "te devolvemos el 100 %" from a passage whose only sentence on the
    IGTF is "lo único que no se devuelve es el IGTF"). The question's verbs ("devuelven") are in the rule too."""
    asked = _content_stems(question) - _content_stems(answer)
    if not asked:
        return []
    pieces = _passage_sentences(passage)
    for number, piece in enumerate(pieces):
        if not _EXCEPTION_RE.search(fold(piece)):
            continue
        elsewhere = set().union(*(_content_stems(other) for n, other in enumerate(pieces) if n != number))
        if asked & (_content_stems(piece) - elsewhere):
            return [f"leaves out the exception the question asks about: «{piece.strip()[:90]}»"]
    return []


# A figure's object: the word after "USD 35,00 por el …", "20 % de …", "USD 3,00 for the …" (a preposition right
# after the amount and its unit). A list written "router: USD 35,00, ONT: …" gives none, so it is never misread.
_OBJECT_RE = re.compile(
    r"(\d+(?:[.,]\d+)*)\s*(?:%|usd|us\$|\$|bs\.?|ves|dolares|bolivares)?\s*,?\s+(?:por|para|de|del|en|for|per|on|of)"
    r"\s+(?:el|la|los|las|un|una|cada|the|a|an|each)?\s*([^\W\d_]{3,})")


def figure_objects(text: str) -> dict[str, set[str]]:
    """Return each figure of a text with the stems of what a preposition right after it puts it on."""
    objects: dict[str, set[str]] = {}
    for number, word in _OBJECT_RE.findall(fold(text)):
        if word not in _STOP_WORDS:
            objects.setdefault(number_key(number), set()).add(word[:_STEM])
    return objects


def misattributed(claim: str, passage: str) -> list[str]:
    """Return why a claim puts a figure of the passage on something the passage gives another figure for
    ("USD 35,00 por el router" where the passage says "USD 45,00 por el router, USD 35,00 por la ONT")."""
    said, source = figure_objects(claim), figure_objects(passage)
    problems = []
    for number, things in sorted(said.items()):
        given = source.get(number)
        if not given or things & given:
            continue
        others = sorted(other for other, on in source.items() if other != number and things & on)
        if others:
            problems.append(f"puts {number} on «{'/'.join(sorted(things))}», which the passage gives "
                            f"{', '.join(others)}")
    return problems


def _borrowed_figures(sentence: str, figures: dict[str, set[str]], *, sources: set[str], free: set[str]) -> list[str]:
    """Return why a claim gives a figure that only another passage holds than the one its words come from and the
    ones it cites ("los domingos de 8:00 a 16:00 [E1]" where E1 says 14:00 and 16:00 is E2's Saturday)."""
    own = set().union(*(held for pid, held in figures.items() if pid in sources))
    problems = []
    for number in sorted(_numbers(sentence) - own - free):
        elsewhere = [pid for pid, held in figures.items() if number in held]
        if elsewhere:
            problems.append(f"takes {number} from {', '.join(elsewhere)}, not from the passage it speaks from")
    return problems


# A clause: a passage or claim sentence cut at ; : ( ) and at a comma before a new clause.
_CLAUSE_RE = re.compile(r"[;:()]|,\s+")
_CONDITION_RE = re.compile(r"(y |and )?(si|if|cuando|when|unless)\b")
_GOVERNED = 4  # words after a negation that it governs
_AFTER_NEGATION_RE = re.compile(_NEGATION_RE.pattern + r"((?:\W+\w+){1,%d})" % (_GOVERNED + 3))


@dataclass(frozen=True)
class _Clause:
    text: str
    stems: set[str]
    denied: set[str]  # what its negation governs (empty for a positive clause)
    negative: bool


def _clauses(text: str) -> list[str]:
    return [piece for piece in _CLAUSE_RE.split(text) if _content_stems(piece)]


def _clause_rows(passages: list[tuple[str, str]]) -> list[_Clause]:
    """Return every clause of the passages with its words and what its negation governs."""
    rows = []
    for _, text in passages:
        for piece in _passage_sentences(text):
            for clause in _clauses(piece):
                negative = bool(_NEGATION_RE.search(fold(clause)))
                rows.append(_Clause(clause, _content_stems(clause), _governed(clause) if negative else set(),
                                    negative))
    return rows


def _turned_negation(sentence: str, clauses: list[_Clause]) -> str:
    """Return why a clause of the claim turns a negation of the passages ("" when none). A negation is read with
    the words it governs (the next few content words): a negative clause of the claim needs a negative clause of a
    passage that says those words ("no tiene multa" where no passage negates a fine fails), and a positive clause of
    the claim that says what a negative passage clause denies ("tienes que pagarlo" where the passage says "no tienes
    que pagarlo") turns it. A claim that joins a negative clause of one sentence to a positive one of another, or
    copies the part of a sentence the negation does not govern, is not turned."""
    for part in _clauses(sentence):
        stems = _content_stems(part)
        if _NEGATION_RE.search(fold(part)):
            governed = _governed(part)
            if governed and not any(governed & clause.denied for clause in clauses if clause.negative):
                return f"no passage says «{part.strip()[:60]}»"
            continue
        if _CONDITION_RE.match(fold(part).strip()):
            continue  # "si cancelas entre el día 8 y el 30": another branch of a rule, not its negation
        shared = [(len(stems & clause.stems), clause) for clause in clauses]
        most = max((count for count, _ in shared), default=0)
        for count, clause in shared:
            if (count == most >= 2 and clause.negative and clause.denied
                    and len(stems & clause.denied) >= min(2, len(clause.denied))):
                return f"turns the negation of the passage's «{clause.text.strip()[:80]}»"
    return ""


def _governed(clause: str) -> set[str]:
    """Return the content stems of the first words a clause's negations govern ("no es requisito pagarlo antes")."""
    governed: set[str] = set()
    for _, after in _AFTER_NEGATION_RE.findall(fold(clause)):
        governed |= set(list(dict.fromkeys(w[:_STEM] for w in _WORD_RE.findall(after)
                                            if len(w) > 2 and w not in _STOP_WORDS))[:_GOVERNED])
    return governed


# Small numbers a passage may write in words ("tres días hábiles", "five calendar days"); "un" is left out, being
# far more often the article than the number.
_SPELLED = {word: str(value) for word, value in NUMBER_WORDS.items() if 0 < value <= 12 and word != "un"}
_SPELLED_RE = re.compile(r"\b(" + "|".join(_SPELLED) + r")\b")


def _spelled_numbers(text: str) -> set[str]:
    """Return the small numbers a text writes in words, as figures ("tres" → "3")."""
    return {_SPELLED[word] for word in _SPELLED_RE.findall(fold(text))}


def _passage_sentences(text: str) -> list[str]:
    """Return a passage's sentences and lines."""
    return [piece for piece in re.split(r"(?<=[.!?])\s+|\n+", text) if piece.strip()]


def _verdict(judge, claims: list[str], unsupported: list[str]) -> Judgement:
    if not claims:
        verdict, reason = "pass", "no factual claim (a hand-over, a greeting or an empty answer)"
    elif unsupported:
        verdict = "fail"
        reason = f"{len(unsupported)} of {len(claims)} claims unsupported: " + " | ".join(unsupported)
    else:
        verdict, reason = "pass", f"all {len(claims)} claims supported by the evidence"
    return Judgement(verdict=verdict, reason=reason, judge_version=judge.version, model=judge.model, attempts=1,
                     raw="")
