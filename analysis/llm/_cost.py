"""What calling a model costs: token prices and a run's counted usage."""

from __future__ import annotations

from typing import NamedTuple

from pydantic import BaseModel

# USD per million tokens (input, output); a model not listed gets no cost estimate.
PRICES = {"opus": (15.0, 75.0), "sonnet": (3.0, 15.0), "haiku": (1.0, 5.0)}
CACHE_WRITE_PRICE = 1.25
"""A cache write costs this many times an input token (5-minute cache)."""
CACHE_READ_PRICE = 0.1
"""A cache read costs this many times an input token."""
BATCH_DISCOUNT = 0.5
"""The Message Batches API bills half the direct price."""
MIN_CACHED_TOKENS = 1024
"""A prefix shorter than this is not cached by the API (2,048 for Haiku models)."""


def price_of(model: str) -> tuple[float, float] | None:
    """USD per million (input, output) tokens, by model family; None when unknown."""
    return next((p for family, p in PRICES.items() if family in model.lower()), None)


def min_cached_tokens(model: str) -> int:
    return 2 * MIN_CACHED_TOKENS if "haiku" in model.lower() else MIN_CACHED_TOKENS


class Usage(NamedTuple):
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

    def add_usage(self, usage: Usage) -> None:
        """Count one answer's tokens."""
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cache_write_tokens += usage.cache_write_tokens
        self.cache_read_tokens += usage.cache_read_tokens

    @property
    def cost_usd(self) -> float | None:
        price = price_of(self.model)
        if price is None:
            return None
        inputs = (
            self.input_tokens
            + CACHE_WRITE_PRICE * self.cache_write_tokens
            + CACHE_READ_PRICE * self.cache_read_tokens
        )
        cost = (inputs * price[0] + self.output_tokens * price[1]) / 1e6
        return cost * BATCH_DISCOUNT if self.batch else cost


def dollars(value: float | None) -> str:
    """A cost in dollars (cents, or a tenth of a cent below one cent)."""
    if value is None:
        return "unknown (no price for this model)"
    return f"${value:,.2f}" if value == 0 or value >= 0.01 else f"${value:.4f}"
