"""The label store's layout is versioned: a store written before layouts were numbered opens
with every row and its who, migrated once in one transaction (even by several processes at
once); a store of a newer layout is refused in one sentence naming the file; every saved row
says who and when (UTC); ``tsq labels export`` writes every label as CSV or JSON Lines.

The old store is built here with plain ``sqlite3``, from the layout's own ``CREATE TABLE``
statements as the code had them, and filled by SQL: nothing of it comes from the code under
test."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import tsq

import analysis
from analysis.study import (
    LAYOUT_VERSION,
    Adoption,
    CauseSetting,
    Decision,
    LabelStore,
    LabelStoreError,
    StepLabel,
)

STUDY = analysis.sample_data_dir() / "council_vs_human"

OLD_LAYOUT = (
    "CREATE TABLE IF NOT EXISTS decisions ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, item_id TEXT NOT NULL,"
    " field TEXT NOT NULL, adjudicator TEXT NOT NULL,"
    " adjudicator_kind TEXT NOT NULL, side TEXT NOT NULL, value TEXT NOT NULL,"
    " cause TEXT NOT NULL, note TEXT NOT NULL, decided_at TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS splits (session_id TEXT PRIMARY KEY,"
    " split TEXT NOT NULL, stratum TEXT NOT NULL, seed INTEGER NOT NULL,"
    " test_share REAL NOT NULL, assigned_at TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS disagreement_causes ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, item_id TEXT NOT NULL,"
    " cause TEXT NOT NULL, set_by TEXT NOT NULL, set_at TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS adoptions ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, judge_id TEXT NOT NULL,"
    " spec_toml TEXT NOT NULL, adopted_by TEXT NOT NULL, adopted_at TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS step_labels ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, item_id TEXT NOT NULL,"
    " labeller TEXT NOT NULL, value TEXT NOT NULL, reason TEXT NOT NULL,"
    " labelled_at TEXT NOT NULL)",
)

# (item_id, labeller, value, reason, labelled_at): ann changes her mind on s1:0:0
STEP_LABELS = [
    ("s1:0:0", "ann", "incorrect", "should have used grep", "2025-03-01T09:00:00Z"),
    ("s1:0:0", "bob", "correct", "", "2025-03-01T09:05:00.250000Z"),
    ("s1:0:0", "ann", "correct", 'on second look, "fine"', "2025-03-02T10:00:00Z"),
    ("s2:1:0", "carla@example.org", "incorrect", "wrong file,\nread twice", "2025-03-03T11:00:00Z"),
]
# (item_id, field, adjudicator, adjudicator_kind, side, value, cause, note, decided_at)
DECISIONS = [
    ("t1", "looped", "dana", "human", "human", "no", "rater_error", "", "2025-03-04T08:00:00Z"),
    ("t2", "looped", "gpt-x", "ai", "council", "yes", "ambiguous", "close", "2025-03-04T08:30:00Z"),
]
# (item_id, cause, set_by, set_at)
CAUSES = [("s2:1:0", "menu_gap", "erik", "2025-03-05T12:00:00Z")]
# (judge_id, spec_toml, adopted_by, adopted_at)
ADOPTIONS = [("judge-1a2b", 'name = "mine"\nvotes = 3\n', "fay", "2025-03-06T13:00:00Z")]
# (session_id, split, stratum, seed, test_share, assigned_at)
SPLITS = [
    ("s1", "dev", "correct", 0, 0.3, "2025-03-01T09:00:01Z"),
    ("s2", "test", "incorrect", 0, 0.3, "2025-03-03T11:00:01Z"),
]


def old_store(path: Path) -> Path:
    """A label store as the code wrote it before layouts were numbered, filled by SQL."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    for statement in OLD_LAYOUT:
        conn.execute(statement)
    conn.executemany(
        "INSERT INTO step_labels (item_id, labeller, value, reason, labelled_at)"
        " VALUES (?, ?, ?, ?, ?)",
        STEP_LABELS,
    )
    conn.executemany(
        "INSERT INTO decisions (item_id, field, adjudicator, adjudicator_kind, side, value,"
        " cause, note, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        DECISIONS,
    )
    conn.executemany(
        "INSERT INTO disagreement_causes (item_id, cause, set_by, set_at) VALUES (?, ?, ?, ?)",
        CAUSES,
    )
    conn.executemany(
        "INSERT INTO adoptions (judge_id, spec_toml, adopted_by, adopted_at) VALUES (?, ?, ?, ?)",
        ADOPTIONS,
    )
    conn.executemany("INSERT INTO splits VALUES (?, ?, ?, ?, ?, ?)", SPLITS)
    conn.commit()
    conn.close()
    return path


def user_version(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    return version


def columns(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Each table's columns (name, type, not null, default, primary key)."""
    with sqlite3.connect(path) as conn:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'sqlite_sequence'"
            )
        ]
        return {
            table: [tuple(row[1:]) for row in conn.execute(f"PRAGMA table_info({table})")]
            for table in sorted(tables)
        }


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_a_store_from_before_layouts_opens_with_every_row_and_its_who(tmp_path):
    path = old_store(tmp_path / "labels.sqlite")
    assert user_version(path) == 0

    store = LabelStore(path)

    assert store.migrated_from == 1
    assert user_version(path) == LAYOUT_VERSION
    history = [
        (x.item_id, x.labeller, x.value, x.reason, x.labelled_at)
        for x in store.step_labels(history=True)
    ]
    assert history == [(i, who, v, r, at(when)) for i, who, v, r, when in STEP_LABELS]
    current = [(x.item_id, x.labeller, x.value) for x in store.step_labels()]
    assert current == [
        ("s1:0:0", "bob", "correct"),
        ("s1:0:0", "ann", "correct"),
        ("s2:1:0", "carla@example.org", "incorrect"),
    ]
    decisions = [
        (
            d.item_id,
            d.field,
            d.adjudicator,
            d.adjudicator_kind,
            d.side,
            d.value,
            d.cause,
            d.note,
            d.decided_at,
        )
        for d in store.decisions()
    ]
    assert decisions == [(*row[:-1], at(row[-1])) for row in DECISIONS]
    assert store.version() == 2
    assert store.step_labels_version() == 4
    causes = store.causes()
    assert list(causes) == ["s2:1:0"]
    assert (causes["s2:1:0"].cause, causes["s2:1:0"].set_by) == ("menu_gap", "erik")
    assert [(a.judge_id, a.spec_toml, a.adopted_by) for a in store.adoptions()] == [
        row[:3] for row in ADOPTIONS
    ]
    splits = store.splits()
    assert {s: (x.split, x.stratum, x.seed, x.test_share) for s, x in splits.items()} == {
        row[0]: row[1:5] for row in SPLITS
    }


def test_a_migrated_row_was_saved_at_its_own_time(tmp_path):
    path = old_store(tmp_path / "labels.sqlite")
    LabelStore(path)
    with sqlite3.connect(path) as conn:
        saved = conn.execute("SELECT labelled_at, saved_at FROM step_labels ORDER BY id")
        assert [at(own) for own, _ in saved] == [at(row[-1]) for row in STEP_LABELS]
        saved = conn.execute("SELECT labelled_at, saved_at FROM step_labels ORDER BY id")
        assert all(at(own) == at(when) for own, when in saved)
        saved = conn.execute("SELECT assigned_at, saved_at FROM splits ORDER BY session_id")
        assert [when for _, when in saved] == [row[-1] for row in SPLITS]


def test_a_migrated_store_opens_again_without_migrating(tmp_path):
    path = old_store(tmp_path / "labels.sqlite")
    LabelStore(path)
    again = LabelStore(path)
    assert again.migrated_from is None
    assert len(again.step_labels(history=True)) == len(STEP_LABELS)


def test_a_new_store_has_the_layout_a_migrated_one_has(tmp_path):
    new = LabelStore(tmp_path / "new.sqlite")
    assert new.migrated_from is None
    assert user_version(new.path) == LAYOUT_VERSION
    migrated = old_store(tmp_path / "old.sqlite")
    LabelStore(migrated)
    assert columns(new.path) == columns(migrated)
    assert all(
        any(column[0] == "saved_at" for column in table) for table in columns(migrated).values()
    )


def test_a_store_missing_a_table_of_the_old_layout_gains_it(tmp_path):
    path = tmp_path / "early.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(OLD_LAYOUT[0])
        conn.execute(
            "INSERT INTO decisions (item_id, field, adjudicator, adjudicator_kind, side, value,"
            " cause, note, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            DECISIONS[0],
        )
    store = LabelStore(path)
    assert store.migrated_from == 1
    assert [d.adjudicator for d in store.decisions()] == ["dana"]
    assert store.step_labels() == []
    assert store.adoptions() == []


def test_a_failed_migration_leaves_the_store_as_it_was(tmp_path):
    """The migration fails on the last table it changes (a trigger refuses the update): the
    tables it had changed before are as they were."""
    path = old_store(tmp_path / "labels.sqlite")
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TRIGGER refuse BEFORE UPDATE ON step_labels"
            " BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )
    before = columns(path)
    with pytest.raises(sqlite3.Error, match="refused"):
        LabelStore(path)
    assert user_version(path) == 0
    assert columns(path) == before
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM step_labels").fetchone() == (len(STEP_LABELS),)
        conn.execute("DROP TRIGGER refuse")
    assert LabelStore(path).migrated_from == 1


def future_store(path: Path) -> Path:
    LabelStore(path).save_step_label(StepLabel(item_id="a", labeller="ann", value="correct"))
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {LAYOUT_VERSION + 1}")
    return path


def test_a_store_of_a_newer_layout_is_refused_in_one_sentence_naming_it(tmp_path):
    path = future_store(tmp_path / "labels.sqlite")
    with pytest.raises(LabelStoreError) as refused:
        LabelStore(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: ")
    assert f"version {LAYOUT_VERSION + 1}" in message
    assert "\n" not in message
    assert ". " not in message.removeprefix(str(path))
    assert user_version(path) == LAYOUT_VERSION + 1


def test_tsq_refuses_a_store_of_a_newer_layout_without_touching_it(tmp_path):
    path = future_store(tmp_path / "labels.sqlite")
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = path.read_bytes()
    labels = tmp_path / "new.csv"
    labels.write_text(
        "session_id,turn_index,step_index,value,reason,labeller\ns9,0,0,correct,,ann\n"
    )
    for args in (
        ("labels", "export", "--db", str(path)),
        ("labels", "import", str(labels), "--db", str(path)),
        ("align", "--labels", str(path), "--set-cause", "s9:0:0=menu_gap"),
        ("agreement", str(STUDY), "--tables", "--db", str(path)),
        ("adjudicate", str(STUDY), "--db", str(path), "--model", "claude-judge-4-5"),
    ):
        result = tsq(*args)
        assert result.returncode == 2, result.stderr
        assert result.stdout == ""
        lines = result.stderr.splitlines()
        assert lines[-1].startswith(f"{path}: the label store's layout is version")
        assert "Traceback" not in result.stderr
    assert path.read_bytes() == before


def test_every_saved_row_says_who_and_when_in_utc(tmp_path):
    store = LabelStore(tmp_path / "labels.sqlite")
    before = datetime.now(UTC)
    store.save_step_label(
        StepLabel(
            item_id="a", labeller="ann", value="correct", labelled_at="2025-01-01T12:00:00+02:00"
        )
    )
    store.save_step_label(
        StepLabel(item_id="b", labeller="ann", value="correct", labelled_at="2025-01-01T12:00:00")
    )
    [one, two] = store.step_labels()
    assert one.labelled_at == datetime(2025, 1, 1, 10, tzinfo=UTC)
    assert two.labelled_at == datetime(2025, 1, 1, 12, tzinfo=UTC)
    with sqlite3.connect(store.path) as conn:
        rows = conn.execute("SELECT labelled_at, saved_at FROM step_labels ORDER BY id")
        own, saved = zip(*rows, strict=True)
    assert own == ("2025-01-01T10:00:00Z", "2025-01-01T12:00:00Z")
    for text in saved:
        assert text.endswith("Z")
        assert before <= at(text) <= datetime.now(UTC) + timedelta(seconds=1)


@pytest.mark.parametrize(
    "row",
    [
        Decision(
            item_id="t",
            field="f",
            adjudicator="",
            adjudicator_kind="human",
            side="human",
            value="v",
            cause="c",
        ),
        StepLabel(item_id="a", labeller="  ", value="correct"),
        CauseSetting(item_id="a", cause="menu_gap", set_by=" "),
        Adoption(judge_id="j", spec_toml="", adopted_by="\t"),
    ],
    ids=["decision", "step label", "cause", "adoption"],
)
def test_a_row_without_who_is_refused(tmp_path, row):
    store = LabelStore(tmp_path / "labels.sqlite")
    save = {
        Decision: store.save,
        StepLabel: store.save_step_label,
        CauseSetting: store.set_cause,
        Adoption: store.adopt,
    }[type(row)]
    with pytest.raises(ValueError, match="needs who saved it"):
        save(row)


# The labels of OLD_LAYOUT's inserts as an export writes them: kind, id, who, when, own columns.
EXPECTED = [
    *(
        {"kind": "step_label", "id": n, "who": who, "when": when, "item_id": item}
        | {"value": value, "reason": reason}
        for n, (item, who, value, reason, when) in enumerate(STEP_LABELS, 1)
    ),
    *(
        {"kind": "decision", "id": n, "who": who, "when": when, "item_id": item, "field": field}
        | {"adjudicator_kind": kind, "side": side, "value": value, "cause": cause, "note": note}
        for n, (item, field, who, kind, side, value, cause, note, when) in enumerate(DECISIONS, 1)
    ),
    *(
        {"kind": "cause", "id": n, "who": who, "when": when, "item_id": item, "cause": cause}
        for n, (item, cause, who, when) in enumerate(CAUSES, 1)
    ),
    *(
        {"kind": "adoption", "id": n, "who": who, "when": when, "judge_id": judge}
        | {"spec_toml": spec}
        for n, (judge, spec, who, when) in enumerate(ADOPTIONS, 1)
    ),
]


def test_export_as_json_lines_writes_every_label_with_who_and_when(tmp_path):
    path = old_store(tmp_path / "labels.sqlite")
    result = tsq("labels", "export", "--db", str(path), "--format", "jsonl")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    saved = [row.pop("saved_at") for row in rows]
    assert rows == EXPECTED
    assert [at(s) for s in saved] == [at(row["when"]) for row in EXPECTED]  # migrated rows


def test_export_as_csv_writes_every_label_with_who_and_when(tmp_path):
    path = old_store(tmp_path / "labels.sqlite")
    out = tmp_path / "out" / "labels.csv"
    out.parent.mkdir()
    result = tsq("labels", "export", "--db", str(path), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == f"Exported {len(EXPECTED)} labels from {path} to {out}.\n"
    with out.open(encoding="utf-8", newline="") as file:
        reader = csv.DictReader(file)
        header = reader.fieldnames
        rows = list(reader)
    assert header is not None
    assert header[:5] == ["kind", "id", "who", "when", "saved_at"]
    for row, expected in zip(rows, EXPECTED, strict=True):
        assert {k: v for k, v in row.items() if k in expected} == {
            k: str(v) for k, v in expected.items()
        }
        assert all(v == "" for k, v in row.items() if k not in expected and k != "saved_at")


def test_export_includes_what_new_code_saves_with_its_who(tmp_path):
    path = old_store(tmp_path / "labels.sqlite")
    store = LabelStore(path)
    store.save_step_label(StepLabel(item_id="s3:0:0", labeller="gus@example.org", value="correct"))
    result = tsq("labels", "export", "--db", str(path), "--format", "jsonl")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    new = rows[len(STEP_LABELS)]
    assert (new["kind"], new["id"], new["who"], new["item_id"]) == (
        "step_label",
        len(STEP_LABELS) + 1,
        "gus@example.org",
        "s3:0:0",
    )
    assert at(new["when"]) <= at(new["saved_at"])
    assert len(rows) == len(EXPECTED) + 1


def test_export_refuses_a_store_that_is_not_there(tmp_path):
    missing = tmp_path / "missing.sqlite"
    result = tsq("labels", "export", "--db", str(missing))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"{missing}: no such label store.\n"
    assert not missing.exists()


def test_export_of_a_new_store_is_its_header(tmp_path):
    path = tmp_path / "labels.sqlite"
    LabelStore(path)
    result = tsq("labels", "export", "--db", str(path))
    assert result.returncode == 0, result.stderr
    assert list(csv.reader(io.StringIO(result.stdout)))[1:] == []


ROUNDS = 6
PROCESSES = 6


def _open_old_store(folder: str, who: str, start: object, seen: object) -> None:
    """In each round, wait for the other processes, then open the round's old store, say
    whether this process migrated it, and save a label."""
    for round_ in range(ROUNDS):
        start.wait()  # type: ignore[attr-defined]
        store = LabelStore(Path(folder) / str(round_) / "labels.sqlite")
        seen.put((round_, who, store.migrated_from))  # type: ignore[attr-defined]
        store.save_step_label(StepLabel(item_id="new", labeller=who, value="correct"))


@pytest.mark.slow
def test_processes_opening_one_old_store_at_once_migrate_it_once_and_lose_nothing(tmp_path):
    import multiprocessing

    for round_ in range(ROUNDS):
        old_store(tmp_path / str(round_) / "labels.sqlite")
    context = multiprocessing.get_context("forkserver")
    start = context.Barrier(PROCESSES)
    seen = context.Queue()
    workers = [
        context.Process(target=_open_old_store, args=(str(tmp_path), f"p{n}", start, seen))
        for n in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    reports = [seen.get(timeout=120) for _ in range(ROUNDS * PROCESSES)]
    for worker in workers:
        worker.join(timeout=120)
    assert [worker.exitcode for worker in workers] == [0] * PROCESSES
    for round_ in range(ROUNDS):
        migrated = [m for r, _, m in reports if r == round_]
        assert sorted(migrated, key=str) == [1] + [None] * (PROCESSES - 1), f"round {round_}"
        path = tmp_path / str(round_) / "labels.sqlite"
        assert user_version(path) == LAYOUT_VERSION
        labels = LabelStore(path).step_labels(history=True)
        old = [(x.item_id, x.labeller, x.value, x.reason) for x in labels[: len(STEP_LABELS)]]
        assert old == [row[:4] for row in STEP_LABELS]
        assert sorted(x.labeller for x in labels[len(STEP_LABELS) :]) == [
            f"p{n}" for n in range(PROCESSES)
        ]


@pytest.mark.usefixtures("fresh_app")
def test_the_agreement_page_says_a_store_of_a_newer_layout_in_its_sentence():
    from conftest import open_page, plain

    path = future_store(analysis.study.default_store_path(STUDY))
    at = open_page("pages/agreement.py")
    assert not at.exception
    (error,) = [plain(e.value) for e in at.error]
    assert error.startswith(f"{path}: the label store's layout is version")
