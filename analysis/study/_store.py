"""Decisions on disagreements: the :class:`Decision` record, the SQLite :class:`LabelStore`
the app and the AI adjudicator save to, and decisions shipped as a table beside the labels."""

from __future__ import annotations

import csv
import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from analysis._jsonio import first_error
from analysis._paths import data_dir
from analysis.models import ParseIssue
from analysis.study._labels import read_rows

DECISION_COLUMNS = ("item_id", "field", "adjudicator", "adjudicator_kind", "side", "value")


class Decision(BaseModel):
    """One adjudication: who decided, which side they chose, why."""

    model_config = ConfigDict(extra="ignore")

    item_id: str
    field: str
    adjudicator: str
    adjudicator_kind: Literal["human", "ai"]
    side: Literal["human", "council", "other"]
    value: str
    cause: str
    note: str = ""
    decided_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class StepLabel(BaseModel):
    """A person's label of one step's (or turn's) tool choice, saved from the Turn page.

    ``item_id`` is the step's label item (:func:`analysis.study.step_item_id`).
    """

    model_config = ConfigDict(extra="ignore")

    item_id: str
    labeller: str = Field(min_length=1)
    value: Literal["correct", "incorrect"]
    reason: str = ""
    labelled_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class SplitAssignment(BaseModel):
    """Which part of the label set a session's steps are in, fixed once assigned."""

    session_id: str
    split: Literal["dev", "test"]
    stratum: str
    """The people's label the split was stratified on: ``incorrect`` for a session with a
    step people called incorrect, else ``correct``."""
    seed: int
    test_share: float
    assigned_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class Adoption(BaseModel):
    """A judge spec a person adopted, with the spec's text as it was."""

    judge_id: str
    spec_toml: str
    adopted_by: str = Field(min_length=1)
    adopted_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class CauseSetting(BaseModel):
    """A person's word on why the judge and people disagree on a step (``tsq align
    --set-cause``): it replaces the cause suggested from the evidence."""

    item_id: str
    cause: str
    set_by: str = Field(min_length=1)
    set_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class StepLabelImport(NamedTuple):
    """What an import of step labels did."""

    added: int
    already: int
    """Labels left out because the store already held them."""
    repeated: int
    """Rows left out because they repeat an earlier row of the same file."""


_WHO_AND_WHEN: dict[type[BaseModel], tuple[str | None, str]] = {
    Decision: ("adjudicator", "decided_at"),
    StepLabel: ("labeller", "labelled_at"),
    CauseSetting: ("set_by", "set_at"),
    Adoption: ("adopted_by", "adopted_at"),
    SplitAssignment: (None, "assigned_at"),
}
"""Each saved model's field naming who saved it (a split is the code's, no one's) and its own
time."""

_INSERT_STEP_LABEL = (
    "INSERT INTO step_labels (item_id, labeller, value, reason, labelled_at, saved_at)"
    " VALUES (:item_id, :labeller, :value, :reason, :labelled_at, :saved_at)"
)


def _saved_row(model: BaseModel) -> dict[str, Any]:
    """The row a model is saved as: its own time in UTC, ``saved_at`` now; a row that does not
    say who saved it is refused."""
    who, when = _WHO_AND_WHEN[type(model)]
    row = model.model_dump(mode="json")
    if who is not None and not str(row[who]).strip():
        raise ValueError(f"a {type(model).__name__} needs who saved it: its {who} is empty")
    row[when] = utc_text(row[when])
    row["saved_at"] = utc_text(datetime.now(UTC))
    return row


SETUP_WAIT = 30.0

LAYOUT_VERSION = 2
"""The layout of the store's tables this code reads and writes, kept in the file's ``PRAGMA
user_version``. A file from before layouts were numbered reads 0: layout 1. Layout 2 adds
``saved_at`` (when the store saved the row, UTC) to every table."""

_LAYOUT_1 = (
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
"""Layout 1, as it was: a store is made by creating it, then migrating to the current layout,
so a new store and a migrated one are the same."""

_TIME_COLUMNS = {
    "decisions": "decided_at",
    "splits": "assigned_at",
    "disagreement_causes": "set_at",
    "adoptions": "adopted_at",
    "step_labels": "labelled_at",
}
"""Each table's own time: when the person (or the split) says it happened."""


def utc_text(moment: datetime | str) -> str:
    """``moment`` as UTC in ISO 8601 with a ``Z`` (as the models write it); a time without a
    zone is taken as UTC, and text that is no time is kept as it is."""
    if isinstance(moment, str):
        try:
            return utc_text(datetime.fromisoformat(moment))
        except ValueError:
            return moment
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _to_layout_2(conn: sqlite3.Connection) -> None:
    """``saved_at`` on every table; a row saved before is given its own time."""
    for table, column in _TIME_COLUMNS.items():
        conn.execute(f"ALTER TABLE {table} ADD COLUMN saved_at TEXT NOT NULL DEFAULT ''")
        rows = conn.execute(f"SELECT rowid, {column} FROM {table}").fetchall()
        conn.executemany(
            f"UPDATE {table} SET saved_at = ? WHERE rowid = ?",
            [(utc_text(moment), rowid) for rowid, moment in rows],
        )


_MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _to_layout_2}
"""The step from each layout to the next."""


class LabelStoreError(sqlite3.DatabaseError):
    """A label store this code cannot open (its layout is newer than the code's); the
    message is one sentence naming the file."""


class LabelStore:
    """Decisions (and people's step labels) in an SQLite file: every save is its own committed
    transaction.

    A connection per call, WAL journal and a busy timeout let several browser tabs (threads)
    or processes save at once without losing a decision. History is kept; the latest decision
    for an (item, field) is the current one, and the latest step label for an (item, labeller).

    Every row says who saved it (a decision's ``adjudicator``, a label's ``labeller``, a
    cause's ``set_by``, an adoption's ``adopted_by``: never empty) and when (its own time, and
    ``saved_at``, the moment the store saved it, both UTC). Opening a store of an older layout
    migrates it to :data:`LAYOUT_VERSION` in one transaction (``migrated_from`` then says from
    which); a newer one is refused with :class:`LabelStoreError`.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.migrated_from: int | None = None
        """The layout this opening migrated the file from; None when it did not migrate."""
        self._set_up()

    def _set_up(self) -> None:
        """Create the file and its tables, or migrate them. Several processes may do so at
        once: switching to WAL can meet a lock the busy timeout does not wait on, so this
        waits and tries again (for up to ``SETUP_WAIT`` seconds), as a save would wait."""
        deadline = time.monotonic() + SETUP_WAIT
        pause = 0.01
        while True:
            try:
                self.migrated_from = self._lay_out()
                return
            except sqlite3.OperationalError as error:
                busy = "locked" in str(error) or "busy" in str(error)
                if not busy or time.monotonic() > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.5)

    def _lay_out(self) -> int | None:
        """Bring the file to the current layout in one transaction; the layout it migrated
        from, or None (already current, or a new file)."""
        with self._connect() as conn:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            if self._layout(conn) == LAYOUT_VERSION:
                return None
            conn.execute("BEGIN IMMEDIATE")  # one process migrates; the others wait, then see
            layout = self._layout(conn)
            if layout == LAYOUT_VERSION:
                return None
            names = ", ".join(f"'{table}'" for table in _TIME_COLUMNS)
            new = not conn.execute(
                f"SELECT 1 FROM sqlite_master WHERE type = 'table' AND name IN ({names})"
            ).fetchall()
            for statement in _LAYOUT_1:  # also any table a store of layout 1 lacks
                conn.execute(statement)
            for step in range(max(layout, 1), LAYOUT_VERSION):
                _MIGRATIONS[step](conn)
            conn.execute(f"PRAGMA user_version = {LAYOUT_VERSION}")
        return None if new else max(layout, 1)

    def _layout(self, conn: sqlite3.Connection) -> int:
        """The file's layout (0: none recorded); one newer than this code's is refused."""
        layout: int = conn.execute("PRAGMA user_version").fetchone()[0]
        if layout > LAYOUT_VERSION:
            raise LabelStoreError(
                f"{self.path}: the label store's layout is version {layout}, but this tsq "
                f"reads layouts up to {LAYOUT_VERSION}: upgrade tsq to open it (the file is "
                "left untouched)"
            )
        return layout

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=30)) as conn:
            conn.execute("PRAGMA synchronous=FULL")
            with conn:  # commits on success, rolls back on error
                yield conn

    def save(self, decision: Decision) -> None:
        row = _saved_row(decision)
        with self._connect() as conn:
            conn.execute(
                "INSERT INTO decisions (item_id, field, adjudicator, adjudicator_kind, side,"
                " value, cause, note, decided_at, saved_at) VALUES (:item_id, :field,"
                " :adjudicator, :adjudicator_kind, :side, :value, :cause, :note, :decided_at,"
                " :saved_at)",
                row,
            )

    def version(self) -> int:
        """The id of the latest decision saved (0: none yet): it changes with every save, from
        any thread or process, so it keys caches of what the decisions feed."""
        with self._connect() as conn:
            latest: int | None = conn.execute("SELECT MAX(id) FROM decisions").fetchone()[0]
        return latest or 0

    def decisions(self) -> list[Decision]:
        """Every decision saved, oldest first."""
        with self._connect() as conn:
            conn.row_factory = sqlite3.Row
            rows = conn.execute("SELECT * FROM decisions ORDER BY id").fetchall()
        return [Decision.model_validate(dict(row)) for row in rows]

    def save_step_label(self, label: StepLabel) -> None:
        row = _saved_row(label)
        with self._connect() as conn:
            conn.execute(_INSERT_STEP_LABEL, row)

    def step_labels_version(self) -> int:
        """The id of the latest step label saved (0: none yet), like :meth:`version`."""
        with self._connect() as conn:
            latest: int | None = conn.execute("SELECT MAX(id) FROM step_labels").fetchone()[0]
        return latest or 0

    def step_labels(self, history: bool = False) -> list[StepLabel]:
        """The current step labels: the latest per (item, labeller), in the order saved; with
        ``history``, every label ever saved, oldest first."""
        query = (
            "SELECT * FROM step_labels ORDER BY id"
            if history
            else "SELECT * FROM step_labels WHERE id IN"
            " (SELECT MAX(id) FROM step_labels GROUP BY item_id, labeller) ORDER BY id"
        )
        with self._connect() as conn:
            conn.row_factory = sqlite3.Row
            rows = conn.execute(query).fetchall()
        return [StepLabel.model_validate(dict(row)) for row in rows]

    def save_step_labels(self, labels: list[StepLabel]) -> None:
        """Several labels in one transaction (an import): all of them, or none."""
        rows = [_saved_row(label) for label in labels]
        with self._connect() as conn:
            conn.executemany(_INSERT_STEP_LABEL, rows)

    def import_step_labels(self, labels: Sequence[StepLabel]) -> StepLabelImport:
        """A file's labels, added in one transaction: a label the file repeats (the same item,
        labeller, value and reason) is added once, and one already saved is not added again."""
        distinct: dict[tuple[str, str, str, str], StepLabel] = {}
        for label in labels:
            distinct.setdefault((label.item_id, label.labeller, label.value, label.reason), label)
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")  # no other import between the check and the adding
            saved = set(conn.execute("SELECT item_id, labeller, value, reason FROM step_labels"))
            new = [label for key, label in distinct.items() if key not in saved]
            conn.executemany(_INSERT_STEP_LABEL, [_saved_row(label) for label in new])
        return StepLabelImport(
            added=len(new), already=len(distinct) - len(new), repeated=len(labels) - len(distinct)
        )

    def splits(self) -> dict[str, SplitAssignment]:
        """Every session's split, by session id."""
        with self._connect() as conn:
            conn.row_factory = sqlite3.Row
            rows = conn.execute("SELECT * FROM splits").fetchall()
        return {row["session_id"]: SplitAssignment.model_validate(dict(row)) for row in rows}

    def save_splits(self, assignments: list[SplitAssignment]) -> None:
        """New sessions' splits; a session already assigned keeps its split (never moved)."""
        rows = [_saved_row(a) for a in assignments]
        with self._connect() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO splits (session_id, split, stratum, seed, test_share,"
                " assigned_at, saved_at) VALUES (:session_id, :split, :stratum, :seed,"
                " :test_share, :assigned_at, :saved_at)",
                rows,
            )

    def adopt(self, adoption: Adoption) -> None:
        with self._connect() as conn:
            conn.execute(
                "INSERT INTO adoptions (judge_id, spec_toml, adopted_by, adopted_at, saved_at)"
                " VALUES (:judge_id, :spec_toml, :adopted_by, :adopted_at, :saved_at)",
                _saved_row(adoption),
            )

    def set_cause(self, setting: CauseSetting) -> None:
        with self._connect() as conn:
            conn.execute(
                "INSERT INTO disagreement_causes (item_id, cause, set_by, set_at, saved_at)"
                " VALUES (:item_id, :cause, :set_by, :set_at, :saved_at)",
                _saved_row(setting),
            )

    def causes(self) -> dict[str, CauseSetting]:
        """The latest cause a person set on each step, by item id."""
        with self._connect() as conn:
            conn.row_factory = sqlite3.Row
            rows = conn.execute("SELECT * FROM disagreement_causes ORDER BY id").fetchall()
        return {row["item_id"]: CauseSetting.model_validate(dict(row)) for row in rows}

    def adoptions(self) -> list[Adoption]:
        """Every adoption, oldest first: the last is the judge in use."""
        with self._connect() as conn:
            conn.row_factory = sqlite3.Row
            rows = conn.execute("SELECT * FROM adoptions ORDER BY id").fetchall()
        return [Adoption.model_validate(dict(row)) for row in rows]

    def label_rows(self) -> list[dict[str, str | int]]:
        """Every label ever saved — step labels, decisions, causes, adoptions, in that order,
        each oldest first — read in one transaction, each a row of :data:`EXPORT_COLUMNS`
        holding its kind's own columns only: who saved it and when, uniformly named."""
        rows: list[dict[str, str | int]] = []
        with self._connect() as conn:
            conn.row_factory = sqlite3.Row
            conn.execute("BEGIN")  # one moment of the store across its tables
            for kind, table, who, when, own in _EXPORTED:
                for row in conn.execute(f"SELECT * FROM {table} ORDER BY id"):
                    rows.append(
                        {
                            "kind": kind,
                            "id": row["id"],
                            "who": row[who],
                            "when": utc_text(row[when]),
                            "saved_at": utc_text(row["saved_at"]),
                            **{column: row[column] for column in own},
                        }
                    )
        return rows


EXPORT_COLUMNS = (
    "kind",
    "id",
    "who",
    "when",
    "saved_at",
    "item_id",
    "field",
    "adjudicator_kind",
    "side",
    "value",
    "cause",
    "reason",
    "note",
    "judge_id",
    "spec_toml",
)
"""The columns of an export of a store's labels (:func:`write_labels`), in order."""

_EXPORTED = (
    ("step_label", "step_labels", "labeller", "labelled_at", ("item_id", "value", "reason")),
    (
        "decision",
        "decisions",
        "adjudicator",
        "decided_at",
        ("item_id", "field", "adjudicator_kind", "side", "value", "cause", "note"),
    ),
    ("cause", "disagreement_causes", "set_by", "set_at", ("item_id", "cause")),
    ("adoption", "adoptions", "adopted_by", "adopted_at", ("judge_id", "spec_toml")),
)
"""Each kind of label: its table, the columns holding who and when, and its own columns."""


def write_labels(store: LabelStore, out: IO[str], form: Literal["csv", "jsonl"]) -> int:
    """Write every label of ``store`` (:meth:`LabelStore.label_rows`) to ``out``: as CSV with
    a header of :data:`EXPORT_COLUMNS` (a column not of a row's kind empty), or as JSON Lines
    (one object a label, with its kind's columns only). Returns how many labels."""
    rows = store.label_rows()
    if form == "csv":
        writer = csv.DictWriter(out, fieldnames=EXPORT_COLUMNS, restval="", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    else:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(rows)


def read_decisions(path: Path, issues: list[ParseIssue]) -> list[Decision]:
    """Decisions from a CSV, JSONL or Parquet file; bad rows become issues naming their line."""
    decisions = []
    for line, row in read_rows(path, issues):
        try:
            decisions.append(Decision.model_validate(row))
        except ValidationError as error:
            issues.append(ParseIssue(file=str(path), line=line, reason=first_error(error)))
    return decisions


def default_store_path(study_path: str | Path) -> Path:
    """Where a study's decisions are kept unless told otherwise: one file per study folder,
    under ``$TSQ_DATA_DIR`` if set, else the user's data folder."""
    root = Path(study_path).expanduser().resolve()
    digest = hashlib.sha1(str(root).encode(), usedforsecurity=False).hexdigest()[:10]
    return data_dir() / "adjudications" / f"{root.stem}-{digest}.sqlite"
