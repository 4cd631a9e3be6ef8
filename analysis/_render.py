"""What the judge reads for one turn; the exporter and the judge both use :func:`render_turn`.

A judge grading a tool choice needs four things: the user's ask, the prior context a short
ask depends on ("yes do #1"), the menu of tools with what each is for, and the model output
with the chosen call in it (``Read(file_path="src/server.py")``). Leave out the menu and
every choice looks right; leave out the call and every turn looks like a failure to act.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from ._catalogs import CatalogBasis, catalog_for_turn
from ._models import Condition, Session, ToolCall, ToolCatalog, ToolDef, Turn

CONDITIONS: tuple[Condition, ...] = ("bare", "catalog_no_call", "full")
DEFAULT_CONTEXT_CHARS = 2000
DEFAULT_ARGUMENT_CHARS = 200
_LINE_CHARS = 160


class RenderOptions(BaseModel):
    context_chars: int = DEFAULT_CONTEXT_CHARS
    """Budget for the summary of earlier turns; the newest are kept."""
    argument_chars: int = DEFAULT_ARGUMENT_CHARS
    """Longer argument values are cut with a visible marker."""


class RenderedTurn(BaseModel):
    session_id: str
    turn_index: int
    condition: Condition
    ask: str
    prior_context: str
    context_truncated: bool
    tools: list[ToolDef]
    catalog_basis: CatalogBasis
    catalog_note: str
    catalog_captured_at: datetime | None
    output: str
    rendered_calls: list[str]

    @property
    def call_rendered(self) -> bool:
        return bool(self.rendered_calls) and self.condition != "catalog_no_call"

    def prompt_text(self) -> str:
        """The whole judge input as text, each part under its own heading."""
        tools = "\n".join(
            f"- {tool.name}: {tool.description or '(no description)'}\n"
            f"  parameters: {json.dumps(tool.parameters, sort_keys=True)}"
            for tool in self.tools
        )
        return (
            "## Prior context (earlier turns, summarised; not the current request)\n"
            f"{self.prior_context or '(none: this is the first turn)'}\n\n"
            f"## Current user request\n{self.ask}\n\n"
            f"## Available tools ({len(self.tools)})\n{tools or '(none)'}\n\n"
            f"## Model output\n{self.output or '(no output)'}\n"
        )


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


def _called_only(turn: Turn, catalog: ToolCatalog) -> list[ToolDef]:
    """The menu a plain trace implies: only the tools that were called."""
    names = dict.fromkeys(call.name for call in turn.tool_calls())
    return [catalog.get(name) or ToolDef(name=name) for name in names]


def render_turn(
    session: Session,
    turn: Turn,
    condition: Condition = "full",
    live: ToolCatalog | None = None,
    options: RenderOptions | None = None,
) -> RenderedTurn:
    """Render one turn for the judge under an ablation ``condition``:

    ``full`` (whole catalog, call in the output), ``catalog_no_call`` (whole catalog, the
    call left out of the output) or ``bare`` (only the called tool on the menu).
    """
    options = options or RenderOptions()
    choice = catalog_for_turn(session, turn, live)
    context, truncated = prior_context(session, turn, options.context_chars)
    rendered_calls = [render_call(c, options.argument_chars) for c in turn.tool_calls()]
    parts = []
    for message in turn.messages:
        if message.text:
            parts.append(message.text)
        if condition != "catalog_no_call":
            parts.extend(render_call(c, options.argument_chars) for c in message.tool_calls)
    tools = choice.catalog.tools if condition != "bare" else _called_only(turn, choice.catalog)
    return RenderedTurn(
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
        output="\n".join(parts),
        rendered_calls=rendered_calls,
    )
