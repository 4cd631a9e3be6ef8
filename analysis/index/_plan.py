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

from analysis.index._cascade import CascadeChoice, StepKey, choose_cascade, scored_by
from analysis.index._read import IndexReader, scorer_judgments_in_scope
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
from analysis.judge import CascadePart, JudgeSpec, RunEstimate, estimate_figures, estimate_run
from analysis.models import STEP_KEYS, Condition, JudgeUnit, Judgment, LoadResult, ToolCatalog
from analysis.render import JudgeInput, RenderOptions, judge_inputs, unit_figures
from analysis.scorer import StepFeatures, step_features

FEATURE_BATCH = 20_000
"""Steps whose features a cascade's scorer reads and scores at once."""


@dataclass(frozen=True)
class Choice:
    """How units are chosen: ``--unit``, ``--steps``, ``--text-steps``, ``--subagents``,
    ``--seed``, ``--sample-to`` with ``--strata``, and ``--cascade``."""

    unit: JudgeUnit = "step"
    selection: str = "all"
    text_steps: bool = False
    subagents: bool = False
    seed: int = 0
    sample_to: float | None = None
    strata: Dimension | None = None
    cascade: CascadeChoice | None = None


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
    cascade: CascadePart | None = None


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
    if choice.cascade is not None:
        return _direct_cascade(result, spec, conditions, choice, live, earlier_out)
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
    options = spec.render_options()
    default = tuple(conditions) == ("full",) and live is None and options == RenderOptions()
    cascade = None
    if choice.cascade is not None:
        asked, cascade = _indexed_cascade(
            reader, shown, steps, spec, conditions, choice, live, [*earlier, *earlier_out], default
        )
        sample, already = None, 0
    else:
        asked, sample, already = _sampled(steps, choice, judged)
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
        cascade=cascade,
    )


def _keys(frame: pl.DataFrame) -> list[StepKey]:
    return [(s, t, i, p) for s, t, i, p in frame.select(STEP_KEYS).iter_rows()]


def _direct_cascade(
    result: LoadResult,
    spec: JudgeSpec,
    conditions: Sequence[Condition],
    choice: Choice,
    live: ToolCatalog | None,
    earlier_out: Sequence[Judgment],
) -> JudgePlan:
    """A cascade's plan from a load: every candidate step rendered, the least certain asked."""
    assert choice.cascade is not None
    every = judge_inputs(
        result.sessions,
        "step",
        conditions,
        live,
        spec.render_options(),
        choice.selection,
        False,
        choice.subagents,
        choice.seed,
    )
    keys: list[StepKey] = [
        (u.session_id, u.turn_index, u.step_index, u.parent_call_id) for u in every
    ]
    features: dict[StepKey, StepFeatures] = {
        (f.session_id, f.turn_index, f.step_index, f.parent_call_id): f
        for session in result.sessions
        for f in step_features(session, subagents=choice.subagents)
    }
    system = spec.system_text()
    asked, part = choose_cascade(
        keys,
        scored_by(features, choice.cascade),
        choice.cascade,
        spec.judge_id,
        [*result.judgments, *earlier_out],
        lambda places: estimate_run([every[p] for p in places], spec.votes, spec.model, system),
        choice.seed,
    )
    rendered = [every[place] for place in asked]
    return JudgePlan(
        estimate=estimate_run(rendered, spec.votes, spec.model, system),
        rendered=rendered,
        earlier=list(result.judgments),
        population=len(every),
        cascade=part,
    )


def _indexed_cascade(
    reader: IndexReader,
    shown: dict[str, str],
    steps: pl.DataFrame,
    spec: JudgeSpec,
    conditions: Sequence[Condition],
    choice: Choice,
    live: ToolCatalog | None,
    earlier: Sequence[Judgment],
    default: bool,
) -> tuple[pl.DataFrame, CascadePart]:
    """A cascade's steps through the index: the scorer's judgments ``tsq score`` kept there,
    and for the other steps, the scorer reading their features as the index keeps them; the
    estimate is the index's figures' for the ``default`` rendering, else the steps rendered."""
    assert choice.cascade is not None
    keys = _keys(steps)
    scored: dict[StepKey, Judgment] = {
        (j.session_id, j.turn_index, j.step_index, j.parent_call_id): j
        for j in scorer_judgments_in_scope(
            reader.conn,
            " AND judge_id = ? AND condition = 'full' AND step_index IS NOT NULL",
            [choice.cascade.card.scorer_id],
        )
    }
    missing = set(keys) - set(scored)
    if missing:  # scored a batch at a time: the features of every step are never all held
        reader.conn.execute(
            "SELECT session_id, turn_index, step_index, parent_call_id, features FROM "
            "step_inputs WHERE source_file IN (SELECT path FROM scope) AND features IS NOT NULL"
        )
        while batch := reader.conn.fetchmany(FEATURE_BATCH):
            features = {
                key: StepFeatures.model_validate_json(text)
                for *found, text in batch
                if (key := (found[0], found[1], found[2], found[3])) in missing
            }
            scored |= scored_by(features, choice.cascade)
    indexed = figures_of(steps) if default else None
    if indexed is None:
        wanted = set(steps.select("source_file", "session_id").iter_rows())
        sessions = sessions_of(reader, shown, wanted)
        every = render_chosen(sessions, steps, conditions, live, spec.render_options())
    figures = indexed if indexed is not None else [unit_figures(unit) for unit in every]
    system = spec.system_text()
    asked, part = choose_cascade(
        keys,
        scored,
        choice.cascade,
        spec.judge_id,
        earlier,
        lambda places: estimate_figures(
            [figures[p] for p in places], spec.votes, spec.model, system
        ),
        choice.seed,
    )
    return steps[asked], part


def _judgments_under(reader: IndexReader) -> list[Judgment]:
    """The judgments files in scope, read (they are small beside the transcripts)."""
    files = reader.conn.execute(
        "SELECT display FROM files JOIN scope USING (path) WHERE kind = 'judgments' "
        "ORDER BY file_order"
    ).fetchall()
    return list(load([display for (display,) in files]).judgments) if files else []
