"""What a model client needs to know, and the error that stops a run (no SDK import).

A model is named ``provider:model`` (``openai:gpt-4o``, ``gemini:gemini-2.5-flash``,
``anthropic:claude-opus-4-1``); a bare name is Anthropic's. ``parse_model_name`` is the one place
that reads such a name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field, model_validator

DEFAULT_TIMEOUT = 60.0
"""Seconds one HTTP request may take before it counts as timed out (and is retried)."""

ProviderName = Literal["anthropic", "openai", "gemini"]
PROVIDERS: tuple[ProviderName, ...] = get_args(ProviderName)
"""``anthropic``: the Messages API. ``openai`` and ``gemini``: Chat Completions (OpenAI's, or any
OpenAI-compatible endpoint at a base URL; Gemini's OpenAI-compatible endpoint)."""


KEY_ENVS: dict[ProviderName, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}
"""Where each provider's key comes from: the first variable set wins."""


class LLMError(Exception):
    """A problem that stops a run before any answer, told in one sentence."""


def _known(prefix: str) -> ProviderName | None:
    return next((name for name in PROVIDERS if name == prefix.lower()), None)


def parse_model_name(name: str, provider: str | None = None) -> tuple[ProviderName, str]:
    """The provider and model id of ``provider:model`` (a bare name: Anthropic's, or
    ``provider``'s when one is given, so an id with a colon such as ``llama3.1:8b`` stays whole).

    Raises LLMError for an unknown provider prefix, or one that contradicts ``provider``.
    """
    given = _known(provider) if provider is not None else None
    if provider is not None and given is None:
        raise LLMError(f"Unknown model provider {provider!r}: use {_listed()}.")
    prefix, colon, model = name.partition(":")
    named = _known(prefix) if colon else None
    if named is not None:
        if not model.strip():
            raise LLMError(f"No model id after {prefix!r} in {name!r}: write {prefix}:MODEL.")
        if given is not None and given != named:
            raise LLMError(f"The model {name!r} names provider {named}, not {given}.")
        return named, model
    if given is not None:
        return given, name
    if colon:
        raise LLMError(
            f"Unknown model provider {prefix!r} in {name!r}: name a model as provider:model "
            f"with {_listed()} (a bare name is Anthropic's)."
        )
    return "anthropic", name


def _listed() -> str:
    return ", ".join(PROVIDERS[:-1]) + f" or {PROVIDERS[-1]}"


def batch_unsupported(provider: str) -> str:
    return (
        f"Batch mode is not available for {provider}: models (OpenAI-compatible endpoints); "
        "run without --batch."
    )


class LLMConfig(BaseModel):
    """One model behind one endpoint, and how patiently to ask it."""

    provider: ProviderName = "anthropic"
    """Which API the endpoint speaks: from the model name's ``provider:`` prefix (or given)."""
    model: str
    """A model id or display name, checked against the endpoint's models list; given as
    ``provider:model``, the prefix sets ``provider`` and is removed."""
    base_url: str | None = None
    """None: the provider's own endpoint. For ``openai``, any OpenAI-compatible server
    (vLLM, Ollama, llama.cpp: ``http://127.0.0.1:8000/v1``)."""
    api_key: str | None = None
    """None: the provider's environment variable (ANTHROPIC_API_KEY, OPENAI_API_KEY or
    GEMINI_API_KEY); optional for an OpenAI-compatible ``base_url`` (local servers need none)."""
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0)
    concurrency: int = Field(default=4, ge=1, le=64)
    """Requests in flight at once."""
    max_retries: int = Field(default=5, ge=0, le=20)
    """Transport retries (429, 5xx, 529 overloaded, timeouts), honouring retry-after."""
    attempts: int = Field(default=3, ge=1, le=10)
    """How often a malformed or incomplete answer is asked again before it is given up."""
    max_tokens: int = 1024
    cache_dir: Path | None = None
    """Where valid answers are kept, keyed by the request; None: no cache."""
    cache_file: str = "llm-answers.sqlite3"
    poll_seconds: float = 10.0
    """Batch mode: how long to wait between status checks."""

    @model_validator(mode="before")
    @classmethod
    def _provider_from_model(cls, data: Any) -> Any:
        """``provider:model`` split into ``provider`` and ``model`` (LLMError when it cannot)."""
        if isinstance(data, dict) and isinstance(data.get("model"), str):
            provider, model = parse_model_name(data["model"], data.get("provider"))
            data = {**data, "provider": provider, "model": model}
        return data


def key_from(model: str, env: Mapping[str, str]) -> str | None:
    """The API key ``model``'s provider reads from ``env``, if one is set."""
    provider, _ = parse_model_name(model)
    return next((env[name] for name in KEY_ENVS[provider] if env.get(name)), None)


def needs_key(provider: ProviderName, base_url: str | None) -> bool:
    """Whether a run must have an API key: always for Anthropic; for an OpenAI-compatible
    provider only without an explicit base URL (a local server such as vLLM needs none)."""
    return provider == "anthropic" or base_url is None
