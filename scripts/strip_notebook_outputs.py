"""Remove outputs, execution counts and run metadata from notebooks, in place.

    python scripts/strip_notebook_outputs.py            # every notebook in notebooks/
    python scripts/strip_notebook_outputs.py FILE...    # just these

Notebooks are committed without outputs (tests/test_notebooks.py checks it): outputs hold
machine-specific paths and large images, and make every diff noisy.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def strip(path: Path) -> bool:
    """Strip one notebook; True when it changed."""
    nb = nbformat.read(path, as_version=4)
    before = nbformat.writes(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)
    after = nbformat.writes(nb)
    if after != before:
        path.write_text(after + "\n" if not after.endswith("\n") else after)
    return after != before


def main(arguments: list[str]) -> None:
    paths = [Path(a) for a in arguments] or sorted(NOTEBOOKS.glob("*.ipynb"))
    for path in paths:
        print(f"{path}: {'stripped' if strip(path) else 'already clean'}")


if __name__ == "__main__":
    main(sys.argv[1:])
