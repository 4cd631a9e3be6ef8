"""Judge results from files: ``tsq judge --out`` JSONL, or another platform's export."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl
from pydantic import BaseModel, ValidationError

from analysis._jsonio import first_error
from analysis._scores import (
    judge_name as judge_name,
    judge_names as judge_names,
    majority_label as majority_label,
    of_judge as of_judge,
    rater_in_words as rater_in_words,
    scorers_among as scorers_among,
    several_judges as several_judges,
)
from analysis.models import Judgment, Vote


class ExternalColumns(BaseModel):
    """Where another platform's export keeps what a judgment needs."""

    session_id: str = "session_id"
    turn: str = "turn_index"
    """Column with the 0-based turn index, or with a span id when ``turn_is_span_id``."""
    score: str = "score"
    explanation: str | None = "explanation"
    turn_is_span_id: bool = False


def load_judgments(
    path: str | Path,
    columns: ExternalColumns | None = None,
    span_turns: dict[str, tuple[str, int]] | None = None,
) -> list[Judgment]:
    """Judgments from ``tsq judge --out`` JSONL, or (with ``columns``) from another platform's
    CSV or JSONL export; ``span_turns`` maps span ids to (session id, turn index)."""
    source = Path(path)
    if columns is None:
        return _own_judgments(source)
    frame = pl.read_csv(source) if source.suffix == ".csv" else pl.read_ndjson(source)
    judgments = []
    for row in frame.iter_rows(named=True):
        turn_value = row[columns.turn]
        if columns.turn_is_span_id:
            session_id, turn_index = (span_turns or {}).get(str(turn_value), (None, None))
            if session_id is None or turn_index is None:
                continue
        else:
            session_id, turn_index = str(row[columns.session_id]), int(turn_value)
        score = row[columns.score]
        reasoning = str(row.get(columns.explanation) or "") if columns.explanation else ""
        votes = (
            []
            if score is None
            else [Vote(verdict=majority_label(float(score)), reasoning=reasoning)]
        )
        judgments.append(
            Judgment(
                session_id=session_id,
                turn_index=turn_index,
                score=None if score is None else float(score),
                votes=votes,
                n_requested=len(votes),
                n_valid=len(votes),
                n_discarded=0,
                model="external",
                spec_name="external",
                condition="full",
                catalog_size=0,
                call_rendered=True,
                context_chars=0,
                unscored_reason=None if score is not None else "no score in the export",
            )
        )
    return judgments


def merge_judgments(*groups: Sequence[Judgment]) -> list[Judgment]:
    """One judgment per step (or turn), condition and judge, first seen first; a later
    group's wins. Judgments of different judges (``judge_id``) never replace each other.

    A file of ``tsq judge --out`` found among the inputs, then one given explicitly: the
    explicit one is the newer word on the same unit.
    """
    merged: dict[tuple[str, int, int | None, str | None, str, str | None], Judgment] = {}
    for group in groups:
        for judgment in group:
            merged[judgment.key] = judgment
    return list(merged.values())


class VerdictChange(BaseModel):
    """A step whose majority verdict differs between two judges."""

    item_id: str
    condition: str
    before_judge: str
    after_judge: str
    before: str
    after: str


def changed_verdicts(
    earlier: Sequence[Judgment], judgments: Sequence[Judgment]
) -> list[VerdictChange]:
    """Each scored judgment of ``judgments`` against every scored earlier judgment of the same
    step and condition by another judge, where their majority verdicts differ."""
    before: dict[tuple[object, ...], list[Judgment]] = {}
    for old in earlier:
        if old.score is not None:
            before.setdefault(old.key[:5], []).append(old)
    changes = []
    for new in judgments:
        for old in before.get(new.key[:5], []) if new.score is not None else []:
            was, now = majority_label(old.score or 0.0), majority_label(new.score or 0.0)
            if judge_name(old) != judge_name(new) and was != now:
                changes.append(
                    VerdictChange(
                        item_id=new.item_id,
                        condition=new.condition,
                        before_judge=judge_name(old),
                        after_judge=judge_name(new),
                        before=was,
                        after=now,
                    )
                )
    return changes


def _own_judgments(source: Path) -> list[Judgment]:
    """``tsq judge --out`` lines; a bad line raises ValueError naming the file and line."""
    judgments = []
    for number, line in enumerate(source.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            judgments.append(Judgment.model_validate_json(line))
        except ValidationError as error:
            raise ValueError(f"{source}:{number}: not a judgment ({first_error(error)})") from None
    return judgments
