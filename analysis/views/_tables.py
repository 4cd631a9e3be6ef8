"""Tables the workbench shows: sessions with their scores and findings, and turns of a session.

Scores come from judgments of one condition (``full`` by default: what a properly fed judge
said). A step's TSQ is its vote fraction; a turn's is the mean of its judged steps (a
turn-level judgment, from ``--unit turn`` or an older file, is the turn's score as it is);
a session's is the mean of its turns. :func:`turn_scores` is that rule, once. Everything is
built with polars joins and aggregations, no per-row Python in the render path, so thousands
of sessions stay quick.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import polars as pl

from analysis._scores import judgments_frame as judgments_frame, turn_scores as turn_scores
from analysis.findings import Finding, findings_for_condition
from analysis.models import (
    CORRECT,
    INCORRECT,
    MAJORITY,
    Condition,
    Judgment,
    Session,
    Step,
    Turn,
    verdict_of,
)
from analysis.render import find_step, turn_steps
from analysis.views._frames import sessions_frame, turns_frame

FINDING_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "session_id": pl.String,
    "turn_index": pl.Int64,
    "step_index": pl.Int64,
    "parent_call_id": pl.String,
    "code": pl.String,
    "severity": pl.String,
    "message": pl.String,
    "condition": pl.String,
}


def findings_frame(findings: Sequence[Finding]) -> pl.DataFrame:
    return pl.DataFrame([f.model_dump() for f in findings], schema=FINDING_SCHEMA)


def with_verdict_kind(scores: pl.DataFrame) -> pl.DataFrame:
    """Add ``verdict_kind`` and a ``votes_label`` in words, to step rows or turn rows.

    The verdicts of :func:`analysis.models.verdict_of` — correct, incorrect, split (judges
    disagreed on a step: "2 of 3 judges"), unscored — and for a turn whose steps were each
    decided unanimously but not alike, ``mixed`` ("4 steps, worst 0.0 at step 2"). A turn of
    one judged step is labelled by its votes, one of several steps by its steps ("all 4 steps
    judged correct"). A trained scorer's rows (``rater`` ``scorer``) are decided by their
    probability's majority label ("scorer: probability 0.93"); a turn of several such steps is
    ``mixed``, labelled by its steps.
    """
    scorer = pl.col("rater") == "scorer"
    if "steps" not in scores.columns:  # step rows, or turn-level judgments
        scores = scores.with_columns(
            pl.lit(0, pl.Int64).alias("steps"),
            (pl.col("score").is_between(0, 1, closed="none") & ~scorer)
            .cast(pl.Int64)
            .alias("split_steps"),
            pl.lit(None, pl.Int64).alias("worst_step_index"),
            pl.lit(None, pl.String).alias("worst_step_parent_call_id"),
            pl.lit(None, pl.Float64).alias("worst_step_score"),
        )
    kind = pl.col("verdict_kind")
    verdict = pl.col("score").map_elements(verdict_of, return_dtype=pl.String, skip_nulls=False)
    by_probability = (
        pl.when(pl.col("score") >= MAJORITY).then(pl.lit(CORRECT)).otherwise(pl.lit(INCORRECT))
    )
    return scores.with_columns(
        pl.when(scorer & pl.col("score").is_not_null() & (pl.col("steps") <= 1))
        .then(by_probability)
        .when(scorer & pl.col("score").is_not_null())
        .then(pl.lit("mixed"))
        .when((verdict == "split") & (pl.col("split_steps") == 0))
        .then(pl.lit("mixed"))  # each step decided alike, the steps not all the same
        .otherwise(verdict)
        .alias("verdict_kind"),
    ).with_columns(
        pl.when((pl.col("steps") > 1) & (kind == CORRECT))
        .then(pl.format("all {} steps judged correct", pl.col("steps")))
        .when((pl.col("steps") > 1) & (kind == INCORRECT))
        .then(pl.format("all {} steps judged incorrect", pl.col("steps")))
        .when(pl.col("steps") > 1)
        .then(
            pl.format(
                "{} steps, worst {} at step {}{}",
                pl.col("steps"),
                pl.col("worst_step_score").round(2),
                pl.col("worst_step_index"),
                pl.when(pl.col("worst_step_parent_call_id").is_null())
                .then(pl.lit(""))
                .otherwise(pl.lit(" of a subagent")),
            )
        )
        .when(pl.col("n_valid") > 0)
        .then(pl.format("{} of {} judges", pl.col("n_correct"), pl.col("n_valid")))
        .when(scorer & pl.col("score").is_not_null())
        .then(pl.format("scorer: probability {}", pl.col("score").round(2)))
        .otherwise(pl.lit("no valid vote"))
        .alias("votes_label"),
    )


def turn_verdicts(judgments: Sequence[Judgment], condition: str) -> pl.DataFrame:
    """Each judged turn's TSQ under ``condition`` (:func:`turn_scores`), with its verdict."""
    return with_verdict_kind(turn_scores(judgments).filter(pl.col("condition") == condition))


NAME_CHARS = 60
"""A session's ``name`` keeps this many characters of its title or first ask."""
_LABEL_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "session_id": pl.String,
    "first_ask": pl.String,
    "cwd": pl.String,
    "started": pl.Datetime("us", "UTC"),
}


def session_labels(sessions: Sequence[Session]) -> pl.DataFrame:
    """What makes a session recognisable: its first ask, its folder and when it started."""
    rows = [
        {
            "session_id": session.session_id,
            "first_ask": next((turn.ask for turn in session.turns if turn.ask.strip()), None),
            "cwd": session.cwd,
            "started": session.turns[0].timestamp if session.turns else None,
        }
        for session in sessions
    ]
    return pl.DataFrame(rows, schema=_LABEL_SCHEMA)


def _shortened(text: pl.Expr, limit: int = NAME_CHARS) -> pl.Expr:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis when longer."""
    flat = text.str.replace_all(r"\s+", " ").str.strip_chars()
    cut = flat.str.slice(0, limit - 1).str.strip_chars_end() + pl.lit("…")
    return pl.when(flat.str.len_chars() > limit).then(cut).otherwise(flat)


_UUID_LIKE = re.compile(r"[0-9a-f]{8}-[0-9a-f-]{27}", re.IGNORECASE)


def short_ids(session_ids: Sequence[str]) -> dict[str, str]:
    """A UUID's first eight characters (and its last four, when another UUID shares those
    eight); any other id as it is."""
    heads: dict[str, int] = {}
    for sid in session_ids:
        heads[sid[:8]] = heads.get(sid[:8], 0) + 1
    short = {}
    for sid in session_ids:
        if not _UUID_LIKE.fullmatch(sid):
            short[sid] = sid
        else:
            short[sid] = sid[:8] if heads[sid[:8]] == 1 else f"{sid[:8]}…{sid[-4:]}"
    return short


def _name(title: pl.Expr, first_ask: pl.Expr) -> pl.Expr:
    """A session's name: its title, else its first ask, on one line and shortened."""
    return _shortened(pl.coalesce(pl.when(title.str.strip_chars() != "").then(title), first_ask))


def session_names_of(frame: pl.DataFrame) -> dict[str, str]:
    """Each session's readable name, from its ``session_id``, ``title`` and ``first_ask``: the
    overview's name in quotes and its short id (:func:`short_ids`), e.g. ``“Where is the retry
    logic…” (5eed0000…0002)``; the short id alone when it has neither. Plain text: escape it
    for HTML or Markdown."""
    ids = short_ids(frame["session_id"].to_list())
    named = frame.select("session_id", _name(pl.col("title"), pl.col("first_ask")).alias("name"))
    return {sid: f"“{name}” ({ids[sid]})" if name else ids[sid] for sid, name in named.iter_rows()}


SEARCHED = ("name", "first_ask", "project", "session_id")
"""The overview's columns a search looks in."""


def matches_words(search: str) -> pl.Expr:
    """Overview rows holding every word of ``search`` (any case) in their name, first ask,
    project or id."""
    words = search.lower().split()
    text = pl.concat_str(
        [pl.col(c).fill_null("") for c in SEARCHED], separator=" "
    ).str.to_lowercase()
    return pl.all_horizontal([text.str.contains(word, literal=True) for word in words])


def session_overview(
    sessions: Sequence[Session],
    judgments: Sequence[Judgment],
    findings: Sequence[Finding],
    condition: Condition = "full",
) -> pl.DataFrame:
    """One row per session: what it is, size, mean TSQ, split-vote and unscored turns, findings
    (:func:`overview_of`, from the sessions themselves)."""
    base = sessions_frame(sessions).select(*OVERVIEW_BASE)
    return overview_of(
        base, session_labels(sessions), judgments, findings_frame(findings), condition
    )


SCORE_COLUMNS = ("mean_tsq", "judged_turns", "split_turns", "unscored_turns", "errors", "warnings")
"""The overview's columns people sort by, shown first after the session's name (the Overview
page, the report's sessions table)."""

OVERVIEW_BASE = (
    "session_id",
    "format",
    "title",
    "turns",
    "tool_calls",
    "subagent_tool_calls",
    "source",
)
"""What :func:`overview_of` needs of each session besides its labels."""


def overview_of(
    base: pl.DataFrame,
    labels: pl.DataFrame,
    judgments: Sequence[Judgment],
    findings: pl.DataFrame,
    condition: Condition = "full",
) -> pl.DataFrame:
    """The overview's rule, whether the sessions were loaded or read from the index:
    ``base`` has the :data:`OVERVIEW_BASE` columns, ``labels`` each session's first ask, cwd
    and start, ``findings`` is a :func:`findings_frame`.

    ``name`` is the session's title, else its first ask, on one line and shortened;
    ``first_ask`` is that ask in full; ``project`` the last part of its working folder;
    ``started`` its first turn's time. Findings are counted by severity, those about the input
    and those about judgments of ``condition`` (an ablation's other conditions have their own).
    Scored sessions come first, then by start time; ``session_id`` is the last column.
    """
    folder = pl.col("cwd").str.replace_all("\\", "/", literal=True).str.strip_chars_end("/")
    labels = labels.select(
        "session_id",
        "first_ask",
        folder.str.split("/").list.last().replace("", None).alias("project"),
        "started",
    )
    scores = turn_verdicts(judgments, condition)
    per_session = scores.group_by("session_id").agg(
        pl.col("score").mean().alias("mean_tsq"),
        (pl.col("verdict_kind") == "split").sum().alias("split_turns"),
        (pl.col("verdict_kind") == "unscored").sum().alias("unscored_turns"),
        pl.len().alias("judged_turns"),
    )
    # The findings of the condition shown (and those about the input): a count in the list is
    # of what the Turn page it leads to shows under that condition.
    shown = pl.col("condition").is_null() | (pl.col("condition") == condition)
    severities = (
        findings.filter(shown)
        .group_by("session_id")
        .agg(
            (pl.col("severity") == "error").sum().alias("errors"),
            (pl.col("severity") == "warning").sum().alias("warnings"),
            (pl.col("severity") == "info").sum().alias("infos"),
        )
    )
    counts = ["split_turns", "unscored_turns", "judged_turns", "errors", "warnings", "infos"]
    return (
        base.join(labels, on="session_id", how="left")
        .join(per_session, on="session_id", how="left")
        .join(severities, on="session_id", how="left")
        .with_columns(
            pl.col(counts).fill_null(0).cast(pl.Int64),
            _name(pl.col("title"), pl.col("first_ask")).alias("name"),
        )
        .sort(pl.col("mean_tsq").is_null(), "started", "session_id", nulls_last=True)
        .select(
            "name",
            "first_ask",
            "project",
            "started",
            pl.exclude("name", "first_ask", "project", "started", "session_id"),
            "session_id",
        )
    )


def turn_table(
    session: Session,
    judgments: Sequence[Judgment],
    findings: Sequence[Finding],
    condition: Condition = "full",
) -> pl.DataFrame:
    """One row per turn of ``session``: the ask, chosen tools, score, vote split, findings.

    ``worst_step`` names the lowest-scoring step in words ("step 12", "step 0 of the subagent
    of call …"). ``findings`` lists each code once: findings about the input and about
    judgments made under ``condition`` (see ``findings_for_condition``).
    """
    turns = turns_frame([session]).select("turn_index", "ask", "tools", "tool_calls")
    scores = (
        turn_verdicts(judgments, condition)
        .filter(pl.col("session_id") == session.session_id)
        .select(
            "turn_index",
            "score",
            "verdict_kind",
            "votes_label",
            "n_valid",
            "n_correct",
            "steps",
            "worst_step_index",
            "worst_step_parent_call_id",
            "worst_step_score",
            pl.concat_str(
                pl.format("step {}", "worst_step_index"),
                pl.format(" of the subagent of call {}", "worst_step_parent_call_id").fill_null(""),
            ).alias("worst_step"),
        )
    )
    codes = (
        findings_frame(findings_for_condition(findings, condition))
        .filter((pl.col("session_id") == session.session_id) & pl.col("turn_index").is_not_null())
        .group_by("turn_index", maintain_order=True)
        .agg(pl.col("code").unique(maintain_order=True).alias("findings"))
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


STEP_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "turn_index": pl.Int64,
    "step_index": pl.Int64,
    "parent_call_id": pl.String,
    "message_id": pl.String,
    "tools": pl.List(pl.String),
    "calls": pl.Int64,
    "always_listed": pl.Boolean,
}
STEP_KEYS = ["turn_index", "step_index", "parent_call_id"]


def _responses_frame(session: Session) -> pl.DataFrame:
    """Every response of the session that could be judged, in order; ``always_listed`` marks
    the main agent's tool-calling steps (a subagent's steps follow the step that spawned it)."""
    rows = [
        {
            "turn_index": turn.index,
            "step_index": step.index,
            "parent_call_id": step.parent_call_id,
            "message_id": step.message_id,
            "tools": list(dict.fromkeys(call.name for call in step.message.tool_calls)),
            "calls": len(step.message.tool_calls),
            "always_listed": step.parent_call is None and step.calls_tools,
        }
        for turn in session.turns
        for step in turn_steps(turn, text_steps=True, subagents=True)
    ]
    return pl.DataFrame(rows, schema=STEP_SCHEMA)


def step_table(
    session: Session,
    judgments: Sequence[Judgment],
    findings: Sequence[Finding],
    condition: Condition = "full",
) -> pl.DataFrame:
    """One row per step of ``session``, in order: the main agent's tool-calling steps, plus
    any other step judged under ``condition`` (a subagent's, or a text-only response).

    ``position`` numbers the rows across the session; ``score`` is the step's TSQ,
    ``votes_label`` says "2 of 3 judges said correct" (``verdict_kind`` "not judged" when
    there is no judgment), ``turn_score`` is its turn's TSQ (:func:`turn_scores`), and
    ``findings`` lists the codes of the findings about this very step under ``condition``.
    """
    mine = (pl.col("session_id") == session.session_id) & (pl.col("condition") == condition)
    judged = judgments_frame(judgments).filter(mine & pl.col("step_index").is_not_null())
    scores = with_verdict_kind(judged).select(
        *STEP_KEYS,
        "score",
        "verdict_kind",
        pl.when(pl.col("n_valid") > 0)
        .then(pl.format("{} of {} judges said correct", "n_correct", "n_valid"))
        .otherwise(pl.col("votes_label"))
        .alias("votes_label"),
        "n_valid",
        "n_correct",
    )
    turn_means = (
        turn_scores(judgments)
        .filter(mine)
        .select("turn_index", pl.col("score").alias("turn_score"))
    )
    codes = (
        findings_frame(findings_for_condition(findings, condition))
        .filter((pl.col("session_id") == session.session_id) & pl.col("step_index").is_not_null())
        .group_by(STEP_KEYS, maintain_order=True)
        .agg(pl.col("code").alias("findings"))
    )
    return (
        _responses_frame(session)
        .join(scores, on=STEP_KEYS, how="left", nulls_equal=True)
        .filter(pl.col("always_listed") | pl.col("verdict_kind").is_not_null())
        .join(turn_means, on="turn_index", how="left")
        .join(codes, on=STEP_KEYS, how="left", nulls_equal=True)
        .with_columns(
            pl.col("verdict_kind", "votes_label").fill_null("not judged"),
            pl.col("findings").fill_null([]),
        )
        .drop("always_listed")
        .with_row_index("position")
        .with_columns(pl.col("position").cast(pl.Int64))
    )


def judgment_of(
    judgments: Sequence[Judgment],
    session_id: str,
    turn_index: int,
    condition: str,
    step_index: int | None = None,
    parent_call_id: str | None = None,
) -> Judgment | None:
    """The judgment of one step under ``condition``; ``step_index`` None: the turn-level one.
    ``judgments`` are one judge's (:func:`analysis.judge.of_judge`)."""
    key = (session_id, turn_index, step_index, parent_call_id, condition)
    return next((j for j in judgments if j.key[:5] == key), None)


def step_to_open(
    turn: Turn, steps: pl.DataFrame, step: str | None, call: str | None
) -> tuple[Step | None, str | None]:
    """The step a link names (``?step=12``; ``&call=<id>`` for a subagent's), or else the
    turn's worst-scoring step in ``steps`` (its rows of :func:`step_table`), else its first.

    Also returns a one-line problem when the link names no step of this turn (then the
    default step is opened).
    """
    problem = None
    if step is not None or call is not None:
        wanted = step if step is not None else "0"
        found = find_step(turn, int(wanted), call) if wanted.isdecimal() else None
        if found is not None:
            return found, None
        problem = _missing_step(turn, wanted, call)
    ranked = steps.sort(pl.col("score"), pl.col("position"), nulls_last=True)
    if ranked.is_empty():
        return None, problem
    first = ranked.row(0, named=True)
    return find_step(turn, first["step_index"], first["parent_call_id"]), problem


def _missing_step(turn: Turn, step: str, call: str | None) -> str:
    if not step.isdecimal():
        return f"'{step}' is not a step number: steps are numbered 0, 1, 2… in their turn."
    if not turn.messages:
        return f"Turn {turn.index} has no model response, so it has no step {step}."
    if call is not None:
        return f"Turn {turn.index} has no subagent step {step} under call {call}."
    return (
        f"Turn {turn.index} has no step {step}: "
        f"its responses are numbered 0 to {len(turn.messages) - 1}."
    )


def ablation_table(judgments: Sequence[Judgment], by_session: bool = True) -> pl.DataFrame:
    """Mean TSQ per session and condition: the seed's story in one table.

    ``by_session=False`` pools every judged turn: one row per condition, ``session_id``
    "all sessions".
    """
    frame = turn_scores(judgments)
    if not by_session:
        frame = frame.with_columns(pl.lit("all sessions").alias("session_id"))
    return (
        frame.group_by("session_id", "condition")
        .agg(pl.col("score").mean().alias("mean_tsq"), pl.len().alias("turns"))
        .sort("session_id", "condition")
    )


def turn_gaps(session: Session, steps: pl.DataFrame) -> pl.DataFrame:
    """The turns of ``session`` with no row in ``steps`` (a ``/compact``, an answer without a
    tool call), where they fall between the steps: ``at`` is the position between the last
    step before them and the next, ``label`` names them ("turn 3: no step", "turns 4 to 6: no
    step"), ``asks`` their asks. Consecutive turns without steps make one gap."""
    ends: dict[int, float] = {}
    for turn_index, position in steps.select("turn_index", "position").iter_rows():
        ends[turn_index] = max(ends.get(turn_index, position), position)
    last = min(steps["position"].to_list() or [0]) - 0.5
    gaps: list[tuple[float, int, int, list[str]]] = []  # at, first and last turn, asks
    for turn in session.turns:
        if turn.index in ends:
            last = ends[turn.index] + 0.5
            continue
        ask = " ".join(turn.ask.split())[:NAME_CHARS] or "(no ask)"
        if gaps and gaps[-1][0] == last and gaps[-1][2] == turn.index - 1:
            at, first, _, asks = gaps[-1]
            gaps[-1] = (at, first, turn.index, [*asks, ask])
        else:
            gaps.append((last, turn.index, turn.index, [ask]))
    return pl.DataFrame(
        [
            (
                first,
                at,
                f"turn {first}: no step" if first == end else f"turns {first} to {end}: no step",
                "; ".join(asks),
            )
            for at, first, end, asks in gaps
        ],
        schema={"turn_index": pl.Int64, "at": pl.Float64, "label": pl.String, "asks": pl.String},
        orient="row",
    )
