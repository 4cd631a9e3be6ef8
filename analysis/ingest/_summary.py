"""The ``tsq ingest`` report: per session counts and issues, plus totals (a JSON contract)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel

from analysis._format import counted
from analysis.ingest._registered import registered
from analysis.models import LoadResult, ParseIssue

SHOWN_LINE_RANGES = 5
"""How many ranges of lines a group of issues names before it says how many more there are."""


class SessionSummary(BaseModel):
    session_id: str
    source: str
    format: str
    thread_id: str
    """The first session of the chain of resumes this one continues (the session registry's
    thread); the session's own id when the registry links it to none."""
    turns: int
    tool_calls: dict[str, int]
    subagent_tool_calls: dict[str, int]
    issues: list[ParseIssue]


class IngestTotals(BaseModel):
    files: int
    sessions: int
    turns: int
    tool_calls: dict[str, int]
    subagent_tool_calls: dict[str, int]
    issues: int
    file_issues: list[ParseIssue]


class IngestReport(BaseModel):
    sessions: list[SessionSummary]
    totals: IngestTotals


class IssueGroup(BaseModel):
    """The issues of one file that have one reason: how many, and on which lines."""

    file: str
    reason: str
    count: int
    lines: list[int]
    """The lines they are on, in order (an issue of the whole file has none)."""

    def __str__(self) -> str:
        if self.count == 1:
            line = f":{self.lines[0]}" if self.lines else ""
            return f"{self.file}{line}: {self.reason}"
        where = f"; {self.lines_in_words()}" if self.lines else ""
        return f"{self.file}: {self.reason} ({counted(self.count, 'time')}{where})"

    def lines_in_words(self) -> str:
        """``lines 3-9, 12, 40-41 and 3 more ranges``: runs of consecutive lines as ranges
        (nothing for issues of a whole file)."""
        if not self.lines:
            return ""
        ranges: list[list[int]] = []
        for line in self.lines:
            if ranges and line <= ranges[-1][1] + 1:
                ranges[-1][1] = max(ranges[-1][1], line)
            else:
                ranges.append([line, line])
        shown = [f"{a}" if a == b else f"{a}-{b}" for a, b in ranges[:SHOWN_LINE_RANGES]]
        more = len(ranges) - len(shown)
        noun = "line" if len(self.lines) == 1 else "lines"
        rest = f" and {counted(more, 'more range')}" if more else ""
        return f"{noun} {', '.join(shown)}{rest}"


def grouped_issues(issues: Sequence[ParseIssue]) -> list[IssueGroup]:
    """Issues with the same file and reason as one group, in the order each was first seen:
    656 malformed arguments of one file read as one line, not 656."""
    groups: dict[tuple[str, str], list[ParseIssue]] = {}
    for issue in issues:
        groups.setdefault((issue.file, issue.reason), []).append(issue)
    return [
        IssueGroup(
            file=file,
            reason=reason,
            count=len(members),
            lines=sorted(i.line for i in members if i.line is not None),
        )
        for (file, reason), members in groups.items()
    ]


def why_nothing_loaded(paths: Sequence[str], files: int, issues: int) -> str:
    """Why no session was found under ``paths``, in one sentence: no file to read, or
    ``files`` found and none a transcript, with the count of ``issues`` that say why."""
    where = ", ".join(paths)
    said = f"{counted(issues, 'parse issue')} say{'s' if issues == 1 else ''} why"
    if not files:
        return f"No transcripts in {where}: it holds no .jsonl, .json or .ndjson file" + (
            f" that could be read ({said})." if issues else "."
        )
    found = counted(files, "file")
    return f"No transcripts in {where}: of the {found} found, none is a transcript ({said})."


def sorted_counts(counts: Counter[str]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def ingest_report(result: LoadResult) -> IngestReport:
    summaries = []
    calls: Counter[str] = Counter()
    subagent_calls: Counter[str] = Counter()
    registry = registered()
    for session in result.sessions:
        session_calls = Counter(session.tool_call_counts())
        session_subagent_calls = Counter(session.subagent_tool_call_counts())
        calls.update(session_calls)
        subagent_calls.update(session_subagent_calls)
        summaries.append(
            SessionSummary(
                session_id=session.session_id,
                source=session.source,
                format=session.format,
                thread_id=registry.thread_of(session.session_id, session.source),
                turns=len(session.turns),
                tool_calls=sorted_counts(session_calls),
                subagent_tool_calls=sorted_counts(session_subagent_calls),
                issues=session.issues,
            )
        )
    totals = IngestTotals(
        files=result.files_read,
        sessions=len(result.sessions),
        turns=sum(s.turns for s in summaries),
        tool_calls=sorted_counts(calls),
        subagent_tool_calls=sorted_counts(subagent_calls),
        issues=len(result.all_issues()),
        file_issues=result.issues,
    )
    return IngestReport(sessions=summaries, totals=totals)
