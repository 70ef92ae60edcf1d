"""What a run's model calls cost at list prices, read from its traffic and priced by genai-prices.

Prices change and differ per model, cached input and output; Pydantic's genai-prices keeps that
table (and reads each provider's usage fields, cached tokens included), so the harness does not.
It is optional (the ``prices`` extra): without it runs are counted in tokens alone. A call is
priced by the provider whose API it used; a model that provider's table lacks (an
OpenAI-compatible server's, say) is looked up by its name alone, and one still unknown is
named as unpriced, never counted as free. The emulator's answers are priced as the real
provider's would be: what the same runs would cost live.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Sequence

from rag_core.evals.wire.exchange import Exchange
from rag_core.evals.wire.traffic import answer, readings

# where a path names the model: Gemini's models/<m>:<method>, Bedrock's model/<id>/converse
_MODEL_IN_PATH = re.compile(r"/models?/([^/:]+)")


@dataclass(frozen=True)
class Price:
    usd: Decimal  # the priced calls together
    unpriced: tuple[str, ...] = ()  # the models of calls that could not be priced, once each

    def __add__(self, other: Price) -> Price:
        return Price(self.usd + other.usd, tuple(dict.fromkeys(self.unpriced + other.unpriced)))


@functools.cache
def available() -> bool:
    try:
        import genai_prices  # noqa: F401
    except ImportError:
        return False
    return True


def price_of(exchanges: Sequence[Exchange]) -> Price | None:
    """The list price of the calls among ``exchanges`` that a provider bills by the token (None
    without genai-prices). Error answers are not billed and not counted."""
    if not available():
        return None
    total = Price(Decimal(0))
    for exchange in exchanges:
        if _priced(exchange) is not None and exchange.status < 400 and exchange.response is not None:
            total += _price(exchange)
    return total


def _priced(exchange: Exchange) -> tuple[str, str] | None:
    """genai-prices' provider and the API flavour its usage extractor reads, for the API of
    ``exchange`` (each API family's reading names them: ``wire/<family>.py``)."""
    reading = readings().get(exchange.api) if exchange.api is not None else None
    return reading.price if reading is not None else None


def _price(exchange: Exchange) -> Price:
    from genai_prices import calc_price

    provider, flavor = _priced(exchange) or ("", "")
    model, usage = _model(exchange), _usage(exchange, provider, flavor)
    if model is None or usage is None:
        return Price(Decimal(0), (model or exchange.api or "?",))
    for provider_id in (provider, None):  # then by the model's name alone
        try:
            return Price(calc_price(usage, model, provider_id=provider_id).total_price)
        except LookupError:
            continue
    return Price(Decimal(0), (model,))


def _usage(exchange: Exchange, provider: str, flavor: str) -> Any:
    """The call's usage: read by genai-prices' extractor for the provider's API (cached tokens and
    all) where it can, else the input and output tokens the wire reader finds (a stream, or a
    model the provider's table lacks, which its extractor refuses); None when neither can."""
    from genai_prices import Usage, extract_usage

    if isinstance(exchange.response, dict):
        try:
            return extract_usage(exchange.response, provider_id=provider, api_flavor=flavor).usage
        except (LookupError, ValueError, TypeError, KeyError):
            pass
    read = answer(exchange)
    if read is None or "input_tokens" not in read.usage:
        return None
    return Usage(input_tokens=read.usage["input_tokens"], output_tokens=read.usage.get("output_tokens", 0))


def _model(exchange: Exchange) -> str | None:
    request: Any = exchange.request
    if isinstance(request, dict) and isinstance(request.get("model"), str):
        return request["model"]
    found = _MODEL_IN_PATH.search(exchange.path)
    return found.group(1) if found else None


def described(entries: Sequence[dict[str, Any]]) -> str:
    """The price of runs as a summary states it, from their record entries (``cost_usd``,
    ``unpriced``): dollars, and the models that could not be priced."""
    from rag_core.evals.runs.schema import Cost

    if not available():
        return "no prices (genai-prices is not installed)"
    costs = [Cost.from_json(entry) for entry in entries]
    usd = sum(Decimal(str(cost.usd or 0)) for cost in costs)
    unpriced = list(dict.fromkeys(model for cost in costs for model in cost.unpriced))
    return f"${usd:.4f} at list prices" + (f" (not priced: {', '.join(unpriced)})" if unpriced else "")
