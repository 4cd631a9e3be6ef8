"""The README documents every command and option of the ``tsq`` CLI and every lint code.

A subcommand is documented in a section whose heading names it (``## `tsq judge`: …``), and
its options in that section; the group's own options (``--version``) anywhere. Lint codes are
rows of the code table in the ``tsq lint`` section."""

from __future__ import annotations

import re
from collections.abc import Iterator

import click
import pytest
from conftest import REPO

import analysis
from analysis.cli import cli

README = (REPO / "README.md").read_text(encoding="utf-8")
SECTIONS = re.split(r"(?m)^(?=## )", README)


def commands(
    command: click.Command, path: tuple[str, ...] = ("tsq",)
) -> Iterator[tuple[str, click.Command]]:
    """Every command of the tree, the group itself first, each with its full name."""
    yield " ".join(path), command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from commands(sub, (*path, name))


COMMANDS = dict(commands(cli))
OPTIONS = sorted(
    (name, flag)
    for name, command in COMMANDS.items()
    for param in command.params
    if isinstance(param, click.Option)
    for flag in [*param.opts, *param.secondary_opts]
    if flag.startswith("--")
)


def mentions(text: str, word: str) -> bool:
    """``word`` is in ``text`` as a whole token (``--by`` is not found in ``--bytes``)."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def section_of(command: str) -> str:
    """The README section about a command: the whole README for the group itself."""
    if command == "tsq":
        return README
    named = [s for s in SECTIONS if f"`{command}`" in s.splitlines()[0]]
    assert len(named) == 1, f"README.md needs one section headed with `{command}`"
    return named[0]


def test_the_tree_is_walked():
    assert {"tsq", "tsq ingest", "tsq judge", "tsq lint"} <= set(COMMANDS)
    assert ("tsq judge", "--max-cost") in OPTIONS


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_its_section(name):
    assert mentions(section_of(name), name)


@pytest.mark.parametrize(("command", "flag"), OPTIONS, ids=[" ".join(o) for o in OPTIONS])
def test_every_option_is_documented_with_its_command(command, flag):
    assert mentions(section_of(command), flag), f"README.md does not document {command} {flag}"


@pytest.mark.parametrize("code", analysis.CODES)
def test_every_lint_code_is_in_the_readme_table(code):
    table_rows = [line for line in section_of("tsq lint").splitlines() if line.startswith("| ")]
    assert any(row.startswith(f"| `{code}` |") for row in table_rows), (
        f"README.md's `tsq lint` section has no row for the lint code {code}"
    )
