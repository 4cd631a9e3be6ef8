"""`tsq council`: an LLM council labels the sessions."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from analysis.cli._common import (
    EXIT_NOTHING_LOADED,
    EXIT_REFUSED,
    _load_or_exit,
    _parsed,
    _require_out,
    max_cost_option,
    timeout_option,
)


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--config",
    "config_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="Council config (TOML): stage-1 judges, chairman, fields.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    help="Labels to write, .csv or .jsonl (not for --dry-run).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print what the council would be asked and its cost; no request.",
)
@max_cost_option
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Answer cache folder.")
@timeout_option
@click.option(
    "--concurrency",
    type=click.IntRange(1, 64),
    help="Requests in flight per model (default: the config's, else 4).",
)
def council(**given: Any) -> None:
    """Label each session with an LLM council: stage-1 judges label every field with their
    reasoning, then the chairman gives the council's label; labels as tsq agreement reads them.

    Exit status: 0 done; 1 --out cannot be written; 2 nothing to label, a bad option or config,
    the estimate above --max-cost, or the council cannot start (key, model).
    """
    from tqdm import tqdm

    from analysis._format import counted
    from analysis.council import (  # the SDKs: slow
        CouncilError,
        CouncilOptions,
        execute,
        prepare_run,
        read_council_config,
        write_council_labels,
    )
    from analysis.llm import dollars

    args, options = _parsed(given, _Given, CouncilOptions)
    _require_out(args.out, args.dry_run)
    if args.out is not None and Path(args.out).suffix not in (".csv", ".jsonl"):
        raise click.BadParameter("labels are written as .csv or .jsonl", param_hint="--out")
    try:
        config = read_council_config(args.config_path)
    except CouncilError as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    plan = prepare_run(_load_or_exit(args.paths).sessions, config, options)
    if args.dry_run:
        for member in plan.estimate.members:
            click.echo(
                f"{member.role} {member.model}: {counted(member.requests, 'request')}, about "
                f"{member.input_tokens:,} input and {member.output_tokens:,} output tokens, "
                f"{dollars(member.cost_usd)}"
            )
        click.echo(plan.estimate.in_words())
        return
    if plan.run_refusal:  # written in the spending log as refused
        click.echo(execute(plan).error, err=True)
        sys.exit(EXIT_REFUSED)
    with tqdm(total=len(plan.sessions), unit="session", disable=None, file=sys.stderr) as bar:
        outcome = execute(plan, on_item=lambda: bar.update(1))
    if outcome.error:
        click.echo(outcome.error, err=True)
        sys.exit(EXIT_REFUSED)
    assert args.out is not None
    try:
        write_council_labels(outcome.rows, args.out)
    except OSError as error:
        click.echo(f"{args.out}: cannot be written ({error.strerror}).", err=True)
        sys.exit(1)
    for failure in outcome.failures:
        click.echo(failure, err=True)
    click.echo(outcome.summary[0])
    click.echo(
        f"Wrote {counted(len(outcome.rows), 'label')} of "
        f"{counted(len(plan.sessions), 'session')} to {args.out}"
    )


@dataclass(frozen=True)
class _Given:
    """What ``tsq council`` takes besides the run's options (``analysis.council.CouncilOptions``,
    whose fields are the options of the same names)."""

    paths: tuple[str, ...]
    config_path: str
    out: str | None
    dry_run: bool
