"""Every command's ``--help``, as it reads today, kept byte for byte in ``tests/golden/help/``:
the CLI's commands can move between modules without a user seeing a change.

After changing a command's help on purpose, write the files again with
``TSQ_WRITE_GOLDEN=1 python -m pytest tests/test_cli_help.py`` and read the diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_docs import COMMANDS

from analysis.cli import cli

GOLDEN = Path(__file__).parent / "golden" / "help"
WIDTH = 100


def help_text(name: str) -> str:
    args = [*name.split()[1:], "--help"]
    result = CliRunner().invoke(cli, args, prog_name="tsq", terminal_width=WIDTH)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_reads_as_it_did(name):
    golden = GOLDEN / f"{name.replace(' ', '-')}.txt"
    if os.environ.get("TSQ_WRITE_GOLDEN") == "1":
        golden.write_text(help_text(name), encoding="utf-8")
    assert golden.is_file(), f"no golden help for {name}: write it (see this module's docstring)"
    assert help_text(name) == golden.read_text(encoding="utf-8")


def test_every_golden_file_is_of_a_command():
    names = {f"{name.replace(' ', '-')}.txt" for name in COMMANDS}
    assert {path.name for path in GOLDEN.glob("*.txt")} <= names
