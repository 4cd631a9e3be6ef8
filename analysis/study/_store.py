"""Decisions on disagreements: the :class:`Decision` record, the SQLite :class:`LabelStore`
the app and the AI adjudicator save to, and decisions shipped as a table beside the labels."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, NamedTuple

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


SETUP_WAIT = 30.0


class LabelStore:
    """Decisions (and people's step labels) in an SQLite file: every save is its own committed
    transaction.

    A connection per call, WAL journal and a busy timeout let several browser tabs (threads)
    or processes save at once without losing a decision. History is kept; the latest decision
    for an (item, field) is the current one, and the latest step label for an (item, labeller).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._set_up()

    def _set_up(self) -> None:
        """Create the file and its tables. Several processes may do so at once: switching to
        WAL and creating tables can meet a lock the busy timeout does not wait on, so this
        waits and tries again (for up to ``SETUP_WAIT`` seconds), as a save would wait."""
        deadline = time.monotonic() + SETUP_WAIT
        pause = 0.01
        while True:
            try:
                self._create_tables()
                return
            except sqlite3.OperationalError as error:
                busy = "locked" in str(error) or "busy" in str(error)
                if not busy or time.monotonic() > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.5)

    def _create_tables(self) -> None:
        with self._connect() as conn:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS decisions ("
                " id INTEGER PRIMARY KEY AUTOINCREMENT, item_id TEXT NOT NULL,"
                " field TEXT NOT NULL, adjudicator TEXT NOT NULL,"
                " adjudicator_kind TEXT NOT NULL, side TEXT NOT NULL, value TEXT NOT NULL,"
                " cause TEXT NOT NULL, note TEXT NOT NULL, decided_at TEXT NOT NULL)"
            )
            conn.execute(
                "CREATE TABLE IF NOT EXISTS splits (session_id TEXT PRIMARY KEY,"
                " split TEXT NOT NULL, stratum TEXT NOT NULL, seed INTEGER NOT NULL,"
                " test_share REAL NOT NULL, assigned_at TEXT NOT NULL)"
            )
            conn.execute(
                "CREATE TABLE IF NOT EXISTS disagreement_causes ("
                " id INTEGER PRIMARY KEY AUTOINCREMENT, item_id TEXT NOT NULL,"
                " cause TEXT NOT NULL, set_by TEXT NOT NULL, set_at TEXT NOT NULL)"
            )
            conn.execute(
                "CREATE TABLE IF NOT EXISTS adoptions ("
                " id INTEGER PRIMARY KEY AUTOINCREMENT, judge_id TEXT NOT NULL,"
                " spec_toml TEXT NOT NULL, adopted_by TEXT NOT NULL, adopted_at TEXT NOT NULL)"
            )
            conn.execute(
                "CREATE TABLE IF NOT EXISTS step_labels ("
                " id INTEGER PRIMARY KEY AUTOINCREMENT, item_id TEXT NOT NULL,"
                " labeller TEXT NOT NULL, value TEXT NOT NULL, reason TEXT NOT NULL,"
                " labelled_at TEXT NOT NULL)"
            )

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=30)) as conn:
            conn.execute("PRAGMA synchronous=FULL")
            with conn:  # commits on success, rolls back on error
                yield conn

    def save(self, decision: Decision) -> None:
        row = decision.model_dump(mode="json")
        with self._connect() as conn:
            conn.execute(
                "INSERT INTO decisions (item_id, field, adjudicator, adjudicator_kind, side,"
                " value, cause, note, decided_at) VALUES (:item_id, :field, :adjudicator,"
                " :adjudicator_kind, :side, :value, :cause, :note, :decided_at)",
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
        row = label.model_dump(mode="json")
        with self._connect() as conn:
            conn.execute(
                "INSERT INTO step_labels (item_id, labeller, value, reason, labelled_at)"
                " VALUES (:item_id, :labeller, :value, :reason, :labelled_at)",
                row,
            )

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
        rows = [label.model_dump(mode="json") for label in labels]
        with self._connect() as conn:
            conn.executemany(
                "INSERT INTO step_labels (item_id, labeller, value, reason, labelled_at)"
                " VALUES (:item_id, :labeller, :value, :reason, :labelled_at)",
                rows,
            )

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
            conn.executemany(
                "INSERT INTO step_labels (item_id, labeller, value, reason, labelled_at)"
                " VALUES (:item_id, :labeller, :value, :reason, :labelled_at)",
                [label.model_dump(mode="json") for label in new],
            )
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
        rows = [a.model_dump(mode="json") for a in assignments]
        with self._connect() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO splits (session_id, split, stratum, seed, test_share,"
                " assigned_at) VALUES (:session_id, :split, :stratum, :seed, :test_share,"
                " :assigned_at)",
                rows,
            )

    def adopt(self, adoption: Adoption) -> None:
        with self._connect() as conn:
            conn.execute(
                "INSERT INTO adoptions (judge_id, spec_toml, adopted_by, adopted_at)"
                " VALUES (:judge_id, :spec_toml, :adopted_by, :adopted_at)",
                adoption.model_dump(mode="json"),
            )

    def set_cause(self, setting: CauseSetting) -> None:
        with self._connect() as conn:
            conn.execute(
                "INSERT INTO disagreement_causes (item_id, cause, set_by, set_at)"
                " VALUES (:item_id, :cause, :set_by, :set_at)",
                setting.model_dump(mode="json"),
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
