"""Findings: why might this step (or turn) score what it scored?

Each finding has a stable code, a severity and a plain explanation, and says what it is about:
a step (``step_index``, and ``parent_call_id`` for a subagent's step), a turn, or the session
(``turn_index`` None). A finding that holds for every turn of a session — no catalog at all,
or one catalog serving every turn — is reported once, for the session; :func:`finding_scope`
says so, and :func:`findings_for_turn` / :func:`findings_for_step` give it to every turn.

Catalog findings describe the input as given — what a platform receiving that trace would
see — so a plain GenAI trace without tool definitions gets ``NO_CATALOG`` even though the
workbench itself would judge it against the baseline.
"""

from __future__ import annotations

from collections.abc import Sequence

from analysis.findings._finding import Draft, Finding, by_severity, placed
from analysis.findings._input import SessionCatalogs, context_finding
from analysis.findings._judgments import (
    TurnScores,
    judgment_drafts,
    self_preference_drafts,
    turn_scores_by_session,
    uniform_drafts,
)
from analysis.models import Judgment, Session, ToolCatalog, Turn
from analysis.render import RenderOptions, turn_steps, turn_summary


def _turn_findings(
    session: Session,
    turn: Turn,
    catalogs: SessionCatalogs,
    context: Finding | None,
    judgments: Sequence[Judgment],
) -> list[Finding]:
    """The turn's findings, most serious first, then each step's, in step order."""
    own = list(catalogs.turn_findings(turn))
    if context is not None:
        own.append(context)
    single_tool_catalog = len(catalogs.names[catalogs.keys[turn.index]]) == 1
    by_step: dict[tuple[str, int], list[Finding]] = {}
    for step_index, draft in catalogs.step_drafts(turn):
        by_step.setdefault(("", step_index), []).append(placed(session, turn, draft, step_index))
    calling_steps: set[tuple[int, str | None]] | None = None  # built when first needed
    for judgment in judgments:
        if judgment.step_index is None:
            left_out = not judgment.call_rendered and any(True for _ in turn.tool_calls())
            turn_drafts = judgment_drafts(judgment, single_tool_catalog, left_out)
            own.extend(placed(session, turn, draft) for draft in turn_drafts)
            continue
        step = (judgment.step_index, judgment.parent_call_id)
        left_out = False
        if not judgment.call_rendered:
            if calling_steps is None:
                steps = turn_steps(turn, subagents=True)
                calling_steps = {(s.index, s.parent_call_id) for s in steps}
            left_out = step in calling_steps
        drafts = list(judgment_drafts(judgment, single_tool_catalog, left_out))
        if drafts:
            by_step.setdefault((judgment.parent_call_id or "", judgment.step_index), []).extend(
                placed(session, turn, draft, *step) for draft in drafts
            )
    found = by_severity(own)
    for key in sorted(by_step):  # the main agent's steps, then each subagent run's
        found.extend(by_severity(by_step[key]))
    return found


def _session_findings(
    session: Session,
    catalogs: SessionCatalogs,
    turn_scores: TurnScores,
    judgments: Sequence[Judgment] = (),
) -> list[Finding]:
    drafts = list(catalogs.session_wide)
    missing = catalogs.unlisted_tools()
    if missing:
        drafts.append(
            Draft(
                "USED_TOOLS_MISSING_FROM_CATALOG",
                "warning",
                f"Tools used in this session but on no menu the judge saw: {', '.join(missing)}.",
            )
        )
    drafts.extend(uniform_drafts(turn_scores))
    drafts.extend(self_preference_drafts(session, judgments))
    return by_severity(placed(session, None, draft) for draft in drafts)


def collect_findings(
    sessions: Sequence[Session],
    judgments: Sequence[Judgment] = (),
    options: RenderOptions | None = None,
    live: ToolCatalog | None = None,
) -> list[Finding]:
    """Every finding: per session its own (catalog-wide ones included), then per turn the
    turn's and each judged step's, most serious first within each. ``live``: the live dump
    the judge's menus were merged with, if any. Where a session was judged by several judges,
    its own judge's judgments count (:func:`analysis.judge.of_judge`): findings never mix two
    judges. A trained scorer's judgments are left out: findings explain an LLM judge's votes
    and what it saw, and a scorer casts no vote and reads no prompt."""
    from analysis._scores import of_judge

    judgments = of_judge([j for j in judgments if j.rater == "judge"])
    options = options or RenderOptions()
    by_turn: dict[tuple[str, int], list[Judgment]] = {}
    by_session: dict[str, list[Judgment]] = {}
    for judgment in judgments:
        by_turn.setdefault((judgment.session_id, judgment.turn_index), []).append(judgment)
        by_session.setdefault(judgment.session_id, []).append(judgment)
    scored_turns = turn_scores_by_session(judgments)
    findings: list[Finding] = []
    for session in sessions:
        catalogs = SessionCatalogs(session, live)
        findings.extend(
            _session_findings(
                session,
                catalogs,
                scored_turns.get(session.session_id, {}),
                by_session.get(session.session_id, []),
            )
        )
        prior_chars = -1  # summaries of the turns so far, joined by newlines
        for turn in session.turns:
            context = context_finding(session, turn, max(prior_chars, 0), options)
            judged = by_turn.get((session.session_id, turn.index), [])
            findings.extend(_turn_findings(session, turn, catalogs, context, judged))
            prior_chars += len(turn_summary(turn)) + 1
    return findings
