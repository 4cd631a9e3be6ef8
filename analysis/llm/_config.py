"""What a model client needs to know, and the error that stops a run (no SDK import).

A model is named ``provider:model`` (``openai:gpt-4o``, ``gemini:gemini-2.5-flash``,
``anthropic:claude-opus-4-1``); a bare name is Anthropic's. ``parse_model_name`` is the one place
that reads such a name.

Where a request may go: local, anything the user names is the user's choice. Served (the app
shared with others, ``EndpointRules``), a request goes only to a provider's own API or to an
endpoint the operator lists, and a key is attached only to its own provider's host or to a
listed endpoint that names it, so a visitor can never point the operator's key at a server of
their own. The operator lists endpoints in ``.streamlit/secrets.toml``::

    [endpoints.vllm]
    base_url = "http://gpu-box:8000/v1"
    key = "VLLM_API_KEY"        # optional: the variable whose value this endpoint receives

or in ``TSQ_ENDPOINTS``: ``NAME=URL`` entries separated by commas, each optionally followed by
a space and its key variable (``vllm=http://gpu-box:8000/v1 VLLM_API_KEY``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from analysis._jsonio import first_error

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


# Where a served workbench may send a request, and which key goes with it.
PROVIDER_HOSTS: dict[ProviderName, str] = {
    "anthropic": "api.anthropic.com",
    "openai": "api.openai.com",
    "gemini": "generativelanguage.googleapis.com",
}
"""Each provider's own API host: its key may go there, over HTTPS."""
OWN_BASE_URLS: dict[ProviderName, str] = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
    "gemini": "https://generativelanguage.googleapis.com/v1beta/openai/",
}
"""Each provider's own API, named explicitly where the rules apply: no environment variable of
an SDK (``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``) can move it elsewhere."""
DEFAULT_PORTS = {"http": 80, "https": 443}
NO_KEY = "no-key"
"""Sent where no key may or need go: to a listed endpoint that names none (so the SDK never falls
back on the server's environment), and to a local server given without one (an SDK needs some
key; servers without authentication ignore it)."""
ENDPOINTS_ENV = "TSQ_ENDPOINTS"


class EndpointError(LLMError):
    """The operator's list of endpoints cannot be read; one sentence."""


class ListedEndpoint(BaseModel):
    """One endpoint the operator allows, and the key variable it may receive (if any)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    base_url: str
    key: str | None = None
    """The variable (environment or the app's secrets) whose value goes to this endpoint;
    None: no key is sent."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, base_url: str) -> str:
        if plain_url(base_url.strip()) is None:
            raise ValueError(
                f"{base_url!r} is not a plain http(s) URL (a host, and no user, query or fragment)"
            )
        return base_url.strip()

    @field_validator("name", "key")
    @classmethod
    def _no_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be blank")
        return None if value is None else value.strip()


def plain_url(url: str) -> tuple[str, str, int | None, str] | None:
    """The scheme, host, port (None: the scheme's default) and path of a plain http(s) URL, or
    None for anything else: user info, a query or fragment, whitespace, control characters or
    backslashes (which HTTP clients and ``urlsplit`` may read differently), a bad port."""
    if any(c.isspace() or not c.isprintable() or c == "\\" for c in url):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or "@" in parts.netloc:
        return None
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        return None
    host = parts.hostname.lower().rstrip(".")
    return scheme, host, None if port == DEFAULT_PORTS[scheme] else port, parts.path.rstrip("/")


def same_endpoint(one: str, other: str) -> bool:
    """Whether two base URLs name the same endpoint: both plain (:func:`plain_url`), with
    scheme, host, port and path alike (case, default ports and trailing slashes aside)."""
    mine = plain_url(one)
    return mine is not None and mine == plain_url(other)


def is_own_api(provider: ProviderName, base_url: str | None) -> bool:
    """Whether ``base_url`` is ``provider``'s own API: none given, or a plain HTTPS URL of its
    host on the default port."""
    if base_url is None:
        return True
    parts = plain_url(base_url)
    own = PROVIDER_HOSTS[provider]
    return parts is not None and parts[:3] == ("https", own, None)


def endpoints_from_env(text: str) -> list[ListedEndpoint]:
    """``TSQ_ENDPOINTS``: ``NAME=URL [KEY]`` entries separated by commas."""
    listed = []
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        name, equals, rest = entry.partition("=")
        words = rest.split()
        if not equals or len(words) not in (1, 2):
            raise EndpointError(
                f"{ENDPOINTS_ENV}: {entry!r} is not NAME=URL or NAME=URL KEY_VARIABLE."
            )
        key = words[1] if len(words) == 2 else None
        listed.append(_endpoint(ENDPOINTS_ENV, {"name": name, "base_url": words[0], "key": key}))
    return listed


def endpoints_from_table(table: Mapping[str, Any], where: str) -> list[ListedEndpoint]:
    """``[endpoints.NAME]`` tables (``base_url``, optional ``key``) from the app's secrets."""
    listed = []
    for name, entry in table.items():
        if not isinstance(entry, Mapping):
            raise EndpointError(f"{where}: endpoints.{name} is not a table with a base_url.")
        listed.append(_endpoint(f"{where}: endpoints.{name}", {"name": name, **entry}))
    return listed


def _endpoint(where: str, data: dict[str, Any]) -> ListedEndpoint:
    try:
        return ListedEndpoint.model_validate(data)
    except ValidationError as error:
        raise EndpointError(f"{where}: not an endpoint ({first_error(error)}).") from None


@dataclass(frozen=True)
class EndpointRules:
    """Served: the endpoints the operator lists, and the keys the operator has (by variable).

    ``refusal`` says why a request may not go somewhere; ``key_for`` gives the one key that
    may go with it.
    """

    listed: tuple[ListedEndpoint, ...] = ()
    keys: Mapping[str, str] = field(default_factory=dict, repr=False)

    def listed_at(self, base_url: str) -> ListedEndpoint | None:
        return next((e for e in self.listed if same_endpoint(e.base_url, base_url)), None)

    def refusal(
        self, provider: ProviderName, base_url: str | None, named: str = "The endpoint"
    ) -> str | None:
        """One sentence when a request to ``base_url`` is not allowed, else None; ``named``
        says whose endpoint it is (``The judge spec's endpoint``)."""
        if is_own_api(provider, base_url) or self.listed_at(str(base_url)) is not None:
            return None
        names = ", ".join(e.name for e in self.listed) or "none are listed"
        return (
            f"{named} {base_url} is not one this workbench's operator allows, so no request "
            f"goes to it: use the provider's own API or a listed endpoint ({names})."
        )

    def url_for(self, provider: ProviderName, base_url: str | None) -> str:
        """The URL handed to the SDK for an allowed ``base_url``: the provider's own API named
        explicitly, or the listed endpoint as the operator wrote it."""
        if base_url is None:
            return OWN_BASE_URLS[provider]
        listed = None if is_own_api(provider, base_url) else self.listed_at(base_url)
        return base_url if listed is None else listed.base_url

    def key_for(self, provider: ProviderName, base_url: str | None) -> str | None:
        """The key sent with a request to ``base_url`` (an allowed one): on the provider's own
        API its own key (None when the operator has none), to a listed endpoint the key it
        names, else ``NO_KEY`` (never the environment's)."""
        if is_own_api(provider, base_url):
            return next((self.keys[n] for n in KEY_ENVS[provider] if self.keys.get(n)), None)
        listed = self.listed_at(str(base_url))
        named = listed.key if listed is not None else None
        return (self.keys.get(named) if named else None) or NO_KEY


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
    endpoints: EndpointRules | None = Field(default=None, exclude=True, repr=False)
    """Served: where requests may go and which key goes with them (``open_provider`` refuses
    any other endpoint and sets the key); None: local, the user's choice."""

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
