"""Every step of a collection scored by a trained step scorer, through the index: the features
of each step were kept when its file was indexed, so no transcript is read again; the scorer's
judgments are written into the index's ``judgments`` table (``rater`` ``scorer``, each under
its transcript's file, so a changed transcript's are dropped with its other rows and scored
again), and a step already scored by the same ``scorer_id`` is not scored twice."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from analysis.index._build import _locked, connect, insert_rows, stamp, with_scope
from analysis.index._collection import Collection
from analysis.index._read import IndexReader
from analysis.index._rows import empty_rows
from analysis.models import Judgment
from analysis.scorer import ScorerCard, TrainedScorer, scorer_judgments

SCORED_QUERY = (
    "SELECT session_id, turn_index, step_index, parent_call_id FROM judgments"
    " WHERE source_file IN (SELECT path FROM scope) AND rater = 'scorer' AND judge_id = ?"
)


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


def _scored_before(collection: Collection, scorer_id: str) -> set[tuple[object, ...]]:
    with IndexReader(collection.index) as reader, reader.guarded():
        with_scope(reader.conn, collection.scope)
        return set(reader.conn.execute(SCORED_QUERY, [scorer_id]).fetchall())


def _write(index: Path, judged: list[tuple[str, Judgment]]) -> None:
    """The scorer's judgments into the index's judgments table, under the index's lock."""
    rows = empty_rows()
    for source_file, judgment in judged:
        rows["judgments"].append(
            {
                "source_file": source_file,
                "session_id": judgment.session_id,
                "turn_index": judgment.turn_index,
                "step_index": judgment.step_index,
                "parent_call_id": judgment.parent_call_id,
                "condition": judgment.condition,
                "judge": judgment.judge_id,
                "judge_id": judgment.judge_id,
                "model": judgment.model,
                "score": judgment.score,
                "n_valid": judgment.n_valid,
                "n_requested": judgment.n_requested,
                "rater": judgment.rater,
                "message_id": judgment.message_id,
            }
        )
    with _locked(index) as lock:
        conn = connect(index)
        try:
            conn.execute("BEGIN TRANSACTION")
            insert_rows(conn, rows)
            conn.execute("COMMIT")
        finally:
            conn.close()
        lock.write(**(lock.record | {"verified": stamp(index)}))


def score_collection(
    collection: Collection,
    scorer: TrainedScorer,
    card: ScorerCard,
    *,
    subagents: bool = False,
    on_progress: Callable[[int], None] | None = None,
) -> tuple[ScoreRun, list[Judgment]]:
    """Score every step of ``collection`` a judge would grade with ``scorer``: the steps not
    scored by this ``scorer_id`` before are written into the index. Returns what was done and
    the scorer's judgment of every step (those scored before included: the same probability)."""
    started = time.monotonic()
    steps = collection.step_features_by_file(subagents=subagents)
    before = _scored_before(collection, card.scorer_id)
    judgments = scorer_judgments([features for _, features in steps], scorer, card)
    if on_progress is not None:
        on_progress(len(judgments))
    new = [
        (file, judgment)
        for (file, _), judgment in zip(steps, judgments, strict=True)
        if (
            judgment.session_id,
            judgment.turn_index,
            judgment.step_index,
            judgment.parent_call_id,
        )
        not in before
    ]
    if new:
        _write(collection.index, new)
    run = ScoreRun(
        scorer_id=card.scorer_id,
        steps=len(steps),
        scored=len(new),
        already=len(steps) - len(new),
        seconds=time.monotonic() - started,
    )
    return run, judgments
