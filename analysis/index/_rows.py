"""What the index keeps of a load: one row per session, turn, step, call, issue, input finding
and judgment, each carrying the file it came from (``source_file``: the resolved path of the
transcript that holds it, subagent files counting as their session's).

Input findings are ``analysis.collect_findings`` of a session without judgments (what
``tsq lint`` says without ``--judgments``); findings about judgments need the judgments and are
made when read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from analysis.findings import collect_findings
from analysis.index._inputs import INPUT_COLUMNS, input_rows
from analysis.models import Judgment, LoadResult, ParseIssue, Session
from analysis.render import select_steps

TABLES: dict[str, dict[str, str]] = {
    "sessions": {
        "source_file": "VARCHAR",
        "session_id": "VARCHAR",
        "source": "VARCHAR",
        "format": "VARCHAR",
        "title": "VARCHAR",
        "cwd": "VARCHAR",
        "project": "VARCHAR",
        "agent_version": "VARCHAR",
        "first_ask": "VARCHAR",
        "started_at": "TIMESTAMPTZ",
        "turns": "INTEGER",
        "position": "INTEGER",
    },
    "turns": {
        "source_file": "VARCHAR",
        "session_id": "VARCHAR",
        "turn_index": "INTEGER",
        "ask": "VARCHAR",
        "timestamp": "TIMESTAMPTZ",
        "agent_version": "VARCHAR",
        "responses": "INTEGER",
    },
    "steps": {
        "source_file": "VARCHAR",
        "session_id": "VARCHAR",
        "turn_index": "INTEGER",
        "step_index": "INTEGER",
        "parent_call_id": "VARCHAR",
        "message_id": "VARCHAR",
        "model": "VARCHAR",
        "calls": "INTEGER",
        "tools": "VARCHAR[]",
        "errors": "INTEGER",
        "agent_version": "VARCHAR",
        "timestamp": "TIMESTAMPTZ",
    },
    "calls": {
        "source_file": "VARCHAR",
        "session_id": "VARCHAR",
        "turn_index": "INTEGER",
        "name": "VARCHAR",
        "is_error": "BOOLEAN",
        "in_subagent": "BOOLEAN",
        "position": "INTEGER",
    },
    "issues": {
        "source_file": "VARCHAR",
        "session_id": "VARCHAR",
        "file": "VARCHAR",
        "line": "INTEGER",
        "reason": "VARCHAR",
        "position": "INTEGER",
    },
    "findings": {
        "source_file": "VARCHAR",
        "session_id": "VARCHAR",
        "turn_index": "INTEGER",
        "step_index": "INTEGER",
        "parent_call_id": "VARCHAR",
        "code": "VARCHAR",
        "severity": "VARCHAR",
        "message": "VARCHAR",
        "position": "INTEGER",
    },
    "judgments": {
        "source_file": "VARCHAR",
        "session_id": "VARCHAR",
        "turn_index": "INTEGER",
        "step_index": "INTEGER",
        "parent_call_id": "VARCHAR",
        "condition": "VARCHAR",
        "judge": "VARCHAR",
        "judge_id": "VARCHAR",
        "model": "VARCHAR",
        "score": "DOUBLE",
        "n_valid": "INTEGER",
        "n_requested": "INTEGER",
        "rater": "VARCHAR",
        "message_id": "VARCHAR",
        "catalog_size": "INTEGER",
        "via": "VARCHAR",
    },
    "step_inputs": INPUT_COLUMNS,
    "labels": {
        "source_file": "VARCHAR",
        "item_id": "VARCHAR",
        "session_id": "VARCHAR",
        "labeller": "VARCHAR",
        "value": "VARCHAR",
        "reason": "VARCHAR",
        "labelled_at": "TIMESTAMPTZ",
    },
}
"""Each table's columns and DuckDB types, in order. ``labels`` holds people's current step
labels, each row naming the label store it came from (its ``source_file``)."""

SCORER_OWN = "rater = 'scorer' AND via IS NULL"
"""The ``judgments`` rows a trained step scorer gave as a rater of its own (``tsq score``'s),
not those a cascade kept (``analysis.models.Judgment.by_scorer``)."""

Rows = dict[str, list[dict[str, Any]]]


def _session_rows(
    session: Session, source_file: str, position: int, rows: Rows, with_findings: bool
) -> None:
    first = next((turn for turn in session.turns), None)
    rows["sessions"].append(
        {
            "source_file": source_file,
            "session_id": session.session_id,
            "source": session.source,
            "format": session.format,
            "title": session.title,
            "cwd": session.cwd,
            "project": Path(source_file).parent.name,
            "agent_version": session.agent_version,
            "first_ask": next((turn.ask for turn in session.turns if turn.ask.strip()), None),
            "started_at": first.timestamp if first else None,
            "turns": len(session.turns),
            "position": position,
        }
    )
    for turn in session.turns:
        rows["turns"].append(
            {
                "source_file": source_file,
                "session_id": session.session_id,
                "turn_index": turn.index,
                "ask": turn.ask[:500],
                "timestamp": turn.timestamp,
                "agent_version": turn.agent_version,
                "responses": len(turn.messages),
            }
        )
    for step in select_steps(session, "all", text_steps=False, subagents=True):
        rows["steps"].append(
            {
                "source_file": source_file,
                "session_id": session.session_id,
                "turn_index": step.turn.index,
                "step_index": step.index,
                "parent_call_id": step.parent_call_id,
                "message_id": step.message_id,
                "model": step.message.model,
                "calls": len(step.message.tool_calls),
                "tools": list(dict.fromkeys(call.name for call in step.message.tool_calls)),
                "errors": sum(
                    bool(c.result and c.result.is_error) for c in step.message.tool_calls
                ),
                "agent_version": step.turn.agent_version or session.agent_version,
                "timestamp": step.message.timestamp or step.turn.timestamp,
            }
        )
    calls = [(call, False) for call in session.tool_calls()]
    calls += [(call, True) for call in session.subagent_tool_calls()]
    turn_of = {call.id: turn.index for turn in session.turns for call in turn.tool_calls()}
    for number, (call, in_subagent) in enumerate(calls):
        rows["calls"].append(
            {
                "source_file": source_file,
                "session_id": session.session_id,
                "turn_index": turn_of.get(call.id),
                "name": call.name,
                "is_error": bool(call.result and call.result.is_error),
                "in_subagent": in_subagent,
                "position": number,
            }
        )
    _issue_rows(session.issues, source_file, session.session_id, rows)
    for number, finding in enumerate(collect_findings([session]) if with_findings else []):
        rows["findings"].append(
            {"source_file": source_file, **finding.model_dump(exclude={"condition"})}
            | {"position": number}
        )


def _issue_rows(
    issues: list[ParseIssue], source_file: str, session_id: str | None, rows: Rows
) -> None:
    for number, issue in enumerate(issues):
        rows["issues"].append(
            {
                "source_file": source_file,
                "session_id": session_id,
                "file": issue.file,
                "line": issue.line,
                "reason": issue.reason,
                "position": number,
            }
        )


def empty_rows() -> Rows:
    return {table: [] for table in TABLES}


def load_rows(
    result: LoadResult, files: dict[str, str], with_findings: bool = True, step_inputs: bool = True
) -> Rows:
    """The rows of a load; ``files`` maps each file's display name to its resolved path (the
    ``source_file`` its rows carry). Issues of files outside the map keep their display name.
    Without ``with_findings``, the sessions are not linted (no ``findings`` rows); without
    ``step_inputs``, their steps are not rendered (no ``step_inputs`` figures)."""
    rows = empty_rows()
    for position, session in enumerate(result.sessions):
        source = files.get(session.source, session.source)
        _session_rows(session, source, position, rows, with_findings)
        if step_inputs:
            rows["step_inputs"] += input_rows(session, source)
    for issue in result.issues:
        _issue_rows([issue], files.get(issue.file, issue.file), None, rows)
    judged_in = next(iter(files.values())) if len(files) == 1 else None  # a judgments file
    rows["judgments"] += [judgment_row(judgment, judged_in) for judgment in result.judgments]
    return rows


def judgment_row(judgment: Judgment, source_file: str | None) -> dict[str, Any]:
    """A judgment's row of the ``judgments`` table, kept under ``source_file``."""
    return {
        "source_file": source_file,
        "session_id": judgment.session_id,
        "turn_index": judgment.turn_index,
        "step_index": judgment.step_index,
        "parent_call_id": judgment.parent_call_id,
        "condition": judgment.condition,
        "judge": judgment.judge_id or judgment.model,
        "judge_id": judgment.judge_id,
        "model": judgment.model,
        "score": judgment.score,
        "n_valid": judgment.n_valid,
        "n_requested": judgment.n_requested,
        "rater": judgment.rater,
        "message_id": judgment.message_id,
        "catalog_size": judgment.catalog_size,
        "via": judgment.via,
    }


def keys_of(result: LoadResult) -> Iterator[str]:
    """What ties a file to another in a load: its responses' ids (a resumed session repeats
    the history it continues, ids and all), so that such files are loaded together and the
    repeats are dropped as ``analysis.load`` drops them."""
    for session in result.sessions:
        if not session.format.startswith("claude-code"):
            continue
        for turn in session.turns:
            for message in turn.messages:
                yield f"m:{message.id}"


def subagent_files(path: str | Path) -> list[Path]:
    """The subagent transcripts Claude Code keeps beside a session's file."""
    folder = os.path.join(os.path.splitext(path)[0], "subagents")
    try:
        names = os.listdir(folder)
    except OSError:  # no such folder: most sessions
        return []
    return [
        Path(folder, name)
        for name in sorted(names)
        if name.startswith("agent-") and name.endswith(".jsonl")
    ]
