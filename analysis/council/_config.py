"""What a council is: its stage-1 judges, its chairman and the fields they label (no SDK import).

Read from TOML by :func:`read_council_config`; ``sample_data/council.example.toml`` is the
seed's line-up. A model is named ``provider:model`` (``openai:gpt-4o``); a bare name is
Anthropic's. The name is passed to the model layer as written.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from analysis._jsonio import first_error
from analysis._samples import sample_data_dir
from analysis.ingest import inside_root
from analysis.llm import (
    KEY_ENVS,
    EndpointRules,
    LLMError,
    ProviderName,
    needs_key,
    parse_model_name,
)
from analysis.study import FieldSpec, LabelConfig, LabelError, default_config, read_config

DEFAULT_BUDGET_CHARS = 12_000
"""Characters of a session the council reads (``render_session_for_council``)."""
EXAMPLE_CONFIG = "council.example.toml"


class CouncilError(Exception):
    """A council config that cannot be used; the message is one line."""


class CouncilMember(BaseModel):
    """One model of the council: a stage-1 judge or the chairman."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1)
    """``provider:model`` (``openai:gpt-4o``); a bare name is Anthropic's."""
    base_url: str | None = None
    name: str | None = None
    """The rater in the labels; default: the model id the API answers to."""

    @field_validator("model")
    @classmethod
    def _known_provider(cls, model: str) -> str:
        try:
            parse_model_name(model)
        except LLMError as error:
            raise ValueError(str(error)) from None
        return model

    @property
    def provider(self) -> ProviderName:
        return parse_model_name(self.model)[0]


class CouncilConfig(BaseModel):
    """Stage-1 judges, the chairman, and the fields (default: the seed's four)."""

    model_config = ConfigDict(extra="forbid")

    stage1: list[CouncilMember] = Field(min_length=1)
    chairman: CouncilMember
    votes: int = Field(default=1, ge=1, le=10)
    """Answers asked of each stage-1 judge per session; its label is their majority."""
    labels: Path | None = None
    """A study's ``labels.toml`` (or ``.json``) whose fields the council labels."""
    fields: list[FieldSpec] = Field(default_factory=list)
    """Inline fields; with neither these nor ``labels``, the seed's four."""
    budget_chars: int = Field(default=DEFAULT_BUDGET_CHARS, ge=1000)
    timeout: float = Field(default=60.0, gt=0)
    concurrency: int = Field(default=4, ge=1, le=64)
    max_retries: int = Field(default=5, ge=0, le=20)
    attempts: int = Field(default=3, ge=1, le=10)
    """How often an answer with a missing field or a value outside the vocabulary is re-asked."""
    max_tokens: int = Field(default=2048, ge=256)

    @model_validator(mode="after")
    def _fields(self) -> CouncilConfig:
        if self.labels is not None:
            if self.fields:
                raise ValueError("give the fields inline or in a labels config, not both")
            try:
                self.fields = read_config(self.labels).fields
            except LabelError as error:
                raise ValueError(str(error)) from None
        if not self.fields:
            self.fields = default_config().fields
        LabelConfig(fields=self.fields)  # a field declared twice is an error
        names = [member.name for member in self.stage1 if member.name]
        if len(set(names)) != len(names):
            raise ValueError("two stage-1 judges have the same name")
        return self

    @property
    def members(self) -> list[CouncilMember]:
        return [*self.stage1, self.chairman]


def read_council_config(path: str | Path, root: str | Path | None = None) -> CouncilConfig:
    """A :class:`CouncilConfig` from TOML; ``labels`` is relative to the file.

    With a ``root`` (the app's data root), the file and its ``labels`` config must lie inside
    it. :class:`CouncilError` says in one line what is wrong."""
    path = Path(path)
    if root is not None and not inside_root(path, root):
        raise CouncilError(
            f"{path} is outside the data root this workbench may read, so it is refused."
        )
    try:
        data: dict[str, Any] = tomllib.loads(path.read_bytes().decode())
    except OSError as error:
        raise CouncilError(f"{path}: cannot read ({error.strerror})") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise CouncilError(f"{path}: not valid TOML ({error})") from None
    except RecursionError:
        raise CouncilError(f"{path}: not valid TOML (nested too deeply)") from None
    if isinstance(data.get("labels"), str):
        data["labels"] = str(path.parent / Path(data["labels"]).expanduser())
        if root is not None and not inside_root(data["labels"], root):
            raise CouncilError(
                f"{path}: its labels config {data['labels']} is outside the data root this "
                "workbench may read, so it is refused."
            )
    try:
        return CouncilConfig.model_validate(data)
    except ValidationError as error:
        raise CouncilError(f"{path}: {first_error(error)}") from None


def example_config_path() -> Path:
    """The bundled example: the seed's line-up and its four fields."""
    return sample_data_dir() / EXAMPLE_CONFIG


def key_env(model: str) -> str:
    """The environment variable the key for ``model`` (``provider:model``) comes from."""
    return KEY_ENVS[parse_model_name(model)[0]][0]


def api_keys(env: Mapping[str, str]) -> dict[str, str]:
    """Each provider's key found in ``env``, under its first variable's name (an
    alternative's value when the first is not set)."""
    found = {}
    for names in KEY_ENVS.values():
        key = next((env[name] for name in names if env.get(name)), None)
        if key:
            found[names[0]] = key
    return found


def missing_keys(config: CouncilConfig, env: Mapping[str, str]) -> list[str]:
    """The key variables the council needs that ``env`` does not set, in first-use order (an
    OpenAI-compatible endpoint at a base URL needs none)."""
    needed = dict.fromkeys(
        key_env(member.model)
        for member in config.members
        if needs_key(member.provider, member.base_url)
    )
    found = api_keys(env)
    return [name for name in needed if name not in found]


def endpoint_refusal(config: CouncilConfig, rules: EndpointRules | None) -> str | None:
    """Served (``rules`` given): one sentence naming the first member whose endpoint the
    operator does not allow, before any request; None when every member's is allowed."""
    if rules is None:
        return None
    for member in config.members:
        refusal = rules.refusal(
            member.provider, member.base_url, f"Council member {member.model}'s endpoint"
        )
        if refusal:
            return refusal
    return None
