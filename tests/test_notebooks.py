"""Every notebook runs top to bottom on the bundled data, in this environment; none is committed
with outputs.

The kernel is this interpreter: a ``python3`` kernel spec naming ``sys.executable`` is put first
on ``JUPYTER_PATH``, so a ``python3`` kernel installed elsewhere on the machine (another Python,
without this checkout's ``analysis``) cannot be picked up instead.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

import analysis

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
ALL = sorted(NOTEBOOKS.glob("*.ipynb"))


@pytest.fixture
def project_kernel(tmp_path, monkeypatch):
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (this project's environment)",
                "language": "python",
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return "python3"


def execute(nb: nbformat.NotebookNode, kernel: str) -> nbformat.NotebookNode:
    client = NotebookClient(
        nb, timeout=120, kernel_name=kernel, resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    client.execute()
    return nb


def stdout(cell: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


@pytest.mark.slow
@pytest.mark.notebooks
def test_the_kernel_is_this_interpreter_with_this_checkout(project_kernel):
    probe = "import sys, analysis\nprint(sys.executable)\nprint(analysis.__file__)"
    nb = new_notebook(cells=[new_code_cell(probe)])
    executable, module = stdout(execute(nb, project_kernel).cells[0]).splitlines()
    assert executable == sys.executable
    assert Path(module).resolve() == Path(analysis.__file__).resolve()


@pytest.mark.slow
@pytest.mark.notebooks
@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_notebook_runs_top_to_bottom(path, project_kernel):
    nb = execute(nbformat.read(path, as_version=4), project_kernel)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code, "a notebook with no code"
    for cell in code:
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert errors == [], cell.source
        assert cell.outputs, f"every step shows something: {cell.source[:60]!r}"


def test_there_are_notebooks():
    assert {p.name for p in ALL} >= {"01_tool_selection_quality.ipynb", "03_real_sessions.ipynb"}


@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_notebook_is_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], (
                f"{path.name} has outputs: run scripts/strip_notebook_outputs.py"
            )
            assert cell.execution_count is None, f"{path.name}: execution count"
        assert not cell.metadata.get("execution"), f"{path.name}: execution timing metadata"
    assert "widgets" not in nb.metadata


@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_notebooks_only_call_the_package(path):
    """Notebooks show analysis's functions at work; they define none of their own."""
    nb = nbformat.read(path, as_version=4)
    source = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    assert "import analysis" in source
    assert "def " not in source
    assert "class " not in source
    assert "http://" not in source
    assert "https://" not in source
