"""Label files: a row's bad bytes, wrong types or blank names cost only that row,
named by file and line; a file's repeated rows are imported once.

Files are written to disk, read by the library and by the real ``tsq`` CLI into a real SQLite
store; the expected rows and lines are worked out here from the bytes written."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

from conftest import tsq

from analysis.align import read_step_labels
from analysis.study import read_labels

HEADER = b"session_id,turn_index,step_index,value,reason,labeller\n"
ROWS = [
    b"s1,0,0,correct,fine,alice\n",
    b"s1,0,1,incorrect,use Grep,alice\n",
    b"s1,1,0,correct,caf\xff order,bob\n",  # row 3: a byte that is not UTF-8
    b"s2,0,0,incorrect,wrong tool,bob\n",
    b"s2,1,2,correct,,carol\n",
]


def _tsq(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    return tsq(*args, env={"TSQ_DATA_DIR": str(data_dir)})


def _stored(db: Path) -> list[tuple[str, str, str, str]]:
    """The store's step labels, read with sqlite3 itself."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT item_id, labeller, value, reason FROM step_labels ORDER BY id"
        ).fetchall()
    return [tuple(row) for row in rows]


def _utf8_lines(data: bytes) -> tuple[list[int], dict[int, int]]:
    """Independent of the product: the 1-based numbers of the lines that decode as UTF-8, and
    of those that do not, the 1-based position of their first bad byte."""
    good: list[int] = []
    bad: dict[int, int] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            bad[number] = error.start + 1
        else:
            good.append(number)
    return good, bad


def _item(row: bytes) -> str:
    session, turn, step = row.decode("utf-8", errors="replace").split(",")[:3]
    return f"{session}:{turn}:{step}"


# Defect 5: one byte that is not UTF-8 costs its row, named by line


def _bad_byte_file(tmp_path: Path) -> Path:
    path = tmp_path / "labels.csv"
    path.write_bytes(HEADER + b"".join(ROWS))
    return path


def test_a_non_utf8_byte_costs_only_its_row_in_the_library(tmp_path):
    path = _bad_byte_file(tmp_path)
    good, bad = _utf8_lines(path.read_bytes())
    assert list(bad) == [4]  # the header is line 1, so row 3 is line 4
    labels, issues = read_step_labels(path)
    kept_rows = [row for number, row in enumerate(ROWS, start=2) if number in good]
    assert [label.item_id for label in labels] == [_item(row) for row in kept_rows]
    assert len(labels) == 4
    (issue,) = issues
    assert (issue.file, issue.line) == (str(path), 4)
    assert "not UTF-8" in issue.reason
    assert f"position {bad[4]}" in issue.reason
    assert "\n" not in str(issue)


def test_a_non_utf8_byte_costs_only_its_row_in_tsq_labels_import(tmp_path):
    path = _bad_byte_file(tmp_path)
    db = tmp_path / "store.sqlite"
    done = _tsq("labels", "import", str(path), "--db", str(db), data_dir=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "Imported 4 step labels" in done.stdout
    (said,) = done.stderr.strip().splitlines()
    assert said.startswith(f"{path}:4: not UTF-8")
    items = [item for item, *_ in _stored(db)]
    assert items == [_item(row) for number, row in enumerate(ROWS, start=2) if number != 4]


def test_a_non_utf8_byte_costs_only_its_row_of_study_labels(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_bytes(
        b"item_id,rater,rater_kind,comment\n"
        b'a,ann,human,"no\nreally no"\n'  # a quoted cell over two lines: lines 2 and 3
        b"b,ann,human,n\xe9\n"  # line 4: \xe9 starts no UTF-8 sequence here
        b"c,ann,human,yes\n"
    )
    labels = read_labels([path])
    assert labels.frame["item_id"].to_list() == ["a", "c"]
    assert labels.frame["line"].to_list() == [2, 5]
    assert labels.frame["value"].to_list()[0] == "no\nreally no"
    (issue,) = labels.issues
    assert (issue.file, issue.line) == (str(path), 4)
    assert "position 14" in issue.reason  # b"b,ann,human,n" is 13 bytes: \xe9 is the 14th


def test_a_bad_byte_inside_a_quoted_cell_over_lines_costs_that_record(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_bytes(
        HEADER
        + b's1,0,0,correct,"two\nlines",alice\n'  # lines 2-3
        + b's1,0,1,correct,"bad \xff\nstill the cell",alice\n'  # lines 4-5, bad byte on 4
        + b"s1,0,2,incorrect,,bob\r\n"  # line 6
        + b"s1,0,3,correct,,bob\n"  # line 7
    )
    labels, issues = read_step_labels(path)
    assert [label.item_id for label in labels] == ["s1:0:0", "s1:0:2", "s1:0:3"]
    assert labels[0].reason == "two\nlines"
    assert [(issue.line, "not UTF-8" in issue.reason) for issue in issues] == [(4, True)]


def test_a_utf8_byte_order_mark_is_dropped_from_the_header(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_bytes(b"\xef\xbb\xbf" + HEADER + ROWS[0])
    labels, issues = read_step_labels(path)
    assert (issues, [label.item_id for label in labels]) == ([], ["s1:0:0"])


# Defect 6: a wrong type or a blank name is refused, not coerced


def test_json_rows_of_the_wrong_type_or_blank_names_are_issues(tmp_path):
    good = {"session_id": "s1", "turn_index": 2, "step_index": 0, "value": "correct"}
    rows = [
        {**good, "labeller": "alice"},  # line 1: kept
        {**good, "turn_index": True, "labeller": "alice"},  # 2: true is not turn 1
        {**good, "step_index": 1.0, "labeller": "alice"},  # 3: a float is not a step
        {**good, "turn_index": "3", "labeller": "alice"},  # 4: JSON text is not a number
        {**good, "session_id": "   ", "labeller": "alice"},  # 5: blank session
        {**good, "labeller": " \t "},  # 6: blank labeller
        {**good, "parent_call_id": "  ", "labeller": "bob"},  # 7: blank call id
        {**good, "turn_index": 0, "step_index": 4, "labeller": "bob"},  # 8: kept
    ]
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    labels, issues = read_step_labels(path)
    assert [(label.item_id, label.labeller) for label in labels] == [
        ("s1:2:0", "alice"),
        ("s1:0:4", "bob"),
    ]
    assert [issue.line for issue in issues] == [2, 3, 4, 5, 6, 7]
    assert [issue.reason.split(":")[0] for issue in issues] == [
        "turn_index",
        "step_index",
        "turn_index",
        "session_id",
        "labeller",
        "parent_call_id",
    ]
    for issue in issues:
        assert str(issue).startswith(f"{path}:{issue.line}: ")
        assert "\n" not in str(issue)

    db = tmp_path / "store.sqlite"
    done = _tsq("labels", "import", str(path), "--db", str(db), data_dir=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "Imported 2 step labels" in done.stdout
    assert [line.split(": ")[0] for line in done.stderr.strip().splitlines()] == [
        f"{path}:{number}" for number in range(2, 8)
    ]
    assert [(item, labeller) for item, labeller, *_ in _stored(db)] == [
        ("s1:2:0", "alice"),
        ("s1:0:4", "bob"),
    ]


def test_csv_cells_are_still_read_as_numbers_but_blank_names_are_issues(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_bytes(
        HEADER
        + b"s1,3,12,correct,,alice\n"  # line 2: "3" and "12" are numbers in a CSV
        + b"s1,true,0,correct,,alice\n"  # 3: not a number
        + b"   ,0,0,correct,,alice\n"  # 4: blank session
        + b"s1,0,0,correct,,   \n"  # 5: blank labeller
    )
    labels, issues = read_step_labels(path)
    assert [label.item_id for label in labels] == ["s1:3:12"]
    assert [(issue.line, issue.reason.split(":")[0]) for issue in issues] == [
        (3, "turn_index"),
        (4, "session_id"),
        (5, "labeller"),
    ]


def test_study_label_ids_that_are_not_text_are_issues(tmp_path):
    path = tmp_path / "labels.jsonl"
    rows = [
        {"item_id": "a", "rater": "ann", "rater_kind": "human", "field": "f", "value": True},
        {"item_id": True, "rater": "ann", "rater_kind": "human", "field": "f", "value": "no"},
        {"item_id": "b", "rater": "  ", "rater_kind": "human", "field": "f", "value": "no"},
        {"item_id": 7, "rater": "ann", "rater_kind": "human", "field": "f", "value": "no"},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    labels = read_labels([path])
    assert labels.frame.select("item_id", "value").rows() == [("a", "yes"), ("7", "no")]
    assert [issue.line for issue in labels.issues] == [2, 3]
    assert "item_id" in labels.issues[0].reason
    assert "rater" in labels.issues[1].reason


# Defect 8: a file's identical rows are imported once


def test_identical_rows_of_one_file_are_imported_once(tmp_path):
    path = tmp_path / "labels.csv"
    row = b"s1,0,0,correct,fine,alice\n"
    other = b"s1,0,0,incorrect,fine,alice\n"  # another value: not a duplicate
    path.write_bytes(HEADER + row + row + other)
    distinct = list(dict.fromkeys([row, row, other]))
    db = tmp_path / "store.sqlite"
    done = _tsq("labels", "import", str(path), "--db", str(db), data_dir=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"Imported {len(distinct)} step labels" in done.stdout
    assert "1 duplicate in the file skipped" in done.stdout
    assert "0 already there" in done.stdout
    assert _stored(db) == [
        ("s1:0:0", "alice", "correct", "fine"),
        ("s1:0:0", "alice", "incorrect", "fine"),
    ]
    again = _tsq("labels", "import", str(path), "--db", str(db), data_dir=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "Imported 0 step labels" in again.stdout
    assert f"{len(distinct)} already there" in again.stdout
    assert "1 duplicate in the file skipped" in again.stdout
    assert len(_stored(db)) == len(distinct)


def test_two_identical_rows_import_one(tmp_path):
    path = tmp_path / "labels.jsonl"
    row = {"session_id": "s", "turn_index": 0, "step_index": 0, "value": "correct"}
    row["labeller"] = "ann"
    path.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n")
    db = tmp_path / "store.sqlite"
    done = _tsq("labels", "import", str(path), "--db", str(db), data_dir=tmp_path)
    assert "Imported 1 step labels" in done.stdout
    assert "1 duplicate in the file skipped" in done.stdout
    assert len(_stored(db)) == 1
    again = _tsq("labels", "import", str(path), "--db", str(db), data_dir=tmp_path)
    assert "Imported 0 step labels" in again.stdout
    assert len(_stored(db)) == 1
