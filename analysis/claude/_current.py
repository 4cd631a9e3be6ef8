"""Which Claude Code session is the current one for a working folder."""

from __future__ import annotations

import re
from pathlib import Path

from analysis.claude._registry import read_registry


class NoCurrentSession(Exception):
    """No registry entry and no transcript for the folder."""


def project_folder(cwd: Path, home: Path) -> Path:
    """Claude Code's transcripts folder for ``cwd``: every character of the path that is not a
    letter or a digit becomes ``-`` (``/home/ann/app`` → ``-home-ann-app``)."""
    return home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def current_session(cwd: Path, home: Path, registry: Path) -> tuple[Path, str]:
    """The transcript of the session started last in ``cwd`` by the registry, else the newest
    transcript of the folder's project directory; and a sentence saying which was picked."""
    started = [
        entry
        for entry in read_registry(registry)
        if entry.get("cwd") == str(cwd) and Path(str(entry.get("transcript_path"))).is_file()
    ]
    if started:
        entry = started[-1]
        return Path(entry["transcript_path"]), (
            f"session {entry['session_id']}: the last started in {cwd} "
            f"({entry['source']}, {entry['recorded_at']}, from the registry)"
        )
    folder = project_folder(cwd, home)
    transcripts = sorted(folder.glob("*.jsonl"), key=lambda path: path.stat().st_mtime)
    if transcripts:
        return transcripts[-1], (
            f"session {transcripts[-1].stem}: the newest transcript in {folder} "
            f"(the registry has no session of {cwd})"
        )
    raise NoCurrentSession(
        f"no Claude Code session for {cwd}: the registry has none, and {folder} holds no transcript"
    )
