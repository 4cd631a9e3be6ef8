"""Running the council: per session, the stage-1 judges in parallel, then the chairman.

Every model is called through ``analysis.llm`` (key, model resolution, retries, re-asking an
answer with a missing field or a value outside the vocabulary, the answer cache, tokens). The
chairman's request holds the stage-1 answers, which come from the cache on a re-run: a
re-run, or a resumed one, asks nothing twice.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Literal

import polars as pl
from pydantic import BaseModel, Field

from analysis.council._config import CouncilConfig, CouncilMember, key_env
from analysis.council._prompt import (
    FieldAnswer,
    chairman_request,
    parse_labels,
    stage1_request,
)
from analysis.council._render import render_session_for_council
from analysis.llm import (
    EndpointRules,
    LLMClient,
    LLMConfig,
    LLMError,
    RunStats,
    default_cache_dir,
    open_client,
)
from analysis.models import Session
from analysis.study import FieldSpec, redundant_calls

COUNCIL_CACHE = "council-answers.sqlite3"
"""The answer cache's file in the cache folder."""
LABEL_COLUMNS = ("item_id", "rater", "rater_kind", "field", "value", "reasoning", "redundant_calls")


class CouncilLabel(BaseModel):
    """One label in the labels format ``tsq agreement`` reads, with its reasoning."""

    item_id: str
    rater: str
    rater_kind: Literal["llm", "council"]
    field: str
    value: str
    reasoning: str
    redundant_calls: int


class CouncilStats(BaseModel):
    """What a council run did and cost: each model's counts, and what it could not label."""

    members: list[RunStats] = Field(default_factory=list)
    failures: list[tuple[str, str, str]] = Field(default_factory=list)
    """(item_id, rater, reason) of each answer that could not be had."""
    sessions: int = 0

    @property
    def http_requests(self) -> int:
        return sum(s.http_requests for s in self.members)

    @property
    def cache_hits(self) -> int:
        return sum(s.cache_hits for s in self.members)

    @property
    def answers_asked(self) -> int:
        return sum(s.votes_asked for s in self.members)

    @property
    def input_tokens(self) -> int:
        return sum(
            s.input_tokens + s.cache_write_tokens + s.cache_read_tokens for s in self.members
        )

    @property
    def output_tokens(self) -> int:
        return sum(s.output_tokens for s in self.members)

    @property
    def cost_usd(self) -> float | None:
        costs = [s.cost_usd for s in self.members]
        return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)


def _llm_config(
    member: CouncilMember,
    config: CouncilConfig,
    cache_dir: Path | None,
    api_keys: Mapping[str, str],
    endpoints: EndpointRules | None,
) -> LLMConfig:
    return LLMConfig(
        model=member.model,
        base_url=member.base_url,
        api_key=api_keys.get(key_env(member.model)) or None,
        timeout=config.timeout,
        concurrency=config.concurrency,
        max_retries=config.max_retries,
        attempts=config.attempts,
        max_tokens=config.max_tokens,
        cache_dir=cache_dir or default_cache_dir(),
        cache_file=COUNCIL_CACHE,
        endpoints=endpoints,
    )


def _majority(
    answers: Sequence[dict[str, FieldAnswer]], fields: Sequence[FieldSpec]
) -> dict[str, FieldAnswer]:
    """Per field, the value most answers gave (a tie: the one answered first), with the
    reasoning of the first answer that gave it."""
    chosen = {}
    for spec in fields:
        values = [answer[spec.name].value for answer in answers]
        top = Counter(values).most_common(1)[0][0]
        chosen[spec.name] = next(a[spec.name] for a in answers if a[spec.name].value == top)
    return chosen


def _raters(members: Sequence[CouncilMember], clients: Sequence[LLMClient]) -> list[str]:
    raters = [member.name or client.model for member, client in zip(members, clients, strict=True)]
    repeated = [name for name, n in Counter(raters).items() if n > 1]
    if repeated:
        raise LLMError(
            f"Two members of the council would both be rater {repeated[0]!r}: give one a name."
        )
    return raters


async def run_council(
    sessions: Sequence[Session],
    config: CouncilConfig,
    cache_dir: Path | None = None,
    on_item: Callable[[], None] | None = None,
    api_keys: Mapping[str, str] | None = None,
    endpoints: EndpointRules | None = None,
    stats: CouncilStats | None = None,
) -> tuple[list[CouncilLabel], CouncilStats]:
    """Label every session: each stage-1 judge labels every field with its reasoning (asked
    ``votes`` times, its label their majority), then the chairman gives the council's label.

    ``cache_dir`` holds valid answers (default: the user's cache folder); ``api_keys`` maps a
    key variable (``ANTHROPIC_API_KEY``) to a key, else the environment's is used; served,
    ``endpoints`` says where requests may go and which key goes with them. Raises
    LLMError when the council cannot start (a key, a model); an answer that cannot be had is
    a failure in the stats, and its labels are left out. ``stats``, when given, counts each
    model's requests and tokens as they are made (a run stopped halfway still says them).
    """
    keys = api_keys or {}
    fields = config.fields
    stats = stats if stats is not None else CouncilStats(sessions=len(sessions))
    async with AsyncExitStack() as stack:
        clients = []
        for member in config.members:
            member_stats = RunStats(model=member.model)
            stats.members.append(member_stats)
            client = open_client(
                _llm_config(member, config, cache_dir, keys, endpoints), member_stats
            )
            clients.append(await stack.enter_async_context(client))
        await asyncio.gather(*(client.resolve_model() for client in clients))
        raters = _raters(config.members, clients)
        *judges, chairman = clients
        # a model named twice among the judges answers as a separate judge each time
        offsets = [
            config.votes * [m.model for m in config.stage1[:index]].count(member.model)
            for index, member in enumerate(config.stage1)
        ]

        def parse(data: dict[str, Any]) -> dict[str, FieldAnswer] | None:
            return parse_labels(data, fields)

        async def judge(index: int, session_text: str, item: str) -> dict[str, FieldAnswer] | None:
            request = stage1_request(session_text, fields)
            answers = await asyncio.gather(
                *(
                    judges[index].ask_structured(
                        request, parse, sample=offsets[index] + vote, what="labels"
                    )
                    for vote in range(config.votes)
                )
            )
            valid = [answer.value for answer in answers if answer.value is not None]
            if not valid:
                reason = next((a.failure for a in answers if a.failure), None) or "no answer"
                stats.failures.append((item, raters[index], reason))
                return None
            return _majority(valid, fields)

        async def one(session: Session) -> list[CouncilLabel]:
            item = session.session_id
            text = render_session_for_council(session, config.budget_chars)
            stage1 = await asyncio.gather(*(judge(i, text, item) for i in range(len(judges))))
            council: dict[str, FieldAnswer] | None = None
            if any(labels is not None for labels in stage1):
                answer = await chairman.ask_structured(
                    chairman_request(text, fields, stage1), parse, what="labels"
                )
                council = answer.value
                if council is None:
                    stats.failures.append((item, raters[-1], answer.failure or "no answer"))
            else:
                stats.failures.append((item, raters[-1], "no stage-1 judge answered"))
            if on_item is not None:
                on_item()
            repeats = redundant_calls(session)
            rows = []
            for labels, rater, kind in [
                *((labels, rater, "llm") for labels, rater in zip(stage1, raters, strict=False)),
                (council, raters[-1], "council"),
            ]:
                if labels is None:
                    continue
                rows += [
                    CouncilLabel(
                        item_id=item,
                        rater=rater,
                        rater_kind="council" if kind == "council" else "llm",
                        field=spec.name,
                        value=labels[spec.name].value,
                        reasoning=labels[spec.name].reasoning,
                        redundant_calls=repeats,
                    )
                    for spec in fields
                ]
            return rows

        per_session = await asyncio.gather(*(one(session) for session in sessions))
    return [row for rows in per_session for row in rows], stats


def council_rows_frame(rows: Sequence[CouncilLabel]) -> pl.DataFrame:
    """The labels in long form (``item_id, rater, rater_kind, field, value``), with each
    label's ``reasoning`` and the item's ``redundant_calls``."""
    schema = dict.fromkeys(LABEL_COLUMNS, pl.String) | {"redundant_calls": pl.Int64}
    return pl.DataFrame([row.model_dump() for row in rows], schema=schema)


def write_council_labels(rows: Sequence[CouncilLabel], path: str | Path) -> None:
    """Write the labels as CSV or JSON Lines (by the suffix); raises OSError or ValueError."""
    path = Path(path)
    frame = council_rows_frame(rows)
    if path.suffix == ".csv":
        frame.write_csv(path)
    elif path.suffix == ".jsonl":
        frame.write_ndjson(path)
    else:
        raise ValueError(f"{path}: labels are written as .csv or .jsonl")
