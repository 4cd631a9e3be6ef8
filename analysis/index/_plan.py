"""What a ``tsq judge`` run will ask, and what that costs, before it asks: chosen through the
index (only the chosen sessions' files are read, and a dry run of the default rendering reads
none), or from the files directly (``--no-index``).

Both ways choose the same steps, render the same inputs and give the same estimate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from analysis.index._read import IndexReader
from analysis.index._sample import (
    LoadedSteps,
    Sample,
    candidate_steps,
    figures_of,
    in_scope,
    judged_in,
    render_chosen,
    sessions_of,
    stratified_sample,
    without,
)
from analysis.index._trends import Dimension
from analysis.ingest import load
from analysis.judge import JudgeSpec, RunEstimate, estimate_figures, estimate_run
from analysis.models import Condition, JudgeUnit, Judgment, LoadResult, ToolCatalog
from analysis.render import JudgeInput, RenderOptions, judge_inputs


@dataclass(frozen=True)
class Choice:
    """How units are chosen: ``--unit``, ``--steps``, ``--text-steps``, ``--subagents``,
    ``--seed``, and ``--sample-to`` with ``--strata``."""

    unit: JudgeUnit = "step"
    selection: str = "all"
    text_steps: bool = False
    subagents: bool = False
    seed: int = 0
    sample_to: float | None = None
    strata: Dimension | None = None


@dataclass
class JudgePlan:
    """The units a run asks about (rendered unless it is a dry run through the index), their
    estimate, and the judgments already among the inputs."""

    estimate: RunEstimate
    rendered: list[JudgeInput] | None
    earlier: list[Judgment]
    """Judgments found among PATHS (not --out's)."""
    sample: Sample | None = None
    population: int = 0
    """Steps the sample was drawn from."""
    already: int = 0
    """Sampled steps this judge had judged already: not asked again."""


def _sampled(
    steps: pl.DataFrame, choice: Choice, judged: set[tuple[str, int, int, str | None]]
) -> tuple[pl.DataFrame, Sample | None, int]:
    """The steps to ask: all of ``steps``, or the sample's not yet ``judged``."""
    if choice.sample_to is None:
        return steps, None, 0
    sample = stratified_sample(steps, choice.sample_to, choice.strata, choice.seed)
    chosen = steps[sample.rows]
    asked = without(chosen, judged)
    return asked, sample, chosen.height - asked.height


def direct_plan(
    result: LoadResult,
    paths: Sequence[str | Path],
    spec: JudgeSpec,
    conditions: Sequence[Condition],
    choice: Choice,
    live: ToolCatalog | None,
    earlier_out: Sequence[Judgment] = (),
) -> JudgePlan:
    """The plan from a load of every file under ``paths``."""
    options = spec.render_options()
    if choice.sample_to is None:
        rendered = judge_inputs(
            result.sessions,
            choice.unit,
            conditions,
            live,
            options,
            choice.selection,
            choice.text_steps,
            choice.subagents,
            choice.seed,
        )
        estimate = estimate_run(rendered, spec.votes, spec.model, spec.system_text())
        return JudgePlan(estimate=estimate, rendered=rendered, earlier=list(result.judgments))
    tables = LoadedSteps(result, paths)
    steps = candidate_steps(tables, choice.selection, choice.subagents, choice.seed)
    judged = judged_in([*result.judgments, *earlier_out], spec.judge_id, conditions)
    asked, sample, already = _sampled(steps, choice, judged)
    rendered = render_chosen(result.sessions, asked, conditions, live, options)
    return JudgePlan(
        estimate=estimate_run(rendered, spec.votes, spec.model, spec.system_text()),
        rendered=rendered,
        earlier=list(result.judgments),
        sample=sample,
        population=steps.height,
        already=already,
    )


def indexed_plan(
    reader: IndexReader,
    paths: Sequence[str | Path],
    spec: JudgeSpec,
    conditions: Sequence[Condition],
    choice: Choice,
    live: ToolCatalog | None,
    earlier_out: Sequence[Judgment] = (),
    render: bool = True,
) -> JudgePlan:
    """The plan through an index that is up to date for ``paths`` (steps that called tools
    only: ``choice.unit`` "step", no text steps). The estimate of the default rendering comes
    from the index; any other is rendered from the chosen sessions' files, as are the units
    when ``render``."""
    shown = in_scope(reader, paths)
    steps = candidate_steps(reader, choice.selection, choice.subagents, choice.seed)
    earlier = _judgments_under(reader)
    judged = judged_in([*earlier, *earlier_out], spec.judge_id, conditions)
    asked, sample, already = _sampled(steps, choice, judged)
    options = spec.render_options()
    default = tuple(conditions) == ("full",) and live is None and options == RenderOptions()
    figures = figures_of(asked) if default else None
    rendered = None
    if render or figures is None:
        wanted = set(asked.select("source_file", "session_id").iter_rows())
        sessions = sessions_of(reader, shown, wanted)
        rendered = render_chosen(sessions, asked, conditions, live, options)
    estimate = (
        estimate_figures(figures, spec.votes, spec.model, spec.system_text())
        if figures is not None
        else estimate_run(rendered or [], spec.votes, spec.model, spec.system_text())
    )
    return JudgePlan(
        estimate=estimate,
        rendered=rendered,
        earlier=earlier,
        sample=sample,
        population=steps.height,
        already=already,
    )


def _judgments_under(reader: IndexReader) -> list[Judgment]:
    """The judgments files in scope, read (they are small beside the transcripts)."""
    files = reader.conn.execute(
        "SELECT display FROM files JOIN scope USING (path) WHERE kind = 'judgments' "
        "ORDER BY file_order"
    ).fetchall()
    return list(load([display for (display,) in files]).judgments) if files else []
