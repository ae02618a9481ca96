"""Pricing model calls from a table per 1M tokens (no database)."""

import pytest

from core.model_costs import Price, PriceTableError, cost_summary, model_call, price_table, usage_tokens

DEFAULTS = {"gpt-4o-mini": {"input": 0.15, "output": 0.60}}


def test_a_call_is_priced_per_million_tokens_in_and_out():
    call = model_call(role="writer", model="gpt-4o-mini", usage={"prompt_tokens": 1_000, "completion_tokens": 200},
                      prices=price_table(DEFAULTS))
    assert (call.tokens_in, call.tokens_out) == (1_000, 200)
    assert call.cost == pytest.approx(1_000 * 0.15 / 1e6 + 200 * 0.60 / 1e6)


def test_a_model_without_a_price_counts_its_tokens_and_says_it_has_no_price():
    call = model_call(role="judge", model="my-local-llama", usage={"input_tokens": 7, "output_tokens": 3},
                      prices=price_table(DEFAULTS))
    assert (call.tokens_in, call.tokens_out, call.cost) == (7, 3, None)
    summary = cost_summary([call.as_json(), {"role": "writer", "model": "gpt-4o-mini", "tokens_in": 1,
                                              "tokens_out": 1, "cost": 0.5}])
    assert (summary.calls, summary.tokens_in, summary.cost, summary.unpriced) == (2, 8, 0.5, ("my-local-llama",))


def test_the_setting_adds_and_replaces_models():
    table = price_table(DEFAULTS, '{"gpt-4o-mini": {"input": 1, "output": 2}, "qwen": {"input": 0, "output": 0}}')
    assert table["gpt-4o-mini"] == Price(1.0, 2.0) and table["qwen"] == Price(0.0, 0.0)


@pytest.mark.parametrize("raw, says", [
    ("{not json", "not JSON"),
    ("[1, 2]", "JSON object"),
    ('{"m": {"input": 1}}', "must be"),
    ('{"m": {"input": -1, "output": 1}}', "0 or more"),
    ('{"m": {"input": "1", "output": 1}}', "numbers"),
])
def test_a_bad_price_table_is_refused_with_a_sentence(raw, says):
    with pytest.raises(PriceTableError, match=says):
        price_table(DEFAULTS, raw)


def test_usage_without_numbers_counts_nothing():
    assert usage_tokens(None) == (0, 0)
    assert usage_tokens({"prompt_tokens": True, "completion_tokens": "5"}) == (0, 0)
