"""Claude Code from the inside: the session registry its ``SessionStart`` hook writes, and the
menu snapshot taken when a session starts.

Kept light on purpose: the hook (``python -m analysis.claude.hook``) imports only this package
and the standard library, so that it costs Claude Code a few tens of milliseconds.
"""

from analysis.claude._current import NoCurrentSession, current_session, project_folder
from analysis.claude._install import LIVE_CATALOG_EXAMPLE, command_text, install, uninstall
from analysis.claude._registry import (
    REGISTRY_FILE,
    menu_snapshot,
    read_registry,
    record_session_start,
    registry_path,
    session_starts,
    thread_ids,
    thread_members,
)

__all__ = [
    "LIVE_CATALOG_EXAMPLE",
    "REGISTRY_FILE",
    "NoCurrentSession",
    "command_text",
    "current_session",
    "install",
    "menu_snapshot",
    "project_folder",
    "read_registry",
    "record_session_start",
    "registry_path",
    "session_starts",
    "thread_ids",
    "thread_members",
    "uninstall",
]
