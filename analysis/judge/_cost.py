"""What judging would cost: the estimate before a run (prices and a run's counted usage are
``analysis.llm``'s)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from pydantic import BaseModel

from analysis._format import counted
from analysis.judge._rubric import RUBRIC, VERDICT_TOOL
from analysis.llm import (
    DEFAULT_CONTEXT_TOKENS,
    LLMError,
    RunStats,
    batch_unsupported,
    context_of,
    dollars,
    min_cached_tokens,
    parse_model_name,
)
from analysis.render import JudgeInput, UnitFigures, unit_figures

CHARS_PER_TOKEN = 4
ESTIMATED_OUTPUT_TOKENS = 300
"""A vote's reasoning and verdict, for estimates before a run."""
ANSWER_TOKENS = 1024
"""The most a vote may answer (its ``max_tokens``): room kept for it in the model's context."""


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
    """With ``--batch`` (half price), prompt caching included; None where the provider has no
    batch API."""
    largest_request_tokens: int = 0
    """The input tokens of the largest request."""
    refusal: str | None = None
    """Why the run must not start, in one sentence: the model's name cannot be used, or the
    largest request cannot fit the model's context (:func:`context_refusal`); None when it
    may. The run (``judge_rendered``) refuses the same before any request."""

    def headline(self, unit: str, votes: int, conditions: int = 1) -> str:
        """What will be asked, each factor on its own: "215 steps x 3 conditions x 3 votes =
        1,935 requests" (the same line in the app and in ``tsq judge --dry-run``)."""
        each = self.units // max(conditions, 1)
        factors = [counted(each, unit)]
        if conditions > 1:
            factors.append(f"{conditions} conditions")
        factors.append(counted(votes, "vote"))
        return f"{' x '.join(factors)} = {self.requests:,} requests"

    def in_words(self, unit: str, votes: int, conditions: int = 1) -> str:
        """The estimate as the app shows it, naming what it assumes."""
        return (
            f"{self.headline(unit, votes, conditions)}, about {self.input_tokens:,} input and "
            f"{self.output_tokens:,} output tokens; cost {self.cost_in_words()}. Assumes about "
            f"{CHARS_PER_TOKEN} characters a token and {ESTIMATED_OUTPUT_TOKENS} output tokens "
            "a vote; votes already cached are not asked again."
        )

    def cost_in_words(self, with_batch: bool = False) -> str:
        """The cost without and with prompt caching (and with ``--batch``, as ``tsq judge
        --dry-run`` says it); one "unknown" for a model without a price, since every figure
        comes from that price."""
        if self.cost_usd is None:
            return dollars(None)
        cached = dollars(self.cost_cached_usd)
        if not with_batch:
            return f"{dollars(self.cost_usd)} ({cached} with prompt caching)"
        batch = (
            f", {dollars(self.cost_batch_usd)} with --batch"
            if self.cost_batch_usd is not None
            else " (no --batch for this provider)"
        )
        return f"{dollars(self.cost_usd)} without prompt caching, {cached} with it{batch}"


def estimate_run(
    units: Sequence[JudgeInput], votes: int, model: str, system: str = RUBRIC
) -> RunEstimate:
    """Requests, tokens and dollars a run would need, at about 4 characters per token;
    ``system`` is the judge's instructions (a spec's rubric and examples).

    Each distinct prefix (verdict tool, rubric, menu) is written to the cache by its first
    request and read by the others; a prefix under the API's minimum is not cached.
    """
    return estimate_figures((unit_figures(unit) for unit in units), votes, model, system)


def estimate_figures(
    figures: Iterable[UnitFigures], votes: int, model: str, system: str = RUBRIC
) -> RunEstimate:
    """:func:`estimate_run` from each unit's figures instead of the rendered units."""
    rubric_tokens = (len(system) + len(json.dumps(VERDICT_TOOL))) // CHARS_PER_TOKEN
    prefixes: dict[str, int] = {}
    input_tokens = prefix_requests = units = tool_calls = largest = 0
    sessions = set()
    for unit in figures:
        units += 1
        sessions.add(unit.session_id)
        tool_calls += unit.tool_calls
        prefix = rubric_tokens + unit.menu_chars // CHARS_PER_TOKEN
        request = prefix + unit.unit_chars // CHARS_PER_TOKEN
        largest = max(largest, request)
        input_tokens += votes * request
        if prefix >= min_cached_tokens(model):
            prefixes[unit.menu_digest] = prefix
            prefix_requests += votes * prefix
    output_tokens = votes * units * ESTIMATED_OUTPUT_TOKENS
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
        units=units,
        sessions=len(sessions),
        tool_calls=tool_calls,
        requests=votes * units,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cached_prefix_tokens=prefix_requests,
        cost_usd=plain.cost_usd,
        cost_cached_usd=cached.cost_usd,
        cost_batch_usd=batch.cost_usd if _has_batches(model) else None,
        largest_request_tokens=largest,
        refusal=start_refusal(model) or context_refusal(model, largest, rubric_tokens),
    )


def context_refusal(model: str, request_tokens: int, instruction_tokens: int) -> str | None:
    """Why a request of ``request_tokens`` input tokens (``instruction_tokens`` of them the
    rubric, its examples and the verdict tool) cannot go to ``model``, in one sentence: with
    ``ANSWER_TOKENS`` kept for the answer, it is beyond the context stated for the model's
    family (``analysis.llm._cost.CONTEXT_TOKENS``), or beyond ``DEFAULT_CONTEXT_TOKENS`` for a
    model of no stated context; None when it fits."""
    stated = context_of(model)
    context = stated or DEFAULT_CONTEXT_TOKENS
    if request_tokens + ANSWER_TOKENS <= context:
        return None
    whose = f"of {model}" if stated else f"assumed for {model} (none is stated for it)"
    return (
        f"Not started: a request would need about {request_tokens:,} input tokens "
        f"({instruction_tokens:,} of them the rubric, its examples and the verdict tool), more "
        f"than the {context:,}-token context {whose} holds with {ANSWER_TOKENS:,} kept for "
        "the answer."
    )


def start_refusal(model: str, batch: bool = False) -> str | None:
    """Why a judge of ``model`` cannot start, in one sentence, decided before any request and
    without a key (a run and its dry run refuse alike): a model name that names no provider or
    no model, or ``batch`` for a provider without a batch API; None when it can start."""
    try:
        provider, _ = parse_model_name(model)
    except LLMError as error:
        return str(error)
    if batch and provider != "anthropic":
        return batch_unsupported(provider)
    return None


def _has_batches(model: str) -> bool:
    """Only Anthropic's Message Batches API is supported (``--batch``)."""
    try:
        return parse_model_name(model)[0] == "anthropic"
    except LLMError:
        return False
