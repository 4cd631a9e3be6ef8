"""`tsq audit`: the spending log, a run a line (or as JSON)."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from analysis.judge import AuditRow


@click.command("audit")
@click.option("--json", "as_json", is_flag=True, help="The runs as a JSON array (AuditRow).")
@click.option(
    "--since",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    help="Only runs started on or after this day (UTC), as YYYY-MM-DD.",
)
@click.option("--who", help="Only this person's runs (an email, anonymous, local).")
def audit(as_json: bool, since: datetime | None, who: str | None) -> None:
    """Print the spending log: every judge and council run, local and served, with who ran
    it, when, its estimate, what it cost and how it ended; then what each person spent.

    The log is audit.sqlite in the data folder ($TSQ_DATA_DIR, else the user's data folder).
    Exit status: 0; 1 when the log cannot be read.
    """
    import json
    import sqlite3

    from analysis.judge import AuditLog

    log = AuditLog()
    try:
        rows = log.rows(since.date() if since else None, who) if log.path.is_file() else []
    except (OSError, sqlite3.Error) as error:
        click.echo(f"{log.path}: the spending log cannot be read ({error}).", err=True)
        sys.exit(1)
    if as_json:
        click.echo(json.dumps([row.model_dump(mode="json") for row in rows], indent=2))
        return
    if not rows:
        click.echo(f"No runs in the spending log ({log.path}).")
        return
    for row in rows:
        click.echo(_in_words(row))
    for line in _totals(rows):
        click.echo(line)


def _in_words(row: AuditRow) -> str:
    """A run in one line: its number, when (UTC), who, what, its estimate, cost and end."""
    when = row.started.replace("T", " ").removesuffix("+00:00")
    unit = "session" if row.kind == "council" else "unit"
    if row.outcome == "refused":
        cost = "nothing spent"
    elif row.outcome == "running":
        cost = "not settled"
    else:
        cost = f"cost {_amount(row.actual_usd)}"
    ended = f"{row.outcome}: {row.reason}" if row.reason else row.outcome
    return (
        f"#{row.run} {when} UTC, {row.who}: {row.kind} {row.judge_id or '(no judge id)'} on "
        f"{row.steps} {unit}{'' if row.steps == 1 else 's'}, estimated "
        f"{_amount(row.estimated_usd)}, {cost}; {ended}"
    )


def _amount(value: float | None) -> str:
    from analysis.llm import dollars

    return "unknown" if value is None else dollars(value)


def _totals(rows: list[AuditRow]) -> list[str]:
    """What each person spent over the runs listed (a run of unknown cost said apart)."""
    from analysis.llm import dollars

    lines = []
    for person in dict.fromkeys(row.who for row in rows):
        theirs = [row for row in rows if row.who == person]
        settled = [row for row in theirs if row.outcome not in ("refused", "running")]
        spent = sum(row.actual_usd for row in settled if row.actual_usd is not None)
        unknown = sum(row.actual_usd is None for row in settled)
        running = sum(row.outcome == "running" for row in theirs)
        extra = [f"{unknown} of unknown cost"] if unknown else []
        extra += [f"{running} not settled"] if running else []
        lines.append(
            f"{person}: {len(theirs)} run{'' if len(theirs) == 1 else 's'}, spent "
            f"{dollars(spent)}" + (f" ({', '.join(extra)})" if extra else "")
        )
    return lines
