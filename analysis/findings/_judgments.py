"""Findings about judgments: what a vote or a score says (split, unscored, discarded votes, a
call left out), every turn alike, and a judge of the agent's own family."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import cast

from analysis.findings._finding import Draft
from analysis.models import Condition, Judgment, Session

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


def judgment_drafts(
    judgment: Judgment, single_tool_catalog: bool, call_left_out: bool
) -> Iterable[Draft]:
    """Findings about one judgment, under its condition; ``call_left_out``: the step (or turn)
    called a tool, and the judge's input did not show it."""
    for draft in _judgment_problems(judgment, single_tool_catalog, call_left_out):
        yield draft._replace(condition=judgment.condition)


def _judgment_problems(
    judgment: Judgment, single_tool_catalog: bool, call_left_out: bool
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


def self_preference_drafts(session: Session, judgments: Sequence[Judgment]) -> Iterable[Draft]:
    """Per condition, the judge models of the agent's own family (one finding each)."""
    agents = agent_families(session)
    if not agents:
        return
    seen: set[tuple[str, str]] = set()
    for judgment in judgments:
        if judgment.rater == "scorer":  # a trained model of no family: its name is a name
            continue
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


def uniform_drafts(turn_scores: TurnScores) -> Iterable[Draft]:
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


def turn_scores_by_session(judgments: Sequence[Judgment]) -> dict[str, TurnScores]:
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
