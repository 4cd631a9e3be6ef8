"""The AI adjudicator: applies the reconciliation rules to the disagreements no one decided.

It uses the judge's client rules (API key, model resolution, retries honouring retry-after,
re-asking a malformed answer) and saves each decision to the store as soon as it is made, so
an interrupted run keeps what it did.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import anthropic
from pydantic import BaseModel

from analysis.judge._chainpoll import JudgeConfig, JudgeError, make_client, resolve_model
from analysis.judge._cost import RunStats
from analysis.models import Session
from analysis.study._labels import (
    FieldSpec,
    HigherScore,
    HumanUnlessRedundant,
    LabelConfig,
    PreferSide,
    Rule,
)
from analysis.study._reconcile import AdjudicationStore, Decision, Study, open_disagreements

SYSTEM = """You adjudicate a disagreement between a human rater and an LLM council that labelled
the same coding-agent session on one field.

Each field has a reconciliation rule written by the people who adjudicated the first cases.
When the rule makes a proposal, follow it unless the evidence clearly shows the rule's premise
is false; when it makes none, decide from the evidence. Name the cause of the disagreement:
severity_shift (same direction, different degree), definition_mismatch (the rubric read
differently), schema_gap (one side's vocabulary is finer), human_error (the human label is
wrong on a careful re-read), or another listed cause. Then call record_decision."""


def decision_tool(causes: Sequence[str]) -> dict[str, Any]:
    return {
        "name": "record_decision",
        "description": "Record which side's label stands, the cause, and a one-line note.",
        "input_schema": {
            "type": "object",
            "properties": {
                "side": {"type": "string", "enum": ["human", "council"]},
                "cause": {"type": "string", "enum": list(causes)},
                "note": {"type": "string", "description": "One line: why."},
            },
            "required": ["side", "cause", "note"],
        },
    }


def describe_rule(rule: Rule) -> str:
    if isinstance(rule, HigherScore):
        return "take the label higher on the scale"
    if isinstance(rule, PreferSide):
        return f"defer to the {rule.side}"
    if isinstance(rule, HumanUnlessRedundant):
        return (
            f"defer to the human's {rule.value} unless {rule.min_redundant} or more clearly "
            "redundant tool calls (same tool, same arguments, repeated) are visible"
        )
    return "none: decide from the evidence"


def _session_lines(session: Session, limit: int = 40) -> list[str]:
    lines = []
    for turn in session.turns:
        lines.append(f"user: {turn.ask[:200]}")
        lines += [f"  call {call.name}({call.input})"[:240] for call in turn.tool_calls()]
    return lines[:limit]


def adjudication_prompt(
    row: dict[str, Any], spec: FieldSpec, config: LabelConfig, session: Session | None
) -> str:
    """What the adjudicator sees for one disagreement (row of ``reconcile``'s frame)."""
    scale = " < ".join(spec.values) if spec.kind == "ordinal" else ", ".join(spec.values)
    proposal = row["proposal_side"] or "nothing"
    parts = [
        f"## Field: {spec.name} ({spec.kind}: {scale})",
        spec.description,
        *(
            [f"Schema mapping (equal for the coarser side): {spec.schema_mapping}"]
            if spec.schema_mapping
            else []
        ),
        f"## Session {row['item_id']}",
        f"Human label: {row['human']}",
        f"Council label: {row['council']}",
        f"Suggested cause: {row['suggested_cause'] or 'none'}",
        f"Redundant calls: {_redundant(row)}",
        f"## Rule for {spec.name}: {describe_rule(config.rule(spec.name))}",
        f"Rule proposes: {proposal}"
        + (f" ({row['proposal_reason']})" if row["proposal_reason"] else ""),
    ]
    if session is not None:
        parts += ["## Transcript (asks and tool calls)", *_session_lines(session)]
    return "\n".join(part for part in parts if part)


def _redundant(row: dict[str, Any]) -> str:
    if row["redundant_calls"] is None:
        return "unknown"
    return f"{row['redundant_calls']} (from the {row['redundant_source']})"


def parse_decision(content: Sequence[Any], causes: Sequence[str]) -> dict[str, str] | None:
    for block in content:
        if (
            getattr(block, "type", None) == "tool_use"
            and getattr(block, "name", None) == "record_decision"
        ):
            data = getattr(block, "input", None)
            if (
                isinstance(data, dict)
                and data.get("side") in ("human", "council")
                and data.get("cause") in causes
                and isinstance(data.get("note"), str)
            ):
                return {"side": data["side"], "cause": data["cause"], "note": data["note"]}
    return None


class AdjudicationRun(BaseModel):
    """What a run did: decisions saved, disagreements left open (with the reason), cost."""

    decided: list[Decision]
    failed: list[tuple[str, str, str]]  # item_id, field, reason
    stats: RunStats


class _Adjudicator:
    def __init__(
        self,
        config: JudgeConfig,
        client: anthropic.AsyncAnthropic,
        stats: RunStats,
        causes: list[str],
    ) -> None:
        self.config = config
        self.client = client
        self.stats = stats
        self.causes = causes
        self.tool = decision_tool(causes)
        self._limit = asyncio.Semaphore(config.concurrency)

    def request(self, prompt: str) -> dict[str, Any]:
        return {
            "model": self.config.model,
            "max_tokens": self.config.max_tokens,
            "system": SYSTEM,
            "messages": [{"role": "user", "content": prompt}],
            "tools": [self.tool],
            "tool_choice": {"type": "tool", "name": self.tool["name"]},
        }

    async def ask(self, prompt: str) -> tuple[dict[str, str] | None, str | None]:
        try:
            for _ in range(self.config.attempts_per_vote):
                async with self._limit:
                    self.stats.votes_asked += 1
                    response = await self.client.messages.create(**self.request(prompt))
                self.stats.add_usage(response.usage)
                parsed = parse_decision(response.content, self.causes)
                if parsed is not None:
                    return parsed, None
        except anthropic.APIStatusError as error:
            return None, f"the API answered HTTP {error.status_code} after retries"
        except (anthropic.APIConnectionError, anthropic.APITimeoutError):
            return None, "the API could not be reached or timed out after retries"
        return None, f"no valid decision in {self.config.attempts_per_vote} attempts"


async def adjudicate_open(
    study: Study,
    store: AdjudicationStore,
    config: JudgeConfig,
    limit: int | None = None,
    on_item: Callable[[], None] | None = None,
) -> AdjudicationRun:
    """Ask the AI adjudicator about every open disagreement (at most ``limit``), saving each."""
    stats = RunStats(model=config.model)
    client = make_client(config, stats)
    try:
        model = await resolve_model(client, config.model)
    except JudgeError:
        await client.close()
        raise
    stats.model = model
    config = config.model_copy(update={"model": model})
    pending = open_disagreements(study, store)
    rows = pending.head(limit).to_dicts() if limit is not None else pending.to_dicts()
    adjudicator = _Adjudicator(config, client, stats, study.config.all_causes)

    async def one(row: dict[str, Any]) -> Decision | tuple[str, str, str]:
        spec = study.labels.spec(row["field"])
        prompt = adjudication_prompt(row, spec, study.config, study.sessions.get(row["item_id"]))
        parsed, reason = await adjudicator.ask(prompt)
        if on_item is not None:
            on_item()
        if parsed is None:
            return (row["item_id"], row["field"], reason or "no decision")
        decision = Decision(
            item_id=row["item_id"],
            field=row["field"],
            adjudicator=model,
            adjudicator_kind="ai",
            side=parsed["side"],  # type: ignore[arg-type]
            value=row[parsed["side"]],
            cause=parsed["cause"],
            note=parsed["note"],
        )
        store.save(decision)
        return decision

    try:
        results = await asyncio.gather(*(one(row) for row in rows))
    finally:
        await client.close()
    return AdjudicationRun(
        decided=[r for r in results if isinstance(r, Decision)],
        failed=[r for r in results if not isinstance(r, Decision)],
        stats=stats,
    )
