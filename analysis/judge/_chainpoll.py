"""ChainPoll judge for Tool Selection Quality.

Chain: the judge reasons through a rubric before its verdict. Poll: it is asked N times,
independently; a step's (or turn's) score is correct votes / valid votes, a probability. A
vote that comes back malformed is discarded and asked again, up to a limit; a unit with no
valid vote is unscored (``score`` None), never 0 or 1.

Every request puts the rubric and the menu first, marked for prompt caching: the steps of a
session share that prefix, so after the first request it is billed as a cache read.

Calling the model (retries, re-asking, the vote cache, tokens and cost) is ``analysis.llm``'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from analysis.judge._cost import ANSWER_TOKENS, estimate_run, start_refusal
from analysis.judge._rubric import DEFAULT_SPEC_NAME, RUBRIC, parse_vote, vote_request
from analysis.llm import (
    DEFAULT_TIMEOUT,
    Answer,
    AnswerTokens,
    EndpointRules,
    LLMClient,
    LLMConfig,
    LLMError,
    RunStats,
    add_tokens,
    cost_of,
    default_cache_dir as default_cache_dir,
    open_client,
)
from analysis.models import Judgment, JudgmentUsage, Vote
from analysis.render import JudgeInput

VOTE_CACHE = "judge-votes.sqlite3"
"""The vote cache's file in ``cache_dir``."""


class JudgeConfig(BaseModel):
    model: str
    """``provider:model`` (``openai:gpt-4o``, ``gemini:gemini-2.5-flash``); a bare id or display
    name is Anthropic's. Read when the judge starts: an unknown provider is a LLMError then."""
    votes: int = Field(default=3, ge=1, le=10)
    base_url: str | None = None
    """None: the provider's own endpoint; else any endpoint speaking its API (for ``openai:``,
    an OpenAI-compatible server such as vLLM, Ollama or llama.cpp's)."""
    api_key: str | None = None
    """None: the provider's environment variable (ANTHROPIC_API_KEY, OPENAI_API_KEY,
    GEMINI_API_KEY)."""
    concurrency: int = Field(default=4, ge=1, le=64)
    attempts_per_vote: int = Field(default=3, ge=1, le=10)
    """How often a malformed vote is asked again before it is discarded."""
    max_retries: int = Field(default=5, ge=0, le=20)
    """Transport retries (429, 5xx, 529 overloaded, timeouts), honouring retry-after."""
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0)
    """Seconds one HTTP request may take before it counts as timed out (and is retried)."""
    max_tokens: int = ANSWER_TOKENS
    cache_dir: Path | None = None
    poll_seconds: float = 10.0
    """Batch mode: how long to wait between status checks."""
    system: str = RUBRIC
    """The judge's instructions: a spec's rubric and examples (the built-in rubric here)."""
    judge_ids: dict[str, str] = Field(default_factory=dict)
    """The spec's ``judge_id`` under each condition, written on every judgment (a spec's hash
    covers its condition, so an ablation's three conditions are three judges); empty: a run
    without a spec."""
    spec_name: str = DEFAULT_SPEC_NAME
    endpoints: EndpointRules | None = Field(default=None, exclude=True, repr=False)
    """Served: where requests may go and which key goes with them (``LLMConfig.endpoints``)."""

    def llm_config(self, cache: bool = True) -> LLMConfig:
        """The model client's settings, the provider taken from the model name; with ``cache``,
        the vote cache (the user's cache directory unless ``cache_dir`` says otherwise), whose
        keys include the provider. Raises LLMError for an unknown provider prefix."""
        return LLMConfig(
            model=self.model,
            base_url=self.base_url,
            api_key=self.api_key,
            timeout=self.timeout,
            concurrency=self.concurrency,
            max_retries=self.max_retries,
            attempts=self.attempts_per_vote,
            max_tokens=self.max_tokens,
            cache_dir=(self.cache_dir or default_cache_dir()) if cache else None,
            cache_file=VOTE_CACHE,
            poll_seconds=self.poll_seconds,
            endpoints=self.endpoints,
        )


def score_of(votes: Sequence[Vote]) -> float | None:
    return sum(v.verdict == "correct" for v in votes) / len(votes) if votes else None


def judgment(
    rendered: JudgeInput,
    votes: list[Vote],
    requested: int,
    model: str,
    reason: str | None,
    judge_id: str | None = None,
    spec_name: str = DEFAULT_SPEC_NAME,
    usage: AnswerTokens | None = None,
    batch: bool = False,
) -> Judgment:
    """The judgment of ``rendered`` from its valid ``votes``; ``usage`` is the tokens its
    requests used (priced at ``model``'s list price, at the batch price with ``batch``)."""
    return Judgment(
        session_id=rendered.session_id,
        turn_index=rendered.turn_index,
        step_index=rendered.step_index,
        message_id=rendered.message_id,
        parent_call_id=rendered.parent_call_id,
        score=score_of(votes),
        votes=votes,
        n_requested=requested,
        n_valid=len(votes),
        n_discarded=requested - len(votes),
        model=model,
        judge_id=judge_id,
        spec_name=spec_name,
        condition=rendered.condition,
        catalog_size=len(rendered.tools),
        call_rendered=rendered.call_rendered,
        context_chars=len(rendered.prior_context),
        step_chars=rendered.step_chars,
        unscored_reason=None if votes else reason,
        usage=None if usage is None else _usage(usage),
        cost_usd=None if usage is None else cost_of(model, usage, batch),
    )


def _usage(tokens: AnswerTokens) -> JudgmentUsage:
    return JudgmentUsage.model_validate(tokens._asdict())


def _from_answers(
    rendered: JudgeInput,
    answers: Sequence[Answer[Vote]],
    model: str,
    config: JudgeConfig,
    batch: bool = False,
) -> Judgment:
    votes = [answer.value for answer in answers if answer.value is not None]
    reason = next((answer.failure for answer in answers if answer.failure), None)
    used = AnswerTokens()
    for answer in answers:
        used = add_tokens(used, answer.usage)
    return judgment(
        rendered,
        votes,
        len(answers),
        model,
        reason,
        config.judge_ids.get(rendered.condition),
        config.spec_name,
        usage=used,
        batch=batch,
    )


async def _judge_direct(
    turns: Sequence[JudgeInput],
    config: JudgeConfig,
    client: LLMClient,
    on_turn: Callable[[], None] | None,
) -> list[Judgment]:
    """Votes sent concurrently (up to ``concurrency`` in flight)."""

    async def one(unit: JudgeInput) -> Judgment:
        request = vote_request(unit, config.system)
        answers = await asyncio.gather(
            *(
                client.ask_structured(request, parse_vote, sample=index, what="verdict")
                for index in range(config.votes)
            )
        )
        if on_turn is not None:
            on_turn()
        return _from_answers(unit, answers, client.model, config)

    return list(await asyncio.gather(*(one(turn) for turn in turns)))


async def _judge_batch(
    turns: Sequence[JudgeInput], config: JudgeConfig, client: LLMClient
) -> list[Judgment]:
    """The same votes as direct mode, asked through the Message Batches API in rounds:
    a malformed vote goes into the next round, up to ``attempts_per_vote`` rounds."""
    requests = [vote_request(turn, config.system) for turn in turns]
    answers = await client.ask_structured_batch(
        {
            f"t{t}-v{v}": (request, v)
            for t, request in enumerate(requests)
            for v in range(config.votes)
        },
        parse_vote,
        what="verdict",
    )
    return [
        _from_answers(
            turn,
            [answers[f"t{t}-v{v}"] for v in range(config.votes)],
            client.model,
            config,
            batch=True,
        )
        for t, turn in enumerate(turns)
    ]


async def judge_rendered(
    turns: Sequence[JudgeInput],
    config: JudgeConfig,
    on_turn: Callable[[], None] | None = None,
    batch: bool = False,
    stats: RunStats | None = None,
) -> tuple[list[Judgment], RunStats]:
    """Judge every rendered turn; results in the order given.

    Direct mode sends votes concurrently; ``batch`` sends them through the Message Batches
    API (cheaper for large corpora; Anthropic only) and gives identical output. What the
    estimate refuses (a request beyond the model's context) is a LLMError before any request.
    ``stats``, when given, counts the run's requests and tokens as they are made, so that a
    run stopped halfway still says what it used.
    """
    if refusal := (
        start_refusal(config.model, batch)
        or estimate_run(turns, config.votes, config.model, config.system).refusal
    ):
        raise LLMError(refusal)
    settings = config.llm_config()
    stats = stats if stats is not None else RunStats(model=config.model)
    async with open_client(settings, stats) as client:
        await client.resolve_model()
        stats.batch = batch
        if batch:
            judgments = await _judge_batch(turns, config, client)
        else:
            judgments = await _judge_direct(turns, config, client, on_turn)
    return judgments, stats
