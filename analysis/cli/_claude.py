"""``tsq claude install`` and ``tsq claude uninstall``: the in-session ``/tsq-send`` command and
the ``SessionStart`` hook in Claude Code's settings.

Registered on the ``tsq`` group by ``analysis.cli``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click


def _base(user: bool, project: str | None) -> Path:
    if project is not None:
        return Path(project).expanduser().resolve() / ".claude"
    return Path.home() / ".claude"


scope_options = [
    click.option("--user", is_flag=True, help="Into ~/.claude (the default)."),
    click.option(
        "--project",
        type=click.Path(file_okay=False, exists=True),
        help="Into DIR/.claude, for one project.",
    ),
    click.option("--dry-run", is_flag=True, help="Say what would be written; write nothing."),
]


def _with_scope(command: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(scope_options):
        command = option(command)
    return command


@click.group(name="claude")
def claude_group() -> None:
    """Send from inside a live Claude Code session: its command and its session registry."""


def _run(action: str, user: bool, project: str | None, dry_run: bool) -> None:
    from analysis.claude import install, uninstall

    if user and project is not None:
        raise click.UsageError("give --user or --project DIR, not both.")
    try:
        said = (install if action == "install" else uninstall)(_base(user, project), dry_run)
    except (OSError, ValueError) as error:
        click.echo(f"{error}.", err=True)
        sys.exit(2)
    for line in said:
        click.echo(line)


@claude_group.command(name="install")
@_with_scope
def install_command(user: bool, project: str | None, dry_run: bool) -> None:
    """Write the /tsq-send command and merge the SessionStart hook into the settings; each
    file written is named. A command file of your own is never overwritten."""
    _run("install", user, project, dry_run)


@claude_group.command(name="uninstall")
@_with_scope
def uninstall_command(user: bool, project: str | None, dry_run: bool) -> None:
    """Remove exactly what tsq claude install wrote; the settings' other hooks stay."""
    _run("uninstall", user, project, dry_run)
