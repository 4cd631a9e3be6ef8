"""What importing the package and running the CLI loads, that every lazy name resolves, and
that callers outside the package (the app, tests, scripts, benchmarks, notebooks) import public
names only.

``import analysis`` and ``tsq --help`` must load no statistics, charting, API or OTLP library
(nor polars, numpy or pandas); ``tsq ingest`` must not either. Each loads on first use.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HEAVY = (
    "statsmodels",
    "krippendorff",
    "altair",
    "vl_convert",
    "anthropic",
    "openai",
    "opentelemetry",
    "detect_secrets",
    "polars",
    "numpy",
    "pandas",
    "scipy",
    "httpx",
)
PACKAGES = (
    "analysis",
    "analysis.align",
    "analysis.index",
    "analysis.ingest",
    "analysis.catalog",
    "analysis.render",
    "analysis.judge",
    "analysis.findings",
    "analysis.views",
    "analysis.study",
    "analysis.export",
    "analysis.report",
    "analysis.llm",
    "analysis.council",
    "analysis.scorer",
)

# Run ``code`` (after sys.argv is set to ``argv``), then print the heavy modules it loaded.
_PROBE = """
import atexit, sys
HEAVY = {heavy!r}
atexit.register(
    lambda: print("LOADED", sorted(m for m in sys.modules if m.split(".")[0] in HEAVY))
)
sys.argv = {argv!r}
{code}
"""


def _heavy_loaded(code: str, argv: list[str] | None = None) -> list[str]:
    probe = _PROBE.format(heavy=set(HEAVY), argv=argv or ["tsq"], code=code)
    run = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    lines = [line for line in run.stdout.splitlines() if line.startswith("LOADED ")]
    assert lines, f"no probe output; exit {run.returncode}\n{run.stdout}\n{run.stderr}"
    return ast.literal_eval(lines[-1].removeprefix("LOADED "))


def test_import_analysis_loads_nothing_heavy() -> None:
    assert _heavy_loaded("import analysis") == []


def test_import_cli_loads_nothing_heavy() -> None:
    assert _heavy_loaded("import analysis.cli") == []


@pytest.mark.parametrize("argv", [["--help"], ["ingest", "--help"], ["judge", "--help"]])
def test_tsq_help_loads_nothing_heavy(argv: list[str]) -> None:
    code = "from analysis.cli import main\nmain()"
    assert _heavy_loaded(code, ["tsq", *argv]) == []


@pytest.mark.slow
@pytest.mark.parametrize("as_json", [True, False])
def test_tsq_ingest_loads_nothing_heavy(as_json: bool, tmp_path: Path) -> None:
    """Reading every file, or an index with nothing new to write (writing one takes pyarrow,
    which brings numpy): pydantic, msgspec and DuckDB only."""
    sample = str(REPO / "sample_data")
    index = str(tmp_path / "index.duckdb")
    subprocess.run(
        [sys.executable, "-m", "analysis", "index", sample, "--index", index], check=True
    )
    json_flag = ["--json"] if as_json else []
    for options in (["--no-index"], ["--index", index]):
        argv = ["tsq", "ingest", sample, *json_flag, *options]
        assert _heavy_loaded("from analysis.cli import main\nmain()", argv) == [], options


def test_cli_defaults_mirror_their_constants() -> None:
    """The CLI writes its option defaults out so that building the commands imports nothing."""
    from analysis import cli
    from analysis.export import DEFAULT_MAX_CHARS
    from analysis.llm import DEFAULT_TIMEOUT
    from analysis.render import DEFAULT_STEP_CHARS

    assert cli.DEFAULT_MAX_CHARS == DEFAULT_MAX_CHARS
    assert cli.DEFAULT_STEP_CHARS == DEFAULT_STEP_CHARS
    assert cli.REQUEST_TIMEOUT == DEFAULT_TIMEOUT


def _stub_names(package: str) -> set[str]:
    """The names an ``__init__.pyi`` re-exports (``from .x import name as name``)."""
    module = importlib.import_module(package)
    assert module.__file__ is not None
    stub = Path(module.__file__).with_suffix(".pyi")
    tree = ast.parse(stub.read_text(encoding="utf-8"))
    return {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


@pytest.mark.parametrize("package", PACKAGES)
def test_every_lazy_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    names = list(module.__all__)
    assert names, f"{package}.__all__ is empty"
    assert len(names) == len(set(names)), f"{package}.__all__ repeats a name"
    for name in names:
        value = getattr(module, name)  # raises where the stub names what its module lacks
        if inspect.isfunction(value) or inspect.isclass(value):
            # a function or class re-exported here is the project's own, not a stray import
            defined_in = value.__module__
            assert defined_in.split(".")[0] == "analysis", f"{package}.{name}: {defined_in}"
    assert set(names) <= set(dir(module)), f"dir({package}) lacks some of __all__"
    assert set(names) == _stub_names(package), f"{package}: __init__.pyi and __all__ differ"


def _private_imports(source: str) -> list[str]:
    """The ``analysis`` modules and names ``source`` imports that start with ``_`` below the
    package (``analysis._paths``, ``analysis.ingest._loader``, ``from analysis.x import _y``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("analysis"):
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names if alias.name.startswith("analysis")]
        else:
            continue
        found += [n for n in names if any(p.startswith("_") for p in n.split(".")[1:])]
    return found


CALLERS = sorted(
    [
        REPO / "app.py",
        *(REPO / "pages").glob("*.py"),
        *(REPO / "workbench").glob("*.py"),
        *(REPO / "tests").glob("*.py"),
        *(REPO / "scripts").glob("*.py"),
        *(REPO / "benchmarks").glob("*.py"),
    ]
)


@pytest.mark.parametrize("path", CALLERS, ids=lambda p: str(p.relative_to(REPO)))
def test_callers_import_public_names_only(path: Path) -> None:
    assert _private_imports(path.read_text(encoding="utf-8")) == []


STAGE_MODULES = sorted(
    path
    for path in (REPO / "analysis").rglob("*.py")
    if len(path.relative_to(REPO / "analysis").parts) > 1
)


@pytest.mark.parametrize("path", STAGE_MODULES, ids=lambda p: str(p.relative_to(REPO / "analysis")))
def test_stages_import_each_others_public_names_only(path: Path) -> None:
    """A stage reaches another through its face (``analysis.render``, not
    ``analysis.render._steps``); only its own modules and the helpers below every stage
    (``analysis._format``) are its to import privately."""
    own = path.relative_to(REPO / "analysis").parts[0]
    found = _private_imports(path.read_text(encoding="utf-8"))
    below = [name.split(".")[1] for name in found]  # its own stage, "_format", or another
    assert [n for n, part in zip(found, below, strict=True) if part[0] != "_" and part != own] == []


@pytest.mark.parametrize("notebook", sorted((REPO / "notebooks").glob("*.ipynb")), ids=str)
def test_notebooks_import_public_names_only(notebook: Path) -> None:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    code = ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "code"]
    lines = [
        line for block in code for line in block.splitlines() if not line.startswith(("%", "!"))
    ]
    assert _private_imports("\n".join(lines)) == []


def test_the_private_import_check_sees_every_form() -> None:
    source = (
        "import analysis._paths\nfrom analysis.ingest._loader import load\n"
        "from analysis.x import _y\nfrom analysis import models"
    )
    assert _private_imports(source) == [
        "analysis._paths",
        "analysis.ingest._loader.load",
        "analysis.x._y",
    ]


def _stage_imports() -> dict[str, set[str]]:
    """Which stages (subpackages of ``analysis``) each stage or base module imports, at any
    depth of its code (function-level imports included)."""
    imports: dict[str, set[str]] = {}
    for path in sorted((REPO / "analysis").rglob("*.py")):
        parts = path.relative_to(REPO / "analysis").parts
        source = parts[0] if len(parts) > 1 else path.stem
        found = imports.setdefault(source, set())
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = node.module.split(".")
                if names[0] == "analysis" and len(names) > 1 and names[1] != source:
                    found.add(names[1])
    return imports


def test_the_helpers_below_the_stages_import_no_stage():
    stages = {p.name for p in (REPO / "analysis").iterdir() if (p / "__init__.py").exists()}
    base = {
        name: imported & stages
        for name, imported in _stage_imports().items()
        if name not in stages and name != "__main__"
    }
    assert "models" in base
    assert "_scores" in base
    assert {name: found for name, found in base.items() if found} == {}


def test_the_stages_import_each_other_in_one_direction():
    import graphlib

    stages = {p.name for p in (REPO / "analysis").iterdir() if (p / "__init__.py").exists()}
    graph = {
        name: imported & stages for name, imported in _stage_imports().items() if name in stages
    }
    graphlib.TopologicalSorter(graph).prepare()  # a CycleError names the cycle

    def reaches(stage: str) -> set[str]:
        found, todo = set(), [stage]
        while todo:
            for below in graph[todo.pop()] - found:
                found.add(below)
                todo.append(below)
        return found

    assert reaches("ingest") == {"catalog", "claude"}  # reading needs no renderer or exporter
    assert "index" not in reaches("judge")  # the index plans judge runs, not the other way
    assert reaches("cli") == stages - {"cli"}
