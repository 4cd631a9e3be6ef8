"""OpenAI's Chat Completions API, and any endpoint that speaks it (Gemini's OpenAI-compatible
endpoint, vLLM, Ollama, llama.cpp's server), behind the ``Provider`` protocol.

Structured output is a forced function tool: the request's tool becomes the one function the
model must call, and the call's JSON arguments are the answer. The key comes from
``OPENAI_API_KEY`` (``gemini:``: ``GEMINI_API_KEY``, else ``GOOGLE_API_KEY``); with a base URL
given explicitly it is optional, as local servers need none. There is no batch mode here.

Imports the SDK, which is slow to import: the client loads this module only when it opens.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import openai

from analysis.llm._config import (
    KEY_ENVS,
    NO_KEY,
    OWN_BASE_URLS,
    PROVIDER_HOSTS,
    LLMConfig,
    LLMError,
    batch_unsupported,
    is_own_api,
    needs_key,
)
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

OPENAI_KEY_ENV = KEY_ENVS["openai"][0]
GEMINI_KEY_ENVS = KEY_ENVS["gemini"]
GEMINI_BASE_URL = OWN_BASE_URLS["gemini"]
OPENAI_HOST = PROVIDER_HOSTS["openai"]


@asynccontextmanager
async def _failures() -> AsyncIterator[None]:
    """The SDK's errors (after its retries) as the protocol's failures; an answer whose body is
    not the API's JSON as NotAPIBody."""
    try:
        with read_as_api():
            yield
    except openai.APIResponseValidationError as error:
        raise NotAPIBody() from error
    except openai.AuthenticationError as error:
        raise Rejected(error.status_code) from error
    except openai.APIStatusError as error:
        raise StatusFailure(error.status_code) from error
    except openai.APITimeoutError as error:
        raise TimedOut(str(error)) from error
    except openai.APIConnectionError as error:
        raise Unreachable(str(error)) from error


def chat_params(
    model: str, request: StructuredRequest, max_tokens: int, tokens_field: str = "max_tokens"
) -> dict[str, Any]:
    """The Chat Completions parameters of a request: the system prompt and the user's text as
    messages (parts joined: these APIs cache prompt prefixes by themselves), and the tool as the
    one function the model must call."""
    prompt = (
        request.prompt
        if isinstance(request.prompt, str)
        else "\n\n".join(part.text for part in request.prompt)
    )
    tool = request.tool
    return {
        "model": model,
        tokens_field: max_tokens,
        "messages": [
            {"role": "system", "content": request.system},
            {"role": "user", "content": prompt},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": tool["name"],
                    "description": tool["description"],
                    "parameters": tool["input_schema"],
                },
            }
        ],
        "tool_choice": {"type": "function", "function": {"name": tool["name"]}},
    }


def _arguments(call: Any, tool: str) -> dict[str, Any] | None:
    """A call's JSON arguments when it calls ``tool`` and they are a JSON object, else None."""
    function = getattr(call, "function", None)
    if getattr(function, "name", None) != tool:
        return None
    try:
        data = json.loads(getattr(function, "arguments", None) or "")
    except (TypeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _reply(completion: Any, tool: str) -> Reply:
    """The tool inputs and tokens of a completion; NotAPIBody when it is not one (the SDK hands
    back a body of another content type as text, and builds a completion of any JSON)."""
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list):
        raise NotAPIBody()
    inputs = [
        data
        for choice in choices
        for call in (getattr(getattr(choice, "message", None), "tool_calls", None) or [])
        if (data := _arguments(call, tool)) is not None
    ]
    usage = getattr(completion, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None) or 0
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    return Reply(
        inputs,
        AnswerTokens(
            input_tokens=max(prompt - cached, 0),
            output_tokens=getattr(usage, "completion_tokens", None) or 0,
            cache_read_tokens=cached,
        ),
    )


def _key(config: LLMConfig, envs: tuple[str, ...], label: str) -> str:
    key = config.api_key or next((os.environ[env] for env in envs if os.environ.get(env)), None)
    if key:
        return key
    if not needs_key(config.provider, config.base_url):
        return NO_KEY
    raise LLMError(f"No {label} API key: set {envs[0]} (or the app's secrets) to run the judge.")


class OpenAIProvider:
    """``openai:`` (OpenAI, or the OpenAI-compatible server at ``base_url``) and ``gemini:``."""

    def __init__(self, config: LLMConfig, on_request: Callable[[], None]) -> None:
        gemini = config.provider == "gemini"
        envs = GEMINI_KEY_ENVS if gemini else (OPENAI_KEY_ENV,)
        base_url = config.base_url or (GEMINI_BASE_URL if gemini else None)
        self.key_env = envs[0]
        if gemini:
            self.label = "Gemini"
        elif is_own_api(config.provider, config.base_url):
            self.label = "OpenAI"
        else:
            self.label = "OpenAI-compatible"
        api_key = _key(config, envs, "Gemini" if gemini else "OpenAI")

        async def count(request: object) -> None:
            on_request()

        # An API never redirects; a redirect would send the request (transcripts) elsewhere.
        http_client = openai.DefaultAsyncHttpxClient(
            event_hooks={"request": [count]}, follow_redirects=False
        )
        self.client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            max_retries=config.max_retries,
            timeout=config.timeout,
            http_client=http_client,
        )
        # OpenAI's own API wants max_completion_tokens (its reasoning models refuse
        # max_tokens); OpenAI-compatible servers know max_tokens.
        own = urlsplit(str(self.client.base_url)).hostname == OPENAI_HOST
        self.tokens_field = "max_completion_tokens" if own else "max_tokens"
        # Part of every cache key: the provider, and a server of its own (model ids such as
        # "llama3" name different models on different servers).
        own_api = is_own_api(config.provider, config.base_url)
        self.name = config.provider if own_api else f"{config.provider}+{self.base_url}"

    @property
    def base_url(self) -> str:
        return str(self.client.base_url).rstrip("/")

    async def list_models(self) -> list[ModelInfo]:
        """The endpoint's models; Gemini's ids come as ``models/ID`` and are used as ``ID``."""
        async with _failures():
            page = await self.client.models.list()
            if not isinstance(getattr(page, "data", None), list):
                raise NotAPIBody()
            return [
                ModelInfo((ident := text_field(model, "id")).removeprefix("models/"), ident)
                async for model in page
            ]

    async def create(self, model: str, request: StructuredRequest, max_tokens: int) -> Reply:
        params = chat_params(model, request, max_tokens, self.tokens_field)
        async with _failures():
            completion = await self.client.chat.completions.create(**params)
        return _reply(completion, request.tool["name"])

    async def run_batch(
        self,
        model: str,
        requests: Mapping[str, StructuredRequest],
        max_tokens: int,
        poll_seconds: float,
    ) -> dict[str, Reply | None]:
        """Not available: Chat Completions endpoints have no Message Batches."""
        raise LLMError(batch_unsupported(self.name.split("+", 1)[0]))

    async def close(self) -> None:
        await self.client.close()
