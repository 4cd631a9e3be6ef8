"""Valid answers on disk, keyed by the request: a rerun (or a resumed run) asks nothing twice."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir


def default_cache_dir() -> Path:
    """The user's cache directory (``$XDG_CACHE_HOME/tsq-workbench`` on Linux)."""
    return Path(user_cache_dir("tsq-workbench"))


class AnswerCache:
    """The forced tool's input of each valid answer, by request key."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)"
        )
        self._db.commit()

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        return data if isinstance(data, dict) else None

    def put(self, key: str, answer: dict[str, Any]) -> None:
        self._db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?)", (key, json.dumps(answer)))
        self._db.commit()

    def close(self) -> None:
        self._db.close()
