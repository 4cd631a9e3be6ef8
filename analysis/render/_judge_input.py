"""What the judge reads for one step (:func:`render_step`) or one whole turn (:func:`render_turn`).

The judge, the exporter, the app and the report all use these. A judge grading a tool choice
needs four things: the user's ask, the prior context a short ask depends on ("yes do #1"),
the menu of tools with what each is for, and the model output with the chosen call in it
(``Read(file_path="src/server.py")``). Leave out the menu and every choice looks right; leave
out the call and every turn looks like a failure to act. A step also needs the trajectory of
its turn so far: the last result is usually what drove the decision.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, get_args

from pydantic import BaseModel, Field

from analysis.catalog._menus import catalog_for_turn
from analysis.models import (
    AssistantMessage,
    CatalogBasis,
    Condition,
    JudgeUnit,
    Session,
    ToolCall,
    ToolCatalog,
    ToolDef,
    Turn,
)
from analysis.render._steps import Step, find_step, select_steps

CONDITIONS: tuple[Condition, ...] = get_args(Condition)
DEFAULT_CONTEXT_CHARS = 2000
DEFAULT_ARGUMENT_CHARS = 200
DEFAULT_STEP_CHARS = 12_000
_LINE_CHARS = 160


class RenderOptions(BaseModel):
    context_chars: int = DEFAULT_CONTEXT_CHARS
    """Budget for the summary of earlier turns; the newest are kept."""
    argument_chars: int = DEFAULT_ARGUMENT_CHARS
    """Longer argument values are cut with a visible marker."""
    step_chars: int = Field(default=DEFAULT_STEP_CHARS, ge=2000)
    """Hard budget of a step's input, everything but the menu (the menu is the prefix every
    step of a session shares, sent once and then read from the prompt cache)."""
    result_chars: int = 200
    """Earlier steps' results in the trajectory are cut to this length..."""
    last_result_chars: int = 1500
    """...except the newest step's, which usually drove the decision being judged."""


class JudgeInput(BaseModel):
    """What the judge reads for one unit: a step, or a whole turn (``step_index`` None)."""

    session_id: str
    turn_index: int
    step_index: int | None = None
    message_id: str | None = None
    parent_call_id: str | None = None
    """A subagent's step: the call that spawned the subagent."""
    condition: Condition
    ask: str
    prior_context: str
    context_truncated: bool
    trajectory: str = ""
    """A step's turn so far: earlier steps' text, calls and shortened results."""
    tools: list[ToolDef]
    catalog_basis: CatalogBasis
    catalog_note: str
    catalog_captured_at: datetime | None
    output: str
    rendered_calls: list[str]
    cuts: list[str] = Field(default_factory=list)
    """What was cut to keep a step's input within its budget, in words."""

    @property
    def call_rendered(self) -> bool:
        return bool(self.rendered_calls) and self.condition != "catalog_no_call"

    def menu_text(self) -> str:
        """The menu: the part of the input that every step of a session shares."""
        tools = "\n".join(
            f"- {tool.name}: {tool.description or '(no description)'}\n"
            f"  parameters: {json.dumps(tool.parameters, sort_keys=True)}"
            for tool in self.tools
        )
        return f"## Available tools ({len(self.tools)})\n{tools or '(none)'}\n"

    def unit_text(self) -> str:
        """Everything but the menu: the context, the ask, the turn so far and the output."""
        parts = [
            "## Prior context (earlier turns, summarised; not the current request)\n"
            f"{self.prior_context or '(none: this is the first turn)'}\n",
            f"## Current user request\n{self.ask}\n",
        ]
        if self.step_index is not None:
            parts.append(
                "## This turn so far (earlier steps, oldest first)\n"
                f"{self.trajectory or '(none: this is the first step of the turn)'}\n"
            )
            parts.append(
                f"## Model output (the step being judged)\n{self.output or '(no output)'}\n"
            )
        else:
            parts.append(f"## Model output\n{self.output or '(no output)'}\n")
        if self.cuts:
            parts.append("## Cut to fit\n" + "\n".join(f"- {cut}" for cut in self.cuts) + "\n")
        return "\n".join(parts)

    def prompt_text(self) -> str:
        """The whole judge input as text: the menu first (the cached prefix), then the unit."""
        return f"{self.menu_text()}\n{self.unit_text()}"


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[:limit]}…"


def _value(value: Any, limit: int) -> str:
    rendered = json.dumps(value, ensure_ascii=False)
    if len(rendered) <= limit:
        return rendered
    return f"{rendered[:limit]}…[+{len(rendered) - limit} chars]"


def render_call(call: ToolCall, argument_chars: int = DEFAULT_ARGUMENT_CHARS) -> str:
    """``Name(arg=value, …)`` with JSON values; long values end in ``…[+N chars]``."""
    arguments = ", ".join(f"{key}={_value(v, argument_chars)}" for key, v in call.input.items())
    return f"{call.name}({arguments})"


def turn_summary(turn: Turn) -> str:
    """One earlier turn as the judge's prior context shows it."""
    lines = [f"[turn {turn.index}] user: {_shorten(turn.ask, _LINE_CHARS)}"]
    calls = [call.name for call in turn.tool_calls()]
    if calls:
        lines.append(f"  agent called: {', '.join(calls)}")
    said = next((m.text for m in reversed(turn.messages) if m.text), "")
    if said:
        lines.append(f"  agent said: {_shorten(said, _LINE_CHARS)}")
    for event in turn.events:
        if event.kind == "compaction" and len(event.text) > 80:
            lines.append(f"  compacted history: {_shorten(event.text, 2 * _LINE_CHARS)}")
    return "\n".join(lines)


def prior_context(session: Session, turn: Turn, budget: int) -> tuple[str, bool]:
    """A rolling summary of the turns before ``turn``, newest kept within ``budget`` chars."""
    kept: list[str] = []
    used = 0
    earlier = [t for t in session.turns if t.index < turn.index]
    for previous in reversed(earlier):
        summary = turn_summary(previous)
        if used + len(summary) > budget:
            if not kept and budget > 1:  # never drop the newest turn entirely: cut it
                kept.append(summary[: budget - 1] + "…")
            return "\n".join(reversed(kept)), True
        kept.append(summary)
        used += len(summary) + 1
    return "\n".join(reversed(kept)), False


EXPANSION_PREFIX = "(the command expands to: "


def expansion_note(turn: Turn) -> str | None:
    return f"{EXPANSION_PREFIX}{turn.expanded_prompt})" if turn.expanded_prompt else None


def _ask(turn: Turn) -> str:
    note = expansion_note(turn)
    return f"{turn.ask}\n{note}" if note else turn.ask


def _called_only(calls: list[ToolCall], catalog: ToolCatalog) -> list[ToolDef]:
    """The menu a plain trace implies: only the tools that were called."""
    names = dict.fromkeys(call.name for call in calls)
    return [catalog.get(name) or ToolDef(name=name) for name in names]


def _output(messages: list[AssistantMessage], condition: Condition, argument_chars: int) -> str:
    """The responses' text with every call rendered inline, unless the condition hides calls."""
    parts = []
    for message in messages:
        if message.text:
            parts.append(message.text)
        if condition != "catalog_no_call":
            parts.extend(render_call(c, argument_chars) for c in message.tool_calls)
    return "\n".join(parts)


def render_turn(
    session: Session,
    turn: Turn,
    condition: Condition = "full",
    live: ToolCatalog | None = None,
    options: RenderOptions | None = None,
) -> JudgeInput:
    """Render one whole turn for the judge under an ablation ``condition``:

    ``full`` (whole catalog, call in the output), ``catalog_no_call`` (whole catalog, the
    call left out of the output) or ``bare`` (only the called tool on the menu).
    """
    options = options or RenderOptions()
    choice = catalog_for_turn(session, turn, live)
    context, truncated = prior_context(session, turn, options.context_chars)
    calls = list(turn.tool_calls())
    tools = choice.catalog.tools if condition != "bare" else _called_only(calls, choice.catalog)
    return JudgeInput(
        session_id=session.session_id,
        turn_index=turn.index,
        condition=condition,
        ask=_ask(turn),
        prior_context=context,
        context_truncated=truncated,
        tools=tools,
        catalog_basis=choice.basis,
        catalog_note=choice.note,
        catalog_captured_at=choice.captured_at,
        output=_output(turn.messages, condition, options.argument_chars),
        rendered_calls=[render_call(c, options.argument_chars) for c in calls],
    )


_RESERVED_CHARS = 800
"""Room kept in a step's budget for headings and the list of cuts."""


def _cut_middle(text: str, limit: int) -> str:
    """``text`` within ``limit`` chars, its start and end kept (an output's calls are last)."""
    if len(text) <= limit:
        return text
    marker = f"…[{len(text) - limit} chars cut]…"
    keep = max(limit - len(marker), 0)
    head = keep // 3
    return f"{text[:head]}{marker}{text[len(text) - (keep - head) :]}"


def _result_note(call: ToolCall, limit: int) -> str:
    if call.result is None:
        return " → (no result)"
    status = "error" if call.result.is_error else "ok"
    return f" → {status}: {_shorten(call.result.content, limit) or '(empty)'}"


def _step_summary(
    index: int, message: AssistantMessage, options: RenderOptions, newest: bool
) -> str:
    """One earlier step as the trajectory shows it: its text, calls and shortened results."""
    lines = [f"[step {index}] {_shorten(message.text, 2 * _LINE_CHARS) if message.text else ''}"]
    limit = options.last_result_chars if newest else options.result_chars
    for call in message.tool_calls:
        note = _result_note(call, limit)
        if call.subagent is not None:
            note += f" (its subagent made {sum(1 for _ in call.subagent.tool_calls())} calls)"
        lines.append(f"  {render_call(call, options.argument_chars)}{note}")
    return "\n".join(line.rstrip() for line in lines)


def _trajectory(
    earlier: list[AssistantMessage], budget: int, options: RenderOptions
) -> tuple[str, int]:
    """Earlier steps, newest kept within ``budget`` chars; also how many were left out.

    The newest earlier step is always there (cut if it must be): it holds the result that
    usually drove the decision being judged.
    """
    kept: list[str] = []
    used = 0
    for index in range(len(earlier) - 1, -1, -1):
        summary = _step_summary(index, earlier[index], options, newest=not kept)
        fits = used + len(summary) + 1 <= budget
        if not fits and kept:
            break
        kept.append(summary if fits else _cut_middle(summary, max(budget - 1, 0)))
        used += len(kept[-1]) + 1
        if not fits:
            break
    left_out = len(earlier) - len(kept)
    if left_out:
        kept.append(f"({left_out} earlier steps left out)")
    return "\n".join(reversed(kept)), left_out


def _fit_step(
    ask: str, context: str, earlier: list[AssistantMessage], output: str, options: RenderOptions
) -> tuple[str, str, str, str, list[str]]:
    """Ask, prior context, trajectory and output within the step budget, and what was cut.

    The output (the decision being judged) and the ask come first; the trajectory gets what
    is left, newest steps first.
    """
    available = options.step_chars - _RESERVED_CHARS
    cuts = []
    if len(output) > available // 3:
        cuts.append(f"the step's output, {len(output):,} chars, cut to {available // 3:,}")
        output = _cut_middle(output, available // 3)
    if len(ask) > available // 4:
        cuts.append(f"the ask, {len(ask):,} chars, cut to {available // 4:,}")
        ask = _cut_middle(ask, available // 4)
    if len(context) > available // 6:
        cuts.append(f"the prior context, {len(context):,} chars, cut to {available // 6:,}")
        context = "…" + context[len(context) - available // 6 + 1 :]
    trajectory, left_out = _trajectory(
        earlier, available - len(output) - len(ask) - len(context), options
    )
    if left_out:
        cuts.append(f"{left_out} of {len(earlier)} earlier steps of this turn left out (oldest)")
    return ask, context, trajectory, output, cuts


def render_step(
    session: Session,
    turn: Turn,
    step_index: int,
    condition: Condition = "full",
    live: ToolCatalog | None = None,
    options: RenderOptions | None = None,
    parent_call_id: str | None = None,
) -> JudgeInput:
    """Render one step (a model response of ``turn``) for the judge.

    A subagent's step (``parent_call_id`` names the spawning call) is judged on the prompt
    the subagent was given and its own steps so far. The input, all but the menu, stays within
    ``options.step_chars`` and lists what it cut. Raises ValueError for a step that is not there.
    """
    options = options or RenderOptions()
    step = find_step(turn, step_index, parent_call_id)
    if step is None:
        under = f" under call {parent_call_id}" if parent_call_id else ""
        raise ValueError(f"turn {turn.index} has no step {step_index}{under}")
    choice = catalog_for_turn(session, turn, live)
    ask, context, truncated = _step_ask(session, turn, step, options)
    earlier = _run_messages(turn, step)[: step.index]
    calls = step.message.tool_calls
    output = _output([step.message], condition, options.argument_chars)
    ask, context, trajectory, output, cuts = _fit_step(ask, context, earlier, output, options)
    tools = choice.catalog.tools if condition != "bare" else _called_only(calls, choice.catalog)
    return JudgeInput(
        session_id=session.session_id,
        turn_index=turn.index,
        step_index=step.index,
        message_id=step.message_id,
        parent_call_id=step.parent_call_id,
        condition=condition,
        ask=ask,
        prior_context=context,
        context_truncated=truncated or any(c.startswith("the prior context") for c in cuts),
        trajectory=trajectory,
        tools=tools,
        catalog_basis=choice.basis,
        catalog_note=choice.note,
        catalog_captured_at=choice.captured_at,
        output=output,
        rendered_calls=[render_call(c, options.argument_chars) for c in calls],
        cuts=cuts,
    )


def _run_messages(turn: Turn, step: Step) -> list[AssistantMessage]:
    """The responses of the run the step belongs to: the turn's, or its subagent's."""
    if step.parent_call is not None and step.parent_call.subagent is not None:
        return step.parent_call.subagent.messages
    return turn.messages


def _step_ask(
    session: Session, turn: Turn, step: Step, options: RenderOptions
) -> tuple[str, str, bool]:
    """The ask and prior context a step is judged on; a subagent's ask is its prompt."""
    parent = step.parent_call
    if parent is None:
        context, truncated = prior_context(session, turn, options.context_chars)
        return _ask(turn), context, truncated
    prompt = (parent.subagent.prompt if parent.subagent else "") or str(
        parent.input.get("prompt") or ""
    )
    spawned = f"(a subagent, spawned by {render_call(parent, options.argument_chars)}, was asked:)"
    return f"{spawned}\n{prompt}", "", False


def judge_inputs(
    sessions: Sequence[Session],
    unit: JudgeUnit = "step",
    conditions: Sequence[Condition] = ("full",),
    live: ToolCatalog | None = None,
    options: RenderOptions | None = None,
    selection: str = "all",
    text_steps: bool = False,
    subagents: bool = False,
    seed: int = 0,
) -> list[JudgeInput]:
    """Everything a judge run reads, in order: each chosen step (or each turn with a model
    response) under each condition. ``selection``, ``text_steps``, ``subagents`` and ``seed``
    choose steps (see :func:`select_steps`); a ValueError names a bad selection."""
    inputs = []
    for session in sessions:
        if unit == "turn":
            inputs += [
                render_turn(session, turn, condition, live, options)
                for turn in session.turns
                if turn.messages
                for condition in conditions
            ]
            continue
        for step in select_steps(session, selection, text_steps, subagents, seed):
            inputs += [
                render_step(
                    session, step.turn, step.index, condition, live, options, step.parent_call_id
                )
                for condition in conditions
            ]
    return inputs
