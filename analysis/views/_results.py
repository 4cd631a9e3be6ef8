"""How a tool call's result reads on a page: JSON as formatted JSON, anything else as text,
with its length and whether it was cut when loaded."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel

from analysis.models import ToolResult


class ResultView(BaseModel):
    kind: Literal["json", "text", "none"]
    text: str
    """The result as it is shown: JSON indented, text as it came (never Markdown)."""
    caption: str
    """Its size in words: "error result, 12,345 characters (cut to 8,000 when loaded)"."""


def result_view(result: ToolResult | None) -> ResultView:
    """A result as a page shows it: a JSON object or list (the whole content parsing as one)
    indented, else the text itself."""
    if result is None:
        return ResultView(kind="none", text="", caption="no result recorded")
    content = result.content
    kind: Literal["json", "text"] = "text"
    shown = content
    if content.lstrip()[:1] in ("{", "["):
        try:
            shown = json.dumps(json.loads(content), indent=2, ensure_ascii=False)
            kind = "json"
        except ValueError:  # text that starts like JSON: shown as it is
            shown = content
    size = f"{len(content):,} characters"
    if result.truncated_from is not None:
        size = f"{result.truncated_from:,} characters (cut to {len(content):,} when loaded)"
    what = "error result" if result.is_error else "result"
    return ResultView(
        kind=kind, text=shown, caption=f"{what}, {size}" if content else f"{what}, empty"
    )
