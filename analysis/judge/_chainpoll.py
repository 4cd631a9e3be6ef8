"""ChainPoll judge for Tool Selection Quality.

Chain: the judge reasons through a rubric before its verdict. Poll: it is asked N times,
independently; a step's (or turn's) score is correct votes / valid votes, a probability. A
vote that comes back malformed is discarded and asked again, up to a limit; a unit with no
valid vote is unscored (``score`` None), never 0 or 1.

Every request puts the rubric and the menu first, marked for prompt caching: the steps of a
session share that prefix, so after the first request it is billed as a cache read.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anthropic
from platformdirs import user_cache_dir
from pydantic import BaseModel, Field

from analysis.judge._cost import RunStats
from analysis.judge._rubric import RUBRIC_VERSION, parse_vote, vote_request
from analysis.models import TurnJudgment, Vote
from analysis.render._judge_input import JudgeInput


class JudgeError(Exception):
    """A problem that stops a run before any vote, told in one sentence."""


class JudgeConfig(BaseModel):
    model: str
    votes: int = Field(default=3, ge=1, le=10)
    base_url: str | None = None
    api_key: str | None = None
    concurrency: int = Field(default=4, ge=1, le=64)
    attempts_per_vote: int = Field(default=3, ge=1, le=10)
    """How often a malformed vote is asked again before it is discarded."""
    max_retries: int = Field(default=5, ge=0, le=20)
    """Transport retries (429, 5xx, 529 overloaded, timeouts), honouring retry-after."""
    timeout: float = 120.0
    max_tokens: int = 1024
    cache_dir: Path | None = None
    poll_seconds: float = 10.0
    """Batch mode: how long to wait between status checks."""


def default_cache_dir() -> Path:
    """The user's cache directory (``$XDG_CACHE_HOME/tsq-workbench`` on Linux)."""
    return Path(user_cache_dir("tsq-workbench"))


class VoteCache:
    """Valid votes on disk, keyed by (rendered input, model, rubric version, vote index)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "judge-votes.sqlite3"
        self._db = sqlite3.connect(self.path)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS votes (key TEXT PRIMARY KEY, vote TEXT NOT NULL)"
        )
        self._db.commit()

    @staticmethod
    def key(prompt: str, model: str, index: int) -> str:
        material = json.dumps([prompt, model, RUBRIC_VERSION, index])
        return hashlib.sha256(material.encode()).hexdigest()

    def get(self, key: str) -> Vote | None:
        row = self._db.execute("SELECT vote FROM votes WHERE key = ?", (key,)).fetchone()
        return Vote.model_validate_json(row[0]) if row else None

    def put(self, key: str, vote: Vote) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO votes VALUES (?, ?)", (key, vote.model_dump_json())
        )
        self._db.commit()

    def close(self) -> None:
        self._db.close()


def make_client(config: JudgeConfig, stats: RunStats) -> anthropic.AsyncAnthropic:
    api_key = config.api_key or os.environ.get("ANTHROPIC_API_KEY")
    if not api_key:
        raise JudgeError(
            "No Anthropic API key: set ANTHROPIC_API_KEY (or the app's secrets) to run the judge."
        )

    async def count(request: object) -> None:
        stats.http_requests += 1

    http_client = anthropic.DefaultAsyncHttpxClient(event_hooks={"request": [count]})
    return anthropic.AsyncAnthropic(
        api_key=api_key,
        base_url=config.base_url,
        max_retries=config.max_retries,
        timeout=config.timeout,
        http_client=http_client,
    )


async def resolve_model(client: anthropic.AsyncAnthropic, name: str) -> str:
    """The model id for ``name`` (an id or a display name), checked against the models list."""
    try:
        models = [model async for model in client.models.list(limit=1000)]
    except anthropic.AuthenticationError as error:
        raise JudgeError("The API key was rejected (HTTP 401); check ANTHROPIC_API_KEY.") from error
    except anthropic.APIConnectionError as error:
        raise JudgeError(f"Could not reach the Anthropic API at {client.base_url}.") from error
    except anthropic.APIStatusError as error:
        raise JudgeError(f"Listing models failed with HTTP {error.status_code}.") from error
    by_name = {m.id: m.id for m in models} | {m.display_name: m.id for m in models}
    lowered = {key.lower(): value for key, value in by_name.items()}
    if name in by_name or name.lower() in lowered:
        return by_name.get(name) or lowered[name.lower()]
    close = difflib.get_close_matches(name, [m.id for m in models], n=3, cutoff=0.3)
    hint = f"; closest: {', '.join(close)}" if close else ""
    raise JudgeError(f"Unknown judge model {name!r} (not in the models list{hint}).")


def score_of(votes: Sequence[Vote]) -> float | None:
    return sum(v.verdict == "correct" for v in votes) / len(votes) if votes else None


def judgment(
    rendered: JudgeInput, votes: list[Vote], requested: int, model: str, reason: str | None
) -> TurnJudgment:
    return TurnJudgment(
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
        rubric_version=RUBRIC_VERSION,
        condition=rendered.condition,
        catalog_size=len(rendered.tools),
        call_rendered=rendered.call_rendered,
        context_chars=len(rendered.prior_context),
        unscored_reason=None if votes else reason,
    )


class Judge:
    """Runs ChainPoll votes in direct mode, with a concurrency limit and the vote cache."""

    def __init__(
        self,
        config: JudgeConfig,
        client: anthropic.AsyncAnthropic,
        cache: VoteCache | None,
        stats: RunStats,
        on_turn: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self.client = client
        self.cache = cache
        self.stats = stats
        self.on_turn = on_turn
        self.model = config.model
        self._limit = asyncio.Semaphore(config.concurrency)

    async def _ask(self, unit: JudgeInput) -> Vote | None:
        """One vote, asked again while malformed, up to ``attempts_per_vote``."""
        for _ in range(self.config.attempts_per_vote):
            async with self._limit:
                self.stats.votes_asked += 1
                response = await self.client.messages.create(
                    **vote_request(self.model, unit, self.config.max_tokens)
                )
            self.stats.add_usage(response.usage)
            vote = parse_vote(response.content)
            if vote is not None:
                return vote
        return None

    async def _vote(self, unit: JudgeInput, index: int) -> tuple[Vote | None, str | None]:
        key = VoteCache.key(unit.prompt_text(), self.model, index)
        if self.cache is not None:
            cached = self.cache.get(key)
            if cached is not None:
                self.stats.cache_hits += 1
                return cached, None
        try:
            vote = await self._ask(unit)
        except anthropic.APIStatusError as error:
            return None, f"the API answered HTTP {error.status_code} after retries"
        except (anthropic.APIConnectionError, anthropic.APITimeoutError):
            return None, "the API could not be reached or timed out after retries"
        if vote is None:
            return None, f"no valid verdict in {self.config.attempts_per_vote} attempts"
        if self.cache is not None:
            self.cache.put(key, vote)
        return vote, None

    async def judge(self, rendered: JudgeInput) -> TurnJudgment:
        results = await asyncio.gather(
            *(self._vote(rendered, index) for index in range(self.config.votes))
        )
        votes = [vote for vote, _ in results if vote is not None]
        reason = next((why for _, why in results if why), None)
        if self.on_turn is not None:
            self.on_turn()
        return judgment(rendered, votes, self.config.votes, self.model, reason)


async def _batch_round(
    client: anthropic.AsyncAnthropic,
    requests: dict[str, dict[str, Any]],
    config: JudgeConfig,
    stats: RunStats,
) -> dict[str, Vote | None]:
    """Submit one Message Batch, wait for it to end, and read each request's vote."""
    entries: Any = [{"custom_id": key, "params": params} for key, params in requests.items()]
    batch = await client.messages.batches.create(requests=entries)
    while batch.processing_status != "ended":
        await asyncio.sleep(config.poll_seconds)
        batch = await client.messages.batches.retrieve(batch.id)
    votes: dict[str, Vote | None] = dict.fromkeys(requests)
    async for item in await client.messages.batches.results(batch.id):
        stats.votes_asked += 1
        if item.result.type == "succeeded":
            message = item.result.message
            stats.add_usage(message.usage)
            votes[item.custom_id] = parse_vote(message.content)
    return votes


async def _judge_batch(
    turns: Sequence[JudgeInput],
    config: JudgeConfig,
    client: anthropic.AsyncAnthropic,
    cache: VoteCache,
    model: str,
    stats: RunStats,
) -> list[TurnJudgment]:
    """The same votes as direct mode, asked through the Message Batches API in rounds:
    a malformed vote goes into the next round, up to ``attempts_per_vote`` rounds."""
    prompts = [turn.prompt_text() for turn in turns]
    votes: dict[tuple[int, int], Vote] = {}
    pending: dict[str, tuple[int, int]] = {}
    for t, prompt in enumerate(prompts):
        for v in range(config.votes):
            cached = cache.get(VoteCache.key(prompt, model, v))
            if cached is not None:
                stats.cache_hits += 1
                votes[(t, v)] = cached
            else:
                pending[f"t{t}-v{v}"] = (t, v)
    for _ in range(config.attempts_per_vote):
        if not pending:
            break
        requests = {
            key: vote_request(model, turns[t], config.max_tokens)
            for key, (t, _v) in pending.items()
        }
        answers = await _batch_round(client, requests, config, stats)
        for key, vote in answers.items():
            if vote is None:
                continue
            t, v = pending.pop(key)
            votes[(t, v)] = vote
            cache.put(VoteCache.key(prompts[t], model, v), vote)
    reason = f"no valid verdict in {config.attempts_per_vote} attempts"
    return [
        judgment(
            turn,
            [votes[(t, v)] for v in range(config.votes) if (t, v) in votes],
            config.votes,
            model,
            reason,
        )
        for t, turn in enumerate(turns)
    ]


async def judge_rendered(
    turns: Sequence[JudgeInput],
    config: JudgeConfig,
    on_turn: Callable[[], None] | None = None,
    batch: bool = False,
) -> tuple[list[TurnJudgment], RunStats]:
    """Judge every rendered turn; results in the order given.

    Direct mode sends votes concurrently; ``batch`` sends them through the Message Batches
    API (cheaper for large corpora) and gives identical output.
    """
    stats = RunStats()
    client = make_client(config, stats)
    cache = VoteCache(config.cache_dir or default_cache_dir())
    try:
        model = await resolve_model(client, config.model)
        stats.model = model
        stats.batch = batch
        if batch:
            judgments = await _judge_batch(turns, config, client, cache, model, stats)
        else:
            judge = Judge(config, client, cache, stats, on_turn)
            judge.model = model
            judgments = list(await asyncio.gather(*(judge.judge(turn) for turn in turns)))
    finally:
        cache.close()
        await client.close()
    return judgments, stats
