"""How a tool call and a slash command's expansion are written as text: what the judge reads and
what an OTel export's messages carry, so the OTLP reader can take them back out."""

from __future__ import annotations

import json
from typing import Any

from analysis.models import ToolCall, Turn

DEFAULT_ARGUMENT_CHARS = 200


def _value(value: Any, limit: int) -> str:
    rendered = json.dumps(value, ensure_ascii=False)
    if len(rendered) <= limit:
        return rendered
    return f"{rendered[:limit]}…[+{len(rendered) - limit} chars]"


def render_call(call: ToolCall, argument_chars: int = DEFAULT_ARGUMENT_CHARS) -> str:
    """``Name(arg=value, …)`` with JSON values; long values end in ``…[+N chars]``."""
    arguments = ", ".join(f"{key}={_value(v, argument_chars)}" for key, v in call.input.items())
    return f"{call.name}({arguments})"


EXPANSION_PREFIX = "(the command expands to: "


def expansion_note(turn: Turn) -> str | None:
    return f"{EXPANSION_PREFIX}{turn.expanded_prompt})" if turn.expanded_prompt else None
