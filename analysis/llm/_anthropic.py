"""The Anthropic Messages API (and Message Batches) behind the ``Provider`` protocol.

Imports the SDK, which is slow to import: the client loads this module only when it opens.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anthropic

from analysis.llm._config import KEY_ENVS, LLMConfig, LLMError
from analysis.llm._cost import AnswerTokens
from analysis.llm._provider import (
    ModelInfo,
    NotAPIBody,
    Rejected,
    Reply,
    StatusFailure,
    TimedOut,
    Unreachable,
    read_as_api,
    text_field,
)
from analysis.llm._request import StructuredRequest

KEY_ENV = KEY_ENVS["anthropic"][0]


@asynccontextmanager
async def _failures() -> AsyncIterator[None]:
    """The SDK's errors (after its retries) as the protocol's failures; an answer whose body is
    not the API's JSON as NotAPIBody."""
    try:
        with read_as_api():
            yield
    except anthropic.APIResponseValidationError as error:
        raise NotAPIBody() from error
    except anthropic.AuthenticationError as error:
        raise Rejected(error.status_code) from error
    except anthropic.APIStatusError as error:
        raise StatusFailure(error.status_code) from error
    except anthropic.APITimeoutError as error:
        raise TimedOut(str(error)) from error
    except anthropic.APIConnectionError as error:
        raise Unreachable(str(error)) from error


def message_params(model: str, request: StructuredRequest, max_tokens: int) -> dict[str, Any]:
    """The Messages API parameters of a request (the same in direct and batch mode): the tool
    is forced, and a part marked ``cache`` ends in a prompt-cache breakpoint."""
    if isinstance(request.prompt, str):
        content: str | list[dict[str, Any]] = request.prompt
    else:
        content = [
            {"type": "text", "text": part.text}
            | ({"cache_control": {"type": "ephemeral"}} if part.cache else {})
            for part in request.prompt
        ]
    return {
        "model": model,
        "max_tokens": max_tokens,
        "system": request.system,
        "messages": [{"role": "user", "content": content}],
        "tools": [request.tool],
        "tool_choice": {"type": "tool", "name": request.tool["name"]},
    }


def _reply(message: Any, tool: str) -> Reply:
    """The tool inputs and tokens of a message; NotAPIBody when it is not one (the SDK hands
    back a body of another content type as text, and builds a message of any JSON)."""
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        raise NotAPIBody()
    inputs = [
        block.input
        for block in content
        if getattr(block, "type", None) == "tool_use"
        and getattr(block, "name", None) == tool
        and isinstance(getattr(block, "input", None), dict)
    ]
    usage = getattr(message, "usage", None)
    return Reply(
        inputs,
        AnswerTokens(
            input_tokens=getattr(usage, "input_tokens", None) or 0,
            output_tokens=getattr(usage, "output_tokens", None) or 0,
            cache_write_tokens=getattr(usage, "cache_creation_input_tokens", None) or 0,
            cache_read_tokens=getattr(usage, "cache_read_input_tokens", None) or 0,
        ),
    )


def _model_info(model: Any) -> ModelInfo:
    """A models list's entry: its id must be text; a missing display name is the id."""
    ident = text_field(model, "id")
    name = getattr(model, "display_name", None)
    return ModelInfo(ident, name if isinstance(name, str) else ident)


class AnthropicProvider:
    name = "anthropic"
    label = "Anthropic"
    key_env = KEY_ENV

    def __init__(self, config: LLMConfig, on_request: Callable[[], None]) -> None:
        api_key = config.api_key or os.environ.get(KEY_ENV)
        if not api_key:
            raise LLMError(
                f"No Anthropic API key: set {KEY_ENV} (or the app's secrets) to run the judge."
            )

        async def count(request: object) -> None:
            on_request()

        # An API never redirects; a redirect would send the request (transcripts) elsewhere.
        http_client = anthropic.DefaultAsyncHttpxClient(
            event_hooks={"request": [count]}, follow_redirects=False
        )
        self.client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=config.base_url,
            max_retries=config.max_retries,
            timeout=config.timeout,
            http_client=http_client,
        )

    @property
    def base_url(self) -> str:
        return str(self.client.base_url)

    async def list_models(self) -> list[ModelInfo]:
        async with _failures():
            page = await self.client.models.list(limit=1000)
            if not isinstance(getattr(page, "data", None), list):
                raise NotAPIBody()
            return [_model_info(model) async for model in page]

    async def create(self, model: str, request: StructuredRequest, max_tokens: int) -> Reply:
        async with _failures():
            message = await self.client.messages.create(
                **message_params(model, request, max_tokens)
            )
        return _reply(message, request.tool["name"])

    async def run_batch(
        self,
        model: str,
        requests: Mapping[str, StructuredRequest],
        max_tokens: int,
        poll_seconds: float,
    ) -> dict[str, Reply | None]:
        """Submit one Message Batch, wait for it to end, and read each request's reply."""
        entries: Any = [
            {"custom_id": key, "params": message_params(model, request, max_tokens)}
            for key, request in requests.items()
        ]
        replies: dict[str, Reply | None] = {}
        async with _failures():
            batch = await self.client.messages.batches.create(requests=entries)
            while text_field(batch, "processing_status") != "ended":
                await asyncio.sleep(poll_seconds)
                batch = await self.client.messages.batches.retrieve(batch.id)
            async for item in await self.client.messages.batches.results(batch.id):
                ident, result = text_field(item, "custom_id"), getattr(item, "result", None)
                if ident not in requests:
                    continue
                replies[ident] = (
                    _reply(getattr(result, "message", None), requests[ident].tool["name"])
                    if text_field(result, "type") == "succeeded"
                    else None
                )
        return replies

    async def close(self) -> None:
        await self.client.close()
