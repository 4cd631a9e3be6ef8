"""Tables the workbench shows: sessions with their scores and findings, and turns of a session.

Scores come from judgments of one condition (``full`` by default: what a properly fed judge
said). Everything is built with polars joins and aggregations, no per-row Python in the
render path, so thousands of sessions stay quick.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ._frames import sessions_frame, turns_frame
from ._lint import Finding
from ._models import Condition, Session, TurnJudgment

JUDGMENT_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "session_id": pl.String,
    "turn_index": pl.Int64,
    "condition": pl.String,
    "score": pl.Float64,
    "n_valid": pl.Int64,
    "n_correct": pl.Int64,
    "n_discarded": pl.Int64,
    "model": pl.String,
}
SEVERITIES = ("error", "warning", "info")
FINDING_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "session_id": pl.String,
    "turn_index": pl.Int64,
    "code": pl.String,
    "severity": pl.String,
    "message": pl.String,
}


def judgments_frame(judgments: Sequence[TurnJudgment]) -> pl.DataFrame:
    rows = [
        {
            "session_id": j.session_id,
            "turn_index": j.turn_index,
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


def findings_frame(findings: Sequence[Finding]) -> pl.DataFrame:
    return pl.DataFrame([f.model_dump() for f in findings], schema=FINDING_SCHEMA)


def with_verdict_kind(scores: pl.DataFrame) -> pl.DataFrame:
    """Add ``verdict_kind`` (pass, fail, split, unscored) and the "k of n judges" label."""
    return scores.with_columns(
        pl.when(pl.col("score").is_null())
        .then(pl.lit("unscored"))
        .when(pl.col("score") == 1)
        .then(pl.lit("pass"))
        .when(pl.col("score") == 0)
        .then(pl.lit("fail"))
        .otherwise(pl.lit("split"))
        .alias("verdict_kind"),
        pl.when(pl.col("n_valid") > 0)
        .then(pl.format("{} of {} judges", pl.col("n_correct"), pl.col("n_valid")))
        .otherwise(pl.lit("no valid vote"))
        .alias("votes_label"),
    )


def session_overview(
    sessions: Sequence[Session],
    judgments: Sequence[TurnJudgment],
    findings: Sequence[Finding],
    condition: Condition = "full",
) -> pl.DataFrame:
    """One row per session: size, mean TSQ, split-vote and unscored turns, findings by severity."""
    base = sessions_frame(sessions).select(
        "session_id", "format", "title", "turns", "tool_calls", "subagent_tool_calls", "source"
    )
    scores = with_verdict_kind(judgments_frame(judgments).filter(pl.col("condition") == condition))
    per_session = scores.group_by("session_id").agg(
        pl.col("score").mean().alias("mean_tsq"),
        (pl.col("verdict_kind") == "split").sum().alias("split_turns"),
        (pl.col("verdict_kind") == "unscored").sum().alias("unscored_turns"),
        pl.len().alias("judged_turns"),
    )
    severities = (
        findings_frame(findings)
        .group_by("session_id")
        .agg(
            (pl.col("severity") == "error").sum().alias("errors"),
            (pl.col("severity") == "warning").sum().alias("warnings"),
            (pl.col("severity") == "info").sum().alias("infos"),
        )
    )
    counts = ["split_turns", "unscored_turns", "judged_turns", "errors", "warnings", "infos"]
    return (
        base.join(per_session, on="session_id", how="left")
        .join(severities, on="session_id", how="left")
        .with_columns(pl.col(counts).fill_null(0).cast(pl.Int64))
    )


def turn_table(
    session: Session,
    judgments: Sequence[TurnJudgment],
    findings: Sequence[Finding],
    condition: Condition = "full",
) -> pl.DataFrame:
    """One row per turn of ``session``: the ask, chosen tools, score, vote split, findings."""
    turns = turns_frame([session]).select("turn_index", "ask", "tools", "tool_calls")
    scores = with_verdict_kind(
        judgments_frame(judgments).filter(
            (pl.col("session_id") == session.session_id) & (pl.col("condition") == condition)
        )
    ).select("turn_index", "score", "verdict_kind", "votes_label", "n_valid", "n_correct")
    codes = (
        findings_frame(findings)
        .filter((pl.col("session_id") == session.session_id) & pl.col("turn_index").is_not_null())
        .group_by("turn_index", maintain_order=True)
        .agg(pl.col("code").alias("findings"))
    )
    return (
        turns.join(scores, on="turn_index", how="left")
        .join(codes, on="turn_index", how="left")
        .with_columns(
            pl.col("verdict_kind").fill_null("not judged"),
            pl.col("findings").fill_null([]),
        )
        .sort("turn_index")
    )


def ablation_table(judgments: Sequence[TurnJudgment], by_session: bool = True) -> pl.DataFrame:
    """Mean TSQ per session and condition: the seed's story in one table.

    ``by_session=False`` pools every judged turn: one row per condition, ``session_id``
    "all sessions".
    """
    frame = judgments_frame(judgments)
    if not by_session:
        frame = frame.with_columns(pl.lit("all sessions").alias("session_id"))
    return (
        frame.group_by("session_id", "condition")
        .agg(pl.col("score").mean().alias("mean_tsq"), pl.len().alias("turns"))
        .sort("session_id", "condition")
    )
