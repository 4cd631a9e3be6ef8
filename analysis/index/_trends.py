"""Trends across a collection: where tool choice got better or worse.

From the index: each judged step's TSQ (its fraction of votes ``correct``, under the ``full``
condition, one judge) with what it was — the tools it called, the model, the agent version,
the project, the week, the agent (``claude-code``, ``codex``, else the format) — then per
group the mean TSQ with its 95% interval, the split-vote and unscored shares, calls and tool
errors; and two groups (two periods, two versions, two agents) compared, with the interval of
the difference and the tools that moved most.

Intervals resample sessions, not steps (:func:`analysis._intervals.session_bootstrap`: 1,000
resamples, seed 0, percentile): the steps of one session are not independent. A figure over
fewer than five sessions has none ("too few sessions for an interval"); a group whose every step
scored 1 (or 0) gets the Wilson interval over its sessions, which a bootstrap would shrink to a
point. Two groups compared are resampled together (a session in both brings its steps to each).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import altair as alt
import numpy as np
import polars as pl
from pydantic import BaseModel

from analysis._intervals import (
    TOO_FEW_SESSIONS,
    Interval,
    session_bootstrap,
    session_bootstrap_difference,
)
from analysis._scores import judge_name, majority_label, rater_in_words, sessions_judges
from analysis.index._build import with_scope
from analysis.index._read import IndexReader, LoadedTables, ParquetTables, arrow_frame
from analysis.index._rows import SCORER_OWN
from analysis.judge import merge_judgments
from analysis.models import (
    CASCADE_PREFIX,
    STEP_KEYS,
    Judgment,
    ScorerRecord,
    parse_step_item_id,
)
from analysis.study import StepLabel

Dimension = Literal["tool", "model", "version", "project", "week", "agent"]
DIMENSIONS: tuple[str, ...] = Dimension.__args__  # type: ignore[attr-defined]
FLAT_WEEKS = 6
"""Up to this many weeks, their labels are written flat; more are slanted to fit."""

STEP_COLUMNS = """s.session_id, s.turn_index, s.step_index, s.parent_call_id, s.tools, s.calls,
       s.errors, s.model,
       CASE WHEN x.format = 'codex' THEN 'codex ' || s.agent_version ELSE s.agent_version END
           AS version,
       x.project,
       strftime(date_trunc('week', s.timestamp), '%Y-%m-%d') AS week,
       CASE WHEN x.format LIKE 'claude-code%' THEN 'claude-code' ELSE x.format END AS agent"""
"""What a step is by each dimension, from ``steps s JOIN sessions x``. A Codex version is
named with its agent (``codex 0.125.0``): the two agents' numbers do not compare."""
STEP_QUERY = (
    "SELECT " + STEP_COLUMNS + " FROM steps s JOIN sessions x USING (source_file, session_id)"
)
JUDGMENT_QUERY = """SELECT session_id, turn_index, step_index, parent_call_id, judge, judge_id,
       score, rater, source_file, line
FROM (SELECT *, row_number() OVER () AS line FROM judgments)
WHERE condition = 'full' AND step_index IS NOT NULL"""
"""The full-condition step judgments, each with its place among the table's rows (``line``: a
window with an empty ``OVER`` keeps the order they were written in, a file's in its lines')."""
_JUDGMENT_SCHEMA = pl.Schema(
    {
        "session_id": pl.String,
        "turn_index": pl.Int32,
        "step_index": pl.Int32,
        "parent_call_id": pl.String,
        "judge": pl.String,
        "judge_id": pl.String,
        "score": pl.Float64,
        "rater": pl.String,
    }
)
JUDGES_QUERY = """SELECT session_id, turn_index, step_index, parent_call_id, condition, judge,
       judge_id, rater, via, source_file, line
FROM (SELECT *, row_number() OVER () AS line FROM judgments)"""
"""Every judgment (any condition, steps and whole turns) with its place: what decides whose
judgments count in a session (:func:`analysis._scores.sessions_judges`)."""
MERGE_KEYS = [*STEP_KEYS, "judge_id"]
"""What ``merge_judgments`` keeps one judgment of, the condition being ``full`` here."""
IN_SCOPE = "source_file IN (SELECT path FROM scope)"
LABEL_FIELDS = ("item_id", "labeller", "value", "reason", "labelled_at")


def _judgment_frame(judgments: Sequence[Judgment]) -> pl.DataFrame:
    """The judgments as :func:`analysis.judge.merge_judgments` keeps them: one per step and
    judge, the last given winning."""
    rows = [
        (
            j.session_id,
            j.turn_index,
            j.step_index,
            j.parent_call_id,
            j.judge_id or j.model,
            j.judge_id,
            j.score,
            j.rater,
        )
        for j in merge_judgments(judgments)
        if j.condition == "full" and j.step_index is not None
    ]
    return pl.DataFrame(rows, schema=_JUDGMENT_SCHEMA, orient="row")


def _indexed_judgments(
    reader: IndexReader | ParquetTables | LoadedTables, query: str, scope: Sequence[str] | None
) -> pl.DataFrame:
    """The index's judgments by the rule of :func:`analysis.judge.merge_judgments`, as
    ``tsq report`` and ``tsq lint`` read the same files: one per step and judge, a later
    file's (in the order of ``scope``, the order the files were found in) winning over an
    earlier's, a later line's over an earlier's. A judge who judged a step twice (two
    ``--out`` files, a line repeated) counts it once."""
    return (
        _in_order(arrow_frame(reader.conn, query), scope)
        .unique(MERGE_KEYS, keep="last", maintain_order=True)
        .select(_JUDGMENT_SCHEMA.names())
    )


def _in_order(frame: pl.DataFrame, scope: Sequence[str] | None) -> pl.DataFrame:
    """The index's judgments in the order their files were found (``scope``'s), each file's in
    its lines'."""
    order = [pl.col("line")]
    if scope is not None:
        place = {path: number for number, path in enumerate(scope)}
        order.insert(0, pl.col("source_file").replace_strict(place, default=-1))
    return frame.sort(order)


def _indexed_judges(
    reader: IndexReader | ParquetTables | LoadedTables, scope: Sequence[str] | None
) -> tuple[list[tuple[str, str]], set[str]]:
    """Each of the index's judgments as (session id, judge), one per judgment as
    :func:`analysis.judge.merge_judgments` keeps them and in its order: where a step (or turn)
    was judged twice under one condition by one judge, at the place of the first, under the
    name of the last; and the judges among them that are trained step scorers."""
    query = JUDGES_QUERY + (f" WHERE {IN_SCOPE}" if scope is not None else "")
    keys = [*STEP_KEYS, "condition", "judge_id"]
    frame = _in_order(arrow_frame(reader.conn, query), scope)
    judged = (
        frame.with_row_index("position")
        .group_by(keys, maintain_order=True)
        .agg(pl.col("position").first(), pl.col("judge").last())
        .sort("position")
        .select("session_id", "judge")
        .rows()
    )
    own = (pl.col("rater") == "scorer") & pl.col("via").is_null()
    return judged, set(frame.filter(own)["judge"].unique())


def step_scores(
    reader: IndexReader | ParquetTables | LoadedTables,
    judge: str | None = None,
    scope: Sequence[str] | None = None,
    judgments: Sequence[Judgment] | None = None,
    labels: Sequence[StepLabel] | None = None,
) -> pl.DataFrame:
    """Every indexed step with its TSQ by the judge whose judgments count in its session
    (:func:`analysis._scores.sessions_judges`, the rule of every view: ``judge``'s, else each
    session's own judge's): a step that judge did not judge has ``score`` null and ``judged``
    false, one it judged without a valid vote ``unscored`` true. ``judge`` names the judges
    counted, most judged steps first, joined by ``, `` (one, unless sessions' own judges
    differ). With ``scope`` (resolved paths), only the steps and judgments of those files; with
    ``judgments``, those instead of the index's (but for the scores ``tsq score`` wrote into the
    index, which are in no file). ``people`` is the people's majority label of
    the step (:func:`analysis.align.references`; null where none or evenly split), from
    ``labels``, else from the index's labels table."""
    judged = judged_steps(reader, judge, scope, judgments)
    return with_people(judged, indexed_labels(reader) if labels is None else labels)


def judged_steps(
    reader: IndexReader | ParquetTables | LoadedTables,
    judge: str | None = None,
    scope: Sequence[str] | None = None,
    judgments: Sequence[Judgment] | None = None,
) -> pl.DataFrame:
    """:func:`step_scores` without the people's labels: what depends on the steps and the
    judgments alone, so that a new label does not recompute it."""
    steps_query, judgments_query = STEP_QUERY, JUDGMENT_QUERY
    if scope is not None:
        with_scope(reader.conn, scope)
        steps_query += f" WHERE s.{IN_SCOPE}"
        judgments_query += f" AND {IN_SCOPE}"
    steps = arrow_frame(reader.conn, steps_query).unique(STEP_KEYS, maintain_order=True)
    if judgments is None:
        given = _indexed_judgments(reader, judgments_query, scope).cast(_JUDGMENT_SCHEMA)
    else:  # those, and the scores tsq score wrote into the index (in no file)
        scored = _indexed_judgments(reader, f"{judgments_query} AND {SCORER_OWN}", scope)
        given = pl.concat(
            [scored.cast(_JUDGMENT_SCHEMA), _judgment_frame(judgments).cast(_JUDGMENT_SCHEMA)]
        ).unique(MERGE_KEYS, keep="last", maintain_order=True)
    key_types = pl.Schema({key: _JUDGMENT_SCHEMA[key] for key in STEP_KEYS})
    steps = steps.cast(key_types)
    matched = steps.select(STEP_KEYS).join(given, on=STEP_KEYS, nulls_equal=True)
    if judge is not None:
        counted = matched.filter(pl.col("judge") == judge)
    else:
        if judgments is None:
            judged_by, scorers = _indexed_judges(reader, scope)
        else:
            merged = merge_judgments(judgments)
            by_scorers = scored.select("session_id", "judge").rows()
            judged_by = [*by_scorers, *((j.session_id, judge_name(j)) for j in merged)]
            scorers = {judge for _, judge in by_scorers}
            scorers |= {judge_name(j) for j in merged if j.by_scorer}
        owners = sessions_judges(judged_by, scorers=scorers)
        owner = pl.col("session_id").replace_strict(owners, default=None, return_dtype=pl.String)
        counted = matched.filter(pl.col("judge") == owner)
    judges = counted.group_by("judge").len().sort(["len", "judge"], descending=[True, False])
    chosen = judge if judge is not None else ", ".join(judges["judge"]) or None
    mine = (
        # one row per step even where one name is a judge's id and another's model
        counted.unique(STEP_KEYS, keep="last", maintain_order=True).select(
            *STEP_KEYS, "score", "rater", pl.lit(True).alias("_judged")
        )
    )
    return (
        steps.join(mine, on=STEP_KEYS, how="left", nulls_equal=True)
        .with_columns(
            pl.col("score").is_not_null().alias("judged"),
            (pl.col("_judged").fill_null(False) & pl.col("score").is_null()).alias("unscored"),
            pl.lit(chosen, pl.String).alias("judge"),
        )
        .drop("_judged")
    )


def indexed_labels(reader: IndexReader | ParquetTables | LoadedTables) -> list[StepLabel]:
    """The people's step labels in the reader's labels table, oldest first."""
    rows = reader.conn.execute(
        f"SELECT {', '.join(LABEL_FIELDS)} FROM labels ORDER BY labelled_at, item_id, labeller"
    ).fetchall()
    return [StepLabel(**dict(zip(LABEL_FIELDS, row, strict=True))) for row in rows]


def with_people(steps: pl.DataFrame, labels: Sequence[StepLabel]) -> pl.DataFrame:
    """``steps`` (:func:`judged_steps`) with ``people``: each step's people's majority label
    (:func:`analysis.align.references`; null where none or evenly split). The labels are
    joined on the step's keys, so the cost grows with the labels, not with the steps."""
    from analysis.align import references

    majority = [
        (*parse_step_item_id(item), reference.value)
        for item, reference in references(labels).items()
        if _names_a_step(item)
    ]
    key_types = {key: steps.schema[key] for key in STEP_KEYS}
    people = pl.DataFrame(majority, schema={**key_types, "people": pl.String}, orient="row").unique(
        STEP_KEYS, keep="last"
    )
    return steps.join(people, on=STEP_KEYS, how="left", nulls_equal=True, maintain_order="left")


def _names_a_step(item: str) -> bool:
    """Whether a label item names one step (not a turn judged whole, nor a text no step's item
    id can be): only a step can match a row of the steps."""
    try:
        return parse_step_item_id(item)[2] is not None
    except ValueError:
        return False


def by_group(steps: pl.DataFrame, by: Dimension) -> tuple[pl.DataFrame, str]:
    """The steps as grouped by ``by``, and the column to group on: by tool, a step that
    called several tools stands once for each."""
    if by == "tool":
        return steps.explode("tools"), "tools"
    return steps, by


def _judged(frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The judged steps' scores and their sessions, sorted: the same figures whatever order
    the rows came in."""
    scored = frame.filter(pl.col("score").is_not_null()).sort("session_id", "score")
    return scored["score"].to_numpy().astype(float), scored["session_id"].to_numpy()


def _bounds(found: Interval | None) -> tuple[float | None, float | None]:
    return (None, None) if found is None else (found.low, found.high)


def _share(count: int, others: int) -> float | None:
    """``count`` as a share of ``count + others``; None of nothing."""
    return count / (count + others) if count + others else None


def agreement(part: pl.DataFrame, seed: int = 0) -> dict[str, int | float | None]:
    """Of the scored steps people labelled: how many, the sessions they are in, and the share
    where the judge's majority (:func:`analysis.judge.majority_label`) is the people's, with
    its 95% interval over sessions (:func:`analysis._intervals.session_bootstrap`)."""
    both = part.filter(pl.col("score").is_not_null() & pl.col("people").is_not_null())
    if not both.height:
        return {
            "labelled": 0,
            "labelled_sessions": 0,
            "agreement": None,
            "agreement_low": None,
            "agreement_high": None,
        }
    rows = both.sort("session_id", "score", "people").select("session_id", "score", "people")
    agree = np.array([majority_label(score) == people for _, score, people in rows.iter_rows()])
    sessions = rows["session_id"].to_numpy()
    low, high = _bounds(session_bootstrap(agree, sessions, seed=seed))
    return {
        "labelled": both.height,
        "labelled_sessions": rows["session_id"].n_unique(),
        "agreement": float(agree.mean()),
        "agreement_low": low,
        "agreement_high": high,
    }


def trends(steps: pl.DataFrame, by: Dimension, seed: int = 0) -> pl.DataFrame:
    """Per group of ``by``: steps, judged steps, mean TSQ and its 95% interval, whether the
    judged steps are a sample of the group's (``sampled``: some judged, scored or not, but not
    all, as ``tsq judge --sample-to`` leaves them), the split-vote share (of the scored steps), the
    unscored share (of the steps the judge tried: no valid vote), the unjudged share (of all
    steps: not scored), tool calls, tool calls per turn (of the turns its steps are in) and
    tool errors; and of the scored steps people labelled
    (``labelled``, in ``labelled_sessions``), the judge's ``agreement`` with them and its 95%
    interval. ``judged_sessions`` counts the sessions of the scored steps: intervals resample
    them (none under five). A step that called several tools counts in each tool's group."""
    grouped, column = by_group(steps, by)
    rows = []
    for (group,), part in grouped.group_by(column, maintain_order=True):
        scores, sessions = _judged(part)
        low, high = _bounds(session_bootstrap(scores, sessions, seed=seed))
        rows.append(
            {
                by: group,
                "steps": part.height,
                "judged": scores.size,
                "judged_sessions": len(set(sessions)),
                "tsq": float(scores.mean()) if scores.size else None,
                "tsq_low": low,
                "tsq_high": high,
                "sampled": 0 < scores.size + int(part["unscored"].sum()) < part.height,
                "split_share": _split_share(part),
                "unscored_share": _share(int(part["unscored"].sum()), scores.size),
                "unjudged_share": 1 - scores.size / part.height,
                "calls": int(part["calls"].sum()),
                "calls_per_turn": int(part["calls"].sum())
                / part.select("session_id", "turn_index").n_unique(),
                "errors": int(part["errors"].sum()),
                **agreement(part, seed),
            }
        )
    frame = pl.DataFrame(rows, infer_schema_length=None)
    return frame.sort(by, nulls_last=True) if frame.height else frame


def judge_in_words(steps: pl.DataFrame, scorers: Mapping[str, ScorerRecord] | None = None) -> str:
    """Whose scores ``steps`` (:func:`step_scores`) count, said so that a trained scorer is
    never taken for an LLM judge: named by :func:`analysis.judge.rater_in_words`, with its
    test agreement where ``scorers`` (the index's records) holds it."""
    judge = str(steps["judge"][0])
    raters = set(steps["rater"].drop_nulls())
    known = scorers or {}
    names = judge.split(", ")
    if all(name.startswith(CASCADE_PREFIX) for name in names):
        return ", ".join(rater_in_words(name, known) for name in names)
    if raters == {"scorer"}:
        return rater_in_words(judge, {judge: known.get(judge)}) + "; scores are its probabilities"
    if "scorer" in raters:
        named = [rater_in_words(name, known) for name in judge.split(", ") if name in known]
        return (
            f"{judge} (LLM judges, and a trained step scorer where none judged a session)"
            + "".join(f"; {words}" for words in named)
        )
    return judge


def _split_share(part: pl.DataFrame) -> float | None:
    """The share of an LLM judge's scored steps whose votes split (a trained scorer's
    probability is no vote: its steps are left out; None where none is left)."""
    voted = part.filter(pl.col("score").is_not_null() & (pl.col("rater") == "judge"))
    if not voted.height:
        return None
    return voted.select(((pl.col("score") > 0) & (pl.col("score") < 1)).mean()).item()  # type: ignore[no-any-return]


def readable_trends(table: pl.DataFrame) -> pl.DataFrame:
    """A trends table with the columns a reader needs: whether a group was sampled only when
    one was, agreement with people only where they labelled steps, and, where a figure rests
    on too few sessions for an interval, an ``interval`` column that says so."""
    columns = [table.columns[0], "steps", "judged", "judged_sessions", "tsq", "tsq_low", "tsq_high"]
    if table["sampled"].any():
        columns.append("sampled")
    columns += ["split_share", "unscored_share", "calls", "calls_per_turn", "errors"]
    labelled = bool(table["labelled"].sum())
    if labelled:
        columns += ["labelled", "agreement", "agreement_low", "agreement_high"]
    readable = table.select(columns)
    missing = pl.col("tsq").is_not_null() & pl.col("tsq_low").is_null()
    if labelled:
        missing = missing | (pl.col("agreement").is_not_null() & pl.col("agreement_low").is_null())
    if table.select(missing.any()).item():  # beside the bounds it explains
        note = pl.when(missing).then(pl.lit(TOO_FEW_SESSIONS)).otherwise(pl.lit(""))
        readable = readable.with_columns(table.select(note.alias("interval")).to_series())
        at = columns.index("tsq_high") + 1
        readable = readable.select([*columns[:at], "interval", *columns[at:]])
    return readable


class Shift(BaseModel):
    """Group ``b`` against group ``a`` of one dimension: the difference of mean TSQ, b - a."""

    by: str
    a: str
    b: str
    n_a: int
    n_b: int
    sessions_a: int
    sessions_b: int
    """The sessions of each group's scored steps: the interval resamples them."""
    tsq_a: float | None
    tsq_b: float | None
    diff: float | None
    diff_low: float | None
    diff_high: float | None
    verdict: str
    """``worse``, ``better`` or ``no measurable change``: the interval decides."""

    def in_words(self) -> str:
        if self.diff is None or self.tsq_a is None or self.tsq_b is None:
            return f"{self.by} {self.a} vs {self.b}: not enough judged steps to compare."
        head = (
            f"TSQ {self.tsq_a:.2f} ({self.n_a} steps) at {self.by} {self.a}, {self.tsq_b:.2f} "
            f"({self.n_b} steps) at {self.b}: {self.diff:+.2f}"
        )
        if self.diff_low is None or self.diff_high is None:
            return head + f" ({TOO_FEW_SESSIONS}), no measurable change."
        head += f" [{self.diff_low:+.2f}, {self.diff_high:+.2f}]"
        if self.verdict == "no measurable change":
            return head + ", no measurable change (the interval holds 0)."
        return head + f", {self.verdict}."


def shift(steps: pl.DataFrame, by: Dimension, a: str, b: str, seed: int = 0) -> Shift:
    """Two groups of ``by`` compared: the difference of their means (b - a), with its interval
    over sessions, both groups resampled by the same draw of sessions
    (:func:`analysis._intervals.session_bootstrap_difference`): ``better`` or ``worse`` only
    where it leaves out 0."""
    grouped, column = by_group(steps, by)
    values = grouped.with_columns(pl.col(column).cast(pl.String).alias("group"))
    (first, first_sessions), (second, second_sessions) = (
        _judged(values.filter(pl.col("group") == name)) for name in (a, b)
    )
    diff = low = high = None
    if first.size >= 2 and second.size >= 2:
        diff = float(second.mean() - first.mean())
        low, high = _bounds(
            session_bootstrap_difference(first, first_sessions, second, second_sessions, seed=seed)
        )
    verdict = "no measurable change"
    if low is not None and high is not None and (low > 0 or high < 0):
        verdict = "better" if low > 0 else "worse"
    return Shift(
        by=by,
        a=a,
        b=b,
        n_a=int(first.size),
        n_b=int(second.size),
        sessions_a=len(set(first_sessions)),
        sessions_b=len(set(second_sessions)),
        tsq_a=float(first.mean()) if first.size else None,
        tsq_b=float(second.mean()) if second.size else None,
        diff=diff,
        diff_low=low,
        diff_high=high,
        verdict=verdict,
    )


def moved_most(steps: pl.DataFrame, by: Dimension, a: str, b: str, top: int = 5) -> list[Shift]:
    """Per tool, its shift between ``a`` and ``b`` of ``by``: the ``top`` largest moves first
    (of the tools with two scored steps or more in each group; by name among equal moves).
    Only those are resampled for their intervals. By tool, a tool's move is the shift itself:
    none."""
    if by == "tool":
        return []
    scored = (
        steps.with_columns(pl.col(by).cast(pl.String).alias("_group"))
        .filter(pl.col("_group").is_in([a, b]) & pl.col("score").is_not_null())
        .explode("tools")
        .filter(pl.col("tools").is_not_null())
    )
    means = scored.group_by("tools", "_group").agg(pl.col("score").mean(), pl.len())
    diffs: dict[str, float] = {}
    for (tool,), part in means.filter(pl.col("len") >= 2).group_by("tools"):
        found = dict(zip(part["_group"], part["score"], strict=True))
        if a in found and b in found:
            diffs[str(tool)] = found[b] - found[a]
    chosen = sorted(sorted(diffs), key=lambda tool: -abs(diffs[tool]))[:top]
    shifts = []
    for tool in chosen:
        moved = shift(steps.filter(pl.col("tools").list.contains(tool)), by, a, b)
        shifts.append(moved.model_copy(update={"by": f"{by}, {tool} steps"}))
    return sorted(shifts, key=lambda s: -abs(s.diff or 0.0))


NO_VALUE = "—"
"""How a group without a value (a session with no agent version recorded) is labelled, in the
charts as in the report's tables."""
MIN_CHART_WIDTH, GROUP_WIDTH, MAX_CHART_WIDTH = 260, 80, 900
"""A trend chart's width in pixels: each group's share, within these bounds."""
SLANTED_CHARACTER_WIDTH = 6
"""Pixels a character of a tick label slanted at 30 degrees takes across: groups are spaced
at least this times their longest label, so that no label is left out."""


def trend_chart(frame: pl.DataFrame, by: Dimension = "week") -> alt.LayerChart:
    """Mean TSQ per group with its 95% interval: a line over weeks (each tick a week's
    Monday), points elsewhere."""
    # A group without a value (no agent version recorded) reads as the table writes it.
    frame = frame.drop_nulls("tsq").with_columns(pl.col(by).cast(pl.String).fill_null(NO_VALUE))
    data = frame.to_pandas()
    title = "mean TSQ of judged steps, 95% interval"
    flat = by == "week" and len(data) <= FLAT_WEEKS
    longest = max((len(label) for label in frame[by]), default=0)
    spacing = GROUP_WIDTH if flat else max(GROUP_WIDTH, SLANTED_CHARACTER_WIDTH * longest)
    # Every group keeps its label: slanted where the groups fit the page at that spacing,
    # upright (a line of text apart) where they do not.
    angle = 0 if flat else -30 if spacing * len(data) <= MAX_CHART_WIDTH else -90
    x = alt.X(
        f"{by}:O" if by == "week" else f"{by}:N",
        title="week (from Monday)" if by == "week" else by,
        sort=None,
        axis=alt.Axis(labelLimit=220, labelAngle=angle, labelOverlap=True),
    )
    scale = alt.Scale(domain=[0, 1])
    base = alt.Chart(data).encode(x=x)
    band = base.mark_errorbar(ticks={"size": 12}).encode(
        y=alt.Y("tsq_low:Q", title=title, scale=scale), y2="tsq_high:Q"
    )
    mark = base.mark_line(point=True) if by == "week" else base.mark_point(filled=True, size=70)
    line = mark.encode(
        y=alt.Y("tsq:Q", title=title, scale=scale),
        tooltip=[
            by,
            "judged",
            alt.Tooltip("tsq:Q", format=".2f", title="TSQ"),
            alt.Tooltip("tsq_low:Q", format=".2f", title="low (95%)"),
            alt.Tooltip("tsq_high:Q", format=".2f", title="high (95%)"),
        ],
    )
    chart: alt.LayerChart = (band + line).properties(
        title=alt.TitleParams(f"TSQ by {by}", anchor="start"),
        height=320,
        # wide enough for each group's label, however few the groups; at most a page's width
        width=min(max(MIN_CHART_WIDTH, spacing * len(data)), MAX_CHART_WIDTH),
        padding={"top": 12},
    )
    return chart
