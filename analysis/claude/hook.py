"""Claude Code's ``SessionStart`` hook: ``python -m analysis.claude.hook`` with the hook's JSON
on stdin records the session in the registry. It never fails a session: any error is written
to ``hook-errors.log`` beside the registry, and the hook exits 0."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from analysis.claude._registry import record_session_start, registry_path


def main() -> int:
    registry = registry_path()
    try:
        payload = json.load(sys.stdin)
        record_session_start(payload, Path.home(), registry)
    except Exception as error:  # a hook must never fail the session it serves
        try:
            registry.parent.mkdir(parents=True, exist_ok=True)
            with (registry.parent / "hook-errors.log").open("a", encoding="utf-8") as log:
                when = datetime.now(UTC).isoformat(timespec="seconds")
                log.write(f"{when} {type(error).__name__}: {error!s}".replace("\n", " ") + "\n")
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
