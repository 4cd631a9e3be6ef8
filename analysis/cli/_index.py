"""``tsq index``: build or update the on-disk index of a collection of transcripts.

Registered on the ``tsq`` group by ``analysis.cli``; imports the analysis package only inside
the command, like the others.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from analysis.index import Collection, IndexSummary

EXIT_UNUSABLE = 2

index_path_option = click.option(
    "--index",
    "index_path",
    type=click.Path(dir_okay=False),
    help="The index file (DuckDB). Default: index.duckdb in the user's cache folder.",
)
judge_id_option = click.option(
    "--judge-id", help="Whose judgments (default: each session's own judge)."
)


no_index_option = click.option(
    "--no-index",
    is_flag=True,
    help="Read every file directly instead of through the index.",
)


label_stores_option = click.option(
    "--labels",
    "label_stores",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="A label store (SQLite) whose people's step labels the index takes in too; repeatable.",
)


def collection_or_exit(
    paths: tuple[str, ...],
    index_path: str | None,
    with_judgments: bool = True,
    label_stores: tuple[str, ...] = (),
) -> Collection:
    """The collection under ``paths`` through the index, brought up to date with a progress
    bar on a terminal and its summary line on stderr, and its issues on stderr; a problem, or
    no session under ``paths``, is one sentence and exit 2."""
    from tqdm import tqdm

    from analysis.cli._common import _issues_or_exit
    from analysis.index import Collection, IndexProblem

    with tqdm(unit="file", disable=None, file=sys.stderr, desc="indexing") as bar:
        try:
            collection = Collection(
                paths,
                index_path,
                with_judgments=with_judgments,
                on_file=lambda: bar.update(1),
                on_plan=lambda total: setattr(bar, "total", total),
                label_stores=label_stores,
                on_note=_note,
            )
        except IndexProblem as error:
            click.echo(f"{error}.", err=True)
            sys.exit(EXIT_UNUSABLE)
    _issues_or_exit(collection.issues(), bool(collection.session_ids), collection.why_empty())
    return collection


def update_or_exit(
    paths: tuple[str, ...],
    index_path: str | None,
    workers: int | None,
    label_stores: tuple[str, ...] = (),
) -> IndexSummary:
    """Bring the index up to date for ``paths`` with a progress bar on a terminal; a problem
    is one sentence and exit 2. What the index then holds is `tsq index`'s to print, not the
    other commands' (their summaries describe the paths they were given)."""
    from tqdm import tqdm

    from analysis.index import IndexProblem, update_index

    with tqdm(unit="file", disable=None, file=sys.stderr, desc="indexing") as bar:
        try:
            summary = update_index(
                paths,
                index_path,
                workers,
                on_file=lambda: bar.update(1),
                on_plan=lambda total: setattr(bar, "total", total),
                label_stores=label_stores,
                on_note=_note,
            )
        except IndexProblem as error:
            click.echo(f"{error}.", err=True)
            sys.exit(EXIT_UNUSABLE)
    return summary


def _note(sentence: str) -> None:
    """What the update waits for or takes over, on stderr above the progress bar."""
    from tqdm import tqdm

    tqdm.write(sentence, file=sys.stderr)


@click.command(name="index")
@click.argument("paths", nargs=-1, required=True)
@index_path_option
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    help="Processes parsing files at once (default: every core).",
)
@click.option(
    "--parquet",
    "parquet_dir",
    type=click.Path(file_okay=False),
    help="Also write the tables as Parquet here (replaced), partitioned by project and month.",
)
@label_stores_option
def index_command(
    paths: tuple[str, ...],
    index_path: str | None,
    workers: int | None,
    parquet_dir: str | None,
    label_stores: tuple[str, ...],
) -> None:
    """Build or update the index of the transcripts under PATHS: new and changed files are
    parsed, removed ones dropped, the rest left alone; prints one summary line.

    Exit status: 0 done; 2 the index cannot be used or written.
    """
    click.echo(update_or_exit(paths, index_path, workers, label_stores).in_words())
    if parquet_dir is not None:
        from analysis.index import IndexProblem, export_parquet

        try:
            written = export_parquet(index_path, parquet_dir)
        except (IndexProblem, OSError) as error:
            click.echo(f"{parquet_dir}: cannot be written ({error}).", err=True)
            sys.exit(EXIT_UNUSABLE)
        counts = ", ".join(f"{table} {n:,}" for table, n in written.items())
        click.echo(f"Wrote Parquet to {parquet_dir}: {counts}")


def _shifted(value: str) -> tuple[str, str]:
    first, sep, second = value.partition("..")
    if not sep or not first or not second:
        raise click.BadParameter("give two groups as A..B (e.g. 2.1.29..2.1.30)")
    return first, second


@click.command(name="trends")
@click.argument("paths", nargs=-1)
@index_path_option
@click.option(
    "--parquet",
    "parquet_dir",
    type=click.Path(file_okay=False, exists=True),
    help="Read the tables of tsq index --parquet folders (several machines' put together) "
    "instead of PATHS.",
)
@click.option(
    "--by",
    type=click.Choice(["tool", "model", "version", "project", "week", "agent"]),
    default="week",
    show_default=True,
    help="What to group the judged steps by.",
)
@judge_id_option
@click.option(
    "--compare",
    help="Two groups of --by as A..B: the change in TSQ with its interval, and the tools "
    "that moved most.",
)
@label_stores_option
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
def trends_command(
    paths: tuple[str, ...],
    index_path: str | None,
    label_stores: tuple[str, ...],
    parquet_dir: str | None,
    by: str,
    judge_id: str | None,
    compare: str | None,
    as_json: bool,
) -> None:
    """TSQ across the collection under PATHS, per tool, model, agent version, project, week or
    agent, each with its 95% interval; with --compare, two groups against each other. Reads
    through the index (brought up to date first).

    Exit status: 0 done; 2 the index cannot be used, or no step was judged.
    """
    import json

    from analysis._format import counted, interval, no_interval, share
    from analysis.index import (
        IndexProblem,
        ParquetTables,
        judge_in_words,
        moved_most,
        shift,
        step_scores,
        trends,
    )

    pair = _shifted(compare) if compare else None
    if parquet_dir is not None:
        with ParquetTables(parquet_dir) as tables:
            steps = step_scores(tables, judge_id)
            scorers = tables.scorers()
    elif not paths:
        raise click.UsageError("give PATHS, or --parquet.")
    else:
        collection = collection_or_exit(paths, index_path, False, label_stores)
        try:
            steps = collection.step_scores(judge_id)
            scorers = collection.scorers
        except IndexProblem as error:
            click.echo(f"{error}.", err=True)
            sys.exit(EXIT_UNUSABLE)
    if not steps["judged"].any():
        click.echo("No step under PATHS was judged (by that judge): run tsq judge.", err=True)
        sys.exit(EXIT_UNUSABLE)
    dimension = "tool" if by == "tool" else by  # click has checked it
    table = trends(steps, dimension)  # type: ignore[arg-type]
    moved = shift(steps, dimension, *pair) if pair else None  # type: ignore[arg-type]
    tools = (
        moved_most(steps, dimension, *pair) if pair and by != "tool" else []  # type: ignore[arg-type]
    )
    if as_json:
        click.echo(
            json.dumps(
                {
                    "judge": steps["judge"][0],
                    "by": by,
                    "groups": table.to_dicts(),
                    "compare": moved.model_dump() if moved else None,
                    "moved_most": [t.model_dump() for t in tools],
                }
            )
        )
        return
    click.echo(
        f"judge: {judge_in_words(steps, scorers)}; {int(steps['judged'].sum())} judged steps"
    )
    for row in table.iter_rows(named=True):
        tsq = "n/a" if row["tsq"] is None else f"{row['tsq']:.2f}"
        bounds_of_tsq = (
            f" [{row['tsq_low']:.2f}, {row['tsq_high']:.2f}]"
            if row["tsq_low"] is not None
            else no_interval(row["judged_sessions"] if row["judged"] else None)
        )
        split = "" if row["split_share"] is None else f", {share(row['split_share'])} split votes"
        if row["unscored_share"]:
            split += f", {share(row['unscored_share'])} unscored"
        sampled = "sampled: " if row["sampled"] else "on "
        bounds = (
            None if row["agreement_low"] is None else (row["agreement_low"], row["agreement_high"])
        )
        people = (
            f"; agrees with people on {share(row['agreement'])}"
            f"{interval(bounds, percent=True, sessions=row['labelled_sessions'])} of "
            f"{row['labelled']} labelled"
            if row["labelled"]
            else ""
        )
        click.echo(
            f"  {row[by]}: TSQ {tsq}{bounds_of_tsq} {sampled}"
            f"{row['judged']:,} of {row['steps']:,} steps"
            f"{split}; {counted(row['calls'], 'call')} ({row['calls_per_turn']:.1f} a turn), "
            f"{counted(row['errors'], 'error')}{people}"
        )
    if moved is not None:
        click.echo(moved.in_words())
        for tool in tools:
            click.echo(f"  {tool.by}: {tool.in_words()}")
