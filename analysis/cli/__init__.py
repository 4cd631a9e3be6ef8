"""``tsq``: the scripting face of the workbench. One module per command (or group of
commands), the options and helpers they share in ``_common``; this module makes the group."""

from __future__ import annotations

import click

from analysis.cli._align import align, labels_group
from analysis.cli._audit import audit
from analysis.cli._claude import claude_group
from analysis.cli._common import DEFAULT_MAX_CHARS, DEFAULT_STEP_CHARS, REQUEST_TIMEOUT
from analysis.cli._council import council
from analysis.cli._export import export, send_command
from analysis.cli._index import index_command, trends_command
from analysis.cli._ingest import ingest
from analysis.cli._judge import judge
from analysis.cli._lint import lint
from analysis.cli._report import report
from analysis.cli._scorer import score, scorer_group
from analysis.cli._study import adjudicate, agreement
from analysis.cli._watch import watch_command

__all__ = ["DEFAULT_MAX_CHARS", "DEFAULT_STEP_CHARS", "REQUEST_TIMEOUT", "cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tsq-workbench")
def cli() -> None:
    """TSQ Workbench: judge a coding agent's tool choices."""


for command in (
    ingest,
    export,
    send_command,
    judge,
    lint,
    agreement,
    adjudicate,
    report,
    council,
    audit,
    align,
    labels_group,
    claude_group,
    index_command,
    trends_command,
    watch_command,
    scorer_group,
    score,
):
    cli.add_command(command)


def main() -> None:
    cli()
