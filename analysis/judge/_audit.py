"""The spending log: one row per judge or council run (who ran it, when, what it was estimated
to cost and what it cost, how it ended), and the caps a served workbench holds each run and
each person's day to.

The log is one SQLite file in the data folder (``$TSQ_DATA_DIR``, else the user's data folder),
beside the label stores. A run reserves its estimate when it starts, in the same transaction
that reads what its person has spent today (``BEGIN IMMEDIATE``: one writer at a time, across
threads and processes), and settles at its actual cost when it ends; so two runs started
together cannot both spend what is left of one allowance. A run that never ends (its process
killed) keeps its estimate reserved for the rest of the day: the safe side.

Locally there is no cap, but every run is still written down; ``tsq audit`` reads the log.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from analysis._paths import data_dir
from analysis.llm import dollars

AUDIT_FILE = "audit.sqlite"
"""The spending log's file in the data folder."""
LOCAL = "local"
"""Who runs from the command line, or in a workbench that is not served."""
RUN_CAP_ENV = "TSQ_MAX_RUN_USD"
DAY_CAP_ENV = "TSQ_MAX_DAY_USD"
RUN_CAP_SECRET = "max_run_usd"
"""The per-run cap's key in ``.streamlit/secrets.toml`` (the environment's comes first)."""
DAY_CAP_SECRET = "max_day_usd"
DEFAULT_RUN_CAP = 5.0
"""Served, a run estimated above this many dollars is refused unless the operator says more."""
DEFAULT_DAY_CAP = 20.0
"""Served, what one person may spend in a day (UTC) unless the operator says otherwise."""
NO_CAP_WORDS = ("none", "off")
"""A cap set to one of these words is no cap."""

RunKind = Literal["judge", "council"]
Outcome = Literal["running", "done", "refused", "failed", "stopped"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run INTEGER PRIMARY KEY AUTOINCREMENT,
    who TEXT NOT NULL,
    started TEXT NOT NULL,
    day TEXT NOT NULL,
    ended TEXT,
    kind TEXT NOT NULL,
    judge_id TEXT,
    steps INTEGER NOT NULL,
    estimated_usd REAL,
    actual_usd REAL,
    outcome TEXT NOT NULL,
    reason TEXT,
    capped INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_day ON runs (who, day);
"""
_COLUMNS = (
    "run, who, started, ended, kind, judge_id, steps, estimated_usd, actual_usd, outcome, "
    "reason, capped"
)
# What a person has spent on a day: settled runs at their actual cost (their estimate when it
# is unknown), running ones at the estimate they reserved; refused runs spent nothing.
_SPENT = """
SELECT COALESCE(SUM(CASE WHEN outcome = 'running' THEN COALESCE(estimated_usd, 0)
                         ELSE COALESCE(actual_usd, estimated_usd, 0) END), 0)
FROM runs WHERE who = ? AND day = ? AND outcome != 'refused'
"""


class AuditRow(BaseModel):
    """One run in the spending log: the contract of each object ``tsq audit --json`` prints."""

    model_config = ConfigDict(extra="forbid")

    run: int
    """The run's number in the log."""
    who: str
    """The person (their login's email, the proxy's user header), ``anonymous`` when served
    without a login, ``local`` from the command line or a workbench that is not served."""
    started: str
    """When it started, UTC, ISO 8601 (``2026-05-04T09:12:03+00:00``)."""
    ended: str | None = None
    """When it ended; None while it runs (or when its process was killed)."""
    kind: RunKind
    judge_id: str | None = None
    """The judge spec's ``name#hash``; for a council, its models (stage-1 judges, then the
    chairman)."""
    steps: int = Field(ge=0)
    """What it asks about: the judge's units (steps or turns, once per condition), the
    council's sessions."""
    estimated_usd: float | None = None
    """The estimate it started with (with prompt caching; with ``--batch``, at the batch
    price); None when the model has no price."""
    actual_usd: float | None = None
    """What its tokens cost at list price (those used before a failure or a stop included);
    None while it runs, when it was refused, or when a model has no price."""
    outcome: Outcome
    """``done``, ``refused`` (before any request), ``failed`` (the model's API stopped it),
    ``stopped`` (interrupted), or ``running``."""
    reason: str | None = None
    """Why it was refused or failed, in one sentence."""
    capped: bool = False
    """Whether the served workbench's caps held it."""


class CapError(ValueError):
    """A cap that is not an amount in dollars; the message is one sentence."""


@dataclass(frozen=True)
class SpendingCaps:
    """What a served workbench lets one run, and one person in a day (UTC), spend, in USD;
    None: no cap of that kind."""

    per_run: float | None = DEFAULT_RUN_CAP
    per_day: float | None = DEFAULT_DAY_CAP


def spending_caps(
    env: Mapping[str, str], secrets: Mapping[str, object] | None = None
) -> SpendingCaps:
    """The caps the operator set (``TSQ_MAX_RUN_USD`` and ``TSQ_MAX_DAY_USD``, else
    ``max_run_usd`` and ``max_day_usd`` in the app's secrets), the defaults where neither says;
    ``none`` or ``off`` is no cap. Raises :class:`CapError` for anything else that is not an
    amount."""
    secrets = secrets or {}
    return SpendingCaps(
        per_run=_cap(
            env.get(RUN_CAP_ENV), secrets.get(RUN_CAP_SECRET), RUN_CAP_ENV, DEFAULT_RUN_CAP
        ),
        per_day=_cap(
            env.get(DAY_CAP_ENV), secrets.get(DAY_CAP_SECRET), DAY_CAP_ENV, DEFAULT_DAY_CAP
        ),
    )


def _cap(named: str | None, secret: object, env: str, default: float) -> float | None:
    value: object = named if named not in (None, "") else secret
    where = env if named not in (None, "") else f"{env.lower().removeprefix('tsq_')} in the secrets"
    if value is None or value == "":
        return default
    if isinstance(value, str) and value.strip().lower() in NO_CAP_WORDS:
        return None
    try:
        amount = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        amount = -1.0
    if isinstance(value, bool) or not amount >= 0 or amount == float("inf"):
        raise CapError(
            f"{where}={value} is not an amount in dollars (or none), so no run may start."
        )
    return amount


def audit_path() -> Path:
    """The spending log's file: ``audit.sqlite`` in the data folder."""
    return data_dir() / AUDIT_FILE


def now_utc() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def cap_refusal(estimate: float | None, caps: SpendingCaps, spent: float) -> str | None:
    """Why a run estimated at ``estimate`` must not start under ``caps`` when its person has
    spent ``spent`` today, in one sentence naming the estimate and what is left of the day's
    allowance; None when it may."""
    left = None if caps.per_day is None else max(caps.per_day - spent, 0.0)
    allowance = (
        "your day has no cap"
        if caps.per_day is None or left is None
        else f"you have {dollars(left)} of {dollars(caps.per_day)} left today"
    )
    if estimate is None:
        if caps.per_run is None and caps.per_day is None:
            return None
        return (
            "Not started: the estimated cost is unknown (no price for this model) and spending "
            f"here is capped; {allowance}."
        )
    if caps.per_run is not None and estimate > caps.per_run:
        return (
            f"Not started: the estimated cost, {dollars(estimate)}, is above the cap of "
            f"{dollars(caps.per_run)} a run; {allowance}."
        )
    if left is not None and estimate > left:
        return (
            f"Not started: the estimated cost, {dollars(estimate)}, is above what is left of "
            f"your allowance; {allowance}."
        )
    return None


@dataclass(frozen=True)
class RunEntry:
    """What the log says of a run before it starts."""

    who: str
    kind: RunKind
    judge_id: str | None
    steps: int
    estimated_usd: float | None


class AuditLog:
    """The spending log in ``path`` (default :func:`audit_path`), created on first use. Each
    method opens the file, does its work in one transaction and closes it: safe from several
    threads and processes. Raises OSError or sqlite3.Error when the file cannot be used."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or audit_path()

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=30, isolation_level=None)) as db:
            db.executescript(_SCHEMA)
            yield db

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, begun before anything is read (``BEGIN IMMEDIATE``)."""
        with self._connection() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def spent_today(self, who: str) -> float:
        """What ``who`` has spent today (UTC): settled runs at their cost, running ones at the
        estimate they reserved."""
        with self._connection() as db:
            return float(db.execute(_SPENT, (who, now_utc()[:10])).fetchone()[0])

    def refusal(self, who: str, estimate: float | None, caps: SpendingCaps | None) -> str | None:
        """:func:`cap_refusal` for ``who`` now, without reserving anything (None: no caps)."""
        if caps is None:
            return None
        return cap_refusal(estimate, caps, self.spent_today(who))

    def start(self, entry: RunEntry, caps: SpendingCaps | None) -> tuple[int, str | None]:
        """Write the run down and reserve its estimate against its person's allowance, or
        refuse it under ``caps`` (the row then says ``refused`` and why): the run's number, and
        the refusal or None."""
        when = now_utc()
        with self._writing() as db:
            spent = float(db.execute(_SPENT, (entry.who, when[:10])).fetchone()[0])
            refusal = None if caps is None else cap_refusal(entry.estimated_usd, caps, spent)
            run = self._insert(db, entry, when, refusal, caps is not None)
        return run, refusal

    def refuse(self, entry: RunEntry, reason: str, capped: bool = False) -> int:
        """Write down a run refused before it started (a key, a cap, a model it cannot use)."""
        with self._writing() as db:
            return self._insert(db, entry, now_utc(), reason, capped)

    @staticmethod
    def _insert(
        db: sqlite3.Connection, entry: RunEntry, when: str, refusal: str | None, capped: bool
    ) -> int:
        cursor = db.execute(
            "INSERT INTO runs (who, started, day, ended, kind, judge_id, steps, estimated_usd, "
            "outcome, reason, capped) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                entry.who,
                when,
                when[:10],
                when if refusal else None,
                entry.kind,
                entry.judge_id,
                entry.steps,
                entry.estimated_usd,
                "refused" if refusal else "running",
                refusal,
                int(capped),
            ),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def settle(
        self, run: int, outcome: Outcome, actual_usd: float | None, reason: str | None = None
    ) -> None:
        """The run ended: its outcome and what it cost (its reservation is released)."""
        with self._writing() as db:
            db.execute(
                "UPDATE runs SET ended = ?, outcome = ?, actual_usd = ?, reason = ? WHERE run = ?",
                (now_utc(), outcome, actual_usd, reason, run),
            )

    def rows(self, since: date | None = None, who: str | None = None) -> list[AuditRow]:
        """The runs, oldest first: those started on or after ``since`` (UTC), of ``who``."""
        query, given = f"SELECT {_COLUMNS} FROM runs WHERE 1 = 1", []
        if since is not None:
            query += " AND day >= ?"
            given.append(since.isoformat())
        if who is not None:
            query += " AND who = ?"
            given.append(who)
        with self._connection() as db:
            db.row_factory = sqlite3.Row
            found = db.execute(query + " ORDER BY run", given).fetchall()
        return [AuditRow.model_validate(dict(row)) for row in found]


def log_failure(path: Path, error: OSError | sqlite3.Error) -> str:
    """The one sentence a run says when the spending log cannot be written."""
    reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return f"Not started: {path}, the spending log, cannot be written ({reason})."


def allowance_refusal(
    who: str, estimate: float | None, caps: SpendingCaps | None, path: Path | None
) -> str | None:
    """Before a run is started: why its estimate does not fit ``who``'s caps, or why the log
    that holds them cannot be read; None without caps (locally), or when it fits."""
    if caps is None:
        return None
    log = AuditLog(path)
    try:
        return log.refusal(who, estimate, caps)
    except (OSError, sqlite3.Error) as error:
        return log_failure(log.path, error)


def open_run(
    entry: RunEntry, caps: SpendingCaps | None, path: Path | None, refusal: str | None
) -> tuple[int | None, str | None]:
    """Write a run down as it starts: refused (``refusal``, or its caps'), or started with its
    estimate reserved. The run's number (None when refused or not written), and why it must
    not start: a run that cannot be written down does not start."""
    log = AuditLog(path)
    try:
        if refusal is not None:
            log.refuse(entry, refusal, caps is not None)
            return None, refusal
        return log.start(entry, caps)
    except (OSError, sqlite3.Error) as error:
        return None, refusal or log_failure(log.path, error)


def close_run(
    run: int | None,
    path: Path | None,
    outcome: Outcome,
    actual_usd: float | None,
    reason: str | None = None,
) -> None:
    """Settle a started run. A log that cannot be written now keeps the run's estimate
    reserved (the safe side) rather than lose the run's results."""
    if run is None:
        return
    with suppress(OSError, sqlite3.Error):
        AuditLog(path).settle(run, outcome, actual_usd, reason)
