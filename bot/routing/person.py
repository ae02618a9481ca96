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
the account: neither asks for a person to talk to.
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
         r"pas[ae]\w*|mand[ae]me|dame|deme|atiend\w*|atender|escrib\w*|llam\w*|talk\w*|speak\w*|spoke|chat\w*|"
         r"put me through|transfer\w*|connect\w*|call me|reach|get in touch|get me|is there|are there|hay|there|"
         r"no quiero|i dont want|not|no con|need|want|necesito|quiero)")
_PERSON_REQUEST = rx(
    rf"\b{_PEOPLE}\b",
    rf"\b{_TALK}\b.{{0,40}}\b{_SOMEONE}\b",
    rf"\b{_SOMEONE}\b.{{0,30}}\b(atienda|atender|que me atienda|ahi|alli|there|help|answer|responda|lea|sepa|"
    r"entienda|explique|working|trabajando|disponible|available)",
    rf"\b{_SOMEONE}\b.{{0,40}}\b{_REACH}\b",
    rf"\b{_TALK}\b.{{0,30}}\b{_DESK}\b",
    r"\b(pasame|pasenme|paseme|comunicame|comuniqueme|mandame|dame|deme|ponme|poneme|ponganme|pongame|derivame|"
    r"derivenme|comunica|comunique) con\b",
    r"\b(bot|robot|maquina|machine)\s+no\b|\bno (mas |more )?(bots?|robots?)\b|\bnot (a|the) (bot|robot|machine)\b",
    r"\bcon quien (puedo|podria|debo|tengo que) (hablar|comunicarme|escribir)\b|\bwho (can|do|should) i (talk|speak)\b",
    r"\b(give me a call|call me|ring me|phone me|contact me|reach me|call (him|her|them) (back|directly)|phone "
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
    r"\b(hasta que hora|a que hora|horarios?|what time|opening hours|business hours|until when)\b.{0,40}"
    r"\b(atienden|atiende|abren|open|work|trabajan|responden|answer)",
    r"\b(send|mand[ae]n?|envi[ae]n?)\b.{0,20}\b(someone|somebody|alguien|tecnico|technician)\b.{0,20}"
    r"\b(over|a la casa|a mi casa|to my (house|home)|visit|visita)",
    r"\b(nombre de|name of|'s name|to another person)\b",
    r"\b(someone|somebody|alguien|tecnico|technician)\b.{0,20}\b(revis\w*|arregl\w*|repar\w*|instal\w*|chequ\w*|"
    r"fix|repair|install|check|look at)\b.{0,25}\b(instalacion|fibra|router|modem|conexion|connection|cable|linea|"
    r"line|internet|equipo|antena|wifi|servicio|service)\b",
)


# Where a message's sentences end: a bare word for a person may be one sentence of several ("I've asked three
# times. PERSON. NOW.").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def asks_for_person(meant: str) -> bool:
    """Whether a message (as `bot.routing.text.read_as_meant` reads it) asks to talk to a person."""
    if _NOT_A_REQUEST.search(meant):
        return False
    return bool(_PERSON_REQUEST.search(meant)
                or any(_DESK_ALONE.search(sentence) for sentence in _SENTENCE_END.split(meant)))
