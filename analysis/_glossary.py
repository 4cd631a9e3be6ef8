"""Every code a person meets — a finding, a judge condition, a cause of disagreement, a rater
kind, a verdict — with a name in words and a one-line meaning. The app, the report and the
CLI's text say the words (the code may follow in small type); JSON keeps the codes."""

from __future__ import annotations

from typing import NamedTuple

from analysis._format import HEADERS


class Term(NamedTuple):
    words: str
    meaning: str


GLOSSARY: dict[str, Term] = {
    # findings (analysis.findings.CODES)
    "NO_CATALOG": Term(
        "no recorded menu",
        "The transcript records no menu of tools: the judge's menu is rebuilt, not the agent's.",
    ),
    "SINGLE_TOOL_CATALOG": Term(
        "one-tool menu",
        "The judge's menu held a single tool, so any call to it looks like the right choice.",
    ),
    "CALLED_TOOL_NOT_IN_CATALOG": Term(
        "called tool not on the menu",
        "A tool the agent called is missing from the menu the judge saw.",
    ),
    "MISSING_DESCRIPTIONS": Term(
        "tools without descriptions",
        "Tools on the menu have no description: the judge cannot tell what they are for.",
    ),
    "CALL_NOT_RENDERED": Term(
        "call hidden from the judge",
        "The judge did not see the call the agent chose, so it cannot judge the choice.",
    ),
    "CONTEXT_DEPENDENT_ASK": Term(
        "ask that leans on earlier turns",
        "The ask refers to earlier context the judge may not see in full.",
    ),
    "RETROACTIVE_CATALOG": Term(
        "menu from another time",
        "The menu was taken from a catalog of another time, not captured when the agent chose.",
    ),
    "USED_TOOLS_MISSING_FROM_CATALOG": Term(
        "used tools missing from the menu",
        "Tools the session used are not on the menu it recorded.",
    ),
    "SPLIT_VOTE": Term("split vote", "The judge's votes on this step disagreed."),
    "DISCARDED_VOTES": Term(
        "discarded votes", "Some of the judge's answers could not be read and were left out."
    ),
    "UNSCORED": Term("unscored", "No valid vote: the step has no score, which is not a 0."),
    "UNIFORM_SESSION_SCORES": Term(
        "every turn scored alike",
        "A judge that cannot tell a session's turns apart usually lacks something it needs.",
    ),
    "SELF_PREFERENCE": Term(
        "judge of the agent's own family",
        "LLM judges favour output of their own model family; check against another family.",
    ),
    # judge conditions (analysis.CONDITIONS)
    "full": Term("full", "The whole menu with its descriptions, and the chosen call."),
    "bare": Term("bare menu", "Only the tools the step called are on the menu."),
    "catalog_no_call": Term(
        "menu without the call", "The whole menu, with the chosen call hidden from the judge."
    ),
    # causes of a disagreement (the council's adjudication and the judge's alignment)
    "severity_shift": Term(
        "severity shift", "Both sides saw the same thing and rated it to a different degree."
    ),
    "definition_mismatch": Term(
        "definition mismatch", "The two sides read the field's definition differently."
    ),
    "schema_gap": Term("schema gap", "One side's vocabulary is finer than the other's."),
    "human_error": Term("human error", "The person's label is wrong on a careful re-read."),
    "menu_gap": Term(
        "menu gap", "What people expected was absent or undescribed on the judge's menu."
    ),
    "context_gap": Term("context gap", "The judge's input was cut short of what it needed."),
    "rubric_gap": Term("rubric gap", "A policy people apply that the rubric does not state."),
    "severity": Term("severity", "Judge and people agree on the problem, not on its weight."),
    "judge_error": Term("judge error", "The judge had what it needed and still erred."),
    # raters and verdicts
    "judge": Term(
        "LLM judge", "A language model asked, several times, whether a choice was right."
    ),
    "scorer": Term(
        "trained scorer", "A small model trained on people's labels that gives a probability."
    ),
    "split": Term("split vote", "The judge's votes disagreed."),
    "mixed": Term("mixed", "The turn's steps were each decided, but not alike."),
}
"""Codes in words, with a one-line meaning."""


def words(code: str) -> str:
    """A code (or a column's name) in words: the glossary's, else a column heading's, else the
    code with spaces for underscores."""
    if code in GLOSSARY:
        return GLOSSARY[code].words
    return HEADERS.get(code, code.replace("_", " "))


def named(code: str) -> str:
    """A code as people read it with the code after, to search by: ``one-tool menu
    (SINGLE_TOOL_CATALOG)``."""
    return f"{words(code)} ({code})"


def meaning(code: str) -> str | None:
    """What a code means, in one line; None for a code the glossary does not hold."""
    term = GLOSSARY.get(code)
    return None if term is None else term.meaning
