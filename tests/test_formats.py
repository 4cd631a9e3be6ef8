"""The loader's one table of formats: ``tsq ingest --formats`` lists it, and each real file is
read by the format named for it, recognised from its content."""

from __future__ import annotations

import json

import pytest
from conftest import CORPUS, tsq

import analysis

SAMPLES = analysis.sample_data_dir()
FILES = {
    "codex": CORPUS / "codex" / "codemie-code",
    "claude-code": SAMPLES / "transcripts" / "bad-choices.synthetic.jsonl",
    "judgments": SAMPLES / "judgments" / "illustrative.judgments.jsonl",
    "catalog": CORPUS / "tau-bench" / "airline-tools.json",
}


def test_tsq_ingest_formats_lists_the_loaders_table():
    done = tsq("ingest", "--formats", "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)["formats"]
    assert listed == analysis.ingest.formats()
    names = {(f["name"], f["kind"]) for f in listed}
    assert {("codex", "lines"), ("claude-code", "lines"), ("catalog", "document")} <= names
    assert [f["name"] for f in listed if f["kind"] == "lines"][:2] == ["codex", "claude-code"]


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_kind_of_file_is_read_as_its_format(name):
    path = FILES[name]
    if not path.exists():
        pytest.skip("../shared/corpus is not beside this checkout")
    result = analysis.load([path])
    read = {
        "codex": lambda: {s.format for s in result.sessions} == {"codex"},
        "claude-code": lambda: {s.format for s in result.sessions} == {"claude-code"},
        "judgments": lambda: bool(result.judgments) and not result.sessions,
        "catalog": lambda: len(result.catalogs) == 1 and not result.sessions,
    }
    assert read[name](), (name, result.all_issues())
