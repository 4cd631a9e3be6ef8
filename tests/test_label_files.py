"""Label files (issue #37): a row's bad bytes cost only that row, named by file and line.

Files are written to disk, read by the library and by the real ``tsq`` CLI into a real SQLite
store; the expected rows and lines are worked out here from the bytes written."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

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
    env = {**os.environ, "TSQ_DATA_DIR": str(data_dir)}
    return subprocess.run(
        [sys.executable, "-m", "analysis", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


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
