"""What a council run would cost, before it starts (no request, no SDK)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel

from analysis.council._config import CouncilConfig
from analysis.council._prompt import FieldAnswer, chairman_request, stage1_request
from analysis.council._render import render_session_for_council
from analysis.llm import RunStats, StructuredRequest, dollars
from analysis.models import Session

CHARS_PER_TOKEN = 4
OUTPUT_TOKENS_PER_FIELD = 150
"""A label's reasoning and value, for estimates before a run."""


class MemberEstimate(BaseModel):
    model: str
    role: str
    """``stage-1`` or ``chairman``."""
    requests: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


class CouncilEstimate(BaseModel):
    """Requests, tokens and dollars of a council run (before answers cached by earlier runs)."""

    sessions: int
    fields: int
    stage1: int
    votes: int
    requests: int
    input_tokens: int
    output_tokens: int
    members: list[MemberEstimate]
    cost_usd: float | None
    """None when a model has no known price."""

    @property
    def unpriced(self) -> list[str]:
        return list(dict.fromkeys(m.model for m in self.members if m.cost_usd is None))

    def in_words(self) -> str:
        """The estimate as the app and ``--dry-run`` tell it, naming what it assumes."""
        unknown = (
            f" (no price for {', '.join(self.unpriced)}; the known part is "
            f"{dollars(sum(m.cost_usd for m in self.members if m.cost_usd is not None))})"
            if self.unpriced
            else ""
        )
        return (
            f"{self.sessions} session{'' if self.sessions == 1 else 's'} x ({self.stage1} "
            f"stage-1 judges x {self.votes} vote{'' if self.votes == 1 else 's'} + the chairman) "
            f"= {self.requests} requests for {self.fields} fields; estimated "
            f"{self.input_tokens:,} input and {self.output_tokens:,} output tokens; cost "
            f"{dollars(self.cost_usd)}{unknown}. Assumes about {CHARS_PER_TOKEN} characters a "
            f"token and {OUTPUT_TOKENS_PER_FIELD} output tokens a field; answers already cached "
            "are not asked again."
        )


def _tokens(request: StructuredRequest) -> int:
    prompt = request.prompt if isinstance(request.prompt, str) else ""
    return (len(request.system) + len(prompt) + len(json.dumps(request.tool))) // CHARS_PER_TOKEN


def council_estimate(sessions: Sequence[Session], config: CouncilConfig) -> CouncilEstimate:
    """What the council would ask of each model for ``sessions``; the chairman's input counts
    the stage-1 labels it reads as much as their output."""
    fields = config.fields
    output = OUTPUT_TOKENS_PER_FIELD * len(fields)
    placeholder = FieldAnswer(value="", reasoning="x" * OUTPUT_TOKENS_PER_FIELD * CHARS_PER_TOKEN)
    stage1_in = chair_in = 0
    for session in sessions:
        text = render_session_for_council(session, config.budget_chars)
        stage1_in += _tokens(stage1_request(text, fields))
        labels = [{spec.name: placeholder for spec in fields}] * len(config.stage1)
        chair_in += _tokens(chairman_request(text, fields, labels))
    n = len(sessions)
    members = []
    for member in config.stage1:
        requests = n * config.votes
        members.append(
            _member(member.model, "stage-1", requests, stage1_in * config.votes, requests * output)
        )
    members.append(_member(config.chairman.model, "chairman", n, chair_in, n * output))
    costs = [m.cost_usd for m in members]
    return CouncilEstimate(
        sessions=n,
        fields=len(fields),
        stage1=len(config.stage1),
        votes=config.votes,
        requests=sum(m.requests for m in members),
        input_tokens=sum(m.input_tokens for m in members),
        output_tokens=sum(m.output_tokens for m in members),
        members=members,
        cost_usd=None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
    )


def _member(model: str, role: str, requests: int, inputs: int, outputs: int) -> MemberEstimate:
    stats = RunStats(model=model, input_tokens=inputs, output_tokens=outputs)
    return MemberEstimate(
        model=model,
        role=role,
        requests=requests,
        input_tokens=inputs,
        output_tokens=outputs,
        cost_usd=stats.cost_usd,
    )
