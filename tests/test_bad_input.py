"""Bad input never aborts a load: it becomes an issue naming file and line, and the rest is kept."""

from __future__ import annotations

import subprocess
import sys

import pytest
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
