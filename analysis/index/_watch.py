"""The downgrade watch: did tool choice get measurably worse in the newest group?

The groups of one dimension (agent version, model, week, agent) among the judged steps, put in
order (:func:`ordered_groups`), and the newest against a baseline (by default the group just
before it): the difference of mean TSQ, newest - baseline, with its interval over sessions
(:func:`analysis.index.shift`), and the tools that moved most (:func:`analysis.index.moved_most`).
A **drop** is a difference whose 95% interval lies wholly below 0 and whose size is at least
``min_drop`` (0 by default: any measurable drop). Judged by a trained step scorer, the verdict
also gives the share of the newest group's scored steps that called a tool the scorer never saw
in training (its card's ``trained_tools``): where it is large, a drop may be the scorer's, on
steps unlike those it learnt from, rather than the agent's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Literal

import polars as pl
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ValidationError

from analysis._intervals import TOO_FEW_SESSIONS
from analysis.index._trends import Shift, moved_most, shift
from analysis.models import ScorerRecord

WatchDimension = Literal["version", "model", "week", "agent"]
WATCH_DIMENSIONS: tuple[str, ...] = WatchDimension.__args__  # type: ignore[attr-defined]
NAMED_TOOLS = 3
"""The tools that moved most named in the sentence (the verdict keeps five)."""


class WatchProblem(ValueError):
    """Steps that cannot be watched (no judged step, fewer than two groups, a baseline that is
    not one of them); the message is one sentence."""


class WatchVerdict(BaseModel):
    """The newest group of ``by`` against the baseline: whether TSQ measurably dropped."""

    by: str
    judge: str | None
    """Whose scores were counted (:func:`analysis.index.step_scores`' ``judge``)."""
    groups: list[str]
    """The groups with a judged step, oldest first (:func:`ordered_groups`)."""
    baseline: str
    newest: str
    shift: Shift
    """The newest against the baseline (``a`` the baseline, ``b`` the newest): ``diff`` is
    newest - baseline, with its 95% interval over sessions."""
    moved: list[Shift]
    """The tools whose TSQ moved most between the two, largest moves first."""
    min_drop: float
    """The smallest drop that counts."""
    drop: bool
    """The newest group's TSQ is below the baseline's, the interval of the difference lies
    wholly below 0, and the drop is at least ``min_drop``."""
    unseen_tools_share: float | None
    """Of the newest group's scored steps, the share that called a tool the scorer never saw
    in training; None unless a scorer's ``trained_tools`` were given."""
    unseen_tools: list[str]
    """Those tools, sorted."""
    sentence: str
    """The verdict in one sentence."""


def _version_key(name: str) -> tuple[int, str, Version | None, str]:
    """A version number's place: ``1.0.98`` before ``1.0.108``; an agent's name before it
    (``codex 0.125.0``) keeps each agent's versions together, Claude Code's (no name) first;
    what is no version number comes after them all, by its text."""
    agent, _, number = name.rpartition(" ")
    try:
        return 0, agent, Version(number), name
    except InvalidVersion:
        return 1, "", None, name


def _week_key(name: str) -> tuple[int, date | None, str]:
    try:
        return 0, date.fromisoformat(name), name
    except ValueError:
        return 1, None, name


def ordered_groups(
    steps: pl.DataFrame,
    by: WatchDimension,
    starts: Mapping[str, datetime | None] | None = None,
) -> list[str]:
    """The groups of ``by`` among the judged steps of ``steps`` (:func:`step_scores`), oldest
    first; a step with no value of ``by`` (no version recorded) is in none. Versions go by
    version number (``1.0.98`` before ``1.0.108``; each agent's together, Claude Code's first
    then Codex's, ``codex 0.125.0``; text that is no version number after them, in text order),
    weeks by date, models and agents by the start of their latest session (``starts``: each
    session's start, :attr:`Collection.session_starts`; a session without one counts as the
    oldest; without ``starts``, the latest week a group's steps were in), then by name."""
    if by not in WATCH_DIMENSIONS:
        raise WatchProblem(
            f"steps cannot be watched by {by}: give one of {', '.join(WATCH_DIMENSIONS)}"
        )
    judged = steps.filter(pl.col("score").is_not_null() & pl.col(by).is_not_null())
    names = sorted({str(name) for name in judged[by]})
    if by == "version":
        return sorted(names, key=_version_key)
    if by == "week":
        return sorted(names, key=_week_key)
    latest: dict[str, float] = {}
    for name, session, week in judged.select(by, "session_id", "week").iter_rows():
        if starts is not None:
            when = starts.get(session)
            stamp = float("-inf") if when is None else when.timestamp()
        else:
            day = _week_key(str(week))[1] if week is not None else None
            stamp = float("-inf") if day is None else float(day.toordinal())
        latest[str(name)] = max(latest.get(str(name), stamp), stamp)
    return sorted(names, key=lambda name: (latest[name], name))


def trained_tools_of(judge: str | None, scorers: Mapping[str, ScorerRecord]) -> list[str] | None:
    """The tools the trained step scorer ``judge`` was trained on (its card's
    ``trained_tools``), read from the folder the index recorded it in (``scorers``:
    :attr:`Collection.scorers`); None where ``judge`` is no scorer the index knows, or its card
    is gone, cannot be read or lists none."""
    from analysis.scorer import CARD_FILE, ScorerCard

    record = scorers.get(judge) if judge is not None else None
    if record is None or record.folder is None:
        return None
    try:
        card = ScorerCard.model_validate_json((Path(record.folder) / CARD_FILE).read_bytes())
    except (OSError, ValidationError):
        return None
    return card.trained_tools or None


def _unseen(
    steps: pl.DataFrame, by: str, newest: str, trained_tools: Sequence[str]
) -> tuple[float | None, list[str]]:
    """Of the newest group's scored steps, the share that called a tool not among
    ``trained_tools``, and those tools."""
    known = set(trained_tools)
    scored = steps.filter(pl.col("score").is_not_null() & (pl.col(by).cast(pl.String) == newest))
    calls: list[list[str]] = [tools or [] for tools in scored["tools"].to_list()]
    if not calls:
        return None, []
    unseen = sorted({tool for tools in calls for tool in tools if tool not in known})
    share = sum(any(tool not in known for tool in tools) for tools in calls) / len(calls)
    return share, unseen


def _difference(moved: Shift) -> str:
    """The difference (newest - baseline) with its interval, in words."""
    said = f"difference {moved.diff:+.2f}"
    if moved.diff_low is None or moved.diff_high is None:
        return f"{said}, {TOO_FEW_SESSIONS}"
    return f"{said}, 95% interval [{moved.diff_low:+.2f}, {moved.diff_high:+.2f}] over sessions"


def _sentence(verdict: WatchVerdict) -> str:
    moved, by = verdict.shift, verdict.by
    head = f"{by.capitalize()} {verdict.newest} against {verdict.baseline}"
    if verdict.unseen_tools_share is None:
        unseen = ""
    else:
        tools = ", ".join(verdict.unseen_tools)
        unseen = (
            f"; {verdict.unseen_tools_share:.0%} of the {moved.n_b:,} scored steps at "
            f"{verdict.newest} called a tool the scorer never saw in training"
            + (f" ({tools})" if tools else "")
        )
    if moved.diff is None or moved.tsq_a is None or moved.tsq_b is None:
        figures = (
            f"too few judged steps to compare: {moved.n_b} at {moved.b}, {moved.n_a} at {moved.a}"
        )
    else:
        figures = f"TSQ {moved.tsq_b:.2f} against {moved.tsq_a:.2f}; {_difference(moved)}"
    if (
        verdict.drop
        and moved.diff is not None
        and moved.tsq_a is not None
        and moved.tsq_b is not None
    ):
        tools = ", ".join(
            f"{tool.by.rsplit(', ', 1)[-1].removesuffix(' steps')} {tool.diff:+.2f}"
            for tool in verdict.moved[:NAMED_TOOLS]
            if tool.diff is not None
        )
        return (
            f"{head}: TSQ dropped by {-moved.diff:.2f}, from {moved.tsq_a:.2f} to "
            f"{moved.tsq_b:.2f} ({_difference(moved)})"
            + (f"; the tools that moved most: {tools}" if tools else "")
            + f"{unseen}."
        )
    at_least = f" of at least {verdict.min_drop:g}" if verdict.min_drop > 0 else ""
    return f"{head}: no measurable drop{at_least} ({figures}){unseen}."


def watch(
    steps: pl.DataFrame,
    by: WatchDimension,
    baseline: str | None = None,
    min_drop: float = 0.0,
    *,
    starts: Mapping[str, datetime | None] | None = None,
    trained_tools: Sequence[str] | None = None,
    seed: int = 0,
) -> WatchVerdict:
    """The newest group of ``by`` (:func:`ordered_groups`) against ``baseline`` (by default
    the group just before it): a drop where the newest's TSQ is below, the 95% interval of
    the difference (newest - baseline, :func:`shift`) lies wholly below 0, and the drop is at
    least ``min_drop``. With ``trained_tools`` (a scorer's card's, the scorer being the
    judge), the share of the newest group's scored steps that called a tool not among them.
    Raises :class:`WatchProblem` where no step was judged, fewer than two groups have judged
    steps, or ``baseline`` is not one of them or is the newest itself."""
    if min_drop < 0:
        raise WatchProblem(f"the smallest drop that counts cannot be negative ({min_drop:g})")
    if not steps.height or not steps["judged"].any():
        raise WatchProblem("no step was judged (by that judge): run tsq judge or tsq score")
    groups = ordered_groups(steps, by, starts)
    plural = f"{by}s" if len(groups) != 1 else by
    if len(groups) < 2:
        listed = f" ({groups[0]})" if groups else ""
        raise WatchProblem(
            f"the judged steps are of {len(groups)} {plural}{listed}: a watch needs two"
        )
    newest = groups[-1]
    if baseline is None:
        baseline = groups[-2]
    elif baseline not in groups:
        raise WatchProblem(
            f"no {by} {baseline} among the judged steps ({plural}: {', '.join(groups)})"
        )
    elif baseline == newest:
        raise WatchProblem(
            f"the baseline {baseline} is the newest {by} itself: name an earlier one"
        )
    compared = shift(steps, by, baseline, newest, seed=seed)
    dropped = (
        compared.diff is not None
        and compared.diff < 0
        and compared.diff_high is not None
        and compared.diff_high < 0
        and -compared.diff >= min_drop
    )
    share, unseen = (
        (None, []) if trained_tools is None else _unseen(steps, by, newest, trained_tools)
    )
    verdict = WatchVerdict(
        by=by,
        judge=str(steps["judge"][0]) if steps["judge"][0] is not None else None,
        groups=groups,
        baseline=baseline,
        newest=newest,
        shift=compared,
        moved=moved_most(steps, by, baseline, newest),
        min_drop=min_drop,
        drop=dropped,
        unseen_tools_share=share,
        unseen_tools=unseen,
        sentence="",
    )
    return verdict.model_copy(update={"sentence": _sentence(verdict)})
