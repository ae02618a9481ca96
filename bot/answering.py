"""Answer a routed, answerable question: billing facts, retrieval, clarifying decisions, the writer's request.

The account route reads the customer's billing facts (identifying them first if needed); every route
searches the knowledge base; a question whose words leave two readings gets one short question instead.
What the turn must remember (the question kept while it asks) goes on the turn's context.
"""

from __future__ import annotations

from dataclasses import replace

from django.conf import settings

from bot import clarify, drafting, grounding, identify
from bot.context import TurnContext
from bot.document_answers import Passage, compose, gives_each_kinds_rule, names_a_term, one_kinds_rule
from bot.escalation import Reason, ask_for_identity, decline_reply, offer_a_person, offer_to_check_account
from bot.grounding import Evidence
from bot.joined import own_words
from bot.outcomes import Answered, Clarify, Declined, Escalated
from bot.proposal import credit_proposal, proposal_sentence
from bot.relevance import on_topic
from bot.routing.capability import account_capability
from bot.routing.decision import CLASSIFIER_SOURCES
from bot.routing.scope import in_domain
from bot.routing.text import for_search, read_as_meant
from bot.routing.types import Route
from bot.writer import TemplateWriter, WriterRequest, fact_evidence, turn_key_figures
from core import clock
from desk.credit_notes import invoice_context_of
from kb.applicability import Applicability
from kb.search import search
from kb.selectors import document_alternatives


def needs_told(routing) -> bool:
    """Whether an unsupported route is a need or a problem told without a request to act ("necesito IP fija para
    las cámaras del negocio"): the help center may say what applies, and a person is offered to do the rest."""
    return routing.route == Route.UNSUPPORTED and not routing.out_of_scope and routing.rule in CLASSIFIER_SOURCES


def answer(recorder, routing, query, *, context: TurnContext, writer, billing, chosen=None):
    """Answer a routed, answerable query: billing facts, retrieval, writer, verifier, humanizer.

    `chosen` is the option the customer picked in reply to a clarifying question (the query is then the
    original question). A document question about the customer's own bill also gets their billing facts
    when they are known and a model writes (the template writer copies facts instead of the chunk that
    explains). An account question from a customer billing cannot identify asks who they are first only
    when only their records answer it (what they owe, their payments, a numbered bill); otherwise the
    knowledge base answers what it can and the reply offers to look at their account.
    """
    draft = recorder.draft
    facts, key_figures, capability = [], [], _capability_asked(routing.capability, query)
    offer_account = False
    if routing.route == Route.ACCOUNT and not context.customer_id:
        found = identify.by_channel(recorder, billing, context)
        if isinstance(found, Escalated):
            return found
        if not found and routing.records_required:
            context.remember_identity_question(query)  # answered once the customer says who they are
            return Answered(ask_for_identity(routing.language), asks_identity=True)
        offer_account = not found
    known: dict = {}  # billing's data on the customer and their plan, when a call brought it
    if routing.route == Route.ACCOUNT and context.customer_id:
        outcome = _billing_facts(recorder, billing, capability, query, context=context, language=routing.language,
                                 chosen=chosen)
        if not isinstance(outcome, tuple):
            return outcome
        facts, key_figures, known, capability = outcome
    elif routing.account_evidence and context.customer_id and not isinstance(writer, TemplateWriter):
        facts, known = _account_evidence(recorder, billing, capability, context.customer_id)
    draft.customer_id = context.customer_id
    profile = _profile(recorder, billing, context, known, query=query, chosen=chosen, language=routing.language)

    # After a clarifying question, the picked option is part of what was asked ("si cancelo, ¿me devuelven el
    # dinero?" + "el anual"): retrieval finds the sibling it names, and the writer reads the question with it.
    picked = f" ({chosen.label})" if chosen is not None and chosen.doc else ""
    meant = for_search(query)  # the question as the customer means it ("cancelar" a bill is paying it)
    with recorder.stage("retrieve"):
        result = search(f"{meant}{picked}", k=settings.BOT_RETRIEVAL_K, applies_to=profile,
                        at_version=context.index_version)
    draft.index_version = result.index_version
    draft.retrieval = [
        {key: value for key, value in hit.as_dict().items() if key != "text"} for hit in result.fused
    ]
    # The search decides whether the turn has context (kb/context.py); it never drops a kept chunk.
    context_chunks = result.results if result.context.has_context else []
    if not context_chunks and not facts:
        if needs_told(routing):
            return Escalated(Reason.CAPABILITY_MISSING, [f"Asked for something the bot cannot do ({routing.rule}) "
                                                         "and the help center says nothing about it."])
        if not in_domain(read_as_meant(query)) and not routing.rule.startswith("own records"):
            if _billing_conversation(context):
                # Mid-way through a conversation about their bill, a message the bot cannot place is more likely a
                # follow-up it failed to read than a new subject: a person reads it rather than the customer
                # being told it is not something the bot helps with.
                return Escalated(Reason.NO_CONTEXT, [f"No context, and the message names nothing of plans, bills or "
                                                     f"payments after a question that did: {result.context.reason}."])
            # Nothing in the help center and nothing about plans, bills or payments: not a question for a person.
            return Declined(decline_reply(routing.language),
                            why=f"no context and no billing word: {result.context.reason}")
        if offer_account:  # nothing in the help center: the answer must be in their records
            context.remember_identity_question(query)
            return Answered(ask_for_identity(routing.language), asks_identity=True)
        return Escalated(Reason.NO_CONTEXT, [f"No context: {result.context.reason}."])
    segment_options: tuple = ()  # the kinds of customer to ask about, when the answer depends on which one asks
    if context_chunks and profile is None and not facts:
        # Someone billing cannot identify, and the help center answers differently for home and business: ask.
        # Only passages on the question's subject count: a late-fee passage retrieved for "how much do I save on
        # the annual plan?" says nothing of whose rule applies.
        decision = clarify.segment_decision(
            query, [hit.segment if on_topic(query, hit.text) else "" for hit in context_chunks],
            language=routing.language, docs=[hit.doc for hit in context_chunks])
        if (decision.options and (chosen is None or not chosen.segment)
                and _answer_is_one_kinds(query, context_chunks, routing.language)):
            segment_options = decision.options
    if context_chunks and not segment_options and (routing.route != Route.ACCOUNT or not key_figures and not facts):
        decided = _sibling_documents(recorder, query, context_chunks, context=context, language=routing.language,
                                     chosen=chosen, profile=profile)
        if isinstance(decided, Clarify):
            return decided
        context_chunks, by_term = decided
        if by_term is not None:  # only when the customer picked nothing: read as if they had picked their own case
            picked = f" ({by_term.label})"

    evidence, sources = _evidence(context_chunks, facts, profile)
    draft.evidence = [
        {"id": e.id, "text": e.text, "value": e.value, **sources[e.id]} for e in evidence
    ]
    figures = turn_key_figures(key_figures, first=len(context_chunks) + 1)
    draft.key_figures = [figure.to_json() for figure in figures]
    draft.prompt_version, draft.model = writer.prompt_version, writer.name
    # The writer and the relevance check read the question as meant, as retrieval did ("si me cortan el servicio…" is
    # a suspension, "¿cuánto debo cancelar?" a payment): the help center's words are the meant ones.
    request = WriterRequest(query=f"{meant}{picked}", language=routing.language, evidence=evidence, sources=sources,
                            history=list(context.history), capability=capability if facts else "",
                            key_figures=figures, segment=profile.segment if profile else "",
                            said=context.previous_reply)
    outcome = drafting.write_and_verify(recorder, writer, request, template=isinstance(writer, TemplateWriter))
    if profile is None and not facts:
        asked = _each_kinds_then_ask(recorder, context, query, outcome, segment_options, routing.language)
        if asked is not None:
            return asked
    if isinstance(outcome, Answered) and routing.route == Route.ACCOUNT and context.customer_id \
            and context.files_credit_notes:
        outcome = _with_proposal(recorder, outcome, request, figures, known, facts=facts, key_figures=key_figures)
    if needs_told(routing) and isinstance(outcome, Answered):
        # What the help center says about it, and a person to do what the bot cannot.
        outcome = replace(outcome, text=f"{outcome.text} {offer_a_person(routing.language)}")
    if offer_account and isinstance(outcome, Answered):
        # Their own bill may say more than the policy: keep the question for when they say who they are.
        context.remember_identity_question(query)
        outcome = replace(outcome, text=f"{outcome.text} {offer_to_check_account(routing.language)}")
    return outcome


def _with_proposal(recorder, outcome: Answered, request: WriterRequest, figures, known: dict, *, facts,
                   key_figures) -> Answered:
    """End an answer that states a verified overcharge with the credit note the bot drafts for it (bot/proposal.py).

    The sentence is checked by the grounding verifier against the turn's evidence, its figure as a key figure; a
    sentence that does not check out is left out, and no credit note is drafted.
    """
    proposal = credit_proposal(figures, known.get("current_invoice"))
    if proposal is None:
        return outcome
    cited = proposal_sentence(proposal, request.language)
    figure = proposal.figure
    verdict = grounding.verify(cited, request.evidence, customer_view=True,
                               banned_phrases=settings.GROUNDING_BANNED_PHRASES,
                               key_figures=[grounding.KeyFigure(figure.figure, figure.evidence_id, figure.name)])
    record = {"sentence": cited, "invoice_id": proposal.invoice_id, "amount": f"{proposal.amount:.2f}",
              "currency": proposal.currency, "verdict": verdict.as_json()}
    if recorder.draft.attempts:
        recorder.draft.attempts[-1]["proposal"] = record
    if not verdict.grounded:
        return outcome
    sentence = grounding.strip_citations(cited)
    context = invoice_context_of(invoice=known["current_invoice"], data=known, evidence=facts, key_figures=key_figures)
    return replace(outcome, text=f"{outcome.text} {sentence}", proposal=replace(proposal, context=context),
                   text_without=outcome.text)


def _capability_asked(routed: str, query: str) -> str:
    """The billing capability a follow-up's own words ask for, when they name one ("y con q la pagué?" after "me
    cobraron la mensualidad doble": the payment, not the bill's change); else the one its route chose."""
    own = own_words(query)
    if not routed or own == query:
        return routed
    asked = account_capability(own)
    return asked if asked != "account_summary" else routed


def _billing_facts(recorder, billing, capability, query, *, context, language, chosen):
    """Return (facts, key figures, billing's data, the capability they answer) for an account question, or the outcome
    that replaces the answer."""
    draft = recorder.draft
    customer_id = context.customer_id
    period = chosen.period if chosen is not None else ""
    # Which bill a follow-up asks about is in its own words when they name one ("and the month before?" after "why
    # is my bill … this month?"); else the question it follows says ("y de IVA cuánto? (¿cuánto pagué el mes pasado?)").
    own = own_words(query)
    asked = own if clarify.names_a_period(own) else query
    with recorder.stage("billing"):
        result = (billing.invoice_change(customer_id, period=period) if period
                  else getattr(billing, capability)(customer_id))
    draft.tool_calls.append(result.to_json())
    if result.should_escalate:
        return _tool_error(capability, result)
    if capability == "invoice_change" and result.ok and not period:
        invoices = [result.data["current_invoice"], result.data.get("previous_invoice")]
        decision = clarify.period_decision(asked, [i for i in invoices if i], today=clock.today(),
                                           language=language, about="change")
        if decision.options:
            return _ask(recorder, context, "period", query, decision.options, language)
        if decision.chosen is not None and decision.chosen.period != invoices[0]["period"]:
            result = _for_period(recorder, billing, capability, customer_id, decision.chosen.period)
            if result.should_escalate:
                return _tool_error(capability, result)
    if capability == "payments" and result.ok and not period and clarify.names_a_period(asked):
        # "¿cuánto pagué el mes pasado?", "last month i paid w my card right? how much igtf was that": that invoice's
        # payment is the one the answer states.
        invoices = result.data.get("invoices") or []
        decision = clarify.period_decision(asked, invoices, today=clock.today(), language=language, about="payment")
        if decision.chosen is not None and invoices and decision.chosen.period != invoices[0]["period"]:
            earlier = _for_period(recorder, billing, capability, customer_id, decision.chosen.period)
            if earlier.should_escalate:
                return _tool_error(capability, earlier)
            if earlier.ok and earlier.evidence:
                result = earlier
    if capability == "account_summary" and result.ok and not period and clarify.names_a_period(asked):
        earlier = _earlier_invoice(recorder, billing, asked, customer_id, language=language)
        if earlier is not None:
            if earlier.should_escalate:
                return _tool_error("invoices", earlier)
            return list(earlier.evidence), list(earlier.key_figures), earlier.data or {}, "invoices"
    return list(result.evidence), list(result.key_figures), (result.data or {}) if result.ok else {}, capability


def _for_period(recorder, billing, capability, customer_id, period):
    """Call a billing capability again for one invoice's period (YYYY-MM), the call recorded in the trace."""
    with recorder.stage("billing"):
        result = getattr(billing, capability)(customer_id, period=period)
    recorder.draft.tool_calls.append(result.to_json())
    return result


def _earlier_invoice(recorder, billing, query, customer_id, *, language):
    """For a question about a bill before the current one: billing's two newest invoices when it names the one before
    ("¿y la del mes anterior?", "last month's bill"), answered as the latest and the one before; that month's invoice
    alone when it names an older month. None when the words name the newest bill, or a month billing has no invoice
    for (the account summary answers)."""
    with recorder.stage("billing"):
        result = billing.invoices(customer_id, limit=2)
    recorder.draft.tool_calls.append(result.to_json())
    if result.should_escalate:
        return result
    invoices = (result.data or {}).get("invoices") or [] if result.ok else []
    if len(invoices) < 2:
        return None
    chosen = clarify.period_decision(query, invoices, today=clock.today(), language=language).chosen
    if chosen is None or chosen.period >= invoices[0]["period"]:
        return None
    if chosen.period == invoices[1]["period"]:
        return result
    older = _for_period(recorder, billing, "invoices", customer_id, chosen.period)
    return older if older.ok or older.should_escalate else None


def _sibling_documents(recorder, query, chunks, *, context, language, chosen, profile):
    """Keep the chunks of the one sibling document the question (or the customer's pick, or the contract term billing
    reports for them) names, or ask which: a Clarify, or the chunks kept and the option the term chose (None when
    the question or the customer chose, or nothing did)."""
    siblings = {slug: clarify.Sibling(slug, row["label"], row["language"], tuple(row["alternatives"]))
                for slug, row in document_alternatives(slugs=[h.doc for h in chunks]).items()}
    decision = clarify.document_decision(query, [h.doc for h in chunks], siblings, language=language)
    by_term = None
    if decision.chosen is None and (chosen is None or not chosen.doc) and profile is not None:
        # Billing says which case is theirs (an annual customer asking for their money back): no question to ask.
        by_term = clarify.term_sibling([(h.doc, h.audience.term) for h in chunks], siblings, profile.term)
        decision = clarify.Decision(chosen=by_term) if by_term is not None else decision
    if decision.options and chosen is None:
        return _ask(recorder, context, "document", query, decision.options, language)
    picked = chosen if chosen is not None and chosen.doc else decision.chosen
    if picked is not None and siblings:
        # The customer named one case: its siblings' chunks would only answer another case.
        others = {doc for row in siblings.values() for doc in row.alternatives} | set(siblings)
        chunks = [h for h in chunks if h.doc == picked.doc or h.doc not in others] or chunks
    return chunks, by_term


def _ask(recorder, context: TurnContext, kind, query, options, language, *, after_answer=False) -> Clarify:
    """Keep the original question and ask which option applies (`after_answer`: the reply has given each option's
    answer already)."""
    pending = clarify.pending(kind, query, options, language)
    context.remember_clarification(pending)
    labels = " / ".join(option.label for option in options)
    recorder.draft.routing_rule = f"{recorder.draft.routing_rule}; asked: {labels}"[:100]
    return Clarify(clarify.question(kind, options, language, after_answer=after_answer), pending)


def _each_kinds_then_ask(recorder, context: TurnContext, query, outcome, segment_options, language) -> Clarify | None:
    """For someone billing cannot identify, when the help center answers differently for home and business: each
    kind's rule, labelled, when the verified answer gives both ("Cuentas residenciales: … Cuentas empresariales: …"),
    then the question which kind theirs is, so the next reply states the one that applies. The question alone when
    the answer depends on the kind (`segment_options`) and the reply does not give both; None (send the answer as
    it is) when the answer gives one rule for whoever asks."""
    gives_each = isinstance(outcome, Answered) and gives_each_kinds_rule(outcome.text)
    if not gives_each and not segment_options:
        return None
    options = segment_options or clarify.segment_options(language)
    asked = _ask(recorder, context, "segment", query, options, language, after_answer=gives_each)
    if not gives_each:
        return asked
    return replace(asked, text=f"{outcome.text} {asked.text}", citations=list(outcome.citations))


def _billing_conversation(context: TurnContext) -> bool:
    """Whether the customer's previous message in the conversation was about plans, bills or payments."""
    previous = next((said for role, said in reversed(context.history) if role == "user" and said.strip()), "")
    return bool(previous) and in_domain(read_as_meant(previous))


def _tool_error(capability, result) -> Escalated:
    """Return the escalation for a billing call that failed on the system's side (an outage, not an answer)."""
    code = result.error.code if result.error else "unknown"
    return Escalated(Reason.TOOL_ERROR, [f"{capability} failed: {code}."])


def _account_evidence(recorder, billing, capability, customer_id) -> tuple[list, dict]:
    """Return the customer's billing facts for a document question and billing's data; none when billing fails (the
    knowledge base still answers)."""
    with recorder.stage("billing"):
        result = getattr(billing, capability)(customer_id)
    recorder.draft.tool_calls.append(result.to_json())
    return (list(result.evidence), result.data or {}) if result.ok else ([], {})


def _answer_is_one_kinds(query: str, chunks, language: str) -> bool:
    """Whether the passage sentences that answer the question (the ones the template writer would quote) state one kind
    of customer's rule. A dispute passage for everyone that answers "will I be charged a late fee on the disputed
    amount?" answers home and business customers alike, even beside both late-fee pages; the business late-fee
    passage answering "how much is the late fee?" does not. Nothing composed: the question is asked."""
    passages = [Passage(f"E{n}", hit.text, doc=hit.doc, language=hit.language, segment=hit.segment,
                        term=hit.audience.term) for n, hit in enumerate(chunks, 1)]
    composed = compose(query, passages, language=language)
    return composed is None or one_kinds_rule(composed, passages)


def _profile(recorder, billing, context: TurnContext, known: dict, *, query: str, chosen, language: str):
    """Return what retrieval may know of the customer (kb.applicability): their segment and plan from billing when
    they are identified, the kind of customer the question names or they picked otherwise, None when unknown.

    A billing failure here leaves the profile unknown: retrieval then keeps every document ("when in doubt, keep").
    """
    if chosen is not None and chosen.segment:
        return Applicability(segment=chosen.segment)
    if not context.customer_id:
        named = clarify.segment_decision(query, [], language=language).chosen
        return Applicability(segment=named.segment) if named is not None else None
    if not known.get("customer"):
        with recorder.stage("billing"):
            result = billing.account_summary(context.customer_id)
        recorder.draft.tool_calls.append(result.to_json())
        known = (result.data or {}) if result.ok else {}
    # Billing's plan payload is the plan and its price history: {"plan": {"code": …, "term": …}, "price_history": […]}.
    customer, plan = known.get("customer") or {}, (known.get("plan") or {}).get("plan") or {}
    if not customer:
        return None
    # The contract term billing reports (month to month, annual, trial) rules out the other terms' refund and price
    # rules, unless the question names a term: a monthly customer asking what the annual plan costs, or a Fibra 300
    # customer asking what the trial refunds, asks about another contract, and neither their term nor their plan (the
    # trial is a Fibra 100 plan, the annual plan a Fibra one) rules its pages out.
    other_contract = names_a_term(query)
    try:
        return Applicability(segment=customer.get("segment") or "",
                             plan="" if other_contract else plan.get("code") or "",
                             term="" if other_contract else plan.get("term") or "")
    except ValueError:  # a segment or plan the knowledge base's vocabulary does not know: keep everything
        return None


def _evidence(chunks, facts, profile=None):
    """Number the turn's evidence E1…En: retrieved chunks first, then billing facts. A chunk written for another kind
    of customer than this one carries why (the verifier refuses its figures)."""
    sources = {}
    chunk_items = []
    for number, hit in enumerate(chunks, start=1):
        not_for = hit.audience.excludes(profile)
        chunk_items.append(Evidence(id=f"E{number}", text=hit.text, value=None,
                                    not_for=f"{not_for}, not for this customer" if not_for else ""))
        sources[f"E{number}"] = {"kind": "chunk", "chunk_id": hit.chunk_id, "doc": hit.doc,
                                 "section": hit.section, "language": hit.language, "segment": hit.segment,
                                 "term": hit.audience.term}
    fact_items, fact_sources = fact_evidence(facts, first=len(chunk_items) + 1)
    sources.update(fact_sources)
    # Facts first for account questions: the template writer reads them before any chunk.
    return fact_items + chunk_items, sources
