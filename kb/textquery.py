"""Which words of a query the full-text branch requires, and how it scores them. Pure: no Django.

A text hit is proof of relevance only when the chunk holds every content word of the question — an
AND, as `plainto_tsquery` builds it — not when it holds any one of them: with OR, 285 of the 295
chunks the sample golden set retrieved were "text hits", immune from the prune, and none was pruned.
So:

- greetings and question filler are blanked before anything else ("hola, buenas, quería saber cuánto
  cuesta la reconexión" is matched on "cuesta reconexión"); the text-search configs drop stop words;
- the query's stop words say which language it is written in; the AND runs in that language's config
  (`spanish` over es chunks, `english` over en chunks) and in `simple` (every chunk, unstemmed, so
  names and codes meet across languages), all over accent-folded text; when the stop words cannot
  tell, in both language configs;
- a short question (at most `LONG_QUERY_WORDS` content words) needs every content word the knowledge
  base knows, and at most `MAX_UNKNOWN_WORDS` words it has never seen — one more unseen word and the
  question is about something the knowledge base does not speak of: no AND, no proof;
- a long, rambling message rarely has one chunk holding all its words, so the AND runs over its
  `LONG_QUERY_RAREST` rarest known words (at least two);
- a word is held in any of its forms: the English Snowball stemmer leaves irregular forms apart from
  their verb ("paid" is not "pay", "sent" not "send"), so `IRREGULAR_FORMS` gives such a word its
  verb's lexeme as an alternative inside the AND ("paid" → 'paid' | 'pay'). Without it the sample set's
  must-pass g014 ("how much extra do i pay if my home fiber bill is paid a week late") required 'paid',
  which no chunk of the late-fee page holds (it says "pays", "paying", "unpaid"): no proof, and the
  vector branch put the welcome discount 0.0003 above the late fees. The Spanish stemmer already
  conflates "pagué", "pagó", "pagado" and "pagar" ('pag').

There is no OR fallback: measured on the dev splits, an OR of the rarest terms voting in the fusion
took the second set's hybrid below its own vector branch (MRR 0.630 vs 0.648), and with no vote it
changes nothing. Scores are BM25 over the query's known content words (`bm25_idf`, N and avgdl from
the term statistics): ts_rank has no IDF, so a common word weighed as much as the rare one the
question is about.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from core.text import fold

# Accents are folded before stemming so "reconexion" finds "reconexión" (subscribers type without them);
# ñ is kept ("año" is not "ano"). The generated tsvector columns and the query's lexemes are folded in SQL
# with translate() and core.fulltext's ACCENTED / UNACCENTED; Python folds (the filler check) go through
# core.text.fold.

# Folded words that say how someone asks, not what about (stop words are the configs' business): greetings,
# politeness, question words, and the verbs of a price question ("cuánto cuesta la reconexión" is about the
# reconnection; the section that answers it may say "se cobra" or "tiene un costo").
FILLER = frozenset("""
cuesta cuestan cobran sale salen vale valen cost costs
hola holaa buenas buenos buen dia dias tardes noches saludos saludo gracias porfa favor disculpa disculpe
quisiera queria quiero quieren necesito necesitaba saber pregunta preguntar consulta consultar duda ayuda
ayudar ayudame podrian podria puedo pueden puede dime digame explicar explicame epa chamo pana amigo amiga
senor senora oye mira bueno ok okay vale cuanto cuanta cuantos cuantas cual cuales donde cuando quien
whats hi hello hey thanks thank please pls want wanted wondering know tell ask asking question could would
can need help good morning afternoon evening dear sir madam much many what which where when who why
""".split())
_WORD = re.compile(r"\w+", re.UNICODE)

# config → {irregular form: its verb}: the forms a billing question uses that the config's stemmer leaves
# apart from the verb's own lexeme. Both sides are stemmed by the config in SQL (kb/search.py, text_plan).
IRREGULAR_FORMS = {"english": {
    "paid": "pay", "sent": "send", "bought": "buy", "spent": "spend", "got": "get", "gotten": "get",
    "made": "make", "took": "take", "taken": "take", "gave": "give", "given": "give", "lost": "lose",
    "told": "tell", "kept": "keep", "left": "leave", "brought": "bring", "chose": "choose", "chosen": "choose",
    "broke": "break", "broken": "break", "forgot": "forget", "forgotten": "forget", "sold": "sell",
    "came": "come", "went": "go", "gone": "go", "found": "find", "began": "begin", "begun": "begin",
    "wrote": "write", "written": "write", "withdrew": "withdraw", "withdrawn": "withdraw",
}}

# Chosen on the dev splits of both golden sets (README, "Knowledge base"); BM25's k1 and b are the usual
# Robertson/Spärck Jones values, not tuned.
LONG_QUERY_WORDS = 6
LONG_QUERY_RAREST = 4
MAX_UNKNOWN_WORDS = 1
BM25_K1 = 1.2
BM25_B = 0.75


def strip_filler(query: str) -> str:
    """Return the query with its greeting and question-filler words blanked out (other characters kept)."""
    return _WORD.sub(lambda m: " " if fold(m.group(0)) in FILLER else m.group(0), query)


@dataclass(frozen=True)
class QueryTerm:
    config: str  # "spanish", "english" or "simple"
    lexeme: str
    ndoc: int  # live chunks of that config holding it; 0 when none does
    position: int  # where its word first appears in the query
    forms: tuple[tuple[str, int], ...] = ()  # other lexemes of the same word (IRREGULAR_FORMS), with their ndoc

    @property
    def word_ndoc(self) -> int:
        """Return an upper bound of the chunks holding the word in any of its forms (0: the KB never uses it)."""
        return self.ndoc + sum(n for _, n in self.forms)


@dataclass(frozen=True)
class ConfigTotals:
    chunks: int  # live chunks the config indexes
    avg_words: float  # their mean length in words


@dataclass
class TextPlan:
    conjunctions: dict[str, list[str]] = field(default_factory=dict)  # config → lexemes a text hit holds, all
    forms: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # config → {lexeme: other forms it may take}
    scored: dict[str, dict[str, float]] = field(default_factory=dict)  # config → {lexeme: BM25 idf}
    avg_words: dict[str, float] = field(default_factory=dict)  # config → mean chunk length (BM25's avgdl)
    # config → most chunks its AND can match: the document count of its rarest required word (in any form)
    bounds: dict[str, int] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.conjunctions

    def selective(self, cap: int) -> list[str]:
        """Return the configs whose AND singles out at most `cap` chunks of the whole knowledge base.

        Such an AND is searched over every chunk and all its matches are ranked. An AND whose rarest word
        more than `cap` chunks hold (common words only: "pago factura" on a large knowledge base) cannot
        single a chunk out on its own: it is checked on the vector branch's candidates only, where it still
        proves those candidates relevant. A config missing from `bounds` (a plan built by hand) is selective.
        """
        return [config for config in self.conjunctions if self.bounds.get(config, 0) <= cap]

    def unselective(self, cap: int) -> list[str]:
        """Return the configs whose AND is of common words only: checked among the vector candidates."""
        return [config for config in self.conjunctions if self.bounds.get(config, 0) > cap]


def bm25_idf(ndoc: int, chunks: int) -> float:
    """Return BM25's idf, ln(1 + (N − n + 0.5) / (n + 0.5)): positive however common the term."""
    return math.log(1 + (max(chunks, ndoc) - ndoc + 0.5) / (ndoc + 0.5))


def query_language_configs(stop_words: dict[str, int]) -> set[str] | None:
    """Return the language config a query is written in, judged by its stop words; None when they cannot tell.

    "cuánto cuesta la reconexión" has a Spanish stop word and no English one. Without this its English
    lexemes ("la", "de", "por" are no English stop words) made ANDs of Spanish function words that a few
    English chunks happen to hold.
    """
    most = max(stop_words.values(), default=0)
    leaders = {config for config, count in stop_words.items() if count == most}
    return leaders if most > 0 and len(leaders) == 1 else None


def plan_text_query(terms: list[QueryTerm], totals: dict[str, ConfigTotals], *,
                    stop_words: dict[str, int] | None = None) -> TextPlan:
    """Return the lexemes each config's AND requires and the BM25 weight of each known content word."""
    plan = TextPlan()
    languages = query_language_configs(stop_words or {})
    by_config: dict[str, list[QueryTerm]] = {}
    for term in sorted(terms, key=lambda t: (t.position, t.lexeme)):
        if term.config != "simple" and languages is not None and term.config not in languages:
            continue
        if all(t.lexeme != term.lexeme for t in by_config.get(term.config, [])):
            by_config.setdefault(term.config, []).append(term)
    for config, content in by_config.items():
        known = [t for t in content if t.word_ndoc > 0]
        if not known:
            continue
        chunks = totals[config].chunks if config in totals else max(t.word_ndoc for t in known)
        plan.scored[config] = {lexeme: bm25_idf(ndoc, chunks) for t in known
                               for lexeme, ndoc in ((t.lexeme, t.ndoc), *t.forms) if ndoc > 0}
        if config in totals:
            plan.avg_words[config] = totals[config].avg_words
        required = _required(content, known)
        if required:
            plan.conjunctions[config] = [t.lexeme for t in required]
            plan.bounds[config] = min(t.word_ndoc for t in required)
            forms = {t.lexeme: [lexeme for lexeme, ndoc in t.forms if ndoc > 0] for t in required}
            if any(forms.values()):
                plan.forms[config] = {lexeme: others for lexeme, others in forms.items() if others}
    return plan


def _required(content: list[QueryTerm], known: list[QueryTerm]) -> list[QueryTerm]:
    """Return the terms a chunk must hold all of to be a text hit for this config (none: no AND)."""
    if len(content) > LONG_QUERY_WORDS:
        return sorted(known, key=lambda t: (t.word_ndoc, t.position))[:LONG_QUERY_RAREST] if len(known) >= 2 else []
    unknown = len(content) - len(known)
    if unknown == 0 or (unknown <= MAX_UNKNOWN_WORDS and len(known) >= 2):
        return known
    return []


def tsquery_and(lexemes: list[str], forms: dict[str, list[str]] | None = None) -> str:
    """Return the tsquery that matches a chunk holding every one of the lexemes (each in any of its forms)."""
    def quoted(lexeme: str) -> str:
        return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"

    def word(lexeme: str) -> str:
        others = (forms or {}).get(lexeme) or []
        return f"({' | '.join(quoted(form) for form in [lexeme, *others])})" if others else quoted(lexeme)

    return " & ".join(word(lexeme) for lexeme in lexemes)


def shown_terms(plan: TextPlan) -> list[str]:
    """Return the AND as "config:lexeme" (a word with other forms: "config:paid|pay"), for people to read."""
    return [f"{config}:{'|'.join([lexeme, *plan.forms.get(config, {}).get(lexeme, [])])}"
            for config, lexemes in plan.conjunctions.items() for lexeme in lexemes]
