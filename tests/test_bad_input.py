"""Bad input never aborts a load: it becomes an issue naming file and line, and the rest is kept."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, SAMPLES, open_app, tsq, use_folder
from records import assistant, result, two_turns, user

import analysis


def test_malformed_line_is_an_issue_and_neighbours_are_kept(write_jsonl):
    records = two_turns()
    records.insert(2, '{"type":"user", this is not json')
    path = write_jsonl(records)
    (session,) = analysis.load([path]).sessions
    assert [t.ask for t in session.turns] == ["first", "second"]
    assert next(session.tool_calls()).result.content == "content"
    (issue,) = session.issues
    assert (issue.file, issue.line) == (str(path), 3)
    assert issue.reason.startswith("not valid JSON")


def test_truncated_last_line(write_jsonl):
    path = write_jsonl(
        [*two_turns(), '{"type":"user","message":{"role":"us'], trailing_newline=False
    )
    (session,) = analysis.load([path]).sessions
    assert len(session.turns) == 2
    (issue,) = session.issues
    assert issue.line == 5
    assert "truncated last line" in issue.reason


def test_non_utf8_bytes_are_replaced_and_the_record_kept(write_jsonl):
    raw = (
        b'{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user",'
        b'"message":{"role":"user","content":"caf\xe9 order"},"uuid":"u3"}'
    )
    path = write_jsonl([*two_turns(), raw])
    (session,) = analysis.load([path]).sessions
    assert session.turns[-1].ask == "caf\ufffd order"
    (issue,) = session.issues
    assert issue.line == 5
    assert "not UTF-8" in issue.reason


def test_unknown_record_type_and_wrong_shapes(write_jsonl):
    records = two_turns()
    records += [
        {"type": "mystery", "sessionId": "s", "uuid": "m1"},
        [1, 2, 3],
        {"type": "assistant", "sessionId": "s", "uuid": "m2", "message": "not an object"},
        user("u9", 42),
        assistant("a9", "msg_9", {"type": "tool_use", "id": 5, "name": None}),
        result("r9", "never-called", "orphan"),
    ]
    path = write_jsonl(records)
    (session,) = analysis.load([path]).sessions
    assert [t.ask for t in session.turns] == ["first", "second"]
    lines = {issue.line: issue.reason for issue in session.issues}
    assert lines[5] == "unknown record type 'mystery'"
    assert lines[6] == "record is not a JSON object"
    assert "without a message object" in lines[7]
    assert "neither text nor a list" in lines[8]
    assert "without a string id and name" in lines[9]
    assert "not in this transcript" in lines[10]


def test_a_file_that_is_not_a_transcript_gives_one_sentence(tmp_path):
    path = tmp_path / "notes.json"
    path.write_text('{"hello": "world"}')
    loaded = analysis.load([path])
    assert loaded.sessions == []
    (issue,) = loaded.issues
    assert issue.file == str(path)
    assert "is not a transcript" in issue.reason


def test_missing_path_and_empty_file(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    loaded = analysis.load([tmp_path / "nope", empty])
    assert [i.reason for i in loaded.issues] == ["no such file or folder", "is empty"]


@pytest.mark.slow
def test_cli_exit_codes_and_no_traceback(tmp_path, write_jsonl):
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"\x00\x01 not json at all\n")
    nothing = subprocess.run(
        [sys.executable, "-m", "analysis", "ingest", str(junk)], capture_output=True, text=True
    )
    assert nothing.returncode == 2
    assert "Traceback" not in nothing.stderr + nothing.stdout
    assert f"{junk}: is not a transcript" in nothing.stderr

    good = write_jsonl([*two_turns(), "{broken"])
    loaded = subprocess.run(
        [sys.executable, "-m", "analysis", "ingest", str(good), str(junk)],
        capture_output=True,
        text=True,
    )
    assert loaded.returncode == 0
    assert f"{good}:5: not valid JSON" in loaded.stdout


def test_a_command_about_one_file_talks_about_that_file(tmp_path):
    """With an index that already holds another folder, `tsq ingest` of a file that is not a
    transcript says one sentence about that file, and nothing of the index; a good file's
    summary counts that file's sessions, in words that agree in number."""
    index = str(tmp_path / "index.duckdb")
    assert tsq("index", str(SAMPLES / "transcripts"), "--index", index).returncode == 0
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"hello": 1}\n')

    refused = tsq("ingest", str(notes), "--index", index)
    assert refused.returncode == 2
    assert refused.stdout == ""
    assert refused.stderr.splitlines() == [
        f"{notes}: is not a transcript this workbench reads (Claude Code JSONL, Codex rollouts,"
        " OpenAI-format trajectories, OTLP/JSON traces) nor a tool catalog (tsq ingest --formats"
        " lists them)"
    ]

    one = tsq(
        "ingest", str(SAMPLES / "transcripts" / "bad-choices.synthetic.jsonl"), "--index", index
    )
    assert one.returncode == 0, one.stderr
    assert one.stderr == ""
    assert one.stdout.splitlines()[-1] == (
        "1 session, 4 turns, 4 tool calls, 0 subagent tool calls, 0 issues, from 1 file"
    )


@pytest.mark.parametrize("command", [["trends"], ["lint"], ["report", "--out", "r.html"]])
def test_a_command_reading_a_collection_names_a_path_that_is_not_there(tmp_path, command):
    """Every command that reads a collection through the index says, in one line, that a path
    given is not there, and exits 2; none goes on to talk of what it found there."""
    missing = tmp_path / "nowhere"
    done = tsq(command[0], str(missing), *command[1:], "--index", str(tmp_path / "i.duckdb"))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"{missing}: no such file or folder"]


def test_an_empty_folder_is_one_sentence_saying_it_holds_no_transcript(tmp_path):
    for through_index in ([], ["--no-index"]):
        done = tsq("ingest", str(tmp_path), *through_index)
        assert done.returncode == 2
        assert done.stderr.splitlines() == [
            f"No transcripts in {tmp_path}: it holds no .jsonl, .json or .ndjson file."
        ]


@pytest.fixture
def broken_rollout(tmp_path: Path) -> tuple[Path, list[int]]:
    """A real Codex rollout whose every exec_command call has arguments that are not JSON (the
    closing brace cut), in a folder of its own; and the lines of those calls."""
    source = next((CORPUS / "codex" / "codemie-code").glob("rollout-*019e1695*.jsonl"))
    broken, lines = [], []
    for number, line in enumerate(source.read_text().splitlines(), start=1):
        record = json.loads(line)
        payload = record.get("payload", {})
        if payload.get("type") == "function_call" and payload.get("name") == "exec_command":
            payload["arguments"] = payload["arguments"][:-1]
            lines.append(number)
        broken.append(json.dumps(record))
    folder = tmp_path / "rollouts"
    folder.mkdir()
    rollout = folder / source.name
    rollout.write_text("\n".join(broken) + "\n")
    assert len(lines) > 10
    return rollout, lines


REASON = "the arguments of the exec_command call are not valid JSON; kept as text"


def _ranges(lines: list[int]) -> list[str]:
    """Runs of consecutive lines as ``a-b`` (or ``a``), computed here."""
    ranges, start = [], lines[0]
    for before, after in itertools.pairwise([*lines, None]):
        if after != before + 1:
            ranges.append(f"{start}" if start == before else f"{start}-{before}")
            start = after
    return ranges


def test_issues_of_one_file_and_one_reason_are_one_line_and_json_keeps_each(broken_rollout):
    """The text output says the reason once with the count and the lines as ranges;
    ``--json`` lists every issue."""
    rollout, lines = broken_rollout
    text = tsq("ingest", str(rollout), "--no-index")
    assert text.returncode == 0, text.stderr
    said = [line.strip() for line in text.stdout.splitlines() if REASON in line]
    ranges = _ranges(lines)
    more = f" and {len(ranges) - 5} more ranges" if len(ranges) > 5 else ""
    shown = ", ".join(ranges[:5])
    assert said == [f"{rollout}: {REASON} ({len(lines)} times; lines {shown}{more})"]

    as_json = json.loads(tsq("ingest", str(rollout), "--no-index", "--json").stdout)
    (session,) = as_json["sessions"]
    assert [issue["line"] for issue in session["issues"]] == lines


def test_the_overview_lists_issues_of_one_file_and_one_reason_as_one_row(broken_rollout):
    rollout, lines = broken_rollout
    at = use_folder(open_app(), rollout.parent)
    assert not at.exception
    (issues,) = at.expander
    assert issues.label == f"{len(lines)} parse issues"
    (row,) = issues.dataframe[0].value.to_dict("records")
    assert (row["file"], row["reason"], row["count"]) == (str(rollout), REASON, len(lines))
    assert row["lines"].startswith(f"lines {', '.join(_ranges(lines)[:5])}")
