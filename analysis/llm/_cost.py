"""What calling a model costs: token prices and a run's counted usage."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple, TypeVar

from pydantic import BaseModel

T = TypeVar("T")

# USD per million tokens (input, output), published list prices, by the model id's family (the
# longest family the id contains); a model not listed gets no cost estimate. Gemini 2.5 Pro: for
# prompts up to 200k tokens.
PRICES = {
    "opus": (15.0, 75.0),
    "sonnet": (3.0, 15.0),
    "haiku": (1.0, 5.0),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gemini-2.5-pro": (1.25, 10.0),
    "gemini-2.5-flash": (0.3, 2.5),
    "gemini-2.5-flash-lite": (0.1, 0.4),
}
CONTEXT_TOKENS = {
    "opus": 200_000,
    "sonnet": 200_000,
    "haiku": 200_000,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gemini-2.5-pro": 1_048_576,
    "gemini-2.5-flash": 1_048_576,
    "gemini-2.5-flash-lite": 1_048_576,
}
"""Tokens one request may hold, as each model's maker states it, by the families of ``PRICES``:
Claude Opus, Sonnet and Haiku 200,000 (input and answer together; Sonnet's 1M context is a beta
this client does not ask for), GPT-4o and GPT-4o mini 128,000, Gemini 2.5 Pro, Flash and
Flash-Lite 1,048,576 input tokens."""
DEFAULT_CONTEXT_TOKENS = 1_048_576
"""The context assumed for a model of no family above: the largest the table states, so that
a model of unknown size (a local server's, a newer one) is refused only a request beyond every
context stated here; a smaller guess would refuse runs such a model may well take."""
CACHE_WRITE_PRICE = 1.25
"""A cache write costs this many times an input token (Anthropic, 5-minute cache)."""
CACHE_READ_PRICE = 0.1
"""A cache read costs this many times an input token (Anthropic)."""
CACHE_PRICES = {"gpt-": (1.0, 0.5), "gemini-": (1.0, 0.25)}
"""Families whose prompt caching is automatic, not Anthropic's: (write, read) times an input
token. A write costs nothing extra; a cached input token is billed at a discount."""
BATCH_DISCOUNT = 0.5
"""The Message Batches API bills half the direct price."""
MIN_CACHED_TOKENS = 1024
"""A prefix shorter than this is not cached by the API (2,048 for Haiku models)."""


def _family(model: str, table: Mapping[str, T]) -> T | None:
    """The entry of the longest family ``model`` contains (``gpt-4o-mini`` before ``gpt-4o``)."""
    name = model.lower()
    families = [family for family in table if family in name]
    return table[max(families, key=len)] if families else None


def price_of(model: str) -> tuple[float, float] | None:
    """USD per million (input, output) tokens, by model family; None when unknown. A
    ``provider:`` prefix does not change the price."""
    return _family(model, PRICES)


def context_of(model: str) -> int | None:
    """The tokens a request to ``model`` may hold, as stated for its family; None when the table
    does not know it (see ``DEFAULT_CONTEXT_TOKENS``). A ``provider:`` prefix changes nothing."""
    return _family(model, CONTEXT_TOKENS)


def cache_prices_of(model: str) -> tuple[float, float]:
    """What a cache write and a cache read cost, in input tokens."""
    return _family(model, CACHE_PRICES) or (CACHE_WRITE_PRICE, CACHE_READ_PRICE)


def min_cached_tokens(model: str) -> int:
    return 2 * MIN_CACHED_TOKENS if "haiku" in model.lower() else MIN_CACHED_TOKENS


class AnswerTokens(NamedTuple):
    """The tokens of one answer, whatever the provider calls them."""

    input_tokens: int = 0
    """Uncached input tokens."""
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0


class RunStats(BaseModel):
    """What a run cost: requests made (retries included), cache hits and tokens."""

    http_requests: int = 0
    cache_hits: int = 0
    votes_asked: int = 0
    """Structured answers asked for (each re-ask counts; a judge's are votes)."""
    input_tokens: int = 0
    """Uncached input tokens."""
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    output_tokens: int = 0
    model: str = ""
    batch: bool = False

    def add_usage(self, usage: AnswerTokens) -> None:
        """Count one answer's tokens."""
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cache_write_tokens += usage.cache_write_tokens
        self.cache_read_tokens += usage.cache_read_tokens

    @property
    def tokens(self) -> AnswerTokens:
        """The run's tokens, as one answer's are counted."""
        return AnswerTokens(
            self.input_tokens, self.output_tokens, self.cache_write_tokens, self.cache_read_tokens
        )

    @property
    def cost_usd(self) -> float | None:
        return cost_of(self.model, self.tokens, self.batch)


def cost_of(model: str, tokens: AnswerTokens, batch: bool = False) -> float | None:
    """What ``tokens`` of ``model`` cost in USD at its list price (cache writes and reads at
    their share of the input price, half with ``batch``); None when the model has no price,
    never 0 for tokens of unknown price (no tokens at all cost 0 at any price)."""
    price = price_of(model)
    if not any(tokens):
        return 0.0
    if price is None:
        return None
    write, read = cache_prices_of(model)
    inputs = (
        tokens.input_tokens + write * tokens.cache_write_tokens + read * tokens.cache_read_tokens
    )
    cost = (inputs * price[0] + tokens.output_tokens * price[1]) / 1e6
    return cost * BATCH_DISCOUNT if batch else cost


def add_tokens(first: AnswerTokens, second: AnswerTokens) -> AnswerTokens:
    """Two counts of tokens together."""
    return AnswerTokens(*(a + b for a, b in zip(first, second, strict=True)))


def cost_refusal(expected: float | None, cap: float | None) -> str | None:
    """Why a run must not start under a ``--max-cost`` cap, in one sentence: its estimate is
    above the cap, or unknown (no price for the model); None when it may (or has no cap)."""
    if cap is None or (expected is not None and expected <= cap):
        return None
    return (
        f"Not started: the estimated cost, {dollars(expected)}, is above --max-cost "
        f"${cap:,.2f} (see --dry-run)."
    )


SMALLEST_SHOWN = 0.0001
"""A cost above zero but below this is shown as "under $0.0001", never as $0.0000."""


def dollars(value: float | None) -> str:
    """A cost in dollars (cents, or a tenth of a cent below one cent); a cost above zero is
    never shown as zero, and an unknown one says so."""
    if value is None:
        return "unknown (no price for this model)"
    if 0 < value < SMALLEST_SHOWN:
        return f"under ${SMALLEST_SHOWN}"
    return f"${value:,.2f}" if value == 0 or value >= 0.01 else f"${value:.4f}"
