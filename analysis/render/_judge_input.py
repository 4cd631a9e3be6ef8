"""What the judge reads for one step (:func:`render_step`) or one whole turn (:func:`render_turn`).

The judge, the exporter, the app and the report all use these. A judge grading a tool choice
needs four things: the user's ask, the prior context a short ask depends on ("yes do #1"),
the menu of tools with what each is for, and the model output with the chosen call in it
(``Read(file_path="src/server.py")``). Leave out the menu and every choice looks right; leave
out the call and every turn looks like a failure to act. A step also needs the trajectory of
its turn so far: the last result is usually what drove the decision.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import get_args

from pydantic import BaseModel, Field

from analysis._call_text import (
    DEFAULT_ARGUMENT_CHARS as DEFAULT_ARGUMENT_CHARS,
    expansion_note,
    render_call as render_call,
)
from analysis._text import one_line
from analysis.catalog import TurnCatalog, catalog_for_turn
from analysis.models import (
    AssistantMessage,
    CatalogBasis,
    Condition,
    JudgeUnit,
    Judgment,
    Session,
    Step,
    ToolCall,
    ToolCatalog,
    ToolDef,
    Turn,
)
from analysis.render._steps import find_step, select_steps

CONDITIONS: tuple[Condition, ...] = get_args(Condition)
DEFAULT_CONTEXT_CHARS = 2000
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
    step_chars: int | None = None
    """The budget a step's input was kept within (``RenderOptions.step_chars``); None for a
    whole turn, which has none."""

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


def turn_summary(turn: Turn) -> str:
    """One earlier turn as the judge's prior context shows it."""
    lines = [f"[turn {turn.index}] user: {one_line(turn.ask, _LINE_CHARS)}"]
    calls = [call.name for call in turn.tool_calls()]
    if calls:
        lines.append(f"  agent called: {', '.join(calls)}")
    said = next((m.text for m in reversed(turn.messages) if m.text), "")
    if said:
        lines.append(f"  agent said: {one_line(said, _LINE_CHARS)}")
    for event in turn.events:
        if event.kind == "compaction" and len(event.text) > 80:
            lines.append(f"  compacted history: {one_line(event.text, 2 * _LINE_CHARS)}")
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
        calls = [render_call(c, argument_chars) for c in message.tool_calls]
        parts += _message_parts(message, condition, calls)
    return "\n".join(parts)


def _message_parts(message: AssistantMessage, condition: Condition, calls: list[str]) -> list[str]:
    """A response's text, then its rendered ``calls`` unless the condition hides calls."""
    parts = [message.text] if message.text else []
    return parts + calls if condition != "catalog_no_call" else parts


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
    return f" → {status}: {one_line(call.result.content, limit) or '(empty)'}"


def _step_summary(
    index: int, message: AssistantMessage, options: RenderOptions, newest: bool, calls: list[str]
) -> str:
    """One earlier step as the trajectory shows it: its text, calls (``calls``, rendered) and
    shortened results."""
    lines = [f"[step {index}] {one_line(message.text, 2 * _LINE_CHARS) if message.text else ''}"]
    limit = options.last_result_chars if newest else options.result_chars
    for call, rendered in zip(message.tool_calls, calls, strict=True):
        note = _result_note(call, limit)
        if call.subagent is not None:
            note += f" (its subagent made {sum(1 for _ in call.subagent.tool_calls())} calls)"
        lines.append(f"  {rendered}{note}")
    return "\n".join(line.rstrip() for line in lines)


@dataclass
class _SessionMemo:
    """What every step of one session shares, worked out once: each turn's menu and prior
    context, and each earlier step's summary (a step's trajectory repeats its turn's)."""

    live: ToolCatalog | None
    options: RenderOptions
    catalogs: dict[int, TurnCatalog] = field(default_factory=dict)
    contexts: dict[int, tuple[str, bool]] = field(default_factory=dict)
    runs: dict[tuple[int, str | None], _RunSummaries] = field(default_factory=dict)
    rendered: dict[int, list[str]] = field(default_factory=dict)
    """Each response's calls rendered, by the response's ``id()`` (the session holds them)."""

    def calls(self, message: AssistantMessage) -> list[str]:
        if id(message) not in self.rendered:
            argument_chars = self.options.argument_chars
            self.rendered[id(message)] = [
                render_call(c, argument_chars) for c in message.tool_calls
            ]
        return self.rendered[id(message)]

    def summary(self, index: int, message: AssistantMessage, newest: bool) -> str:
        return _step_summary(index, message, self.options, newest, self.calls(message))

    def catalog(self, session: Session, turn: Turn) -> TurnCatalog:
        if turn.index not in self.catalogs:
            self.catalogs[turn.index] = catalog_for_turn(session, turn, self.live)
        return self.catalogs[turn.index]

    def context(self, session: Session, turn: Turn) -> tuple[str, bool]:
        if turn.index not in self.contexts:
            self.contexts[turn.index] = prior_context(session, turn, self.options.context_chars)
        return self.contexts[turn.index]

    def run(self, step: Step, earlier: list[AssistantMessage]) -> _RunSummaries:
        """The summaries of the run ``step`` belongs to, up to the steps before it."""
        run = self.runs.setdefault((step.turn.index, step.parent_call_id), _RunSummaries())
        for index in range(len(run.older), len(earlier)):
            summary = self.summary(index, earlier[index], newest=False)
            run.older.append(summary)
            run.sizes.append(run.sizes[-1] + len(summary) + 1)
        return run


@dataclass
class _RunSummaries:
    """A run's steps summarised as earlier steps, and the running total of their sizes."""

    older: list[str] = field(default_factory=list)
    """Each step as an earlier step that is not the newest shows it (results cut shorter)."""
    sizes: list[int] = field(default_factory=lambda: [0])
    """``sizes[i]``: the characters of ``older[:i]``, a line break after each."""
    newest: dict[int, str] = field(default_factory=dict)


def _trajectory(
    step: Step, earlier: list[AssistantMessage], budget: int, memo: _SessionMemo
) -> tuple[str, int]:
    """Earlier steps, newest kept within ``budget`` chars; also how many were left out.

    The newest earlier step is always there (cut if it must be): it holds the result that
    usually drove the decision being judged. Older ones follow, newest first, while they fit.
    """
    if not earlier:
        return "", 0
    run = memo.run(step, earlier)
    last = len(earlier) - 1
    if last not in run.newest:
        run.newest[last] = memo.summary(last, earlier[last], newest=True)
    newest = run.newest[last]
    if len(newest) + 1 > budget:
        first, kept = last, [_cut_middle(newest, max(budget - 1, 0))]
    else:  # the oldest step from which all up to the newest fit
        room = budget - len(newest) - 1
        first = bisect.bisect_left(run.sizes, run.sizes[last] - room, 0, last + 1)
        kept = [*run.older[first:last], newest]
    if first:
        kept.insert(0, f"({first} earlier steps left out)")
    return "\n".join(kept), first


def _fit_step(
    step: Step, ask: str, context: str, output: str, memo: _SessionMemo
) -> tuple[str, str, str, str, list[str]]:
    """Ask, prior context, trajectory and output within the step budget, and what was cut.

    The output (the decision being judged) and the ask come first; the trajectory gets what
    is left, newest steps first.
    """
    earlier = _run_messages(step.turn, step)[: step.index]
    available = memo.options.step_chars - _RESERVED_CHARS
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
        step, earlier, available - len(output) - len(ask) - len(context), memo
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
    step = find_step(turn, step_index, parent_call_id)
    if step is None:
        under = f" under call {parent_call_id}" if parent_call_id else ""
        raise ValueError(f"turn {turn.index} has no step {step_index}{under}")
    return _render_step(session, step, condition, _SessionMemo(live, options or RenderOptions()))


def _render_step(
    session: Session, step: Step, condition: Condition, memo: _SessionMemo
) -> JudgeInput:
    """:func:`render_step` of a step found, with what its session's steps share in ``memo``."""
    turn = step.turn
    choice = memo.catalog(session, turn)
    ask, context, truncated = _step_ask(session, step, memo)
    calls = step.message.tool_calls
    rendered_calls = memo.calls(step.message)
    output = "\n".join(_message_parts(step.message, condition, rendered_calls))
    ask, context, trajectory, output, cuts = _fit_step(step, ask, context, output, memo)
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
        rendered_calls=rendered_calls,
        cuts=cuts,
        step_chars=memo.options.step_chars,
    )


def _run_messages(turn: Turn, step: Step) -> list[AssistantMessage]:
    """The responses of the run the step belongs to: the turn's, or its subagent's."""
    if step.parent_call is not None and step.parent_call.subagent is not None:
        return step.parent_call.subagent.messages
    return turn.messages


def _step_ask(session: Session, step: Step, memo: _SessionMemo) -> tuple[str, str, bool]:
    """The ask and prior context a step is judged on; a subagent's ask is its prompt."""
    parent, options = step.parent_call, memo.options
    if parent is None:
        context, truncated = memo.context(session, step.turn)
        return _ask(step.turn), context, truncated
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
        steps = select_steps(session, selection, text_steps, subagents, seed)
        inputs += render_steps(session, steps, conditions, live, options)
    return inputs


def render_steps(
    session: Session,
    steps: Sequence[Step],
    conditions: Sequence[Condition] = ("full",),
    live: ToolCatalog | None = None,
    options: RenderOptions | None = None,
) -> list[JudgeInput]:
    """Each of a session's ``steps`` under each condition, as :func:`render_step` renders it
    (what the steps share worked out once)."""
    memo = _SessionMemo(live, options or RenderOptions())
    return [
        _render_step(session, step, condition, memo) for step in steps for condition in conditions
    ]


def judged_options(judgment: Judgment, known: Mapping[str, RenderOptions]) -> RenderOptions | None:
    """The options ``judgment``'s input was rendered with, where they can be told: its recorded
    step budget (``Judgment.step_chars``), else those of its judge among ``known`` (a spec's
    ``judge_id`` to its ``render_options()``); None when neither tells."""
    if judgment.step_chars is not None:
        return RenderOptions(step_chars=judgment.step_chars)
    return None if judgment.judge_id is None else known.get(judgment.judge_id)
