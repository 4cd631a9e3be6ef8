"""Steps and turns across every session, for a human's review: the ambiguous ones, the worst
ones, the ones to look at first.

Scores come from one judge condition (``full`` by default). A turn's score is
:func:`~analysis._scores.turn_scores`' (the mean of its judged steps, or its turn-level
judgment). Findings are those about the input plus those about judgments of that condition,
so a finding about a ``bare`` judgment (a menu of one tool, by design of the ablation) does
not send a turn up the review queue.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import polars as pl

from analysis._scores import judgments_frame, turn_scores
from analysis.findings import (
    SEVERITIES,
    Finding,
    finding_scope,
    findings_for_condition,
    findings_for_step,
    findings_for_turn,
    why_this_score,
)
from analysis.models import (
    CORRECT,
    INCORRECT,
    MAJORITY,
    STEP_KEYS,
    Condition,
    Judgment,
    Session,
    StepKey,
    majority_label,
)
from analysis.render import CONDITIONS, render_call, turn_steps
from analysis.views._frames import turns_frame
from analysis.views._tables import findings_frame, turn_verdicts, with_verdict_kind

VOTE_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "session_id": pl.String,
    "turn_index": pl.Int64,
    "step_index": pl.Int64,
    "parent_call_id": pl.String,
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
    "steps": pl.Int64,
    "example": pl.String,
}
STEP_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "session_id": pl.String,
    "turn_index": pl.Int64,
    "step_index": pl.Int64,
    "parent_call_id": pl.String,
    "ask": pl.String,
    "tools": pl.List(pl.String),
    "calls": pl.List(pl.String),
}
ARGUMENT_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "session_id": pl.String,
    "turn_index": pl.Int64,
    "step_index": pl.Int64,
    "parent_call_id": pl.String,
    "for_correct": pl.String,
    "for_incorrect": pl.String,
}


def _step_key(judgment: Judgment) -> StepKey:
    return (judgment.session_id, judgment.turn_index, judgment.step_index, judgment.parent_call_id)


def _judged_steps(sessions: Sequence[Session], keys: Iterable[StepKey]) -> pl.DataFrame:
    """The ask, tools and rendered calls of each of these steps found in ``sessions``.

    Each turn holding a wanted step is walked once, so this stays linear in the judged turns.
    """
    wanted: dict[tuple[str, int], set[tuple[int | None, str | None]]] = {}
    for session_id, turn_index, step_index, parent_call_id in keys:
        wanted.setdefault((session_id, turn_index), set()).add((step_index, parent_call_id))
    rows = []
    for session in sessions:
        for turn in session.turns:
            steps = wanted.get((session.session_id, turn.index))
            if not steps:
                continue
            for step in turn_steps(turn, text_steps=True, subagents=True):
                if (step.index, step.parent_call_id) in steps:
                    calls = step.message.tool_calls
                    rows.append(
                        {
                            "session_id": session.session_id,
                            "turn_index": turn.index,
                            "step_index": step.index,
                            "parent_call_id": step.parent_call_id,
                            "ask": turn.ask,
                            "tools": list(dict.fromkeys(call.name for call in calls)),
                            "calls": [render_call(call) for call in calls],
                        }
                    )
    return pl.DataFrame(rows, schema=STEP_SCHEMA)


def _first_reasoning(judgment: Judgment, verdict: str) -> str | None:
    return next((v.reasoning for v in judgment.votes if v.verdict == verdict), None)


def _arguments(judgments: Iterable[Judgment]) -> pl.DataFrame:
    """One judge's argument from each side, per judged step (or turn: ``step_index`` null)."""
    return pl.DataFrame(
        [
            {
                "session_id": j.session_id,
                "turn_index": j.turn_index,
                "step_index": j.step_index,
                "parent_call_id": j.parent_call_id,
                "for_correct": _first_reasoning(j, CORRECT),
                "for_incorrect": _first_reasoning(j, INCORRECT),
            }
            for j in judgments
        ],
        schema=ARGUMENT_SCHEMA,
    )


def turns_overview(
    sessions: Sequence[Session],
    judgments: Sequence[Judgment],
    findings: Sequence[Finding],
    condition: Condition = "full",
) -> pl.DataFrame:
    """One row per turn of every session: the ask, chosen tools, score, vote split, findings.

    ``score`` is the turn's TSQ (the mean of its judged steps); ``steps``, ``split_steps`` and
    ``worst_step_index`` say how its steps went. ``findings`` lists the codes of the findings
    about the turn, its steps and every turn of its session; ``errors``, ``warnings`` and
    ``infos`` count them by severity.
    """
    turns = turns_frame(sessions).select("session_id", "turn_index", "ask", "tools", "tool_calls")
    scores = turn_verdicts(judgments, condition).select(
        "session_id",
        "turn_index",
        "score",
        "verdict_kind",
        "votes_label",
        "n_valid",
        "n_correct",
        "steps",
        "split_steps",
        "worst_step_index",
    )
    relevant = findings_for_condition(findings, condition)
    counts = [f"{s}s" for s in SEVERITIES]

    def by_severity(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
        return frame.group_by(keys, maintain_order=True).agg(
            pl.col("code").alias("codes"),
            *[(pl.col("severity") == s).sum().cast(pl.Int64).alias(f"{s}s") for s in SEVERITIES],
        )

    per_turn = by_severity(
        findings_frame([f for f in relevant if f.turn_index is not None]),
        ["session_id", "turn_index"],
    )
    every_turn = by_severity(
        findings_frame([f for f in relevant if finding_scope(f) == "every turn"]), ["session_id"]
    )
    return (
        turns.join(scores, on=["session_id", "turn_index"], how="left")
        .join(every_turn, on="session_id", how="left")
        .join(per_turn, on=["session_id", "turn_index"], how="left", suffix="_turn")
        .with_columns(
            pl.col("verdict_kind").fill_null("not judged"),
            pl.concat_list(pl.col("codes").fill_null([]), pl.col("codes_turn").fill_null([]))
            .list.unique(maintain_order=True)
            .alias("findings"),
            *[(pl.col(c).fill_null(0) + pl.col(f"{c}_turn").fill_null(0)).alias(c) for c in counts],
        )
        .drop("codes", "codes_turn", *[f"{c}_turn" for c in counts])
    )


def ambiguous_turns(
    sessions: Sequence[Session],
    judgments: Sequence[Judgment],
    condition: Condition = "full",
) -> pl.DataFrame:
    """Split-vote turns: the ask, the choice, and one argument from each side (of the turn's
    judgment, or of its first split step)."""
    first_split: dict[tuple[str, int], Judgment] = {}
    for judgment in judgments:
        if judgment.condition == condition and judgment.verdict == "split":
            first_split.setdefault((judgment.session_id, judgment.turn_index), judgment)
    arguments = _arguments(first_split.values()).select(
        "session_id", "turn_index", "for_correct", "for_incorrect"
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


def _step_rows(judgments: Sequence[Judgment]) -> pl.DataFrame:
    """Step judgments as rows with ``verdict_kind`` and ``votes_label`` ("2 of 3 judges")."""
    return with_verdict_kind(judgments_frame(judgments))


def _with_details(
    sessions: Sequence[Session], rows: pl.DataFrame, judgments: Sequence[Judgment]
) -> pl.DataFrame:
    """``rows`` (one per judged step) with the step's ask, tools, calls and both arguments."""
    keys = set(rows.select(STEP_KEYS).iter_rows())
    chosen = [j for j in judgments if _step_key(j) in keys]
    return rows.join(
        _judged_steps(sessions, keys), on=STEP_KEYS, how="inner", nulls_equal=True
    ).join(_arguments(chosen), on=STEP_KEYS, how="left", nulls_equal=True)


def _step_order() -> list[pl.Expr]:
    """Steps in session order: by turn, the main agent's before its subagents', by index."""
    return [
        pl.col("session_id"),
        pl.col("turn_index"),
        pl.col("parent_call_id").is_not_null(),
        pl.col("parent_call_id"),
        pl.col("step_index"),
    ]


def ambiguous_steps(
    sessions: Sequence[Session],
    judgments: Sequence[Judgment],
    condition: Condition = "full",
) -> pl.DataFrame:
    """Split-vote steps (0 < score < 1): the turn's ask, the step's tools and calls, "k of n
    judges", and one judge's argument from each side."""
    split = [
        j
        for j in judgments
        if j.condition == condition and j.step_index is not None and j.verdict == "split"
    ]
    return (
        _with_details(sessions, _step_rows(split), split)
        .select(
            *STEP_KEYS,
            "ask",
            "tools",
            "calls",
            "score",
            "votes_label",
            "for_correct",
            "for_incorrect",
        )
        .sort(_step_order())
    )


def lowest_steps(
    judgments: Sequence[Judgment], condition: Condition = "full", per_session: int = 3
) -> pl.DataFrame:
    """The ``per_session`` lowest-scoring steps of each session (those below 1), from the
    judgments alone, in the order :func:`worst_steps` lists them: what says which sessions
    a table of the worst steps needs read."""
    steps = [j for j in judgments if j.condition == condition and j.step_index is not None]
    return (
        _step_rows(steps)
        .filter(pl.col("score") < 1)
        .sort("session_id", "score", "turn_index", "step_index")
        .group_by("session_id", maintain_order=True)
        .head(per_session)
    )


def worst_steps(
    sessions: Sequence[Session],
    judgments: Sequence[Judgment],
    condition: Condition = "full",
    per_session: int = 3,
) -> pl.DataFrame:
    """The ``per_session`` lowest-scoring steps of each session (those below 1), with the
    turn's ask, the step's calls, "k of n judges" and one argument against the choice.

    Lowest score first, then in session order; unscored steps are not ranked.
    """
    steps = [j for j in judgments if j.condition == condition and j.step_index is not None]
    lowest = lowest_steps(steps, condition, per_session)
    return (
        _with_details(sessions, lowest, steps)
        .select(
            *STEP_KEYS,
            "ask",
            "calls",
            "score",
            "votes_label",
            "for_incorrect",
        )
        .sort("session_id", "score", "turn_index", "step_index")
    )


def review_queue(
    sessions: Sequence[Session],
    judgments: Sequence[Judgment],
    findings: Sequence[Finding],
    condition: Condition = "full",
    limit: int | None = 20,
) -> pl.DataFrame:
    """The turns most worth a human's look, in order, each with the reasons.

    Order: split votes first (the judges disagree on the turn or on one of its steps), then
    unscored turns, failing ones, turns with a failing step, then by the number of error
    findings, then warnings; ties in session and turn order.
    """
    turns = turns_overview(sessions, judgments, findings, condition)
    kind = pl.col("verdict_kind")
    queue = (
        turns.with_columns(
            pl.concat_list(
                pl.when((kind == "split") & (pl.col("steps") > 1))
                .then(pl.format("split vote at {} of {} steps", "split_steps", "steps"))
                .when(kind == "split")
                .then(pl.format("split vote ({})", pl.col("votes_label")))
                .when(kind == "unscored")
                .then(pl.lit("unscored"))
                .when(kind == INCORRECT)
                .then(pl.lit("judged incorrect"))
                .when(kind == "mixed")
                .then(pl.format("step {} judged incorrect", "worst_step_index"))
                .otherwise(None),
                pl.col("findings"),
            )
            .list.drop_nulls()
            .list.join(", ")
            .alias("reasons")
        )
        .sort(
            [
                kind == "split",
                kind == "unscored",
                kind == INCORRECT,
                kind == "mixed",
                pl.col("errors"),
                pl.col("warnings"),
                pl.col("session_id"),
                pl.col("turn_index"),
            ],
            descending=[True, True, True, True, True, True, False, False],
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


LABELLING_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "item_id": pl.String,
    "session_id": pl.String,
    "turn_index": pl.Int64,
    "step_index": pl.Int64,
    "parent_call_id": pl.String,
    "score": pl.Float64,
    "votes_label": pl.String,
    "reason": pl.String,
}


def labelling_queue(
    judgments: Sequence[Judgment],
    labelled: Iterable[str] = (),
    condition: Condition = "full",
    limit: int | None = 20,
) -> pl.DataFrame:
    """Judged steps (and turns) for a person to label next, their ``item_id`` as the judge's
    labels name them (:func:`analysis.study.step_item_id`); items in ``labelled`` are left out.

    Split votes first, the evenest split first (the judge is least sure there, and a person's
    label tells the most), then steps judged incorrect, then the rest; ties in session order.
    Unscored steps are not offered: the judge gave them no label to compare.
    """
    from analysis.study import step_item_id

    done = set(labelled)
    rows = []
    for j in judgments:
        if j.condition != condition or j.score is None:
            continue
        item = step_item_id(j.session_id, j.turn_index, j.step_index, j.parent_call_id)
        if item in done:
            continue
        correct = sum(v.verdict == CORRECT for v in j.votes)
        split = j.verdict == "split"
        wrong = majority_label(j.score) == INCORRECT
        rows.append(
            {
                "item_id": item,
                "session_id": j.session_id,
                "turn_index": j.turn_index,
                "step_index": j.step_index,
                "parent_call_id": j.parent_call_id,
                "score": j.score,
                "votes_label": f"{correct} of {len(j.votes)} judges",
                "reason": "split vote" if split else "judged incorrect" if wrong else "",
                "rank": 0 if split else 1 if wrong else 2,
            }
        )
    frame = pl.DataFrame(rows, schema={**LABELLING_SCHEMA, "rank": pl.Int64})
    queue = frame.sort(
        pl.col("rank"),
        (pl.col("score") - MAJORITY).abs(),
        pl.col("session_id"),
        pl.col("turn_index"),
        pl.col("parent_call_id").is_not_null(),
        pl.col("step_index"),
    ).drop("rank")
    return queue if limit is None else queue.head(limit)


def next_to_label(
    judgments: Sequence[Judgment], labelled: Iterable[str], current: str
) -> dict[str, Any] | None:
    """The first step of the labelling queue other than ``current``: what "next unlabelled
    step" opens, so a person can label a dev set in one sitting; None when none is left."""
    queue = labelling_queue(judgments, [*labelled, current], limit=None)
    steps = queue.filter(pl.col("step_index").is_not_null())
    return steps.row(0, named=True) if steps.height else None


def _step_name(step_index: int, parent_call_id: str | None) -> str:
    under = f" of the subagent of call {parent_call_id}" if parent_call_id else ""
    return f"step {step_index}{under}"


def explain_turns(
    session: Session,
    judgments: Sequence[Judgment],
    findings: Sequence[Finding],
    condition: Condition = "full",
) -> pl.DataFrame:
    """One row per turn of ``session``: its score and why it scored that.

    A turn judged step by step is explained by its worst step: that step's votes in words,
    then the most serious finding about it.
    """
    mine = [j for j in judgments if j.session_id == session.session_id and j.condition == condition]
    by_key = {(j.turn_index, j.step_index, j.parent_call_id): j for j in mine}
    scores = {row["turn_index"]: row for row in turn_scores(mine).iter_rows(named=True)}
    rows = []
    for turn in session.turns:
        row = scores.get(turn.index)
        if row is not None and row["steps"]:
            step, parent = row["worst_step_index"], row["worst_step_parent_call_id"]
            if step is None:  # no step was scored: the first one stands for the turn
                step, parent = next(
                    (s, p) for t, s, p in by_key if t == turn.index and s is not None
                )
            about = findings_for_step(
                findings, session.session_id, turn.index, step, condition, parent
            )
            worst = f"worst of {row['steps']} steps, " if row["steps"] > 1 else ""
            judgment = by_key[(turn.index, step, parent)]
            why = f"{worst}{_step_name(step, parent)}: {why_this_score(about, judgment)}"
        else:
            why = why_this_score(
                findings_for_turn(findings, session.session_id, turn.index, condition),
                by_key.get((turn.index, None, None)),
            )
        rows.append(
            {
                "turn_index": turn.index,
                "ask": turn.ask,
                "score": row["score"] if row else None,
                "why": why,
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


def _side_by_side(scores: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """``scores`` (keys, condition, score) with one score column per condition."""
    wide = scores.pivot(on="condition", index=keys, values="score", aggregate_function="first")
    missing = [c for c in CONDITIONS if c not in wide.columns]
    return wide.with_columns([pl.lit(None, dtype=pl.Float64).alias(c) for c in missing])


def ablation_turns(sessions: Sequence[Session], judgments: Sequence[Judgment]) -> pl.DataFrame:
    """Per turn, its score under each judge condition side by side (bare, catalog_no_call, full)."""
    keys = ["session_id", "turn_index"]
    wide = _side_by_side(turn_scores(judgments).select(*keys, "condition", "score"), keys)
    return (
        turns_frame(sessions)
        .select(*keys, "ask", "tools")
        .join(wide, on=keys, how="left")
        .select(*keys, "ask", "tools", *CONDITIONS)
    )


def ablation_steps(sessions: Sequence[Session], judgments: Sequence[Judgment]) -> pl.DataFrame:
    """Per judged step, its score under each judge condition side by side, with the turn's
    ask and the step's tools: the ablation one decision at a time."""
    steps = [j for j in judgments if j.step_index is not None]
    scores = judgments_frame(steps).select(*STEP_KEYS, "condition", "score")
    wide = _side_by_side(scores, STEP_KEYS)
    return (
        _judged_steps(sessions, {_step_key(j) for j in steps})
        .join(wide, on=STEP_KEYS, how="inner", nulls_equal=True)
        .select(*STEP_KEYS, "ask", "tools", *CONDITIONS)
        .sort(_step_order())
    )


def votes_frame(judgments: Sequence[Judgment]) -> pl.DataFrame:
    """Every vote, one row each: which judge (1..n) of which step or turn said what, and why."""
    return pl.DataFrame(
        [
            {
                "session_id": j.session_id,
                "turn_index": j.turn_index,
                "step_index": j.step_index,
                "parent_call_id": j.parent_call_id,
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
    """Findings by code, most serious first: how many, in how many sessions, turns and steps,
    e.g.… (a finding reported once for a whole session counts in no turn)."""
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
            pl.struct(STEP_KEYS)
            .filter(pl.col("step_index").is_not_null())
            .n_unique()
            .cast(pl.Int64)
            .alias("steps"),
            pl.col("message").first().alias("example"),
        )
        .sort([rank, pl.col("findings"), pl.col("code")], descending=[False, True, False])
        .select(list(SUMMARY_SCHEMA))
    )
