"""A provider-neutral request for structured output: a system prompt, the user's text, and the
one tool the model must call, whose input is the answer."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any, TypedDict

from pydantic import BaseModel

CACHE_SCHEME = "llm-cache/1"


class ToolSpec(TypedDict):
    """The forced tool: a name, what it is for, and the JSON Schema of its input."""

    name: str
    description: str
    input_schema: dict[str, Any]


def tool_for(model: type[BaseModel], name: str, description: str) -> ToolSpec:
    """A tool whose input is ``model`` (its JSON Schema)."""
    return {"name": name, "description": description, "input_schema": model.model_json_schema()}


@dataclass(frozen=True)
class TextPart:
    text: str
    cache: bool = False
    """This part ends a prefix worth caching (prompt caching, where the provider has it)."""


@dataclass(frozen=True)
class StructuredRequest:
    system: str
    prompt: str | tuple[TextPart, ...]
    """The user's message: plain text, or parts (to mark a cacheable prefix)."""
    tool: ToolSpec

    def key(self, provider: str, model: str, max_tokens: int, sample: int = 0) -> str:
        """The answer cache's key: the request as sent, and which of N samples it is."""
        material = [CACHE_SCHEME, provider, model, max_tokens, dataclasses.asdict(self), sample]
        return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()
