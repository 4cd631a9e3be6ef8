"""Where a judge run's units come from (``analysis.judge.UnitSource``): an index brought up to
date for PATHS, every file under PATHS read whole, or sessions already loaded (the Judge
page's chosen ones). Each plans through :func:`indexed_plan` or :func:`direct_plan`, which
choose the same steps, render the same inputs and give the same estimate."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from analysis.index._build import IndexProblem, update_index
from analysis.index._cascade import cascade_choice
from analysis.index._plan import Choice, JudgePlan, direct_plan, indexed_plan
from analysis.index._read import IndexReader
from analysis.ingest import load
from analysis.judge import JudgeOptions, JudgeSpec, PlannedUnits, RunRefused
from analysis.models import Judgment, LoadResult, Session, ToolCatalog


def choice_of(options: JudgeOptions) -> Choice:
    """How the units are chosen, from the run's options (a cascade's scorer read from its
    folder: :class:`~analysis.judge.RunRefused` where it holds none that can be used)."""
    return Choice(
        unit=options.unit,
        selection=options.selection,
        text_steps=options.text_steps,
        subagents=options.subagents,
        seed=options.seed,
        sample_to=options.sample_to,
        strata=options.strata,
        cascade=cascade_choice(options),
    )


def planned(plan: JudgePlan, judge_id: str) -> PlannedUnits:
    """A plan as the judge's run takes it, its sample (if any) in words."""
    sample = plan.sample
    lines = []
    if sample is not None:
        asked = len(sample.rows) - plan.already
        lines.append(
            f"{sample.in_words(plan.population)}; {plan.already:,} already judged by "
            f"{judge_id}, {asked:,} to ask"
        )
        lines += [
            f"  {s.name}: {s.taken:,} of {s.steps:,} steps (needs {s.needed:,})"
            for s in sample.strata
        ]
    if plan.cascade is not None:
        lines += plan.cascade.lines
    return PlannedUnits(
        units=plan.rendered,
        estimate=plan.estimate,
        earlier=plan.earlier,
        sample=lines,
        sampled=sample is not None,
        cascade=plan.cascade,
    )


@dataclass(frozen=True)
class FromIndex:
    """The steps under ``paths`` through the index at ``index_path`` (None: the default one),
    brought up to date by ``update`` first (default: quietly) — steps that called tools only
    (``unit`` "step", no text steps)."""

    paths: tuple[str, ...]
    index_path: str | None = None
    update: Callable[[], object] | None = None

    def plan(
        self,
        spec: JudgeSpec,
        options: JudgeOptions,
        live: ToolCatalog | None,
        kept: Sequence[Judgment],
        render: bool,
    ) -> PlannedUnits:
        if options.unit != "step" or options.text_steps:
            raise RunRefused(
                "The index holds the steps that called tools: turns and text steps are "
                "planned from the files."
            )
        try:
            if self.update is None:
                update_index(self.paths, self.index_path)
            else:
                self.update()
            with IndexReader(self.index_path) as reader:
                plan = indexed_plan(
                    reader,
                    self.paths,
                    spec,
                    options.conditions(spec),
                    choice_of(options),
                    live,
                    kept,
                    render=render,
                )
        except IndexProblem as error:
            raise RunRefused(f"{error}.") from None
        return planned(plan, spec.judge_id)


@dataclass(frozen=True)
class FromFiles:
    """Every file under ``paths``, read by ``read`` (default: ``analysis.load``, issues kept
    in the result) when the run is planned."""

    paths: tuple[str, ...]
    read: Callable[[], LoadResult] | None = None

    def plan(
        self,
        spec: JudgeSpec,
        options: JudgeOptions,
        live: ToolCatalog | None,
        kept: Sequence[Judgment],
        render: bool,
    ) -> PlannedUnits:
        result = load(self.paths) if self.read is None else self.read()
        return _direct(result, self.paths, spec, options, live, kept)


@dataclass(frozen=True)
class FromSessions:
    """Sessions already loaded (the Judge page's chosen ones); no sample is drawn from them."""

    sessions: Sequence[Session]

    def plan(
        self,
        spec: JudgeSpec,
        options: JudgeOptions,
        live: ToolCatalog | None,
        kept: Sequence[Judgment],
        render: bool,
    ) -> PlannedUnits:
        if options.sample_to is not None:
            raise RunRefused("A sample is drawn from files or an index, not from chosen sessions.")
        result = LoadResult.model_construct(sessions=list(self.sessions), judgments=[])
        return _direct(result, (), spec, options, live, kept)


def _direct(
    result: LoadResult,
    paths: Sequence[str | Path],
    spec: JudgeSpec,
    options: JudgeOptions,
    live: ToolCatalog | None,
    kept: Sequence[Judgment],
) -> PlannedUnits:
    plan = direct_plan(
        result, paths, spec, options.conditions(spec), choice_of(options), live, kept
    )
    return planned(plan, spec.judge_id)
