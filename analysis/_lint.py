"""Diagnostics: why did this turn score what it scored?

Each finding has a stable code, a severity and a plain explanation. Catalog findings describe
the input as given — what a platform receiving that trace would see — so a plain GenAI trace
without tool definitions gets ``NO_CATALOG`` even though the workbench itself would judge it
against the baseline.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel

from ._models import Session, Turn, TurnJudgment
from ._render import CONDITIONS as JUDGE_CONDITIONS
from ._render import RenderOptions, turn_summary

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}
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
)
_REFERENTIAL = re.compile(
    r"^\s*(yes|yeah|yep|ok(ay)?|sure|no|go( ahead)?|do (it|that|this|so)|continue|again|same|"
    r"that|this|those|these|the (above|first|second|last)|#?\d+)\b|#\d+",
    re.I,
)
_SHORT_ASK_WORDS = 4


class Finding(BaseModel):
    session_id: str
    turn_index: int | None
    code: str
    severity: Severity
    message: str


def _finding(
    session: Session, turn: Turn | None, code: str, severity: Severity, message: str
) -> Finding:
    return Finding(
        session_id=session.session_id,
        turn_index=turn.index if turn is not None else None,
        code=code,
        severity=severity,
        message=message,
    )


def is_context_dependent(ask: str) -> bool:
    """A short or referential ask ("yes do #1") that cannot be judged on its own."""
    return len(ask.split()) <= _SHORT_ASK_WORDS or bool(_REFERENTIAL.search(ask))


def _catalog_findings(session: Session, turn: Turn) -> Iterable[Finding]:
    catalog = session.catalog_for(turn)
    called = list(dict.fromkeys(call.name for call in turn.tool_calls()))
    if catalog is None:
        yield _finding(
            session,
            turn,
            "NO_CATALOG",
            "error",
            "The input carries no tool catalog: a judge reading this trace sees only the tool "
            "that was called, so every choice looks right and a 1.0 means nothing.",
        )
        return
    if len(catalog.tools) == 1:
        yield _finding(
            session,
            turn,
            "SINGLE_TOOL_CATALOG",
            "error",
            f"The judge saw a menu of one tool ({catalog.tools[0].name}): "
            "choosing it cannot be wrong, so this 1.0 means nothing.",
        )
    missing = [name for name in called if catalog.get(name) is None]
    if missing:
        yield _finding(
            session,
            turn,
            "CALLED_TOOL_NOT_IN_CATALOG",
            "warning",
            f"Called {', '.join(missing)}, which the catalog does not list: the judge cannot "
            "know what it is for.",
        )
    undescribed = [tool.name for tool in catalog.tools if not tool.description]
    if undescribed:
        shown = ", ".join(undescribed[:5]) + (" …" if len(undescribed) > 5 else "")
        yield _finding(
            session,
            turn,
            "MISSING_DESCRIPTIONS",
            "warning",
            f"{len(undescribed)} of {len(catalog.tools)} tools have no description ({shown}): "
            "the judge cannot tell what they are for.",
        )
    if catalog.captured_at and turn.timestamp and catalog.captured_at > turn.timestamp:
        yield _finding(
            session,
            turn,
            "RETROACTIVE_CATALOG",
            "warning",
            f"The catalog was captured at {catalog.captured_at:%Y-%m-%d %H:%M}, after this turn: "
            "the agent may have had a different menu.",
        )


def _context_finding(
    session: Session, turn: Turn, prior_chars: int, options: RenderOptions
) -> Finding | None:
    """``prior_chars``: the length of the summaries of all earlier turns, newline-joined."""
    if not is_context_dependent(turn.ask):
        return None
    truncated = prior_chars > options.context_chars
    if turn.index > 0 and not truncated:
        return None
    why = "was cut to fit the budget" if truncated else "is missing (no earlier turn)"
    return _finding(
        session,
        turn,
        "CONTEXT_DEPENDENT_ASK",
        "warning",
        f"The ask {turn.ask[:40]!r} depends on earlier turns, and the prior context {why}: "
        "the judge may not know what was asked.",
    )


def _tag(condition: str) -> str:
    """Findings about a judgment start with its condition, e.g. ``[bare] ``."""
    return f"[{condition}] "


def condition_of(finding: Finding) -> str | None:
    """The judge condition a finding is about, or None for a finding about the input itself."""
    if finding.message.startswith("["):
        tag, _, _ = finding.message.partition("] ")
        if tag[1:] in JUDGE_CONDITIONS:
            return tag[1:]
    return None


def findings_for_condition(findings: Iterable[Finding], condition: str) -> list[Finding]:
    """Findings about the input plus those about judgments made under ``condition``."""
    return [f for f in findings if condition_of(f) in (None, condition)]


def findings_for_turn(
    findings: Iterable[Finding], session_id: str, turn_index: int, condition: str
) -> list[Finding]:
    """What ``why_this_score`` needs about one turn judged under ``condition``."""
    return findings_for_condition(
        (f for f in findings if f.session_id == session_id and f.turn_index == turn_index),
        condition,
    )


def _judgment_findings(session: Session, turn: Turn, judgment: TurnJudgment) -> Iterable[Finding]:
    tag = _tag(judgment.condition)
    given = session.catalog_for(turn)
    if judgment.catalog_size == 1 and not (given and len(given.tools) == 1):  # else said above
        yield _finding(
            session,
            turn,
            "SINGLE_TOOL_CATALOG",
            "error",
            f"{tag}The judge saw a menu of one tool: this {judgment.score} means nothing.",
        )
    if not judgment.call_rendered and any(True for _ in turn.tool_calls()):
        yield _finding(
            session,
            turn,
            "CALL_NOT_RENDERED",
            "error",
            f"{tag}The chosen call was not in the output the judge read: it saw tools available "
            "and none called, so an 'incorrect' verdict says nothing about the choice.",
        )
    if judgment.score is None:
        yield _finding(
            session,
            turn,
            "UNSCORED",
            "error",
            f"{tag}No valid vote ({judgment.unscored_reason or 'unknown reason'}): "
            "unscored, not 0.",
        )
    elif 0 < judgment.score < 1:
        correct = sum(v.verdict == "correct" for v in judgment.votes)
        yield _finding(
            session,
            turn,
            "SPLIT_VOTE",
            "info",
            f"{tag}{correct} of {judgment.n_valid} judges thought the choice was right: an "
            "ambiguous turn, worth a human look.",
        )
    if judgment.n_discarded:
        yield _finding(
            session,
            turn,
            "DISCARDED_VOTES",
            "warning",
            f"{tag}{judgment.n_discarded} of {judgment.n_requested} votes came back without a "
            "usable verdict and were discarded.",
        )


def _session_findings(session: Session, judgments: Sequence[TurnJudgment]) -> Iterable[Finding]:
    used = dict.fromkeys(call.name for call in session.tool_calls())
    listed = {name for catalog in session.catalogs for name in catalog.names()}
    missing = [name for name in used if listed and name not in listed]
    if missing:
        yield _finding(
            session,
            None,
            "USED_TOOLS_MISSING_FROM_CATALOG",
            "warning",
            f"Tools used in this session but in none of its catalogs: {', '.join(missing)}.",
        )
    by_condition: dict[str, list[float | None]] = {}
    for judgment in judgments:
        by_condition.setdefault(judgment.condition, []).append(judgment.score)
    for condition, scores in by_condition.items():
        if len(scores) > 1 and None not in scores and len(set(scores)) == 1:
            yield _finding(
                session,
                None,
                "UNIFORM_SESSION_SCORES",
                "warning",
                f"{_tag(condition)}Every turn scored {scores[0]}: a judge that cannot tell turns "
                "apart is usually missing the catalog or the call.",
            )


def lint(
    sessions: Sequence[Session],
    judgments: Sequence[TurnJudgment] = (),
    options: RenderOptions | None = None,
) -> list[Finding]:
    """Every finding, per turn then per session, most serious first within each turn."""
    options = options or RenderOptions()
    by_session: dict[str, list[TurnJudgment]] = {}
    for judgment in judgments:
        by_session.setdefault(judgment.session_id, []).append(judgment)
    findings: list[Finding] = []
    for session in sessions:
        session_judgments = by_session.get(session.session_id, [])
        by_turn: dict[int, list[TurnJudgment]] = {}
        for judgment in session_judgments:
            by_turn.setdefault(judgment.turn_index, []).append(judgment)
        prior_chars = -1  # summaries of the turns so far, joined by newlines
        for turn in session.turns:
            found = list(_catalog_findings(session, turn))
            context = _context_finding(session, turn, max(prior_chars, 0), options)
            if context is not None:
                found.append(context)
            for judgment in by_turn.get(turn.index, []):
                found.extend(_judgment_findings(session, turn, judgment))
            found.sort(key=lambda f: SEVERITY_ORDER[f.severity])
            findings.extend(found)
            prior_chars += len(turn_summary(turn)) + 1
        findings.extend(_session_findings(session, session_judgments))
    return findings


def why_this_score(findings: Sequence[Finding], judgment: TurnJudgment | None) -> str:
    """One sentence leading with the most serious finding about a turn's score."""
    ranked = sorted(findings, key=lambda f: SEVERITY_ORDER[f.severity])
    if ranked:
        return f"{ranked[0].code}: {ranked[0].message}"
    if judgment is None:
        return "Not judged yet: run the judge on this session."
    return (
        "No finding: the judge saw the whole menu with descriptions and the chosen call, so "
        f"this score ({judgment.score}) reflects its reading of the choice."
    )
