"""Turns across every session, for a human's review: the ambiguous ones, the ones to look at first.

Scores come from one judge condition (``full`` by default). Findings are those about the input
plus those about judgments of that condition, so a ``[bare]`` finding (a menu of one tool, by
design of the ablation) does not send a turn up the review queue.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ._frames import turns_frame
from ._lint import Finding, findings_for_condition, findings_for_turn, why_this_score
from ._models import Condition, Session, TurnJudgment
from ._render import CONDITIONS
from ._views import SEVERITIES, findings_frame, judgments_frame, with_verdict_kind

VOTE_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "session_id": pl.String,
    "turn_index": pl.Int64,
    "condition": pl.String,
    "judge": pl.Int64,
    "verdict": pl.String,
    "reasoning": pl.String,
}
SUMMARY_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "severity": pl.String,
    "code": pl.String,
    "findings": pl.Int64,
    "sessions": pl.Int64,
    "turns": pl.Int64,
    "example": pl.String,
}


def turns_overview(
    sessions: Sequence[Session],
    judgments: Sequence[TurnJudgment],
    findings: Sequence[Finding],
    condition: Condition = "full",
) -> pl.DataFrame:
    """One row per turn of every session: the ask, chosen tools, score, vote split, findings.

    ``errors``, ``warnings`` and ``infos`` count the turn's findings of each severity.
    """
    turns = turns_frame(sessions).select("session_id", "turn_index", "ask", "tools", "tool_calls")
    scores = with_verdict_kind(
        judgments_frame(judgments).filter(pl.col("condition") == condition)
    ).select(
        "session_id", "turn_index", "score", "verdict_kind", "votes_label", "n_valid", "n_correct"
    )
    kept = findings_frame(findings_for_condition(findings, condition)).filter(
        pl.col("turn_index").is_not_null()
    )
    per_turn = kept.group_by("session_id", "turn_index", maintain_order=True).agg(
        pl.col("code").alias("findings"),
        *[(pl.col("severity") == s).sum().cast(pl.Int64).alias(f"{s}s") for s in SEVERITIES],
    )
    counts = [f"{s}s" for s in SEVERITIES]
    return (
        turns.join(scores, on=["session_id", "turn_index"], how="left")
        .join(per_turn, on=["session_id", "turn_index"], how="left")
        .with_columns(
            pl.col("verdict_kind").fill_null("not judged"),
            pl.col("findings").fill_null([]),
            pl.col(counts).fill_null(0),
        )
    )


def _first_reasoning(judgment: TurnJudgment, verdict: str) -> str | None:
    return next((v.reasoning for v in judgment.votes if v.verdict == verdict), None)


def ambiguous_turns(
    sessions: Sequence[Session],
    judgments: Sequence[TurnJudgment],
    condition: Condition = "full",
) -> pl.DataFrame:
    """Split-vote turns (0 < score < 1): the ask, the choice, and one argument from each side."""
    split = {
        (j.session_id, j.turn_index): j
        for j in judgments
        if j.condition == condition and j.score is not None and 0 < j.score < 1
    }
    arguments = pl.DataFrame(
        [
            {
                "session_id": session_id,
                "turn_index": turn_index,
                "for_correct": _first_reasoning(judgment, "correct"),
                "for_incorrect": _first_reasoning(judgment, "incorrect"),
            }
            for (session_id, turn_index), judgment in split.items()
        ],
        schema={
            "session_id": pl.String,
            "turn_index": pl.Int64,
            "for_correct": pl.String,
            "for_incorrect": pl.String,
        },
    )
    return (
        turns_overview(sessions, judgments, (), condition)
        .filter(pl.col("verdict_kind") == "split")
        .join(arguments, on=["session_id", "turn_index"], how="inner")
        .select(
            "session_id",
            "turn_index",
            "ask",
            "tools",
            "score",
            "votes_label",
            "for_correct",
            "for_incorrect",
        )
        .sort("session_id", "turn_index")
    )


def review_queue(
    sessions: Sequence[Session],
    judgments: Sequence[TurnJudgment],
    findings: Sequence[Finding],
    condition: Condition = "full",
    limit: int | None = 20,
) -> pl.DataFrame:
    """The turns most worth a human's look, in order, each with the reasons.

    Order: split votes first (the judges disagree), then unscored turns, then failing ones,
    then by the number of error findings, then warnings; ties in session and turn order.
    """
    turns = turns_overview(sessions, judgments, findings, condition)
    kind = pl.col("verdict_kind")
    queue = (
        turns.with_columns(
            pl.concat_list(
                pl.when(kind == "split")
                .then(pl.format("split vote ({})", pl.col("votes_label")))
                .when(kind == "unscored")
                .then(pl.lit("unscored"))
                .when(kind == "fail")
                .then(pl.lit("judged incorrect"))
                .otherwise(None),
                pl.col("findings").list.unique(maintain_order=True),
            )
            .list.drop_nulls()
            .list.join(", ")
            .alias("reasons")
        )
        .sort(
            [
                kind == "split",
                kind == "unscored",
                kind == "fail",
                pl.col("errors"),
                pl.col("warnings"),
                pl.col("session_id"),
                pl.col("turn_index"),
            ],
            descending=[True, True, True, True, True, False, False],
        )
        .select(
            "session_id",
            "turn_index",
            "ask",
            "tools",
            "score",
            "verdict_kind",
            "reasons",
            "errors",
            "warnings",
        )
    )
    return queue if limit is None else queue.head(limit)


def explain_turns(
    session: Session,
    judgments: Sequence[TurnJudgment],
    findings: Sequence[Finding],
    condition: Condition = "full",
) -> pl.DataFrame:
    """One row per turn of ``session``: score, "k of n judges", and why it scored that."""
    judged = {
        j.turn_index: j
        for j in judgments
        if j.session_id == session.session_id and j.condition == condition
    }
    rows = []
    for turn in session.turns:
        judgment = judged.get(turn.index)
        about = findings_for_turn(findings, session.session_id, turn.index, condition)
        rows.append(
            {
                "turn_index": turn.index,
                "ask": turn.ask,
                "score": judgment.score if judgment else None,
                "why": why_this_score(about, judgment),
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "turn_index": pl.Int64,
            "ask": pl.String,
            "score": pl.Float64,
            "why": pl.String,
        },
    )


def ablation_turns(sessions: Sequence[Session], judgments: Sequence[TurnJudgment]) -> pl.DataFrame:
    """Per turn, its score under each judge condition side by side (bare, catalog_no_call, full)."""
    scores = judgments_frame(judgments).select("session_id", "turn_index", "condition", "score")
    wide = scores.pivot(
        on="condition",
        index=["session_id", "turn_index"],
        values="score",
        aggregate_function="first",
    )
    missing = [c for c in CONDITIONS if c not in wide.columns]
    wide = wide.with_columns([pl.lit(None, dtype=pl.Float64).alias(c) for c in missing])
    return (
        turns_frame(sessions)
        .select("session_id", "turn_index", "ask", "tools")
        .join(wide, on=["session_id", "turn_index"], how="left")
        .select("session_id", "turn_index", "ask", "tools", *CONDITIONS)
    )


def votes_frame(judgments: Sequence[TurnJudgment]) -> pl.DataFrame:
    """Every vote, one row each: which judge (1..n) of which turn said what, and why."""
    return pl.DataFrame(
        [
            {
                "session_id": j.session_id,
                "turn_index": j.turn_index,
                "condition": j.condition,
                "judge": number,
                "verdict": vote.verdict,
                "reasoning": vote.reasoning,
            }
            for j in judgments
            for number, vote in enumerate(j.votes, start=1)
        ],
        schema=VOTE_SCHEMA,
    )


def findings_summary(findings: Sequence[Finding]) -> pl.DataFrame:
    """Findings by code, most serious first: how many, in how many sessions and turns, e.g.…"""
    frame = findings_frame(findings)
    if frame.is_empty():
        return pl.DataFrame(schema=SUMMARY_SCHEMA)
    rank = pl.col("severity").replace_strict(SEVERITIES, list(range(len(SEVERITIES))))
    return (
        frame.group_by("severity", "code")
        .agg(
            pl.len().cast(pl.Int64).alias("findings"),
            pl.col("session_id").n_unique().cast(pl.Int64).alias("sessions"),
            pl.struct("session_id", "turn_index")
            .filter(pl.col("turn_index").is_not_null())
            .n_unique()
            .cast(pl.Int64)
            .alias("turns"),
            pl.col("message").first().alias("example"),
        )
        .sort([rank, pl.col("findings"), pl.col("code")], descending=[False, True, False])
        .select(list(SUMMARY_SCHEMA))
    )
