"""`tsq lint`: why a step scored what it did."""

from __future__ import annotations

import json

import click

from analysis.cli._common import (
    _judgments_or_exit,
    _live_dump_or_exit,
    _load_or_exit,
    live_dump_option,
)
from analysis.cli._index import (
    collection_or_exit,
    index_path_option,
    no_index_option,
)


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--judgments", type=click.Path(dir_okay=False), help="JSONL from tsq judge.")
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
@live_dump_option
@index_path_option
@no_index_option
def lint(
    paths: tuple[str, ...],
    judgments: str | None,
    as_json: bool,
    live_catalog: str | None,
    index_path: str | None,
    no_index: bool,
) -> None:
    """Explain suspicious scores: findings per step, turn and session, with stable codes.
    The judgments are those found among PATHS and those of --judgments (which win), as in
    tsq report and the workbench. Reads through the index (brought up to date first), unless
    --no-index or --live-catalog; only the judged sessions are read again from their files."""
    from analysis.findings import collect_findings
    from analysis.judge import merge_judgments, rater_in_words, scorers_among

    loaded = _judgments_or_exit(judgments)
    if no_index or live_catalog is not None:
        result = _load_or_exit(paths)
        judged = merge_judgments(result.judgments, loaded)
        findings = collect_findings(result.sessions, judged, live=_live_dump_or_exit(live_catalog))
        scorers = scorers_among(judged)
    else:
        collection = collection_or_exit(paths, index_path)
        judged = merge_judgments(collection.every_judgment(), loaded)
        findings = collection.findings(frame=collection.findings_with(judged))
        scorers = scorers_among(judged, collection.scorers)
    if as_json:
        click.echo(json.dumps({"findings": [f.model_dump() for f in findings]}))
        return
    from analysis import words

    for finding in findings:
        where = "session" if finding.turn_index is None else f"turn {finding.turn_index}"
        if finding.step_index is not None:
            where += f" step {finding.step_index}"
            if finding.parent_call_id:
                where += f" (subagent of call {finding.parent_call_id})"
        if finding.condition is not None:
            where += f" [{words(finding.condition)}]"
        click.echo(
            f"{finding.session_id} {where} {finding.severity.upper()} {finding.code} "
            f"({words(finding.code)})"
        )
        click.echo(f"    {finding.message}")
    for name in scorers:
        click.echo(
            f"judge {rater_in_words(name, scorers)}: its scores are probabilities, not votes"
        )
    counts = {s: sum(f.severity == s for f in findings) for s in ("error", "warning", "info")}
    click.echo(", ".join(f"{n} {kind}s" for kind, n in counts.items()) + " found")
