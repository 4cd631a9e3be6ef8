"""The model client: resolves the model name, asks for structured answers (re-asking malformed
ones), keeps valid answers in the cache, and counts requests, tokens and cost.

Transport retries (429, 5xx, 529, timeouts, honouring retry-after) are the SDK's (``anthropic``
or ``openai``), set from ``LLMConfig.max_retries``; what is left after them is told as one
phrase per answer.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Generic, TypeVar, overload

from pydantic import BaseModel, ValidationError

from analysis.llm._cache import AnswerCache
from analysis.llm._config import LLMConfig, LLMError
from analysis.llm._cost import AnswerTokens, RunStats, add_tokens
from analysis.llm._provider import (
    NOT_API_BODY,
    NotAPIBody,
    Provider,
    ProviderFailure,
    Rejected,
    Reply,
    StatusFailure,
    TimedOut,
    Unreachable,
)
from analysis.llm._request import StructuredRequest

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
Parse = Callable[[dict[str, Any]], T | None]


@dataclass(frozen=True)
class Answer(Generic[T]):
    """A parsed, valid answer, or why there is none (one phrase, e.g. for "left open (...)")."""

    value: T | None
    failure: str | None = None
    cached: bool = False
    asked: int = 0
    """Requests this answer took (re-asks included, transport retries not)."""
    usage: AnswerTokens = field(default_factory=AnswerTokens)
    """The tokens its requests used (every re-ask's; none for an answer from the cache)."""


def _parser(parse: type[BaseModel] | Callable[[dict[str, Any]], Any]) -> Parse[Any]:
    if isinstance(parse, type) and issubclass(parse, BaseModel):
        model = parse

        def validate(data: dict[str, Any]) -> BaseModel | None:
            try:
                return model.model_validate(data)
            except ValidationError:
                return None

        return validate
    return parse


def open_provider(config: LLMConfig, on_request: Callable[[], None]) -> Provider:
    """The provider ``config`` names (its SDK imported now, not before). Served (the config
    has ``endpoints``), an endpoint the operator does not allow is an LLMError before any
    request, and the key is the one the rules give, never the environment's."""
    rules = config.endpoints
    if rules is not None:
        refusal = rules.refusal(config.provider, config.base_url)
        if refusal:
            raise LLMError(refusal)
        key = rules.key_for(config.provider, config.base_url)
        url = rules.url_for(config.provider, config.base_url)
        config = config.model_copy(update={"api_key": key, "base_url": url})
    if config.provider in ("openai", "gemini"):
        from analysis.llm._openai import OpenAIProvider

        return OpenAIProvider(config, on_request)
    from analysis.llm._anthropic import AnthropicProvider

    return AnthropicProvider(config, on_request)


class LLMClient:
    """One model behind one endpoint; use as ``async with``, or ``close()`` it."""

    def __init__(
        self, config: LLMConfig, stats: RunStats | None = None, provider: Provider | None = None
    ) -> None:
        self.config = config
        self.stats = stats if stats is not None else RunStats(model=config.model)
        self.model = config.model
        self.provider = provider or open_provider(config, self._count_request)
        self.cache = (
            AnswerCache(config.cache_dir / config.cache_file)
            if config.cache_dir is not None
            else None
        )
        self._limit = asyncio.Semaphore(config.concurrency)

    def _count_request(self) -> None:
        self.stats.http_requests += 1

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        if self.cache is not None:
            self.cache.close()
        await self.provider.close()

    async def resolve_model(self) -> str:
        """The model id for the configured name (an id or a display name), checked against the
        models list; from now on every request uses it."""
        name = self.config.model
        provider = self.provider
        try:
            models = await provider.list_models()
        except Rejected as error:
            raise LLMError(
                f"The API key was rejected (HTTP 401); check {provider.key_env}."
            ) from error
        except TimedOut as error:
            raise LLMError(
                f"The {provider.label} API at {provider.base_url} timed out "
                f"({self._tries()} of {self.config.timeout:g} s)."
            ) from error
        except Unreachable as error:
            raise LLMError(
                f"Could not reach the {provider.label} API at {provider.base_url}."
            ) from error
        except StatusFailure as error:
            raise LLMError(f"Listing models failed with HTTP {error.status}.") from error
        except NotAPIBody as error:
            raise LLMError(
                f"The {provider.label} API at {provider.base_url} {NOT_API_BODY} when asked for "
                "its models (a proxy's login page, or an answer cut short?)."
            ) from error
        by_name = {m.id: m.id for m in models} | {m.display_name: m.id for m in models}
        lowered = {key.lower(): value for key, value in by_name.items()}
        if name in by_name or name.lower() in lowered:
            self.model = by_name.get(name) or lowered[name.lower()]
            self.stats.model = self.model
            return self.model
        close = difflib.get_close_matches(name, [m.id for m in models], n=3, cutoff=0.3)
        hint = f"; closest: {', '.join(close)}" if close else ""
        raise LLMError(f"Unknown judge model {name!r} (not in the models list{hint}).")

    def _tries(self) -> str:
        tries = self.config.max_retries + 1
        return f"{tries} {'try' if tries == 1 else 'tries'}"

    def failure(self, error: ProviderFailure) -> str:
        """A failure after the SDK's retries, as one phrase."""
        if isinstance(error, NotAPIBody):
            return f"the endpoint at {self.provider.base_url} {NOT_API_BODY}"
        if isinstance(error, StatusFailure):
            return f"the API answered HTTP {error.status} after retries"
        if isinstance(error, TimedOut):
            return (
                f"the endpoint at {self.provider.base_url} timed out "
                f"({self._tries()} of {self.config.timeout:g} s)"
            )
        return f"the API at {self.provider.base_url} could not be reached after retries"

    def key(self, request: StructuredRequest, sample: int) -> str:
        return request.key(self.provider.name, self.model, self.config.max_tokens, sample)

    def _cached(self, key: str, parse: Parse[Any]) -> Any | None:
        if self.cache is None:
            return None
        data = self.cache.get(key)
        value = parse(data) if data is not None else None
        if value is not None:
            self.stats.cache_hits += 1
        return value

    def _accept(self, key: str, reply: Reply, parse: Parse[Any]) -> Any | None:
        """The first valid tool input of ``reply``, parsed (and cached), or None."""
        self.stats.add_usage(reply.usage)
        for data in reply.tool_inputs:
            value = parse(data)
            if value is not None:
                if self.cache is not None:
                    self.cache.put(key, data)
                return value
        return None

    @overload
    async def ask_structured(
        self,
        request: StructuredRequest,
        parse: type[M],
        *,
        sample: int = 0,
        what: str = "answer",
    ) -> Answer[M]: ...

    @overload
    async def ask_structured(
        self,
        request: StructuredRequest,
        parse: Callable[[dict[str, Any]], T | None],
        *,
        sample: int = 0,
        what: str = "answer",
    ) -> Answer[T]: ...

    async def ask_structured(
        self,
        request: StructuredRequest,
        parse: Any,
        *,
        sample: int = 0,
        what: str = "answer",
    ) -> Answer[Any]:
        """One valid answer to ``request``: its forced tool's input, parsed by ``parse`` (a
        pydantic model, or a function returning None for a malformed input).

        A cached answer makes no request. A malformed or incomplete answer is asked again,
        up to ``attempts`` times, as is one whose body is not the API's JSON (a proxy's page, an
        answer cut short); ``sample`` tells apart independent answers to one request (a judge's
        votes). Never raises for a failed request: ``Answer.failure`` says why (the last
        attempt's).
        """
        check = _parser(parse)
        key = self.key(request, sample)
        cached = self._cached(key, check)
        if cached is not None:
            return Answer(cached, cached=True)
        attempts = self.config.attempts
        failure = f"no valid {what} in {attempts} attempts"
        used = AnswerTokens()
        for asked in range(1, attempts + 1):
            try:
                async with self._limit:
                    self.stats.votes_asked += 1
                    reply = await self.provider.create(self.model, request, self.config.max_tokens)
            except NotAPIBody as error:  # asked again, as a malformed answer is
                failure = f"{self.failure(error)} ({attempts} attempts)"
                continue
            except ProviderFailure as error:
                return Answer(None, self.failure(error), asked=asked, usage=used)
            failure = f"no valid {what} in {attempts} attempts"
            used = add_tokens(used, reply.usage)
            value = self._accept(key, reply, check)
            if value is not None:
                return Answer(value, asked=asked, usage=used)
        return Answer(None, failure, asked=attempts, usage=used)

    async def ask_structured_batch(
        self,
        requests: Mapping[str, tuple[StructuredRequest, int]],
        parse: Callable[[dict[str, Any]], T | None],
        *,
        what: str = "answer",
    ) -> dict[str, Answer[T]]:
        """The same answers as ``ask_structured`` for each ``id: (request, sample)``, asked
        through the provider's batch API in rounds: a malformed answer goes into the next
        round, up to ``attempts`` rounds. A batch that cannot be run stops with an LLMError."""
        answers: dict[str, Answer[T]] = {}
        pending: dict[str, tuple[StructuredRequest, int]] = {}
        for ident, (request, sample) in requests.items():
            cached = self._cached(self.key(request, sample), parse)
            if cached is not None:
                answers[ident] = Answer(cached, cached=True)
            else:
                pending[ident] = (request, sample)
        attempts = self.config.attempts
        used: dict[str, AnswerTokens] = {}
        for asked in range(1, attempts + 1):
            if not pending:
                break
            batch = {ident: request for ident, (request, _) in pending.items()}
            try:
                replies = await self.provider.run_batch(
                    self.model, batch, self.config.max_tokens, self.config.poll_seconds
                )
            except ProviderFailure as error:
                raise LLMError(f"The batch could not be run: {self.failure(error)}.") from error
            self.stats.votes_asked += len(replies)
            for ident, reply in replies.items():
                if reply is None or ident not in pending:
                    continue
                request, sample = pending[ident]
                used[ident] = add_tokens(used.get(ident, AnswerTokens()), reply.usage)
                value = self._accept(self.key(request, sample), reply, parse)
                if value is not None:
                    answers[ident] = Answer(value, asked=asked, usage=used[ident])
                    del pending[ident]
        for ident in pending:
            answers[ident] = Answer(
                None,
                f"no valid {what} in {attempts} attempts",
                asked=attempts,
                usage=used.get(ident, AnswerTokens()),
            )
        return {ident: answers[ident] for ident in requests}


def open_client(config: LLMConfig, stats: RunStats | None = None) -> LLMClient:
    """A client for ``config`` (no request yet): raises LLMError when there is no API key."""
    return LLMClient(config, stats)
