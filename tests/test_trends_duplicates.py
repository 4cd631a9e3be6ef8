"""``tsq trends`` when one judge judged the same step twice: two ``tsq judge --out``
files with the same lines, or a line repeated in one file. Trends keeps one judgment per step
and judge, as ``tsq report`` and ``tsq lint`` do (``merge_judgments``): its output is the output
without the duplicate, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import analysis
from analysis.cli import cli

SAMPLE = analysis.sample_data_dir()
JUDGMENTS = SAMPLE / "judgments" / "illustrative.judgments.jsonl"
ARGS = [(), ("--by", "tool"), ("--by", "tool", "--json")]


def _folder(root: Path, files: dict[str, str]) -> Path:
    """The bundled sample transcripts with the judgments files ``files`` (name -> text)."""
    root.mkdir()
    shutil.copytree(SAMPLE / "transcripts", root / "transcripts")
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def _trends(folder: Path, *args: str) -> Result:
    """``tsq trends FOLDER ARGS`` through its own index beside the folder."""
    index = folder.parent / f"{folder.name}.duckdb"
    return CliRunner().invoke(cli, ["trends", str(folder), "--index", str(index), *args])


def _ran_cleanly(result: Result) -> str:
    assert result.exit_code == 0, result.output
    assert result.exception is None, result.exception
    assert "Traceback" not in result.output
    return result.stdout


def _step_lines(text: str) -> list[dict[str, object]]:
    return [
        line
        for line in map(json.loads, text.splitlines())
        if line["condition"] == "full" and line["step_index"] is not None
    ]


@pytest.fixture(scope="module")
def once(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, ...], str]:
    """The trends of the sample with its judgments file once: what each case must print."""
    folder = _folder(
        tmp_path_factory.mktemp("once") / "data", {JUDGMENTS.name: JUDGMENTS.read_text()}
    )
    return {args: _ran_cleanly(_trends(folder, *args)) for args in ARGS}


def test_the_sample_once_counts_each_judged_step_once(once):
    """The expectation itself, against the judgments file read here: one judged step per
    distinct step of its full-condition lines (all scored), one judge (the model's name)."""
    lines = _step_lines(JUDGMENTS.read_text())
    steps = {
        (j["session_id"], j["turn_index"], j["step_index"], j["parent_call_id"]) for j in lines
    }
    assert all(j["score"] is not None for j in lines)
    assert once[()].splitlines()[0] == f"judge: {lines[0]['model']}; {len(steps)} judged steps"


@pytest.mark.parametrize("args", ARGS)
def test_a_judgments_file_found_twice_counts_once(tmp_path, once, args):
    text = JUDGMENTS.read_text()
    folder = _folder(
        tmp_path / "data", {"first.judgments.jsonl": text, "second.judgments.jsonl": text}
    )
    assert _ran_cleanly(_trends(folder, *args)) == once[args]


@pytest.mark.parametrize("args", ARGS)
def test_a_line_repeated_in_one_file_counts_once(tmp_path, once, args):
    lines = JUDGMENTS.read_text().splitlines()
    first_step = next(n for n, line in enumerate(lines) if _step_lines(line))
    repeated = [*lines, lines[first_step], *lines[first_step : first_step + 3]]
    folder = _folder(tmp_path / "data", {JUDGMENTS.name: "\n".join(repeated) + "\n"})
    assert _ran_cleanly(_trends(folder, *args)) == once[args]


def test_a_later_file_wins_as_in_tsq_report(tmp_path):
    """The same step judged twice with different scores: the file found later (folders are
    read in sorted order) wins, as ``merge_judgments`` has it: the trends are those of that
    file alone."""
    lines = JUDGMENTS.read_text().splitlines()
    changed = list(lines)
    first_step = next(n for n, line in enumerate(lines) if _step_lines(line))
    record = json.loads(lines[first_step])
    assert record["score"] == 1.0
    record["score"] = 0.0
    record["votes"] = [{**vote, "verdict": "incorrect"} for vote in record["votes"]]
    changed[first_step] = json.dumps(record)
    later = "\n".join(changed) + "\n"
    alone = _ran_cleanly(
        _trends(_folder(tmp_path / "alone", {"z.judgments.jsonl": later}), "--json")
    )
    both = _folder(
        tmp_path / "both", {"a.judgments.jsonl": JUDGMENTS.read_text(), "z.judgments.jsonl": later}
    )
    assert _ran_cleanly(_trends(both, "--json")) == alone
    original = _ran_cleanly(
        _trends(
            _folder(tmp_path / "original", {"a.judgments.jsonl": JUDGMENTS.read_text()}), "--json"
        )
    )
    assert alone != original  # the changed score shows
    reversed_ = _folder(
        tmp_path / "reversed",
        {"a.judgments.jsonl": later, "z.judgments.jsonl": JUDGMENTS.read_text()},
    )
    assert _ran_cleanly(_trends(reversed_, "--json")) == original
