"""Steps: the unit that chose a tool.

A human turn of a real coding session holds dozens of model responses; each response that
called tools is one decision (parallel calls in one response are one decision). That response
is a *step*. Steps are numbered by their position among the responses of their turn, or of
their subagent run, so a step keeps its number whether or not text-only responses are judged.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Sequence

from analysis.models import AssistantMessage, Session, Step, ToolCall, Turn

_SAMPLE = re.compile(r"^sample:(\d+)$")


def _responses(
    turn: Turn, messages: list[AssistantMessage], parent: ToolCall | None, subagents: bool
) -> Iterator[Step]:
    for index, message in enumerate(messages):
        yield Step(turn, index, message, parent)
        if not subagents:
            continue
        for call in message.tool_calls:
            if call.subagent is not None:
                yield from _responses(turn, call.subagent.messages, call, subagents)


def turn_steps(turn: Turn, text_steps: bool = False, subagents: bool = False) -> list[Step]:
    """The turn's steps in order; a subagent's steps follow the step that spawned it.

    By default only responses that called a tool; ``text_steps`` adds text-only responses
    ("should a tool have been used here?"), ``subagents`` adds the subagents' steps.
    """
    return [
        step
        for step in _responses(turn, turn.messages, None, subagents)
        if step.calls_tools or (text_steps and step.message.text.strip())
    ]


def _calls_within(messages: list[AssistantMessage]) -> Iterator[ToolCall]:
    """Every call of these responses and of the subagents they spawned."""
    for message in messages:
        for call in message.tool_calls:
            yield call
            if call.subagent is not None:
                yield from _calls_within(call.subagent.messages)


def find_step(turn: Turn, step_index: int, parent_call_id: str | None = None) -> Step | None:
    """The response at ``step_index`` of the turn, or of the subagent run under a call."""
    parent = None
    messages = turn.messages
    if parent_call_id is not None:
        parent = next((c for c in _calls_within(turn.messages) if c.id == parent_call_id), None)
        if parent is None or parent.subagent is None:
            return None
        messages = parent.subagent.messages
    if not 0 <= step_index < len(messages):
        return None
    return Step(turn, step_index, messages[step_index], parent)


def parse_step_selection(text: str) -> tuple[str, int | None]:
    """``all``, ``first`` or ``sample:N``; a ValueError says what is accepted."""
    if text in ("all", "first"):
        return text, None
    match = _SAMPLE.match(text)
    if match and int(match.group(1)) > 0:
        return "sample", int(match.group(1))
    raise ValueError(f"{text!r} is not all, first or sample:N (N a whole number above 0)")


def select_steps(
    session: Session,
    selection: str = "all",
    text_steps: bool = False,
    subagents: bool = False,
    seed: int = 0,
) -> list[Step]:
    """The steps of ``session`` to judge, in order.

    ``all``; ``first``: the first step after each ask (the main agent's); ``sample:N``: N
    steps per session drawn with a generator seeded by ``seed`` and the session id, so the
    same call picks the same steps on every machine.
    """
    steps = [s for turn in session.turns for s in turn_steps(turn, text_steps, subagents)]
    places = [(step.turn.index, step.parent_call is None) for step in steps]
    return [steps[i] for i in chosen_places(session.session_id, places, selection, seed)]


def chosen_places(
    session_id: str, steps: Sequence[tuple[int, bool]], selection: str = "all", seed: int = 0
) -> list[int]:
    """Which of a session's steps, in order, ``selection`` keeps (see :func:`select_steps`):
    their places in ``steps``, where each step is its turn's index and whether it is the main
    agent's."""
    mode, count = parse_step_selection(selection)
    if mode == "first":
        firsts: dict[int, int] = {}
        for place, (turn_index, main_agent) in enumerate(steps):
            if main_agent:
                firsts.setdefault(turn_index, place)
        return list(firsts.values())
    if mode == "sample" and count is not None and count < len(steps):
        return sorted(random.Random(f"{seed}:{session_id}").sample(range(len(steps)), count))
    return list(range(len(steps)))
