"""Every step of a collection scored by a trained step scorer, through the index: the features
of each step were kept when its file was indexed, so no transcript is read again; the scorer's
judgments are written into the index's ``judgments`` table (``rater`` ``scorer``, each under
its transcript's file, so a changed transcript's are dropped with its other rows and scored
again), and a step already scored by the same ``scorer_id`` is not scored twice."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path

from pydantic import BaseModel

from analysis.index._build import _locked, connect, insert_rows, stamp, with_scope
from analysis.index._collection import Collection
from analysis.index._read import IndexReader
from analysis.index._rows import empty_rows, judgment_row
from analysis.models import Judgment, ScorerRecord
from analysis.scorer import (
    ScorerCard,
    StepFeatures,
    TrainedScorer,
    scorer_judgment,
    scorer_probabilities,
)

SCORED_QUERY = (
    "SELECT session_id, turn_index, step_index, parent_call_id, score FROM judgments"
    " WHERE source_file IN (SELECT path FROM scope) AND rater = 'scorer' AND judge_id = ?"
)
WRITE_BATCH = 20_000
"""Judgment rows written into the index at once."""


class ScoreRun(BaseModel):
    """What one ``tsq score`` did."""

    scorer_id: str
    steps: int
    """The steps of the paths a judge would grade (main agent; subagents' with ``subagents``)."""
    scored: int
    """Scored now and written into the index."""
    already: int
    """Skipped: scored by this scorer before."""
    seconds: float


def _scored_before(
    index: Path, files: list[str], scorer_id: str
) -> dict[tuple[object, ...], float]:
    """The steps of ``files`` this scorer scored before, with their probability."""
    with IndexReader(index) as reader, reader.guarded():
        with_scope(reader.conn, files)
        rows = reader.conn.execute(SCORED_QUERY, [scorer_id]).fetchall()
    return {tuple(row[:4]): row[4] for row in rows}


def scorer_record(card: ScorerCard, folder: Path | None) -> ScorerRecord:
    """What the index keeps of a scorer beside its judgments: its card's test agreement."""
    spec = card.test.spec if card.test is not None else None
    return ScorerRecord(
        scorer_id=card.scorer_id,
        name=card.name,
        test_n=spec.n if spec else 0,
        test_agreement=spec.agreement if spec else None,
        test_agreement_ci=spec.agreement_ci if spec else None,
        folder=str(folder.resolve()) if folder is not None else None,
    )


def _write(index: Path, record: ScorerRecord, judged: Iterator[tuple[str, Judgment]]) -> None:
    """The scorer's record and its judgments into the index (its ``scorers`` and
    ``judgments`` tables), in one transaction under the index's lock, by batches of rows."""
    with _locked(index) as lock:
        conn = connect(index)
        try:
            conn.execute("BEGIN TRANSACTION")
            ci = record.test_agreement_ci or (None, None)
            conn.execute(
                "INSERT OR REPLACE INTO scorers VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    record.scorer_id,
                    record.name,
                    record.test_n,
                    record.test_agreement,
                    *ci,
                    record.folder,
                ],
            )
            while batch := list(islice(judged, WRITE_BATCH)):
                rows = empty_rows()
                rows["judgments"] = [judgment_row(judgment, file) for file, judgment in batch]
                insert_rows(conn, rows)
            conn.execute("COMMIT")
        finally:
            conn.close()
        lock.write(**(lock.record | {"verified": stamp(index)}))


def _key(features: StepFeatures) -> tuple[object, ...]:
    return (features.session_id, features.turn_index, features.step_index, features.parent_call_id)


def score_collection(
    collection: Collection,
    scorer: TrainedScorer,
    card: ScorerCard,
    *,
    subagents: bool = False,
    out: Callable[[Judgment], None] | None = None,
    folder: Path | None = None,
) -> ScoreRun:
    """Score every step of ``collection`` a judge would grade with ``scorer``, a batch of
    transcripts at a time (:meth:`Collection.step_feature_batches`: memory stays that of a
    batch whatever the collection's size): the steps not scored by this ``scorer_id`` before
    are scored and written into the index, a transaction a batch (a run stopped half-way
    leaves whole batches scored, and the next run skips them). ``out`` is
    given the scorer's judgment of every step, in the collection's order (a step scored
    before with the probability it was given then). ``folder``: where the scorer was read,
    kept in the index's ``scorers`` row beside its test agreement."""
    started = time.monotonic()
    record = scorer_record(card, folder)
    total = scored = 0
    for steps in collection.step_feature_batches(subagents=subagents):
        files = list(dict.fromkeys(file for file, _ in steps))
        before = _scored_before(collection.index, files, card.scorer_id)
        new = [(file, features) for file, features in steps if _key(features) not in before]
        probabilities = scorer_probabilities([features for _, features in new], scorer)
        _write(
            collection.index,
            record,
            (
                (file, scorer_judgment(features, probability, card))
                for (file, features), probability in zip(new, probabilities, strict=True)
            ),
        )
        if out is not None:
            given = {_key(f): p for (_, f), p in zip(new, probabilities, strict=True)}
            for _, features in steps:
                key = _key(features)
                out(scorer_judgment(features, given[key] if key in given else before[key], card))
        total += len(steps)
        scored += len(new)
    return ScoreRun(
        scorer_id=card.scorer_id,
        steps=total,
        scored=scored,
        already=total - scored,
        seconds=time.monotonic() - started,
    )
