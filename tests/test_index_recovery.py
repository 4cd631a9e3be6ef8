"""An index is never left unusable. An update killed while its workers parse
(SIGKILL or SIGTERM) leaves no worker behind, and the next commands take its lock over and
finish it; a lock left held by what a dead ``tsq`` left behind does not stop them either. An
index cut short (to half its bytes) is moved aside and rebuilt by every command that updates
it, saying so in one sentence, and reading it without an update is one sentence too. Every
figure expected is what reading every file (``--no-index``) gives."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, SAMPLES, indexed_at, run_tsq

from analysis.index import Collection, IndexProblem, IndexReader

COPIES = 40
"""Copies of the real Claude Code sessions: about two seconds of parsing on two workers."""
FEW = 4
"""Copies where an update need not be caught half-way."""
_UUID = re.compile(rb"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)[0-9a-f]{4}([0-9a-f]{8})")
_MESSAGE_ID = re.compile(rb'"(msg|toolu)_')


def _as_copy(data: bytes, number: int) -> bytes:
    """The same transcript as a session of its own: uuids and message and call ids made new,
    so that no copy is taken for a resumed session of another."""
    tag = b"%04x" % number
    data = _UUID.sub(lambda m: m.group(1) + tag + m.group(2), data)
    return _MESSAGE_ID.sub(lambda m: b'"' + m.group(1) + b"_c" + tag, data)


def _copies(folder: Path, copies: int) -> Path:
    """``copies`` project folders, each holding a copy of every real Claude Code main
    transcript under a megabyte."""
    found = (CORPUS / "claude-code").glob("*/*.jsonl")
    mains = sorted(p for p in found if p.stat().st_size < 2**20)
    if not mains:
        pytest.skip("../shared/corpus is not beside this checkout")
    originals = [(p.name, p.read_bytes()) for p in mains]
    for number in range(copies):
        project = folder / f"-home-dev-project-{number:03d}"
        project.mkdir()
        for name, data in originals:
            target = project / _as_copy(name.encode(), number).decode()
            target.write_bytes(_as_copy(data, number))
    return folder


def tsq(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """A ``tsq`` process; one that does not finish within ``timeout`` fails the test."""
    return run_tsq(*args, timeout=timeout)


def _ingested(collection: Path, copies: int) -> dict[str, Any]:
    """What ``tsq ingest --json`` says reading every file."""
    plain = tsq("ingest", "--json", str(collection), "--no-index", timeout=120)
    assert plain.returncode == 0, plain.stderr
    report: dict[str, Any] = json.loads(plain.stdout)
    assert report["totals"]["sessions"] == copies * 6
    return report


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A collection large enough to be killed while its workers parse it."""
    return _copies(tmp_path_factory.mktemp("collection"), COPIES)


@pytest.fixture(scope="module")
def expected(collection: Path) -> dict[str, Any]:
    return _ingested(collection, COPIES)


@pytest.fixture(scope="module")
def few(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small collection, for what needs no time to be killed in."""
    return _copies(tmp_path_factory.mktemp("few"), FEW)


@pytest.fixture(scope="module")
def expected_few(few: Path) -> dict[str, Any]:
    return _ingested(few, FEW)


def _group(pgid: int) -> list[int]:
    """The living processes (zombies aside) of the process group ``pgid``, from /proc."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # ended meanwhile
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


def _wait(until: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not until():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.fixture
def session_leader() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes started in sessions of their own; whatever is left of their groups (a
    failed test's stray workers) is killed by group id at the end."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for run in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        run.wait(timeout=10)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_an_update_killed_while_its_workers_parse_is_finished_by_the_next_commands(
    collection, expected, tmp_path, session_leader, sig
):
    index = tmp_path / "index.duckdb"
    update = ["index", str(collection), "--index", str(index), "--workers", "2"]
    with open(tmp_path / "killed.out", "wb") as out:
        run = subprocess.Popen(
            [sys.executable, "-m", "analysis", *update],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its process group: the update and its workers
        )
    session_leader.append(run)
    _wait(lambda: len(_group(run.pid)) >= 3, 30, "the update never started its two workers")
    time.sleep(0.5)
    assert run.poll() is None, "the update ended before the kill: give it more to parse"
    os.kill(run.pid, sig)
    run.wait(timeout=10)
    _wait(lambda: not _group(run.pid), 10, "the workers outlived the update they parsed for")

    again = tsq("index", str(collection), "--index", str(index))
    assert again.returncode == 0, again.stderr
    assert "Traceback" not in again.stderr
    counts = re.match(r"(\d+) files new, (\d+) changed, (\d+) unchanged", again.stdout)
    assert counts is not None, again.stdout
    assert sum(int(n) for n in counts.groups()) == COPIES * 6
    said = [line for line in again.stderr.splitlines() if "lock" in line]
    assert len(said) == 1, again.stderr
    assert str(index) in said[0]
    assert f"process {run.pid}" in said[0]

    finished = indexed_at(index)
    indexed = tsq("ingest", "--json", str(collection), "--index", str(index))
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout) == expected
    assert indexed_at(index) == finished  # read through the finished index


@pytest.mark.slow
def test_a_lock_held_by_what_a_dead_tsq_left_behind_is_taken_over(
    tmp_path, session_leader, expected_few, few
):
    """Parsing workers an earlier ``tsq`` forked outlived it holding the index's lock (an
    flock on ``<index>.lock``), which nothing ever released: the next commands go on."""
    index = tmp_path / "index.duckdb"
    lock = f"{index}.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time\n"
            f"handle = open({lock!r}, 'a')\n"
            "fcntl.flock(handle, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "time.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    session_leader.append(holder)
    assert holder.stdout is not None
    assert holder.stdout.readline() == b"held\n"
    with open(lock) as probe, pytest.raises(BlockingIOError):  # held indeed
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)

    update = tsq("index", str(few), "--index", str(index))
    assert update.returncode == 0, update.stderr
    assert update.stdout.startswith(f"{FEW * 6} files new")
    said = [line for line in update.stderr.splitlines() if "lock" in line]
    assert len(said) == 1, update.stderr
    assert str(index) in said[0]
    indexed = tsq("ingest", "--json", str(few), "--index", str(index))
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout) == expected_few


@pytest.fixture(scope="module")
def built(few: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index of the collection, as ``tsq index`` builds it."""
    index = tmp_path_factory.mktemp("built") / "index.duckdb"
    done = tsq("index", str(few), "--index", str(index), timeout=120)
    assert done.returncode == 0, done.stderr
    return index


@pytest.fixture
def cut(built: Path, tmp_path: Path) -> Path:
    """A copy of the built index cut to half its bytes (a copy or a disk that gave out)."""
    index = tmp_path / "index.duckdb"
    shutil.copyfile(built, index)
    os.truncate(index, index.stat().st_size // 2)
    return index


def _said_moved_aside(stderr: str, index: Path) -> None:
    """One sentence on stderr names the index and where it was moved aside."""
    aside = list(index.parent.glob(f"{index.name}.corrupt-*"))
    assert len(aside) == 1, aside
    said = [line for line in stderr.splitlines() if "moved aside" in line]
    assert len(said) == 1, stderr
    assert said[0].startswith(f"{index} could not be read")
    assert aside[0].name in said[0]
    assert "Traceback" not in stderr


@pytest.mark.slow
@pytest.mark.parametrize("command", [["index"], ["ingest", "--json"]], ids=["index", "ingest"])
def test_an_index_cut_to_half_its_bytes_is_moved_aside_and_rebuilt(few, expected_few, cut, command):
    half = cut.stat().st_size
    done = tsq(*command, str(few), "--index", str(cut))
    assert done.returncode == 0, done.stderr
    _said_moved_aside(done.stderr, cut)
    assert next(cut.parent.glob("index.duckdb.corrupt-*")).stat().st_size == half
    if command == ["index"]:
        assert done.stdout.startswith(f"{FEW * 6} files new, 0 changed, 0 unchanged")
        rebuilt = indexed_at(cut)
        done = tsq("ingest", "--json", str(few), "--index", str(cut))
        assert done.returncode == 0, done.stderr
        assert indexed_at(cut) == rebuilt
        assert "moved aside" not in done.stderr
    assert json.loads(done.stdout) == expected_few


@pytest.mark.slow
def test_the_apps_collection_over_an_index_cut_short_rebuilds_it(few, expected_few, cut, capfd):
    opened = Collection([few], cut)
    assert opened.session_ids == [s["session_id"] for s in expected_few["sessions"]]
    assert len(opened.issues()) == expected_few["totals"]["issues"]
    _said_moved_aside(capfd.readouterr().err, cut)


@pytest.mark.slow  # its fixtures build the collection and its index
def test_reading_an_index_cut_short_without_an_update_is_one_sentence(few, cut):
    with pytest.raises(IndexProblem) as raised, IndexReader(cut) as reader:
        reader.ingest_report([few])
    said = str(raised.value)
    assert said.startswith(f"{cut} could not be read")
    assert "\n" not in said
    assert "tsq index" in said  # what to do about it
    aside = list(cut.parent.glob("index.duckdb.corrupt-*"))  # so that tsq index rebuilds it
    assert len(aside) == 1
    assert aside[0].name in said


def test_an_index_another_process_has_open_is_in_use_not_damaged(tmp_path, session_leader):
    """DuckDB's own lock refuses a writer while another process reads the index: one
    sentence and exit 2, and the index is left where it is (it is in use, not damaged)."""
    folder = SAMPLES / "transcripts"
    index = tmp_path / "index.duckdb"
    assert tsq("index", str(folder), "--index", str(index)).returncode == 0
    reader = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, time\n"
            f"conn = duckdb.connect({str(index)!r}, read_only=True)\n"
            "print('open', flush=True)\n"
            "time.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    session_leader.append(reader)
    assert reader.stdout is not None
    assert reader.stdout.readline() == b"open\n"
    done = tsq("index", str(folder), "--index", str(index))
    assert done.returncode == 2
    assert done.stderr.startswith(f"{index}: in use elsewhere")
    assert done.stderr.count("\n") == 1
    assert not list(tmp_path.glob("index.duckdb.corrupt-*"))
