"""Council vs human disagreements: suggested causes, rule proposals, decisions, calibrated labels.

A *study* is a folder (or a labels file) with the labels, optionally a ``labels.toml`` config,
per-item columns (``redundant_calls``), decisions already made, and transcripts of the items.
Decisions made in the app or by the AI adjudicator live in an :class:`AdjudicationStore`.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import orjson
import polars as pl
from platformdirs import user_data_dir
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from analysis.ingest._jsonio import first_error
from analysis.ingest._loader import load
from analysis.models import ParseIssue, Session
from analysis.study._agreement import rater_columns
from analysis.study._labels import (
    ID_COLUMNS,
    FieldSpec,
    HigherScore,
    HumanUnlessRedundant,
    LabelConfig,
    LabelError,
    LabelSet,
    PreferSide,
    Rule,
    default_config,
    first_columns,
    read_config,
    read_labels,
    read_rows,
)

Side = Literal["human", "council"]
CONFIG_NAMES = ("labels.toml", "labels.json")
DECISION_COLUMNS = ("item_id", "field", "adjudicator", "adjudicator_kind", "side", "value")


class Proposal(BaseModel):
    """What a field's rule says to do with one disagreement (``side`` None: no proposal)."""

    side: Side | None
    value: str | None
    reason: str


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


def suggest_cause(spec: FieldSpec, human: str, council: str) -> str | None:
    """The cause the labels themselves imply, if any (an adjudicator confirms or overrides)."""
    if spec.schema_mapping and spec.mapped(human) == spec.mapped(council):
        return "schema_gap"
    first, second = spec.rank(human), spec.rank(council)
    if first is not None and second is not None and abs(first - second) == 1:
        return "severity_shift"
    return None


def propose(
    rule: Rule, spec: FieldSpec, human: str, council: str, redundant: int | None
) -> Proposal:
    """Apply a field's reconciliation rule to one disagreement."""
    if isinstance(rule, PreferSide):
        value = human if rule.side == "human" else council
        return Proposal(side=rule.side, value=value, reason=f"defer to the {rule.side}")
    if isinstance(rule, HigherScore):
        first, second = spec.rank(human), spec.rank(council)
        if first is None or second is None:
            return Proposal(side=None, value=None, reason="a label is not on the scale")
        side: Side = "human" if first > second else "council"
        return Proposal(
            side=side, value=max(human, council, key=spec.values.index), reason="the higher score"
        )
    if isinstance(rule, HumanUnlessRedundant):
        return _human_unless_redundant(rule, human, council, redundant)
    return Proposal(side=None, value=None, reason="no rule for this field")


def _human_unless_redundant(
    rule: HumanUnlessRedundant, human: str, council: str, redundant: int | None
) -> Proposal:
    if human != rule.value:
        return Proposal(
            side=None, value=None, reason=f"rule covers a human {rule.value} only: no proposal"
        )
    if redundant is None:
        return Proposal(
            side=None,
            value=None,
            reason="redundant calls unknown: load the transcript or add a redundant_calls column",
        )
    if redundant >= rule.min_redundant:
        return Proposal(
            side="council",
            value=council,
            reason=f"{redundant} redundant calls visible (≥ {rule.min_redundant})",
        )
    return Proposal(
        side="human",
        value=human,
        reason=f"the human's {rule.value} ({redundant} redundant calls)",
    )


def redundant_calls(session: Session) -> int:
    """Calls that repeat an earlier call of the same tool with the same arguments."""
    seen: set[tuple[str, bytes]] = set()
    repeats = 0
    for call in session.tool_calls():
        key = (call.name, orjson.dumps(call.input, option=orjson.OPT_SORT_KEYS))
        repeats += key in seen
        seen.add(key)
    return repeats


class AdjudicationStore:
    """Decisions in an SQLite file: every save is its own committed transaction.

    A connection per call, WAL journal and a busy timeout let several browser tabs (threads)
    or processes save at once without losing a decision. History is kept; the latest decision
    for an (item, field) is the current one.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS decisions ("
                " id INTEGER PRIMARY KEY AUTOINCREMENT, item_id TEXT NOT NULL,"
                " field TEXT NOT NULL, adjudicator TEXT NOT NULL,"
                " adjudicator_kind TEXT NOT NULL, side TEXT NOT NULL, value TEXT NOT NULL,"
                " cause TEXT NOT NULL, note TEXT NOT NULL, decided_at TEXT NOT NULL)"
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


def read_decisions(path: Path, issues: list[ParseIssue]) -> list[Decision]:
    """Decisions from a CSV, JSONL or Parquet file; bad rows become issues naming their line."""
    decisions = []
    for line, row in read_rows(path, issues):
        try:
            decisions.append(Decision.model_validate(row))
        except ValidationError as error:
            issues.append(ParseIssue(file=str(path), line=line, reason=first_error(error)))
    return decisions


@dataclass
class Study:
    """Everything a council-vs-human reconciliation reads."""

    labels: LabelSet
    sessions: dict[str, Session] = field(default_factory=dict)
    recorded: list[Decision] = field(default_factory=list)  # decisions shipped with the labels
    issues: list[ParseIssue] = field(default_factory=list)

    @property
    def config(self) -> LabelConfig:
        return self.labels.config


def load_study(path: str | Path, config: LabelConfig | None = None) -> Study:
    """A study from a labels file or a folder (labels, labels.toml, decisions, transcripts)."""
    root = Path(path).expanduser()
    if root.is_file():
        labels = read_labels([root], config)
        return Study(labels=labels, issues=list(labels.issues))
    if not root.is_dir():
        raise LabelError(f"{path}: no such file or folder")
    if config is None:
        found = next((root / name for name in CONFIG_NAMES if (root / name).is_file()), None)
        config = read_config(found) if found else default_config()
    issues: list[ParseIssue] = []
    label_files, decision_files, transcripts = _classify(root, issues)
    if not label_files:
        raise LabelError(
            f"{path}: no labels file (CSV, JSONL or Parquet with item_id, rater, rater_kind)"
        )
    labels = read_labels(label_files, config)
    issues.extend(labels.issues)
    recorded = [d for file in decision_files for d in read_decisions(file, issues)]
    loaded = load(transcripts) if transcripts else None
    sessions = {s.session_id: s for s in loaded.sessions} if loaded else {}
    if loaded:
        issues.extend(loaded.issues)
    return Study(labels=labels, sessions=sessions, recorded=recorded, issues=issues)


def _classify(root: Path, issues: list[ParseIssue]) -> tuple[list[Path], list[Path], list[Path]]:
    """Label, decision and transcript files of a study folder; a table that is none of them is
    an issue (a transcript's own problems are the loader's to report)."""
    labels, decisions, transcripts = [], [], []
    for child in sorted(root.rglob("*")):
        if not child.is_file() or any(p.startswith(".") for p in child.relative_to(root).parts):
            continue
        tabular = child.suffix in (".csv", ".parquet")
        found: list[ParseIssue] = []
        columns = first_columns(child, found)
        if set(DECISION_COLUMNS) <= columns:
            decisions.append(child)
        elif set(ID_COLUMNS) <= columns or {"item_id", "redundant_calls"} <= columns:
            labels.append(child)  # read_labels keeps per-item columns as items
        elif child.suffix in (".jsonl", ".json") and child.name not in CONFIG_NAMES:
            transcripts.append(child)
        elif tabular and found:
            issues.extend(found)
        elif tabular:
            reason = (
                "not labels (item_id, rater, rater_kind), decisions (item_id, field, "
                "adjudicator, …) or per-item counts (item_id, redundant_calls)"
            )
            issues.append(ParseIssue(file=str(child), reason=reason))
    return labels, decisions, transcripts


def redundant_counts(study: Study) -> pl.DataFrame:
    """Redundant calls per item: counted from its transcript when loaded, else from a column."""
    column = dict(study.labels.items.iter_rows())
    items = study.labels.frame["item_id"].unique().sort().to_list()
    counts: list[int | None] = []
    sources: list[str | None] = []
    for item in items:
        if item in study.sessions:
            counts.append(redundant_calls(study.sessions[item]))
            sources.append("transcript")
        else:
            counts.append(column.get(item))
            sources.append("column" if item in column else None)
    return pl.DataFrame(
        {"item_id": items, "redundant_calls": counts, "redundant_source": sources},
        schema={"item_id": pl.String, "redundant_calls": pl.Int64, "redundant_source": pl.String},
    )


def comparisons(study: Study) -> pl.DataFrame:
    """Human vs council per item and field, with the suggested cause and the rule's proposal.

    Each side is its kind's label (the majority where several raters of a kind labelled an
    item). Columns: item_id, field, human, council, agree, suggested_cause, redundant_calls,
    redundant_source, proposal_side, proposal_value, proposal_reason.
    """
    frames = []
    for name in study.labels.fields:
        wide = rater_columns(study.labels, name, by="kind")
        if not {"human", "council"} <= set(wide.columns):
            continue
        frames.append(
            wide.select("item_id", "human", "council").drop_nulls().with_columns(field=pl.lit(name))
        )
    schema = {"item_id": pl.String, "field": pl.String, "human": pl.String, "council": pl.String}
    both = pl.concat(frames).select(*schema) if frames else pl.DataFrame(schema=schema)
    both = both.join(redundant_counts(study), on="item_id", how="left")
    rows = []
    for row in both.iter_rows(named=True):
        spec = study.labels.spec(row["field"])
        agree = row["human"] == row["council"]
        cause = None if agree else suggest_cause(spec, row["human"], row["council"])
        proposal = (
            Proposal(side=None, value=None, reason="")
            if agree
            else propose(
                study.config.rule(row["field"]),
                spec,
                row["human"],
                row["council"],
                row["redundant_calls"],
            )
        )
        rows.append(
            {
                **row,
                "agree": agree,
                "suggested_cause": cause,
                "proposal_side": proposal.side,
                "proposal_value": proposal.value,
                "proposal_reason": proposal.reason or None,
            }
        )
    return pl.DataFrame(rows, schema=_COMPARISON_SCHEMA).sort("item_id", "field")


_COMPARISON_SCHEMA = {
    "item_id": pl.String,
    "field": pl.String,
    "human": pl.String,
    "council": pl.String,
    "redundant_calls": pl.Int64,
    "redundant_source": pl.String,
    "agree": pl.Boolean,
    "suggested_cause": pl.String,
    "proposal_side": pl.String,
    "proposal_value": pl.String,
    "proposal_reason": pl.String,
}
_DECISION_SCHEMA = {
    "item_id": pl.String,
    "field": pl.String,
    "adjudicator": pl.String,
    "adjudicator_kind": pl.String,
    "side": pl.String,
    "value": pl.String,
    "cause": pl.String,
    "note": pl.String,
    "decided_at": pl.String,
}


def current_decisions(decisions: Iterable[Decision]) -> pl.DataFrame:
    """The latest decision for each (item, field), in the order given (later wins)."""
    latest: dict[tuple[str, str], Decision] = {}
    for decision in decisions:
        latest[decision.item_id, decision.field] = decision
    rows = [d.model_dump(mode="json") for d in latest.values()]
    return pl.DataFrame(rows, schema=_DECISION_SCHEMA)


def reconcile(comparison: pl.DataFrame, decisions: Iterable[Decision]) -> pl.DataFrame:
    """The calibrated label of every (item, field).

    Agreement keeps the shared label; a disagreement takes its adjudicator's decision, else
    the rule's proposal (``source`` = ``rule``), else stays open (``calibrated`` null).
    ``followed_rule`` says whether a decision chose the side the rule proposed (null where the
    rule made no proposal).
    """
    decided = current_decisions(decisions)
    joined = comparison.join(decided, on=["item_id", "field"], how="left")
    source = (
        pl.when(pl.col("agree"))
        .then(pl.lit("agreement"))
        .when(pl.col("adjudicator_kind").is_not_null())
        .then(pl.col("adjudicator_kind"))
        .when(pl.col("proposal_side").is_not_null())
        .then(pl.lit("rule"))
        .otherwise(pl.lit("open"))
    )
    calibrated = (
        pl.when(pl.col("agree"))
        .then(pl.col("human"))
        .when(pl.col("value").is_not_null())
        .then(pl.col("value"))
        .otherwise(pl.col("proposal_value"))
    )
    followed = (
        pl.when(pl.col("side").is_null() | pl.col("proposal_side").is_null())
        .then(None)
        .otherwise(pl.col("side") == pl.col("proposal_side"))
    )
    return joined.with_columns(
        source=source,
        calibrated=calibrated,
        followed_rule=followed,
        cause=pl.col("cause").fill_null(pl.col("suggested_cause")),
    )


def all_decisions(study: Study, store: AdjudicationStore | None) -> list[Decision]:
    """Recorded decisions, then the store's (a decision saved later overrides)."""
    return [*study.recorded, *(store.decisions() if store else [])]


def still_open(reconciled: pl.DataFrame) -> pl.DataFrame:
    """The disagreements of a reconciled table that no one has decided (a rule's proposal
    alone does not settle one), in item order: the Adjudicate page's queue and the AI
    adjudicator's work list."""
    return reconciled.filter(~pl.col("agree") & pl.col("adjudicator_kind").is_null()).sort(
        "item_id", "field"
    )


def open_disagreements(study: Study, store: AdjudicationStore | None) -> pl.DataFrame:
    """Disagreements with no decision yet (recorded or in the store), in item order."""
    return still_open(reconcile(comparisons(study), all_decisions(study, store)))


def decision_history(
    study: Study, store: AdjudicationStore | None, item_id: str, field: str
) -> pl.DataFrame:
    """Every decision on one disagreement, oldest first: who, when, which side and value, the
    cause and note, where it was kept (shipped with the labels or saved in the store) and the
    decision it overrode."""
    kept = [("labels", d) for d in study.recorded] + [
        ("store", d) for d in (store.decisions() if store else [])
    ]
    rows: list[dict[str, object]] = []
    for origin, decision in kept:
        if (decision.item_id, decision.field) != (item_id, field):
            continue
        previous = rows[-1] if rows else None
        rows.append(
            {
                "decided_at": decision.decided_at.isoformat(timespec="seconds"),
                "adjudicator": decision.adjudicator,
                "kind": decision.adjudicator_kind,
                "side": decision.side,
                "value": decision.value,
                "cause": decision.cause,
                "note": decision.note,
                "kept_in": origin,
                "overrode": None
                if previous is None
                else f"{previous['adjudicator']}: {previous['side']} ({previous['value']})",
            }
        )
    return pl.DataFrame(rows, schema=_HISTORY_SCHEMA)


_HISTORY_SCHEMA = {
    "decided_at": pl.String,
    "adjudicator": pl.String,
    "kind": pl.String,
    "side": pl.String,
    "value": pl.String,
    "cause": pl.String,
    "note": pl.String,
    "kept_in": pl.String,
    "overrode": pl.String,
}


def default_store_path(study_path: str | Path) -> Path:
    """Where a study's decisions are kept unless told otherwise: one file per study folder,
    under ``$TSQ_DATA_DIR`` if set, else the user's data folder."""
    root = Path(study_path).expanduser().resolve()
    digest = hashlib.sha1(str(root).encode(), usedforsecurity=False).hexdigest()[:10]
    base = Path(os.environ.get("TSQ_DATA_DIR") or user_data_dir("tsq-workbench"))
    return base / "adjudications" / f"{root.stem}-{digest}.sqlite"
