"""How figures read in text: shares with one decimal, kappas with three, intervals after their
estimate. The CLI and the app's tables say a figure the same way."""

from __future__ import annotations

from analysis._intervals import MIN_SESSIONS, TOO_FEW_SESSIONS


def counted(count: int, one: str, many: str | None = None) -> str:
    """``1 issue``, ``2 issues``, ``1,094 steps``: a count and its noun, agreeing in number."""
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


def share(value: float | None, missing: str = "n/a") -> str:
    return missing if value is None else f"{value:.1%}"


def number(value: float | None, missing: str = "n/a") -> str:
    return missing if value is None else f"{value:.3f}"


def interval(
    bounds: tuple[float, float] | None,
    percent: bool = False,
    missing: str = "n/a",
    sessions: int | None = None,
) -> str:
    """`` [low, high]`` after an estimate, as shares or as numbers; without bounds nothing, or,
    for a figure over ``sessions`` sessions that are too few for one, :func:`no_interval`."""
    if bounds is None:
        return no_interval(sessions)
    low, high = (share(b, missing) if percent else number(b, missing) for b in bounds)
    return f" [{low}, {high}]"


def no_interval(sessions: int | None) -> str:
    """`` (too few sessions for an interval)`` after an estimate over fewer sessions than an
    interval needs (:data:`analysis._intervals.MIN_SESSIONS`); else nothing."""
    if sessions is not None and sessions < MIN_SESSIONS:
        return f" ({TOO_FEW_SESSIONS})"
    return ""


HEADERS = {
    "session_id": "session id",
    "tool_calls": "tool calls",
    "judged_turns": "judged turns",
    "mean_tsq": "mean TSQ",
    "split_turns": "split-vote turns",
    "unscored_turns": "unscored turns",
    "judged": "scored steps",
    "judged_sessions": "scored sessions",
    "tsq": "TSQ",
    "tsq_low": "TSQ low (95%)",
    "tsq_high": "TSQ high (95%)",
    "steps_scored": "scored steps",
    "split_share": "split votes",
    "unscored_share": "unscored",
    "unjudged_share": "not judged",
    "labelled": "labelled by people",
    "agreement": "agreement",
    "agreement_low": "agreement low (95%)",
    "agreement_high": "agreement high (95%)",
    "turn_index": "turn",
    "step_index": "step",
    "parent_call_id": "subagent of call",
    "score": "TSQ",
    "votes_label": "votes",
    "for_correct": "argument for",
    "for_incorrect": "argument against",
    "n": "items",
    "kappa_low": "kappa low (95%)",
    "kappa_high": "kappa high (95%)",
    "ai": "AI",
    "ai_share": "AI share",
    "version": "agent version",
}
"""Column headings in words, for the tables people read (the report, the pages); a column not
named here is its name with spaces for underscores."""

PERCENT_COLUMNS = frozenset(
    {
        "split_share",
        "unscored_share",
        "unjudged_share",
        "agreement",
        "agreement_low",
        "agreement_high",
        "ai_share",
        "human_share",
        "followed_share",
        "before",
        "after",
        "change",
        "chairman_vs_majority",
    }
)
"""Columns of shares (0 to 1) in every table people read, written as percentages with one
decimal (:func:`share`); other fractions get two decimals."""


def cell(column: str, value: float) -> str:
    """A number of a table as people read it: a share as a percentage, a fraction with two
    decimals, a count with thousands separated."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return share(value) if column in PERCENT_COLUMNS else f"{value:.2f}"
