"""The judge's rubric, its verdict tool, and the request and answer of one vote.

Kept apart from the client (which needs the Anthropic SDK, slow to import) so that estimates
and dry runs cost nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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

VERDICT_TOOL: dict[str, Any] = {
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


def parse_vote(content: Sequence[Any]) -> Vote | None:
    """The vote in a response's content blocks, or None when it is malformed."""
    for block in content:
        if (
            getattr(block, "type", None) == "tool_use"
            and getattr(block, "name", None) == "record_verdict"
        ):
            data = getattr(block, "input", None)
            if (
                isinstance(data, dict)
                and data.get("verdict") in ("correct", "incorrect")
                and isinstance(data.get("reasoning"), str)
            ):
                return Vote(verdict=data["verdict"], reasoning=data["reasoning"])
    return None


def vote_request(model: str, unit: JudgeInput, max_tokens: int) -> dict[str, Any]:
    """The Messages API parameters of one vote (the same in direct and batch mode).

    The verdict tool, the rubric and the menu come first and end in a cache breakpoint: every
    step of a session under one condition sends that prefix unchanged.
    """
    return {
        "model": model,
        "max_tokens": max_tokens,
        "system": RUBRIC,
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": unit.menu_text(),
                        "cache_control": {"type": "ephemeral"},
                    },
                    {"type": "text", "text": unit.unit_text()},
                ],
            }
        ],
        "tools": [VERDICT_TOOL],
        "tool_choice": {"type": "tool", "name": VERDICT_TOOL["name"]},
    }
