"""What judgments score: a turn's TSQ, a score's majority (``analysis.models.majority_label``)
and which judge's judgments count. The rules the findings, the views, the index, the report and
the CLI share, below all of them (it imports only the data model)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence

import polars as pl

from analysis._format import interval, share
from analysis._intervals import TOO_FEW_SESSIONS
from analysis.models import (
    CASCADE_PREFIX,
    CORRECT,
    Judgment,
    ScorerRecord,
    majority_label as majority_label,
)

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
    "rater": pl.String,
}


def judgments_frame(judgments: Sequence[Judgment]) -> pl.DataFrame:
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
            "n_correct": sum(v.verdict == CORRECT for v in j.votes),
            "n_discarded": j.n_discarded,
            "model": j.model,
            "rater": j.rater,
        }
        for j in judgments
    ]
    return pl.DataFrame(rows, schema=JUDGMENT_SCHEMA)


def turn_scores(judgments: Sequence[Judgment]) -> pl.DataFrame:
    """One row per judged (session, turn, condition): the turn's TSQ and how its steps went.

    ``score`` is the mean of the turn's scored steps (subagents' steps included), or the
    turn-level judgment's score; step rows win over a turn-level row of the same turn and
    condition. ``steps`` counts judged steps (0 for a turn-level judgment); the worst step is
    the lowest-scoring one, the earliest on a tie (``worst_step_parent_call_id`` names the call
    that spawned it when it is a subagent's). ``n_valid``/``n_correct`` add up the votes;
    ``split_steps`` counts the steps whose votes split (a trained scorer's probabilities are
    no votes: ``rater`` says whose the turn's judgments are).
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
            pl.col("rater").first(),
            pl.col("is_step").sum().cast(pl.Int64).alias("steps"),
            (pl.col("score").is_between(0, 1, closed="none") & (pl.col("rater") == "judge"))
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


def judge_name(judgment: Judgment) -> str:
    """Who gave a judgment: its spec's ``judge_id``, or (a file from before specs) its model."""
    return judgment.judge_id or judgment.model


def judge_names(judgments: Sequence[Judgment]) -> list[str]:
    """The judges among ``judgments``, the one with most judgments first (then first seen)."""
    counts = Counter(judge_name(j) for j in judgments)
    return sorted(counts, key=lambda name: -counts[name])


def sessions_judges(
    judged: Iterable[tuple[str, str]], name: str | None = None, scorers: Collection[str] = ()
) -> dict[str, str]:
    """Whose judgments count in each session: the one rule of every page, command, table and
    chart (the Overview and the Trends alike, ``tsq report``, ``tsq lint``, ``tsq trends``), so
    that two judges never mix on one step and two views never count different judgments.

    ``judged`` is each judgment's (session id, judge) in the order given, one per judgment as
    :func:`analysis.judge.merge_judgments` keeps them (every condition, steps and whole turns).
    With ``name`` one of those judges, that judge's judgments count in every session. Else each
    session's **own judge** counts there: the judge with most judgments of the session, and
    among equals the one whose last judgment of the session comes latest in the order given
    (the later file, the later line, the later run: the newer word, so a session judged again
    on the Judge page shows the new judgments). A trained step scorer (one of ``scorers``) is
    a session's own judge only where no LLM judge judged the session: it never takes the
    place of a judge by scoring more steps."""
    counts: dict[str, Counter[str]] = {}
    last: dict[tuple[str, str], int] = {}
    for position, (session, judge) in enumerate(judged):
        counts.setdefault(session, Counter())[judge] += 1
        last[session, judge] = position
    if name is not None and any(name in per_judge for per_judge in counts.values()):
        return dict.fromkeys(counts, name)
    return {
        session: max(
            per_judge,
            key=lambda judge: (judge not in scorers, per_judge[judge], last[session, judge]),
        )
        for session, per_judge in counts.items()
    }


def of_judge(judgments: Sequence[Judgment], name: str | None = None) -> list[Judgment]:
    """The judgments that count (:func:`sessions_judges`): ``name``'s everywhere, or (None, or a
    judge not among them) each session's own judge's."""
    merged = {j.key: j for j in judgments}.values()  # as merge_judgments keeps them
    scorers = {judge_name(j) for j in merged if j.by_scorer}
    chosen = sessions_judges(((j.session_id, judge_name(j)) for j in merged), name, scorers)
    return [j for j in judgments if judge_name(j) == chosen[j.session_id]]


def several_judges(judgments: Sequence[Judgment]) -> bool:
    """Whether some session was judged by more than one judge (so a choice is shown)."""
    seen: dict[str, str] = {}
    return any(seen.setdefault(j.session_id, judge_name(j)) != judge_name(j) for j in judgments)


def scorers_among(
    judgments: Iterable[Judgment], records: Mapping[str, ScorerRecord] | None = None
) -> dict[str, ScorerRecord | None]:
    """The trained step scorers among ``judgments``' raters, each with its record where
    ``records`` (the index's, :attr:`analysis.index.Collection.scorers`) holds one."""
    records = records or {}
    return {
        name: records.get(name)
        for name in dict.fromkeys(judge_name(j) for j in judgments if j.by_scorer)
    }


def rater_in_words(judge: str, scorers: Mapping[str, ScorerRecord | None]) -> str:
    """A judge's name as every page and command says it: a trained step scorer (one of
    ``scorers``) is always called one, with its agreement with people on its test part beside
    its name (or where to read it), so that it is never taken for an LLM judge; a cascade
    (``tsq judge --cascade``) is said to be one."""
    if judge.startswith(CASCADE_PREFIX):
        return (
            f"{judge} (a cascade: the LLM judge's votes where the trained scorer was least sure, "
            "the scorer's probability elsewhere)"
        )
    if judge not in scorers:
        return judge
    record = scorers[judge]
    if record is None or record.test_agreement is None:
        return (
            f"{judge} (a trained step scorer, not an LLM judge; its agreement with people is "
            "on its model card)"
        )
    bounds = (
        interval(record.test_agreement_ci, percent=True)
        if record.test_agreement_ci is not None
        else f" ({TOO_FEW_SESSIONS})"  # the card's interval is missing for no other reason
    )
    return (
        f"{judge} (a trained step scorer, not an LLM judge: agreement with people "
        f"{share(record.test_agreement)}{bounds} on {record.test_n} test steps)"
    )
