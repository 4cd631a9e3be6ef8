"""The judge's rubric, its verdict tool, and the request and answer of one vote.

Kept apart from the client (which needs the Anthropic SDK, slow to import) so that estimates
and dry runs cost nothing. The request is provider-neutral: ``analysis.llm`` sends it.
"""

from __future__ import annotations

from typing import Any

from analysis.llm._request import StructuredRequest, TextPart, ToolSpec
from analysis.models import Vote
from analysis.render._judge_input import JudgeInput

RUBRIC_VERSION = "tsq-rubric/2"
RUBRIC = """You grade one decision of a coding agent: did it choose the right tool?

You are given the tools that were available (with what each is for), the prior context (a
summary of earlier turns), the user's current request, what the agent already did in this
turn (earlier steps, with their calls and shortened results), and the model output being
judged, in which each chosen tool call is written like Name(arg="value"). Judge that output
only: the earlier steps are there to tell you what the agent knew when it chose.

Reason step by step before you decide:
1. Did the request need a tool at all?
2. Can the chosen tool do what was asked? (Read cannot delete a file; a web search cannot see
   this machine or this repository.)
3. Was a clearly better tool on the menu? (A question about local files or repository state
   answered with a web search is a wrong choice.)
4. Were the arguments right for the request?

Then call record_verdict: "correct" when the tool choice was appropriate, "incorrect" when it
was not, or when tools were needed and none was called."""

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


def vote_request(unit: JudgeInput) -> StructuredRequest:
    """The request of one vote (the same in direct and batch mode).

    The verdict tool, the rubric and the menu come first and end in a cache breakpoint: every
    step of a session under one condition sends that prefix unchanged.
    """
    return StructuredRequest(
        system=RUBRIC,
        prompt=(TextPart(unit.menu_text(), cache=True), TextPart(unit.unit_text())),
        tool=VERDICT_TOOL,
    )
