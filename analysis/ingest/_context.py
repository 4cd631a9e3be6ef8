"""What every parser carries along: where it is reading, where issues go, and load options."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from analysis.models import ParseIssue

DEFAULT_MAX_RESULT_CHARS = 4000


@dataclass
class ParseContext:
    file: str
    issues: list[ParseIssue]
    max_result_chars: int | None = DEFAULT_MAX_RESULT_CHARS
    root: Path | None = None
    """Files a parser reads beside the one it was given (subagents') must lie inside it."""

    def issue(self, line: int | None, reason: str) -> None:
        self.issues.append(ParseIssue(file=self.file, line=line, reason=reason))

    def for_file(self, file: str) -> ParseContext:
        return replace(self, file=file)

    def tool_result(self, content: str, is_error: bool) -> dict[str, Any]:
        """A result as the models take it, cut to ``max_result_chars`` (keeping the length).

        Results are most of a transcript's bytes; nothing the judge reads needs them whole.
        """
        result: dict[str, Any] = {"content": content, "is_error": is_error}
        limit = self.max_result_chars
        if limit is not None and len(content) > limit:
            result["content"] = content[:limit]
            result["truncated_from"] = len(content)
        return result
