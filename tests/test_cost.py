"""A live run's price at list prices: read from its traffic, priced by genai-prices."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from rag_core.evals.wire import cost
from rag_core.evals.wire.cost import Price, described, price_of
from rag_core.evals.golden.live_runs import LiveResult, LiveRun
from rag_core.evals.wire.exchange import Exchange
from rag_core.evals.runs.schema import CaseEntry, Cost, LiveSummary

genai_prices = pytest.importorskip("genai_prices")


def chat(model: str, prompt: int, completion: int, cached: int = 0, status: int = 200) -> Exchange:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
             "prompt_tokens_details": {"cached_tokens": cached}}
    body = {"model": model, "choices": [{"message": {"content": "ok"}}], "usage": usage} if status < 400 else {
        "error": {"message": "slow down"}}
    return Exchange("POST", "/v1/chat/completions", {"model": model, "messages": []}, status, body)


def listed(model: str, provider: str, **tokens: int) -> Decimal:
    """What genai-prices' table says these tokens of ``model`` cost."""
    return genai_prices.calc_price(genai_prices.Usage(**tokens), model, provider_id=provider).total_price


def test_a_call_is_priced_with_its_cached_input_at_the_cached_rate():
    price = price_of([chat("gpt-4o-mini", 1000, 100, cached=400)])
    assert price == Price(listed("gpt-4o-mini", "openai", input_tokens=1000, cache_read_tokens=400, output_tokens=100))
    assert price.usd < listed("gpt-4o-mini", "openai", input_tokens=1000, output_tokens=100)


def test_a_runs_calls_add_up_and_error_answers_cost_nothing():
    calls = [chat("gpt-4o-mini", 500, 50), chat("gpt-4o-mini", 900, 20), chat("gpt-4o-mini", 900, 0, status=429)]
    assert price_of(calls).usd == (listed("gpt-4o-mini", "openai", input_tokens=500, output_tokens=50)
                                   + listed("gpt-4o-mini", "openai", input_tokens=900, output_tokens=20))


def test_a_stream_is_priced_from_the_usage_it_delivers():
    events = [{"choices": [{"delta": {"content": "o"}}]}, {"choices": [{"delta": {"content": "k"}}]},
              {"choices": [], "usage": {"prompt_tokens": 300, "completion_tokens": 2, "total_tokens": 302}}]
    stream = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    exchange = Exchange("POST", "/v1/chat/completions", {"model": "gpt-4o-mini", "stream": True}, 200, stream)
    assert price_of([exchange]).usd == listed("gpt-4o-mini", "openai", input_tokens=300, output_tokens=2)


def test_gemini_names_its_model_in_the_path():
    body = {"candidates": [], "usageMetadata": {"promptTokenCount": 1000, "candidatesTokenCount": 10,
                                                "totalTokenCount": 1010}}
    exchange = Exchange("POST", "/v1beta/models/gemini-2.5-flash:generateContent", {"contents": []}, 200, body)
    assert price_of([exchange]).usd == listed("gemini-2.5-flash", "google", input_tokens=1000, output_tokens=10)


def test_a_model_without_a_price_is_named_never_counted_as_free():
    """An OpenAI-compatible server's model: looked up by name, then named as unpriced."""
    price = price_of([chat("gpt-4o-mini", 100, 10), chat("house-model-7b", 100, 10), chat("house-model-7b", 1, 1)])
    assert price.unpriced == ("house-model-7b",)
    assert price.usd == listed("gpt-4o-mini", "openai", input_tokens=100, output_tokens=10)
    assert "not priced: house-model-7b" in described([{"cost_usd": float(price.usd), "unpriced": list(price.unpriced)}])


def test_a_claude_model_on_an_openai_compatible_endpoint_is_found_by_its_name():
    price = price_of([chat("claude-3-5-haiku-latest", 1000, 100)])
    assert price.unpriced == () and price.usd == listed("claude-3-5-haiku-latest", "anthropic", input_tokens=1000,
                                                         output_tokens=100)


def test_without_genai_prices_runs_are_counted_in_tokens_alone(monkeypatch):
    monkeypatch.setattr(cost, "available", lambda: False)
    assert price_of([chat("gpt-4o-mini", 100, 10)]) is None
    assert described([{"tokens_total": 110}]) == "no prices (genai-prices is not installed)"
    result = LiveResult("c", 1.0, [LiveRun(1.0, 110, [])])
    assert result.price is None and "cost_usd" not in result.to_dict()


def test_a_live_results_price_reaches_the_run_record_and_back():
    from rag_core.evals.runs.failures import live_summary

    runs = [LiveRun(1.0, 110, [], repeat=0, price=Price(Decimal("0.0012"))),
            LiveRun(1.0, 110, [], repeat=1, price=Price(Decimal("0.0003"), ("house-model-7b",)))]
    data = LiveResult("c", 1.0, runs).to_dict()
    assert data["cost_usd"] == 0.0015 and data["unpriced"] == ["house-model-7b"]
    summary = live_summary(data)
    assert summary.cost == Cost(0.0015, ("house-model-7b",))
    assert [r.cost for r in summary.repeats] == [Cost(0.0012), Cost(0.0003, ("house-model-7b",))]
    entry = CaseEntry("c", "passed", live=summary)
    assert CaseEntry.from_json(json.loads(json.dumps(entry.to_json()))) == entry
    assert described([data]) == "$0.0015 at list prices (not priced: house-model-7b)"


def test_a_record_from_before_prices_reads_as_not_priced():
    older = LiveSummary.from_json({"runs": 2, "passes": 2, "pass_rate": 1.0, "min_pass_rate": 1.0, "p50": 1.0,
                                   "p95": 1.0, "tokens": 10, "ok": True})
    assert older.cost == Cost() and "cost_usd" not in older.to_json()
