"""The README documents every command and option of the ``tsq`` CLI and every lint code, and
what it and the notebooks say of the package cannot drift from it.

A subcommand is documented in a section whose heading names it (``## `tsq judge`: …``), and
its options in that section; the group's own options (``--version``) anywhere. Lint codes are
rows of the code table in the ``tsq lint`` section. Every ``analysis.NAME`` the README and the
notebooks name resolves, the README's Python blocks run, and its Layout table lists the
package's subpackages."""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

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


def _texts() -> dict[str, str]:
    """The README and each notebook's cells (code and markdown), by file."""
    texts = {"README.md": README}
    for notebook in sorted((REPO / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        texts[notebook.name] = "\n".join("".join(cell["source"]) for cell in cells)
    return texts


def _resolves(dotted: str) -> bool:
    """``analysis.a.b``: each part an attribute of the one before, or a module under it."""
    parts = dotted.split(".")
    found = importlib.import_module(parts[0])
    for depth, part in enumerate(parts[1:], start=2):
        if hasattr(found, part):
            found = getattr(found, part)
            continue
        try:
            found = importlib.import_module(".".join(parts[:depth]))
        except ImportError:
            return False
    return True


NAMED = sorted(
    {
        (file, name)
        for file, text in _texts().items()
        for name in re.findall(r"\banalysis(?:\.[A-Za-z][A-Za-z0-9_]*)+", text)
    }
)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the README names renamed names
@pytest.mark.parametrize(("file", "name"), NAMED)
def test_every_name_the_docs_use_resolves(file, name):
    assert _resolves(name), f"{file} names {name}, which does not exist"


@pytest.mark.parametrize("block", re.findall(r"```python\n(.*?)```", README, re.DOTALL))
def test_the_readmes_python_blocks_run(block, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    exec(compile(block, "README.md", "exec"), {})  # the README's own code, as a reader runs it


def test_the_layout_table_lists_every_subpackage():
    layout = next(s for s in SECTIONS if s.startswith("## Layout"))
    listed = set(re.findall(r"^\| `(analysis\.[a-z_]+)` \|", layout, re.MULTILINE))
    package = Path(analysis.__file__).parent
    subpackages = {
        f"analysis.{path.parent.name}"
        for path in package.glob("*/__init__.py")
        if not path.parent.name.startswith("_")
    }
    assert subpackages <= listed
    assert {name for name in listed if not _resolves(name)} == set()
