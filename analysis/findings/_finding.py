"""What a finding is: a stable code, a severity, a plain message, and what it is about (a step,
a turn, every turn, or the session); and how findings are chosen and ordered for one score."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple, get_args

from pydantic import BaseModel

from analysis.models import Condition, Session, Turn

Severity = Literal["error", "warning", "info"]
Scope = Literal["step", "turn", "every turn", "session"]
_SPECIFICITY = {scope: rank for rank, scope in enumerate(get_args(Scope))}
"""Most specific first: a finding about the step itself, then its turn, then its session."""
SEVERITIES: tuple[Severity, ...] = get_args(Severity)
"""Most severe first."""
SEVERITY_ORDER: dict[str, int] = {severity: rank for rank, severity in enumerate(SEVERITIES)}
CODES = (
    "NO_CATALOG",
    "SINGLE_TOOL_CATALOG",
    "CALLED_TOOL_NOT_IN_CATALOG",
    "MISSING_DESCRIPTIONS",
    "CALL_NOT_RENDERED",
    "CONTEXT_DEPENDENT_ASK",
    "RETROACTIVE_CATALOG",
    "USED_TOOLS_MISSING_FROM_CATALOG",
    "SPLIT_VOTE",
    "DISCARDED_VOTES",
    "UNSCORED",
    "UNIFORM_SESSION_SCORES",
    "SELF_PREFERENCE",
)
INPUT_CODES = frozenset({"NO_CATALOG", "RETROACTIVE_CATALOG"})
"""Findings about the input as a platform receiving the trace would see it; the others are
about what the workbench's judge saw."""
CATALOG_CODES = frozenset(
    {"NO_CATALOG", "SINGLE_TOOL_CATALOG", "MISSING_DESCRIPTIONS", "RETROACTIVE_CATALOG"}
)
"""Findings about the catalog a turn had; one that every turn of a session has is reported
once, for the session (``turn_index`` None), and is then about every turn."""


class Finding(BaseModel):
    session_id: str
    turn_index: int | None
    step_index: int | None = None
    parent_call_id: str | None = None
    """A subagent's step: the call that spawned the subagent."""
    code: str
    severity: Severity
    message: str
    condition: Condition | None = None
    """The judge condition of the judgment a finding is about; None for the input itself."""


class Draft(NamedTuple):
    """A finding before it is placed on a session, turn or step."""

    code: str
    severity: Severity
    message: str
    condition: Condition | None = None
    """The judge condition of the judgment it is about; None: about the input."""


def placed(
    session: Session,
    turn: Turn | None,
    draft: Draft,
    step_index: int | None = None,
    parent_call_id: str | None = None,
) -> Finding:
    code, severity, message, condition = draft
    return Finding(
        session_id=session.session_id,
        turn_index=turn.index if turn is not None else None,
        step_index=step_index,
        parent_call_id=parent_call_id,
        code=code,
        severity=severity,
        message=message,
        condition=condition,
    )


def finding_scope(finding: Finding) -> Scope:
    """What a finding is about; ``every turn``: a turn finding the session reported once."""
    if finding.step_index is not None:
        return "step"
    if finding.turn_index is not None:
        return "turn"
    return "every turn" if finding.code in CATALOG_CODES else "session"


def by_severity(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: SEVERITY_ORDER[f.severity])


def is_about_input(finding: Finding) -> bool:
    """A finding about the input as a platform receiving the trace would see it, rather than
    about what the workbench's judge saw."""
    return finding.code in INPUT_CODES


def most_telling_first(findings: Iterable[Finding]) -> list[Finding]:
    """What the judge saw before what the input lacks; then most serious first; among equals,
    the most specific (a step's, a turn's, a session's)."""
    return sorted(
        findings,
        key=lambda f: (
            is_about_input(f),
            SEVERITY_ORDER[f.severity],
            _SPECIFICITY[finding_scope(f)],
        ),
    )


def findings_for_condition(findings: Iterable[Finding], condition: str) -> list[Finding]:
    """Findings about the input plus those about judgments made under ``condition``."""
    return [f for f in findings if f.condition in (None, condition)]


def findings_for_turn(
    findings: Iterable[Finding], session_id: str, turn_index: int, condition: str
) -> list[Finding]:
    """What ``why_this_score`` needs about one turn judged under ``condition``: the turn's and
    its steps' findings, and the session's; in the order of :func:`findings_for_step`."""
    return most_telling_first(
        findings_for_condition(
            (
                f
                for f in findings
                if f.session_id == session_id and f.turn_index in (turn_index, None)
            ),
            condition,
        )
    )


def findings_for_step(
    findings: Iterable[Finding],
    session_id: str,
    turn_index: int,
    step_index: int,
    condition: str,
    parent_call_id: str | None = None,
) -> list[Finding]:
    """What ``why_this_score`` needs about one step judged under ``condition``: the step's
    findings, its turn's findings about the input, and the session's (those that hold for
    every turn, and those about its judgments: every turn alike, a judge of the agent's own
    family); most serious first, and among equals the most specific (the step's, its turn's,
    the session's).
    """

    def about_step(f: Finding) -> bool:
        scope = finding_scope(f)
        if scope == "step":
            return (f.turn_index, f.step_index, f.parent_call_id) == (
                turn_index,
                step_index,
                parent_call_id,
            )
        if scope == "turn":
            return f.turn_index == turn_index and f.condition is None
        return True  # the session's

    return most_telling_first(
        findings_for_condition(
            (f for f in findings if f.session_id == session_id and about_step(f)), condition
        )
    )
