"""A tool result reads on a page as what it is: JSON indented, text as text, with its size."""

from __future__ import annotations

import json

from analysis.models import ToolResult
from analysis.views import result_view


def test_json_is_indented_and_text_is_kept_as_it_came():
    document = {"files": ["a.py", "b.py"], "count": 2, "note": "○ spotter-a0y"}
    shown = result_view(ToolResult(content=json.dumps(document)))
    assert shown.kind == "json"
    assert json.loads(shown.text) == document
    assert "\n  " in shown.text  # indented
    assert "○ spotter-a0y" in shown.text  # not \\u escaped
    text = "○ spotter-a0y …\n\n## Goal\n[not a link](x)"
    plain = result_view(ToolResult(content=text))
    assert (plain.kind, plain.text) == ("text", text)
    assert plain.caption == f"result, {len(text):,} characters"


def test_text_that_only_starts_like_json_stays_text_and_sizes_are_said():
    shown = result_view(
        ToolResult(content="[1/3] building…", is_error=True, truncated_from=120_000)
    )
    assert shown.kind == "text"
    assert shown.caption == "error result, 120,000 characters (cut to 15 when loaded)"
    assert result_view(None).caption == "no result recorded"
    assert result_view(ToolResult(content="")).caption == "result, empty"
