"""The documentation (the site under ``docs/``, with the README and CONTRIBUTING.md) documents
every command and option of the ``tsq`` CLI and every lint code, and what it and the notebooks
say of the package cannot drift from it.

A subcommand is documented in a section whose heading names it (``## `tsq judge`: …``; the
section runs to the next heading of its level or above), and its options in that section; the
group's own options (``--version``) anywhere. The generated CLI reference (``docs/cli.md``,
mkdocs-click over ``analysis.cli:cli``) documents them all once more, each command in its own
section. Lint codes are rows of the code table in the ``tsq lint`` section. Every
``analysis.NAME`` the docs and the notebooks name resolves, the docs' Python blocks run, the
Layout table lists the package's subpackages and each subpackage has its API page, the README's
links lead to files, and the site builds with ``mkdocs build --strict``."""

from __future__ import annotations

import html
import importlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from conftest import REPO

import analysis
from analysis.cli import cli

DOCS = REPO / "docs"
FILES = [
    REPO / "README.md",
    REPO / "CONTRIBUTING.md",
    REPO / "CHANGELOG.md",
    *sorted(DOCS.rglob("*.md")),
]
TEXTS = {
    path.relative_to(REPO).as_posix(): path.read_text(encoding="utf-8")
    for path in FILES
    if path.is_file()
}
ALL = "\n".join(TEXTS.values())


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


def sections(text: str) -> Iterator[tuple[str, str]]:
    """(heading line, section) of every Markdown heading outside code: a section runs to the
    next heading of its level or above."""
    lines = text.splitlines()
    headings, fence = [], False
    for number, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence and (match := re.match(r"(#{1,6}) ", line)):
            headings.append((number, len(match.group(1))))
    for index, (start, level) in enumerate(headings):
        end = next((n for n, lvl in headings[index + 1 :] if lvl <= level), len(lines))
        yield lines[start], "\n".join(lines[start:end])


SECTIONS = [section for text in TEXTS.values() for section in sections(text)]


def section_of(command: str) -> str:
    """The docs' section about a command: all the docs for the group itself."""
    if command == "tsq":
        return ALL
    named = [body for heading, body in SECTIONS if f"`{command}`" in heading]
    assert len(named) == 1, f"the docs need one section headed with `{command}`"
    return named[0]


def test_the_tree_is_walked():
    assert {"tsq", "tsq ingest", "tsq judge", "tsq lint"} <= set(COMMANDS)
    assert ("tsq judge", "--max-cost") in OPTIONS


def test_the_docs_are_read():
    assert {"README.md", "CONTRIBUTING.md", "docs/index.md", "docs/judge.md"} <= set(TEXTS)
    assert len([name for name in TEXTS if name.startswith("docs/")]) >= 20


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_its_section(name):
    assert mentions(section_of(name), name)


@pytest.mark.parametrize(("command", "flag"), OPTIONS, ids=[" ".join(o) for o in OPTIONS])
def test_every_option_is_documented_with_its_command(command, flag):
    assert mentions(section_of(command), flag), f"the docs do not document {command} {flag}"


@pytest.mark.parametrize("code", analysis.findings.CODES)
def test_every_lint_code_is_in_the_docs_table(code):
    table_rows = [line for line in section_of("tsq lint").splitlines() if line.startswith("| ")]
    assert any(row.startswith(f"| `{code}` |") for row in table_rows), (
        f"the docs' `tsq lint` section has no row for the lint code {code}"
    )


def _texts() -> dict[str, str]:
    """The docs and each notebook's cells (code and markdown), by file."""
    texts = dict(TEXTS)
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


def test_names_are_found():
    assert ("docs/python.md", "analysis.views.tool_calls_frame") in NAMED


@pytest.mark.parametrize(("file", "name"), NAMED)
def test_every_name_the_docs_use_resolves(file, name):
    assert _resolves(name), f"{file} names {name}, which does not exist"


BLOCKS = [
    (file, block)
    for file, text in TEXTS.items()
    for block in re.findall(r"```python\n(.*?)```", text, re.DOTALL)
]


def test_python_blocks_are_found():
    assert {file for file, _ in BLOCKS} >= {"docs/python.md"}


@pytest.mark.parametrize(("file", "block"), BLOCKS, ids=[file for file, _ in BLOCKS])
def test_the_docs_python_blocks_run(file, block, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    exec(compile(block, file, "exec"), {})  # the docs' own code, as a reader runs it


SUBPACKAGES = sorted(
    f"analysis.{path.parent.name}"
    for path in Path(analysis.__file__).parent.glob("*/__init__.py")
    if not path.parent.name.startswith("_")
)


def test_the_layout_table_lists_every_subpackage():
    layouts = [
        body
        for file, text in TEXTS.items()
        if file.startswith("docs/")
        for heading, body in sections(text)
        if re.fullmatch(r"#+ Layout", heading)
    ]
    assert len(layouts) == 1, "the site needs one section headed Layout"
    listed = set(re.findall(r"^\| `(analysis\.[a-z_]+)` \|", layouts[0], re.MULTILINE))
    assert set(SUBPACKAGES) <= listed
    assert {name for name in listed if not _resolves(name)} == set()


@pytest.mark.parametrize(
    "name",
    [name for name in SUBPACKAGES if (REPO / name.replace(".", "/") / "__init__.pyi").is_file()],
)
def test_every_subpackage_face_has_its_api_page(name):
    """Each subpackage that lists its public names in an ``__init__.pyi`` is documented from
    them (mkdocstrings, ``::: analysis.NAME``), on a page of its own in the site's nav."""
    file = f"api/{name.replace('.', '-')}.md"
    assert (DOCS / file).is_file(), f"docs/{file} is missing"
    assert re.search(rf"^::: {re.escape(name)}$", (DOCS / file).read_text(encoding="utf-8"), re.M)
    assert f"{name}: {file}" in (REPO / "mkdocs.yml").read_text(encoding="utf-8")


def test_the_top_level_has_its_api_page():
    assert re.search(r"^::: analysis$", (DOCS / "api" / "package.md").read_text(), re.M)


def test_the_cli_reference_is_generated_from_the_commands():
    reference = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert "::: mkdocs-click" in reference
    assert ":module: analysis.cli" in reference
    assert ":command: cli" in reference
    assert ":prog_name: tsq" in reference


LINKS = [
    (file, target)
    for file in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", TEXTS.get(file, ""))
    if "://" not in target
]


def test_links_are_found():
    assert ("README.md", "docs/judge.md") in LINKS


@pytest.mark.parametrize(("file", "target"), LINKS, ids=[f"{f}->{t}" for f, t in LINKS])
def test_the_readmes_links_lead_to_files(file, target):
    assert (REPO / target).exists(), f"{file} links to {target}, which does not exist"


def test_the_readme_stays_short():
    """The README says what this is, how to start and where to read on; the rest is the site."""
    lines = TEXTS["README.md"].count("\n")
    assert lines <= 250, f"README.md has {lines} lines: move what it explains into docs/"


def test_the_screenshot_is_small():
    shot = DOCS / "images" / "overview.png"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size < 300_000


BUILT_SITE = pytest.mark.xdist_group("docs-site")
"""The tests that read the built site: on one worker, so that it is built once."""


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The site, built as ``make test`` builds it: any warning (a broken link or anchor, a page
    left out of the nav, a name mkdocstrings cannot find) fails it."""
    folder = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return folder


@pytest.mark.slow
@BUILT_SITE
def test_the_site_builds_strict(site):
    assert (site / "index.html").is_file()
    assert (site / "serving" / "index.html").is_file()
    home = html.unescape(re.sub(r"<[^>]+>", "", (site / "index.html").read_text("utf-8")))
    assert "A five-minute tour" in home
    assert "tsq align sample_data/alignment" in home


def _reference_sections(page: str) -> dict[str, str]:
    """The generated CLI reference's text per command: from its heading to the next one."""
    parts = re.split(r"<h[1-6] id=\"[^\"]*\">", page)
    found = {}
    for part in parts[1:]:
        text = html.unescape(re.sub(r"<[^>]+>", "", part))
        found[text.split("¶")[0].strip()] = text
    return found


@pytest.mark.slow
@BUILT_SITE
def test_the_generated_reference_has_every_command_and_option(site):
    reference = _reference_sections((site / "cli" / "index.html").read_text(encoding="utf-8"))
    assert set(COMMANDS) <= set(reference), "the CLI reference lacks a command"
    for command, flag in OPTIONS:
        assert mentions(reference[command], flag), f"the CLI reference lacks {command} {flag}"
    for name in COMMANDS:
        help_text = COMMANDS[name].help or ""
        first = help_text.strip().splitlines()[0] if help_text.strip() else ""
        assert " ".join(first.split()[:5]) in " ".join(reference[name].split())


@pytest.mark.slow
@BUILT_SITE
def test_every_api_page_documents_names(site):
    """mkdocstrings found the public names of each face, not an empty module."""
    for name in ["package", *(name.replace(".", "-") for name in SUBPACKAGES)]:
        page = site / "api" / name / "index.html"
        if not page.is_file():
            continue
        text = page.read_text(encoding="utf-8")
        assert text.count('class="doc doc-heading"') >= 2, f"{name}'s API page lists no names"
