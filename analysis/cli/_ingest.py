"""`tsq ingest`: what was found per session, and the formats it reads."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from analysis.cli._common import (
    EXIT_NOTHING_LOADED,
    _counts,
)
from analysis.cli._index import (
    index_path_option,
    no_index_option,
    update_or_exit,
)

if TYPE_CHECKING:
    from analysis.ingest import IngestReport


def _print_report(report: IngestReport) -> None:
    from analysis import counted
    from analysis.ingest import grouped_issues

    for session in report.sessions:
        total = sum(session.tool_calls.values())
        click.echo(f"{session.session_id}  [{session.format}]  {session.source}")
        if session.thread_id != session.session_id:
            click.echo(
                f"  thread: {session.thread_id} (this session resumes it, by the session registry)"
            )
        click.echo(f"  turns: {session.turns}")
        click.echo(f"  tool calls: {total} ({_counts(session.tool_calls)})")
        sub_total = sum(session.subagent_tool_calls.values())
        click.echo(f"  subagent tool calls: {sub_total} ({_counts(session.subagent_tool_calls)})")
        click.echo(f"  parse issues: {len(session.issues)}")
        for group in grouped_issues(session.issues):
            click.echo(f"    {group}")
    for group in grouped_issues(report.totals.file_issues):
        click.echo(f"{group}", err=True)
    totals = report.totals
    if not report.sessions:
        return  # what could not be read is said above, one sentence per file and reason
    click.echo(
        f"{counted(totals.sessions, 'session')}, {counted(totals.turns, 'turn')}, "
        f"{counted(sum(totals.tool_calls.values()), 'tool call')}, "
        f"{counted(sum(totals.subagent_tool_calls.values()), 'subagent tool call')}, "
        f"{counted(totals.issues, 'issue')}, from {counted(totals.files, 'file')}"
    )


@click.command()
@click.argument("paths", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
@click.option(
    "--formats",
    "list_formats",
    is_flag=True,
    help="List the formats it reads, in the order they are tried, instead of reading PATHS.",
)
@click.option(
    "--catalog",
    type=click.Path(dir_okay=False),
    help="Tool catalog for OpenAI-format trajectories (default: the one beside them); the "
    "files are then read directly.",
)
@index_path_option
@no_index_option
def ingest(
    paths: tuple[str, ...],
    as_json: bool,
    list_formats: bool,
    catalog: str | None,
    index_path: str | None,
    no_index: bool,
) -> None:
    """Load transcripts (files or folders) and print what was found per session. Reads
    through the index (brought up to date first), unless --no-index or --catalog.

    Exit status: 0 when at least one session was loaded (with or without issues),
    2 when nothing could be loaded.
    """
    from analysis.ingest import why_nothing_loaded

    if list_formats:
        _print_formats(as_json)
        return
    if not paths:
        raise click.UsageError("give PATHS (or --formats).")
    if no_index or catalog is not None:
        from analysis.ingest import ingest_report, load

        report = ingest_report(load(paths, catalog=catalog))
    else:
        report = _indexed_report(paths, index_path)
    if as_json:
        click.echo(report.model_dump_json())
    else:
        _print_report(report)
    if not report.sessions:
        if not as_json and not report.totals.file_issues:
            click.echo(why_nothing_loaded(paths, report.totals.files, 0), err=True)
        sys.exit(EXIT_NOTHING_LOADED)


def _print_formats(as_json: bool) -> None:
    from analysis.ingest import formats

    listed = formats()
    if as_json:
        click.echo(json.dumps({"formats": listed}))
        return
    width = max(len(f["name"]) for f in listed)
    for entry in listed:
        click.echo(f"{entry['name']:<{width}}  {entry['kind']:<8}  {entry['what']}")


def _indexed_report(paths: tuple[str, ...], index_path: str | None) -> IngestReport:
    from analysis.index import IndexProblem, IndexReader

    update_or_exit(paths, index_path, None)  # what the index holds is `tsq index`'s to say
    try:
        with IndexReader(index_path) as reader:
            return reader.ingest_report(paths)
    except IndexProblem as error:
        click.echo(f"{error}.", err=True)
        sys.exit(EXIT_NOTHING_LOADED)
