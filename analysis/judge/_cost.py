"""What judging costs: token prices, a run's counted usage, and the estimate before a run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from analysis.judge._rubric import RUBRIC, VERDICT_TOOL
from analysis.render._judge_input import JudgeInput

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
CHARS_PER_TOKEN = 4
ESTIMATED_OUTPUT_TOKENS = 300
"""A vote's reasoning and verdict, for estimates before a run."""


def price_of(model: str) -> tuple[float, float] | None:
    """USD per million (input, output) tokens, by model family; None when unknown."""
    return next((p for family, p in PRICES.items() if family in model.lower()), None)


def min_cached_tokens(model: str) -> int:
    return 2 * MIN_CACHED_TOKENS if "haiku" in model.lower() else MIN_CACHED_TOKENS


class RunStats(BaseModel):
    """What a run cost: requests made (retries included), cache hits and tokens."""

    http_requests: int = 0
    cache_hits: int = 0
    votes_asked: int = 0
    input_tokens: int = 0
    """Uncached input tokens."""
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    output_tokens: int = 0
    model: str = ""
    batch: bool = False

    def add_usage(self, usage: Any) -> None:
        """Count a response's ``usage`` (the SDK's object)."""
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cache_write_tokens += getattr(usage, "cache_creation_input_tokens", None) or 0
        self.cache_read_tokens += getattr(usage, "cache_read_input_tokens", None) or 0

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


class RunEstimate(BaseModel):
    """What a run would cost before it starts (before cache hits of earlier runs)."""

    units: int
    sessions: int
    tool_calls: int
    """Tool calls inside the judged units."""
    requests: int
    input_tokens: int
    output_tokens: int
    cached_prefix_tokens: int
    """Of ``input_tokens``, those of cacheable prefixes (rubric and menu)."""
    cost_usd: float | None
    """Without prompt caching."""
    cost_cached_usd: float | None
    """With prompt caching: each distinct prefix written once, then read."""
    cost_batch_usd: float | None
    """With ``--batch`` (half price), prompt caching included."""

    def in_words(self, unit: str, votes: int) -> str:
        """The estimate as the app shows it, naming what it assumes."""
        return (
            f"{self.units} {unit}{'' if self.units == 1 else 's'} x {votes} votes = "
            f"{self.requests} requests, about {self.input_tokens:,} input and "
            f"{self.output_tokens:,} output tokens; cost {dollars(self.cost_usd)} "
            f"({dollars(self.cost_cached_usd)} with prompt caching). Assumes about "
            f"{CHARS_PER_TOKEN} characters a token and {ESTIMATED_OUTPUT_TOKENS} output tokens "
            "a vote; votes already cached are not asked again."
        )


def dollars(value: float | None) -> str:
    """A cost in dollars (cents, or a tenth of a cent below one cent)."""
    if value is None:
        return "unknown (no price for this model)"
    return f"${value:,.2f}" if value == 0 or value >= 0.01 else f"${value:.4f}"


def estimate_run(units: Sequence[JudgeInput], votes: int, model: str) -> RunEstimate:
    """Requests, tokens and dollars a run would need, at about 4 characters per token.

    Each distinct prefix (verdict tool, rubric, menu) is written to the cache by its first
    request and read by the others; a prefix under the API's minimum is not cached.
    """
    rubric_tokens = (len(RUBRIC) + len(json.dumps(VERDICT_TOOL))) // CHARS_PER_TOKEN
    prefixes: dict[str, int] = {}
    input_tokens = prefix_requests = 0
    for unit in units:
        menu = unit.menu_text()
        prefix = rubric_tokens + len(menu) // CHARS_PER_TOKEN
        input_tokens += votes * (prefix + len(unit.unit_text()) // CHARS_PER_TOKEN)
        if prefix >= min_cached_tokens(model):
            prefixes[menu] = prefix
            prefix_requests += votes * prefix
    output_tokens = votes * len(units) * ESTIMATED_OUTPUT_TOKENS
    writes = sum(prefixes.values())
    plain = RunStats(model=model, input_tokens=input_tokens, output_tokens=output_tokens)
    cached = RunStats(
        model=model,
        input_tokens=input_tokens - prefix_requests,
        cache_write_tokens=writes,
        cache_read_tokens=prefix_requests - writes,
        output_tokens=output_tokens,
    )
    batch = cached.model_copy(update={"batch": True})
    return RunEstimate(
        units=len(units),
        sessions=len({unit.session_id for unit in units}),
        tool_calls=sum(len(unit.rendered_calls) for unit in units),
        requests=votes * len(units),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cached_prefix_tokens=prefix_requests,
        cost_usd=plain.cost_usd,
        cost_cached_usd=cached.cost_usd,
        cost_batch_usd=batch.cost_usd,
    )
