"""The council's requests: what a stage-1 judge and the chairman are asked, their tools, and
the parsing of their answers (kept apart from the client, so estimates need no SDK)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from analysis.llm import StructuredRequest, ToolSpec
from analysis.study import FieldSpec

STAGE1_TOOL = "record_labels"
CHAIRMAN_TOOL = "record_council_labels"

STAGE1_SYSTEM = """You are one judge of a council that labels coding-agent sessions for a study
of agent quality. You read a summary of one session: the user's asks, the agent's steps (each
tool call, whether it returned an error, and whether it repeated an earlier identical call),
and how the session ended. The totals at the top are counted from the transcript: trust them.

For every field below, reason about the evidence in the session first, then choose exactly one
value from the field's vocabulary. Then call record_labels with, for each field, your reasoning
and the value."""

CHAIRMAN_SYSTEM = """You chair a council that labels coding-agent sessions for a study of agent
quality. You read a summary of one session (the user's asks, the agent's steps with errors and
repeated identical calls, and how it ended) and the labels the council's judges gave it, each
with the judge's reasoning.

For every field, weigh the judges' reasoning against the session itself: follow the better
argument, not the head count, and correct a judge who misread the session. Then call
record_council_labels with, for each field, your reasoning and the council's value, one value
from the field's vocabulary."""


@dataclass(frozen=True)
class FieldAnswer:
    value: str
    reasoning: str


def labels_tool(name: str, fields: Sequence[FieldSpec], description: str) -> ToolSpec:
    """A tool whose input has, per field, ``{"reasoning": str, "value": one of its values}``."""
    properties: dict[str, Any] = {}
    for spec in fields:
        value: dict[str, Any] = {"type": "string"}
        if spec.values:
            value["enum"] = list(spec.values)
        properties[spec.name] = {
            "type": "object",
            "description": spec.description or spec.name,
            "properties": {
                "reasoning": {"type": "string", "description": "The evidence, step by step."},
                "value": value,
            },
            "required": ["reasoning", "value"],
        }
    return {
        "name": name,
        "description": description,
        "input_schema": {
            "type": "object",
            "properties": properties,
            "required": [spec.name for spec in fields],
        },
    }


def fields_text(fields: Sequence[FieldSpec]) -> str:
    lines = ["## Fields"]
    for spec in fields:
        if spec.kind == "ordinal":
            scale = f"ordinal, from worst to best or least to most: {' < '.join(spec.values)}"
        else:
            scale = f"one of: {', '.join(spec.values)}" if spec.values else "free text"
        lines.append(f"### {spec.name} ({scale})")
        if spec.description:
            lines.append(spec.description)
    return "\n".join(lines)


def stage1_request(session_text: str, fields: Sequence[FieldSpec]) -> StructuredRequest:
    return StructuredRequest(
        system=STAGE1_SYSTEM,
        prompt=f"{fields_text(fields)}\n\n## The session\n{session_text}",
        tool=labels_tool(
            STAGE1_TOOL, fields, "Record a label for every field, each with its reasoning."
        ),
    )


def judge_letter(index: int) -> str:
    return f"Judge {chr(ord('A') + index)}" if index < 26 else f"Judge {index + 1}"


def chairman_request(
    session_text: str,
    fields: Sequence[FieldSpec],
    stage1: Sequence[dict[str, FieldAnswer] | None],
) -> StructuredRequest:
    """The chairman's request: the session, then each field's stage-1 labels with their
    reasoning (judges named by letter, in the config's order; a judge with no answer is said)."""
    lines = ["## The judges' labels"]
    for spec in fields:
        lines.append(f"### {spec.name}")
        for index, answers in enumerate(stage1):
            if answers is None:
                lines.append(f"- {judge_letter(index)}: no answer")
                continue
            answer = answers[spec.name]
            reasoning = " ".join(answer.reasoning.split())
            lines.append(f"- {judge_letter(index)}: {answer.value}. Reasoning: {reasoning}")
    return StructuredRequest(
        system=CHAIRMAN_SYSTEM,
        prompt=f"{fields_text(fields)}\n\n## The session\n{session_text}\n\n" + "\n".join(lines),
        tool=labels_tool(
            CHAIRMAN_TOOL, fields, "Record the council's label for every field, with reasoning."
        ),
    )


def parse_labels(
    data: dict[str, Any], fields: Sequence[FieldSpec]
) -> dict[str, FieldAnswer] | None:
    """Every field's value and reasoning, or None (asked again) when a field is missing or its
    value is not in the field's vocabulary."""
    parsed = {}
    for spec in fields:
        entry = data.get(spec.name)
        if not isinstance(entry, dict):
            return None
        value, reasoning = entry.get("value"), entry.get("reasoning")
        if not isinstance(value, str) or not isinstance(reasoning, str):
            return None
        value = value.strip()
        if not value or (spec.values and value not in spec.values):
            return None
        parsed[spec.name] = FieldAnswer(value=value, reasoning=reasoning.strip())
    return parsed
