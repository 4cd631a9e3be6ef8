"""What the council reads of one session: its asks, its steps summarised within a budget, and
how it ended.

The totals come first and are always kept: tool calls by name, errors, and repeated identical
calls — the redundant-call count the ``tool_policy`` rule uses, computed by
:func:`analysis.study.redundant_calls`, not left to the model to count. Then each turn: its
ask and its steps (each call with ok or its error, repeats marked), in full where the budget
allows and as counts where it does not (the last turn and the first are given room first).
Last, how the session ended.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import orjson

from analysis._text import one_line
from analysis.council._config import DEFAULT_BUDGET_CHARS as DEFAULT_BUDGET_CHARS
from analysis.models import Session, ToolCall, Turn
from analysis.render import render_call
from analysis.study import redundant_calls

_ARGUMENT_CHARS = 80
_ASK_CHARS = 600
_SHORT_ASK_CHARS = 200
_SAID_CHARS = 240
_ENDING_CHARS = 600
_ERROR_CHARS = 120


def _counts(names: Iterable[str]) -> str:
    counted = Counter(names)
    return ", ".join(f"{name} {n}" for name, n in counted.most_common()) or "none"


def _repeats(session: Session) -> set[int]:
    """``id()`` of each call that repeats an earlier call of the same tool with the same
    arguments: the calls ``redundant_calls`` counts."""
    seen: set[tuple[str, bytes]] = set()
    repeated = set()
    for call in session.tool_calls():
        key = (call.name, orjson.dumps(call.input, option=orjson.OPT_SORT_KEYS))
        if key in seen:
            repeated.add(id(call))
        seen.add(key)
    return repeated


def _is_error(call: ToolCall) -> bool:
    return call.result is not None and call.result.is_error


def _header(session: Session) -> str:
    calls = list(session.tool_calls())
    errors = [call.name for call in calls if _is_error(call)]
    sub = list(session.subagent_tool_calls())
    lines = [f"# Session {session.session_id}"]
    if session.title:
        lines.append(f"Title: {one_line(session.title, 200)}")
    lines += [
        f"Turns: {len(session.turns)}. "
        f"Tool calls: {len(calls)} ({_counts(c.name for c in calls)}).",
        f"Tool calls that returned an error: {len(errors)}"
        + (f" ({_counts(errors)})." if errors else "."),
        f"Repeated identical calls: {redundant_calls(session)} (a call of the same tool with the "
        "same arguments as an earlier call; counted, not estimated).",
    ]
    if sub:
        lines.append(f"Subagents' tool calls: {len(sub)} ({_counts(c.name for c in sub)}).")
    return "\n".join(lines)


def _said(turn: Turn) -> str:
    return next((m.text for m in reversed(turn.messages) if m.text.strip()), "")


def _ask_lines(turn: Turn, limit: int) -> list[str]:
    lines = [f"## Turn {turn.index}", f"User: {one_line(turn.ask, limit) or '(no text)'}"]
    if turn.expanded_prompt:
        lines.append(f"(the command expands to: {one_line(turn.expanded_prompt, limit // 2)})")
    return lines


def _events(turn: Turn) -> str | None:
    kinds = [event.kind.replace("_", " ") for event in turn.events]
    return f"Events: {', '.join(kinds)}." if kinds else None


def _detailed(turn: Turn, repeated: set[int]) -> str:
    """A turn in full: its ask, each step's calls with ok or the error, repeats marked."""
    lines = _ask_lines(turn, _ASK_CHARS)
    step = 0
    for message in turn.messages:
        if not message.tool_calls:
            continue
        step += 1
        for call in message.tool_calls:
            if call.result is None:
                outcome = "no result"
            elif call.result.is_error:
                outcome = f"error: {one_line(call.result.content, _ERROR_CHARS) or '(empty)'}"
            else:
                outcome = "ok"
            line = f"  [step {step}] {render_call(call, _ARGUMENT_CHARS)} → {outcome}"
            if id(call) in repeated:
                line += " [repeat of an earlier identical call]"
            if call.subagent is not None:
                line += f" (its subagent made {sum(1 for _ in call.subagent.tool_calls())} calls)"
            lines.append(line)
    if not step:
        lines.append("  (no tool calls)")
    said = _said(turn)
    if said:
        lines.append(f"Agent said: {one_line(said, _SAID_CHARS)}")
    events = _events(turn)
    if events:
        lines.append(events)
    return "\n".join(lines)


def _compact(turn: Turn, repeated: set[int]) -> str:
    """A turn as counts: its ask, calls by name, errors and repeats."""
    calls = list(turn.tool_calls())
    errors = sum(_is_error(call) for call in calls)
    repeats = sum(id(call) in repeated for call in calls)
    steps = sum(1 for m in turn.messages if m.tool_calls)
    lines = _ask_lines(turn, _SHORT_ASK_CHARS)
    lines.append(
        f"  {steps} steps, {len(calls)} calls ({_counts(c.name for c in calls)}); "
        f"{errors} errors; {repeats} repeats"
    )
    events = _events(turn)
    if events:
        lines.append(events)
    return "\n".join(lines)


def _ending(session: Session) -> str:
    lines = ["## How it ended"]
    if not session.turns:
        return "\n".join([*lines, "The session has no turns."])
    last = session.turns[-1]
    if any(event.kind == "interrupt" for event in last.events):
        lines.append(f"The user interrupted turn {last.index}.")
    final = last.messages[-1] if last.messages else None
    if final is None:
        lines.append(f"The agent did not answer the last ask (turn {last.index}).")
    elif final.tool_calls:
        failed = [call.name for call in final.tool_calls if _is_error(call)]
        lines.append(
            f"Its last response called {', '.join(c.name for c in final.tool_calls)}"
            + (f" ({', '.join(failed)} returned an error)" if failed else "")
            + (", with no final answer after it." if not final.text.strip() else ".")
        )
    said = _said(last)
    if said:
        lines.append(f"The agent's last words: {one_line(said, _ENDING_CHARS)}")
    return "\n".join(lines)


def render_session_for_council(session: Session, budget_chars: int = DEFAULT_BUDGET_CHARS) -> str:
    """The session as the council reads it, within ``budget_chars`` characters."""
    repeated = _repeats(session)
    header, ending = _header(session), _ending(session)
    room = budget_chars - len(header) - len(ending) - 4
    turns = session.turns
    blocks: dict[int, str] = {}
    used = 0
    # Every turn as counts, as many as fit: the last and the first before the rest.
    order = [len(turns) - 1, 0, *range(1, len(turns) - 1)] if len(turns) > 1 else [0]
    for position in order if turns else []:
        if position in blocks:
            continue
        block = _compact(turns[position], repeated)
        if used + len(block) + 1 > room:
            continue
        blocks[position] = block
        used += len(block) + 1
    # Then in full, in the same order, while the budget allows.
    for position in list(order) if turns else []:
        if position not in blocks:
            continue
        full = _detailed(turns[position], repeated)
        grown = used - len(blocks[position]) + len(full)
        if grown <= room:
            blocks[position] = full
            used = grown
    parts = [header]
    omitted = 0
    for position in range(len(turns)):
        if position in blocks:
            if omitted:
                parts.append(f"(… {omitted} turns left out to fit; their calls are counted above)")
                omitted = 0
            parts.append(blocks[position])
        else:
            omitted += 1
    if omitted:
        parts.append(f"(… {omitted} turns left out to fit; their calls are counted above)")
    parts.append(ending)
    text = "\n\n".join(parts)
    return text if len(text) <= budget_chars else f"{text[: budget_chars - 1]}…"
