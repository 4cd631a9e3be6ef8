"""A council run from its estimate to its summary, the same for ``tsq council`` and the Judge
page's Council section.

:func:`prepare_run` estimates the run and says in one sentence why it must not start: a member
at an endpoint the operator does not allow (served), the estimate above a cost cap (or of
unknown cost under one), a key the council needs and lacks. :func:`execute` runs it with a
progress callback, merges the labels with those kept beside them and sums the run up.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
from pydantic import BaseModel, ConfigDict, Field

from analysis.council._config import CouncilConfig, api_keys, endpoint_refusal, missing_keys
from analysis.council._cost import CouncilEstimate, council_estimate
from analysis.council._run import CouncilLabel, CouncilStats, council_rows_frame, run_council
from analysis.judge import (
    CONFIRM_ABOVE_USD,
    LOCAL,
    RunEntry,
    SpendingCaps,
    allowance_refusal,
    close_run,
    open_run,
)
from analysis.llm import EndpointRules, LLMError, cost_refusal, dollars
from analysis.models import Session
from analysis.study import merged_labels


class CouncilOptions(BaseModel):
    """How a council run is done, declared once for ``tsq council`` (its options of the same
    names) and the Judge page; what the council asks is its config's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_cost: float | None = Field(default=None, ge=0)
    """Refuse to start when the estimate (USD) is above this, or unknown; None: no cap."""
    timeout: float | None = Field(default=None, gt=0)
    """Seconds one model request may take; None: the config's."""
    concurrency: int | None = Field(default=None, ge=1, le=64)
    """Requests in flight per model; None: the config's."""
    cache_dir: Path | None = None
    """The answer cache's folder; None: the user's cache folder."""


@dataclass(frozen=True)
class CouncilPlan:
    """A council run before it starts: its estimate, and each reason it must not start."""

    config: CouncilConfig
    """The config with the run's options over it."""
    sessions: list[Session]
    estimate: CouncilEstimate
    options: CouncilOptions
    refusal: str | None = None
    """Served: a member at an endpoint the operator does not allow (the dry run shows the
    estimate regardless)."""
    cost_refusal: str | None = None
    """The estimate above ``max_cost``, or unknown under it (``analysis.llm.cost_refusal``)."""
    key_refusal: str | None = None
    """The key variables the council needs and lacks."""
    confirm: str | None = None
    """Above ``CONFIRM_ABOVE_USD`` and within any cap: "Spend about $X on N requests"."""
    keys: dict[str, str] = field(default_factory=dict, repr=False)
    endpoints: EndpointRules | None = field(default=None, repr=False)
    who: str = LOCAL
    """Who runs it, as the spending log writes it down."""
    caps: SpendingCaps | None = None
    """Served: what a run and a person's day may spend; None: no cap (locally)."""
    audit: Path | None = None
    """The spending log; None: the data folder's."""
    spending_refusal: str | None = None
    """Served: the estimate above a cap or above what is left of ``who``'s allowance today."""

    @property
    def run_refusal(self) -> str | None:
        """Why the run must not start; None when it may."""
        return self.refusal or self.cost_refusal or self.spending_refusal or self.key_refusal

    @property
    def members(self) -> str:
        """The council's models as the spending log names it: the stage-1 judges, then the
        chairman."""
        judges = ", ".join(member.model for member in self.config.stage1)
        return f"council of {judges}; chairman {self.config.chairman.model}"


@dataclass(frozen=True)
class CouncilOutcome:
    """What a council run gave, or the one sentence saying why it stopped (``error``)."""

    rows: list[CouncilLabel] = field(default_factory=list)
    labels: pl.DataFrame | None = None
    """This run's labels (``council_rows_frame``) over the kept ones."""
    stats: CouncilStats | None = None
    summary: list[str] = field(default_factory=list)
    """What was asked and what it cost, then how many labels of how many sessions."""
    failures: list[str] = field(default_factory=list)
    """One sentence per answer that could not be had: its item, rater and reason."""
    error: str | None = None


def prepare_run(
    sessions: Sequence[Session],
    config: CouncilConfig,
    options: CouncilOptions | None = None,
    *,
    keys: Mapping[str, str] | None = None,
    endpoints: EndpointRules | None = None,
    who: str = LOCAL,
    caps: SpendingCaps | None = None,
    audit: Path | None = None,
) -> CouncilPlan:
    """Estimate the council's run on ``sessions`` and say what stops it; no request is made.

    ``keys`` maps key variables to keys (default: the environment); served, ``endpoints`` says
    where requests may go and which key goes with them. ``who`` runs it, written in the
    spending log (``audit``, default the data folder's); served, ``caps`` hold the run and
    ``who``'s day."""
    options = options or CouncilOptions()
    given = {"timeout": options.timeout, "concurrency": options.concurrency}
    config = config.model_copy(update={k: v for k, v in given.items() if v is not None})
    env = os.environ if keys is None else keys
    estimate = council_estimate(sessions, config)
    missing = missing_keys(config, env)
    cost = cost_refusal(estimate.cost_usd, options.max_cost)
    spending = allowance_refusal(who, estimate.cost_usd, caps, audit)
    return CouncilPlan(
        config=config,
        sessions=list(sessions),
        estimate=estimate,
        options=options,
        refusal=endpoint_refusal(config, endpoints),
        cost_refusal=cost,
        key_refusal=(
            f"The council needs {', '.join(missing)}: set {'it' if len(missing) == 1 else 'them'}"
            " in the environment (or the app's .streamlit/secrets.toml) to run it."
            if missing
            else None
        ),
        confirm=_confirmation(estimate) if cost is None and spending is None else None,
        keys=api_keys(env),
        endpoints=endpoints,
        who=who,
        caps=caps,
        audit=audit,
        spending_refusal=spending,
    )


def execute(
    plan: CouncilPlan, on_item: Callable[[], None] | None = None, kept: pl.DataFrame | None = None
) -> CouncilOutcome:
    """Run ``plan`` (``on_item`` called as each session is labelled), its labels over ``kept``
    (earlier labels: of the same item, rater and field, the newer wins); a run that must not
    start, or that a model's API stops, is ``error``, one sentence. Every run is written in
    the spending log, as a judge run is (``analysis.judge.execute``)."""
    entry = RunEntry(
        who=plan.who,
        kind="council",
        judge_id=plan.members,
        steps=len(plan.sessions),
        estimated_usd=plan.estimate.cost_usd,
    )
    run, refusal = open_run(entry, plan.caps, plan.audit, plan.run_refusal)
    if refusal is not None:
        return CouncilOutcome(labels=kept, error=refusal)
    stats = CouncilStats(sessions=len(plan.sessions))
    try:
        rows, stats = asyncio.run(
            run_council(
                plan.sessions,
                plan.config,
                plan.options.cache_dir,
                on_item,
                plan.keys,
                plan.endpoints,
                stats=stats,
            )
        )
    except LLMError as error:
        close_run(run, plan.audit, "failed", stats.cost_usd, str(error))
        return CouncilOutcome(labels=kept, error=str(error))
    except BaseException:  # interrupted (Ctrl-C, the page stopped): what it used is kept
        close_run(run, plan.audit, "stopped", stats.cost_usd)
        raise
    close_run(run, plan.audit, "done", stats.cost_usd)
    new = council_rows_frame(rows)
    n = len(plan.sessions)
    return CouncilOutcome(
        rows=rows,
        labels=new if kept is None or kept.is_empty() else merged_labels(kept, new),
        stats=stats,
        summary=[
            f"{stats.answers_asked} answers asked, {stats.cache_hits} from the cache, "
            f"{stats.http_requests} HTTP requests; tokens: {stats.input_tokens:,} input, "
            f"{stats.output_tokens:,} output ({dollars(stats.cost_usd)})",
            f"{len(rows)} labels of {n} session{'' if n == 1 else 's'}",
        ],
        failures=[
            f"{item} {rater}: no labels ({reason})." for item, rater, reason in stats.failures
        ],
    )


def _confirmation(estimate: CouncilEstimate) -> str | None:
    if estimate.cost_usd is None or estimate.cost_usd <= CONFIRM_ABOVE_USD:
        return None
    return f"Spend about {dollars(estimate.cost_usd)} on {estimate.requests:,} requests"
