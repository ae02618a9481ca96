"""What a model call costs: its tokens in and out, priced per model from a table per 1M tokens. Pure: no Django.

Every model call — the writer's drafts, the judge's verdicts, the router when it asks a model — is recorded as
a `ModelCall` (who called, which model, tokens in and out) and priced when it is recorded, so a trace, a run or
a day keeps what it cost at the prices of the day it ran. The template writer and the offline judge make no
call: they cost nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

PER = 1_000_000  # prices are per 1M tokens, as the providers publish them


class PriceTableError(ValueError):
    """MODEL_PRICES is not a JSON object of {"model": {"input": number, "output": number}}."""


@dataclass(frozen=True)
class Price:
    input: float  # per 1M prompt tokens
    output: float  # per 1M completion tokens


def price_table(defaults: Mapping[str, Mapping], raw_json: str = "") -> dict[str, Price]:
    """Return the prices per model: the defaults, with the models of `raw_json` (MODEL_PRICES) added or replaced.

    Raise PriceTableError naming what is wrong, so a typo in the setting stops the app with a sentence instead
    of pricing every call at 0.
    """
    table = {model: Price(float(p["input"]), float(p["output"])) for model, p in defaults.items()}
    if not raw_json.strip():
        return table
    try:
        given = json.loads(raw_json)
    except json.JSONDecodeError as exc:
        raise PriceTableError(f"MODEL_PRICES is not JSON ({exc.msg}); write e.g. "
                              '{"gpt-4o-mini": {"input": 0.15, "output": 0.6}}') from exc
    if not isinstance(given, dict):
        raise PriceTableError("MODEL_PRICES must be a JSON object of model names")
    for model, price in given.items():
        if not isinstance(price, dict) or set(price) != {"input", "output"}:
            raise PriceTableError(f"MODEL_PRICES[{model!r}] must be {{\"input\": number, \"output\": number}} "
                                  "(prices per 1M tokens)")
        values = [price["input"], price["output"]]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in values):
            raise PriceTableError(f"MODEL_PRICES[{model!r}]: prices are numbers of 0 or more (per 1M tokens)")
        table[str(model)] = Price(float(price["input"]), float(price["output"]))
    return table


@dataclass(frozen=True)
class ModelCall:
    """One call of a model: who made it (writer, judge, router), the model, its tokens and its cost."""

    role: str
    model: str
    tokens_in: int
    tokens_out: int
    cost: float | None  # None: the model has no price in the table

    def as_json(self) -> dict:
        return asdict(self)


def usage_tokens(usage: Mapping | None) -> tuple[int, int]:
    """Return (tokens in, tokens out) of an OpenAI usage object (prompt/completion or input/output names)."""
    usage = usage or {}

    def number(*names):
        return sum(int(usage[name]) for name in names if isinstance(usage.get(name), int)
                   and not isinstance(usage.get(name), bool))

    return number("prompt_tokens", "input_tokens"), number("completion_tokens", "output_tokens")


def model_call(*, role: str, model: str, usage: Mapping | None, prices: Mapping[str, Price]) -> ModelCall:
    """Return the call priced from the table (a model that is not listed: cost None, tokens still counted)."""
    tokens_in, tokens_out = usage_tokens(usage)
    price = prices.get(model)
    cost = None if price is None else round((tokens_in * price.input + tokens_out * price.output) / PER, 8)
    return ModelCall(role=role, model=model, tokens_in=tokens_in, tokens_out=tokens_out, cost=cost)


@dataclass(frozen=True)
class CostSummary:
    calls: int
    tokens_in: int
    tokens_out: int
    cost: float
    unpriced: tuple[str, ...]  # models called that the price table does not list (their calls count as 0)


def cost_summary(calls: Iterable[Mapping]) -> CostSummary:
    """Return the totals of recorded calls (dicts as `ModelCall.as_json` writes them; anything else is skipped)."""
    count = tokens_in = tokens_out = 0
    cost = 0.0
    unpriced: list[str] = []
    for call in calls:
        if not isinstance(call, Mapping):
            continue
        count += 1
        tokens_in += int(call.get("tokens_in") or 0)
        tokens_out += int(call.get("tokens_out") or 0)
        if isinstance(call.get("cost"), (int, float)):
            cost += float(call["cost"])
        elif call.get("model") and call["model"] not in unpriced:
            unpriced.append(str(call["model"]))
    return CostSummary(calls=count, tokens_in=tokens_in, tokens_out=tokens_out, cost=round(cost, 8),
                       unpriced=tuple(unpriced))
