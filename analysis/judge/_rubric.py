"""The judge's rubric, its verdict tool, and the request and answer of one vote.

Kept apart from the client (which needs the Anthropic SDK, slow to import) so that estimates
and dry runs cost nothing. The request is provider-neutral: ``analysis.llm`` sends it.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from analysis.llm import StructuredRequest, TextPart, ToolSpec
from analysis.models import Vote
from analysis.render import JudgeInput

DEFAULT_SPEC_NAME = "tsq-rubric/3"
RUBRIC = (
    resources.files("analysis").joinpath("data/judges/tsq-rubric-3.md").read_text("utf-8").strip()
)
"""The built-in judge's rubric: the text of its spec's ``rubric_file``."""

VERDICT_TOOL: ToolSpec = {
    "name": "record_verdict",
    "description": "Record the verdict on the turn's tool choice, with the reasoning behind it.",
    "input_schema": {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string", "description": "Step-by-step reasoning."},
            "verdict": {"type": "string", "enum": ["correct", "incorrect"]},
        },
        "required": ["reasoning", "verdict"],
    },
}


def parse_vote(data: dict[str, Any]) -> Vote | None:
    """The vote in the verdict tool's input, or None when it is malformed."""
    if data.get("verdict") in ("correct", "incorrect") and isinstance(data.get("reasoning"), str):
        return Vote(verdict=data["verdict"], reasoning=data["reasoning"])
    return None


def vote_request(unit: JudgeInput, system: str = RUBRIC) -> StructuredRequest:
    """The request of one vote (the same in direct and batch mode); ``system`` is a spec's
    rubric with its examples (:meth:`~analysis.judge.JudgeSpec.system_text`).

    The verdict tool, the rubric and the menu come first and end in a cache breakpoint: every
    step of a session under one condition sends that prefix unchanged.
    """
    return StructuredRequest(
        system=system,
        prompt=(TextPart(unit.menu_text(), cache=True), TextPart(unit.unit_text())),
        tool=VERDICT_TOOL,
    )
