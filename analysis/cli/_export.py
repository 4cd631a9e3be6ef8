"""`tsq export` and `tsq send`: sessions as OTLP traces, to a file or an endpoint."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from analysis.cli._common import (
    DEFAULT_MAX_CHARS,
    _can_ask,
    _judgments_or_exit,
    _live_dump_or_exit,
    _load_or_exit,
    _paths_or_current,
    current_option,
    live_dump_option,
)

if TYPE_CHECKING:
    from analysis.export import SendPreview


riding_judgments_option = click.option(
    "--judgments",
    type=click.Path(dir_okay=False),
    help="JSONL from tsq judge: full-condition judgments ride on the spans they judged.",
)


@click.command()
@click.argument("paths", nargs=-1)
@current_option
@click.option(
    "--out", required=True, type=click.Path(dir_okay=False), help="OTLP/JSON file to write."
)
@live_dump_option
@riding_judgments_option
def export(
    paths: tuple[str, ...],
    current: bool,
    out: str,
    live_catalog: str | None,
    judgments: str | None,
) -> None:
    """Write sessions as OTLP/JSON traces (one trace per turn, one chat span per model
    response; OTel GenAI + Pydantic AI)."""
    from analysis.export import export_counts, export_otlp_json  # OpenTelemetry: on use

    result = _load_or_exit(_paths_or_current(paths, current))
    document = export_otlp_json(
        result.sessions,
        _live_dump_or_exit(live_catalog),
        judgments=_judgments_or_exit(judgments),
    )
    try:
        Path(out).write_text(json.dumps(document, ensure_ascii=False))
    except OSError as error:
        click.echo(f"{out}: cannot be written ({error.strerror}).", err=True)
        sys.exit(1)
    counts = export_counts(document)
    click.echo(
        f"Wrote {len(result.sessions)} sessions, {counts.traces} traces, {counts.spans} spans "
        f"({counts.steps} steps, {counts.evaluations} evaluations) to {out}"
    )


def _headers(pairs: tuple[str, ...]) -> dict[str, str]:
    headers = {}
    for pair in pairs:
        key, separator, value = pair.partition("=")
        if not separator or not key.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--header")
        headers[key.strip()] = value
    return headers


def _print_preview(preview: SendPreview, endpoint: str) -> None:
    click.echo(f"About to send to {endpoint}:")
    click.echo(
        f"  {preview.sessions} sessions, {preview.turns} turns (traces), {preview.spans} spans, "
        f"{preview.bytes:,} bytes"
    )
    redacted = ", ".join(f"{kind} {n}" for kind, n in preview.redactions.items()) or "nothing"
    click.echo(f"  redacted: {redacted}")


@click.command(name="send")
@click.argument("paths", nargs=-1)
@click.option("--endpoint", required=True, help="Full OTLP/HTTP traces URL, e.g. …/v1/traces.")
@click.option(
    "--header", "header_pairs", multiple=True, help="Request header KEY=VALUE; repeatable."
)
@click.option("--yes", is_flag=True, help="Send without asking (for scripts).")
@current_option
@click.option(
    "--preview", "preview_only", is_flag=True, help="Show what would leave, and send nothing."
)
@click.option(
    "--max-chars",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_CHARS,
    show_default=True,
    help="Tool arguments and results are cut to this many characters.",
)
@click.option(
    "--timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True, help="Seconds."
)
@live_dump_option
@riding_judgments_option
def send_command(
    paths: tuple[str, ...],
    endpoint: str,
    header_pairs: tuple[str, ...],
    yes: bool,
    current: bool,
    preview_only: bool,
    max_chars: int,
    timeout: float,
    live_catalog: str | None,
    judgments: str | None,
) -> None:
    """Sanitize sessions and send them as OTLP traces, after showing what will leave."""
    from analysis.export import prepare, send  # httpx, OpenTelemetry, detect-secrets

    headers = _headers(header_pairs)
    paths = _paths_or_current(paths, current)
    result = _load_or_exit(paths, whole_results=True)
    prepared, preview = prepare(
        result.sessions, _live_dump_or_exit(live_catalog), max_chars, _judgments_or_exit(judgments)
    )
    _print_preview(preview, endpoint)
    click.echo(f"  {preview.steps} steps (chat spans), {preview.evaluations} evaluations")
    if preview_only:
        click.echo("Not sent (a preview).")
        return
    if not yes:
        if not _can_ask():
            click.echo("Not sent: pass --yes to send without a terminal to confirm on.", err=True)
            sys.exit(1)
        try:
            confirmed = click.confirm("Send?", default=False)
        except click.Abort:  # end of input or Ctrl-C at the prompt
            confirmed = False
        if not confirmed:
            click.echo("Not sent.")
            return
    outcome = send(prepared, endpoint, headers, timeout)
    for message in outcome.messages:
        click.echo(message, err=True)
    accepted = (
        f"{outcome.sessions_accepted} of {len(prepared)} sessions "
        f"({outcome.traces_accepted} traces) accepted"
    )
    if outcome.error is not None:
        click.echo(f"Send failed: {outcome.error}; {accepted}.", err=True)
        sys.exit(1)
    click.echo(f"Sent: {accepted}.")
