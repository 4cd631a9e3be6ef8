"""The ``tsq ingest`` report: per session counts and issues, plus totals (a JSON contract)."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel

from analysis.ingest._registered import registered
from analysis.models import LoadResult, ParseIssue


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
