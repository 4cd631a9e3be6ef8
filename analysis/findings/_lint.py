"""Diagnostics: why did this step (or turn) score what it scored?

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

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Literal, NamedTuple, cast, get_args

from pydantic import BaseModel

from analysis.catalog._menus import TurnCatalog, catalog_for_turn
from analysis.models import Condition, Session, ToolCatalog, Turn, TurnJudgment
from analysis.render._judge_input import RenderOptions, turn_summary
from analysis.render._steps import turn_steps

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
_REFERENTIAL = re.compile(
    r"^\W*(yes|yeah|yep|ok(ay)?|sure|no|nope|go( ahead)?|do (it|that|this|so)|continue|again|"
    r"same|that|this|those|these|it|the (above|same|other|previous|first|second|last)|#?\d+)\b"
    r"|#\d+|\b(as before|like before|same as (before|above)|the same (for|as|with|to)|"
    r"the other (one|ones|file|files)|do it again|that one|those ones|did you)\b",
    re.I,
)
"""Asks that refer back: an answer ("yes", "ok", "go ahead"), a pointer ("#1", "the above",
"the same for the other file", "as before") or a question about what was done ("did you")."""
_BACK_REFERENCE = re.compile(
    r"\b(it|that|this|those|these|them|again|above|previous|earlier)\b", re.I
)
"""A word that points back, which makes a short ask ("fix it", "try again") depend on its
context; a short ask without one ("start phoenix in background") stands on its own."""
_FAMILIES = (
    ("Claude", re.compile(r"claude|anthropic", re.I)),
    ("GPT", re.compile(r"\bgpt|openai|(^|[/.:])o[1-9]\b|chatgpt", re.I)),
    ("Gemini", re.compile(r"gemini|gemma", re.I)),
    ("Llama", re.compile(r"llama", re.I)),
    ("Mistral", re.compile(r"mistral|mixtral|codestral", re.I)),
    ("Qwen", re.compile(r"qwen", re.I)),
    ("DeepSeek", re.compile(r"deepseek", re.I)),
    ("Grok", re.compile(r"grok", re.I)),
)
_SHORT_ASK_WORDS = 4
_DISSENT_WORDS = 12


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


def _finding(
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


def is_context_dependent(ask: str) -> bool:
    """An ask that refers back ("yes do #1", "the same for the other file", "fix it") and so
    cannot be judged on its own; a self-contained one, short or not, is not."""
    short = len(ask.split()) <= _SHORT_ASK_WORDS
    return bool(_REFERENTIAL.search(ask)) or (short and bool(_BACK_REFERENCE.search(ask)))


NO_CATALOG_DRAFT = Draft(
    "NO_CATALOG",
    "info",
    "The input carries no tool catalog: a platform judging this trace as it is would see only "
    "the tool that was called and pass every choice. The workbench's judge got a menu rebuilt "
    "for it (each step shows its basis); `tsq export` puts that menu on the trace.",
)


def _menu_drafts(menu: ToolCatalog) -> list[Draft]:
    """What is wrong with the menu the judge got, as a whole."""
    drafts: list[Draft] = []
    if len(menu.tools) == 1:
        drafts.append(
            Draft(
                "SINGLE_TOOL_CATALOG",
                "error",
                f"The judge saw a menu of one tool ({menu.tools[0].name}): "
                "choosing it cannot be wrong, so this 1.0 means nothing.",
            )
        )
    undescribed = [tool.name for tool in menu.tools if not tool.description]
    if undescribed:
        shown = ", ".join(undescribed[:5]) + (" …" if len(undescribed) > 5 else "")
        drafts.append(
            Draft(
                "MISSING_DESCRIPTIONS",
                "warning",
                f"{len(undescribed)} of {len(menu.tools)} tools have no description "
                f"({shown}): the judge cannot tell what they are for.",
            )
        )
    return drafts


def _retroactive_drafts(captured: datetime | None, turn: Turn) -> list[Draft]:
    """A menu captured after the turn: a trace-time catalog written later, or a live dump
    taken at send time for a session that started long before."""
    if not (captured and turn.timestamp and captured > turn.timestamp):
        return []
    return [
        Draft(
            "RETROACTIVE_CATALOG",
            "warning",
            f"The catalog was captured at {captured:%Y-%m-%d %H:%M}, after this turn: the agent "
            "may have had a different menu.",
        )
    ]


class _SessionCatalogs:
    """The catalog findings of each turn of a session; those every turn has are the session's.

    Two audiences. About the input, as a platform receiving the trace would see it: the
    catalog it carries (``NO_CATALOG``, ``RETROACTIVE_CATALOG``). About what the workbench's
    judge saw: the menu :func:`catalog_for_turn` gave it (one tool, tools without
    descriptions, called tools it lacks). Each distinct menu is examined once, so a session of
    thousands of turns sharing one costs one look at it.
    """

    def __init__(self, session: Session, live: ToolCatalog | None) -> None:
        self.session = session
        menus: dict[tuple[int | None, str | None], TurnCatalog] = {}
        by_menu: dict[tuple[int | None, str | None], list[Draft]] = {}
        self.keys: dict[int, tuple[int | None, str | None]] = {}
        """Which menu each turn had, by turn index: its trace catalog and agent version."""
        per_turn: dict[int, list[Draft]] = {}
        for turn in session.turns:
            catalog = session.catalog_for(turn)
            traced = turn.catalog_index if catalog is not None else None
            key = self.keys[turn.index] = (traced, turn.agent_version)
            if key not in menus:
                menus[key] = catalog_for_turn(session, turn, live)
                missing = [NO_CATALOG_DRAFT] if catalog is None else []
                by_menu[key] = missing + _menu_drafts(menus[key].catalog)
            if turn.messages:  # a turn with no model response chose nothing: its menu is moot
                per_turn[turn.index] = by_menu[key] + _retroactive_drafts(
                    menus[key].captured_at, turn
                )
        self.names = {key: set(menu.catalog.names()) for key, menu in menus.items()}
        first = next(iter(per_turn.values()), [])
        shared = set(first)
        for drafts in per_turn.values():
            if not shared:
                break
            shared.intersection_update(drafts)
        self.session_wide = [draft for draft in first if draft in shared]
        self.own = {
            index: [draft for draft in drafts if draft not in shared]
            for index, drafts in per_turn.items()
        }

    def turn_findings(self, turn: Turn) -> Iterable[Finding]:
        """The turn's catalog findings that not every turn of the session has."""
        for draft in self.own.get(turn.index, []):
            yield _finding(self.session, turn, draft)

    def step_drafts(self, turn: Turn) -> Iterable[tuple[int, Draft]]:
        """Per step of the main agent: a called tool the menu the judge got does not list."""
        listed = self.names[self.keys[turn.index]]
        for step in turn_steps(turn):
            calls = step.message.tool_calls
            missing = list(dict.fromkeys(c.name for c in calls if c.name not in listed))
            if missing:
                yield (
                    step.index,
                    Draft(
                        "CALLED_TOOL_NOT_IN_CATALOG",
                        "warning",
                        f"Called {', '.join(missing)}, which the menu the judge saw does not "
                        "list: the judge cannot know what it is for.",
                    ),
                )

    def unlisted_tools(self) -> list[str]:
        """Tools the session used (subagents included) that no menu of the judge's listed."""
        listed = set().union(*self.names.values()) if self.names else set()
        return missing_from_menu(self.session.turns, listed)


def missing_from_menu(turns: Iterable[Turn], menu: Iterable[str]) -> list[str]:
    """The tools ``turns`` called (their subagents' calls included) that ``menu`` does not
    list, each once, in the order first called: for a turn against the menu its judge saw
    (the Catalog page), for a session against every menu its judge saw
    (``USED_TOOLS_MISSING_FROM_CATALOG``)."""
    listed = set(menu)
    used = [
        call.name for turn in turns for call in (*turn.tool_calls(), *turn.subagent_tool_calls())
    ]
    return [name for name in dict.fromkeys(used) if name not in listed]


def _context_finding(
    session: Session, turn: Turn, prior_chars: int, options: RenderOptions
) -> Finding | None:
    """``prior_chars``: the length of the summaries of all earlier turns, newline-joined."""
    if not is_context_dependent(turn.ask):
        return None
    truncated = prior_chars > options.context_chars
    if turn.index > 0 and not truncated:
        return None
    message = (
        f"The ask {turn.ask[:40]!r} refers back to earlier turns, and the prior context was cut "
        "to fit the budget: the judge may not know what was asked."
        if truncated
        else f"The ask {turn.ask[:40]!r} refers to something this session does not contain "
        "(it is the first turn): the judge cannot know what was meant."
    )
    return _finding(session, turn, Draft("CONTEXT_DEPENDENT_ASK", "warning", message))


def findings_for_condition(findings: Iterable[Finding], condition: str) -> list[Finding]:
    """Findings about the input plus those about judgments made under ``condition``."""
    return [f for f in findings if f.condition in (None, condition)]


def findings_for_turn(
    findings: Iterable[Finding], session_id: str, turn_index: int, condition: str
) -> list[Finding]:
    """What ``why_this_score`` needs about one turn judged under ``condition``: the turn's and
    its steps' findings, and the session's; in the order of :func:`findings_for_step`."""
    return _most_telling_first(
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

    return _most_telling_first(
        findings_for_condition(
            (f for f in findings if f.session_id == session_id and about_step(f)), condition
        )
    )


def _judgment_drafts(
    judgment: TurnJudgment, single_tool_catalog: bool, call_left_out: bool
) -> Iterable[Draft]:
    """Findings about one judgment, under its condition; ``call_left_out``: the step (or turn)
    called a tool, and the judge's input did not show it."""
    for draft in _judgment_problems(judgment, single_tool_catalog, call_left_out):
        yield draft._replace(condition=judgment.condition)


def _judgment_problems(
    judgment: TurnJudgment, single_tool_catalog: bool, call_left_out: bool
) -> Iterable[Draft]:
    if judgment.catalog_size == 1 and not single_tool_catalog:  # else said of the catalog
        yield Draft(
            "SINGLE_TOOL_CATALOG",
            "error",
            f"The judge saw a menu of one tool: this {judgment.score} means nothing.",
        )
    if call_left_out:
        yield Draft(
            "CALL_NOT_RENDERED",
            "error",
            "The chosen call was not in the output the judge read: it saw tools available "
            "and none called, so an 'incorrect' verdict says nothing about the choice.",
        )
    if judgment.score is None:
        yield Draft(
            "UNSCORED",
            "error",
            f"No valid vote ({judgment.unscored_reason or 'unknown reason'}): unscored, not 0.",
        )
    elif judgment.verdict == "split":
        correct = sum(v.verdict == "correct" for v in judgment.votes)
        yield Draft(
            "SPLIT_VOTE",
            "info",
            f"{correct} of {judgment.n_valid} judges thought the choice was right: an "
            f"ambiguous {judgment.unit}, worth a human look.",
        )
    if judgment.n_discarded:
        yield Draft(
            "DISCARDED_VOTES",
            "warning",
            f"{judgment.n_discarded} of {judgment.n_requested} votes came back without a "
            "usable verdict and were discarded.",
        )


def _by_severity(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: SEVERITY_ORDER[f.severity])


def is_about_input(finding: Finding) -> bool:
    """A finding about the input as a platform receiving the trace would see it, rather than
    about what the workbench's judge saw."""
    return finding.code in INPUT_CODES


def _most_telling_first(findings: Iterable[Finding]) -> list[Finding]:
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


def _turn_findings(
    session: Session,
    turn: Turn,
    catalogs: _SessionCatalogs,
    context: Finding | None,
    judgments: Sequence[TurnJudgment],
) -> list[Finding]:
    """The turn's findings, most serious first, then each step's, in step order."""
    own = list(catalogs.turn_findings(turn))
    if context is not None:
        own.append(context)
    single_tool_catalog = len(catalogs.names[catalogs.keys[turn.index]]) == 1
    by_step: dict[tuple[str, int], list[Finding]] = {}
    for step_index, draft in catalogs.step_drafts(turn):
        by_step.setdefault(("", step_index), []).append(_finding(session, turn, draft, step_index))
    calling_steps: set[tuple[int, str | None]] | None = None  # built when first needed
    for judgment in judgments:
        if judgment.step_index is None:
            left_out = not judgment.call_rendered and any(True for _ in turn.tool_calls())
            turn_drafts = _judgment_drafts(judgment, single_tool_catalog, left_out)
            own.extend(_finding(session, turn, draft) for draft in turn_drafts)
            continue
        step = (judgment.step_index, judgment.parent_call_id)
        left_out = False
        if not judgment.call_rendered:
            if calling_steps is None:
                steps = turn_steps(turn, subagents=True)
                calling_steps = {(s.index, s.parent_call_id) for s in steps}
            left_out = step in calling_steps
        drafts = list(_judgment_drafts(judgment, single_tool_catalog, left_out))
        if drafts:
            by_step.setdefault((judgment.parent_call_id or "", judgment.step_index), []).extend(
                _finding(session, turn, draft, *step) for draft in drafts
            )
    found = _by_severity(own)
    for key in sorted(by_step):  # the main agent's steps, then each subagent run's
        found.extend(_by_severity(by_step[key]))
    return found


def model_family(model: str | None) -> str | None:
    """The family of a model id (``claude-sonnet-4-5`` → Claude, ``gpt-4o`` → GPT), or None
    when it names no known family (``external``, an illustrative judge)."""
    if not model:
        return None
    return next((family for family, pattern in _FAMILIES if pattern.search(model)), None)


def agent_families(session: Session) -> dict[str, str]:
    """The families of the agent that made a session's choices, each with what says so: the
    models its responses name, and Claude Code itself (which runs Claude models)."""
    found: dict[str, str] = {}
    for model in session.models():
        family = model_family(model)
        if family is not None:
            found.setdefault(family, model)
    if session.format.startswith("claude-code"):
        found.setdefault("Claude", "Claude Code")
    return found


def _self_preference_drafts(session: Session, judgments: Sequence[TurnJudgment]) -> Iterable[Draft]:
    """Per condition, the judge models of the agent's own family (one finding each)."""
    agents = agent_families(session)
    if not agents:
        return
    seen: set[tuple[str, str]] = set()
    for judgment in judgments:
        family = model_family(judgment.model)
        if family not in agents or (judgment.condition, judgment.model) in seen:
            continue
        seen.add((judgment.condition, judgment.model))
        yield Draft(
            "SELF_PREFERENCE",
            "warning",
            f"The judge ({judgment.model}) is of the same family as the judged agent "
            f"({agents[family]}): {family} judging {family}. LLM judges are known to favour "
            "their own family's output (self-preference); check its scores against people's "
            "labels or a judge of another family.",
            judgment.condition,
        )


TurnScores = dict[str, list[tuple[float | None, int]]]
"""Per condition, each judged turn's score and how many of its steps were judged."""


def _uniform_drafts(turn_scores: TurnScores) -> Iterable[Draft]:
    for condition, rows in turn_scores.items():
        scored = [score for score, _ in rows if score is not None]
        if len(scored) == len(rows) > 1 and len({round(s, 6) for s in scored}) == 1:
            why = (
                " (a turn's score is the mean of its judged steps)"
                if any(steps for _, steps in rows)
                else ""
            )
            yield Draft(
                "UNIFORM_SESSION_SCORES",
                "warning",
                f"Every judged turn scored {round(scored[0], 2)}{why}: a judge "
                "that cannot tell turns apart is usually missing the catalog or the call.",
                cast(Condition, condition),  # the keys come from judgments' conditions
            )


def _session_findings(
    session: Session,
    catalogs: _SessionCatalogs,
    turn_scores: TurnScores,
    judgments: Sequence[TurnJudgment] = (),
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
    drafts.extend(_uniform_drafts(turn_scores))
    drafts.extend(_self_preference_drafts(session, judgments))
    return _by_severity(_finding(session, None, draft) for draft in drafts)


def _turn_scores_by_session(judgments: Sequence[TurnJudgment]) -> dict[str, TurnScores]:
    """Per session and condition, its turns' scores, where they might all be alike.

    A turn's score (the mean of its steps) lies between its lowest and highest step score, so
    a session's turns can only score alike when those ranges share a point. Only such sessions
    go through the exact rule (:func:`analysis.views.turn_scores`), which keeps it cheap.
    """
    from analysis._scores import turn_scores  # polars: only when some session's turns may tie

    ranges: dict[tuple[str, str], dict[int, tuple[float, float]]] = {}
    for j in judgments:
        turns = ranges.setdefault((j.session_id, j.condition), {})
        if j.score is not None:
            low, high = turns.get(j.turn_index, (j.score, j.score))
            turns[j.turn_index] = (min(low, j.score), max(high, j.score))
    alike = {
        group
        for group, turns in ranges.items()
        if len(turns) > 1
        and max(low for low, _ in turns.values()) <= min(high for _, high in turns.values())
    }
    candidates = [j for j in judgments if (j.session_id, j.condition) in alike]
    scores: dict[str, TurnScores] = {}
    if not candidates:
        return scores
    frame = turn_scores(candidates).select("session_id", "condition", "score", "steps")
    for session_id, condition, score, steps in frame.iter_rows():
        scores.setdefault(session_id, {}).setdefault(condition, []).append((score, steps))
    return scores


def lint(
    sessions: Sequence[Session],
    judgments: Sequence[TurnJudgment] = (),
    options: RenderOptions | None = None,
    live: ToolCatalog | None = None,
) -> list[Finding]:
    """Every finding: per session its own (catalog-wide ones included), then per turn the
    turn's and each judged step's, most serious first within each. ``live``: the live dump
    the judge's menus were merged with, if any. Where a session was judged by several judges,
    its own judge's judgments count (:func:`analysis.judge.of_judge`): findings never mix two
    judges."""
    from analysis.judge._results import of_judge

    judgments = of_judge(judgments)
    options = options or RenderOptions()
    by_turn: dict[tuple[str, int], list[TurnJudgment]] = {}
    by_session: dict[str, list[TurnJudgment]] = {}
    for judgment in judgments:
        by_turn.setdefault((judgment.session_id, judgment.turn_index), []).append(judgment)
        by_session.setdefault(judgment.session_id, []).append(judgment)
    scored_turns = _turn_scores_by_session(judgments)
    findings: list[Finding] = []
    for session in sessions:
        catalogs = _SessionCatalogs(session, live)
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
            context = _context_finding(session, turn, max(prior_chars, 0), options)
            judged = by_turn.get((session.session_id, turn.index), [])
            findings.extend(_turn_findings(session, turn, catalogs, context, judged))
            prior_chars += len(turn_summary(turn)) + 1
    return findings


def _judges(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"judge {numbers[0]}"
    return f"judges {', '.join(map(str, numbers[:-1]))} and {numbers[-1]}"


def votes_in_words(judgment: TurnJudgment | None) -> str:
    """The votes in a sentence: "2 of 3 judges said correct; the dissent, judge 3, said
    incorrect: "<its first words>…"." A split names the dissenting judges and quotes the first;
    discarded votes are counted."""
    if judgment is None:
        return "Not judged under this condition."
    if not judgment.votes:
        return f"No valid vote ({judgment.unscored_reason or 'unknown reason'}): unscored, not 0."
    numbered = list(enumerate(judgment.votes, start=1))
    correct = [n for n, vote in numbered if vote.verdict == "correct"]
    incorrect = [n for n, vote in numbered if vote.verdict != "correct"]
    words = f"{len(correct)} of {len(numbered)} judges said correct"
    if correct and incorrect:
        dissent, verdict = (
            (correct, "correct") if len(correct) < len(incorrect) else (incorrect, "incorrect")
        )
        label = "evenly split" if len(correct) == len(incorrect) else "the dissent"
        reasoning = judgment.votes[dissent[0] - 1].reasoning.split()
        quoted = " ".join(reasoning[:_DISSENT_WORDS]) + (
            "…" if len(reasoning) > _DISSENT_WORDS else ""
        )
        words += f'; {label}, {_judges(dissent)}, said {verdict}: "{quoted}"'
    if judgment.n_discarded:
        words += (
            f"; {judgment.n_discarded} of {judgment.n_requested} votes discarded "
            "(no usable verdict)"
        )
    return f"{words}."


def why_this_score(findings: Sequence[Finding], judgment: TurnJudgment | None) -> str:
    """Why a step or turn scored what it did, in a sentence or two.

    A step's judgment leads with its votes in words ("2 of 3 judges said correct; the dissent,
    judge 3, said incorrect: …"), then the most serious finding about what the judge saw; a
    turn's leads with that finding. Among equally serious findings, the most specific leads:
    the step's, the turn's, the session's. Findings about the input (what a receiving
    platform would see) explain nothing about this score and are left to the caller.
    """
    ranked = [f for f in _most_telling_first(findings) if not is_about_input(f)]
    if ranked:
        reason = f"{ranked[0].code}: {ranked[0].message}"
    elif judgment is None:
        return "Not judged yet: run the judge on this session."
    else:
        score = "unscored" if judgment.score is None else f"{judgment.score:.2f}"
        reason = (
            "No finding: the judge saw the whole menu with descriptions and the chosen call, so "
            f"this score ({score}) reflects its reading of the choice."
        )
    if judgment is None or judgment.unit == "turn":
        return reason
    return f"{votes_in_words(judgment)} {reason}"
