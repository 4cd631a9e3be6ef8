"""A council-vs-human study found on disk: its labels, config, decisions and transcripts.

A *study* is a folder (or a labels file) with the labels, optionally a ``labels.toml`` config,
per-item columns (``redundant_calls``), decisions already made, and transcripts of the items.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson
import polars as pl

from analysis.ingest import OUTSIDE_REASON, inside_root, load
from analysis.models import ParseIssue, Session
from analysis.study._config import LabelConfig, LabelError, default_config, read_config
from analysis.study._labels import ID_COLUMNS, LabelSet, first_columns, read_labels
from analysis.study._store import DECISION_COLUMNS, Decision, read_decisions

CONFIG_NAMES = ("labels.toml", "labels.json")


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


def load_study(
    path: str | Path, config: LabelConfig | None = None, data_root: str | Path | None = None
) -> Study:
    """A study from a labels file or a folder (labels, labels.toml, decisions, transcripts).

    With a ``data_root``, ``path`` must lie inside it (else :class:`LabelError`), and a file of
    the folder that is a link to outside it is an issue, not read.
    """
    root = Path(path).expanduser()
    if data_root is not None and not inside_root(root, data_root):
        raise LabelError(
            f"{path} is outside the data root this workbench may read, so it is refused."
        )
    if root.is_file():
        labels = read_labels([root], config)
        return Study(labels=labels, issues=list(labels.issues))
    if not root.is_dir():
        raise LabelError(f"{path}: no such file or folder")
    issues: list[ParseIssue] = []
    if config is None:
        found = next((root / name for name in CONFIG_NAMES if (root / name).is_file()), None)
        if found and data_root is not None and not inside_root(found, data_root):
            issues.append(ParseIssue(file=str(found), reason=OUTSIDE_REASON))
            found = None
        config = read_config(found) if found else default_config()
    label_files, decision_files, transcripts = _classify(root, issues, data_root)
    if not label_files:
        raise LabelError(
            f"{path}: no labels file (CSV, JSONL or Parquet with item_id, rater, rater_kind)"
        )
    labels = read_labels(label_files, config)
    issues.extend(labels.issues)
    recorded = [d for file in decision_files for d in read_decisions(file, issues)]
    loaded = load(transcripts, root=data_root) if transcripts else None
    sessions = {s.session_id: s for s in loaded.sessions} if loaded else {}
    if loaded:
        issues.extend(loaded.issues)
    return Study(labels=labels, sessions=sessions, recorded=recorded, issues=issues)


def _classify(
    root: Path, issues: list[ParseIssue], data_root: str | Path | None = None
) -> tuple[list[Path], list[Path], list[Path]]:
    """Label, decision and transcript files of a study folder; a table that is none of them is
    an issue (a transcript's own problems are the loader's to report), and so is a file that
    leads outside ``data_root``."""
    labels, decisions, transcripts = [], [], []
    for child in sorted(root.rglob("*")):
        if not child.is_file() or any(p.startswith(".") for p in child.relative_to(root).parts):
            continue
        if data_root is not None and not inside_root(child, data_root):
            issues.append(ParseIssue(file=str(child), reason=OUTSIDE_REASON))
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


def redundant_calls(session: Session) -> int:
    """Calls that repeat an earlier call of the same tool with the same arguments."""
    seen: set[tuple[str, bytes]] = set()
    repeats = 0
    for call in session.tool_calls():
        key = (call.name, orjson.dumps(call.input, option=orjson.OPT_SORT_KEYS))
        repeats += key in seen
        seen.add(key)
    return repeats


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
