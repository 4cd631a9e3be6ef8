"""`tsq council`: an LLM council labels the sessions."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from analysis.cli._common import (
    EXIT_NOTHING_LOADED,
    _load_or_exit,
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
def council(
    paths: tuple[str, ...],
    config_path: str,
    out: str | None,
    dry_run: bool,
    max_cost: float | None,
    cache_dir: str | None,
    timeout: float,
    concurrency: int | None,
) -> None:
    """Label each session with an LLM council: stage-1 judges label every field with their
    reasoning, then the chairman gives the council's label; labels as tsq agreement reads them.

    Exit status: 0 done; 1 --out cannot be written; 2 nothing to label, a bad option or config,
    the estimate above --max-cost, or the council cannot start (key, model).
    """
    import asyncio

    from tqdm import tqdm

    from analysis.council import (  # the SDKs: slow
        CouncilError,
        council_estimate,
        read_council_config,
        run_council,
        write_council_labels,
    )
    from analysis.llm import LLMError, cost_refusal, dollars

    _require_out(out, dry_run)
    if out is not None and Path(out).suffix not in (".csv", ".jsonl"):
        raise click.BadParameter("labels are written as .csv or .jsonl", param_hint="--out")
    try:
        config = read_council_config(config_path)
    except CouncilError as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    config = config.model_copy(
        update={"timeout": timeout} | ({"concurrency": concurrency} if concurrency else {})
    )
    result = _load_or_exit(paths)
    sessions = result.sessions
    estimate = council_estimate(sessions, config)
    if dry_run:
        for member in estimate.members:
            click.echo(
                f"{member.role} {member.model}: {member.requests} requests, about "
                f"{member.input_tokens:,} input and {member.output_tokens:,} output tokens, "
                f"{dollars(member.cost_usd)}"
            )
        click.echo(estimate.in_words())
        return
    if refusal := cost_refusal(estimate.cost_usd, max_cost):
        click.echo(refusal, err=True)
        sys.exit(EXIT_NOTHING_LOADED)
    with tqdm(total=len(sessions), unit="session", disable=None, file=sys.stderr) as bar:
        try:
            rows, stats = asyncio.run(
                run_council(
                    sessions,
                    config,
                    Path(cache_dir) if cache_dir else None,
                    on_item=lambda: bar.update(1),
                )
            )
        except LLMError as error:
            click.echo(str(error), err=True)
            sys.exit(EXIT_NOTHING_LOADED)
    assert out is not None
    try:
        write_council_labels(rows, out)
    except OSError as error:
        click.echo(f"{out}: cannot be written ({error.strerror}).", err=True)
        sys.exit(1)
    for item_id, rater, reason in stats.failures:
        click.echo(f"{item_id} {rater}: no labels ({reason}).", err=True)
    cost = dollars(stats.cost_usd)
    click.echo(
        f"{stats.answers_asked} answers asked, {stats.cache_hits} from the cache, "
        f"{stats.http_requests} HTTP requests; tokens: {stats.input_tokens:,} input, "
        f"{stats.output_tokens:,} output ({cost})"
    )
    click.echo(f"Wrote {len(rows)} labels of {len(sessions)} sessions to {out}")
