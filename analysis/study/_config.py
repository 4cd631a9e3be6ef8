"""The configuration that gives labels meaning: fields, the council, rules and causes.

Read from a study's ``labels.toml`` (or ``labels.json``) by :func:`read_config`; without one,
:func:`default_config` is the council-vs-human study's.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from analysis._jsonio import first_error
from analysis.study._rules import (
    RULE_KINDS,
    HigherScore,
    HumanUnlessRedundant,
    NoRule,
    PreferSide,
    Rule,
)

BUILTIN_CAUSES = ("severity_shift", "definition_mismatch", "schema_gap", "human_error")


class LabelError(Exception):
    """A labels file or config that cannot be used at all; the message is one line."""


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FieldSpec(_Config):
    """One labelled field: its vocabulary, whether it is ordered, and schema mappings.

    ``schema_mapping`` maps a value to the coarser value one side uses for it (humans who
    collapse ``slightly_over`` into ``wasteful``: ``{"slightly_over": "wasteful"}``); two
    labels equal under the mapping disagree only by a schema gap.
    """

    name: str
    kind: Literal["ordinal", "nominal"] = "nominal"
    values: list[str] = Field(default_factory=list)
    schema_mapping: dict[str, str] = Field(default_factory=dict)
    description: str = ""

    @model_validator(mode="after")
    def _check(self) -> FieldSpec:
        if self.kind == "ordinal" and len(self.values) < 2:
            raise ValueError(f"ordinal field {self.name!r} needs its values in order")
        unknown = set(self.schema_mapping) | set(self.schema_mapping.values())
        unknown -= set(self.values)
        if self.values and unknown:
            raise ValueError(f"schema_mapping of {self.name!r} names unknown {sorted(unknown)}")
        return self

    def mapped(self, value: str) -> str:
        return self.schema_mapping.get(value, value)

    def rank(self, value: str) -> int | None:
        """Position in the ordinal scale, None for nominal fields and unknown values."""
        if self.kind != "ordinal" or value not in self.values:
            return None
        return self.values.index(value)


class CouncilSpec(_Config):
    """Stage-1 judges (one rater each) and the chairman whose label is the council's.

    Left empty, stage-1 judges are the raters of kind ``llm`` and the chairman the rater of
    kind ``council``.
    """

    stage1: list[str] = Field(default_factory=list)
    chairman: str | None = None


class LabelConfig(_Config):
    """Fields, council and reconciliation rules; read from TOML or JSON by :func:`read_config`."""

    fields: list[FieldSpec]
    council: CouncilSpec = Field(default_factory=CouncilSpec)
    rules: dict[str, Rule] = Field(default_factory=dict)
    causes: list[str] = Field(default_factory=list, description="user-defined causes")

    @model_validator(mode="after")
    def _check(self) -> LabelConfig:
        names = [spec.name for spec in self.fields]
        if len(set(names)) != len(names):
            raise ValueError("a field is declared twice")
        for name, rule in self.rules.items():
            rule.check(name, self.field(name))
        return self

    def field(self, name: str) -> FieldSpec | None:
        return next((spec for spec in self.fields if spec.name == name), None)

    def rule(self, name: str) -> Rule:
        return self.rules.get(name, NoRule())

    @property
    def all_causes(self) -> list[str]:
        return [*BUILTIN_CAUSES, *(c for c in self.causes if c not in BUILTIN_CAUSES)]


def default_config() -> LabelConfig:
    """The four fields of the council-vs-human study and its reconciliation rules."""
    return LabelConfig(
        fields=[
            FieldSpec(
                name="task_completed",
                kind="ordinal",
                values=["not_completed", "partially_completed", "completed"],
                description="Did the agent finish the task the user asked for?",
            ),
            FieldSpec(
                name="efficiency_bucket",
                kind="ordinal",
                values=["efficient", "slightly_over", "wasteful"],
                schema_mapping={"slightly_over": "wasteful"},
                description="Tool calls spent against what the task needed.",
            ),
            FieldSpec(
                name="tool_policy",
                values=["appropriate_use", "unnecessary_use", "insufficient_use"],
                description="Did the agent use tools appropriately for the request?",
            ),
            FieldSpec(
                name="looped",
                values=["no", "yes"],
                description="Did the agent repeat the same steps without progress?",
            ),
        ],
        rules={
            "task_completed": HigherScore(),
            "tool_policy": HumanUnlessRedundant(),
            "efficiency_bucket": PreferSide(side="council"),
            "looped": NoRule(),
        },
    )


TOOL_SELECTION = FieldSpec(
    name="tool_selection",
    values=["correct", "incorrect"],
    description="Was the tool chosen at this step (or turn) the right one? The TSQ judge's "
    "ChainPoll majority, or a person's label from the Turn page.",
)
"""The field the TSQ judge and people label steps on; :func:`with_tool_selection` adds it."""


def with_tool_selection(config: LabelConfig) -> LabelConfig:
    """``config`` with the ``tool_selection`` field declared (kept as is if it already is)."""
    if config.field(TOOL_SELECTION.name) is not None:
        return config
    return config.model_copy(update={"fields": [*config.fields, TOOL_SELECTION]})


def read_config(path: str | Path) -> LabelConfig:
    """A :class:`LabelConfig` from a TOML or JSON file; :class:`LabelError` names what is wrong."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        data = json.loads(raw) if path.suffix == ".json" else tomllib.loads(raw.decode())
    except OSError as error:
        raise LabelError(f"{path}: cannot read ({error.strerror})") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise LabelError(f"{path}: not valid {path.suffix.lstrip('.').upper()} ({error})") from None
    try:
        return LabelConfig.model_validate(data)
    except ValidationError as error:
        raise LabelError(f"{path}: {_config_error(error)}") from None


def _config_error(error: ValidationError) -> str:
    """The first problem in a config, with a rule of unknown (or no) kind said plainly."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    known = ", ".join(RULE_KINDS)
    if first["type"] == "union_tag_invalid":
        return f"{where}: unknown rule kind {first['ctx']['tag']!r} (known kinds: {known})"
    if first["type"] == "union_tag_not_found":
        return f"{where}: a rule needs a kind (one of {known})"
    return first_error(error)
