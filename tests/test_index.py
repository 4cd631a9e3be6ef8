"""The on-disk index: what it reports equals what loading the files reports, on the whole
corpus and the samples, through every kind of update; it survives a kill, a second writer and
a corrupt file."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SAMPLES, indexed_at, tsq
from test_load_dedupe import SPOTTER_SESSION, _write_resumed

import analysis
from analysis.index import IndexProblem, IndexReader, update_index


def direct(paths: list[Path]) -> analysis.ingest.IngestReport:
    return analysis.ingest_report(analysis.load(paths))


def through(index: Path, paths: list[Path]) -> analysis.ingest.IngestReport:
    with IndexReader(index) as reader:
        return reader.ingest_report(paths)


def test_the_whole_corpus_and_the_samples_report_the_same_through_the_index(corpus, tmp_path):
    paths = [corpus, SAMPLES]
    index = tmp_path / "index.duckdb"
    first = update_index(paths, index, workers=2)
    assert first.new > 50
    assert (first.changed, first.unchanged, first.removed) == (0, 0, 0)
    expected = direct(paths)
    got = through(index, paths)
    for ours, theirs in zip(got.sessions, expected.sessions, strict=True):
        assert ours == theirs
    assert got.totals == expected.totals
    again = update_index(paths, index)
    assert (again.new, again.changed, again.unchanged) == (0, 0, first.new)
    assert through(index, paths) == expected


@pytest.fixture
def spotter_copy(corpus, tmp_path) -> Path:
    """The real spotter session (with its subagent files) in a folder of its own."""
    folder = tmp_path / "project"
    source = corpus / "claude-code" / "spotter"
    shutil.copytree(source, folder)
    return folder


def test_a_resumed_session_is_deduplicated_exactly_through_every_update(spotter_copy, tmp_path):
    index = tmp_path / "index.duckdb"
    update_index([spotter_copy], index)
    assert through(index, [spotter_copy]) == direct([spotter_copy])
    resumed, _ = _write_resumed(spotter_copy / f"{SPOTTER_SESSION}.jsonl", spotter_copy)
    added = update_index([spotter_copy], index)
    assert added.new == 1
    expected = direct([spotter_copy])
    assert any("(resumed session)" in i.reason for s in expected.sessions for i in s.issues)
    assert through(index, [spotter_copy]) == expected
    (spotter_copy / f"{SPOTTER_SESSION}.jsonl").unlink()  # the history now belongs to the resume
    removed = update_index([spotter_copy], index)
    assert removed.removed == 1
    assert through(index, [spotter_copy]) == direct([spotter_copy])
    assert resumed.exists()


def test_a_growing_file_a_same_size_rewrite_and_a_deleted_file_are_seen(tmp_path):
    folder = tmp_path / "sessions"
    shutil.copytree(SAMPLES / "transcripts", folder)
    index = tmp_path / "index.duckdb"
    update_index([folder], index)
    bad = folder / "bad-choices.synthetic.jsonl"
    lines = bad.read_text().splitlines()
    bad.write_text("\n".join(lines[:-4]) + "\n")  # the live session, earlier
    update_index([folder], index)
    bad.write_text("\n".join(lines) + "\n")  # ...and now, grown
    grown = update_index([folder], index)
    assert grown.changed == 1
    assert through(index, [folder]) == direct([folder])
    stat = bad.stat()
    text = bad.read_text()
    swapped = text.replace("Show me the contents", "Show me the CONTENTS")
    assert len(swapped) == len(text)
    bad.write_text(swapped)
    os.utime(bad, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same time
    rewritten = update_index([folder], index)
    assert rewritten.changed == 1
    assert through(index, [folder]) == direct([folder])
    bad.unlink()
    gone = update_index([folder], index)
    assert gone.removed == 1
    assert through(index, [folder]) == direct([folder])


def _many_sessions(folder: Path, copies: int) -> None:
    """Copies of a sample session under fresh ids, so none is a repeat of another."""
    source = (SAMPLES / "transcripts" / "bad-choices.synthetic.jsonl").read_text().splitlines()
    folder.mkdir(parents=True)
    for number in range(copies):
        records = []
        for line in source:
            record = json.loads(line)
            record["sessionId"] = f"copy-{number}"
            if "uuid" in record:
                record["uuid"] = f"{record['uuid']}-{number}"
            message = record.get("message")
            if isinstance(message, dict) and "id" in message:
                message["id"] = f"{message['id']}-{number}"
            records.append(json.dumps(record))
        (folder / f"copy-{number}.jsonl").write_text("\n".join(records) + "\n")


def _tsq(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "analysis", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.5, 1.0, 2.0])
def test_an_update_killed_half_way_is_never_read_as_complete_and_is_finished_next(tmp_path, delay):
    """Whenever the kill lands, the index is either refused as interrupted or, if the update
    had finished, complete; the next update finishes it either way."""
    folder = tmp_path / "many"
    _many_sessions(folder, 1500)
    index = tmp_path / "index.duckdb"
    run = _tsq("index", str(folder), "--index", str(index), "--workers", "1")
    time.sleep(delay)
    run.send_signal(signal.SIGKILL)
    run.communicate(timeout=60)
    expected = direct([folder])
    if index.exists():
        refusal = None
        try:
            reader = IndexReader(index)
        except IndexProblem as problem:
            refusal = str(problem)
        if refusal is not None:
            assert "an update was interrupted; run tsq index again" in refusal
        else:
            with reader:
                assert reader.ingest_report([folder]) == expected
    summary = update_index([folder], index, workers=1)
    assert summary.new + summary.changed + summary.unchanged == 1500
    assert through(index, [folder]) == expected


def test_two_updates_at_once_leave_one_good_index(tmp_path):
    folder = tmp_path / "many"
    _many_sessions(folder, 300)
    index = tmp_path / "index.duckdb"
    runs = [_tsq("index", str(folder), "--index", str(index)) for _ in range(2)]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    lines = sorted(out.strip() for out, _ in outputs)
    assert lines[0].startswith("0 files new, 0 changed, 300 unchanged")  # the second waited
    assert lines[1].startswith("300 files new")
    assert through(index, [folder]) == direct([folder])


def test_a_corrupt_index_is_rebuilt_saying_so(tmp_path):
    index = tmp_path / "index.duckdb"
    index.write_bytes(b"not a database at all\n" * 100)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis",
            "index",
            str(SAMPLES / "transcripts"),
            "--index",
            str(index),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "the index was corrupt" in done.stdout
    assert "Traceback" not in done.stderr
    assert list(tmp_path.glob("index.duckdb.corrupt-*"))
    assert through(index, [SAMPLES / "transcripts"]) == direct([SAMPLES / "transcripts"])


@pytest.mark.parametrize(
    "command",
    [
        ["ingest", "--json"],
        ["lint", "--json"],
        [
            "lint",
            "--json",
            "--judgments",
            str(SAMPLES / "judgments" / "illustrative.judgments.jsonl"),
        ],
    ],
    ids=["ingest", "lint", "lint-judgments"],
)
@pytest.mark.slow
def test_a_command_through_the_index_prints_what_reading_every_file_prints(
    corpus, tmp_path, command
):
    paths = [str(corpus), str(SAMPLES)]
    name, *options = command
    plain = tsq(name, *paths, *options, "--no-index")
    indexed = tsq(name, *paths, *options, "--index", str(tmp_path / "index.duckdb"))
    assert indexed.returncode == plain.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout) == json.loads(plain.stdout)
    assert json.loads(plain.stdout)["findings" if name == "lint" else "sessions"]
    assert indexed_at(tmp_path / "index.duckdb")  # the index was built, then read
    assert "index.duckdb" not in indexed.stderr  # what the index holds is tsq index's to say


def test_reading_a_missing_index_says_how_to_build_it(tmp_path):
    with pytest.raises(IndexProblem, match="tsq index"):
        IndexReader(tmp_path / "none.duckdb")


@pytest.mark.parametrize("before", ["0", "6+000000000000"], ids=["layout", "menus data"])
def test_an_index_of_an_older_layout_or_menus_data_is_rebuilt_saying_so(tmp_path, before):
    """Another table layout, or menus built from other tools data (a release that adds an
    agent version's built-ins): every step's menu figures would be stale."""
    import duckdb

    index = tmp_path / "index.duckdb"
    update_index([SAMPLES / "transcripts"], index)
    with duckdb.connect(str(index)) as conn:
        conn.execute("UPDATE state SET value = ? WHERE name = 'schema'", [before])
    summary = update_index([SAMPLES / "transcripts"], index)
    assert summary.rebuilt.startswith(f"the index was of another layout or menus data ({before}, ")
    assert summary.rebuilt.endswith("): rebuilt")
    assert summary.unchanged == 0  # every file read again
    assert summary.new > 0
    assert through(index, [SAMPLES / "transcripts"]) == direct([SAMPLES / "transcripts"])


def test_an_index_written_before_shared_keys_were_kept_groups_a_resumed_session(
    spotter_copy, tmp_path
):
    """Opening a collection reads which files share history from the few keys more than one
    file holds, kept by the update: an index without them (written by an earlier workbench)
    gets them on its next update, and a resumed session is read with its history."""
    import duckdb

    from analysis.index import Collection

    resumed, _ = _write_resumed(spotter_copy / f"{SPOTTER_SESSION}.jsonl", spotter_copy)
    index = tmp_path / "index.duckdb"
    update_index([spotter_copy], index)
    with duckdb.connect(str(index)) as conn:
        assert conn.execute("SELECT count(*) FROM shared_keys").fetchone()[0] > 0
        conn.execute("DROP TABLE shared_keys")
        conn.execute("DELETE FROM state WHERE name = 'shared_keys'")
    collection = Collection([spotter_copy], index)
    read = collection.sessions_of([str(resumed.resolve())])
    ids = {session.session_id for session in read}
    expected = [s for s in analysis.load([spotter_copy]).sessions if s.session_id in ids]
    assert read
    assert read == expected
    assert any("(resumed session)" in i.reason for s in read for i in s.issues)
