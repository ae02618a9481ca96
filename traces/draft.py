"""What a turn records while it runs, typed: the bot fills a TraceDraft and the Trace row is made from it.

Pure: no Django. `TraceDraft.row()` returns the Trace columns the draft owns; the caller adds the links
(conversation, message, reply, escalation) and the outcome.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class TraceDraft:
    query: str = ""
    language: str = ""
    route: str = ""
    routing_rule: str = ""
    route_confidence: float | None = None  # the router's confidence in the route (1.0 when a rule decided)
    router_version: str = ""  # rules, classifier, examples and threshold that routed
    customer_id: str = ""
    retrieval: list[dict] = field(default_factory=list)  # fused hits with scores, kept/pruned and why
    index_version: int | None = None  # the index version the retrieval searched
    tool_calls: list[dict] = field(default_factory=list)  # billing calls with status and error
    evidence: list[dict] = field(default_factory=list)  # E1…En: chunks and billing facts
    prompt_version: str = ""
    model: str = ""
    attempts: list[dict] = field(default_factory=list)  # each writer attempt with the verifier's verdict
    humanizer: dict = field(default_factory=dict)
    key_figures: list[dict] = field(default_factory=list)  # primary/secondary figures mapped to E# ids
    fallback: str = ""  # "" (a writer's draft passed), template, quote or escalated — see Trace.Fallback
    fallback_draft: dict = field(default_factory=dict)  # the verified-only answer and its verdicts
    internal_note: str = ""  # for the agent: root cause, evidence ids, formulas, what the bot was unsure of
    final_text: str = ""
    citations: list[str] = field(default_factory=list)
    token_usage: dict = field(default_factory=dict)
    model_calls: list[dict] = field(default_factory=list)  # each model call: role, model, tokens in/out, cost
    cost: float = 0.0  # the priced calls' cost summed (a model without a price adds 0 and is named on the page)
    latency_ms: dict[str, float] = field(default_factory=dict)  # per stage, in the order they ran
    total_ms: float = 0.0

    def record_call(self, call: dict) -> None:
        """Add one model call (core.model_costs.ModelCall.as_json()) and its cost to the turn."""
        self.model_calls.append(call)
        if isinstance(call.get("cost"), (int, float)):
            self.cost = round(self.cost + float(call["cost"]), 8)

    def row(self) -> dict:
        """Return the Trace columns this draft fills."""
        return asdict(self)
