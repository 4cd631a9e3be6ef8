"""What the client needs from an API: the models list, one structured answer, and a batch.

A provider turns its SDK's errors into the failures below, so the client words them the same
way whichever API answered: Anthropic's Messages API (``_anthropic``), and OpenAI's Chat
Completions or any endpoint compatible with it (``_openai``, for ``openai:`` and ``gemini:``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from analysis.llm._cost import AnswerTokens
from analysis.llm._request import StructuredRequest


class ModelInfo(NamedTuple):
    id: str
    display_name: str


@dataclass(frozen=True)
class Reply:
    """One answer: the inputs the model gave the forced tool (in order), and its tokens."""

    tool_inputs: list[dict[str, Any]] = field(default_factory=list)
    usage: AnswerTokens = field(default_factory=AnswerTokens)


class ProviderFailure(Exception):
    """A request failed after the SDK's retries."""


class StatusFailure(ProviderFailure):
    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


class Rejected(StatusFailure):
    """The API key was rejected (HTTP 401)."""


NOT_API_BODY = "answered HTTP 200 with a body that is not the API's JSON"


class NotAPIBody(ProviderFailure):
    """HTTP 200, but the body is not the API's JSON: a proxy's login page, an answer cut off
    halfway, another service's JSON. The SDKs hand such a body back as text, fail to decode it,
    or build an answer whose fields are missing; a provider tells all three as this."""

    def __init__(self) -> None:
        super().__init__(f"the endpoint {NOT_API_BODY}")


@contextmanager
def read_as_api() -> Iterator[None]:
    """A body the SDK could not read as the API's JSON raises NotAPIBody: JSON that does not
    decode (cut off; a page under a JSON content type), and text the SDK handed back where its
    object belongs (a body of another content type), which its own code then fails to read."""
    try:
        yield
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise NotAPIBody() from error
    except AttributeError as error:
        if isinstance(getattr(error, "obj", None), str | bytes):
            raise NotAPIBody() from error
        raise


def text_field(value: object, name: str) -> str:
    """``value.name`` when it is text, as the API's JSON always has it; else NotAPIBody."""
    found = getattr(value, name, None)
    if not isinstance(found, str):
        raise NotAPIBody()
    return found


class Unreachable(ProviderFailure):
    """No HTTP answer: the connection failed."""


class TimedOut(Unreachable):
    """No HTTP answer in time."""


class Provider(Protocol):
    name: str
    """Part of every cache key: ``anthropic``, ``openai``, ``gemini`` (``openai+URL`` for a
    server of its own)."""
    label: str
    """As written in messages: ``Anthropic``, ``OpenAI``, ``OpenAI-compatible``, ``Gemini``."""
    key_env: str
    """The environment variable the key comes from: ``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``,
    ``GEMINI_API_KEY``."""

    @property
    def base_url(self) -> str: ...

    async def list_models(self) -> list[ModelInfo]: ...

    async def create(self, model: str, request: StructuredRequest, max_tokens: int) -> Reply:
        """One answer, the tool forced; raises a ``ProviderFailure``."""
        ...

    async def run_batch(
        self,
        model: str,
        requests: Mapping[str, StructuredRequest],
        max_tokens: int,
        poll_seconds: float,
    ) -> dict[str, Reply | None]:
        """Every request at once, at the batch price: each returned id's reply (None when that
        request failed); raises a ``ProviderFailure`` when the batch cannot be run."""
        ...

    async def close(self) -> None: ...
