"""Does the message ask for a person? Only an explicit request counts. Pure: no Django.

A missed request for a person is the worst routing error, and a topic that merely resembles one ("customer
support initiatives", "the invoice from Ms. Rivera") is the second worst: it spends an agent's time on what the
bot could answer. So the request is read from its words, never from a classifier's similarity:
- a word that, to this bot, only ever means people to talk to (human, agent, adviser, operator, supervisor,
  sales people, "a real person"), singular or plural;
- a word for "someone" (alguien, una persona, somebody, an assistant, your team) beside a verb of talking,
  reaching or being attended ("hablar con", "ponerme en contacto", "talk to", "get in touch");
- a service desk ("atención al cliente", "customer service") beside such a verb, or as the whole message;
- "pásame con …", "put me through", "call me".
"Send someone over to fix the router" is a technician's visit and "to another person's name" a transfer of
the account: neither asks for a person to talk to. A word for people the message only mentions is no request
either: what an agent said or did, thanks or "never mind", the customer's own boss, a job with the provider, what
the bot is ("the agent told me yesterday…", "mi jefe quiere saber…") — unless the same sentence also asks. Chat
spellings are read as meant ("kiero ablar", bot.routing.text) and a long word for people misspelt by a letter
("reprsentative") is still that word.
"""

from __future__ import annotations

import re

from bot.routing.text import rx

# People to talk to, whatever surrounds them (plural forms included).
_PEOPLE = (r"(humanos?|humanas?|human|humans|asesor(?:es|as?)?|ajentes?|agentes?|agents?|operador(?:es|as?)?|operators?|"
           r"representantes?|representatives?|supervisor(?:es|as?)?|supervisors?|gerentes?|managers?|jefe|boss|"
           r"vendedor(?:es|as?)?|salespeople|salesperson|sales (?:team|department|people|reps?|representatives?)|"
           r"(?:equipo|personal|gente|departamento|area|ejecutivos?) de (?:ventas|atencion|soporte|servicio)|"
           r"personas? real(?:es)?|personas? de verdad|(?:real|actual|live) (?:person|people|humans?|agents?)|"
           r"(?:alguien|someone|somebody|anybody|anyone|nadie) (?:real|de verdad|humano|human|vivo|alive)|"
           r"ser(?:es)? humanos?|carne y hueso|live chat|customer service reps?|encargad[oa]s?|advis[oe]rs?|"
           r"call ?back|devolver la llamada|devuelvan la llamada)")
# Words for "someone" that are a person to talk to only beside a verb of talking, reaching or attending.
_SOMEONE = (r"(alguien|nadie|(?:una|alguna|ni una|otra)(?: sola)? persona|personas|a person|the person|someone|somebody|"
            r"anybody|anyone|an? assistant|un asistente|una asistente|your (?:team|staff|people)|su (?:equipo|personal|"
            r"gente)|sus (?:empleados|trabajadores)|ventas|sales|ejecutiv[oa]s?|(?:your |a |tu |su )?(?:colleagues?|companer[oa]s?)|"
            r"(?:el |la )?(?:area|departamento|oficina) de "
            r"\w+|la persona|un robot|a bot|un bot|una maquina|a machine)")
# Verbs of reaching the customer, for "someone … call me" (the broader list above also holds "need", "hay").
_REACH = (r"(habl\w*|comunic\w*|contact\w*|llam\w*|escrib\w*|atiend\w*|talk\w*|speak\w*|call\w*|phone\w*|"
          r"repl\w*|respond\w*|chat\w*)")
_DESK = r"(atencion al cliente|servicio al cliente|customer (?:service|support|care)|soporte)"
_TALK = (r"(pass me|hand me|habl\w*|convers\w*|chate\w*|comunic\w*|contact\w*|conect\w*|poner(?:me|nos)? en contacto|phone\w*|deriv\w*|"
         r"pas[ae]\w*|mand[ae]me|dame|deme|atiend\w*|atender|atendid[oa]s?|escrib\w*|llam\w*|talk\w*|speak\w*|spoke|chat\w*|"
         r"put me through|transfer\w*|connect\w*|call me|reach|get in touch|get me|is there|are there|hay|there|"
         r"no quiero|i dont want|not|no con|need|want|necesito|quiero)")
_PEOPLE_WORD = re.compile(rf"\b{_PEOPLE}\b")
_PERSON_REQUEST = rx(
    rf"\b{_TALK}\b.{{0,40}}\b{_SOMEONE}\b",
    rf"\b{_SOMEONE}\b.{{0,30}}\b(atienda|atender|que me atienda|ahi|alli|there|help|answer|responda|lea|sepa|"
    r"entienda|explique|working|trabajando|disponible|available)",
    rf"\b{_SOMEONE}\b.{{0,40}}\b{_REACH}\b",
    rf"\b{_TALK}\b.{{0,30}}\b{_DESK}\b",
    r"\b(pasame|pasenme|paseme|comunicame|comuniqueme|mandame|dame|deme|ponme|poneme|ponganme|pongame|derivame|"
    r"derivenme|comunica|comunique) con\b",
    r"\b(bot|robot|maquina|machine)\s+no\b|\bno (mas |more )?(bots?|robots?)\b|\bnot (a|the) (bot|robot|machine)\b",
    r"\bcon quien (puedo|podria|debo|tengo que) (hablar|comunicarme|escribir)\b|\bwho (can|do|should) i (talk|speak)\b",
    r"\b(give me a (?:call|ring|buzz)|call me|ring me|phone me|contact me|reach me|call (him|her|them) (back|directly)|phone "
    r"(him|her|them)|contactarme|llamarme|llamenme|llamame|contacteme|contactenme|me (pueden |puede |podrian |podria "
    r"|puedes )?(llamar|contactar)|me (llame|llamen|contacte|contacten)|que me llamen)\b",
    r"\b(me )?(pasas|podes pasar|puedes pasar|puede pasar|puedes ponerme|puede ponerme) (con|en contacto)\b",
    r"\bput me through\b|\btransfer me\b|\bconnect me\b|\bcall me\b|\bllamenme\b|\bllamame\b",
    r"\b(comunic\w*|pas[ae]\w*|transfer\w*|connect\w*|put me through) (me )?(con|with|to) (la |el )?"
    r"(sen\u0303?ora|sen\u0303?or|sen\u0303?orita|sra|sr|srta|licenciada|licenciado|lic|ms|mr|mrs|miss)\b",
)
# The whole message, or one of its sentences, is a service desk or a bare word for a person ("atención al cliente",
# "persona", "alguien?").
_DESK_ALONE = re.compile(rf"^\W*(?:(?:con|with|the|el|la|una|a|please|por favor)\s+)*(?:{_DESK}|persona|alguien|person|"
                         r"someone|somebody|reps?|agents?|agentes?|asesor(?:es)?|operator|operador)\W*(?:(?:please|por favor|pls|plis|now|ya|ahora|asap|urgente)\W*)*$")
_NOT_A_REQUEST = rx(
    # When people work is a question about opening hours: "¿hasta qué hora atienden los agentes?".
    r"\b(hasta que hora|a que hora|horarios?|what time|what hours|which hours|what days|which days|que dias|"
    r"opening hours|business hours|until when)\b.{0,40}"
    r"\b(atienden|atiende|abren|open|work|trabajan|responden|answer)",
    r"\b(send|mand[ae]n?|envi[ae]n?)\b.{0,20}\b(someone|somebody|alguien|tecnico|technician)\b.{0,20}"
    r"\b(over|a la casa|a mi casa|to my (house|home)|visit|visita)",
    r"\b(nombre de|name of|'s name|to another person)\b",
    # Nobody at home when the technician comes: "¿y si el técnico llega y no hay nadie en la casa?".
    r"\b(nadie|no one|nobody|anyone|anybody|someone|somebody|alguien)\b.{0,15}\b(en (la|mi) casa|en casa|at home|"
    r"en el apartamento|para recibir\w*|to let (him|her|them) in)\b",
    r"\b(someone|somebody|alguien|tecnico|technician)\b.{0,20}\b(revis\w*|arregl\w*|repar\w*|instal\w*|chequ\w*|"
    r"fix|repair|install|check|look at)\b.{0,25}\b(instalacion|fibra|router|modem|conexion|connection|cable|linea|"
    r"line|internet|equipo|antena|wifi|servicio|service)\b",
)


# A word for people that the sentence only mentions. The customer's own people ("my boss wants to know…", "mi
# jefe"), a job with the provider ("are you hiring? I'd like to apply as a sales rep"), what the bot is ("my kids
# think the bot is a real person"): never a request. What a person said or did, thanks, good wishes or "never mind"
# ("the agent told me yesterday…", "ok gracias, ya hablé con el asesor", "never mind the human"): not a request
# unless the sentence also asks ("the agent told me to wait, I want a supervisor now").
_THEIR_OWN = re.compile(r"\b(?:my|mi|mis|our|nuestr[oa]s?)\s+$")
_NOT_THE_DESK = rx(
    r"\b(hiring|apply|applying|job|jobs|openings|vacanc(?:y|ies)|vacantes?|empleos?|curriculum|resume|"
    r"trabajar (?:con|para) ustedes)\b",
    r"\b(thinks?|cree|creen|creia|creian|thought) (?:that |que )?(?:the bot|el bot|you|it|eres|es|this|esto)\b",
)
_TOLD = rx(
    r"\b(told|said|promised|was|were|had|came|spoke|talked|dijo|dijeron|prometio|prometieron|fue|fueron|era|"
    r"vino|vinieron|atendio|atendieron|hable|hablamos|converse)\b",
    r"\b(never ?mind|no need|no hace falta|ya no (?:hace falta|necesito)|olvidalo|forget it|thanks|thank you|thx|"
    r"gracias|have a (?:good|nice|great)|saludos)\b",
)
_ASKS = rx(
    r"\b(quiero|quisiera|necesito|deseo|solicito|exijo|pido|want|wanna|need|would like|i'?d like|can i|could i|"
    r"may i|let me|please|por favor|pls|plis|pasame|pasenme|paseme|comunicame|comuniqueme|ponme|transfer|connect|"
    r"hablar con|talk to|speak (?:to|with)|contactar|now|ya mismo|ahora)\b",
)


# The long words for people, which a customer may misspell by a letter or two ("reprsentative", "supervisro"). No other
# word is that near one of them; the short ones ("agent", "asesor") are near too many words to be read this way.
_LONG_PEOPLE = ("representative", "representatives", "representante", "representantes", "supervisor", "supervisora",
                "supervisores", "supervisors", "operador", "operadora", "operadores", "operators", "operator")
_LONG_WORD = re.compile(r"\b[a-zñ]{8,}\b")


def _within(word: str, target: str, most: int) -> bool:
    """Whether `word` becomes `target` with at most `most` letters added, dropped or changed."""
    if abs(len(word) - len(target)) > most:
        return False
    previous = list(range(len(target) + 1))
    for i, letter in enumerate(word, 1):
        current = [i]
        for j, other in enumerate(target, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (letter != other)))
        if min(current) > most:
            return False
        previous = current
    return previous[-1] <= most


def _people_words(sentence: str) -> list[re.Match]:
    """The words for people in a sentence, a long one misspelt by a letter (two in a word of twelve) included."""
    found = list(_PEOPLE_WORD.finditer(sentence))
    return found + [word for word in _LONG_WORD.finditer(sentence)
                    if not _PEOPLE_WORD.fullmatch(word.group(0))
                    and any(_within(word.group(0), target, 2 if len(target) >= 12 else 1) for target in _LONG_PEOPLE)]


def _asked_for(sentence: str, people: re.Match) -> bool:
    """Whether a word for people (`people`, found in `sentence`) is asked for rather than mentioned."""
    if _THEIR_OWN.search(sentence[:people.start()]):
        return False
    return not _TOLD.search(sentence) or bool(_ASKS.search(sentence))


# Where a message's sentences end: a bare word for a person may be one sentence of several ("I've asked three
# times. PERSON. NOW.").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def asks_for_person(meant: str) -> bool:
    """Whether a message (as `bot.routing.text.read_as_meant` reads it) asks to talk to a person."""
    if _NOT_A_REQUEST.search(meant):
        return False
    if _NOT_THE_DESK.search(meant):  # a job with the provider, what the bot is: anywhere in the message
        return bool(_PERSON_REQUEST.search(meant))
    if _PERSON_REQUEST.search(meant):
        return True
    sentences = _SENTENCE_END.split(meant)
    return any(_DESK_ALONE.search(sentence) or any(_asked_for(sentence, people) for people in _people_words(sentence))
               for sentence in sentences)
