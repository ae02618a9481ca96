"""Does the message ask the bot to do something — change, cancel, refund, buy, reset? Pure: no Django.

The bot answers; it changes nothing. A request to act is read from its form — an imperative ("cámbiame el
plan", "reintégrenme lo cobrado", "please cancel my order"), a wish to act ("quiero dar de baja", "I'd like
to update my address", "I need to reset my PIN") or a plea for help doing it ("help me cancel…",
"necesito ayuda para cambiar…") — on a verb of changing something. A question about how the thing is done
("¿cómo cambio de plan?", "how do I cancel?") is information, not a request to act: the documents answer it.
"""

from __future__ import annotations

from bot.routing.text import rx

# Verbs of changing something, as stems that take any ending (cambi-a, cambi-en, cambi-ar, cancel-en …).
_ACT_ES = (r"(cambi|cancel|anul|agreg|añad|anad|aplic|devuelv|devolv|reintegr|reembols|quit|elimin|borr|activ|"
           r"reactiv|desactiv|suspend|instal|actualic|actualiz|modific|transfier|transfer|traspas|program|agend|"
           r"reconect|exoner|condon|congel|pospon|aplaz|difier|difer|financ|compr|pid|ped|reserv|restablec|recuper|"
           r"resete|suscrib|desuscrib|registr|abr|cierr|cerr|rastre|envi|mand|baj|sub|mud|renunci|retir|bloque|desbloque|"
           r"divid|reinici|emit|proced|pong|arregl|repar|habilit|deshabilit|liber|configur|traslad|reprogram)")
_ACT_EN = (r"(change|cancel|annul|add|apply|refund|reimburse|remove|delete|activate|reactivate|deactivate|suspend|"
           r"install|update|modify|transfer|schedule|book|reconnect|waive|freeze|postpone|defer|finance|buy|purchase|"
           r"shop|order|reserve|reset|recover|retrieve|unsubscribe|subscribe|sign me up|register|open|close|track|"
           r"send|ship|upgrade|downgrade|move|terminate|end|switch|file|lodge|submit|raise|set up|arrange|split|extend|"
           r"give me (a|an|more) (extension|discount|refund|credit)|block|unblock|reboot|restart|issue|re-?issue|take|"
           r"fix|repair|configure|enable|disable|unlock|put|credit|rebook|re-book|reschedule|turn on|turn off|switch on|"
           r"switch off)")
_WISH = (r"(quiero|quisiera|necesito|deseo|me gustaria|queria|vengo a|voy a|ayudame a|ayudeme a|ayudenme a|"
         r"me ayudas a|me ayuda a|me pueden|me puedes|me puede|pueden|puedes|puede|podrian|podrias|podria|"
         r"por favor|porfa|pls|please|plz|i want to|i wanna|wanna|i need to|need to|i would like to|i'd like to|"
         r"id like to|i'm trying to|im trying to|i try to|trying to|can you|could you|would you|can u|could u|"
         r"help me|i need help|need help|need assistance|i want assistance|want assistance|assistance|"
         r"i need you to|i want you to|let me|go ahead and)")
# A verb's ending, so a noun that shares a stem ("transferencia", "cambio de plan") is not read as a request.
_VERB_END = (r"(?:ar|er|ir|a|as|e|es|en|an|o|ame|eme|enme|anme|ales|arme|erme|irme|arlo|erlo|irlo|arla|erla|irla|ando|"
             r"iendo|enlo|anlo|ara|aran|iera|ieran)")
# Words that may stand between the wish and its verb ("help me to cancel", "me pueden por favor cambiar").
_FILLER = (r"(me|te|le|nos|lo|la|los|las|a|para|que|you|u|to|me|with|in|on|just|please|por favor|really|also|urgently|"
           r"ya|ahora|hoy|now|today|asap|quickly|rapido)")
_ACTION = rx(
    # A wish or plea, then the verb: "quiero cancelar", "help me cancel", "need assistance updating".
    rf"\b{_WISH}\b\W*(?:{_FILLER}\W+){{0,3}}(?:a |que (?:me |le |nos )?)?{_ACT_ES}{_VERB_END}\b",
    rf"\b{_WISH}\b\W*(?:{_FILLER}\W+){{0,3}}(?:to )?{_ACT_EN}(?:s|es|ed|ing)?\b",
    # An imperative at the start of the message or of a clause: "cámbienme el plan", "cancel my order"; with a pronoun
    # attached ("actívenmela", "cámbiamelo") it is one wherever the clause ends.
    rf"(?:^|[.!,;]\s*)(?:por favor\s+|favor\s+|please\s+)?{_ACT_ES}(?:a|e|en|an|ame|eme|enme|anme|alo|elo|enlo|anlo|"
    r"ala|ela|enla|anla)\b"
    r"(?=\s+\w)",
    rf"(?:^|[.!,;]\s*)(?:por favor\s+|favor\s+|please\s+)?{_ACT_ES}(?:a|e|en|an)(?:me|nos|le|les|se)(?:lo|la|los|las)\b",
    # Moving the customer somewhere or putting the account in someone's name: "pásenme al ciclo B", "quiero pasar el
    # contrato a nombre de mi hermana", "put the account in my wife's name".
    r"\b(?:pasame|pasenme|paseme|cambiame|cambienme|muevanme|muevame)\s+(?:al|a la|a el|a)\s+(?:ciclo|plan|fibra|"
    r"paquete|empresarial|hogar)\b",
    r"\b(?:poner|pasar|pasen|pase|pongan|ponga|cambiar|traspasar|transferir)\b.{0,40}\ba nombre de\b",
    r"\b(?:put|transfer|move|change)\b.{0,30}\b(?:in|into|to|under)\b.{0,20}\bname\b",
    rf"(?:^|[.!,;]\s*)(?:please\s+)?{_ACT_EN}\s+(?:my|our|the|this|that|me|it|a|an)\b",
    r"\bden(me|nos)? de baja\b|\bdar(me)? de baja\b|\bdarme de baja\b",
    r"\b(dar|darme|den|denme|dame|deme|conceder|conced\w+|give me|grant)\b.{0,15}\b(prorroga|extension|plazo|descuento|"
    r"refund|credit|discount|credito|reembolso)\b|\b(i want|i need|i'?d like|quiero|necesito) (a|an|my|un|una|mi) (refund|"
    r"reembolso|credit|credito|descuento|discount)\b|\b(payment plan|instal+ments?|cuotas) (for me|para mi)\b",
    # A short message that is only the request: "file consumer claim", "cancel subscription", "cambiar plan".
    rf"^\W*{_ACT_EN}\s+\w+(\s+\w+){{0,6}}\W*$",
    # Filing a complaint or a claim (how to file one is a question for the documents).
    r"\b(make|making|file|filing|lodge|lodging|submit|raise|put in|poner|presentar|hacer|levantar|radicar|meter)"
    r"\s+(an? |un |una |my |mi )?(formal |consumer |customer )?(complaint|claim|queja|reclamo|reclamacion|denuncia)",
)
# How the thing is done, whether it can be done, what it costs: a question for the documents.
_HOW = rx(
    r"\bcomo (hago|se|puedo|podria|debo|tengo que|hacer|funciona)\b|\b(como|donde) (lo |la |le |me )?[a-z]{3,}o\b",
    r"\b(se puede|es posible|puedo)\b.{0,40}[?¿]|\b(cuanto|cuanta|cuantos) (cuesta|cobran|sale|tarda|demora)\b",
    r"\bhow (do|can|could|would|should) (i|we|you|one)\b|\bhow to\b|\bhow much\b|\bhow long\b|\bwhere (do|can|could)\b",
    r"\bis it possible\b|\bcan i\b(?! get (some |any )?help).{0,60}\?|\bwhat (is|are) the (steps|process|procedure|requirements)\b",
    r"\b(i (dont|do not) know how|no se como|no sé como)\b|\bwhat (do i|should i) (have to )?do to\b",
    r"\b(info|information|informacion) (about|on|sobre|de)\b|\btell me about\b",
    r"\b(cual|cuales) (es|son) (el|la|los|las) (procedimiento|proceso|pasos|requisitos|politica)\b",
    r"\b(que|what) (necesito|se necesita|hace falta|do i need|is needed|documents?)\b|\bcuanto tiempo\b",
    r"^\W*(have|do|does|are|is|did) (you|there|your|ya|u)\b|\b(where|a donde|adonde) (can|could|do|to|puedo|debo)\b",
    r"\bdonde (puedo|se|hago|debo|tengo que)\b",
)
# "Send me my payment history", "mándame la factura", "I want to take a look at my invoice": asking to be shown
# something, not to change it.
_SHOW_ME = rx(r"\b(send|email|give|show|forward) (me|us)\b(?!\s+(?:a |an |more |some )?(?:discount|refund|credit|"
              r"extension|break)\b)", r"\b(enviame|enviarme|envienme|mandame|mandarme|manden?me|"
              r"pasame|pasenme|muestrame|muestrenme)\b(?!\s+(?:al|a)\b)", r"\bme (envias|envian|mandas|mandan|pasas|pasan|muestras)\b",
              r"\b(take|have|get|taking|having) an? (\w+ )?look\b|\bechar(le)? un (\w+ )?(vistazo|ojo)\b")


def asks_to_act(meant: str) -> bool:
    """Whether a message (as `bot.routing.text.read_as_meant` reads it) asks the bot to change or do something."""
    return bool(_ACTION.search(meant)) and not _HOW.search(meant) and not _SHOW_ME.search(meant)


def asks_how(meant: str) -> bool:
    """Whether a message asks how something is done, whether it can be, or for information about it."""
    return bool(_HOW.search(meant))
