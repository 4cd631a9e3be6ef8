"""`tsq judge`: the ChainPoll judge over chosen steps, its estimate and its summary."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from analysis.cli._common import (
    DEFAULT_STEP_CHARS,
    EXIT_NOTHING_LOADED,
    EXIT_REFUSED,
    _live_dump_or_exit,
    _load_or_exit,
    _parsed,
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
    from analysis.judge import JudgeOptions, RunEstimate, UnitSource, VerdictChange
    from analysis.models import Judgment


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
    "± this (95%) per stratum of --strata; a later run with a smaller one adds steps.",
)
@click.option(
    "--strata",
    type=click.Choice(["tool", "model", "version", "project", "week", "agent"]),
    help="The strata of --sample-to (default: the whole collection is one).",
)
@click.option(
    "--cascade",
    type=click.Path(file_okay=False),
    help="A trained step scorer's folder: ask the judge only about the steps whose scorer "
    "probability is least certain (--budget or --uncertain), keep the scorer's verdict "
    "elsewhere; the judgments are the cascade's, each naming which of the two gave it.",
)
@click.option(
    "--budget",
    type=click.FloatRange(min=0),
    help="With --cascade: as many of the least certain steps as an estimate within USD allows.",
)
@click.option(
    "--uncertain",
    type=click.IntRange(min=0),
    help="With --cascade: this many of the least certain steps.",
)
@index_path_option
@click.option(
    "--no-index", is_flag=True, help="Choose steps by reading every file, not through the index."
)
def judge(**given: Any) -> None:
    """Grade every step's (or turn's) tool choice with a ChainPoll judge; one JSON line each.

    The judge is a spec (--judge FILE), or the built-in one with --model. --model, --votes,
    --step-chars and --base-url given with --judge replace the spec's own (and so change its
    judge_id). Steps that another judge already judged (in --out's earlier content, or among
    PATHS) and whose verdict this judge changes are listed. Steps are chosen through the index
    (brought up to date first; --unit turn and --text-steps read the files, as --no-index).
    With --sample-to, the sample's size and cost are printed before anything is asked, and
    sampled steps this judge already judged are not asked again. With --cascade, the judge
    asks only about the steps a trained scorer is least sure of, within --budget (or the
    --uncertain N least sure), and the scorer's verdict is kept for the others.

    Exit status: 0 done; 1 --out cannot be written; 2 nothing to judge, a bad option or spec,
    the estimate above --max-cost, or the judge cannot start (key, model).
    """
    from tqdm import tqdm

    from analysis.judge import JudgeOptions, execute, prepare_run  # the SDK: slow to import

    args, options = _parsed(given, _Given, JudgeOptions)
    _require_out(args.out, args.dry_run)
    paths = _paths_or_current(args.paths, args.current)
    not_tool_steps = options.unit == "turn" or options.text_steps
    _check_choice(options.selection, options.sample_to, options.strata, not_tool_steps)
    if args.no_index and args.index_path is not None:
        raise click.UsageError("give --index or --no-index, not both.")
    spec = _spec_or_exit(
        args.judge_spec,
        model=args.model,
        votes=args.votes,
        step_chars=args.step_chars,
        base_url=args.base_url,
    )
    plan = prepare_run(
        _source(paths, args, options),
        spec,
        options,
        live=_live_dump_or_exit(args.live_catalog),
        kept=_earlier_judgments(args.out),
        dry_run=args.dry_run,
    )
    if plan.refusal and not args.dry_run:  # written in the spending log as refused
        _refuse(execute(plan).error)
    _refuse(plan.refusal)  # what the run refuses, the dry run refuses, before any request
    assert plan.estimate is not None
    for line in plan.sample:
        click.echo(line)
    _print_estimate(plan.estimate, options.unit, spec.votes, len(plan.conditions))
    if args.dry_run:
        return
    if not plan.units and plan.cascade is None:
        if plan.sampled:
            click.echo("Nothing to ask: this judge has judged every sampled step already.")
            return
        click.echo(
            f"Nothing to judge: no {options.unit} with a model response was found.", err=True
        )
        sys.exit(EXIT_NOTHING_LOADED)
    if plan.run_refusal:  # written in the spending log as refused
        _refuse(execute(plan).error)
    if spec.base_url and not args.base_url:  # a spec may come from someone else: say where
        click.echo(
            f"Requests go to {spec.base_url}, the judge spec's base_url, with the key from "
            "the environment (--base-url names another endpoint).",
            err=True,
        )
    with tqdm(total=len(plan.units or []), unit=options.unit, disable=None, file=sys.stderr) as bar:
        outcome = execute(plan, on_unit=lambda: bar.update(1))
    _refuse(outcome.error)
    assert args.out is not None
    try:  # other judges' lines are never lost
        Path(args.out).write_text("".join(j.model_dump_json() + "\n" for j in outcome.merged))
    except OSError as error:
        click.echo(f"{args.out}: cannot be written ({error.strerror}).", err=True)
        sys.exit(1)
    click.echo(f"judge: {spec.judge_id} ({spec.model}, {spec.votes} votes)")
    for line in outcome.summary:
        click.echo(line)
    _print_changed(outcome.changes)
    kept = len(outcome.merged) - len(outcome.judgments)
    click.echo(
        f"Wrote {len(outcome.judgments)} judgments to {args.out}"
        + (f" (and kept {kept} of earlier runs there)" if kept else "")
    )


@dataclass(frozen=True)
class _Given:
    """What ``tsq judge`` takes besides the run's options (``analysis.judge.JudgeOptions``,
    whose fields are the options of the same names): the inputs, the judge and its overrides,
    and what becomes of the judgments."""

    paths: tuple[str, ...]
    current: bool
    judge_spec: str | None
    model: str | None
    votes: int | None
    step_chars: int | None
    base_url: str | None
    dry_run: bool
    out: str | None
    live_catalog: str | None
    index_path: str | None
    no_index: bool


def _source(paths: tuple[str, ...], args: _Given, options: JudgeOptions) -> UnitSource:
    """The index, brought up to date for PATHS (steps that called tools), else the files."""
    from analysis.index import FromFiles, FromIndex

    if not args.no_index and options.unit == "step" and not options.text_steps:
        index_path = args.index_path
        return FromIndex(paths, index_path, update=lambda: update_or_exit(paths, index_path, None))
    return FromFiles(paths, read=lambda: _load_or_exit(paths))


def _refuse(refusal: str | None) -> None:
    """A run that must not start (nor its dry run): one sentence, exit 2."""
    if refusal:
        click.echo(refusal, err=True)
        sys.exit(EXIT_REFUSED)


def _check_choice(
    selection: str, sample_to: float | None, strata: str | None, not_tool_steps: bool
) -> None:
    """--steps, --sample-to and --strata that cannot go together are a usage error."""
    from analysis.render import parse_step_selection

    try:
        parse_step_selection(selection)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--steps") from None
    if strata is not None and sample_to is None:
        raise click.UsageError("--strata is for --sample-to.")
    if sample_to is not None and not_tool_steps:
        raise click.UsageError(
            "--sample-to samples steps that called tools: not with --unit turn or --text-steps."
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


def _print_changed(changes: list[VerdictChange] | None) -> None:
    """The steps whose majority verdict differs from the earlier judgment of the same step."""
    if changes is None:
        return
    click.echo(f"verdicts changed from earlier judges of the same steps: {len(changes)}")
    for change in changes:
        click.echo(
            f"  {change.item_id} [{change.condition}]: {change.before} -> {change.after} "
            f"({change.before_judge} -> {change.after_judge})"
        )
