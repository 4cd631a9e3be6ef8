"""Hostile input: deep nesting, byte-order marks, reused uuids, FIFOs, malformed OTLP."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import tsq
from records import assistant, result, text, tool_use, two_turns, user

import analysis

DEPTH = 1000


def _deep(depth: int = DEPTH) -> str:
    """JSON nested ``depth`` objects (and as many arrays) deep, written out by hand: the
    standard library's encoder cannot write it."""
    return '{"a":[' * depth + '"bottom"' + "]}" * depth


def _with_deep(record: dict) -> str:
    """``record`` as one JSON line with its "DEEP" string replaced by deep nesting."""
    return json.dumps(record, separators=(",", ":")).replace('"DEEP"', _deep())


def test_deep_nesting_in_a_record_field_is_an_issue_on_that_line(write_jsonl):
    deep = _with_deep(assistant("a2", "msg_2", tool_use("t2", "Bash", command="ls", extra="DEEP")))
    path = write_jsonl([*two_turns(), deep, result("r2", "t2", "ok")])
    loaded = analysis.load([path])  # must not raise RecursionError
    (session,) = loaded.sessions
    assert next(call.id for call in session.tool_calls()) == "t1"
    issues = [i for i in loaded.issues + session.issues if i.line == 5]
    assert issues, "the deeply nested line is reported"
    assert "nest" in issues[0].reason


def test_deep_nesting_in_a_json_document_is_an_issue(tmp_path):
    path = tmp_path / "trajectories.json"
    path.write_text('[{"messages": ' + _deep() + "}]")
    loaded = analysis.load([path])  # must not raise
    assert any(issue.file == str(path) for issue in loaded.issues)


def test_deep_nesting_in_an_otlp_attribute_is_an_issue(tmp_path):
    source = analysis.load(
        [analysis.sample_data_dir() / "transcripts" / "bad-choices.synthetic.jsonl"]
    )
    document = analysis.export_otlp_json(source.sessions)
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    chat = next(span for span in spans if span["name"].startswith("chat "))
    for attribute in chat["attributes"]:
        if attribute["key"] == "gen_ai.output.messages":
            attribute["value"] = {"stringValue": _deep()}
    path = tmp_path / "trace.otlp.json"
    path.write_text(json.dumps(document))
    loaded = analysis.load([path])  # must not raise
    issues = loaded.issues + [i for session in loaded.sessions for i in session.issues]
    assert any("nested more than" in issue.reason for issue in issues)
    assert loaded.sessions  # the rest of the trace is kept


@pytest.mark.parametrize(
    "malformed",
    [
        {"resourceSpans": [{"scopeSpans": "not a list"}]},
        {"resourceSpans": [1, None, "x"]},
        {"resourceSpans": [{"scopeSpans": [{"spans": [1, "x", None]}]}]},
        {"resourceSpans": [{"resource": {"attributes": [None, 3]}, "scopeSpans": []}]},
    ],
)
def test_a_malformed_otlp_document_is_an_issue_and_the_folder_still_loads(
    tmp_path, write_jsonl, malformed
):
    (tmp_path / "broken.otlp.json").write_text(json.dumps(malformed))
    write_jsonl(two_turns(), name="good.jsonl")
    loaded = analysis.load([tmp_path])
    assert len(loaded.sessions) == 1
    assert any(issue.file.endswith("broken.otlp.json") for issue in loaded.issues)


def test_a_utf8_byte_order_mark_costs_nothing(write_jsonl):
    records = [
        json.dumps({"type": "summary", "summary": "Fix the flaky test", "leafUuid": "u2"}),
        *two_turns(),
    ]
    path = write_jsonl(records)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    (session,) = analysis.load([path]).sessions
    assert session.title == "Fix the flaky test"
    assert session.issues == []
    assert [t.ask for t in session.turns] == ["first", "second"]


def test_a_utf16_file_with_a_byte_order_mark_is_decoded(write_jsonl):
    path = write_jsonl(two_turns())
    text_ = path.read_bytes().decode("utf-8")
    path.write_bytes(text_.encode("utf-16"))  # what a Windows shell redirect writes
    (session,) = analysis.load([path]).sessions
    assert [t.ask for t in session.turns] == ["first", "second"]
    assert next(session.tool_calls()).result.content == "content"


def test_a_reused_uuid_keeps_its_tool_call(write_jsonl):
    records = [
        *two_turns()[:3],
        assistant("a1", "msg_9", tool_use("t9", "Grep", pattern="x")),  # uuid a1 again
        result("r9", "t9", "found"),
        user("u2", "second"),
    ]
    path = write_jsonl(records)
    loaded = analysis.load([path])
    (session,) = loaded.sessions
    ids = {call.id for call in session.tool_calls()}
    assert "t9" in ids  # the second record under uuid a1 is another response: its call is kept
    assert [call.name for call in session.tool_calls() if call.id == "t9"] == ["Grep"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_reported_as_a_fifo(tmp_path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    loaded = analysis.load([fifo])
    (issue,) = loaded.issues
    assert "FIFO" in issue.reason or "named pipe" in issue.reason
    device = analysis.load(["/dev/null"])
    (issue,) = device.issues
    assert "device" in issue.reason


def test_the_cli_survives_every_hostile_file_in_one_folder(tmp_path, write_jsonl):
    write_jsonl(two_turns(), name="good.jsonl")
    (tmp_path / "broken.otlp.json").write_text('{"resourceSpans": [{"scopeSpans": "x"}]}')
    deep = _with_deep(assistant("a2", "msg_2", tool_use("t2", "Bash", extra="DEEP")))
    write_jsonl([*two_turns(), deep], name="deep.jsonl")
    for command in ("ingest", "lint", "export"):
        args = [str(tmp_path)] + (
            ["--out", str(tmp_path / "out.json")] if command == "export" else []
        )
        run = tsq(command, *args)
        assert "Traceback" not in run.stderr, (command, run.stderr)
        assert run.returncode in (0, 1, 2), (command, run.stderr)


def test_text_records_are_unaffected(write_jsonl):
    path = write_jsonl([user("u1", "hi"), assistant("a1", "m1", text("hello"))])
    (session,) = analysis.load([path]).sessions
    assert session.turns[0].ask == "hi"


@pytest.mark.parametrize(
    ("field", "value"),
    [("score", 4.0), ("score", -0.5), ("turn_index", -1), ("n_valid", -3), ("step_index", -2)],
)
def test_an_impossible_judgment_is_an_issue_not_a_score(tmp_path, field, value):
    source = analysis.sample_data_dir() / "judgments" / "illustrative.judgments.jsonl"
    lines = source.read_text().splitlines()
    bad = json.loads(lines[0])
    bad[field] = value
    path = tmp_path / "j.judgments.jsonl"
    path.write_text("\n".join([json.dumps(bad), *lines[1:]]) + "\n")
    loaded = analysis.load([path])
    assert len(loaded.judgments) == len(lines) - 1  # the others are kept
    (issue,) = [i for i in loaded.issues if i.line == 1]
    assert issue.reason.startswith("not a judgment")
    assert all(j.score is None or 0 <= j.score <= 1 for j in loaded.judgments)


def test_a_huge_labels_cell_costs_only_its_row_and_lines_are_counted_from_one(tmp_path):
    from analysis.study import read_labels

    path = tmp_path / "labels.csv"
    rows = [
        "item_id,rater,rater_kind,looped",  # line 1
        "a,ann,human,no",  # line 2
        "b,ann,human," + "x" * 140_000,  # line 3: over the csv module's 128 KiB cell limit
        "c,ann,human,yes",  # line 4
        'd,ann,human,"no',  # line 5: a quoted cell over two lines
        '"',  # line 6
        "e,ann,human,no,extra",  # line 7: more cells than columns
        "f,ann,human,maybe",  # line 8: not one of looped's values
        "g,ann,human,no",  # line 9
    ]
    path.write_text("\n".join(rows) + "\n")
    labels = read_labels([path])
    assert sorted(labels.frame["item_id"].to_list()) == ["a", "c", "d", "g"]
    lines = {issue.line: issue.reason for issue in labels.issues}
    assert sorted(lines) == [3, 7, 8]
    assert lines[3].startswith("bad CSV (field larger than field limit")
    assert lines[7] == "more cells than columns"
    assert "maybe" in lines[8]


ROUNDS = 12


def _create_and_save(folder: str, who: str, start: object) -> None:
    """In each round, wait for the other processes, then create the round's store and save."""
    from analysis.study import Decision, LabelStore

    for round_ in range(ROUNDS):
        start.wait()  # type: ignore[attr-defined]
        store = LabelStore(Path(folder) / str(round_) / "store.sqlite")
        store.save(
            Decision(
                item_id="i",
                field="f",
                adjudicator=who,
                adjudicator_kind="human",
                side="human",
                value="v",
                cause="c",
            )
        )


@pytest.mark.slow
def test_eight_processes_creating_one_new_store_at_once_lose_nothing(tmp_path):
    """Twelve rounds of eight processes creating the same new store and saving at once (the
    processes start once and meet at a barrier before each round)."""
    import multiprocessing

    from analysis.study import LabelStore

    context = multiprocessing.get_context("forkserver")
    start = context.Barrier(8)
    workers = [
        context.Process(target=_create_and_save, args=(str(tmp_path), f"p{n}", start))
        for n in range(8)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [worker.exitcode for worker in workers] == [0] * 8
    for round_ in range(ROUNDS):
        saved = sorted(
            d.adjudicator for d in LabelStore(tmp_path / str(round_) / "store.sqlite").decisions()
        )
        assert saved == [f"p{n}" for n in range(8)], f"round {round_}"
