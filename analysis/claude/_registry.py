"""The session registry: one JSON line per Claude Code session start.

Each line holds the session id, its transcript, the working folder, how it started (``startup``,
``resume``, ``clear``, ``compact``), when, Claude Code's version where the transcript says it,
the session it resumed, and the menu snapshot: what decides the menu at that moment that can be
read without the model (the MCP servers configured for the folder, and the permission rules).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import Any

from analysis._paths import data_dir

REGISTRY_FILE = "claude-sessions.jsonl"
HEAD_LINES = 50
"""How far into a transcript the version and a resumed session's old id are looked for."""


def registry_path() -> Path:
    return data_dir() / REGISTRY_FILE


def _json_file(path: Path) -> dict[str, Any]:
    """A settings file's object; nothing for a file that is absent or not a JSON object."""
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _servers(config: dict[str, Any]) -> list[str]:
    servers = config.get("mcpServers")
    return sorted(servers) if isinstance(servers, dict) else []


def menu_snapshot(cwd: Path, home: Path) -> dict[str, Any]:
    """The MCP servers configured for ``cwd`` (user and local scope in ``~/.claude.json``,
    project scope in ``.mcp.json``) and the permission rules of the user's, the project's and
    the local settings, with the files they were read from."""
    user_config = _json_file(home / ".claude.json")
    projects = user_config.get("projects")
    local = projects.get(str(cwd), {}) if isinstance(projects, dict) else {}
    scopes = {
        "user": (home / ".claude.json", user_config),
        "local": (home / ".claude.json", local if isinstance(local, dict) else {}),
        "project": (cwd / ".mcp.json", _json_file(cwd / ".mcp.json")),
    }
    servers = [
        {"name": name, "scope": scope, "file": str(path)}
        for scope, (path, config) in scopes.items()
        for name in _servers(config)
    ]
    allow: list[str] = []
    deny: list[str] = []
    read = [str(path) for path, config in scopes.values() if config]
    for path in (
        home / ".claude" / "settings.json",
        cwd / ".claude" / "settings.json",
        cwd / ".claude" / "settings.local.json",
    ):
        settings = _json_file(path)
        rules = settings.get("permissions")
        if not isinstance(rules, dict):
            continue
        read.append(str(path))
        allow += [rule for rule in rules.get("allow") or [] if isinstance(rule, str)]
        deny += [rule for rule in rules.get("deny") or [] if isinstance(rule, str)]
    return {
        "mcp_servers": servers,
        "permissions": {"allow": allow, "deny": deny},
        "read_from": sorted(set(read)),
    }


def _json_lines(path: Path, limit: int | None = None) -> Iterator[dict[str, Any]]:
    """The JSON objects of a file's first ``limit`` lines (all without one); other lines, and a
    file that cannot be read, give nothing."""
    try:
        with path.open(encoding="utf-8") as lines:
            for line in islice(lines, limit):
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict):
                    yield record
    except OSError:
        return


def _older_session(session_id: str, head: list[dict[str, Any]]) -> str | None:
    """The session a resumed one continues: the first other id its transcript replays."""
    return next(
        (
            record["sessionId"]
            for record in head
            if isinstance(record.get("sessionId"), str) and record["sessionId"] != session_id
        ),
        None,
    )


def record_session_start(payload: dict[str, Any], home: Path, registry: Path) -> dict[str, Any]:
    """The registry line for a ``SessionStart`` hook's input, appended to ``registry``."""
    session_id = str(payload["session_id"])
    transcript = Path(str(payload.get("transcript_path") or ""))
    cwd = Path(str(payload.get("cwd") or "."))
    head = list(_json_lines(transcript, HEAD_LINES)) if str(transcript) else []
    versions = [r["version"] for r in head if isinstance(r.get("version"), str)]
    source = str(payload.get("source") or "startup")
    entry = {
        "session_id": session_id,
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "source": source,
        "recorded_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "claude_code_version": versions[0] if versions else None,
        "resumed_from": _older_session(session_id, head) if source == "resume" else None,
        "menu_snapshot": menu_snapshot(cwd, home),
    }
    registry.parent.mkdir(parents=True, exist_ok=True)
    with registry.open("a", encoding="utf-8") as out:
        out.write(json.dumps(entry, ensure_ascii=False) + "\n")
    return entry


def read_registry(registry: Path) -> list[dict[str, Any]]:
    """The registry's lines in order; a line that is not a JSON object is skipped."""
    return [entry for entry in _json_lines(registry) if isinstance(entry.get("session_id"), str)]


def session_starts(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each session's first registry line (its start; a later ``compact`` keeps the id)."""
    first: dict[str, dict[str, Any]] = {}
    for entry in entries:
        first.setdefault(entry["session_id"], entry)
    return first


def _resumed_from(entry: dict[str, Any]) -> str | None:
    """The session ``entry`` resumed: as recorded, else (a transcript still empty when the hook
    ran) as its transcript's head says now."""
    if entry.get("source") != "resume":
        return None
    recorded = entry.get("resumed_from")
    if isinstance(recorded, str):
        return recorded
    head = list(_json_lines(Path(str(entry.get("transcript_path") or "")), HEAD_LINES))
    return _older_session(entry["session_id"], head)


def thread_ids(entries: list[dict[str, Any]]) -> dict[str, str]:
    """Each registered session's thread: the first session of the chain of resumes it
    continues (its own id when it resumed none). A chain that loops stops where it would."""
    starts = session_starts(entries)
    parents = {session: _resumed_from(entry) for session, entry in starts.items()}
    threads: dict[str, str] = {}
    for session in starts:
        root, seen = session, {session}
        while (parent := parents.get(root)) and parent not in seen:
            root = parent
            seen.add(parent)
        threads[session] = root
    return threads


def thread_members(entries: list[dict[str, Any]], thread_id: str) -> list[dict[str, Any]]:
    """The registered sessions of a thread in the order they started (each one's first line)."""
    threads = thread_ids(entries)
    return [
        entry for session, entry in session_starts(entries).items() if threads[session] == thread_id
    ]
