"""The suite's own layout holds: under ``--dist loadgroup`` (``make test``), the tests of one
``xdist_group`` run on one worker, so that a module's browsers do not compete for the cores and
the docs site is built once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GROUPED = """
import os, pytest

@pytest.mark.xdist_group("together")
@pytest.mark.parametrize("n", range(6))
def test_grouped(n):
    with open("workers.txt", "a") as seen:
        seen.write(os.environ["PYTEST_XDIST_WORKER"] + " ")

@pytest.mark.parametrize("n", range(6))
def test_free(n):
    pass
"""


@pytest.mark.slow
def test_a_group_runs_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "3", "--dist", "loadgroup", "-q",
         "-p", "no:cacheprovider", "-o", "addopts=", "test_grouped.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    ran = (tmp_path / "workers.txt").read_text().split()
    assert len(ran) == 6
    assert len(set(ran)) == 1, f"one group ran on {sorted(set(ran))}"
