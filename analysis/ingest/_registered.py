"""What the session registry knows of a Claude Code session: its menu snapshot and thread."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from analysis.claude import read_registry, registry_path, session_starts, thread_ids
from analysis.models import MenuSnapshot


class Registered:
    """The registry as the loader reads it: once per state of the file."""

    def __init__(self, starts: dict[str, dict[str, Any]], threads: dict[str, str]) -> None:
        self.starts = starts
        self.threads = threads

    def _key(self, session_id: str, source: str) -> str | None:
        """The session's id in the registry: its transcript's name (Claude Code names the file
        after the session; a resumed one's records mostly carry the id it replays), else its
        id."""
        return next((key for key in (Path(source).stem, session_id) if key in self.starts), None)

    def snapshot(self, session_id: str, source: str) -> MenuSnapshot | None:
        key = self._key(session_id, source)
        taken = self.starts[key].get("menu_snapshot") if key else None
        if key is None or not isinstance(taken, dict):
            return None
        rules = taken.get("permissions")
        rules = rules if isinstance(rules, dict) else {}
        try:
            return MenuSnapshot.model_validate(
                {
                    "recorded_at": self.starts[key].get("recorded_at"),
                    "source": self.starts[key].get("source"),
                    "mcp_servers": taken.get("mcp_servers", []),
                    "allow": rules.get("allow", []),
                    "deny": rules.get("deny", []),
                    "read_from": taken.get("read_from", []),
                }
            )
        except ValidationError:
            return None

    def thread_of(self, session_id: str, source: str) -> str:
        """The ``thread_id`` of ``tsq ingest --json``: the registry's thread, else the session's
        own id (a thread of one)."""
        key = self._key(session_id, source)
        return self.threads[key] if key else session_id

    def annotate(self, session: dict[str, Any]) -> None:
        """Give a raw Claude Code session its snapshot and thread, when the registry has them."""
        session_id, source = session["session_id"], session["source"]
        snapshot = self.snapshot(session_id, source)
        if snapshot is not None:
            session["menu_snapshot"] = snapshot
        if self._key(session_id, source) is not None:
            session["thread_id"] = self.thread_of(session_id, source)


def registered() -> Registered:
    """The user's registry (``tsq claude install``'s hook writes it); empty when there is none."""
    path = registry_path()
    try:
        state = path.stat()
    except OSError:
        return Registered({}, {})
    return _read(path, state.st_mtime_ns, state.st_size)


@cache
def _read(path: Path, _mtime_ns: int, _size: int) -> Registered:
    entries = read_registry(path)
    return Registered(session_starts(entries), thread_ids(entries))
