"""Text as the workbench shows it in a line: one rule for every stage that shortens."""

from __future__ import annotations


def one_line(text: str, limit: int) -> str:
    """``text`` on one line, its runs of white space made one space, cut to ``limit``
    characters and an ellipsis."""
    if len(text) > 2 * limit + 2:  # a long text: its start, so made, is the start of the whole
        head = " ".join(text[: 2 * limit + 2].split())
        if len(head) > limit:
            return f"{head[:limit]}…"
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[:limit]}…"
