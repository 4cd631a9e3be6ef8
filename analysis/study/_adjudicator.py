"""The AI adjudicator: applies the reconciliation rules to the disagreements no one decided.

It calls the model through ``analysis.llm``, as the judge does (API key, model resolution,
retries honouring retry-after, re-asking a malformed answer), with no answer cache: it saves
each decision to the store as soon as it is made, so an interrupted run keeps what it did.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from analysis.llm import LLMConfig, RunStats, StructuredRequest, ToolSpec, open_client
from analysis.models import Session
from analysis.study._config import FieldSpec, LabelConfig
from analysis.study._reconcile import open_disagreements
from analysis.study._store import Decision, LabelStore
from analysis.study._study import Study

SYSTEM = """You adjudicate a disagreement between a human rater and an LLM council that labelled
the same coding-agent session on one field.

Each field has a reconciliation rule written by the people who adjudicated the first cases.
When the rule makes a proposal, follow it unless the evidence clearly shows the rule's premise
is false; when it makes none, decide from the evidence. Name the cause of the disagreement:
severity_shift (same direction, different degree), definition_mismatch (the rubric read
differently), schema_gap (one side's vocabulary is finer), human_error (the human label is
wrong on a careful re-read), or another listed cause. Then call record_decision."""


def decision_tool(causes: Sequence[str]) -> ToolSpec:
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
        f"## Rule for {spec.name}: {config.rule(spec.name).describe()}",
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


def parse_decision(data: dict[str, Any], causes: Sequence[str]) -> dict[str, str] | None:
    """The decision in the tool's input, or None when it is malformed."""
    if (
        data.get("side") in ("human", "council")
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


async def adjudicate_open(
    study: Study,
    store: LabelStore,
    config: LLMConfig,
    limit: int | None = None,
    on_item: Callable[[], None] | None = None,
) -> AdjudicationRun:
    """Ask the AI adjudicator about every open disagreement (at most ``limit``), saving each."""
    stats = RunStats(model=config.model)
    causes = study.config.all_causes
    tool = decision_tool(causes)

    def parse(data: dict[str, Any]) -> dict[str, str] | None:
        return parse_decision(data, causes)

    async with open_client(config, stats) as client:
        model = await client.resolve_model()
        pending = open_disagreements(study, store)
        rows = pending.head(limit).to_dicts() if limit is not None else pending.to_dicts()

        async def one(row: dict[str, Any]) -> Decision | tuple[str, str, str]:
            spec = study.labels.spec(row["field"])
            prompt = adjudication_prompt(
                row, spec, study.config, study.sessions.get(row["item_id"])
            )
            request = StructuredRequest(system=SYSTEM, prompt=prompt, tool=tool)
            answer = await client.ask_structured(request, parse, what="decision")
            if on_item is not None:
                on_item()
            parsed = answer.value
            if parsed is None:
                return (row["item_id"], row["field"], answer.failure or "no decision")
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

        results = await asyncio.gather(*(one(row) for row in rows))
    return AdjudicationRun(
        decided=[r for r in results if isinstance(r, Decision)],
        failed=[r for r in results if not isinstance(r, Decision)],
        stats=stats,
    )
