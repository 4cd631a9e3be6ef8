"""A judge run from its plan to its summary, the same for ``tsq judge`` and the Judge page.

:func:`prepare_run` plans the units (through a :class:`UnitSource`: an index, files read
whole, or sessions already loaded), estimates them, and says in one sentence why the run, or
its dry run, must not start: a model name that cannot be used, a request beyond the model's
context, the estimate above a cost cap (or of unknown cost under one), a missing API key.
:func:`execute` runs what was planned with a progress callback, merges the judgments with
those kept beside them and sums the run up. A caller parses its options, draws or prints what
these return, and adds nothing else.

Planning chooses steps through the index (``analysis.index`` plans judge runs, the judge
stays below it): the sources live there, and meet the judge through :class:`UnitSource`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from analysis.judge._audit import (
    LOCAL,
    RunEntry,
    SpendingCaps,
    allowance_refusal,
    close_run,
    open_run,
)
from analysis.judge._cascade import CascadePart
from analysis.judge._chainpoll import JudgeConfig, judge_rendered
from analysis.judge._cost import RunEstimate, start_refusal
from analysis.judge._results import VerdictChange, changed_verdicts, merge_judgments
from analysis.judge._spec import JudgeSpec
from analysis.judge._summary import run_summary
from analysis.llm import (
    DEFAULT_TIMEOUT,
    KEY_ENVS,
    EndpointRules,
    LLMError,
    RunStats,
    cost_refusal,
    dollars,
    key_from,
    needs_key,
    parse_model_name,
)
from analysis.models import Condition, JudgeUnit, Judgment, ToolCatalog
from analysis.render import CONDITIONS, JudgeInput, parse_step_selection

CONFIRM_ABOVE_USD = 5.0
"""An estimate above this many dollars (and within any cap) is run on the Judge page only once
the user confirms it ("Spend about $X on N requests"); ``tsq judge`` has ``--max-cost``."""

SampleBy = Literal["tool", "model", "version", "project", "week", "agent"]
"""What a sample may be stratified by: the dimensions of ``analysis.index`` (``DIMENSIONS``)."""


class JudgeOptions(BaseModel):
    """How a judge run is done, declared once for ``tsq judge`` (its options of the same names)
    and the Judge page. What the judge asks (model, votes, rubric, endpoint) is its spec's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    unit: JudgeUnit = "step"
    """Each model response that called tools (``step``), or each whole turn."""
    selection: str = "all"
    """``all``, ``first`` (the first step after each ask) or ``sample:N`` (per session)."""
    seed: int = 0
    text_steps: bool = False
    """Also judge responses that called no tool."""
    subagents: bool = False
    ablation: bool = False
    """Each unit under every condition (``bare``, ``catalog_no_call``, ``full``)."""
    sample_to: float | None = Field(default=None, gt=0, le=0.5)
    """A stratified random sample just large enough for TSQ within ± this (95%) per stratum."""
    strata: SampleBy | None = None
    """The strata of ``sample_to`` (None: the whole collection is one)."""
    batch: bool = False
    """Through the Message Batches API (Anthropic only; same output)."""
    max_cost: float | None = Field(default=None, ge=0)
    """Refuse to start when the estimate (USD) is above this, or unknown; None: no cap."""
    concurrency: int = Field(default=4, ge=1, le=64)
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0)
    """Seconds one model request may take before it is retried, then given up."""
    cache_dir: Path | None = None
    """The vote cache's folder; None: the user's cache folder."""
    cascade: Path | None = None
    """A trained step scorer's folder: the judge asks only about the steps whose scorer
    probability is least certain (``budget`` or ``uncertain`` of them), the scorer's verdict
    is kept elsewhere (``analysis.judge.CascadePart``)."""
    budget: float | None = Field(default=None, ge=0)
    """With ``cascade``: as many of the least certain steps as the estimate (USD) allows."""
    uncertain: int | None = Field(default=None, ge=0)
    """With ``cascade``: this many of the least certain steps."""

    def conditions(self, spec: JudgeSpec) -> tuple[Condition, ...]:
        """Every condition with ``ablation``, else the spec's."""
        return CONDITIONS if self.ablation else (spec.condition,)


@dataclass(frozen=True)
class PlannedUnits:
    """What a source chose and what asking it would cost."""

    units: list[JudgeInput] | None
    """The units to ask, rendered; None when a dry run through the index rendered none."""
    estimate: RunEstimate
    earlier: list[Judgment] = field(default_factory=list)
    """Judgments found among the inputs (not those kept beside the run)."""
    sample: list[str] = field(default_factory=list)
    """The sample in words, a line per stratum after the first; empty without ``sample_to``."""
    sampled: bool = False
    cascade: CascadePart | None = None
    """With ``cascade``: the steps keeping the scorer's verdict, and the cascade in words."""


class RunRefused(Exception):
    """A run that cannot be planned (its index cannot be read, a sample it cannot draw); the
    message is one sentence."""


class UnitSource(Protocol):
    """Where a run's units come from (``analysis.index``: ``FromIndex``, ``FromFiles``,
    ``FromSessions``). ``plan`` raises :class:`RunRefused` for a run it cannot plan."""

    def plan(
        self,
        spec: JudgeSpec,
        options: JudgeOptions,
        live: ToolCatalog | None,
        kept: Sequence[Judgment],
        render: bool,
    ) -> PlannedUnits: ...


@dataclass(frozen=True)
class RunPlan:
    """A run before it starts: its units and estimate, and each reason it must not start."""

    spec: JudgeSpec
    options: JudgeOptions
    refusal: str | None = None
    """Why neither the run nor its dry run may start, in one sentence: a model name that names
    no provider or no model, ``batch`` for a provider without a batch API, steps chosen in
    words it does not know, a source that cannot be read, a request beyond the model's
    context. None when they may."""
    units: list[JudgeInput] | None = None
    estimate: RunEstimate | None = None
    """None when refused before anything was planned."""
    earlier: list[Judgment] = field(default_factory=list)
    sample: list[str] = field(default_factory=list)
    sampled: bool = False
    cascade: CascadePart | None = None
    kept: list[Judgment] = field(default_factory=list)
    """Judgments kept beside the run (``--out``'s, the page's): merged under its own."""
    cost_refusal: str | None = None
    """The run's estimate above ``max_cost``, or unknown under it (``analysis.llm.cost_refusal``,
    the sentence ``tsq judge`` prints); the dry run still shows the estimate."""
    key_refusal: str | None = None
    """No API key where the model's endpoint needs one; the dry run needs none."""
    confirm: str | None = None
    """Above ``CONFIRM_ABOVE_USD`` and within any cap: "Spend about $X on N requests"."""
    config: JudgeConfig | None = field(default=None, repr=False)
    who: str = LOCAL
    """Who runs it, as the spending log writes it down."""
    caps: SpendingCaps | None = None
    """Served: what a run and a person's day may spend; None: no cap (locally)."""
    audit: Path | None = None
    """The spending log (``analysis.judge.AuditLog``); None: the data folder's."""
    spending_refusal: str | None = None
    """Served: the estimate above a cap or above what is left of ``who``'s allowance today,
    in one sentence naming both (checked again, atomically, as the run starts)."""

    @property
    def conditions(self) -> tuple[Condition, ...]:
        return self.options.conditions(self.spec)

    @property
    def expected_usd(self) -> float | None:
        """The estimate a run is held to: with prompt caching, with ``batch`` at its price."""
        if self.estimate is None:
            return None
        batch = self.options.batch
        return self.estimate.cost_batch_usd if batch else self.estimate.cost_cached_usd

    @property
    def run_refusal(self) -> str | None:
        """Why the run (not its dry run) must not start; None when it may."""
        return self.refusal or self.cost_refusal or self.spending_refusal or self.key_refusal


@dataclass(frozen=True)
class RunOutcome:
    """What a run gave: its judgments, those merged with the kept ones, and its summary; or
    the one sentence saying why it stopped before any judgment (``error``)."""

    judgments: list[Judgment] = field(default_factory=list)
    merged: list[Judgment] = field(default_factory=list)
    """The kept judgments with this run's over them (other judges' are never lost)."""
    stats: RunStats | None = None
    summary: list[str] = field(default_factory=list)
    """:func:`~analysis.judge.run_summary`'s lines."""
    changes: list[VerdictChange] | None = None
    """Steps whose verdict this judge changes from an earlier judge's; None: none judged before."""
    error: str | None = None


def prepare_run(
    source: UnitSource,
    spec: JudgeSpec,
    options: JudgeOptions | None = None,
    *,
    keys: Mapping[str, str] | None = None,
    endpoints: EndpointRules | None = None,
    live: ToolCatalog | None = None,
    kept: Sequence[Judgment] = (),
    dry_run: bool = False,
    who: str = LOCAL,
    caps: SpendingCaps | None = None,
    audit: Path | None = None,
) -> RunPlan:
    """Plan a run of ``spec``'s judge on ``source``'s units and say what stops it.

    ``keys`` maps key variables to keys (default: the environment); served, ``endpoints`` says
    where requests may go and which key goes with them. ``live`` is a catalog dumped at send
    time; ``kept`` the judgments kept beside the run (sampled steps they judged are not asked
    again; the run's own are merged over them). A ``dry_run`` through the index renders
    nothing. ``who`` runs it, written in the spending log (``audit``, default the data
    folder's); served, ``caps`` hold the run and ``who``'s day. No request is made.
    """
    options = options or JudgeOptions()
    refused = RunPlan(spec=spec, options=options, kept=list(kept), who=who, caps=caps, audit=audit)
    refusal = start_refusal(spec.model, options.batch) or _selection_refusal(options)
    if refusal:
        return replace(refused, refusal=refusal)
    try:
        planned = source.plan(spec, options, live, kept, not dry_run)
    except RunRefused as error:
        return replace(refused, refusal=str(error))
    estimate = planned.estimate
    plan = replace(
        refused,
        units=planned.units,
        estimate=estimate,
        earlier=planned.earlier,
        sample=planned.sample,
        sampled=planned.sampled,
        cascade=planned.cascade,
        refusal=estimate.refusal,
    )
    if plan.refusal:
        return plan
    expected = estimate.cost_batch_usd if options.batch else estimate.cost_cached_usd
    api_key, key_refusal = _key(spec, os.environ if keys is None else keys, endpoints)
    if planned.cascade is not None and not planned.units:  # the scorer's verdicts only
        key_refusal = None
    config = spec.judge_config(
        api_key=api_key,
        endpoints=endpoints,
        concurrency=options.concurrency,
        timeout=options.timeout,
        cache_dir=options.cache_dir,
    )
    cost = cost_refusal(expected, options.max_cost)
    spending = None if dry_run else allowance_refusal(who, expected, caps, audit)
    return replace(
        plan,
        cost_refusal=cost,
        spending_refusal=spending,
        key_refusal=key_refusal,
        confirm=(
            _confirmation(expected, estimate.requests)
            if cost is None and spending is None
            else None
        ),
        config=config,
    )


def execute(plan: RunPlan, on_unit: Callable[[], None] | None = None) -> RunOutcome:
    """Run ``plan`` (``on_unit`` called as each unit is judged), merge and sum it up; a run
    that must not start, or that the model's API stops, is ``error``, one sentence.

    Every run is written in the spending log, refused ones too: it reserves its estimate as it
    starts (refused there when, served, another run has spent the allowance meanwhile) and is
    settled at what its tokens cost when it ends, done, failed or stopped."""
    entry = RunEntry(
        who=plan.who,
        kind="judge",
        judge_id=plan.spec.judge_id,
        steps=len(plan.units or []),
        estimated_usd=plan.expected_usd,
    )
    if plan.cascade is not None and plan.run_refusal is None and not plan.units:
        judgments = plan.cascade.judgments([])  # nothing to ask: no request, nothing spent
        return RunOutcome(
            judgments=judgments,
            merged=merge_judgments(plan.kept, judgments),
            summary=[plan.cascade.summary([])],
        )
    refusal = plan.run_refusal or (None if plan.config else "Not started: nothing was planned.")
    run, refusal = open_run(entry, plan.caps, plan.audit, refusal)
    if refusal is not None or plan.config is None:
        return RunOutcome(merged=list(plan.kept), error=refusal)
    stats = RunStats(model=plan.config.model, batch=plan.options.batch)
    try:
        judgments, stats = asyncio.run(
            judge_rendered(
                plan.units or [],
                plan.config,
                on_turn=on_unit,
                batch=plan.options.batch,
                stats=stats,
            )
        )
    except LLMError as error:
        close_run(run, plan.audit, "failed", stats.cost_usd, str(error))
        return RunOutcome(merged=list(plan.kept), error=str(error))
    except BaseException:  # interrupted (Ctrl-C, the page stopped): what it used is kept
        close_run(run, plan.audit, "stopped", stats.cost_usd)
        raise
    close_run(run, plan.audit, "done", stats.cost_usd)
    earlier = [*plan.earlier, *plan.kept]
    summary = run_summary(judgments, stats)
    if plan.cascade is not None:
        summary.append(plan.cascade.summary(judgments))
        judgments = plan.cascade.judgments(judgments)
    return RunOutcome(
        judgments=judgments,
        merged=merge_judgments(plan.kept, judgments),
        stats=stats,
        summary=summary,
        changes=changed_verdicts(earlier, judgments) if earlier else None,
    )


def _cascade_refusal(options: JudgeOptions) -> str | None:
    """A cascade's options that do not go together, in one sentence."""
    if options.cascade is None:
        if options.budget is not None or options.uncertain is not None:
            return "--budget and --uncertain choose the steps of a cascade: give --cascade DIR."
        return None
    if (options.budget is None) == (options.uncertain is None):
        return "A cascade needs --budget USD or --uncertain N (one of them)."
    if options.unit == "turn" or options.text_steps or options.ablation:
        return "A cascade judges steps that called tools: not with turns, text steps or ablation."
    if options.sample_to is not None:
        return "A cascade chooses its own steps: not with --sample-to."
    return None


def _selection_refusal(options: JudgeOptions) -> str | None:
    """Steps chosen in words that are not ``all``, ``first`` or ``sample:N``, and a cascade's
    options that do not go together."""
    if refusal := _cascade_refusal(options):
        return refusal
    if options.unit == "turn":
        return None
    try:
        parse_step_selection(options.selection)
    except ValueError as error:
        return f"Steps: {error}."
    return None


def _key(
    spec: JudgeSpec, keys: Mapping[str, str], endpoints: EndpointRules | None
) -> tuple[str | None, str | None]:
    """The key the run sends (served: the one its endpoint may receive), and the sentence
    saying which variable to set when a key is needed and there is none."""
    provider, _ = parse_model_name(spec.model)  # a name start_refusal has let through
    if endpoints is None:
        key = key_from(spec.model, keys)
    else:
        key = endpoints.key_for(provider, spec.base_url)
    if key or not needs_key(provider, spec.base_url):
        return key, None
    names = " or ".join(KEY_ENVS[provider])
    return None, (
        f"No API key: set {names} in the environment (or the app's .streamlit/secrets.toml) to "
        "run the judge with this model."
    )


def _confirmation(expected: float | None, requests: int) -> str | None:
    if expected is None or expected <= CONFIRM_ABOVE_USD:
        return None
    return f"Spend about {dollars(expected)} on {requests:,} requests"
