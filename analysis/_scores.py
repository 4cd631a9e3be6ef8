"""What a judged turn scores, from its judgments: the rule the findings, the views, the report
and the CLI share, below all of them (it imports only the data model)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analysis.models import TurnJudgment

JUDGMENT_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "session_id": pl.String,
    "turn_index": pl.Int64,
    "step_index": pl.Int64,
    "message_id": pl.String,
    "parent_call_id": pl.String,
    "condition": pl.String,
    "score": pl.Float64,
    "n_valid": pl.Int64,
    "n_correct": pl.Int64,
    "n_discarded": pl.Int64,
    "model": pl.String,
}


def judgments_frame(judgments: Sequence[TurnJudgment]) -> pl.DataFrame:
    rows = [
        {
            "session_id": j.session_id,
            "turn_index": j.turn_index,
            "step_index": j.step_index,
            "message_id": j.message_id,
            "parent_call_id": j.parent_call_id,
            "condition": j.condition,
            "score": j.score,
            "n_valid": j.n_valid,
            "n_correct": sum(v.verdict == "correct" for v in j.votes),
            "n_discarded": j.n_discarded,
            "model": j.model,
        }
        for j in judgments
    ]
    return pl.DataFrame(rows, schema=JUDGMENT_SCHEMA)


def turn_scores(judgments: Sequence[TurnJudgment]) -> pl.DataFrame:
    """One row per judged (session, turn, condition): the turn's TSQ and how its steps went.

    ``score`` is the mean of the turn's scored steps (subagents' steps included), or the
    turn-level judgment's score; step rows win over a turn-level row of the same turn and
    condition. ``steps`` counts judged steps (0 for a turn-level judgment); the worst step is
    the lowest-scoring one, the earliest on a tie (``worst_step_parent_call_id`` names the call
    that spawned it when it is a subagent's). ``n_valid``/``n_correct`` add up the votes.
    """
    frame = judgments_frame(judgments).with_columns(
        pl.col("step_index").is_not_null().alias("is_step")
    )
    keys = ["session_id", "turn_index", "condition"]
    has_steps = frame.group_by(keys).agg(pl.col("is_step").any().alias("has_steps"))
    kept = frame.join(has_steps, on=keys).filter(pl.col("is_step") == pl.col("has_steps"))
    worst = (
        kept.filter(pl.col("is_step") & pl.col("score").is_not_null())
        .sort("score", "step_index", "parent_call_id")
        .group_by(keys, maintain_order=True)
        .first()
        .select(
            *keys,
            pl.col("step_index").alias("worst_step_index"),
            pl.col("parent_call_id").alias("worst_step_parent_call_id"),
            pl.col("score").alias("worst_step_score"),
        )
    )
    return (
        kept.group_by(keys)
        .agg(
            pl.col("score").mean(),
            pl.col("n_valid").sum(),
            pl.col("n_correct").sum(),
            pl.col("n_discarded").sum(),
            pl.col("model").first(),
            pl.col("is_step").sum().cast(pl.Int64).alias("steps"),
            (pl.col("score").is_between(0, 1, closed="none"))
            .sum()
            .cast(pl.Int64)
            .alias("split_steps"),
            (pl.col("is_step") & pl.col("score").is_null())
            .sum()
            .cast(pl.Int64)
            .alias("unscored_steps"),
        )
        .join(worst, on=keys, how="left")
        .sort(keys)
    )
