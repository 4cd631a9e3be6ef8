"""`tsq report`: one HTML file to share."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from analysis.cli._common import (
    EXIT_NOTHING_LOADED,
    _existing_store,
    _judgments_or_exit,
    _load_or_exit,
    _study_or_exit,
)
from analysis.cli._index import (
    collection_or_exit,
    index_path_option,
    no_index_option,
)

if TYPE_CHECKING:
    from analysis.index import Collection
    from analysis.models import LoadResult


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--judgments",
    type=click.Path(dir_okay=False),
    help="JSONL from tsq judge (judgments found among PATHS are read too; these win).",
)
@click.option(
    "--judge-id",
    help="Report this judge's judgments only (a judge_id, or a model for files from before "
    "judge specs).",
)
@click.option(
    "--labels",
    type=click.Path(),
    help="A council-vs-human study (folder or labels file): adds its five tables.",
)
@click.option(
    "--db",
    type=click.Path(dir_okay=False),
    help="With --labels: the adjudication store (default: the study's own, if any).",
)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="HTML file to write.")
@click.option(
    "--show-paths",
    is_flag=True,
    help="Write file names in full (default: home folders as ~ and /home/USER).",
)
@index_path_option
@no_index_option
def report(
    paths: tuple[str, ...],
    judgments: str | None,
    judge_id: str | None,
    labels: str | None,
    db: str | None,
    out: str,
    show_paths: bool,
    index_path: str | None,
    no_index: bool,
) -> None:
    """Write one self-contained HTML report: session TSQ, split votes, findings, charts,
    and with --labels the agreement tables before and after reconciliation. A session judged
    by several judges is reported with its own judge's (the one with most judgments in it),
    unless --judge-id names one. Reads through the index (brought up to date first), unless
    --no-index: only the judged sessions are read again from their files.

    Exit status: 0 when the report was written, 1 when OUT cannot be written, 2 when nothing
    could be loaded or the judgments file or labels cannot be used.
    """
    from analysis.judge import judge_names, merge_judgments, of_judge
    from analysis.report import (  # Altair, vl-convert: on use
        ReportData,
        build_report,
        report_findings,
        study_sections,
    )
    from analysis.study import study_tables

    source: LoadResult | Collection
    if no_index:
        source = _load_or_exit(paths)
        found = source.judgments
    else:
        source = collection = collection_or_exit(paths, index_path)
        found = collection.every_judgment()
    judged = merge_judgments(found, _judgments_or_exit(judgments))
    if judge_id is not None:
        if judge_id not in judge_names(judged):
            known = ", ".join(judge_names(judged)) or "none"
            click.echo(
                f"--judge-id {judge_id}: no such judge among the judgments ({known}).", err=True
            )
            sys.exit(EXIT_NOTHING_LOADED)
        judged = of_judge(judged, judge_id)
    findings = report_findings(source, judged)
    extra = []
    labelled = ""
    if labels is not None:
        study = _study_or_exit(labels, None)
        extra = study_sections(study_tables(study, _existing_store(labels, db)))
        labelled = f", agreement tables for {study.labels.frame['item_id'].n_unique()} items"
    data = ReportData.of(source)
    document = build_report(source, judged, findings, extra_sections=extra, show_paths=show_paths)
    sessions, turns = data.base.height, int(data.base["turns"].sum())
    try:
        Path(out).write_text(document, encoding="utf-8")
    except OSError as error:
        click.echo(f"{out}: cannot be written ({error.strerror}).", err=True)
        sys.exit(1)
    click.echo(
        f"Wrote {out}: {sessions} sessions, {turns} turns, "
        f"{len(judged)} judgments, {len(findings)} findings{labelled}"
    )
