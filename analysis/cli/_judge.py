"""`tsq judge`: the ChainPoll judge over chosen steps, its estimate and its summary."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from analysis.cli._common import (
    DEFAULT_STEP_CHARS,
    EXIT_NOTHING_LOADED,
    _live_dump_or_exit,
    _load_or_exit,
    _paths_or_current,
    _require_out,
    _spec_or_exit,
    concurrency_option,
    current_option,
    dry_run_option,
    judge_option,
    live_dump_option,
    max_cost_option,
    timeout_option,
    vote_cache_option,
)
from analysis.cli._index import (
    index_path_option,
    update_or_exit,
)

if TYPE_CHECKING:
    from analysis.index import Choice, JudgePlan
    from analysis.judge import JudgeSpec, RunEstimate
    from analysis.models import Condition, Judgment, ToolCatalog


def _print_estimate(estimate: RunEstimate, unit: str, votes: int, conditions: int) -> None:
    click.echo(
        f"{estimate.headline(unit, votes, conditions)} (from {estimate.sessions} "
        f"session{'' if estimate.sessions == 1 else 's'}, {estimate.tool_calls} tool calls)"
    )
    click.echo(
        f"estimated tokens: {estimate.input_tokens:,} input "
        f"({estimate.cached_prefix_tokens:,} in cacheable prefixes), "
        f"{estimate.output_tokens:,} output"
    )
    click.echo(f"estimated cost: {estimate.cost_in_words(with_batch=True)}")


@click.command()
@click.argument("paths", nargs=-1)
@current_option
@judge_option
@click.option(
    "--model",
    help="Judge model: provider:model (openai:gpt-4o); a bare id or display name is Anthropic's. "
    "Required without --judge; with it, replaces the spec's model.",
)
@click.option(
    "--votes", type=click.IntRange(1, 10), help="Votes per unit (default: the spec's, 3)."
)
@click.option(
    "--unit",
    type=click.Choice(["step", "turn"]),
    default="step",
    show_default=True,
    help="Judge each model response that called tools (step), or each whole turn.",
)
@click.option(
    "--steps",
    "selection",
    default="all",
    show_default=True,
    help="all, first (the first step after each ask) or sample:N (N steps per session).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="For --steps sample:N.")
@click.option("--text-steps", is_flag=True, help="Also judge responses that called no tool.")
@click.option("--subagents", is_flag=True, help="Also judge the subagents' steps.")
@click.option(
    "--step-chars",
    type=click.IntRange(min=2000),
    help=f"Size budget of a step's input, menu excluded (default: the spec's, "
    f"{DEFAULT_STEP_CHARS}).",
)
@click.option(
    "--base-url",
    help="Another endpoint of the model's API (Anthropic-compatible for a bare or anthropic: "
    "model; OpenAI-compatible for openai:, e.g. vLLM, Ollama).",
)
@concurrency_option
@click.option("--batch", is_flag=True, help="Use the Message Batches API (same output).")
@click.option("--ablation", is_flag=True, help="Judge each unit as bare, catalog_no_call and full.")
@dry_run_option
@max_cost_option
@click.option("--out", type=click.Path(dir_okay=False), help="JSONL to write (not for --dry-run).")
@vote_cache_option
@timeout_option
@live_dump_option
@click.option(
    "--sample-to",
    type=click.FloatRange(0, 0.5, min_open=True),
    help="Judge a stratified random sample of the steps just large enough for TSQ within "
    "± this (95%) per stratum of --by; a later run with a smaller one adds steps.",
)
@click.option(
    "--by",
    type=click.Choice(["tool", "model", "version", "project", "week", "agent"]),
    help="The strata of --sample-to (default: the whole collection is one).",
)
@index_path_option
@click.option(
    "--no-index", is_flag=True, help="Choose steps by reading every file, not through the index."
)
def judge(
    paths: tuple[str, ...],
    current: bool,
    judge_spec: str | None,
    model: str | None,
    votes: int | None,
    unit: str,
    selection: str,
    seed: int,
    text_steps: bool,
    subagents: bool,
    step_chars: int | None,
    base_url: str | None,
    concurrency: int,
    batch: bool,
    ablation: bool,
    dry_run: bool,
    max_cost: float | None,
    out: str | None,
    cache_dir: str | None,
    timeout: float,
    live_catalog: str | None,
    sample_to: float | None,
    by: str | None,
    index_path: str | None,
    no_index: bool,
) -> None:
    """Grade every step's (or turn's) tool choice with a ChainPoll judge; one JSON line each.

    The judge is a spec (--judge FILE), or the built-in one with --model. --model, --votes,
    --step-chars and --base-url given with --judge replace the spec's own (and so change its
    judge_id). Steps that another judge already judged (in --out's earlier content, or among
    PATHS) and whose verdict this judge changes are listed. Steps are chosen through the index
    (brought up to date first; --unit turn and --text-steps read the files, as --no-index).
    With --sample-to, the sample's size and cost are printed before anything is asked, and
    sampled steps this judge already judged are not asked again.

    Exit status: 0 done; 1 --out cannot be written; 2 nothing to judge, a bad option or spec,
    the estimate above --max-cost, or the judge cannot start (key, model).
    """
    import asyncio

    from tqdm import tqdm

    from analysis.index import Choice
    from analysis.judge import (  # the SDK: slow to import
        JudgeError,
        judge_rendered,
        merge_judgments,
        run_summary,
        start_refusal,
    )
    from analysis.llm import cost_refusal
    from analysis.render import CONDITIONS

    _require_out(out, dry_run)
    paths = _paths_or_current(paths, current)
    _check_choice(selection, sample_to, by, unit == "turn" or text_steps)
    if no_index and index_path is not None:
        raise click.UsageError("give --index or --no-index, not both.")
    spec = _spec_or_exit(
        judge_spec, model=model, votes=votes, step_chars=step_chars, base_url=base_url
    )
    votes, model = spec.votes, spec.model
    _refuse(start_refusal(model, batch))  # what the run refuses, the dry run refuses
    choice = Choice(
        unit="turn" if unit == "turn" else "step",
        selection=selection,
        text_steps=text_steps,
        subagents=subagents,
        seed=seed,
        sample_to=sample_to,
        by=by,  # type: ignore[arg-type]  # click has checked it
    )
    in_out = _earlier_judgments(out)
    through_index = not no_index and unit == "step" and not text_steps
    conditions = CONDITIONS if ablation else (spec.condition,)
    live = _live_dump_or_exit(live_catalog)
    if through_index:
        plan = _indexed_plan(paths, index_path, spec, conditions, choice, live, in_out, dry_run)
    else:
        from analysis.index import direct_plan

        plan = direct_plan(_load_or_exit(paths), paths, spec, conditions, choice, live, in_out)
    estimate = plan.estimate
    _refuse(estimate.refusal)  # a request beyond the model's context, before any request
    if plan.sample is not None:
        _print_sample(plan, spec.judge_id)
    _print_estimate(estimate, unit, votes, len(CONDITIONS) if ablation else 1)
    if dry_run:
        return
    rendered = plan.rendered or []
    if not rendered:
        if plan.sample is not None:
            click.echo("Nothing to ask: this judge has judged every sampled step already.")
            return
        click.echo(f"Nothing to judge: no {unit} with a model response was found.", err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    expected = estimate.cost_batch_usd if batch else estimate.cost_cached_usd
    if refusal := cost_refusal(expected, max_cost):
        click.echo(refusal, err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    config = spec.judge_config(
        concurrency=concurrency, cache_dir=Path(cache_dir) if cache_dir else None, timeout=timeout
    )
    earlier = [*plan.earlier, *in_out]
    with tqdm(total=len(rendered), unit=unit, disable=None, file=sys.stderr) as bar:
        try:
            judgments, stats = asyncio.run(
                judge_rendered(rendered, config, on_turn=lambda: bar.update(1), batch=batch)
            )
        except JudgeError as error:
            click.echo(str(error), err=True)
            sys.exit(EXIT_NOTHING_LOADED)
    assert out is not None
    written = merge_judgments(in_out, judgments)  # other judges' lines are never lost
    try:
        Path(out).write_text("".join(j.model_dump_json() + "\n" for j in written))
    except OSError as error:
        click.echo(f"{out}: cannot be written ({error.strerror}).", err=True)
        sys.exit(1)
    click.echo(f"judge: {spec.judge_id} ({spec.model}, {spec.votes} votes)")
    for line in run_summary(judgments, stats):
        click.echo(line)
    _print_changed(earlier, judgments)
    kept = len(written) - len(judgments)
    click.echo(
        f"Wrote {len(judgments)} judgments to {out}"
        + (f" (and kept {kept} of earlier runs there)" if kept else "")
    )


def _refuse(refusal: str | None) -> None:
    """A run that must not start (nor its dry run): one sentence, exit 2."""
    if refusal:
        click.echo(refusal, err=True)
        sys.exit(EXIT_NOTHING_LOADED)


def _check_choice(
    selection: str, sample_to: float | None, by: str | None, not_tool_steps: bool
) -> None:
    """--steps, --sample-to and --by that cannot go together are a usage error."""
    from analysis.render import parse_step_selection

    try:
        parse_step_selection(selection)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--steps") from None
    if by is not None and sample_to is None:
        raise click.UsageError("--by is for --sample-to.")
    if sample_to is not None and not_tool_steps:
        raise click.UsageError(
            "--sample-to samples steps that called tools: not with --unit turn or --text-steps."
        )


def _indexed_plan(
    paths: tuple[str, ...],
    index_path: str | None,
    spec: JudgeSpec,
    conditions: tuple[Condition, ...],
    choice: Choice,
    live: ToolCatalog | None,
    in_out: list[Judgment],
    dry_run: bool,
) -> JudgePlan:
    """The run's plan through the index, brought up to date for PATHS first."""
    from analysis.index import IndexProblem, IndexReader, indexed_plan

    click.echo(update_or_exit(paths, index_path, None))
    try:
        with IndexReader(index_path) as reader:
            return indexed_plan(
                reader, paths, spec, conditions, choice, live, in_out, render=not dry_run
            )
    except IndexProblem as error:
        click.echo(f"{error}.", err=True)
        sys.exit(EXIT_NOTHING_LOADED)


def _print_sample(plan: JudgePlan, judge_id: str) -> None:
    sample = plan.sample
    assert sample is not None
    asked = len(sample.rows) - plan.already
    click.echo(
        f"{sample.in_words(plan.population)}; {plan.already:,} already judged by {judge_id}, "
        f"{asked:,} to ask"
    )
    for stratum in sample.strata:
        click.echo(
            f"  {stratum.name}: {stratum.taken:,} of {stratum.steps:,} steps "
            f"(needs {stratum.needed:,})"
        )


def _earlier_judgments(out: str | None) -> list[Judgment]:
    """What --out holds before this run (kept, and compared with this run's verdicts). A file
    that is not judgments is refused before anything is asked, rather than overwritten."""
    if out is None or not Path(out).is_file():
        return []
    from analysis.judge import load_judgments

    try:
        return load_judgments(out)
    except (OSError, ValueError) as error:
        reason = f"{out}: {error.strerror}" if isinstance(error, OSError) else str(error)
        click.echo(
            f"{reason}: --out would overwrite it, so nothing was judged; give another --out.",
            err=True,
        )
        sys.exit(EXIT_NOTHING_LOADED)


def _print_changed(earlier: list[Judgment], judgments: list[Judgment]) -> None:
    """The steps whose majority verdict differs from the earlier judgment of the same step."""
    from analysis.judge import changed_verdicts

    if not earlier:
        return
    changes = changed_verdicts(earlier, judgments)
    click.echo(f"verdicts changed from earlier judges of the same steps: {len(changes)}")
    for change in changes:
        click.echo(
            f"  {change.item_id} [{change.condition}]: {change.before} -> {change.after} "
            f"({change.before_judge} -> {change.after_judge})"
        )
