"""Findings about the input and the menu the judge got: no catalog, a menu of one tool, tools
without descriptions, a catalog captured after the turn, called tools a menu lacks, and an ask
that refers back to what the judge cannot see."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from analysis.catalog import TurnCatalog, catalog_for_turn
from analysis.findings._finding import Draft, Finding, placed
from analysis.models import Session, ToolCatalog, Turn
from analysis.render import RenderOptions, turn_steps

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
_SHORT_ASK_WORDS = 4


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


class SessionCatalogs:
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
            yield placed(self.session, turn, draft)

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


def context_finding(
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
    return placed(session, turn, Draft("CONTEXT_DEPENDENT_ASK", "warning", message))
