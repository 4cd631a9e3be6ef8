"""``tsq claude install``: the ``/tsq-send`` command and the ``SessionStart`` hook, written
into Claude Code's settings, and taken out again by ``tsq claude uninstall``.

Only what was written is touched: a command file that differs from ours is left as it is, and
the hook is merged into the settings' existing hooks, never replacing them.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

COMMAND_FILE = Path("commands") / "tsq-send.md"
SETTINGS_FILE = Path("settings.json")
HOOK_MODULE = "analysis.claude.hook"
MATCHER = "startup|resume|clear|compact"
LIVE_CATALOG_EXAMPLE = {
    "captured_at": "2026-12-02T09:30:00Z",
    "tools": [
        {
            "name": "Read",
            "description": "Reads a file from the local filesystem.",
            "input_schema": {
                "type": "object",
                "properties": {"file_path": {"type": "string"}},
                "required": ["file_path"],
            },
        },
        {
            "name": "mcp__github__create_issue",
            "description": "Create a new issue in a GitHub repository.",
            "input_schema": {
                "type": "object",
                "properties": {"owner": {"type": "string"}, "title": {"type": "string"}},
                "required": ["owner", "title"],
            },
        },
    ],
}
"""The shape the command asks the agent to write: what ``--live-catalog`` reads."""


def _tsq() -> str:
    beside = Path(sys.executable).with_name("tsq")
    return shlex.quote(str(beside)) if beside.exists() else "tsq"


def hook_command() -> str:
    return f"{shlex.quote(sys.executable)} -m {HOOK_MODULE}"


def command_text(tsq: str | None = None) -> str:
    """The ``/tsq-send`` command file: Claude Code's Markdown command with its frontmatter."""
    tsq = tsq or _tsq()
    example = json.dumps(LIVE_CATALOG_EXAMPLE, indent=2)
    return f"""---
description: Send this session with the tools you have now, after a preview and your yes
argument-hint: --endpoint URL [--header KEY=VALUE]
allowed-tools: Write, Bash({tsq} send --current --preview:*)
---
Send this Claude Code session to TSQ Workbench. Nothing leaves before the user says yes.

1. Write every tool you can call right now (built-in tools and MCP tools, named as you call
   them, e.g. `mcp__server__tool`), each with its own description and its input schema exactly
   as your tool definitions give them, as JSON to a new temporary file
   (e.g. `/tmp/tsq-live-catalog-<random>.json`), in this shape, with `captured_at` the current
   time:

```json
{example}
```

2. Run `{tsq} send --current --preview --live-catalog THAT_FILE $ARGUMENTS` and show the user its
   output as it is: which session was picked, and what would leave (sessions, steps, values
   removed as secrets).
3. Ask the user whether to send it. Only if their answer is an explicit yes, run
   `{tsq} send --yes --current --live-catalog THAT_FILE $ARGUMENTS` and show its output.
   Otherwise say that nothing was sent.
"""


def _read_settings(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    settings = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(settings, dict):
        raise ValueError(f"{path}: not a JSON object")
    return settings


def _ours(group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(
        isinstance(h, dict) and HOOK_MODULE in str(h.get("command", "")) for h in hooks
    )


def _write(path: Path, text: str, dry_run: bool) -> None:
    if not dry_run:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def install(base: Path, dry_run: bool = False) -> list[str]:
    """Write the command and merge the hook under ``base`` (``~/.claude`` or a project's
    ``.claude``); one line per file saying what was (or, dry, would be) done."""
    said = []
    command, wanted = base / COMMAND_FILE, command_text()
    if not command.exists():
        _write(command, wanted, dry_run)
        said.append(f"{command}: written (the /tsq-send command)")
    elif command.read_text(encoding="utf-8") == wanted:
        said.append(f"{command}: already there")
    else:
        said.append(f"{command}: left as it is, it is not the one tsq writes (remove it first)")
    settings_path = base / SETTINGS_FILE
    settings = _read_settings(settings_path)
    hooks = settings.setdefault("hooks", {})
    starts = hooks.setdefault("SessionStart", [])
    if any(_ours(group) for group in starts):
        said.append(f"{settings_path}: the SessionStart hook is already there")
    else:
        starts.append(
            {"matcher": MATCHER, "hooks": [{"type": "command", "command": hook_command()}]}
        )
        _write(settings_path, json.dumps(settings, indent=2) + "\n", dry_run)
        kept = sum(len(group) for group in hooks.values() if isinstance(group, list)) - 1
        said.append(f"{settings_path}: SessionStart hook added beside {kept} hook group(s) kept")
    return [f"(dry run) {line}" if dry_run else line for line in said]


def uninstall(base: Path, dry_run: bool = False) -> list[str]:
    """Take out exactly what :func:`install` wrote: the command file if it is still ours, and
    the hook groups that run ``analysis.claude.hook``."""
    said = []
    command = base / COMMAND_FILE
    if command.exists() and command.read_text(encoding="utf-8") == command_text():
        if not dry_run:
            command.unlink()
        said.append(f"{command}: removed")
    elif command.exists():
        said.append(f"{command}: left as it is, it is not the one tsq writes")
    settings_path = base / SETTINGS_FILE
    settings = _read_settings(settings_path)
    starts = settings.get("hooks", {}).get("SessionStart", [])
    if any(_ours(group) for group in starts):
        settings["hooks"]["SessionStart"] = [group for group in starts if not _ours(group)]
        if not settings["hooks"]["SessionStart"]:
            del settings["hooks"]["SessionStart"]
        if not settings["hooks"]:
            del settings["hooks"]
        _write(settings_path, json.dumps(settings, indent=2) + "\n", dry_run)
        said.append(f"{settings_path}: SessionStart hook removed")
    if not said:
        said.append(f"nothing of tsq's under {base}")
    return [f"(dry run) {line}" if dry_run else line for line in said]
