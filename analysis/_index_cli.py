"""``tsq index``: build or update the on-disk index of a collection of transcripts.

Registered on the ``tsq`` group by ``analysis.cli``; imports the analysis package only inside
the command, like the others.
"""

from __future__ import annotations

import sys

import click

EXIT_UNUSABLE = 2

index_path_option = click.option(
    "--index",
    "index_path",
    type=click.Path(dir_okay=False),
    help="The index file (DuckDB). Default: index.duckdb in the user's cache folder.",
)


def update_or_exit(paths: tuple[str, ...], index_path: str | None, workers: int | None) -> str:
    """Bring the index up to date for ``paths`` with a progress bar on a terminal; a problem
    is one sentence and exit 2. Returns the summary line."""
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
            )
        except IndexProblem as error:
            click.echo(f"{error}.", err=True)
            sys.exit(EXIT_UNUSABLE)
    return summary.in_words()


@click.command(name="index")
@click.argument("paths", nargs=-1, required=True)
@index_path_option
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    help="Processes parsing files at once (default: every core).",
)
def index_command(paths: tuple[str, ...], index_path: str | None, workers: int | None) -> None:
    """Build or update the index of the transcripts under PATHS: new and changed files are
    parsed, removed ones dropped, the rest left alone; prints one summary line.

    Exit status: 0 done; 2 the index cannot be used or written.
    """
    click.echo(update_or_exit(paths, index_path, workers))
